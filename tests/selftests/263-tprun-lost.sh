#!/bin/bash
# tools/tprun when a machine is lost mid-generation, over RDMA on a
# triangle (lib-topo.sh: three hosts, a cable each pair): its process
# stopped (SIGSTOP: alive, no connection closed, its kernel still
# acknowledges), its cable taken down at one end, or every frame on a
# cable dropped (netem loss 100 %). Every other rank must exit non-zero
# within 5 s, naming the lost peer. Then tprun serve: a rank killed while
# a request streams; the request ends with an error, a new one is
# answered 503 with a message naming the rank, and a restarted job serves.
# (A rank killed outright: 150-tprun-kill.sh.)
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-tprun.sh"
source "$(dirname "$0")/lib-topo.sh"

require_cmd curl tc
long=(--synthetic "${TP_SHAPE[@]}" --seed 5 --tokens 5000 --slow-ms 20 --json -v)
port=18900
failed=()
pids=()

ms() { local t; read -r t _ </proc/uptime; echo $((10#${t/./} * 10)); }
grep_count_at_least() {
	local n
	n=$(grep -c -- "$2" "$1" 2>/dev/null) || true
	((${n:-0} >= $3))
}

# start NAME ARGS... — one rank per host of the triangle, in the
# background (pids[r])
start() {
	local name=$1
	shift
	port=$((port + 1))
	topo_ranks "$name" "$(topo_peers $port)" "$@"
	pids=("${TOPO_PIDS[@]}")
}

# lost_case NAME LOST ACTION — ACTION (a command) mid-decoding; the ranks
# other than LOST exit non-zero within 5 s, naming LOST (LOST -1: a cable,
# both ends lose each other: every rank must exit, naming a rank)
lost_case() {
	local name=$1 lost=$2 action=$3 r t0 t1 rc bad=0 others=()
	start "$name" "${long[@]}"
	for r in 0 1 2; do
		if ! wait_for "grep_count_at_least '$TBRDMA_OUT/$name.r$r.err' 'rdma: decoding' 1" 120; then
			echo "FAIL $name: rank $r did not start decoding"
			tail -n 5 "$TBRDMA_OUT/$name.r$r.err"
			failed+=("$name")
			topo_kill KILL
			return 0
		fi
		((r == lost)) || others+=("$r")
	done
	sleep 1
	t0=$(ms)
	eval "$action"
	for r in "${others[@]}"; do
		wait_for "pid_exited ${pids[r]}" 10 || true
	done
	t1=$(ms)
	for r in "${others[@]}"; do
		rc=0
		pid_exited "${pids[r]}" || { echo "FAIL $name: rank $r still runs"; bad=1; }
		wait "${pids[r]}" || rc=$?
		{ grep -h "exiting\|lost\|failed" "$TBRDMA_OUT/$name.r$r.err" || true; } | head -3 | sed "s/^/   rank $r: /"
		((rc)) || { echo "FAIL $name: rank $r exited 0"; bad=1; }
		# what the rank said when it gave up; -v's route lines name every rank
		if ((lost >= 0)) && ! grep -E "exiting|failed|gone|given up|lost" "$TBRDMA_OUT/$name.r$r.err" |
			grep -v "route to it" | grep "rank $lost " >/dev/null; then
			echo "FAIL $name: rank $r does not name rank $lost"
			bad=1
		fi
		if ((lost < 0)) && ! grep -q "rank [0-2] (.*\(exiting\|failed\)" "$TBRDMA_OUT/$name.r$r.err"; then
			echo "FAIL $name: rank $r names no rank"
			bad=1
		fi
	done
	echo "$name: the other ranks were out $((t1 - t0)) ms after it"
	((t1 - t0 <= 5000)) || { echo "FAIL $name: more than 5 s"; bad=1; }
	topo_kill KILL
	wait 2>/dev/null || true
	((bad)) && failed+=("$name")
	return 0
}

topo_build mesh 3
lost_case stopped 2 'topo_kill STOP 3'
# shellcheck disable=SC2016  # the actions expand when lost_case evals them
lost_case cable-down -1 'topo_in 2 ip link set t21 down'
topo_in 2 ip link set t21 up
modprobe sch_netem 2>/dev/null || true
lost_case netem-loss -1 'topo_in 3 tc qdisc add dev t32 root netem loss 100% &&
	topo_in 2 tc qdisc add dev t23 root netem loss 100%'

# tprun serve: rank 2 killed while a request streams
topo_build mesh 3
model=$TBRDMA_OUT/tiny.gguf
"$TPRUN" --export-gguf "$model" --vocab 400 --dim 64 --heads 4 --kv-heads 2 \
	--layers 2 --ffn 128 >/dev/null 2>&1 || fail "--export-gguf"
srv=(serve --model "$model" --slow-ms 20 --ctx 512 --http 127.0.0.1:18999 -v)
body='{"prompt": "a", "max_tokens": 400, "stream": true}'
curl_in() { topo_in 1 curl -s -m 30 "$@"; }
serve_case() {
	local name=$1 r code
	start "$name" "${srv[@]}"
	if ! wait_for "grep -q 'http://' '$TBRDMA_OUT/$name.r0.err'" 120; then
		echo "FAIL $name: rank 0 does not serve"
		tail -n 5 "$TBRDMA_OUT/$name".r*.err
		return 1
	fi
	return 0
}
if serve_case serve; then
	curl_in -N -o "$TBRDMA_OUT/serve.stream" -H 'Content-Type: application/json' \
		--data-binary "$body" http://127.0.0.1:18999/v1/completions &
	cpid=$!
	wait_for "grep -q 'data:' '$TBRDMA_OUT/serve.stream'" 60 || echo "FAIL serve: no stream"
	topo_kill KILL 3
	wait "$cpid" || true
	if grep -q '"error"' "$TBRDMA_OUT/serve.stream" && grep -q "rank 2" "$TBRDMA_OUT/serve.stream"; then
		echo "ok   serve: the streaming request ended with an error naming rank 2"
	else
		echo "FAIL serve: the stream ended without an error naming rank 2:"
		tail -c 400 "$TBRDMA_OUT/serve.stream"
		failed+=(serve-inflight)
	fi
	code=$(curl_in -o "$TBRDMA_OUT/serve.new" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary '{"prompt": "a", "max_tokens": 4}' http://127.0.0.1:18999/v1/completions) || true
	if [[ $code == 503 ]] && grep -q "rank 2" "$TBRDMA_OUT/serve.new"; then
		echo "ok   serve: a new request: 503, $(cat "$TBRDMA_OUT/serve.new")"
	else
		echo "FAIL serve: a new request got ${code:-nothing}: $(cat "$TBRDMA_OUT/serve.new" 2>/dev/null)"
		failed+=(serve-new)
	fi
	for r in 0 1; do
		wait_for "pid_exited ${pids[r]}" 15 || { echo "FAIL serve: rank $r still runs"; failed+=(serve-exit); }
	done
	topo_kill KILL
	wait 2>/dev/null || true
	if serve_case serve-again; then
		code=$(curl_in -o "$TBRDMA_OUT/serve.again" -w '%{http_code}' -H 'Content-Type: application/json' \
			--data-binary '{"prompt": "a", "max_tokens": 4}' http://127.0.0.1:18999/v1/completions) || true
		[[ $code == 200 ]] && echo "ok   serve: the restarted job answers 200" ||
			{ echo "FAIL serve: the restarted job answered ${code:-nothing}"; failed+=(serve-again); }
	else
		failed+=(serve-again)
	fi
	topo_kill TERM
	wait 2>/dev/null || true
else
	failed+=(serve)
fi
((${#failed[@]} == 0)) || fail "failed: ${failed[*]}"
