#!/bin/bash
# tprun --bench-allreduce on the host, over its TCP transport (the host has
# no RDMA; the guest selftests and `make bench` run it over verbs): the
# JSON a benchmark table is made from, every size and algorithm, bad
# usage, and a sum made wrong on purpose (TPRUN_BENCH_FAULT) failing the
# run instead of showing as a number.  Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tprun=$top/tools/tprun
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"

tap_make "$top/tools/runner"

# bench NAME ARGS... — run it; the JSON in $tmp/NAME.json
bench() {
	local name=$1 rc=0
	shift
	timeout 120 "$tprun" --bench-allreduce --transport tcp --json "$@" \
		>"$tmp/$name.json" 2>"$tmp/$name.err" || rc=$?
	return $rc
}

# fields NAME RANKS ALGO SIZES — the JSON has what a table needs
fields() {
	python3 - "$tmp/$1.json" "$2" "$3" "$4" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ranks, algo, sizes = int(sys.argv[2]), sys.argv[3], [int(s) for s in sys.argv[4].split(",")]
assert r["ranks"] == ranks and r["transport"] == "tcp" and r["algorithm"] == algo, r
rows = r["allreduce_bench"]
assert [x["bytes"] for x in rows] == sizes, rows
for x in rows:
    assert x["verified"] is True and 0 < x["p50_us"] <= x["p99_us"], x
    assert x["busbw_MBps"] > 0, x
    if algo != "auto":
        assert x["algorithm"] == algo, x
PY
}

sizes=4,256,4100,65536,262144
for run in "2 auto" "3 mesh" "3 ring" "4 auto"; do
	read -r ranks algo <<<"$run"
	name=b$ranks$algo
	if ! bench "$name" --local "$ranks" --algorithm "$algo" --sizes $sizes --iters 20; then
		not_ok "$ranks ranks, $algo: runs" "$(cat "$tmp/$name.err")"
	elif ! out=$(fields "$name" "$ranks" "$algo" $sizes 2>&1); then
		not_ok "$ranks ranks, $algo: JSON with every size, p50 <= p99, verified" "$out" "$(cat "$tmp/$name.json")"
	else
		ok "$ranks ranks, $algo: sizes $sizes, every sum checked, p50 <= p99"
	fi
done

# The 4-rank auto run picked the mesh below --ring-min and the ring above.
if python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["allreduce_bench"]
assert [x["algorithm"] for x in rows] == ["mesh", "mesh", "mesh", "ring", "ring"], rows' "$tmp/b4auto.json" 2>/dev/null; then
	ok "auto: mesh below 32 KiB, ring from 32 KiB with 4 ranks"
else
	not_ok "auto: mesh below 32 KiB, ring from 32 KiB with 4 ranks" "$(cat "$tmp/b4auto.json")"
fi

# A wrong sum on one rank, in a warm-up and in a timed iteration: the
# run fails and names the element; no table.
for fault in 1:3 0:20; do
	rc=0
	TPRUN_BENCH_FAULT=$fault bench fault --local 2 --sizes 256,16384 --iters 10 || rc=$?
	if [[ $rc -ne 0 ]] && grep -q 'element .* is .*, the sum is' "$tmp/fault.err" &&
		! grep -q allreduce_bench "$tmp/fault.json"; then
		ok "a wrong sum (rank:iteration $fault) fails the run (exit $rc)"
	else
		not_ok "a wrong sum (rank:iteration $fault) fails the run" "exit $rc" \
			"$(cat "$tmp/fault.err" "$tmp/fault.json")"
	fi
done

expect_usage() {
	local name=$1 rc=0
	shift
	"$tprun" "$@" >"$tmp/u.out" 2>&1 || rc=$?
	if [[ $rc -eq 2 ]]; then ok "$name: exit 2"; else not_ok "$name: exit 2" "exit $rc" "$(cat "$tmp/u.out")"; fi
}
expect_usage "--sizes not a multiple of 4" --bench-allreduce --local 2 --transport tcp --sizes 6
expect_usage "--sizes empty entry" --bench-allreduce --local 2 --transport tcp --sizes 256,,4
expect_usage "--bench-allreduce with --model" --bench-allreduce --local 2 --transport tcp --model x.gguf
expect_usage "--bench-allreduce with one rank" --bench-allreduce --transport tcp --sizes 256
tap_done
