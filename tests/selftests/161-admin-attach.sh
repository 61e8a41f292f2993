#!/bin/bash
# `tbrdma attach` / `tbrdma detach` do what `rdma link add/delete` do: on lo
# a loopback-mode device (default name tbrlo<N>), on a veth a netdev-mode
# one (tbr<N>, or the given name) that libibverbs serves; and every refusal
# with its own exit code: a second device on a netdev or a taken name (5),
# no such netdev or device, another driver's device (2), a netdev tbrdma
# cannot use (5), no privileges (4), module not loaded (3 for detach; attach
# loads it when it is installed, else 3).
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-admin.sh"

require_cmd ibv_devinfo rdma setpriv
tbr_load_core
defer tbr_rmmod
tbr_insmod
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
links() { rdma link show; }

echo "== on lo: loopback mode"
expect_rc 0 tbrdma attach lo
[[ $out == "tbrlo0: attached to lo (loopback mode)" ]] || fail "attach lo said: $out"
grep -q '^link tbrlo0/1 .*netdev lo' <<<"$(links)" || fail "rdma link show: $(links)"
[[ $(</sys/class/infiniband/tbrlo0/tbrdma_mode) == loopback ]] || fail "tbrlo0 mode"
expect_rc 5 tbrdma attach lo
grep -q 'lo already has tbrdma device tbrlo0' <<<"$out" || fail "message for a second device on lo"

echo "== on a veth pair: netdev mode, default and given names"
ip link add tbat0 type veth peer name tbat1
defer 'ip link del tbat0 2>/dev/null || true'
ip link add tbat2 type veth peer name tbat3
defer 'ip link del tbat2 2>/dev/null || true'
ip link set tbat0 up
ip link set tbat1 up
expect_rc 0 tbrdma attach tbat0
[[ $out == "tbr0: attached to tbat0 (netdev mode)" ]] || fail "attach tbat0 said: $out"
expect_rc 0 tbrdma attach tbat1 tbamine
[[ $out == "tbamine: attached to tbat1 (netdev mode)" ]] || fail "attach tbat1 tbamine said: $out"
grep -q '^link tbr0/1 .*netdev tbat0' <<<"$(links)" || fail "rdma link show: $(links)"
grep -q '^link tbamine/1 .*netdev tbat1' <<<"$(links)" || fail "rdma link show: $(links)"
[[ $(</sys/class/infiniband/tbamine/tbrdma_mode) == netdev ]] || fail "tbamine mode"
info=$(ibv_devinfo -d tbamine) || fail "ibv_devinfo -d tbamine"
grep -q 'PORT_ACTIVE' <<<"$info" || fail "tbamine not served as ACTIVE: $info"

expect_rc 5 tbrdma attach tbat1 tbaother
grep -q 'tbat1 already has tbrdma device tbamine' <<<"$out" || fail "message for a second device"
expect_rc 5 tbrdma attach tbat2 tbamine
grep -q 'an RDMA device named tbamine already exists' <<<"$out" || fail "message for a taken name"
[[ ! -e /sys/class/infiniband/tbaother ]] || fail "tbaother created anyway"

echo "== netdevs that do not exist or do not fit"
expect_rc 2 tbrdma attach tbnonexist0
grep -q 'no network interface named tbnonexist0' <<<"$out" || fail "message for a missing netdev"
tbr_modprobe tun
ip tuntap add tbatun0 mode tun
defer 'ip link del tbatun0 2>/dev/null || true'
expect_rc 5 tbrdma attach tbatun0
grep -q 'Ethernet-type' <<<"$out" || fail "message for a tun (non-Ethernet) netdev"
ip link del tbatun0

echo "== without privileges"
expect_rc 4 as_nobody "$TBR_TOOL" attach tbat2
grep -q 'permission denied' <<<"$out" || fail "message for attach as nobody"
expect_rc 4 as_nobody "$TBR_TOOL" detach tbamine
[[ -e /sys/class/infiniband/tbamine ]] || fail "tbamine removed by nobody"

echo "== detach"
expect_rc 0 tbrdma detach tbamine
[[ $out == "tbamine: detached from tbat1" ]] || fail "detach said: $out"
[[ ! -e /sys/class/infiniband/tbamine ]] || fail "tbamine still there"
expect_rc 2 tbrdma detach tbamine
grep -q 'no RDMA device named tbamine' <<<"$out" || fail "message for detaching twice"
modprobe rdma_rxe
rdma link add tbarxe type rxe netdev lo || fail "cannot add an rxe device"
defer 'rdma link delete tbarxe 2>/dev/null || true'
expect_rc 2 tbrdma detach tbarxe
grep -q 'tbarxe is not a tbrdma device' <<<"$out" || fail "message for an rxe device"
[[ -e /sys/class/infiniband/tbarxe ]] || fail "detach removed another driver's device"
rdma link delete tbarxe
modprobe -r rdma_rxe
expect_rc 0 tbrdma detach tbr0
expect_rc 0 tbrdma detach tbrlo0
[[ -z $(ls /sys/class/infiniband) ]] || fail "devices left: $(ls /sys/class/infiniband)"

echo "== module not loaded"
tbr_rmmod
expect_rc 3 tbrdma detach tbr0
grep -q 'module is not loaded' <<<"$out" || fail "message for detach without the module"
if modinfo tbrdma >/dev/null 2>&1; then
	# Installed (70-install.sh ran before): the kernel loads it by alias.
	expect_rc 0 tbrdma attach lo
	[[ -d /sys/module/tbrdma ]] || fail "attach did not load the installed module"
	expect_rc 0 tbrdma detach tbrlo0
else
	expect_rc 3 tbrdma attach lo
	grep -q 'could not be loaded' <<<"$out" || fail "message for attach without the module"
fi
tbr_rmmod
