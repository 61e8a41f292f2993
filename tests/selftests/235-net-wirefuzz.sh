#!/bin/bash
# Wire fuzzing: host B (namespace tbrB) sends malformed, truncated, forged
# and replayed frames (tests/progs/wirefuzz, a raw packet socket on tbv1)
# at the live device tbr0 while legitimate RC traffic runs between tbr0
# and tbr1 on other QPs. Victim QPs (RC, UC, UD pingpongs started before)
# get forged frames with their real QP numbers; QPs created afterwards are
# protected: they only see exact replays and frames that must be dropped.
# The retx/ack-flood and duplicate-request classes aim at a victim's real
# PSNs (captured): a peer that lies about PSNs, lengths and keys, floods
# ACKs, sequence and RNR NAKs, and repeats old READs and atomics.
# Run once with checksums (most frames carry a correct Internet checksum
# and reach the parser) and once with checksum=0.  In the first, the veth
# pair's checksum offload is off, so the stack sums our frames in software
# (as for a NIC that cannot) and the fuzzer checks those sums against its
# own; with offload on, frames between two veth ends are never summed.
# Afterwards the protected traffic must have completed with correct data,
# rx_bad_frames, rx_stale_frames and rx_checksum_errors must have grown,
# and the device must still work; the harness checks that the kernel log
# stayed clean.
# timeout: 900
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ethtool
fuzz=$TBR_PROGS/wirefuzz
integ=$TBR_PROGS/integrity
[[ -x $fuzz ]] || fail "$fuzz not built (make test-progs)"
[[ -x $integ ]] || fail "$integ not built (make test-progs)"
# Phase 1 sends FUZZ_ITERS frames, phase 2 half as many: >= 10^5 in all.
FUZZ_ITERS=${TBR_WIREFUZZ_ITERS:-70000}
FUZZ_SECS=${TBR_WIREFUZZ_SECS:-60}
# Spread the frames over ~15 s (phase 1; sending one costs about as much
# again as the pause) so they meet several rounds of the protected
# traffic (a round took about 4 s); unpaced, 10^5 frames take a few seconds.
# (300 us, ~40 s, made this the third-longest selftest, 92 s.)
FUZZ_PACE=${TBR_WIREFUZZ_PACE_US:-100}
FUZZ_SEED=${TBR_WIREFUZZ_SEED:-235}
# Frame classes to leave out (wirefuzz --skip), e.g. while a bug is open.
# None now: send-continuation frames, which once hit a WARN_ON_ONCE in
# tbr_sgl_copy_from_skb, are refused since rx.c checks every continuation
# frame against the message its first frame started.
FUZZ_SKIP=${TBR_WIREFUZZ_SKIP-}
failed=()
PORT=19500

# Victims: long-running pingpongs (event-driven, light on the CPU) whose
# QPs the fuzzer addresses by number. They may fail; nothing else may.
start_victims() {
	local t p
	victim_pids=()
	for t in rc uc ud; do
		PORT=$((PORT + 1)); p=$PORT
		ibv_${t}_pingpong -d tbr0 -g "$NET_GID_A" -p $p -s 256 -n 100000000 -e \
			>"$TBRDMA_OUT/victim-$t-$1.server.log" 2>&1 &
		victim_pids+=($!)
		wait_listen $p 20 $! || { echo "victim $t server did not listen"; continue; }
		# Not through net_b: $! must be the pingpong itself, to kill it.
		ip netns exec "$NET_NS" ibv_${t}_pingpong -d tbr1 -g "$NET_GID_B" -p $p -s 256 -n 100000000 -e "$NET_IP_A" \
			>"$TBRDMA_OUT/victim-$t-$1.client.log" 2>&1 &
		victim_pids+=($!)
	done
	# Connected: the RC and UC QPs show their remote QP number.
	wait_for "(( \$(rdma resource show qp link tbr0 | grep -c 'comm ibv_.._pingpong') >= 3 )) &&
		(( \$(rdma resource show qp link tbr0 | grep -c 'rqpn .*comm ibv_.._pingpong') >= 2 ))" 20 ||
		echo "warning: not every victim QP appeared"
}

stop_victims() {
	local p
	for p in "${victim_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${victim_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}

# The victims' QPs on tbr0 as LQPN:RQPN (RQPN 0 for UD), and the highest
# QP number on tbr0 now: everything created later is protected.
victim_qpns() {
	rdma resource show qp link tbr0 | awk '/comm ibv_.._pingpong/ {
		l = 0; r = 0
		for (i = 1; i < NF; i++) { if ($i == "lqpn") l = $(i + 1); if ($i == "rqpn") r = $(i + 1) }
		printf "%s%s:%s", n++ ? "," : "", l, r }'
}
max_qpn() {
	rdma resource show qp link tbr0 | grep -o 'lqpn [0-9]*' | awk '$2 > m { m = $2 } END { print m + 0 }'
}

# Protected traffic in rounds until $1 appears: ibv_rc_pingpong -c (every
# buffer checked) and the integrity test across the link (every byte and
# every atomic checked). Each round must pass.
protected_loop() {
	local stop=$1 tag=$2 round=0 rc=0 seed=1000
	while [[ ! -e $stop ]]; do
		round=$((round + 1)); PORT=$((PORT + 1))
		run_pair "prot-$tag-$round" 120 \
			"ibv_rc_pingpong -d tbr0 -g $NET_GID_A -c -p $PORT -s 16384 -n 200" \
			"ip netns exec $NET_NS ibv_rc_pingpong -d tbr1 -g $NET_GID_B -c -p $PORT -s 16384 -n 200 $NET_IP_A" ||
			{ rc=1; echo "FAIL protected rc_pingpong round $round"; }
		seed=$((seed + 1))
		timeout 200 "$integ" -d tbr0 -g "$NET_GID_A" --dev2 tbr1 --gid2 "$NET_GID_B" \
			--seed $seed --ops 300 --procs 2 --qps 2 --max-size 64K \
			--timeout 150 --stall 60 >"$TBRDMA_OUT/prot-$tag-integrity-$round.log" 2>&1 ||
			{ rc=1; echo "FAIL protected integrity round $round:"; tail -n 15 "$TBRDMA_OUT/prot-$tag-integrity-$round.log"; }
		echo "protected round $round done (rc $rc)"
	done
	echo "$round rounds" >"$stop.rounds"
	return $rc
}

# Malformed, for no QP (or another connection), damaged.
counters() {
	echo "$(net_counter tbr0 rx_bad_frames) $(net_counter tbr0 rx_stale_frames)" \
		"$(net_counter tbr0 rx_checksum_errors)"
}

# One fuzzing phase: $1 = tag, further args go to the fuzzer.
phase() {
	local tag=$1 stop=/tmp/wirefuzz-stop-$1 ppid frc=0 prc=0 bad0 st0 cs0 bad1 st1 cs1 qpns max dmac
	shift
	rm -f "$stop" "$stop.rounds"
	start_victims "$tag"
	qpns=$(victim_qpns)
	max=$(max_qpn)
	dmac=$(</sys/class/net/tbv0/address)
	echo "victim QPs on tbr0 (lqpn:rqpn): ${qpns:-none}; protected: lqpn > $max"
	read -r bad0 st0 cs0 <<<"$(counters)"

	protected_loop "$stop" "$tag" >"$TBRDMA_OUT/protected-$tag.log" 2>&1 &
	ppid=$!
	sleep 2	# traffic flowing before the capture starts
	net_b timeout $((FUZZ_SECS + 60)) "$fuzz" --ifname tbv1 --dst-mac "$dmac" \
		--seed "$FUZZ_SEED" --iters "$FUZZ_ITERS" --secs "$FUZZ_SECS" \
		--qpns "$qpns" --qpn-max "$max" --capture-ms 3000 --pace-us "$FUZZ_PACE" \
		${FUZZ_SKIP:+--skip "$FUZZ_SKIP"} "$@" \
		>"$TBRDMA_OUT/wirefuzz-$tag.log" 2>&1 || frc=$?
	sed 's/^/   /' "$TBRDMA_OUT/wirefuzz-$tag.log"
	((frc == 0)) || failed+=("$tag: wirefuzz exit $frc")
	touch "$stop"
	wait $ppid || prc=$?
	sed 's/^/   /' "$TBRDMA_OUT/protected-$tag.log" | grep -v '^   ok:' || true
	echo "   protected traffic: $(<"$stop.rounds"), exit $prc"
	((prc == 0)) || failed+=("$tag: protected traffic failed")
	stop_victims
	read -r bad1 st1 cs1 <<<"$(counters)"
	echo "   tbr0 rx_bad_frames +$((bad1 - bad0)), rx_stale_frames +$((st1 - st0))," \
		"rx_checksum_errors +$((cs1 - cs0))"
	((bad1 - bad0 >= 1000)) || failed+=("$tag: rx_bad_frames grew by only $((bad1 - bad0))")
	# Forged frames for QP numbers nobody owns, or from the wrong QP.
	((st1 > st0)) || failed+=("$tag: no stale frames counted")
	((cs1 > cs0)) || failed+=("$tag: no checksum drops counted")
	grep -q '^sent [0-9]* frames' "$TBRDMA_OUT/wirefuzz-$tag.log" ||
		failed+=("$tag: the fuzzer did not finish")
	# The retransmission and ACK paths were reached: ACK and NAK floods
	# at the RC victim's real PSNs, duplicates of what it executed.
	grep -qE "^aimed at a victim's real PSNs: [1-9][0-9]* retx/ack-flood bursts, [1-9]" \
		"$TBRDMA_OUT/wirefuzz-$tag.log" ||
		failed+=("$tag: no ACK/NAK flood or duplicate reached a victim's window")

	# The device still works: a fresh pair, every buffer checked.
	PORT=$((PORT + 1))
	run_pair "after-$tag" 120 "ibv_rc_pingpong -d tbr0 -g $NET_GID_A -c -p $PORT -s 65536 -n 50" \
		"ip netns exec $NET_NS ibv_rc_pingpong -d tbr1 -g $NET_GID_B -c -p $PORT -s 65536 -n 50 $NET_IP_A" ||
		failed+=("$tag: rc_pingpong after the fuzzing")
	echo "counters tbr0: $(rdma statistic show link tbr0/1)"
}

echo "== phase 1: checksums on (the default on veth), summed by the stack: valid frames carry a correct one"
net_two_hosts 9000
ethtool -K tbv0 tx off >/dev/null || fail "ethtool -K tbv0 tx off"
net_b ethtool -K tbv1 tx off >/dev/null || fail "ethtool -K tbv1 tx off"
phase csum
# The frames the device sent carried the sums the fuzzer computes too.
reproduced=$(sed -n 's/.*checksums of header-only frames reproduced: \([0-9]*\),.*/\1/p' \
	"$TBRDMA_OUT/wirefuzz-csum.log")
((${reproduced:-0} > 0)) || failed+=("csum: no captured frame's checksum reproduced")
net_teardown || failed+=("teardown after phase 1")

echo "== phase 2: checksum=0: frames without a checksum reach the parser too"
NET_MODPARAMS=checksum=0 net_two_hosts 9000
FUZZ_SEED=$((FUZZ_SEED + 1)) FUZZ_ITERS=$((FUZZ_ITERS / 2)) FUZZ_SECS=$((FUZZ_SECS / 2 + 1))
phase nocsum --no-csum-ok

((${#failed[@]} == 0)) || fail "failed: $(printf '[%s] ' "${failed[@]}")"
echo "no crash, protected QPs unaffected, drops counted"
