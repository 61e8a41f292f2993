#!/bin/bash
# A known bug of the RDMA core, not of tbrdma: when the ioctl method
# UVERBS_METHOD_GET_CONTEXT fails after the core allocated the context (the
# file has a context already, or the driver's alloc_ucontext failed), the
# core frees the context without rdma_restrack_put(), so the task reference
# rdma_restrack_set_name() took is never dropped and the caller's
# task_struct (with its signal_struct, credentials and taskstats) leaks
# when it exits.  The write() command GET_CONTEXT cleans up and does not
# leak.  This test FAILS while the bug is there, on every driver (tbrdma
# and rdma_rxe here); it is not part of make check.  Run it with
#   TBRDMA_SELFTEST_DIR=$PWD/tests/kernel-bugs tests/vm/run-vm.sh [--kver K]
# How: 100 processes each get a context (control), then 100 processes each
# ask a second time on the same file; the task_struct slab must not grow.
# timeout: 600
: "${TBRDMA_ROOT:?set by the guest runner}"
# shellcheck source=../selftests/lib.sh
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
# shellcheck source=../selftests/lib-verbs.sh
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"

prog=$TBR_PROGS/get_context_twice
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
tasks() { awk '$1 == "task_struct" { print $2 }' /proc/slabinfo; }
uverbs_of() {
	local u
	for u in /sys/class/infiniband_verbs/uverbs*; do
		[[ $(<"$u/ibdev") == "$1" ]] && echo "/dev/infiniband/${u##*/}"
	done
}
# grown DEV EXTRA — task_structs left by 100 processes that each asked for
# a context 1 + EXTRA times on one file (DEV is $TBR_TEST_DEV).
grown() {
	local path t0 t1 i drv=
	path=$(uverbs_of "$1")
	! verbs_is_rxe || drv=rxe
	"$prog" "$path" "$2" $drv | sort | uniq -c | sed 's/^ */# /' >&2
	sleep 3		# tasks are freed after an RCU grace period
	t0=$(tasks)
	for ((i = 0; i < 100; i++)); do "$prog" "$path" "$2" $drv >/dev/null; done
	sleep 3
	t1=$(tasks)
	echo $((t1 - t0))
}

echo "kernel $(uname -r)"
devs="tbrlo0 r0"
[[ $(uname -r) == "$(modinfo -F vermagic "$TBRDMA_ROOT/tbrdma.ko" | cut -d' ' -f1)" ]] ||
	devs=r0		# tbrdma.ko is built for another kernel
leaked=0
for dev in $devs; do
	export TBR_TEST_DEV=$dev
	verbs_setup
	control=$(grown "$dev" 0)
	twice=$(grown "$dev" 1)
	echo "$dev: task_structs left by 100 processes: $control after one GET_CONTEXT each, $twice after a second, failing one"
	((control < 20)) || fail "$dev: the control run left $control task_structs: too noisy to tell"
	((twice < 50)) || leaked=1
	verbs_teardown
done
((leaked == 0)) || fail "the RDMA core leaks a task_struct per failed GET_CONTEXT ioctl (known bug, Documentation/testing.md)"
echo "no leak: the fuzzer's raw layer may call GET_CONTEXT by ioctl again (tests/progs/fuzz_raw.c)"
