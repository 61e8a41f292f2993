#!/bin/bash
# The reliable transport across two kernels under loss (issue 40): tc netem
# on node 1's NIC (one guest's end of the cable: what it sends is lost,
# reordered, duplicated or damaged, so both data directions meet the
# fault, as data one way and ACKs the other) and, under each fault:
#   - tests/progs/rpc_pattern: 8 MiB up and 8 MiB down over an RC QP, in
#     256 KiB SENDs, every byte checked (node 1 the client),
#   - rping -V: 64 KiB pings (SEND, RDMA READ and WRITE), every byte
#     checked by the client,
#   - ibv_rc_pingpong -c, every buffer checked,
# and the counters must show it: netem dropped (or damaged) frames, the
# senders retransmitted, damaged frames were dropped by the checksum.
# make check size: 5 % loss with reordering and duplication, then with 2 %
# corruption.  TBR_LOSS_RATES="1 5 10" (a --set of run-cluster.sh) for
# more rates, TBR_LOSS_MIB for more data.
# timeout: 900
source "$(dirname "$0")/lib-cluster.sh"

require_cmd tc rping ibv_rc_pingpong
rp=$TBR_PROGS/rpc_pattern
[[ -x $rp ]] || fail "$rp not built (make test-progs)"
((NODES >= 2)) || skip "needs two nodes"
tbr_modprobe sch_netem || skip "no sch_netem"
cluster_tbrdma
read -ra rates <<<"${TBR_LOSS_RATES:-5}"
mib=${TBR_LOSS_MIB:-8}
ip0=$(cable_ip 0 0)
me=$(cable_ip 0 "$NODE")
gid=$(net_gid tbr0 "$me")
# ARP is not under test (the RDMA core resolves the peer's MAC with a 1 s
# wait, which loss can miss): pin the neighbour entries.
cluster_put mac "$(</sys/class/net/cab0/address)"
peer=$(cable_peer 0)
ip neigh replace "$(cable_ip 0 "$peer")" lladdr "$(cluster_get "$peer" mac)" \
	dev cab0 nud permanent || fail "pin the neighbour"

# counters — this node's tbr0 counters that loss moves, "name value ...".
counters() { net_counters tbr0 | grep -E '^(retransmits|ack_timeouts|early_probes|rx_checksum_errors|duplicate_requests|out_of_sequence) ' | tr '\n' ' '; }
# moved NAME BEFORE AFTER — how much counter NAME grew between two counters lines.
moved() {
	local re="(^| )$1 ([0-9]+)" a=0 b=0
	[[ $2 =~ $re ]] && a=${BASH_REMATCH[2]}
	[[ $3 =~ $re ]] && b=${BASH_REMATCH[2]}
	echo $((b - a))
}

port=19400
failed=()
for rate in "${rates[@]}"; do
	for kind in reorder corrupt; do
		if [[ $kind == reorder ]]; then
			fault="loss $rate% delay 1ms reorder 25% duplicate 2%"
		else
			fault="loss $rate% corrupt 2%"
		fi
		cluster_sync "$kind$rate"
		((NODE != 1)) || tc qdisc replace dev cab0 root netem $fault limit 10000 ||
			fail "netem $fault"
		before=$(counters)
		t0=$SECONDS
		port=$((port + 1))
		cluster_pair "rpc-$kind$rate" $port 300 0 1 "$rp -l -p $port -B $ip0" \
			"$rp -c $ip0 -p $port -t rdma -s $mib -n 1" || failed+=("rpc_pattern under $fault")
		((NODE != 1)) || grep -h '^result' "$TBRDMA_OUT/rpc-$kind$rate.log" || true
		port=$((port + 1))
		cluster_pair "rping-$kind$rate" $port 200 0 1 \
			"daemon:rping -s -a $ip0 -p $port -C 5 -S 65535 -V" \
			"rping -c -a $ip0 -p $port -C 5 -S 65535 -V" || failed+=("rping under $fault")
		port=$((port + 1))
		cluster_pair "pp-$kind$rate" $port 200 0 1 \
			"ibv_rc_pingpong -d tbr0 -g $gid -c -p $port -s 65536 -n 20" \
			"ibv_rc_pingpong -d tbr0 -g $gid -c -p $port -s 65536 -n 20 $ip0" ||
			failed+=("ibv_rc_pingpong under $fault")
		after=$(counters)
		echo "$fault on node 1, $((SECONDS - t0)) s; tbr0 counters before: $before"
		echo "   after: $after"
		cluster_put "moved-$kind$rate" "$(moved retransmits "$before" "$after") $(moved rx_checksum_errors "$before" "$after")"
		if ((NODE == 1)); then
			tc -s qdisc show dev cab0 | sed -n 's/^ *Sent/   netem on cab0: Sent/p'
			tc qdisc del dev cab0 root
			# Felt: frames sent again, and damaged ones dropped by node 0.
			read -r re0 ce0 <<<"$(cluster_get 0 "moved-$kind$rate")"
			((re0 + $(moved retransmits "$before" "$after") > 0)) ||
				failed+=("no retransmission under $fault")
			[[ $kind != corrupt ]] || ((ce0 > 0)) ||
				failed+=("node 0 dropped no damaged frame under $fault")
		fi
	done
done
((${#failed[@]} == 0)) || fail "${#failed[@]} failed: $(printf '[%s] ' "${failed[@]}")"
echo "every byte arrived under every fault"
