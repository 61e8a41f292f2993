#!/bin/bash
# Shards cut on whole blocks (Documentation/runner.md, "Cuts on whole
# blocks"), for every weight type tprun exports: a GGUF file of 16 heads
# of 64 (4 K/V heads) and an MLP of 2816 = 11 x 256, which 3 ranks cannot
# split evenly (Q4_K's blocks hold 4 heads: 4 groups on 3 ranks), run on
# 1 rank and on N ranks (--local N over TCP): the largest rank holds at
# most 1/N + 10 % of the one-rank weight bytes, and the tokens are one
# rank's, or differ where one rank's two best logits were a near-tie:
# closer at that step than the N-rank logits' largest difference from one
# rank's (measured by a second pair of runs that stops there).
# N = 2..5 for Q4_K, Q6_K and Q8_0, N = 3 for the other types.  Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tprun=$top/tools/tprun
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"

tap_make "$top/tools/runner"
shape=(--dim 1024 --heads 16 --kv-heads 4 --ffn 2816 --vocab 1024)
gen=(--transport tcp --threads 1 --prompt-len 8 --json --logits --seed 7)
T=12
# every type the exporter takes, from tprun's help
types=$("$tprun" --help 2>&1 | tr '\n' ' ' | sed -n 's/.*(T: \([a-z0-9_ ]*\)).*/\1/p' | tr -s ' ')
[[ -n $types ]] || { echo "Bail out! no --wtype list in tprun --help"; exit 1; }

# run NAME N MODEL TOKENS — tprun on N ranks; its JSON in $tmp/NAME.json
run() {
	timeout 300 "$tprun" --local "$2" --model "$3" --tokens "$4" "${gen[@]}" \
		>"$tmp/$1.json" 2>"$tmp/$1.err"
}

# near_tie ONE MANY — why tokens differ, or nothing and 1: the first step
# K where they do, ONE's logits there (a run stopped after K+1 tokens):
# the N-rank token's logit is within the N-rank logits' largest
# difference from ONE's of ONE's best.
near_tie() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
la, lb, k = a["logits"], b["logits"], len(a["tokens"]) - 1
ta, tb = a["tokens"][k], b["tokens"][k]
d = max(abs(x - y) for x, y in zip(la, lb))
m = la[ta] - la[tb]
print(f"step {k}: one rank's {ta} ({la[ta]:.5f}) and {tb} ({la[tb]:.5f}) {m:.4g} apart, "
      f"the logits {d:.4g} from one rank's")
sys.exit(0 if 0 <= m <= d else 1)
EOF
}

for t in $types; do
	model=$tmp/m-$t.gguf
	# The types run on 3 ranks alone are exported with one layer: what is
	# cut is the same in each layer, and the grid types' quantisers took
	# 80 of this test's 125 s with two (2026-11-29).
	case $t in
	q4_k | q6_k | q8_0) layers=2 ;;
	*) layers=1 ;;
	esac
	if ! "$tprun" --export-gguf "$model" "${shape[@]}" --layers $layers \
		--wtype "$t" --seed 7 \
		2>"$tmp/export-$t.log"; then
		not_ok "$t: export" "$(tail -3 "$tmp/export-$t.log")"
		continue
	fi
	if ! run "$t-1" 1 "$model" $T; then
		not_ok "$t: one rank" "$(tail -3 "$tmp/$t-1.err")"
		continue
	fi
	one=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["max_rank_weight_bytes"])' "$tmp/$t-1.json")
	case $t in
	q4_k | q6_k | q8_0) worlds="2 3 4 5" ;;
	*) worlds=3 ;;
	esac
	for N in $worlds; do
		name="$t, $N ranks"
		if ! run "$t-$N" "$N" "$model" $T; then
			not_ok "$name: runs" "$(tail -5 "$tmp/$t-$N.err")"
			continue
		fi
		read -r most differ < <(python3 - "$tmp/$t-1.json" "$tmp/$t-$N.json" <<'EOF'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
k = next((i for i, (x, y) in enumerate(zip(a["tokens"], b["tokens"])) if x != y), -1)
print(b["max_rank_weight_bytes"], k)
EOF
)
		if ((most * N * 100 <= one * 110)); then
			ok "$name: the largest rank holds $((most * 1000 / one / 10)).$((most * 1000 / one % 10)) % of one rank's $((one >> 10)) KiB (at most 1/$N + 10 %)"
		else
			not_ok "$name: the largest rank holds at most 1/$N + 10 % of one rank's weights" \
				"$most of $one bytes"
		fi
		if ((differ < 0)); then
			ok "$name: the $T tokens of one rank"
			continue
		fi
		# stop both after the first token that differs, with its logits
		if run "$t-1-tie" 1 "$model" $((differ + 1)) &&
		   run "$t-$N-tie" "$N" "$model" $((differ + 1)) &&
		   why=$(near_tie "$tmp/$t-1-tie.json" "$tmp/$t-$N-tie.json"); then
			ok "$name: the tokens of one rank up to a measured near-tie ($why)"
		else
			not_ok "$name: the tokens of one rank, or a near-tie where they differ" \
				"${why:-the runs to step $differ failed}"
		fi
	done
done

# what no plan on whole blocks can share: refused by name, before loading
if "$tprun" --local 3 --transport tcp --dim 256 --layers 1 --heads 2 --ffn 256 \
	--vocab 300 --wtype q4_k --tokens 2 >"$tmp/refuse.out" 2>"$tmp/refuse.err"; then
	not_ok "2 heads of 128 and an MLP of 256 in Q4_K on 3 ranks: refused" "it ran"
elif grep -q "3 ranks cannot share it on whole blocks" "$tmp/refuse.err" &&
     (($(wc -l <"$tmp/refuse.err") == 1)); then
	ok "2 heads of 128 and an MLP of 256 in Q4_K on 3 ranks: refused once ($(cat "$tmp/refuse.err"))"
else
	not_ok "2 heads of 128 and an MLP of 256 in Q4_K on 3 ranks: refused with one message" \
		"$(cat "$tmp/refuse.err")"
fi
tap_done
