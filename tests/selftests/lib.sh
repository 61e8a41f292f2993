# lib.sh — helpers for tbrdma selftests. Source it first thing:
#     . "$TBRDMA_ROOT/tests/selftests/lib.sh"
# It turns on "set -euo pipefail": any failing command fails the test.
# Contract (Documentation/testing.md): exit 0 = pass, 4 = skip, other = fail.
# shellcheck shell=bash
set -euo pipefail
# A command that ends the test through set -e names itself: without this a
# test can fail with no message at all (240 on 6.12 in CI, 2026-11-28).
# Only in the test's own shell while errexit is on: a background job that
# is meant to fail, or a test's "set +e" stretch, stays quiet.
set -E
trap '_tbr_rc=$?; [[ $- != *e* || $BASHPID != "$$" ]] ||
	echo "FAIL: exit $_tbr_rc at ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND" >&2' ERR

: "${TBRDMA_ROOT:?run selftests through tests/vm/run-vm.sh}"
# Where the modules built for the running kernel are (run-vm.sh builds them
# in build/kmods/KVER for a kernel other than the tree's own build's).
: "${TBRDMA_MODDIR:=$TBRDMA_ROOT}"
: "${TBRDMA_OUT:=$(mktemp -d)}"

# The environment of run-vm.sh does not reach the guest. To set a test's
# knobs (TBR_TEST_DEV, TBR_INTEGRITY_*, TBR_LIMITS_KINDS, ...) for a run,
# either
#  - run wrappers from a directory of your own, e.g. /var/tmp/rxe/100-x.sh:
#        # timeout: 400
#        export TBR_TEST_DEV=r0
#        exec bash "$TBRDMA_ROOT/tests/selftests/100-pingpong.sh"
#    with TBRDMA_SELFTEST_DIR=/var/tmp/rxe tests/vm/run-vm.sh, or
#  - write the assignments to tests/selftests/.test-env (sourced here), and
#    delete it after the run: never commit it, and mind that it changes
#    every run from this tree, other people's included (make check-debug
#    writes one in its own copy of the tree).
if [[ -f $TBRDMA_ROOT/tests/selftests/.test-env ]]; then
	# shellcheck disable=SC1091
	source "$TBRDMA_ROOT/tests/selftests/.test-env"
	echo "lib: settings from tests/selftests/.test-env: $(tr '\n' ' ' <"$TBRDMA_ROOT/tests/selftests/.test-env")"
fi

skip() { echo "SKIP: $*"; exit 4; }   # the runner shows the last "SKIP:" line
fail() { echo "FAIL: $*" >&2; exit 1; }

# defer CMD — run CMD (a string) when the test exits, last registered first,
# even on failure. Errors of deferred commands are reported, not fatal.
_tbr_deferred=()
_tbr_run_deferred() {
	local i
	for ((i = ${#_tbr_deferred[@]} - 1; i >= 0; i--)); do
		eval "${_tbr_deferred[i]}" || echo "defer: '${_tbr_deferred[i]}' failed" >&2
	done
}
trap _tbr_run_deferred EXIT
defer() { _tbr_deferred+=("$1"); }

# Every exec costs ~0.1 s in the TCG guest: skip modprobe for loaded modules.
tbr_modprobe() { local m; for m; do [[ -d /sys/module/$m ]] || modprobe "$m"; done; }
tbr_load_core() { tbr_modprobe ib_core ib_uverbs; }

# tbr_needs_tree_build — skip a test that runs `make` in the tree (the
# admin guide's walkthrough, make install) on a kernel the tree's own
# build is not for: there make would compile every object in the TCG guest
# (over 10 minutes), and the kernel-specific parts are the other tests'.
tbr_needs_tree_build() {
	[[ $TBRDMA_MODDIR == "$TBRDMA_ROOT" ]] ||
		skip "runs make in the tree, whose objects are for another kernel than $(uname -r) (a full compile in the guest); 6.1 runs it"
}

# tbr_insmod [PARAM=VALUE...] — insmod the freshly built module (insmod does
# not load dependencies, so modprobe what modinfo says it depends on first).
_tbr_deps=""
tbr_insmod() {
	local ko=$TBRDMA_MODDIR/tbrdma.ko
	[[ -f $ko ]] || fail "$ko not built (run make first)"
	[[ -n $_tbr_deps ]] || _tbr_deps="ib_core ib_uverbs $(modinfo -F depends "$ko" | tr ',' ' ')"
	# shellcheck disable=SC2086  # a list of module names
	tbr_modprobe $_tbr_deps
	insmod "$ko" "$@"
}
# tbr_rmmod — rmmod tbrdma if it is loaded.  A process that still has a
# device open holds the module (its doorbell file); one killed a moment ago
# may still be exiting, so wait up to 10 s for the module to be free.
tbr_rmmod() {
	[[ -d /sys/module/tbrdma ]] || return 0
	wait_for "[[ \$(</sys/module/tbrdma/refcnt) == 0 ]]" 10 || true
	rmmod tbrdma
}

# pid_exited PID — PID has exited.  Not just `! kill -0`: a child that has
# exited but was not waited for yet is a zombie, and kill -0 accepts it.
# Builtins only: the helpers below poll, and each exec costs tens of
# milliseconds in the TCG guest.
pid_exited() {
	# The whole file in one read, to its end.  bash's read buffers a
	# seekable file and seeks back to just after the line it returns; on
	# the status file of a process that exits meanwhile that seek fails,
	# and bash keeps the unread rest and hands it to the next read of fd 0
	# from any other file (ms() in cluster/40-tprun.sh read "Tgid:" from
	# /proc/uptime, CI 2026-11-29).  Read to the end, nothing is left.  A
	# read that fails midway (ESRCH: the process is gone) leaves no State.
	# Set, not just declared: set -u.
	local status=""
	kill -0 "$1" 2>/dev/null || return 0
	read -r -d '' status 2>/dev/null <"/proc/$1/status" || true
	[[ $status =~ State:[[:space:]]+([A-Z]) ]] || return 0
	[[ ${BASH_REMATCH[1]} == Z ]]
}

# tbr_sleep SECS — sleep(1) without its exec (about 0.1 s of overhead per
# call in the TCG guest, twice a 0.05 s poll interval): read with a timeout
# from a pipe nobody writes to.
_tbr_sleep_fd=""
tbr_sleep() {
	[[ -n $_tbr_sleep_fd ]] || exec {_tbr_sleep_fd}<> <(:)
	read -rt "$1" -u "$_tbr_sleep_fd" _ || true
}

# wait_for CMD TIMEOUT_SECS — poll CMD (a string) every 0.1 s until it succeeds.
wait_for() {
	local cmd=$1 deadline=$((SECONDS + $2))
	until eval "$cmd" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			echo "wait_for: '$cmd' still failing after $2 s" >&2
			return 1
		fi
		tbr_sleep 0.1
	done
}

# finishes_within SECS CMD... — run CMD in the background; fail the test
# unless it ends, successfully, within SECS (for a command that might wait
# for ever: only a deadline tells).
finishes_within() {
	local secs=$1 pid
	shift
	"$@" &
	pid=$!
	wait_for "pid_exited $pid" "$secs" || fail "'$*' still waiting $secs s later"
	wait "$pid" || fail "'$*' failed"
}

# holder_start NAME DEV SECS — run tests/progs/hold_device on DEV (through
# the provider RDMAV_DRIVERS names), its output in $TBRDMA_OUT/NAME.out;
# fail unless it holds the device within SECS.  Sets HOLDER to its pid.
holder_start() {
	"$TBRDMA_ROOT/tests/progs/hold_device" "$2" >"$TBRDMA_OUT/$1.out" 2>&1 &
	HOLDER=$!
	defer "kill -KILL $HOLDER 2>/dev/null || true"
	wait_for "grep -q ready '$TBRDMA_OUT/$1.out'" "$3" ||
		fail "$1 did not open $2: $(cat "$TBRDMA_OUT/$1.out")"
}

# holder_done NAME — HOLDER's device was removed: it must exit within 20 s
# and report a clean removal (hold_device.c says what that means).
holder_done() {
	local rc=0
	wait_for "pid_exited $HOLDER" 20 || fail "$1 still running: $(cat "$TBRDMA_OUT/$1.out")"
	wait "$HOLDER" || rc=$?
	sed 's/^/   /' "$TBRDMA_OUT/$1.out"
	((rc == 0)) || fail "$1 did not see a clean removal (exit $rc)"
}

# expect_output CMD PATTERN — run CMD (a string), show its output, fail the
# test unless the output matches the extended regex PATTERN.
expect_output() {
	local out rc=0
	out=$(eval "$1" 2>&1) || rc=$?
	printf '%s\n' "$out"
	[[ $rc -eq 0 ]] || fail "'$1' exited with $rc"
	grep -qE -- "$2" <<<"$out" || fail "output of '$1' does not match /$2/"
}

require_cmd() { local c; for c; do command -v "$c" >/dev/null || skip "$c not installed"; done; }
