# lib-serve.sh — the checks of tprun serve shared by the host test
# (tests/host/test-tprun-serve.sh, TCP) and the guest selftest
# (tests/selftests/265-tprun-serve.sh, RDMA). The caller defines ok and
# not_ok (lib-tap.sh, or the selftest's), sets $tmp and $serve_client,
# starts the server with serve_start and calls serve_checks, then
# serve_stop. SERVE_QUICK=1: only the starred bad requests (the guest is
# slow); SERVE_CUT_SECS: when the client that goes away mid-stream goes
# (3 s). Safe under set -e.
# shellcheck shell=bash

# serve_start LOG TPRUN ARGS... — start it in the background; $url is
# http://127.0.0.1:PORT/v1 once it listens (within 60 s), else return 1.
serve_start() {
	local log=$1 i
	shift
	"$@" >"$log.out" 2>"$log" &
	serve_pid=$!
	serve_log=$log
	url=
	for ((i = 0; i < 600; i++)); do
		url=$(grep -o 'http://[^ ]*/v1' "$log" 2>/dev/null | head -1) || true
		[ -n "$url" ] && return 0
		kill -0 "$serve_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

serve_stop() {
	kill "$serve_pid" 2>/dev/null
	wait "$serve_pid" 2>/dev/null || true
}

# req NAME PATH [BODY] — the answer in $tmp/r/NAME.body, its status in
# NAME.code (GET without a body)
req() {
	local name=$1 path=$2
	shift 2
	curl -s -m 120 -o "$tmp/r/$name.body" -w '%{http_code}' "$url$path" \
		${1+-H 'Content-Type: application/json' --data-binary "$1"} >"$tmp/r/$name.code" ||
		true
}

serve_checks() {
	local out k=0 v name detail model=$1 prompt='"prompt": "Hello world, the model"'
	local chat='"messages": [{"role": "user", "content": "Say hello"}]'

	rm -rf "$tmp/r"
	mkdir -p "$tmp/r"
	node "$serve_client/client.mjs" "$url" >"$tmp/client.out" 2>&1 &
	local client=$!
	req models /models
	req comp /completions "{$prompt, \"max_tokens\": 6, \"temperature\": 0}"
	req comp-stream /completions "{$prompt, \"max_tokens\": 6, \"temperature\": 0, \"stream\": true}"
	req chat /chat/completions "{$chat, \"max_tokens\": 6, \"temperature\": 0}"
	req chat-stream /chat/completions "{$chat, \"max_tokens\": 6, \"temperature\": 0, \"stream\": true}"
	# bad requests: the status and a JSON error that says what is wrong
	while IFS='|' read -r want path body why; do
		if [[ $want == \** ]]; then
			want=${want#\*}
		elif [ -n "${SERVE_QUICK:-}" ]; then
			continue
		fi
		printf '%s\n' "$want" >"$tmp/r/bad.$k.want"
		printf '%s\n' "$why" >"$tmp/r/bad.$k.why"
		printf '%s\n' "$path $body: $want, $why" >"$tmp/r/bad.$k.desc"
		req "bad.$k" "$path" "$body"
		k=$((k + 1))
	done <<'EOF2'
*400|/completions|{"prompt": "x",|not JSON
400|/completions|[1, 2]|JSON object
*400|/completions|{"max_tokens": 3}|'prompt' is missing
400|/completions|{"prompt": 7}|'prompt' must be a string
*400|/completions|{"prompt": "x", "max_tokens": "many"}|'max_tokens' must be an integer
400|/completions|{"prompt": "x", "temperature": -1}|'temperature' must be in
400|/completions|{"prompt": "x", "n": 2}|'n' must be 1
400|/completions|{"prompt": "x"} trailing|more after
400|/chat/completions|{"messages": []}|1..
400|/chat/completions|{"messages": [{"role": "user"}]}|no 'content'
*400|/chat/completions|{"messages": [{"role": "robot", "content": "x"}]}|'robot'
*404|/nowhere|{}|no such path
EOF2
	python3 "$(dirname "${BASH_SOURCE[0]}")/serve-check.py" "$tmp/r" "$model" >"$tmp/r/verdicts" 2>&1 ||
		not_ok "serve-check.py runs" "$(cat "$tmp/r/verdicts")"
	while IFS='|' read -r v name detail; do
		if [ "$v" = PASS ]; then
			ok "$name"
		else
			not_ok "$name" "$detail"
		fi
	done <"$tmp/r/verdicts"

	code=$(curl -s -m 30 -o "$tmp/body" -w '%{http_code}' "$url/completions") || true
	[ "$code" = 405 ] && ok "GET /v1/completions: 405" || not_ok "GET /v1/completions: 405" "got $code"
	head -c 1100000 /dev/zero | tr '\0' ' ' >"$tmp/big"
	code=$(curl -s -m 30 -o "$tmp/body" -w '%{http_code}' "$url/completions" --data-binary @"$tmp/big") || true
	[ "$code" = 413 ] && ok "a body over 1 MiB: 413" || not_ok "a body over 1 MiB: 413" "got $code"

	# a client that goes away mid-stream frees the server for the next
	timeout "${SERVE_CUT_SECS:-3}" curl -sN -m 30 "$url/completions" -d "{$prompt, \"max_tokens\": 100000, \"stream\": true}" \
		>"$tmp/cut" 2>/dev/null || true
	local t0=$SECONDS
	req after /completions "{$prompt, \"max_tokens\": 2}"
	if [ "$(cat "$tmp/r/after.code")" = 200 ] && [ -s "$tmp/cut" ] && ((SECONDS - t0 < 60)) &&
	   grep -q 'cancelled' "$serve_log"; then
		ok "a client gone mid-stream: its job cancelled, the next served in $((SECONDS - t0)) s"
	else
		not_ok "a client gone mid-stream: its job cancelled, the next served" "got $(cat "$tmp/r/after.code") after $((SECONDS - t0)) s" \
			"$(tail -5 "$serve_log")"
	fi

	# two at once: queued, both answered
	curl -s -m 120 -o "$tmp/q1" "$url/completions" -d "{$prompt, \"max_tokens\": 3}" &
	local q=$!
	req q2 /chat/completions "{$chat, \"max_tokens\": 3}"
	wait $q || true
	if grep -q '"completion_tokens":[1-9]' "$tmp/q1" &&
	   grep -q '"completion_tokens":[1-9]' "$tmp/r/q2.body"; then
		ok "two requests at once: both answered"
	else
		not_ok "two requests at once: both answered" "$(head -c 300 "$tmp/q1")" "$(head -c 300 "$tmp/r/q2.body")"
	fi

	# the official openai client (npm), started first (node takes a
	# minute to start in the TCG guest): its requests queue with ours
	local rc=0
	wait "$client" || rc=$?
	out=$(cat "$tmp/client.out")
	if [ $rc = 0 ]; then
		ok "the openai client: $(grep -c '^ok' <<<"$out") checks (completion, chat, streamed and not)"
	else
		not_ok "the openai client (exit $rc)" "$out"
	fi
	kill -0 "$serve_pid" 2>/dev/null && ok "the server still runs" ||
		not_ok "the server still runs" "$(tail -5 "$serve_log")"
}
