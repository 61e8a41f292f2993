#!/bin/bash
# The communication libraries people run, on tbrdma's loopback device and on
# rdma_rxe attached to lo, in the same guest and the same run:
#   - UCX's ucx_perftest (UCX_TLS=rc_verbs,ud_verbs,self): tag_lat 8 B
#     (median latency), tag_bw and ucp_put_bw 1 MiB (bandwidth);
#   - Open MPI over UCX (--mca pml ucx, same UCX_TLS, 2 ranks):
#     tests/progs/mpi_bench's 8 B ping-pong latency, 1 MiB windowed
#     bandwidth and 16 KiB MPI_Allreduce, every message checked; and the
#     same program over Open MPI's own TCP transport on lo (ob1, btl tcp),
#     for information.
# A run that fails is reported as "failed" (UCX's UD wire-up never
# completes on rxe), never as a number. Medians of BENCH_REPS runs.
# timeout: 2400
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"
source "$(dirname "$0")/lib-bench.sh"

require_cmd ucx_perftest
require_cmd mpirun
mpi_bench=$TBR_PROGS/mpi_bench
[[ -x $mpi_bench ]] || fail "$mpi_bench not built (make test-progs; mpicc)"

tbr_load_core
defer tbr_rmmod
tbr_insmod loopback=1
modprobe rdma_rxe
rdma link add rxe0 type rxe netdev lo
defer 'rdma link delete rxe0'
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
TLS=rc_verbs,ud_verbs,self

# ucx_metric DEV COLUMN TEST SIZE ITERS -> one result; COLUMN 3 is the
# median latency (us), 7 the overall bandwidth (MB/s) of the Final: line.
ucx_metric() {
	local dev=$1 col=$2 test=$3 size=$4 iters=$5 name PORT log
	PORT=$(bench_next_port)
	name=ucx.$PORT
	local env="env UCX_TLS=$TLS UCX_NET_DEVICES=$dev:1 UCX_WARN_UNUSED_ENV_VARS=n"
	run_pair_once "$name" 120 "$env ucx_perftest -p $PORT" \
		"$env ucx_perftest 127.0.0.1 -p $PORT -t $test -s $size -n $iters -w 20" >&2 ||
		return 1
	log=$TBRDMA_OUT/$name.client.log
	awk -v c="$col" '$1 == "Final:" {print $c; found = 1} END {exit !found}' "$log"
}

# mpi_run MCA... -> mpi_bench's result line from one run
mpi_run() {
	local log=$TBRDMA_OUT/mpi.$RANDOM.log
	timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 "$@" \
		-x RDMAV_DRIVERS "$mpi_bench" --iters 200 >"$log" 2>&1 || {
		echo "--- mpirun $*: failed" >&2; tail -n 20 "$log" >&2; return 1; }
	grep '^mpi_bench:' "$log"
}

# reps FN ARGS... -> the median of BENCH_REPS results of FN, or "failed"
# (and FAILED_DEV set to the device, so its other runs are not waited for).
FAILED_DEV=
reps() {
	local i v all=()
	for ((i = 0; i < BENCH_REPS; i++)); do
		v=$("$@") || { echo failed; return 1; }
		all+=("$v")
	done
	printf '%s\n' "${all[@]}" | median
}

# mpi_medians LABEL MCA... -> sets MPI_<LABEL>_{lat,bw,ar}
mpi_medians() {
	local label=$1 i line lat=() bw=() ar=()
	shift
	for ((i = 0; i < BENCH_REPS; i++)); do
		line=$(mpi_run "$@") || {
			printf -v "MPI_${label}_lat" failed; printf -v "MPI_${label}_bw" failed
			printf -v "MPI_${label}_ar" failed; return; }
		echo "$label: $line"
		lat+=("$(sed 's/.*lat_us=\([0-9.]*\).*/\1/' <<<"$line")")
		bw+=("$(sed 's/.*bw_MBps=\([0-9.]*\).*/\1/' <<<"$line")")
		ar+=("$(sed 's/.*allreduce_us=\([0-9.]*\).*/\1/' <<<"$line")")
	done
	printf -v "MPI_${label}_lat" '%s' "$(printf '%s\n' "${lat[@]}" | median)"
	printf -v "MPI_${label}_bw" '%s' "$(printf '%s\n' "${bw[@]}" | median)"
	printf -v "MPI_${label}_ar" '%s' "$(printf '%s\n' "${ar[@]}" | median)"
}

rows=()
# row NAME OURS THEIRS [TCP] — latency rows: the ratio is rxe/ours (how many
# times faster), bandwidth rows ours/rxe; NAME says which ("(us)"/"(MB/s)").
row() {
	local name=$1 ours=$2 theirs=$3 tcp=${4:--} ratio
	ratio=$(awk -v a="$ours" -v b="$theirs" -v n="$name" 'BEGIN {
		if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || a == 0 || b == 0) { print "n/a"; exit }
		if (n ~ /\(us\)/) printf "%.2f", b / a; else printf "%.2f", a / b }')
	rows+=("$(printf '%-34s %10s %10s %8s %10s' "$name" "$ours" "$theirs" "$ratio" "$tcp")")
	printf '%s: tbrdma %s, rxe %s, tcp %s\n' "$name" "$ours" "$theirs" "$tcp"
}

# One failed UCX run on a device fails the device's other UCX and MPI
# rows at once: a UD wire-up that never completes costs minutes each.
for dev in tbrlo0 rxe0; do
	key=${dev%0}
	for m in "lat 3 tag_lat 8 5000" "tagbw 7 tag_bw 1048576 200" "putbw 7 ucp_put_bw 1048576 200"; do
		read -r field col test size iters <<<"$m"
		v=failed
		[[ $FAILED_DEV == "$dev" ]] ||
			v=$(reps ucx_metric "$dev" "$col" "$test" "$size" "$iters") || FAILED_DEV=$dev
		printf -v "UCX_${key}_$field" '%s' "$v"
	done
	if [[ $FAILED_DEV == "$dev" ]]; then
		printf -v "MPI_${key}_lat" failed; printf -v "MPI_${key}_bw" failed
		printf -v "MPI_${key}_ar" failed
	else
		mpi_medians "$key" --mca pml ucx -x UCX_TLS=$TLS -x UCX_NET_DEVICES=$dev:1
	fi
done
mpi_medians tcp --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo

# shellcheck disable=SC2154  # set by printf -v above
{
row "UCX tag_lat 8 B (us)" "$UCX_tbrlo_lat" "$UCX_rxe_lat"
row "UCX tag_bw 1 MiB (MB/s)" "$UCX_tbrlo_tagbw" "$UCX_rxe_tagbw"
row "UCX ucp_put_bw 1 MiB (MB/s)" "$UCX_tbrlo_putbw" "$UCX_rxe_putbw"
row "MPI ping-pong 8 B (us)" "$MPI_tbrlo_lat" "$MPI_rxe_lat" "$MPI_tcp_lat"
row "MPI bandwidth 1 MiB (MB/s)" "$MPI_tbrlo_bw" "$MPI_rxe_bw" "$MPI_tcp_bw"
row "MPI_Allreduce 16 KiB (us)" "$MPI_tbrlo_ar" "$MPI_rxe_ar" "$MPI_tcp_ar"
}

echo
echo "Clients on the loopback device, $(uname -r), $(nproc) vCPUs (TCG), medians of $BENCH_REPS runs"
echo "UCX_TLS=$TLS; MPI = Open MPI over UCX (pml ucx); tcp = Open MPI's ob1/btl tcp on lo"
printf '%-34s %10s %10s %8s %10s\n' metric tbrdma rxe "x rxe" "MPI tcp"
printf '%s\n' "${rows[@]}"
