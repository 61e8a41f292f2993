#!/bin/bash
# The perftest matrix of 110-perftest.sh between two hosts (namespaces
# joined by a veth pair, lib-net.sh): server on tbr0 in host A, client on
# tbr1 in host B; here the bandwidth programs sweep all sizes (110 sweeps
# the latency ones), and the provider's post lists and CQ moderation are
# left to 110. Every run must complete; a failing run fails the test.
# timeout: 900
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
# shellcheck disable=SC2034  # lib-perftest.sh reads it
PERFTEST_SWEEP=bw
source "$(dirname "$0")/lib-perftest.sh"

require_cmd ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_send_bw \
	ib_send_lat ib_atomic_bw ib_atomic_lat
net_two_hosts 9000

PORT=18650
failed=()
for r in "${PERFTEST_RUNS[@]}"; do
	read -r prog args <<<"$r"
	PORT=$((PORT + 1))
	echo "== $prog $args"
	name=net-$prog${args// /}
	run_pair "$name" 120 "$prog -d tbr0 -x $NET_GID_A -F -p $PORT $args" \
		"ip netns exec $NET_NS $prog -d tbr1 -x $NET_GID_B -F -p $PORT $args $NET_IP_A" ||
		failed+=("$r")
done
# A poller that sees a send completion must find the slot free and post
# again at once (perftest's latency tests run with a one-slot SQ). Big
# READs hit the old window where the CQE showed before the slot was
# freed: this run failed within 50-70 iterations then ("Couldn't post
# send").
PORT=$((PORT + 1))
echo "== ib_read_lat -s 8388608 -n 120 (send slot free when its completion shows)"
run_pair net-read-lat-8M 300 "ib_read_lat -d tbr0 -x $NET_GID_A -F -p $PORT -s 8388608 -n 120" \
	"ip netns exec $NET_NS ib_read_lat -d tbr1 -x $NET_GID_B -F -p $PORT -s 8388608 -n 120 $NET_IP_A" ||
	failed+=("ib_read_lat -s 8388608 -n 120")
echo "counters tbr1: $(rdma statistic show link tbr1/1)"
runs=$((${#PERFTEST_RUNS[@]} + 1))
((${#failed[@]} == 0)) || fail "${#failed[@]} of $runs runs failed: $(printf '[%s] ' "${failed[@]}")"
echo "all $runs perftest runs completed across the veth pair"
