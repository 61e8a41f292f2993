#!/bin/bash
# First test of `make check-debug`: what kmemleak suspects from boot (the
# kernel's own early allocations) is not ours; scan once and forget it, so
# that zz-kmemleak-scan.sh reports only what the selftests leaked.
source "$(dirname "$0")/lib.sh"
km=/sys/kernel/debug/kmemleak
[[ -w $km ]] || fail "no $km: not the debug kernel (CONFIG_DEBUG_KMEMLEAK)"
echo scan >$km
echo clear >$km
echo "kmemleak: boot-time suspects cleared"
