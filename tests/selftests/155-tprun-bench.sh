#!/bin/bash
# tools/tprun --bench-allreduce over verbs on the loopback device: 2 ranks
# (mesh) and 3 ranks (ring and auto) give a verified row per size; and a
# rank whose peer stops mid-run spins at most --spin-us, then sleeps: it
# must not keep its CPU busy while no all-reduce can complete.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-tprun.sh"

verbs_setup
failed=()
sizes=4,256,16384,65536
for run in "2 mesh" "3 ring" "3 auto"; do
	read -r n algo <<<"$run"
	name=bench-$n-$algo
	if ! tp_run "$name" --bench-allreduce --local "$n" -d "$TBR_TEST_DEV" \
		--algorithm "$algo" --sizes $sizes --iters 30 --json; then
		failed+=("$name")
	elif ! python3 - "$TBRDMA_OUT/$name.json" "$n" "$algo" $sizes <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
rows = r["allreduce_bench"]
assert r["ranks"] == int(sys.argv[2]) and r["transport"] == "rdma", r
assert r["algorithm"] == sys.argv[3] and r["device"].startswith("tbrlo0"), r
assert [x["bytes"] for x in rows] == [int(s) for s in sys.argv[4].split(",")], rows
assert all(x["verified"] and 0 < x["p50_us"] <= x["p99_us"] for x in rows), rows
print("ok   %s ranks %s: %s" % (sys.argv[2], sys.argv[3],
      ", ".join("%d B %.0f us" % (x["bytes"], x["p50_us"]) for x in rows)))
PY
		cat "$TBRDMA_OUT/$name.json"
		failed+=("$name")
	fi
done

# cpu_ticks PID -> user + system clock ticks the process has used
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" ||
		{ cat "$TBRDMA_OUT/idle.err"; fail "rank $1 is gone"; }
}

# Rank 1 stopped for 2 s while rank 0 waits in an all-reduce (spinning for
# 1000 us, then sleeping on the completion channel): rank 0 may use a few
# percent of that time, not the CPU.  --peer-timeout 60: the stop is not
# a lost peer (with the default 4 s, counted from rank 1's last sign of
# life, a loaded guest's slow awk and sleep let rank 0 give up on it).
"$TPRUN" --bench-allreduce --local 2 -d "$TBR_TEST_DEV" --spin-us "${TP_IDLE_SPIN_US:-1000}" --sizes 256 \
	--iters 100000 --peer-timeout 60 >/dev/null 2>"$TBRDMA_OUT/idle.err" &
launcher=$!
defer "kill $launcher 2>/dev/null || true"
wait_for "[[ \$(pgrep -c -P $launcher) == 2 ]]" 10 || fail "no ranks"
sleep 1		# the ranks are connected and in the loop
mapfile -t ranks < <(pgrep -P $launcher | sort -n)
r0=${ranks[0]} r1=${ranks[1]}
kill -STOP "$r1"
sleep 0.3
t0=$(cpu_ticks "$r0")
sleep 2
t1=$(cpu_ticks "$r0")
kill -CONT "$r1"
tick=$(getconf CLK_TCK)
used_ms=$(((t1 - t0) * 1000 / tick))
echo "rank 0 used $used_ms ms of CPU in the 2 s its peer was stopped"
((used_ms <= 200)) || failed+=("idle rank spins: $used_ms ms of CPU in 2 s")
sleep 1
pid_exited "$r0" && { cat "$TBRDMA_OUT/idle.err"; failed+=("rank 0 died after its peer resumed"); }
kill "$launcher"
wait "$launcher" 2>/dev/null || true	# 143: it was told to stop
((${#failed[@]} == 0)) || fail "failed: ${failed[*]}"
