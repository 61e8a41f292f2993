#!/bin/bash
# rdma-core's pingpong examples between two hosts (namespaces joined by a
# veth pair, lib-net.sh): RC, UC, UD and SRQ, several sizes, polled and
# event-driven, every received buffer checked (-c).
# timeout: 400
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong
net_two_hosts 9000

runs=(
	"rc -s 1 -n 100"
	"rc -s 4096 -n 100"
	"rc -s 65536 -n 50"
	"rc -s 1048576 -n 10"
	"rc -s 4096 -n 50 -e"
	"uc -s 1 -n 100"
	"uc -s 4096 -n 100"
	"uc -s 65536 -n 20"
	"ud -s 1 -n 100"
	"ud -s 1024 -n 100"
	"ud -s 4096 -n 50"
	"ud -s 1024 -n 50 -e"
	"srq -s 1 -n 20 -q 8"
	"srq -s 65536 -n 10 -q 4"
)
PORT=18600
failed=()
for r in "${runs[@]}"; do
	read -r type args <<<"$r"
	PORT=$((PORT + 1))
	srv="ibv_${type}_pingpong -d tbr0 -g $NET_GID_A -c -p $PORT $args"
	cli="ip netns exec $NET_NS ibv_${type}_pingpong -d tbr1 -g $NET_GID_B -c -p $PORT $args $NET_IP_A"
	echo "== $type $args"
	name=net-${type}${args// /}
	run_pair "$name" 60 "$srv" "$cli" || failed+=("$type $args")
	tail -n 2 "$TBRDMA_OUT/$name.client.log" 2>/dev/null | sed "s/^/   /" || true
done
echo "counters tbr0: $(rdma statistic show link tbr0/1)"
((${#failed[@]} == 0)) || fail "${#failed[@]} of ${#runs[@]} runs failed: $(printf '[%s] ' "${failed[@]}")"
[[ $(net_counter tbr0 rx_packets) -gt 0 ]] || fail "tbr0 counted no frames"
peer=$(net_b cat /sys/class/net/tbv1/address)
echo "tbr0 peers: $(</sys/class/infiniband/tbr0/tbrdma_peers)"
[[ $(</sys/class/infiniband/tbr0/tbrdma_peers) =~ ^$peer\ [1-9] ]] ||
	fail "tbr0 does not list host B ($peer) among its peers"
echo "all ${#runs[@]} pingpong runs completed across the veth pair"
