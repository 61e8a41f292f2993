# lib-bench.sh: running perftest pairs and reading their results, for the
# benchmarks in this directory (sourced after tests/selftests/lib.sh and
# lib-verbs.sh, whose run_pair starts, waits for and checks each pair).
# shellcheck shell=bash

BENCH_REPS=${BENCH_REPS:-3}

# A fresh port for every pair.  Kept in a file: callers run us in
# subshells ($(...), pipelines), where a shell variable would not advance.
bench_next_port() {
	local f=$TBRDMA_OUT/bench.port port
	port=$(($(cat "$f" 2>/dev/null || echo 20000) + 1))
	echo "$port" >"$f"
	echo "$port"
}

# perftest fits its cycle counter's rate against gettimeofday() before it
# reports.  When host noise spoils the fit it says so and, unless a later
# fit succeeds, reports every latency as "inf" (exiting 0): such a run says
# nothing about the driver.  A run that warned but then reported numbers is
# kept.  bench_clock_failed NAME RESULT_LINE
bench_clock_failed() {
	[[ $2 == *inf* || $2 == *nan* ]] &&
		grep -qsF 'Correlation coefficient r^2' "$TBRDMA_OUT/$1.client.log"
}

# bench_run PAIR ARGS... -> the client's result line.  PAIR ARGS... runs
# one perftest pair on a fresh port and prints its name; a run whose clock
# fit failed is run again, at most twice (then its "inf" is the result,
# which meets no target).
bench_run() {
	local name line tries=0

	while name=$("$@"); do
		line=$(grep -A1 '#bytes' "$TBRDMA_OUT/$name.client.log" | tail -n 1)
		if ! bench_clock_failed "$name" "$line" || ((++tries > 2)); then
			echo "$line"
			return 0
		fi
		echo "--- $name: perftest's clock fit failed (a busy host), again" >&2
	done
	return 1
}

# bench_loopback_pair DEV PROG ARGS... -> runs one pair, prints its name
bench_loopback_pair() {
	local dev=$1 prog=$2 name PORT
	shift 2
	PORT=$(bench_next_port)
	name=bench.$PORT
	# run_pair reports on stdout; only the name goes there here.
	run_pair "$name" 300 "$prog -d $dev -x 1 -p $PORT $*" \
		"$prog -d $dev -x 1 -p $PORT $* 127.0.0.1" >&2 || return 1
	echo "$name"
}

# bench_perftest DEV PROG ARGS... -> prints the client's result line
bench_perftest() { bench_run bench_loopback_pair "$@"; }

# mib_to_mb VALUE — perftest's "MB/sec" counts 2^20 bytes (its format
# factor is 0x100000); kcopy, qperf and iperf3 count 10^6.  Compare them
# only after this (a plain ratio understated perftest's figure by 4.9 %).
mib_to_mb() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9.]+$/) printf "%.2f", v * 1.048576; else print v }'; }

# The median of the numbers on stdin.
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# bench_metric DEV COLUMN PROG ARGS... -> median over BENCH_REPS runs
bench_metric() {
	local dev=$1 col=$2 i line
	shift 2
	for ((i = 0; i < BENCH_REPS; i++)); do
		line=$(bench_perftest "$dev" "$@") || return 1
		awk -v c="$col" '{print $c}' <<<"$line"
	done | median
}

# bench_kernel_copy — measure the kernel's memcpy() BENCH_REPS times:
# tests/bench/kcopy copies 64 KiB and 1 MiB at a time, each between
# two buffers of that size (perftest writes one buffer over and over), the
# copy the loopback data path makes for an RDMA WRITE of that size, and
# prints MB/s.
bench_kernel_copy() {
	local ko=$TBRDMA_MODDIR/tests/bench/kcopy/tbrdma_kcopy.ko i

	for ((i = 0; i < BENCH_REPS; i++)); do
		insmod "$ko" 2>/dev/null || true	# refuses to stay loaded, by design
	done
}

# bench_kernel_copy_mbs BYTES — the median of bench_kernel_copy's figures
# for BYTES.
bench_kernel_copy_mbs() {
	dmesg | sed -n "s/.*tbrdma_kcopy: memcpy $1 bytes \([0-9]*\) MB\/s/\1/p" |
		tail -n "$BENCH_REPS" | median
}

# A veth pair bv0 (BENCH_A) - bv1 (BENCH_B) in the initial namespace, where
# rxe's UDP socket lives on 6.1, with policy routing that sends traffic
# between the two addresses through the pair instead of delivering it
# locally (both ends are ours).
BENCH_A=10.99.0.1
BENCH_B=10.99.0.2
bench_veth_setup() {
	local c
	ip link add bv0 type veth peer name bv1 || fail "veth pair"
	ip addr add $BENCH_A/32 dev bv0
	ip addr add $BENCH_B/32 dev bv1
	ip link set bv0 up
	ip link set bv1 up
	for c in all default bv0 bv1; do
		sysctl -qw net.ipv4.conf.$c.rp_filter=0 net.ipv4.conf.$c.accept_local=1
	done
	ip rule add pref 1 iif lo to $BENCH_B lookup 101
	ip rule add pref 1 iif lo to $BENCH_A lookup 102
	ip route add $BENCH_B dev bv0 src $BENCH_A table 101
	ip route add $BENCH_A dev bv1 src $BENCH_B table 102
	ip rule add pref 10 lookup local
	ip rule del pref 0 lookup local
}

# bench_veth_devices — tbrdma (tbv_a, tbv_b) and rxe (rxe_a, rxe_b) on both
# ends, with the provider of this tree, and their IPv4 GIDs there.
bench_veth_devices() {
	export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
	rdma link add tbv_a type tbrdma netdev bv0 || fail "tbrdma on bv0"
	rdma link add tbv_b type tbrdma netdev bv1 || fail "tbrdma on bv1"
	rdma link add rxe_a type rxe netdev bv0 || fail "rxe on bv0"
	rdma link add rxe_b type rxe netdev bv1 || fail "rxe on bv1"
	wait_for "net_gid tbv_a $BENCH_A && net_gid tbv_b $BENCH_B && net_gid rxe_a $BENCH_A && net_gid rxe_b $BENCH_B" 10 ||
		fail "GIDs missing"
}

# bench_veth_start — the modules, the pair (bench_veth_setup) and its four
# devices (bench_veth_devices), all undone when the test ends.
bench_veth_start() {
	tbr_load_core
	tbr_modprobe rdma_rxe
	[[ -d /sys/module/tbrdma ]] || tbr_insmod
	defer "bench_veth_teardown tbv_a tbv_b rxe_a rxe_b; tbr_rmmod; modprobe -r rdma_rxe"
	bench_veth_setup
	bench_veth_devices
}

# bench_veth_teardown RDMA_DEV... — delete the devices, the pair, the rules
bench_veth_teardown() {
	local d
	for d; do
		[[ -e /sys/class/infiniband/$d ]] && rdma link delete "$d"
	done
	ip link del bv0 2>/dev/null
	# The next benchmark in the same guest sets them up again.
	ip rule del pref 1 iif lo to $BENCH_B lookup 101 2>/dev/null
	ip rule del pref 1 iif lo to $BENCH_A lookup 102 2>/dev/null
	ip rule del pref 10 lookup local 2>/dev/null && ip rule add pref 0 lookup local
	return 0
}

# bench_veth_mtu MTU [DEV] — both ends to MTU; then wait for DEV's port to
# be active again (a tbrdma port goes down while its netdev changes MTU).
bench_veth_mtu() {
	ip link set bv0 mtu "$1"
	ip link set bv1 mtu "$1"
	[[ -z ${2:-} ]] ||
		wait_for "[[ \$(</sys/class/infiniband/$2/ports/1/state) == *ACTIVE ]]" 10
}
