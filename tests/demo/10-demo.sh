#!/bin/bash
# The demo `make demo` runs in the guest: load tbrdma, bring up a loopback
# device and two "hosts" (network namespaces joined by a veth pair, as two
# machines are by a Thunderbolt cable) with a device on each end, show them
# as libibverbs programs and the admin tool see them, move data across the
# link with unmodified rdma-core and perftest programs (RDMA CM included),
# and run the tensor-parallel runner on one machine and across the two.
# timeout: 900
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"	# wait_listen, run_pair
source "$TBRDMA_ROOT/tests/selftests/lib-net.sh"	# the two hosts

TBRDMA=$TBRDMA_ROOT/tools/tbrdma
TPRUN=$TBRDMA_ROOT/tools/tprun
SHAPE=(--synthetic --seed 7 --dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 --vocab 256 --tokens 8)

# What this runs on: the kernel, and the rdma-core whose libibverbs loads
# our provider (libtbrdma-rdmav<N>.so, N its private ABI).
rdma_core=$(dpkg-query -W -f='${Version}' libibverbs1 2>/dev/null || echo unknown)
lib=$(cd "$TBRDMA_ROOT/provider" && ls libtbrdma-rdmav*.so)
echo "== kernel $(uname -r), rdma-core $rdma_core ($(. /etc/os-release && echo "$PRETTY_NAME")), provider $lib"

tbr_load_core
tbr_insmod loopback=1
net_two_hosts 9000	# tbr0 in host A (10.77.0.1), tbr1 in host B (10.77.0.2)

echo "== rdma link show"
rdma link show
echo "== ibv_devices"
ibv_devices
for dev in tbrlo0 tbr0 tbr1; do
	ibv_devinfo -d "$dev" | grep -q PORT_ACTIVE || fail "$dev is not ACTIVE"
done
echo "== ibv_devinfo -d tbr0"
ibv_devinfo -d tbr0
echo "== tbrdma status"
"$TBRDMA" status || fail "tbrdma status"

echo "== ibv_rc_pingpong from host B to host A, every byte checked (-c)"
PORT=18515
run_pair demo-pingpong 60 "ibv_rc_pingpong -d tbr0 -g $NET_GID_A -n 200 -s 65536 -c -p $PORT" \
	"ip netns exec $NET_NS ibv_rc_pingpong -d tbr1 -g $NET_GID_B -n 200 -s 65536 -c -p $PORT $NET_IP_A" ||
	fail "pingpong across the link"
tail -n 2 "$TBRDMA_OUT/demo-pingpong.client.log"

echo "== ib_write_bw from host B to host A (RDMA WRITE, 1 MiB messages)"
PORT=18516
run_pair demo-write-bw 120 "ib_write_bw -d tbr0 -x $NET_GID_A -s 1048576 -n 200 -p $PORT" \
	"ip netns exec $NET_NS ib_write_bw -d tbr1 -x $NET_GID_B -s 1048576 -n 200 -p $PORT $NET_IP_A" ||
	fail "ib_write_bw across the link"
grep -A1 '#bytes' "$TBRDMA_OUT/demo-write-bw.client.log"

echo "== rping -V over RDMA CM (connection set-up by MADs on the link)"
rping -s -a "$NET_IP_A" -p 7400 -C 20 -V >"$TBRDMA_OUT/rping.server.log" 2>&1 &
server=$!
wait_cm_listen 7400 30 || echo "(no rping listener seen yet)"
net_b rping -c -a "$NET_IP_A" -p 7400 -C 20 -V -v | tail -n 2 || fail "rping client"
wait "$server" || fail "rping server"

echo "== tbrdma status tbr0 (peers seen, transport counters)"
"$TBRDMA" status tbr0 || fail "tbrdma status tbr0"

echo "== tprun: 2 ranks on this machine, over the loopback device"
"$TPRUN" --local 2 --devices tbrlo0 "${SHAPE[@]}" || fail "tprun --local 2"

echo "== tprun: rank 0 in host A, rank 1 in host B, all-reduce over the link"
peers=$NET_IP_A:18600,$NET_IP_B:18600
"$TPRUN" --rank 0 --peers "$peers" -d tbr0 "${SHAPE[@]}" >"$TBRDMA_OUT/tprun0.txt" 2>&1 &
rank0=$!
net_b "$TPRUN" --rank 1 --peers "$peers" -d tbr1 "${SHAPE[@]}" >/dev/null || fail "tprun rank 1"
wait "$rank0" || fail "tprun rank 0"
cat "$TBRDMA_OUT/tprun0.txt"
echo "demo complete"
