#!/bin/bash
# A device on an Ethernet netdev (a veth end) follows it: port DOWN when the
# link is down, ACTIVE when up, and the device goes away when the netdev is
# deleted.  Several devices at once are all removed by rmmod.
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
tbr_insmod loopback=1
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
port_state() { local i; i=$(ibv_devinfo -d "$1") && sed -n 's/.*state:[[:space:]]*\([A-Z_]*\).*/\1/p' <<<"$i"; }
active_mtu() { local i; i=$(ibv_devinfo -d "$1") && sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$i"; }

ip link add tveth0 type veth peer name tveth1
defer 'ip link del tveth0 2>/dev/null || true'
rdma link add tv0 type tbrdma netdev tveth0 || fail "attach to veth"
[ "$(cat /sys/class/infiniband/tv0/tbrdma_mode)" = netdev ] || fail "mode should be netdev"
[ "$(port_state tv0)" = PORT_DOWN ] || fail "port should be DOWN while veth is down"

ip link set tveth0 up
ip link set tveth1 up
wait_for '[ "$(port_state tv0)" = PORT_ACTIVE ]' 5 || fail "port did not become ACTIVE"
ip link set tveth1 down	# carrier lost on tveth0
wait_for '[ "$(port_state tv0)" = PORT_DOWN ]' 5 || fail "port did not go DOWN on carrier loss"

# veth reports 10 Gb/s through ethtool: 1X FDR10.
info=$(ibv_devinfo -v -d tv0)
grep -qE 'active_width:[[:space:]]*1X' <<<"$info" || fail "width: $info"
grep -qE 'active_speed:[[:space:]]*10(\.0)? Gbps' <<<"$info" || fail "speed: $info"

# MTU follows the netdev.
ip link set tveth1 up
ip link set tveth0 mtu 1500
[ "$(active_mtu tv0)" = 1024 ] || fail "MTU 1500 should give 1024, got $(active_mtu tv0)"
ip link set tveth0 mtu 9000
[ "$(active_mtu tv0)" = 4096 ] || fail "MTU 9000 should give 4096, got $(active_mtu tv0)"

# Only Ethernet-type netdevs can carry us.
modprobe tun	# /dev/net/tun appears only once the module is loaded
ip tuntap add ttun0 mode tun || fail "cannot create a tun device"
defer 'ip link del ttun0 2>/dev/null || true'
if rdma link add tt0 type tbrdma netdev ttun0 2>/dev/null; then
	fail "attach to a non-Ethernet netdev (tun) was accepted"
fi
ip link del ttun0 2>/dev/null || true

# The cable is pulled: deleting the netdev removes the device.
ip link del tveth0
wait_for '[ ! -e /sys/class/infiniband/tv0 ]' 10 || fail "tv0 not removed with its netdev"

# Several devices, removed together by rmmod.
ip link add tveth2 type veth peer name tveth3
defer 'ip link del tveth2 2>/dev/null || true'
rdma link add tv2 type tbrdma netdev tveth2 || fail "attach tveth2"
rdma link add tv3 type tbrdma netdev tveth3 || fail "attach tveth3"
tbr_rmmod
for d in tbrlo0 tv2 tv3; do
	[ ! -e /sys/class/infiniband/$d ] || fail "$d survived rmmod"
done
ip link del tveth2
