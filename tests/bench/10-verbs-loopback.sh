#!/bin/bash
# Benchmark of the verbs data path in loopback mode: perftest on tbrdma's
# loopback device and on rdma_rxe attached to lo, in the same guest and the
# same run, plus the guest's kernel copy bandwidth at the same sizes as the
# physical limit (the loopback data path is one memcpy() per WRITE).
# Prints a table of medians, ratios and whether each target is met.
# Timing in a TCG guest is only meaningful when nothing else loads the
# host: run it alone.
# timeout: 3000
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"
source "$(dirname "$0")/lib-bench.sh"

tbr_load_core
defer tbr_rmmod
tbr_insmod loopback=1
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev lo
defer 'rdma link delete rxe0'
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma

bench_kernel_copy
rows=()
# row NAME COLUMN TARGET PROG ARGS...   TARGET: "<=0.5" or ">=4"
row() {
	local name=$1 col=$2 target=$3 ours theirs ratio met
	shift 3
	# A run that failed is "failed", never a number, and never meets a target.
	ours=$(bench_metric tbrlo0 "$col" "$@") || ours=failed
	theirs=$(bench_metric rxe0 "$col" "$@") || theirs=failed
	ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN {
		if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else print "n/a" }')
	met=$(awk -v r="$ratio" -v t="$target" 'BEGIN {
		op = substr(t, 1, 2); v = substr(t, 3) + 0
		if (r !~ /^[0-9.]+$/) print "no"; else if (op == "<=") print (r <= v ? "yes" : "no"); else print (r >= v ? "yes" : "no") }')
	rows+=("$(printf '%-28s %10s %10s %7s %8s %5s' "$name" "$ours" "$theirs" "$ratio" "$target" "$met")")
	printf '%s: tbrdma %s, rxe %s\n' "$name" "$ours" "$theirs"
}

row "ib_write_bw 64 KiB (MiB/s)" 4 ">=4" ib_write_bw -s 65536 -n 2000
row "ib_write_bw 1 MiB (MiB/s)" 4 ">=4" ib_write_bw -s 1048576 -n 200
row "ib_write_lat 2 B (us)" 5 "<=0.5" ib_write_lat -s 2 -n 2000
row "ib_send_lat 2 B (us)" 5 "<=0.5" ib_send_lat -s 2 -n 2000
row "ib_read_lat 2 B (us)" 5 "<=0.5" ib_read_lat -s 2 -n 2000

echo
echo "Loopback verbs, $(uname -r), $(nproc) vCPUs (TCG), medians of $BENCH_REPS runs"
printf '%-28s %10s %10s %7s %8s %5s\n' metric tbrdma rxe ratio target met
printf '%s\n' "${rows[@]}"
echo "guest kernel memcpy() at the WRITE's size, between two buffers of that size (tests/bench/kcopy), both in MB/s (10^6 bytes):"
for size in "64 KiB:65536" "1 MiB:1048576"; do
	label=${size%:*}
	copy=$(bench_kernel_copy_mbs "${size#*:}")
	bw=$(mib_to_mb "$(printf '%s\n' "${rows[@]}" | grep "ib_write_bw $label" | awk '{print $5}')")
	awk -v b="$bw" -v c="$copy" -v s="$label" 'BEGIN {
		if (b !~ /^[0-9.]+$/ || c !~ /^[0-9]+$/ || c == 0) {
			printf "ib_write_bw %s: not measured (target >= 95%% of memcpy): no\n", s; exit }
		printf "ib_write_bw %s: %.2f MB/s, memcpy %d MB/s: %.0f%% (target >= 95%%): %s\n",
		       s, b, c, 100 * b / c, (b / c >= 0.95 ? "yes" : "no") }'
done
