#!/bin/bash
# Compute against llama.cpp on the same cores (issue 32): for each model
# shape and weight type, `tprun --export-gguf` writes a GGUF (once, kept in
# the model directory), then llama.cpp (node-llama-cpp's prebuilt CPU
# build, speed.mjs) and tprun process the same P-token prompt and decode
# T-1 tokens with the same thread count, alternating, REPS rounds; prints
# one table of medians: prefill and decode tokens/s and tprun/llama.cpp.
# At all cores there is also tprun as one rank per core (--local N, one
# thread each, TCP) against llama.cpp with N threads. Run it on an
# otherwise idle host: llama.cpp's threads spin-wait, and collapse when
# another process takes a core.
#
#   bench-compute.sh [--shapes 'small tinyllama'] [--types 'q8_0 q4_k q6_k f16']
#                    [--threads '1 N'] [--reps 3] [--prompt P] [--tokens T]
#                    [--models DIR] [--cache-type f32|f16]
#
# --cache-type: the K/V cache's values on both sides (f32; f16 is
# llama.cpp's default, tprun --cache-type f16).
#
# --types newer: the twelve types of issues 41 and 42 (Q2_K, Q3_K, IQ4_NL,
# IQ4_XS, MXFP4, IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S);
# `make bench` measures them on the small shape at 1 thread, and the two
# mixtures of experts below in Q8_0 and Q4_K (make bench-compute-moe).
#
# Shapes (Llama, vocab 32000, 32 heads, 4 K/V heads, dim 2048, ffn 5632):
# small has 8 layers (0.48 B parameters), tinyllama 22 (TinyLlama-1.1B).
# Mixtures of experts (vocab 32000, dim 2048, 32 heads of 128, 4 K/V):
# qwen3moe has 4 layers of Qwen3-30B-A3B's (128 experts of 768, 8 used;
# 2.5 B parameters, 0.3 B used per token); glm4moe 4 layers of GLM-4.5's
# kind (a dense one of 5632, then 128 experts of 768, 8 used, and a
# shared one; half of each head rotated).
# The giants of issue 42 (make bench-compute-giants), their published
# ratios scaled to dim 2048: deepseek2 is DeepSeek V3's shape over 3.5
# (32 heads of 128 + 64 RoPE, values of 128, q_lora 512, a latent of
# 256; a dense layer of 5376, then 3 of 256 experts of 512, 8 used,
# routed within the best 4 of 8 groups, a shared expert; 2.5 B
# parameters, 0.25 B used per token); gpt-oss is gpt-oss-20b's over 1.4
# (48 heads of 64, 6 K/V heads, 32 experts of 2048, 4 used, a window of
# 128 on alternate layers, attention sinks, biases; 1.8 B, 0.3 B used).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ncpu=$(nproc)
shapes="small tinyllama"
types="q8_0 q4_k q6_k f16"
threads="1 $ncpu"
reps=3
P=64
T=33
models=$top/build/bench-models
kv=f32
while [ $# -gt 0 ]; do
	case $1 in
	--shapes) shapes=$2; shift 2 ;;
	--types) types=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--prompt) P=$2; shift 2 ;;
	--tokens) T=$2; shift 2 ;;
	--models) models=$2; shift 2 ;;
	--cache-type) kv=$2; shift 2 ;;
	*) echo "usage: $0 [--shapes LIST] [--types LIST] [--threads LIST] [--reps N] [--prompt P] [--tokens T] [--models DIR] [--cache-type f32|f16]" >&2
	   exit 2 ;;
	esac
done
case $kv in
f32 | f16) ;;
*) echo "$0: --cache-type f32 or f16" >&2; exit 2 ;;
esac
[ "$types" = newer ] &&
	types="q2_k q3_k iq4_nl iq4_xs mxfp4 iq1_s iq1_m iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s"
if [ -x "$here/runtime/node_modules/.bin/node" ]; then
	PATH=$here/runtime/node_modules/.bin:$PATH
fi
if [ ! -d "$here/node_modules/node-llama-cpp" ]; then
	echo "bench-compute: node-llama-cpp is not installed (tests/llama-ref/setup.sh)" >&2
	exit 1
fi
tprun=${TPRUN:-$top/tools/tprun}	# TPRUN: another build to measure
mkdir -p "$models" || exit 1
results=$(mktemp)
trap 'rm -f "$results"' EXIT

shape_args() {
	local layers=8 moe="--heads 32 --kv-heads 4 --head-dim 128 --experts 128 --experts-used 8 --expert-ffn 768"
	case $1 in
	tinyllama) layers=22 ;;
	qwen3moe) echo "--arch qwen3moe --dim 2048 --layers 4 $moe --vocab 32000"; return ;;
	glm4moe) echo "--arch glm4moe --dim 2048 --layers 4 $moe --ffn 5632 --vocab 32000"; return ;;
	deepseek2) echo "--arch deepseek2 --dim 2048 --layers 4 --heads 32 --head-dim 192
		--rope-dim 64 --v-head-dim 128 --q-lora 512 --kv-lora 256
		--ffn 5376 --dense-layers 1 --experts 256 --experts-used 8
		--expert-ffn 512 --expert-groups 8 --expert-groups-used 4
		--shared-experts 1 --vocab 32000"; return ;;
	gpt-oss) echo "--arch gpt-oss --dim 2048 --layers 4 --heads 48 --kv-heads 6
		--head-dim 64 --experts 32 --experts-used 4 --expert-ffn 2048
		--sliding-window 128 --vocab 32000"; return ;;
	esac
	echo "--dim 2048 --layers $layers --heads 32 --kv-heads 4 --ffn 5632 --vocab 32000"
}

# the same prompt as speed.mjs: ids 1000 + (i * 7919) % 20000
ids=$(python3 -c "print(','.join(str(1000 + i * 7919 % 20000) for i in range($P)))")

# run ENGINE MODEL THREADS -> "prefill decode" (tokens/s), or "nan nan"
run() {
	local out
	case $1 in
	llama) out=$(timeout 600 node "$here/speed.mjs" "$2" "$3" "$P" "$T" \
			"$kv" 2>/dev/null) ;;
	tprun) out=$(timeout 600 "$tprun" --model "$2" --threads "$3" \
			--prompt-ids "$ids" --tokens "$T" --batch "$P" \
			--cache-type "$kv" --json 2>/dev/null) ;;
	ranks) out=$(timeout 600 "$tprun" --local "$3" --transport tcp \
			--threads 1 --model "$2" --prompt-ids "$ids" \
			--tokens "$T" --batch "$P" --cache-type "$kv" \
			--json 2>/dev/null) ;;
	esac
	python3 -c '
import json, sys
try:
    d = json.loads(sys.argv[1])
    print(d["prefill_tokens_per_s"], d["decode_tokens_per_s"])
except Exception:
    print("nan nan")' "$out"
}

for shape in $shapes; do
	for type in $types; do
		model=$models/$shape-$type.gguf
		if [ ! -s "$model" ]; then
			echo "# exporting $model" >&2
			# shellcheck disable=SC2046 # the shape is words
			if ! "$tprun" --export-gguf "$model.tmp" \
				$(shape_args "$shape") --wtype "$type" \
				>/dev/null 2>&1 || ! mv "$model.tmp" "$model"; then
				echo "export of $model failed" >&2
				exit 1
			fi
		fi
		# one unmeasured pass of each: the file into the page cache
		run llama "$model" 1 >/dev/null
		run tprun "$model" 1 >/dev/null
		for ((r = 1; r <= reps; r++)); do
			for th in $threads; do
				echo "# $shape $type threads $th round $r" >&2
				echo "$shape $type $th llama $(run llama "$model" "$th")" >>"$results"
				echo "$shape $type $th tprun $(run tprun "$model" "$th")" >>"$results"
				if [ "$th" -gt 1 ] && [ "$th" -le "$ncpu" ]; then
					echo "$shape $type $th ranks $(run ranks "$model" "$th")" >>"$results"
				fi
			done
		done
	done
done

python3 - "$results" "$P" "$T" "$reps" "$kv" <<'PY'
import statistics, sys
rows = {}
order = []
for line in open(sys.argv[1]):
    shape, typ, th, eng, pre, dec = line.split()
    key = (shape, typ, int(th))
    if key not in rows:
        rows[key] = {}
        order.append(key)
    rows[key].setdefault(eng, []).append((float(pre), float(dec)))

def med(v, i):
    xs = [x[i] for x in v if x[i] == x[i]]
    return statistics.median(xs) if len(xs) == len(v) and xs else float("nan")

P, T, reps, kv = sys.argv[2:6]
print("Compute against llama.cpp: prompt %s tokens, %d decoded, KV cache %s, medians of %s alternating rounds (tokens/s)"
      % (P, int(T) - 1, kv, reps))
print("%-9s %-7s %-10s | %8s %8s %6s | %8s %8s %6s" % ("shape", "type", "threads",
      "prefill", "llama", "ratio", "decode", "llama", "ratio"))
for key in order:
    r = rows[key]
    lp, ld = med(r["llama"], 0), med(r["llama"], 1)
    for eng in ("tprun", "ranks"):
        if eng not in r:
            continue
        tp, td = med(r[eng], 0), med(r[eng], 1)
        th = "%d" % key[2] if eng == "tprun" else "%dx1 TCP" % key[2]
        print("%-9s %-7s %-10s | %8.2f %8.2f %5.2fx | %8.2f %8.2f %5.2fx" %
              (key[0], key[1], th, tp, lp, tp / lp, td, ld, td / ld))
PY
