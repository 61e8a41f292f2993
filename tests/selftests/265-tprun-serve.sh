#!/bin/bash
# tprun serve over two tbrdma devices: network namespaces joined by a
# veth pair (lib-net.sh), rank 0 on tbr0 in host A serving HTTP on
# 127.0.0.1, rank 1 on tbr1 in host B, all-reduces over RDMA. The checks
# of the host test (tests/host/lib-serve.sh): curl and the official openai
# client, completion and chat, whole and streamed, bad requests, a client
# gone mid-stream, two requests at once (fewer bad requests than the host
# test: each costs seconds in a TCG guest on a loaded host).
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-tprun.sh"
# shellcheck source=../host/lib-serve.sh
source "$TBRDMA_ROOT/tests/host/lib-serve.sh"

require_cmd curl node python3
serve_client=$TBRDMA_ROOT/tests/serve-client
[[ -f $serve_client/node_modules/openai/package.json ]] ||
	skip "no openai client (tests/serve-client/setup.sh, run by make deps)"
tmp=$TBRDMA_OUT/serve
mkdir -p "$tmp"
nfail=0
ok() { echo "ok   $1"; }
not_ok() {
	local l
	echo "FAIL $1"
	shift
	for l in "$@"; do printf '%s\n' "$l" | sed 's/^/     /'; done
	nfail=$((nfail + 1))
}

"$TPRUN" --export-gguf "$tmp/tiny.gguf" --vocab 400 --dim 64 --heads 4 \
	--kv-heads 2 --layers 2 --ffn 128 >/dev/null 2>&1 || fail "--export-gguf"
net_two_hosts 9000
peers=$NET_IP_A:18790,$NET_IP_B:18790
# (ip netns exec, not net_b: killing a backgrounded function kills a subshell)
ip netns exec "$NET_NS" timeout 230 "$TPRUN" serve --rank 1 --peers "$peers" -d tbr1 \
	--model "$tmp/tiny.gguf" --slow-ms 20 --ctx 256 >"$tmp/rank1.log" 2>&1 &
r1=$!
defer "kill $r1 2>/dev/null || true"
serve_start "$tmp/rank0.log" timeout 230 "$TPRUN" serve --rank 0 --peers "$peers" \
	-d tbr0 --model "$tmp/tiny.gguf" --slow-ms 20 --ctx 256 --http 127.0.0.1:0 -v ||
	fail "rank 0 does not serve: $(tail -5 "$tmp/rank0.log"; tail -5 "$tmp/rank1.log")"
defer serve_stop
grep -q 'RDMA on tbr0' "$tmp/rank0.log" || not_ok "rank 0 all-reduces over tbr0" "$(cat "$tmp/rank0.log")"
t0=$SECONDS
SERVE_QUICK=1 SERVE_CUT_SECS=5 serve_checks tiny.gguf
kill -0 "$r1" 2>/dev/null || not_ok "rank 1 still runs" "$(tail -5 "$tmp/rank1.log")"
echo "checks took $((SECONDS - t0)) s"
((nfail == 0)) || fail "$nfail checks failed"
