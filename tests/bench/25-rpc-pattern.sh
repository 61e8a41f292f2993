#!/bin/bash
# ggml's RPC RDMA transport pattern (issue 35) across the veth pair of
# 20-verbs-veth.sh (both ends in the initial namespace, policy routing):
# tests/progs/rpc_pattern moves 32 MiB messages up (client -> server) and
# down, as SENDs of 256 KiB through bounce buffers (24 receives pre-posted,
# 4 sends in flight, path MTU from the port, busy polling) over tbrdma and
# over rdma_rxe, and the same bytes with the same chunks and copies over
# TCP. ggml itself keeps one send in flight: that row is measured too
# (-w 1). The transports take turns in every round. Each figure is the
# median of BENCH_REPS runs, each run's value the median of its 3 rounds;
# every byte is checked. MTUs as in 20-verbs-veth.sh: tbrdma and TCP 65000,
# rxe 9000 (its frames carry at most 4 KiB).
# With GGML_RPC_CLIENT/GGML_RPC_SERVER set (tests/bench/ggml-rpc/build.sh
# builds them into /var/tmp), the same with unmodified ggml: its own
# client and server, RDMA found by its GID match, 32 MiB tensors.
# Targets (issue 35): tbrdma >= 1.5x TCP and >= 2x rxe, up and down. At the
# end: both tbrdma devices' RNR and retransmission counters for the run.
# timeout: 2400
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-net.sh"
source "$(dirname "$0")/lib-bench.sh"

RP=$TBRDMA_ROOT/tests/progs/rpc_pattern
[[ -x $RP ]] || skip "tests/progs/rpc_pattern not built"
A=$BENCH_A
MIB=${BENCH_RPC_MIB:-32}
GGML_CLIENT=${GGML_RPC_CLIENT:-/var/tmp/ggml_rpc_client}
GGML_SERVER=${GGML_RPC_SERVER:-/var/tmp/ggml_rpc_server}

bench_veth_start

# mtu_for TRANSPORT — each transport at the MTU it uses best
mtu_for() { if [[ $1 == rxe* ]]; then bench_veth_mtu 9000 rxe_b; else bench_veth_mtu 65000 tbv_b; fi; }

# rp_run KIND ARGS... -> "UP DOWN" (MB/s, the run's medians), or fails.
# KIND: tbr, rxe (devices chosen with -d, as GGML_RDMA_DEV does), tcp.
rp_run() {
	local kind=$1 name PORT sargs="" cargs
	shift
	PORT=$(bench_next_port)
	name=rp.$kind.$PORT
	case $kind in
	tbr*) sargs="-d tbv_a"; cargs="-t rdma -d tbv_b" ;;
	rxe*) sargs="-d rxe_a"; cargs="-t rdma -d rxe_b" ;;
	tcp) cargs="-t tcp" ;;
	esac
	run_pair "$name" 600 "$RP -l -p $PORT -B $A $sargs" \
		"$RP -c $A -p $PORT $cargs -s $MIB -n 3 $*" >&2 || return 1
	grep -q '^result .* data ok$' "$TBRDMA_OUT/$name.client.log" || return 1
	if [[ $kind != tcp ]]; then
		local d cdev=${cargs##*-d }
		for d in "${sargs#-d }" "$cdev"; do
			echo "$name: $d: $(rdma statistic show link "$d/1" | grep -o 'retransmits [0-9]*\|out_of_sequence [0-9]*\|rnr_nak_sent [0-9]*\|rnr_nak_received [0-9]*\|ack_timeouts [0-9]*\|early_probes [0-9]*' | tr '\n' ' ')($([[ $d == "$cdev" ]] && echo client || echo server) device, cumulative)" >&2
		done
	fi
	sed -n 's/^result [a-z]* upload \([0-9.]*\) download \([0-9.]*\) MB.*/\1 \2/p' \
		"$TBRDMA_OUT/$name.client.log"
}

# ggml_run KIND -> "UP DOWN" from unmodified ggml (rdma: KIND's devices)
ggml_run() {
	local kind=$1 PORT spid rc=0 log sdev=none cdev=none
	PORT=$(bench_next_port)
	log=$TBRDMA_OUT/ggml.$kind.$PORT
	case $kind in
	tbr) sdev=tbv_a; cdev=tbv_b ;;
	rxe) sdev=rxe_a; cdev=rxe_b ;;
	esac
	# GGML_RDMA_DEV names the device; a name no device has leaves TCP.
	GGML_RDMA_DEV=$sdev timeout 600 "$GGML_SERVER" "$A:$PORT" 1 >"$log.server" 2>&1 &
	spid=$!
	wait_listen "$PORT" 60 "$spid" || { kill "$spid"; wait "$spid" || true; return 1; }
	GGML_RDMA_DEV=$cdev timeout 600 "$GGML_CLIENT" "$A:$PORT" "$MIB" 3 >"$log.client" 2>&1 || rc=$?
	kill "$spid" 2>/dev/null || true
	wait "$spid" 2>/dev/null || true
	if ((rc)) || ! grep -q 'data ok matmul ok' "$log.client"; then
		echo "--- ggml $kind failed (exit $rc):" >&2
		cat "$log.client" "$log.server" >&2
		return 1
	fi
	if [[ $kind != tcp ]] && ! grep -q 'RDMA activated' "$log.client"; then
		echo "--- ggml $kind: RDMA not activated" >&2
		cat "$log.client" "$log.server" >&2
		return 1
	fi
	if [[ $kind == tcp ]] && grep -q 'RDMA activated' "$log.client"; then
		echo "--- ggml tcp: RDMA activated" >&2
		return 1
	fi
	grep -h 'RDMA activated\|RDMA probed' "$log.client" "$log.server" >&2 || true
	sed -n 's/^ggml-rpc .* upload \([0-9.]*\) MB\/s download \([0-9.]*\) MB.*/\1 \2/p' "$log.client"
}

# BENCH_HOGS=N (e.g. in tests/selftests/.test-env): N busy loops compete
# for the guest's 2 vCPUs for the whole run, so a receiver gets
# descheduled as on a loaded host (the RNR storms of benchmarks.md).
hogs=()
for ((i = 0; i < ${BENCH_HOGS:-0}; i++)); do
	(while :; do :; done) &
	hogs+=($!)
done
if ((${#hogs[@]})); then
	defer "kill ${hogs[*]}"
	echo "BENCH_HOGS=${#hogs[@]}: busy loops in the guest: ${hogs[*]}"
fi

# Warm-up: the guest translates code on first use.
mtu_for tbr
rp_run tbr -w 4 >/dev/null || true
mtu_for rxe
rp_run rxe -w 4 -s 4 >/dev/null || true

kinds=(tbr tcp rxe tbr1 tcp1)
ggml=0
[[ -x $GGML_CLIENT && -x $GGML_SERVER ]] && ggml=1
for ((rep = 0; rep < BENCH_REPS; rep++)); do
	order=("${kinds[@]}")
	((rep % 2)) && order=(rxe tcp tbr tcp1 tbr1)
	for k in "${order[@]}"; do
		mtu_for "$k"
		case $k in
		tbr|rxe|tcp) w=4 ;;
		*) w=1 ;;
		esac
		v=$(rp_run "${k%1}" -w "$w") || v="failed failed"
		echo "round $rep $k: $v"
		echo "$v" >>"$TBRDMA_OUT/rp.$k"
	done
	if ((ggml)); then
		for k in tbr tcp rxe; do
			mtu_for "$k"
			v=$(ggml_run "$k") || v="failed failed"
			echo "round $rep ggml-$k: $v"
			echo "$v" >>"$TBRDMA_OUT/rp.ggml-$k"
		done
	fi
done

col_median() { # KIND COLUMN -> median, or failed
	if grep -q failed "$TBRDMA_OUT/rp.$1"; then echo failed; else awk -v c="$2" '{print $c}' "$TBRDMA_OUT/rp.$1" | median; fi
}
ratio() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {
	if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b == 0) { print "n/a no"; exit }
	printf "%.2f %s\n", a / b, ((a / b >= t) ? "yes" : "no") }'; }

echo
echo "veth pair, $(uname -r), $(nproc) vCPUs (TCG), $MIB MiB messages, MB/s = 10^6 B/s, medians of $BENCH_REPS runs (each the median of 3 rounds)"
printf '%-18s %5s %9s %9s %9s %7s %5s %7s %5s\n' pattern dir tbrdma TCP rxe "x TCP" ">=1.5" "x rxe" ">=2"
for set in "4 sends:tbr:tcp:rxe" "ggml's 1 send:tbr1:tcp1:-" "unmodified ggml:ggml-tbr:ggml-tcp:ggml-rxe"; do
	IFS=: read -r label kt kc kr <<<"$set"
	[[ -f $TBRDMA_OUT/rp.$kt ]] || continue
	for dir in 1 2; do
		t=$(col_median "$kt" $dir)
		c=$(col_median "$kc" $dir)
		r=-
		[[ $kr == - ]] || r=$(col_median "$kr" $dir)
		read -r rc mc <<<"$(ratio "$t" "$c" 1.5)"
		read -r rr mr <<<"$(ratio "$t" "$r" 2)"
		printf '%-18s %5s %9s %9s %9s %7s %5s %7s %5s\n' "$label" "$([[ $dir == 1 ]] && echo up || echo down)" \
			"$t" "$c" "$r" "$rc" "$mc" "$rr" "$mr"
	done
done
# The whole run's transport counters (warm-up, both patterns and ggml):
# RNR NAKs and the frames sent again after them show receivers that fell
# behind (Documentation/benchmarks.md).
for d in tbv_a tbv_b; do
	echo "counters $d: $(rdma statistic show link "$d/1" | grep -o 'retransmits [0-9]*\|out_of_sequence [0-9]*\|rnr_nak_sent [0-9]*\|rnr_nak_received [0-9]*\|ack_timeouts [0-9]*\|early_probes [0-9]*' | tr '\n' ' ')"
done
