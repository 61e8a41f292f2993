#!/bin/bash
# tools/tprun across kernels (issue 43): one rank per guest, each guest its
# own kernel, a cable between every pair of guests and a tbrdma device on
# each cable end (two guests: one cable; three: a triangle, each guest with
# two cables and two devices). Every rank gets --peers listing each guest's
# address on every one of its cables ("a|b:port") and no -d: it must pick,
# for each peer, the device on the cable to that peer.
#   1. the tokens and logits of --local N (on node 0), the JSON's links
#      naming the cable's device for every pair, every device having sent
#      bytes (its tx_bytes counter and the link's bytes_sent);
#   2. the last guest's rank stopped mid-generation (SIGSTOP: the process
#      alive, nothing closed, its kernel still acknowledging): every other
#      rank exits non-zero within 5 s naming it;
#   3. the cable between the last guest and node 0 taken down at the last
#      guest's end mid-generation: every rank exits non-zero within 5 s,
#      the cable's two ends naming each other; then the cable comes back.
# The 5 s of the other nodes count from when they learn of the action
# through the shared directory (polled every 0.1 s), the acting node's
# from the action itself.
# Two guests: make check's cluster stage; three: tests/vm/run-cluster.sh
# --nodes 3 40-tprun.sh (make check-triangle).
# timeout: 600
source "$(dirname "$0")/lib-cluster.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-tprun.sh"

((NODES >= 2)) || skip "needs two nodes"
for ((n = 0; n < NODES; n++)); do
	((n == NODE)) || cable_to "$n" >/dev/null ||
		skip "no cable between node $NODE and node $n (this test wants one between every pair)"
done
cluster_tbrdma
last=$((NODES - 1))
gen=(--synthetic "${TP_SHAPE[@]}" --seed 21 --tokens 8 --prompt-len 8 --json --logits -v)
long=(--synthetic "${TP_SHAPE[@]}" --seed 5 --tokens 5000 --slow-ms 20 --json -v)
port=18700
failed=()

ms() { local t; read -r t _ </proc/uptime; echo $((10#${t/./} * 10)); }
# signal SIG — SIG to this node's rank: tprun and the timeout around it
signal() { kill "-$1" $(pgrep -P "$RANK_PID") "$RANK_PID" 2>/dev/null || true; }

# peers PORT — the --peers list: node n's address on each of its cables
peers() {
	local n k list="" addrs
	for ((n = 0; n < NODES; n++)); do
		addrs=""
		for k in "${!CABLE_LIST[@]}"; do
			[[ " ${CABLE_LIST[k]/-/ } " == *" $n "* ]] && addrs+=${addrs:+|}$(cable_ip "$k" "$n")
		done
		list+=${list:+,}$addrs:$1
	done
	echo "$list"
}

# tx — "DEV BYTES" for each device of this node
tx() {
	local k
	for k in "${!CABLE_LIST[@]}"; do
		cable_mine "$k" && echo "tbr$k $(net_counter "tbr$k" tx_bytes)"
	done
}

# counters — this node's devices' transport counters, one line
counters() {
	local k
	for k in "${!CABLE_LIST[@]}"; do
		cable_mine "$k" || continue
		printf 'tbr%s: %s; ' "$k" "$(net_counters "tbr$k" |
			grep -E '^(retransmits|ack_timeouts|early_probes|rx_stale_frames|out_of_sequence) ' | tr '\n' ' ')"
	done
	echo
}
# rank NAME ARGS... — this node's rank in the background (RANK_PID), all
# nodes starting together; stdout to $TBRDMA_OUT/NAME.json, stderr NAME.err
rank() {
	local name=$1
	shift
	port=$((port + 1))
	cluster_sync "$name-start" 120
	timeout 200 "$TPRUN" --rank "$NODE" --peers "$(peers $port)" "$@" \
		>"$TBRDMA_OUT/$name.json" 2>"$TBRDMA_OUT/$name.err" &
	RANK_PID=$!
}

# ---- 1. the tokens of --local N, a device per peer, bytes on every cable
if ((NODE == 0)); then
	tp_run local --local "$NODES" --transport tcp "${gen[@]}" || fail "tprun --local $NODES"
fi
declare -A before
while read -r dev b; do before[$dev]=$b; done < <(tx)
rank run "${gen[@]}"
echo "rank $NODE: --peers $(peers $port)"
rc=0
wait "$RANK_PID" || rc=$?
grep -h "rank [0-9]* (.*): \(tbr\|over IP\)" "$TBRDMA_OUT/run.err" | sed 's/^/   /' || true
if ((rc)); then
	echo "FAIL run: rank $NODE exited $rc"
	tail -n 5 "$TBRDMA_OUT/run.err"
	failed+=(run)
fi
while read -r dev b; do
	echo "   $dev sent $((b - ${before[$dev]:-0})) bytes"
	((b > ${before[$dev]:-0})) || { echo "FAIL run: $dev sent nothing"; failed+=("$dev-bytes"); }
done < <(tx)
echo "   node $NODE counters: $(counters)"
if ((NODE == 0 && rc == 0)); then
	tp_compare "run" "$TBRDMA_OUT/local.json" "$TBRDMA_OUT/run.json" || failed+=(tokens)
	# every pair: the device of the cable between them, and bytes sent
	for ((r = 0; r < NODES; r++)); do
		for ((p = 0; p < NODES; p++)); do
			((r == p)) && continue
			c=none
			for k in "${!CABLE_LIST[@]}"; do
				[[ ${CABLE_LIST[k]} == "$((r < p ? r : p))-$((r < p ? p : r))" ]] && c=$k
			done
			link=$(grep -oE "\{\"rank\": $r, \"peer\": $p, \"device\": [^}]*" "$TBRDMA_OUT/run.json")
			echo "   link $r->$p: ${link#*\"device\": }"
			[[ $link == *"\"device\": \"tbr$c\""* ]] ||
				{ echo "FAIL run: rank $r reaches rank $p not over tbr$c"; failed+=("link-$r-$p"); }
			[[ $link =~ \"bytes_sent\":\ [1-9] ]] ||
				{ echo "FAIL run: rank $r sent rank $p nothing"; failed+=("bytes-$r-$p"); }
		done
	done
fi
cluster_sync run-checked 120

# ---- 2./3. a machine lost mid-generation
# exit_lines NAME — what this node's rank said when it gave up (not -v's
# route lines, which name every rank)
exit_lines() {
	grep -hE "exiting|failed|gone|given up|lost" "$TBRDMA_OUT/$1.err" | grep -v "route to it" || true
}
# lost_case NAME LOST ACTION — every node starts its rank; once all decode,
# the last node does ACTION; the other nodes' ranks (and the last node's,
# when LOST is -1: the cable between node 0 and the last node, whose ends
# lose each other) must exit non-zero within 5 s, saying which rank was
# lost: rank LOST, or (-1) either end of the cable
lost_case() {
	local name=$1 lost=$2 action=$3 t0 t1 rc=0 bad=0 victim=1 named
	rank "$name" "${long[@]}"
	wait_for "grep -q 'rdma: decoding' '$TBRDMA_OUT/$name.err' || pid_exited $RANK_PID" 120 || true
	if ! grep -q 'rdma: decoding' "$TBRDMA_OUT/$name.err" || pid_exited "$RANK_PID"; then
		echo "FAIL $name: rank $NODE did not start decoding, or ended early"
		tail -n 5 "$TBRDMA_OUT/$name.err"
		echo "   node $NODE counters: $(counters)"
		bad=1
	fi
	cluster_sync "$name-decoding" 150
	tbr_sleep 1
	((NODE == last && lost == last)) && victim=0
	if ((NODE == last)); then
		t0=$(ms)
		eval "$action"
		cluster_put "$name-done" 1
	else
		cluster_get "$last" "$name-done" 30 >/dev/null
		t0=$(ms)
	fi
	if ((victim)); then
		wait_for "pid_exited $RANK_PID" 10 || true
		t1=$(ms)
		pid_exited "$RANK_PID" || { echo "FAIL $name: rank $NODE still runs"; bad=1; }
		signal KILL
		wait "$RANK_PID" || rc=$?
		exit_lines "$name" | head -3 | sed "s/^/   rank $NODE: /"
		((rc)) || { echo "FAIL $name: rank $NODE exited 0"; bad=1; }
		if ((lost >= 0)); then
			named="rank $lost "
		else
			named="rank (0|$last) |this rank \((0|$last)\)"
		fi
		if ! exit_lines "$name" | grep -qE "$named"; then
			echo "FAIL $name: rank $NODE does not say it lost ${named//\\/}"
			bad=1
		fi
		echo "$name: rank $NODE out $((t1 - t0)) ms after $( ((NODE == last)) && echo it || echo "it learned of it")"
		((t1 - t0 <= 5000)) || { echo "FAIL $name: more than 5 s"; bad=1; }
	else
		cluster_sync "$name-others-out" 30
		signal KILL
		wait "$RANK_PID" 2>/dev/null || true
	fi
	((victim)) && cluster_sync "$name-others-out" 30
	echo "   node $NODE counters: $(counters)"
	((bad)) && failed+=("$name")
	return 0
}

lost_case stopped "$last" 'signal STOP'
for k in "${!CABLE_LIST[@]}"; do [[ ${CABLE_LIST[k]} == "0-$last" ]] && break; done
# shellcheck disable=SC2016  # expanded when lost_case evals it
lost_case cable-down -1 'ip link set cab$k down'
if ((NODE == last)); then
	ip link set "cab$k" up
fi
if cable_mine "$k"; then
	wait_for "[[ \$(</sys/class/infiniband/tbr$k/ports/1/state) == *ACTIVE ]]" 20 ||
		{ echo "FAIL: tbr$k not ACTIVE again after the cable came back"; failed+=(cable-up); }
fi
((${#failed[@]} == 0)) || fail "failed: ${failed[*]}"
echo "node $NODE: rank $NODE of $NODES over per-peer devices: ok"
