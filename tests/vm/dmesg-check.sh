#!/bin/bash
# dmesg-check.sh [FILE|-] — fail if kernel log lines show a kernel bug.
#
# Reads FILE (or stdin) and prints every line matching a "the kernel is
# unhappy" pattern. Exit 0: clean; 1: offending lines found (printed on
# stdout); 2: the input could not be read (never "clean" by accident).
#
# Policy (see Documentation/testing.md): anything that means the kernel hit
# a bug, a warning, a memory-safety report, a lockup, or leaked a netdev
# reference. "Call Trace:" is included because stack dumps without one of
# the headers below (dump_stack(), hung tasks, RCU stalls) still mean
# something went wrong; a test that provokes one on purpose is wrong.
set -euo pipefail

patterns=(
	'WARNING:'                          # WARN_ON()/WARN() splats
	'BUG:'                              # BUG: kernel NULL pointer, soft lockup, sleeping in atomic, KASAN...
	'kernel BUG at'                     # BUG_ON()
	'Oops'                              # oops header
	'general protection fault'
	'Kernel panic'
	'KASAN'
	'UBSAN'
	'refcount_t'                        # refcount_t: underflow / saturated / addition on 0
	'list_(add|del) corruption'         # CONFIG_LIST_HARDENED / DEBUG_LIST
	'Call Trace:'
	'INFO: task .* blocked for more than'  # hung task detector
	'rcu: .*detected( expedited)? stalls'  # RCU stall detector
	'unregister_netdevice: waiting for'    # leaked netdev reference (dev_hold without dev_put)
)

args=()
for p in "${patterns[@]}"; do
	args+=(-e "$p")
done

input=${1:--}
if [[ $input != - && ! -r $input ]]; then
	echo "dmesg-check: cannot read '$input'" >&2
	exit 2
fi

rc=0
grep -a -E "${args[@]}" -- "$input" || rc=$?
case $rc in
0) exit 1 ;;  # grep found something: dirty
1) exit 0 ;;  # no match: clean
*) exit 2 ;;  # grep error: never report clean
esac
