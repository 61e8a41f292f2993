#!/bin/bash
# RNR storms on purpose (issue 35): tests/progs/rpc_pattern across the veth
# pair of the selftests (tbr0 in the initial namespace, tbr1 in namespace
# tbrB, MTU 65000), the server's receiver stalling 20 ms every 32 chunks
# (-S 20, as a descheduled receiver would), 3 rounds of 32 MiB up and
# down, 4 SENDs and ggml's 1 SEND in flight; then the same with 1 ms of
# netem delay each way, so the whole window is on the wire when an RNR NAK
# comes back. Reported: the sender's (tbr1's) RNR NAKs, frames sent again,
# packets sent (ACKs included) and ACK timeouts over each run, medians of
# BENCH_REPS runs. Every byte is checked by the program. Counters, not
# speed: what the requester does while the receiver is behind (the
# probe after each RNR wait, Documentation/wire-protocol.md).
# timeout: 900
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-net.sh"
source "$(dirname "$0")/lib-bench.sh"

RP=$TBR_PROGS/rpc_pattern
[[ -x $RP ]] || skip "tests/progs/rpc_pattern not built"
tbr_modprobe sch_netem || skip "no sch_netem"
net_two_hosts 65000
B="ip netns exec $NET_NS"
CNT=(rnr_nak_received retransmits tx_packets ack_timeouts)

# stall_run W -> the sender's counter deltas, in the order of CNT
stall_run() {
	local w=$1 PORT name c before=() i=0 out=""
	PORT=$(bench_next_port)
	name=stall.w$w.$PORT
	for c in "${CNT[@]}"; do before+=("$(net_counter tbr1 "$c")"); done
	run_pair "$name" 300 "$RP -l -p $PORT -B $NET_IP_A -S 20" \
		"$B $RP -c $NET_IP_A -p $PORT -t rdma -s 32 -n 3 -w $w" >&2 || return 1
	grep -q '^result .* data ok$' "$TBRDMA_OUT/$name.client.log" || return 1
	for c in "${CNT[@]}"; do
		out+="$(($(net_counter tbr1 "$c") - before[i])) "
		i=$((i + 1))
	done
	echo "$out"
}

failed=0
for delay in none 1ms; do
	if [[ $delay != none ]]; then
		tc qdisc replace dev tbv0 root netem delay "$delay"
		net_b tc qdisc replace dev tbv1 root netem delay "$delay"
	fi
	for w in 4 1; do
		: >"$TBRDMA_OUT/stall.$delay.w$w"
		for ((rep = 0; rep < BENCH_REPS; rep++)); do
			v=$(stall_run "$w") || { v=failed; failed=1; }
			echo "delay $delay, $w SENDs, run $rep: ${CNT[*]}: $v"
			echo "$v" >>"$TBRDMA_OUT/stall.$delay.w$w"
		done
	done
done

echo
echo "stalled receiver (20 ms every 32 chunks), sender's counters, medians of $BENCH_REPS runs of 3 x 32 MiB up and down"
printf '%-6s %6s %9s %12s %12s %12s\n' delay sends "RNR NAKs" "sent again" "tx_packets" "ACK timeouts"
for delay in none 1ms; do
	for w in 4 1; do
		f=$TBRDMA_OUT/stall.$delay.w$w
		row=()
		for i in 1 2 3 4; do
			if grep -q failed "$f"; then row+=(failed); else row+=("$(awk -v c=$i '{print $c}' "$f" | median)"); fi
		done
		printf '%-6s %6s %9s %12s %12s %12s\n' "$delay" "$w" "${row[@]}"
	done
done
((failed == 0)) || fail "a run failed"
