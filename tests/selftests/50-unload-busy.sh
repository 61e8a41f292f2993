#!/bin/bash
# Removing a device while processes use it.  `rdma link delete` does not
# wait for user space (the driver lets the core disassociate open
# contexts): a process killed with its objects alive leaves nothing behind,
# and one still holding a PD, MR, CQ and a QP with a posted receive sees
# the device go: its receive flushed on the CQ ring it polls,
# IB_EVENT_DEVICE_FATAL, then every destroy and the close succeed
# (tests/progs/hold_device.c).  rmmod is refused while such a process has
# the device open (its doorbell file, kmod/doorbell.c, holds the module),
# changes nothing, and works once the process has closed it.
# 240-net-linkloss does the same for a deleted netdev.
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma

# remove_under_holder NAME CMD... — CMD removes the device HOLDER holds,
# without waiting for it, and the holder sees a clean removal.
remove_under_holder() {
	local name=$1
	shift
	finishes_within 30 "$@"
	holder_done "$name"
}

echo "== a holder killed with its objects alive"
tbr_insmod loopback=1
holder_start killed tbrlo0 10
kill -KILL "$HOLDER"	# no chance to clean up: the kernel must
wait "$HOLDER" 2>/dev/null || true
tbr_rmmod || fail "rmmod after the killed holder"

echo "== rdma link delete while a holder uses the device"
tbr_insmod
rdma link add tbrbusy0 type tbrdma netdev lo || fail "rdma link add failed"
holder_start linkdel tbrbusy0 10
remove_under_holder linkdel rdma link delete tbrbusy0
[[ ! -e /sys/class/infiniband/tbrbusy0 ]] || fail "tbrbusy0 still there"

echo "== rmmod while a holder uses the device: refused"
rdma link add tbrbusy1 type tbrdma netdev lo || fail "rdma link add failed"
holder_start rmmod tbrbusy1 10
rc=0
timeout 30 rmmod tbrdma 2>"$TBRDMA_OUT/rmmod.err" || rc=$?
((rc != 124)) || fail "rmmod waited for the process"
((rc != 0)) || fail "rmmod succeeded while a process had the device open"
sed 's/^/   /' "$TBRDMA_OUT/rmmod.err"
grep -q "in use" "$TBRDMA_OUT/rmmod.err" || fail "rmmod failed for another reason"
# How the admin guide says to find who holds the module.
find /proc/[0-9]*/fd -lname '*tbrdma-doorbell*' 2>/dev/null | grep -q "^/proc/$HOLDER/fd/" ||
	fail "the holder's doorbell file is not found the admin guide's way"
[[ -e /sys/class/infiniband/tbrbusy1 ]] || fail "the refused rmmod took tbrbusy1 away"
[[ $(</sys/class/infiniband/tbrbusy1/ports/1/state) == *ACTIVE ]] ||
	fail "tbrbusy1 not ACTIVE after the refused rmmod"
remove_under_holder rmmod rdma link delete tbrbusy1
tbr_rmmod || fail "rmmod after the holder closed the device"
[[ ! -e /sys/module/tbrdma ]] || fail "module still loaded"
echo "removal with users handled"
