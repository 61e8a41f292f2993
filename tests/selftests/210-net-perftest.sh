#!/bin/bash
# The perftest matrix of 110-perftest.sh between two hosts (namespaces
# joined by a veth pair, lib-net.sh): server on tbr0 in host A, client on
# tbr1 in host B. Every run must complete; a failing run fails the test.
# timeout: 900
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-perftest.sh"

require_cmd ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_send_bw \
	ib_send_lat ib_atomic_bw ib_atomic_lat
net_two_hosts 9000

PORT=18650
failed=()
for r in "${PERFTEST_RUNS[@]//-a -n 10/-a -n 5}"; do
	read -r prog args <<<"$r"
	PORT=$((PORT + 1))
	echo "== $prog $args"
	name=net-$prog${args// /}
	run_pair "$name" 120 "$prog -d tbr0 -x $NET_GID_A -F -p $PORT $args" \
		"ip netns exec $NET_NS $prog -d tbr1 -x $NET_GID_B -F -p $PORT $args $NET_IP_A" ||
		failed+=("$r")
done
echo "counters tbr1: $(rdma statistic show link tbr1/1)"
((${#failed[@]} == 0)) || fail "${#failed[@]} of ${#PERFTEST_RUNS[@]} runs failed: $(printf '[%s] ' "${failed[@]}")"
echo "all ${#PERFTEST_RUNS[@]} perftest runs completed across the veth pair"
