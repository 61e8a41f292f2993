#!/bin/bash
# XRC (eXtended Reliable Connected): rdma-core's ibv_xsrq_pingpong on the
# loopback device and across the veth pair (two namespaces), a server
# whose one XRC SRQ serves several client processes' messages (each
# client's through an XRC receive QP of its own), then tests/progs/xrc's
# negative cases with exact completion statuses (wrong SRQ number, an SRQ
# of another XRC domain, a destroyed SRQ, RDMA to an MR of another PD).
# timeout: 150
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd ibv_xsrq_pingpong
[[ -x $TBR_PROGS/xrc ]] || skip "tests/progs/xrc not built (make test-progs)"
verbs_setup

# xsrq PREFIX DEV GID SERVER_IP CLIENTS ARGS... — one server with CLIENTS
# XRC receive QPs and one SRQ in one XRC domain, and CLIENTS client
# processes at once (PREFIX runs them, e.g. in the other namespace), every
# one sending -n messages of -s bytes and getting as many back.
xsrq() {
	local prefix=$1 dev=$2 gid=$3 ip=$4 nc=$5 name i rc=0 spid args
	shift 5
	PORT=$((PORT + 1))
	args="$*"
	name=xsrq-$dev-c$nc${args// /}
	echo "== $dev: xsrq_pingpong -c $nc $*"
	timeout 40 ibv_xsrq_pingpong -d "$dev" -g "$gid" -p "$PORT" -c "$nc" "$@" \
		>"$TBRDMA_OUT/$name.server.log" 2>&1 &
	spid=$!
	if ! wait_listen "$PORT" 40 "$spid"; then
		cat "$TBRDMA_OUT/$name.server.log"
		return 1
	fi
	local pids=()
	for ((i = 0; i < nc; i++)); do
		# shellcheck disable=SC2086  # PREFIX is a word list on purpose
		timeout 40 $prefix ibv_xsrq_pingpong -d "${dev/tbr0/tbr1}" \
			-g "${XSRQ_CLIENT_GID:-$gid}" -p "$PORT" "$@" "$ip" \
			>"$TBRDMA_OUT/$name.client$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || { rc=1; echo "--- client $i:"; cat "$TBRDMA_OUT/$name.client$i.log"; }
	done
	wait "$spid" || { rc=1; echo "--- server:"; cat "$TBRDMA_OUT/$name.server.log"; }
	((rc == 0)) && echo "ok: $name" && tail -n 1 "$TBRDMA_OUT/$name.client0.log" | sed "s/^/   /"
	return $rc
}

PORT=18700
failed=()
xsrq "" "$TBR_TEST_DEV" "$TBR_TEST_GID" 127.0.0.1 1 -n 5 -s 1 || failed+=("loopback 1 client")
xsrq "" "$TBR_TEST_DEV" "$TBR_TEST_GID" 127.0.0.1 3 -n 5 -s 65536 -m 4096 ||
	failed+=("loopback 3 clients 64 KiB")
xsrq "" "$TBR_TEST_DEV" "$TBR_TEST_GID" 127.0.0.1 2 -n 5 -s 4096 -e || failed+=("loopback 2 clients events")

echo "== negative cases on $TBR_TEST_DEV"
"$TBR_PROGS/xrc" -d "$TBR_TEST_DEV" -g "$TBR_TEST_GID" || failed+=("xrc negative cases")

net_two_hosts 9000
XSRQ_CLIENT_GID=$NET_GID_B xsrq "ip netns exec $NET_NS" tbr0 "$NET_GID_A" "$NET_IP_A" 2 \
	-n 10 -s 65536 -m 4096 || failed+=("veth 2 clients 64 KiB")
echo "counters tbr0: $(rdma statistic show link tbr0/1)"
[[ $(net_counter tbr0 rx_packets) -gt 0 ]] || failed+=("tbr0 counted no frames")

((${#failed[@]} == 0)) || fail "${#failed[@]} XRC checks failed: $(printf '[%s] ' "${failed[@]}")"
echo "XRC: 3 loopback and 1 veth pingpong runs, negative cases: all passed"
