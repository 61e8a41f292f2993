#!/bin/bash
# A peer that dies mid-transfer (issue 40): node 0 streams 64 KiB SENDs
# over an RC connection made with RDMA CM to node 1 (tests/progs/peer_loss),
# and node 1's guest powers off in the middle, as a machine that loses
# power: nothing is said to node 0.  Node 0's QP must go to the error
# state with the send at the head completing RETRY_EXC_ERR and every other
# one flushed, within the retry budget (retry_cnt + 1 ACK timeouts, 7 and
# 67 ms here, plus the probes' slack), and RDMA CM must report the
# disconnection (rdma_disconnect() on the error, then DISCONNECTED).
# That event is the kernel's RDMA CM's, not ours: its DREQ to a dead peer
# is sent 16 times, 4.1 s apart (CMA_CM_RESPONSE_TIMEOUT 20,
# CMA_MAX_CM_RETRIES 15 in drivers/infiniband/core/cma.c), so DISCONNECTED
# (status -ETIMEDOUT) comes ~70 s after the error with any RoCE device:
# peer_loss waits up to 100 s for it (-w), most of this test's time.
# It powers a guest off: the last test of a run (run-cluster.sh counts it).
# timeout: 240
source "$(dirname "$0")/lib-cluster.sh"

prog=$TBR_PROGS/peer_loss
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
((NODES >= 2)) || skip "needs two nodes"
cluster_tbrdma
port=19900
ip0=$(cable_ip 0 0)
TIMEOUT=14 RETRY=7
budget_ms=$(((RETRY + 1) * 4096 * (1 << TIMEOUT) / 1000000 * 3))

case $NODE in
0)
	"$prog" -s "$ip0" -p $port -t $TIMEOUT -r $RETRY -w 100 >"$TBRDMA_OUT/survivor.log" 2>&1 &
	pid=$!
	wait_cm_listen $port 30 || fail "peer_loss did not listen"
	cluster_put listening 1
	wait_for "pid_exited $pid" 200 || { kill $pid; fail "the survivor still waits: $(cat "$TBRDMA_OUT/survivor.log")"; }
	rc=0
	wait $pid || rc=$?
	cat "$TBRDMA_OUT/survivor.log"
	echo "tbr0: $(net_counters tbr0 | grep -E '^(retransmits|early_probes|ack_timeouts) ' | tr '\n' ' ')"
	echo "cab0 carrier after the peer died: $(cat /sys/class/net/cab0/carrier 2>/dev/null), port $(cat /sys/class/infiniband/tbr0/ports/1/state)"
	((rc == 0)) || fail "the survivor did not see what a dead peer must leave (exit $rc)"
	err_ms=$(sed -n 's/^error .* after \([0-9]*\) ms/\1/p' "$TBRDMA_OUT/survivor.log")
	((err_ms <= budget_ms)) ||
		fail "the QP failed $err_ms ms after the last completion, beyond 3x the retry budget ($budget_ms ms)"
	echo "the QP failed $err_ms ms after the last completion (3x the retry budget: $budget_ms ms)"
	;;
1)
	cluster_get 0 listening 60 >/dev/null
	"$prog" -c "$ip0" -p $port -m 8 >"$TBRDMA_OUT/victim.log" 2>&1 &
	pid=$!
	wait_for "grep -q ready '$TBRDMA_OUT/victim.log'" 60 || fail "the stream never started: $(cat "$TBRDMA_OUT/victim.log")"
	echo "node 1: $(cat "$TBRDMA_OUT/victim.log"), powering off"
	cluster_poweroff
	;;
esac
