#!/bin/bash
# tools/tprun when a rank dies: SIGKILL one rank in the middle of decoding
# and every other rank must exit non-zero, naming the dead rank, within
# 10 s. Twice: ranks started one by one with --rank/--peers (as on
# several hosts: nothing but the ranks themselves notices), and
# --local 3 (the launcher's exit code must say so too).
# Device: TBR_TEST_DEV (lib-verbs.sh), tbrdma loopback by default.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-tprun.sh"

verbs_setup
# A long run: --slow-ms makes each decode step last 20 ms or more.
long=(--synthetic "${TP_SHAPE[@]}" --seed 3 --tokens 5000 --slow-ms 20
	--devices "$TBR_TEST_DEV" --json -v)

# wait_grep FILE PATTERN COUNT SECS — until PATTERN is on COUNT lines
# (wait_for's poll); on a timeout, show the file.
grep_count_at_least() {
	local n
	n=$(grep -c -- "$2" "$1" 2>/dev/null) || true
	((${n:-0} >= $3))
}
wait_grep() {
	wait_for "grep_count_at_least '$1' '$2' $3" "$4" && return 0
	cat "$1"
	return 1
}

ms() { local t; read -r t _ </proc/uptime; echo $((10#${t/./} * 10)); }

echo "== 3 ranks started one by one, rank 1 killed"
base=19300
peers=127.0.0.1:$base,127.0.0.1:$((base + 1)),127.0.0.1:$((base + 2))
pids=()
for r in 0 1 2; do
	"$TPRUN" --rank "$r" --peers "$peers" "${long[@]}" \
		>"$TBRDMA_OUT/rank$r.out" 2>"$TBRDMA_OUT/rank$r.err" &
	pids+=($!)
done
defer "kill -9 ${pids[*]} 2>/dev/null || true"
for r in 0 1 2; do
	wait_grep "$TBRDMA_OUT/rank$r.err" "rdma: decoding" 1 90 || fail "rank $r did not start decoding"
done
sleep 1
t0=$(ms)
kill -9 "${pids[1]}"
wait_for "pid_exited ${pids[0]} && pid_exited ${pids[2]}" 10 || fail "ranks 0 and 2 still run 10 s after rank 1 died"
t1=$(ms)
rc0=0 rc2=0
wait "${pids[0]}" || rc0=$?
wait "${pids[2]}" || rc2=$?
for r in 0 2; do sed "s/^/   rank $r: /" "$TBRDMA_OUT/rank$r.err" | grep -v "decoding\|prefill\|model\|rendezvous\|RDMA on"; done
echo "ranks 0 and 2 exited with $rc0 and $rc2, $((t1 - t0)) ms after the kill"
((rc0 != 0 && rc2 != 0)) || fail "a surviving rank exited 0"
if ! grep -q "rank 1 " "$TBRDMA_OUT/rank0.err" ||
	! grep -q "rank 1 " "$TBRDMA_OUT/rank2.err"; then
	fail "the messages do not name rank 1"
fi

echo "== --local 3, one rank killed"
"$TPRUN" --local 3 "${long[@]}" >"$TBRDMA_OUT/local.out" 2>"$TBRDMA_OUT/local.err" &
lpid=$!
defer "kill -9 $lpid 2>/dev/null || true"
wait_grep "$TBRDMA_OUT/local.err" "rdma: decoding" 3 90 || fail "--local 3 did not start decoding"
sleep 1
mapfile -t children < <(pgrep -P "$lpid")
((${#children[@]} == 3)) || fail "expected 3 rank processes, found ${children[*]}"
t0=$(ms)
kill -9 "${children[2]}"
wait_for "pid_exited $lpid" 10 || fail "tprun --local still runs 10 s after a rank died"
t1=$(ms)
rc=0
wait "$lpid" || rc=$?
{ grep -v "decoding\|prefill\|model\|rendezvous\|RDMA on" "$TBRDMA_OUT/local.err" || true; } | sed "s/^/   /"
echo "tprun --local 3 exited with $rc, $((t1 - t0)) ms after the kill"
((rc != 0)) || fail "tprun --local exited 0"
