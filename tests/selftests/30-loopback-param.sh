#!/bin/bash
# loopback=1 creates tbrlo0 at load time; unloading removes it.
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
tbr_insmod loopback=1
[ -e /sys/class/infiniband/tbrlo0 ] || fail "tbrlo0 not created"
[ "$(cat /sys/class/infiniband/tbrlo0/tbrdma_mode)" = loopback ] || fail "tbrlo0 mode"
info=$(RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma ibv_devinfo -d tbrlo0)
grep -q 'PORT_ACTIVE' <<<"$info" || fail "tbrlo0 not ACTIVE: $info"
tbr_rmmod
[ ! -e /sys/class/infiniband/tbrlo0 ] || fail "tbrlo0 survived rmmod"
