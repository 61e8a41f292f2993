#!/bin/bash
# The demo `make demo` runs in the guest: load tbrdma, bring up a loopback
# device and a device on each end of a veth pair, and show them as any
# libibverbs program sees them.
source "$TBRDMA_ROOT/tests/selftests/lib.sh"

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

rdma link delete tbr0
rdma link delete tbr1
ip link del tbr-a
tbr_rmmod
