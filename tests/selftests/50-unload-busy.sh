#!/bin/bash
# Removing a device while processes use it.  Neither rmmod nor `rdma link
# delete` waits for user space (the driver lets the core disassociate open
# contexts): a process killed with its objects alive leaves nothing behind,
# and one still holding a PD, MR, CQ and a QP with a posted receive sees
# the device go: its receive flushed on the CQ ring it polls,
# IB_EVENT_DEVICE_FATAL, then every destroy and the close succeed
# (tests/progs/hold_device.c).  240-net-linkloss does the same for a
# deleted netdev.
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
holder=$TBRDMA_ROOT/tests/progs/hold_device

# start_holder NAME DEV — sets HOLDER to the pid of a hold_device on DEV.
start_holder() {
	"$holder" "$2" >"$TBRDMA_OUT/$1.out" 2>&1 &
	HOLDER=$!
	defer "kill -KILL $HOLDER 2>/dev/null || true"
	wait_for "grep -q ready '$TBRDMA_OUT/$1.out'" 10 ||
		fail "$1 did not open $2: $(cat "$TBRDMA_OUT/$1.out")"
}

# remove_under_holder NAME CMD... — run CMD, which removes the device
# HOLDER holds; it must not wait for the holder, which must see a clean
# removal.  In the background: if CMD waited, a timeout is the only way
# to tell.
remove_under_holder() {
	local name=$1 pid rc=0
	shift
	"$@" &
	pid=$!
	wait_for "pid_exited $pid" 30 || fail "'$*' still waiting 30 s later (for the holder?)"
	wait "$pid" || fail "'$*' failed while the device was in use"
	wait_for "pid_exited $HOLDER" 20 || fail "holder still running: $(cat "$TBRDMA_OUT/$name.out")"
	wait "$HOLDER" || rc=$?
	sed 's/^/   /' "$TBRDMA_OUT/$name.out"
	((rc == 0)) || fail "the holder did not see a clean removal (exit $rc)"
}

echo "== a holder killed with its objects alive"
tbr_insmod loopback=1
start_holder killed tbrlo0
kill -KILL "$HOLDER"	# no chance to clean up: the kernel must
wait "$HOLDER" 2>/dev/null || true
tbr_rmmod || fail "rmmod after the killed holder"

echo "== rdma link delete while a holder uses the device"
tbr_insmod
rdma link add tbrbusy0 type tbrdma netdev lo || fail "rdma link add failed"
start_holder linkdel tbrbusy0
remove_under_holder linkdel rdma link delete tbrbusy0
[[ ! -e /sys/class/infiniband/tbrbusy0 ]] || fail "tbrbusy0 still there"

echo "== rmmod while a holder uses the device"
rdma link add tbrbusy1 type tbrdma netdev lo || fail "rdma link add failed"
start_holder rmmod tbrbusy1
remove_under_holder rmmod rmmod tbrdma
[[ ! -e /sys/module/tbrdma ]] || fail "module still loaded"
echo "removal with users handled"
