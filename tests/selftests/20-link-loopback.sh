#!/bin/bash
# `rdma link add NAME type tbrdma netdev lo` makes a loopback-mode device
# that ibv_devinfo (through our provider) shows ACTIVE on Ethernet with a
# populated GID table; `rdma link delete` removes it.
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
tbr_insmod
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma

rdma link add t0 type tbrdma netdev lo || fail "rdma link add failed"
links=$(rdma link show)
grep -q 't0/1 .*netdev lo' <<<"$links" || fail "rdma link show: $links"
abi=$(sed -n 's/^#define TBRDMA_UVERBS_ABI_VERSION[[:space:]]*//p' "$TBRDMA_ROOT/uapi/tbrdma-abi.h")
[ "$(cat /sys/class/infiniband/t0/tbrdma_abi_version)" = "$abi" ] || fail "abi attribute is not $abi"
[ "$(cat /sys/class/infiniband/t0/tbrdma_mode)" = loopback ] || fail "mode attribute"

# A second device on the same netdev is refused.
if rdma link add t1 type tbrdma netdev lo 2>/dev/null; then
	fail "second device on lo was accepted"
fi

info=$(ibv_devinfo -v -d t0) || fail "ibv_devinfo failed"
grep -E 'hca_id|fw_ver|state:|link_layer|max_pd:|active_mtu|GID\[' <<<"$info"
grep -q 'state:[[:space:]]*PORT_ACTIVE' <<<"$info" || fail "port not ACTIVE"
grep -q 'link_layer:[[:space:]]*Ethernet' <<<"$info" || fail "link layer not Ethernet"
grep -q 'max_pd:[[:space:]]*16384' <<<"$info" || fail "max_pd not reported"
grep -q 'fw_ver:[[:space:]]*0\.2\.0' <<<"$info" || fail "fw_ver not 0.2.0"
grep -q 'active_mtu:[[:space:]]*4096' <<<"$info" || fail "lo should give MTU 4096"
# lo's IPv4 address as an IPv4-mapped RoCEv2 GID.
grep -qE 'GID\[ *[0-9]+\]:.*(::ffff:127\.0\.0\.1|ffff:7f00:1).*RoCE v2' <<<"$info" ||
	fail "no GID for 127.0.0.1"

# Our provider beside another one: with an rxe device (which has a driver
# id) present, libibverbs must list both (libibverbs 44 crashed here when
# our provider had no match table).
modprobe rdma_rxe
rdma link add tr0 type rxe netdev lo || fail "cannot add an rxe device"
defer 'rdma link delete tr0 2>/dev/null || true'
devs=$(ibv_devices) || fail "ibv_devices failed with rxe and tbrdma devices present"
grep -qw t0 <<<"$devs" && grep -qw tr0 <<<"$devs" || fail "ibv_devices: $devs"
rdma link delete tr0

# Through the provider: query, PD allocation up to the reported limit,
# which is shared with the PDs the kernel holds (the MAD layer's).
pds=$(rdma resource show pd dev t0 | grep -c 'dev t0') || true
"$TBRDMA_ROOT/tests/progs/limits" t0 "pd=$pds" || fail "limits"

rdma link delete t0 || fail "rdma link delete failed"
[ ! -e /sys/class/infiniband/t0 ] || fail "t0 still present after delete"
tbr_rmmod
