#!/bin/bash
# While a process has the device open, rmmod is refused (the uverbs file
# pins the module); once the process exits, rmmod succeeds.
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
tbr_insmod loopback=1
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma

out=$TBRDMA_OUT/holder.out
"$TBRDMA_ROOT/tests/progs/hold_device" tbrlo0 >"$out" 2>&1 &
holder=$!
defer "kill -KILL $holder 2>/dev/null || true"
wait_for "grep -q ready '$out'" 10 || fail "holder did not open the device: $(cat "$out")"
if rmmod tbrdma 2>/dev/null; then
	fail "rmmod succeeded while the device was open"
fi
kill -KILL "$holder"	# no chance to clean up: the kernel must
wait "$holder" 2>/dev/null || true
tbr_rmmod
