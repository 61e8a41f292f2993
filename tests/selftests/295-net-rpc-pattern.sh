#!/bin/bash
# ggml's RPC RDMA transport pattern (tests/progs/rpc_pattern, issue 35):
# the device and GID picked from the TCP socket's local address, an RC QP
# at the port's active MTU, SENDs of 256 KiB through bounce buffers with 24
# receives pre-posted, 4 (and ggml's 1) sends in flight, busy polling; and
# the same bytes over TCP. Across the veth pair (server in host A, client
# in host B) at MTU 65000 and 1500, on the loopback device through
# 127.0.0.1, and on a Thunderbolt-attached device (tests/fake-tbnet). Every byte of every round is checked by the program; the test
# also checks that the GID match found the device each side should use,
# as a RoCE v2 GID, and that the path MTU is the port's.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd ibv_devinfo
[[ -x $TBR_PROGS/rpc_pattern ]] || skip "tests/progs/rpc_pattern not built (make test-progs)"
verbs_setup			# tbrlo0 on lo: ::ffff:127.0.0.1
net_two_hosts 65000		# tbr0 (10.77.0.1) - tbr1 (10.77.0.2, namespace tbrB)

RP=$TBR_PROGS/rpc_pattern
PORT=18700
failed=()

# rp NAME SERVER_DEV CLIENT_DEV MTU CLIENT_PREFIX HOST CLIENT_ARGS... — one
# server and one client; SERVER_DEV/CLIENT_DEV are the devices the GID match
# must find (- for TCP), MTU the path MTU it must take.
rp() {
	local name=$1 sdev=$2 cdev=$3 mtu=$4 prefix=$5 host=$6 log
	shift 6
	PORT=$((PORT + 1))
	echo "== $name: $*"
	# shellcheck disable=SC2086  # PREFIX is a word list on purpose
	if ! run_pair "$name" 120 "$RP -l -p $PORT -B $host" \
		"$prefix $RP -c $host -p $PORT $*"; then
		failed+=("$name")
		return 0
	fi
	log=$TBRDMA_OUT/$name.client.log
	grep -H 'RDMA\|result' "$TBRDMA_OUT/$name.server.log" "$log" || true
	if ! grep -q '^result .* data ok$' "$log"; then
		echo "--- $name: no 'data ok' result"
		failed+=("$name")
	elif [[ $sdev != - ]] &&
		! { grep -q "^RDMA probed: dev=$cdev gid=[0-9]* RoCEv2 " "$log" &&
		grep -q "^RDMA probed: dev=$sdev gid=[0-9]* RoCEv2 " "$TBRDMA_OUT/$name.server.log" &&
		grep -q "^RDMA activated: .* mtu=$mtu " "$log" &&
		grep -q "^RDMA activated: .* mtu=$mtu " "$TBRDMA_OUT/$name.server.log"; }; then
		echo "--- $name: expected $sdev <- $cdev, RoCE v2 GIDs, path MTU $mtu"
		failed+=("$name")
	fi
}

# What the GID match reads: every IPv4 address of the netdev is a RoCE v2
# GID (ibv_devinfo -v prints the type beside each).
for d in tbr0 tbrlo0; do
	echo "== ibv_devinfo -v -d $d: GIDs"
	ibv_devinfo -v -d "$d" | grep -E 'GID\[|active_mtu|link_layer'
done
ibv_devinfo -v -d tbr0 | grep -q 'GID\[.*::ffff:10\.77\.0\.1, RoCE v2' ||
	fail "tbr0: ::ffff:10.77.0.1 is not a RoCE v2 GID"
net_b ibv_devinfo -v -d tbr1 | grep -q 'GID\[.*::ffff:10\.77\.0\.2, RoCE v2' ||
	fail "tbr1: ::ffff:10.77.0.2 is not a RoCE v2 GID"

B="ip netns exec $NET_NS"
rp veth-rdma-w4 tbr0 tbr1 4096 "$B" "$NET_IP_A" -t rdma -s 8 -n 2 -w 4
rp veth-rdma-w1 tbr0 tbr1 4096 "$B" "$NET_IP_A" -t rdma -s 8 -n 2 -w 1
rp veth-tcp - - - "$B" "$NET_IP_A" -t tcp -s 8 -n 2
# Loopback: the socket's address is 127.0.0.1, which only tbrlo0 has.
rp lo-rdma-w4 tbrlo0 tbrlo0 4096 "" 127.0.0.1 -t rdma -s 8 -n 2 -w 4
# A small netdev MTU: a 256 KiB message is ~190 frames, more than the
# 64-frame window; the path MTU the port offers is 1024.
ip link set tbv0 mtu 1500
net_b ip link set tbv1 mtu 1500
wait_for "[[ \$(</sys/class/infiniband/tbr1/ports/1/state) == *ACTIVE && \$(</sys/class/infiniband/tbr0/ports/1/state) == *ACTIVE ]]" 10 ||
	fail "ports not ACTIVE at MTU 1500"
rp veth1500-rdma-w4 tbr0 tbr1 1024 "$B" "$NET_IP_A" -t rdma -s 4 -n 2 -w 4

# A Thunderbolt-attached device (tests/fake-tbnet's faketb0, bound to a
# driver named thunderbolt-net, attached by thunderbolt_attach): its GIDs
# are RoCE v2 too, and the pattern runs over it between two processes of
# this host (frames to its own MAC are looped back; the fake link drops
# whatever it would transmit).
fake=$TBRDMA_MODDIR/tests/fake-tbnet/tbrdma_fake_tbnet.ko
[[ -f $fake ]] || fail "$fake not built (make test-progs)"
fake_rmmod() { if [[ -d /sys/module/tbrdma_fake_tbnet ]]; then rmmod tbrdma_fake_tbnet; fi; }
defer fake_rmmod
insmod "$fake"
echo Y >/sys/module/tbrdma/parameters/thunderbolt_attach
tbdev=
# shellcheck disable=SC2016  # wait_for evals it: tbdev is set here
wait_for 'tbdev=$(rdma link show | sed -nE "s|^link ([^/ ]+)/1 .*netdev faketb0( .*)?\$|\1|p"); [[ -n $tbdev ]]' 20 ||
	fail "faketb0 not attached: $(rdma link show)"
ip addr add 10.78.0.1/24 dev faketb0
ip link set faketb0 up		# its MTU: 1500 (the fake's maximum)
wait_for "net_gid $tbdev 10.78.0.1 && [[ \$(</sys/class/infiniband/$tbdev/ports/1/state) == *ACTIVE ]]" 10 ||
	fail "$tbdev: no GID for 10.78.0.1 or port not ACTIVE"
echo "== ibv_devinfo -v -d $tbdev (on faketb0): GIDs"
ibv_devinfo -v -d "$tbdev" | grep -E 'GID\[|active_mtu'
ibv_devinfo -v -d "$tbdev" | grep -q 'GID\[.*::ffff:10\.78\.0\.1, RoCE v2' ||
	fail "$tbdev: ::ffff:10.78.0.1 is not a RoCE v2 GID"
rp tb-rdma-w4 "$tbdev" "$tbdev" 1024 "" 10.78.0.1 -t rdma -s 4 -n 2 -w 4

echo "counters tbr1: $(rdma statistic show link tbr1/1)"
((${#failed[@]} == 0)) || fail "${#failed[@]} runs failed: ${failed[*]}"
echo "all runs moved every byte right; the GID match found tbr0/tbr1/tbrlo0/$tbdev as RoCE v2"
