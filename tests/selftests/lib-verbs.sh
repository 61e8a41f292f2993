# lib-verbs.sh — the device the verbs data-path selftests (1xx) run on.
# Source it after lib.sh:
#     source "$(dirname "$0")/lib.sh"
#     source "$(dirname "$0")/lib-verbs.sh"
#     verbs_setup          # loads the device, defers its removal
#
# TBR_TEST_DEV names the device:
#   tbrlo0 (default)  tbrdma in loopback mode (tbr_insmod loopback=1, our
#                     provider through RDMAV_DRIVERS)
#   anything else     rdma_rxe (soft-RoCE) on lo under that name, e.g. r0:
#                     the same tests on Linux's software device, which is how
#                     they were proven before tbrdma had a data path
# Both put the IPv4-mapped GID of 127.0.0.1 at index TBR_TEST_GID (1).
#
# Settings from tests/selftests/.test-env, if any, came in with lib.sh.
# shellcheck shell=bash

TBR_TEST_DEV=${TBR_TEST_DEV:-tbrlo0}
TBR_TEST_GID=${TBR_TEST_GID:-1}
TBR_PROGS=$TBRDMA_ROOT/tests/progs
export TBR_TEST_DEV TBR_TEST_GID TBR_PROGS

verbs_is_rxe() { [[ $TBR_TEST_DEV != tbrlo0 ]]; }

# verbs_setup — create the device, wait until its port is ACTIVE with the
# loopback GID in place. Its removal is deferred (verbs_teardown).
verbs_setup() {
	local gid=/sys/class/infiniband/$TBR_TEST_DEV/ports/1/gids/$TBR_TEST_GID
	if verbs_is_rxe; then
		echo "device: $TBR_TEST_DEV = rdma_rxe on lo (TBR_TEST_DEV=$TBR_TEST_DEV)"
		require_cmd rdma
		tbr_load_core
		defer verbs_teardown
		rdma link add "$TBR_TEST_DEV" type rxe netdev lo || fail "rdma link add $TBR_TEST_DEV type rxe"
	else
		echo "device: tbrlo0 = tbrdma loopback=1"
		tbr_load_core
		defer verbs_teardown
		tbr_insmod loopback=1
		export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
	fi
	wait_for "[[ \$(<$gid) == 0000:0000:0000:0000:0000:ffff:7f00:0001 ]]" 10 ||
		fail "$TBR_TEST_DEV: GID $TBR_TEST_GID is not ::ffff:127.0.0.1"
	wait_for "[[ \$(</sys/class/infiniband/$TBR_TEST_DEV/ports/1/state) == *ACTIVE ]]" 10 ||
		fail "$TBR_TEST_DEV: port not ACTIVE"
}

# verbs_teardown — remove the device and unload its module; fails when the
# module is still in use (a leaked reference). Safe to call twice.
verbs_teardown() {
	if verbs_is_rxe; then
		if [[ -e /sys/class/infiniband/$TBR_TEST_DEV ]]; then
			rdma link delete "$TBR_TEST_DEV" || return 1
		fi
		if [[ -d /sys/module/rdma_rxe ]]; then
			modprobe -r rdma_rxe || return 1
		fi
	else
		tbr_rmmod
	fi
}

# verbs_resources — the device's object counts ("pd 0 cq 0 qp 1 ..."), to
# compare before and after a test: what a process held must be gone.
verbs_resources() {
	rdma resource show | sed -n "s/^[0-9]*: $TBR_TEST_DEV: //p"
}

# wait_listen PORT SECS [PID] — until something listens on TCP PORT; gives
# up early when process PID is gone. Bash builtins only: polls fast, costs
# no exec.
wait_listen() {
	local hex deadline=$((SECONDS + $2)) pid=${3:-} f l st
	printf -v hex ':%04X' "$1"
	while ((SECONDS < deadline)); do
		for f in /proc/net/tcp /proc/net/tcp6; do
			[[ -r $f ]] || continue
			while read -r _ l _ st _; do
				[[ $l == *"$hex" && $st == 0A ]] && return 0
			done <"$f"
		done
		[[ -z $pid ]] || ! pid_exited "$pid" || return 1
		tbr_sleep 0.05
	done
	return 1
}

# run_pair NAME SECS 'SERVER CMD' 'CLIENT CMD' — run a server in the
# background and its client against it, both under `timeout SECS`; both must
# exit 0. The server must listen on $PORT (set by the caller). Output goes
# to $TBRDMA_OUT/NAME.{server,client}.log and is shown when the run fails.
# A pair that failed only because perftest could not calibrate its clock
# runs again (perftest_retry).
run_pair() { perftest_retry run_pair_once "$@"; }

# perftest_retry FN NAME ARGS... — FN NAME ARGS..., run again (at most
# twice) when it failed and NAME's logs say perftest could not calibrate
# its clock.
perftest_retry() {
	local fn=$1 name=$2 tries=0
	shift
	while ! "$fn" "$@"; do
		perftest_clock_failed "$name" && ((++tries <= 2)) || return 1
		echo "--- $name: perftest could not calibrate its clock (a busy host), again"
	done
}

# perftest times with the CPU's cycle counter, whose rate it first fits
# against gettimeofday(); when a busy host stalls the guest's vCPUs the fit
# is poor and perftest exits 1 after the traffic, printing this (both
# ends check, either may fail).  Nothing about the device is wrong then.
perftest_clock_failed() {
	grep -qs "Can't produce a report" "$TBRDMA_OUT/$1.server.log" "$TBRDMA_OUT/$1.client.log"
}

run_pair_once() {
	local name=$1 secs=$2 srv=$3 cli=$4 spid rc=0 src=0 t0=$SECONDS
	local slog=$TBRDMA_OUT/$name.server.log clog=$TBRDMA_OUT/$name.client.log
	# shellcheck disable=SC2086  # the commands are word lists on purpose
	timeout "$secs" $srv >"$slog" 2>&1 &
	spid=$!
	if ! wait_listen "$PORT" "$secs" "$spid"; then
		kill "$spid" 2>/dev/null || true
		wait "$spid" || src=$?
		echo "--- $name: server (exit $src) never listened on $PORT: $srv"
		cat "$slog"
		return 1
	fi
	# shellcheck disable=SC2086
	timeout "$secs" $cli >"$clog" 2>&1 || rc=$?
	wait "$spid" || src=$?
	if ((rc || src)); then
		echo "--- $name: client exit $rc, server exit $src (124 = timeout ${secs}s)"
		echo "--- server: $srv"; cat "$slog"
		echo "--- client: $cli"; cat "$clog"
		return 1
	fi
	echo "ok: $name ($((SECONDS - t0)) s)"
}
