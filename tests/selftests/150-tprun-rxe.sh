#!/bin/bash
# tools/tprun on another verbs device: rdma_rxe (soft-RoCE) on lo. The
# runner uses plain libibverbs; 2 and 3 ranks (mesh and ring) must make
# the tokens of the 1-rank run there too.
# timeout: 240
export TBR_TEST_DEV=r0
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-tprun.sh"

verbs_setup
gen=(--synthetic "${TP_SHAPE[@]}" --seed 5 --tokens 6 --prompt-len 6 --json --logits)
tp_run rxe-1 "${gen[@]}" || fail "1 rank"
failed=()
for run in "2 mesh" "3 ring"; do
	read -r n algo <<<"$run"
	name=rxe-$n-$algo
	tp_run "$name" --local "$n" --devices "$TBR_TEST_DEV" --algorithm "$algo" "${gen[@]}" &&
		tp_compare "$name" "$TBRDMA_OUT/rxe-1.json" "$TBRDMA_OUT/$name.json" ||
		failed+=("$name")
done
((${#failed[@]} == 0)) || fail "failed on $TBR_TEST_DEV: ${failed[*]}"
