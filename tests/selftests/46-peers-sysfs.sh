#!/bin/bash
# sysfs tbrdma_peers (peers a device received frames from, "MAC RX_PACKETS
# LAST_SEEN_MS_AGO" per line): read-only, empty on a loopback device and on
# a netdev device that has received nothing.  The table itself is tested on
# the host (tests/unit/test_peer_table.c).
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod
tbr_insmod loopback=1

attr=/sys/class/infiniband/tbrlo0/tbrdma_peers
[[ -f $attr ]] || fail "$attr missing"
[[ $(stat -c %a $attr) == 444 ]] || fail "$attr mode $(stat -c %a $attr)"
[[ $(wc -c <$attr) -eq 0 ]] || fail "tbrlo0 has peers: $(cat $attr)"
if echo x 2>/dev/null >$attr; then fail "$attr is writable"; fi

ip link add tpveth0 type veth peer name tpveth1
defer 'ip link del tpveth0 2>/dev/null || true'
rdma link add tp0 type tbrdma netdev tpveth0 || fail "attach to veth"
ip link set tpveth0 up
ip link set tpveth1 up
[[ $(wc -c </sys/class/infiniband/tp0/tbrdma_peers) -eq 0 ]] ||
	fail "tp0 has peers before any frame: $(cat /sys/class/infiniband/tp0/tbrdma_peers)"
