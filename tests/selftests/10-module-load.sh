#!/bin/bash
# tbrdma.ko loads on top of the guest kernel's own ib_core/ib_uverbs,
# registers its rdma link type, and unloads cleanly.
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
tbr_insmod
[ -d /sys/module/tbrdma ] || fail "module not in /sys/module"
grep -q '^tbrdma ' /proc/modules || fail "module not in /proc/modules"
[ "$(cat /sys/module/tbrdma/parameters/loopback)" = N ] ||
	fail "loopback parameter should default to N"
# No device exists until one is asked for.
devs=$(ls /sys/class/infiniband/ 2>/dev/null || true)
[ -z "$devs" ] || fail "unexpected RDMA devices: $devs"
tbr_rmmod
[ ! -d /sys/module/tbrdma ] || fail "module still loaded after rmmod"
echo "load and unload clean"
