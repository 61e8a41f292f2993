#!/bin/bash
# Host-side unit test (TAP) for dmesg-check.sh: it must pass clean kernel
# logs and catch every kind of dirty one, so the guest's per-test dmesg
# verdict cannot silently turn into "always clean".
set -uo pipefail

check=$(dirname "$0")/dmesg-check.sh
n=0
failed=0

# expect NAME WANT_RC [WANT_OUTPUT_REGEX] <<< "log text"
expect() {
	local name=$1 want=$2 want_out=${3:-} out rc=0
	out=$("$check" <&0) || rc=$?
	n=$((n + 1))
	if [[ $rc -ne $want ]]; then
		echo "not ok $n - $name # exit $rc, expected $want"
		failed=$((failed + 1))
	elif [[ -n $want_out && ! $out =~ $want_out ]]; then
		echo "not ok $n - $name # output lacks /$want_out/: $out"
		failed=$((failed + 1))
	elif [[ $want -eq 0 && -n $out ]]; then
		echo "not ok $n - $name # clean input but printed: $out"
		failed=$((failed + 1))
	else
		echo "ok $n - $name"
	fi
}

# expect_file NAME WANT_RC FILE
expect_file() {
	local rc=0
	"$check" "$3" >/dev/null 2>&1 || rc=$?
	n=$((n + 1))
	if [[ $rc -eq $2 ]]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1 # exit $rc, expected $2"
		failed=$((failed + 1))
	fi
}

clean='[    0.000000] Linux version 6.1.0-56-amd64 (debian-kernel@lists.debian.org)
[    0.512345] ACPI Warning: something benign (20220331/tbfadt-615)
[    2.100000] tbrdma: loading out-of-tree module taints kernel.
[    2.100100] tbrdma: module verification failed: signature and/or required key missing - tainting kernel
[    3.000000] rdma_rxe: loaded
[    3.100000] infiniband r0: set active
[    3.200000] warning: process foo used the deprecated sysctl system call
[    4.000000] traps: ibv_foo[123] general protection at ip:0 (no "fault" here)'

echo "TAP version 13"
echo "1..20"

expect "empty input is clean" 0 <<<""
expect "typical boot/module log is clean" 0 <<<"$clean"
expect "WARN_ON splat" 1 'WARNING: CPU: 1 PID: 42' <<<"$clean
[   10.000001] ------------[ cut here ]------------
[   10.000002] WARNING: CPU: 1 PID: 42 at drivers/infiniband/core/device.c:1234 ib_dealloc_device+0x5/0x10 [ib_core]"
expect "NULL pointer BUG" 1 'BUG: kernel NULL pointer dereference' \
	<<<"[   11.0] BUG: kernel NULL pointer dereference, address: 0000000000000008"
expect "BUG_ON" 1 'kernel BUG at' <<<"[   11.0] kernel BUG at mm/slub.c:379!"
expect "oops header" 1 'Oops' <<<"[   11.1] Oops: 0000 [#1] PREEMPT SMP NOPTI"
expect "general protection fault" 1 'general protection fault' \
	<<<"[   12.0] general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] SMP NOPTI"
expect "refcount_t underflow" 1 'refcount_t: underflow' \
	<<<"[   13.0] refcount_t: underflow; use-after-free."
expect "list_del corruption" 1 'list_del corruption' \
	<<<"[   14.0] list_del corruption, ffff888003e1c0a8->next is LIST_POISON1 (dead000000000100)"
expect "list_add corruption" 1 'list_add corruption' \
	<<<"[   14.1] list_add corruption. prev->next should be next (ffff888003e1c0a8)"
expect "KASAN report" 1 'KASAN' <<<"[   15.0] BUG: KASAN: slab-use-after-free in tbr_qp_destroy+0x1/0x2 [tbrdma]"
expect "UBSAN report" 1 'UBSAN' <<<"[   15.1] UBSAN: shift-out-of-bounds in drivers/x.c:10:5"
expect "soft lockup" 1 'soft lockup' <<<"[   16.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [kworker/0:1:33]"
expect "hung task" 1 'blocked for more than' \
	<<<"[  250.0] INFO: task rdma:321 blocked for more than 120 seconds."
expect "RCU stall" 1 'detected stalls' \
	<<<"[  300.0] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:"
expect "bare stack dump" 1 'Call Trace:' <<<"[   17.0] Call Trace:"
expect "leaked netdev reference" 1 'waiting for lo' \
	<<<"[   18.0] unregister_netdevice: waiting for lo to become free. Usage count = 2"
expect "only the offending line is printed" 1 '^\[   19.0\] WARNING: at x$' <<<"$clean
[   19.0] WARNING: at x"

# File argument, and an unreadable file (must be an error, never "clean").
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "[    1.0] Oops: 0002 [#1] SMP" >"$tmp"
expect_file "reads a file argument" 1 "$tmp"
expect_file "unreadable file is an error, not clean" 2 /nonexistent/dmesg.txt

echo "# $((n - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
