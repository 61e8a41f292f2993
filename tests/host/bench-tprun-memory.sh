#!/bin/bash
# Memory pooling on a large model, for Documentation/benchmarks.md ("The
# runner's memory"): 1, 2 and 4 ranks, each its own process (--rendezvous)
# reading its own copy of the file; per N the largest rank's weight bytes,
# peak resident set and load time (the file in the page cache), and decode
# speed; then two ranks, each in a memory cgroup limited to 60 % of the
# one-rank peak (the copies dropped from the page cache first), against
# two unlimited ranks, alternating. Medians of ROUNDS runs.
#
#   flock /var/tmp/cpu.lock tests/host/bench-tprun-memory.sh [DIR [ROUNDS]]
#
# DIR holds big0.gguf .. big3.gguf, made when missing: a 515 MB Q8_0
# export of the shape of issue 33 (dim 2048, 8 layers, 32 heads over 4
# K/V heads, ffn 5632, vocab 32000). Needs root for the cgroups.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tprun=$top/tools/tprun
dir=${1:-/var/tmp/tprun-bench}
rounds=${2:-3}
tmp=$(mktemp -d)
# shellcheck source=lib-memcg.sh
source "$(dirname "$0")/lib-memcg.sh"
# shellcheck source=lib-tprun-ranks.sh
source "$(dirname "$0")/lib-tprun-ranks.sh"
trap 'memcg_cleanup; rm -rf "$tmp"' EXIT

make -s -C "$top/tools/runner" || exit 1
mkdir -p "$dir"
if [[ ! -f $dir/big0.gguf ]]; then
	"$tprun" --export-gguf "$dir/big0.gguf" --dim 2048 --layers 8 --heads 32 \
		--kv-heads 4 --ffn 5632 --vocab 32000 --wtype q8_0 || exit 1
fi
for r in 1 2 3; do
	[[ -f $dir/big$r.gguf ]] || cp "$dir/big0.gguf" "$dir/big$r.gguf"
done
gen=(--transport tcp --prompt-len 8 --tokens 16 --json --connect-timeout 120)

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

echo "model: $(stat -c %s "$dir/big0.gguf") bytes ($dir/big0.gguf), $rounds rounds, $(date -u +%FT%TZ), $(git -C "$top" rev-parse --short HEAD)"
echo
echo "| ranks | weights per rank (MiB) | peak RSS per rank (MiB) | of 1 rank | load (s) | decode (tok/s) |"
echo "|---|---|---|---|---|---|"
one=
for n in 1 2 4; do
	tps=() rss=() load=() w=
	for ((i = 1; i <= rounds; i++)); do
		tp_ranks "n$n.$i" $n plain "$dir/big" ||
			{ echo "$n ranks failed: $(cat "$tmp"/n$n.$i.*.err)"; exit 1; }
		tps+=("$(py "$tmp/n$n.$i.json" 'r["decode_tokens_per_s"]')")
		rss+=("$(py "$tmp/n$n.$i.json" 'r["max_rank_peak_rss_bytes"]')")
		load+=("$(py "$tmp/n$n.$i.json" 'r["load_seconds"]')")
		w=$(py "$tmp/n$n.$i.json" 'r["max_rank_weight_bytes"]')
	done
	m=$(median "${rss[@]}")
	[[ -n $one ]] || one=$m
	printf '| %d | %s | %s | %s %% | %.3f | %.2f |\n' $n "$(mib "$w")" "$(mib "$m")" \
		"$(awk -v a="$m" -v b="$one" 'BEGIN { printf "%.0f", 100 * a / b }')" \
		"$(median "${load[@]}")" "$(median "${tps[@]}")"
done

echo
if ! memcg_init; then
	echo "no writable memory cgroup: the limited runs are skipped"
	exit 0
fi
limit=$((one * 60 / 100))
for r in 0 1; do
	memcg_new "tprun-bench-$$-$r" "$limit" || exit 1
done
in_group() { memcg_exec "tprun-bench-$$-$1" "${@:2}"; }
free=() limited=()
for ((i = 1; i <= rounds; i++)); do
	tp_ranks "free.$i" 2 plain "$dir/big" || { echo "unlimited run failed"; exit 1; }
	free+=("$(py "$tmp/free.$i.json" 'r["decode_tokens_per_s"]')")
	drop_cache "$dir"/big0.gguf "$dir"/big1.gguf
	tp_ranks "cg.$i" 2 in_group "$dir/big" ||
		{ echo "limited run failed: $(cat "$tmp"/cg.$i.*.err)"; }
	limited+=("$(py "$tmp/cg.$i.json" 'r["decode_tokens_per_s"]')")
done
kills=$(($(memcg_oom_kills "tprun-bench-$$-0") + $(memcg_oom_kills "tprun-bench-$$-1")))
f=$(median "${free[@]}") l=$(median "${limited[@]}")
echo "| 2 ranks | decode (tok/s) | of unlimited | OOM kills | group peak (MiB, page cache included) |"
echo "|---|---|---|---|---|"
printf '| unlimited | %.2f | | | |\n' "$f"
printf '| each in a cgroup v%s of %s MiB (60 %% of 1 rank) | %.2f | %s %% | %d | %s, %s |\n' \
	"$memcg_version" "$(mib "$limit")" "$l" \
	"$(awk -v a="$l" -v b="$f" 'BEGIN { printf "%.0f", 100 * a / b }')" "$kills" \
	"$(mib "$(memcg_peak "tprun-bench-$$-0")")" "$(mib "$(memcg_peak "tprun-bench-$$-1")")"
echo "(unlimited: ${free[*]}; limited: ${limited[*]})"
