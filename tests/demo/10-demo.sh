#!/bin/bash
# The demo `make demo` runs in the guest: load tbrdma, bring up a loopback
# device and a device on each end of a veth pair, show them as any
# libibverbs program sees them, and move data over the loopback device with
# unmodified rdma-core and perftest programs.
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"	# wait_listen

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
tbr_insmod loopback=1
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma

ip link add tbr-a type veth peer name tbr-b
ip addr add 192.0.2.1/24 dev tbr-a
ip addr add 192.0.2.2/24 dev tbr-b
ip link set tbr-a up
ip link set tbr-b up
rdma link add tbr0 type tbrdma netdev tbr-a
rdma link add tbr1 type tbrdma netdev tbr-b

echo "== rdma link show"
rdma link show
echo "== ibv_devices"
ibv_devices
for dev in tbrlo0 tbr0 tbr1; do
	echo "== ibv_devinfo -d $dev"
	ibv_devinfo -d "$dev" || fail "ibv_devinfo $dev"
	ibv_devinfo -d "$dev" | grep -q PORT_ACTIVE || fail "$dev is not ACTIVE"
done
echo "== GID table of tbr0 (from tbr-a's addresses)"
ibv_devinfo -v -d tbr0 | grep 'GID\['

echo "== ibv_rc_pingpong over tbrlo0, every byte checked (-c)"
ibv_rc_pingpong -d tbrlo0 -g 1 -n 1000 -s 4096 -c >/dev/null 2>&1 &
server=$!
wait_listen 18515 30 "$server" || fail "pingpong server did not start"
ibv_rc_pingpong -d tbrlo0 -g 1 -n 1000 -s 4096 -c 127.0.0.1 || fail "pingpong client"
wait "$server" || fail "pingpong server"

echo "== ib_write_bw over tbrlo0 (RDMA WRITE, 64 KiB messages)"
ib_write_bw -d tbrlo0 -x 1 -s 65536 -n 2000 >/dev/null 2>&1 &
server=$!
wait_listen 18515 30 "$server" || fail "ib_write_bw server did not start"
ib_write_bw -d tbrlo0 -x 1 -s 65536 -n 2000 127.0.0.1 || fail "ib_write_bw client"
wait "$server" || fail "ib_write_bw server"

rdma link delete tbr0
rdma link delete tbr1
ip link del tbr-a
tbr_rmmod
