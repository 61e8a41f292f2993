#!/bin/bash
# Every cable between two guests, each with its own kernel: tbrdma on both
# ends, rdma-core's pingpongs (RC, UC, UD; polled and with events; every
# received buffer checked with -c) and rping (RDMA CM, every byte checked)
# across it, then each device must list the other end among its peers.
# A loss-free cable must need no retransmission.
# timeout: 400
source "$(dirname "$0")/lib-cluster.sh"

require_cmd ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong rping
cluster_tbrdma
runs=(
	"rc -s 4096 -n 100"
	"rc -s 1048576 -n 5"
	"rc -s 1 -n 50 -e"
	"uc -s 4096 -n 100"
	"ud -s 2048 -n 100"
)
failed=()
port=18600
for k in "${!CABLE_LIST[@]}"; do
	a=${CABLE_LIST[k]%-*} b=${CABLE_LIST[k]#*-}
	cable_mine "$k" && me=$(cable_ip "$k" "$NODE") && gid=$(net_gid "tbr$k" "$me") || gid=""
	for r in "${runs[@]}"; do
		read -r type args <<<"$r"
		port=$((port + 1))
		cmd="ibv_${type}_pingpong -d tbr$k -g ${gid:-0} -c -p $port $args"
		cluster_pair "cab$k-$type${args// /}" "$port" 60 "$a" "$b" "$cmd" \
			"$cmd $(cable_ip "$k" "$a")" || failed+=("cable $k: $type $args")
		if ((NODE == b)); then
			echo "cable $k $type $args: $(grep -h usec/iter "$TBRDMA_OUT/cab$k-$type${args// /}.log")"
		fi
	done
	port=$((port + 1))
	cluster_pair "cab$k-rping" "$port" 60 "$a" "$b" \
		"rping -s -a $(cable_ip "$k" "$a") -p $port -C 20 -S 60000 -V" \
		"rping -c -a $(cable_ip "$k" "$a") -p $port -C 20 -S 60000 -V" ||
		failed+=("cable $k: rping")
done

for k in "${!CABLE_LIST[@]}"; do
	cable_mine "$k" || continue
	echo "tbr$k: $(net_counters "tbr$k" | grep -E '^(tx_packets|rx_packets|retransmits|early_probes|ack_timeouts|duplicate_requests) ' | tr '\n' ' ')"
	cluster_put "mac$k" "$(</sys/class/net/cab$k/address)"
	peer=$(cluster_get "$(cable_peer "$k")" "mac$k")
	[[ $(</sys/class/infiniband/tbr$k/tbrdma_peers) =~ (^|$'\n')$peer\ [1-9] ]] ||
		failed+=("tbr$k does not list its peer $peer")
	[[ $(net_counter "tbr$k" retransmits) == 0 ]] ||
		echo "NOTE: tbr$k retransmitted on a cable that loses nothing"
done
((${#failed[@]} == 0)) || fail "${#failed[@]} failed: $(printf '[%s] ' "${failed[@]}")"
echo "every cable of node $NODE carried RC, UC, UD and RDMA CM traffic"
