# lib-bench.sh: running perftest pairs and reading their results, for the
# benchmarks in this directory (sourced after tests/selftests/lib.sh).
# shellcheck shell=bash

BENCH_REPS=${BENCH_REPS:-3}
bench_port=20000

# Wait until something listens on TCP port $1 (perftest's handshake socket).
bench_wait_port() {
	local i
	for ((i = 0; i < 300; i++)); do
		ss -ltn 2>/dev/null | grep -q ":$1 " && return 0
		sleep 0.1
	done
	return 1
}

# bench_perftest DEV PROG ARGS... -> prints the client's result line
bench_perftest() {
	local dev=$1 prog=$2 srv cli rc
	shift 2
	bench_port=$((bench_port + 1))
	srv=$TBRDMA_OUT/srv.$bench_port.log
	cli=$TBRDMA_OUT/cli.$bench_port.log
	timeout 300 "$prog" -d "$dev" -x 1 -p "$bench_port" "$@" >"$srv" 2>&1 &
	bench_wait_port "$bench_port" || { kill %% 2>/dev/null; return 1; }
	rc=0
	timeout 300 "$prog" -d "$dev" -x 1 -p "$bench_port" "$@" 127.0.0.1 >"$cli" 2>&1 || rc=$?
	wait %% 2>/dev/null || rc=$((rc ? rc : 1))
	[ "$rc" -eq 0 ] || { echo "bench: $prog $* on $dev failed:" >&2; tail -n 5 "$cli" >&2; return 1; }
	grep -A1 '#bytes' "$cli" | tail -n 1
}

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

# MB/s of the kernel's memcpy() on page-sized copies, the copy the loopback
# data path makes: tests/bench/kcopy measures it in the kernel and prints it.
bench_kernel_copy_mbs() {
	local ko=$TBRDMA_ROOT/tests/bench/kcopy/tbrdma_kcopy.ko

	insmod "$ko" 2>/dev/null	# refuses to stay loaded, by design
	dmesg | sed -n 's/.*tbrdma_kcopy: memcpy \([0-9]*\) MB\/s/\1/p' | tail -n 1
}

# The same copies through the kernel's direct map (huge pages), for
# information: an emulated MMU makes them erratic.
bench_direct_map_copy_mbs() {
	dmesg | sed -n 's/.*tbrdma_kcopy: direct-map memcpy \([0-9]*\) MB\/s/\1/p' | tail -n 1
}
