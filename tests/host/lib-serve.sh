# lib-serve.sh — the checks of tprun serve shared by the host test
# (tests/host/test-tprun-serve.sh, TCP) and the guest selftest
# (tests/selftests/265-tprun-serve.sh, RDMA). The caller defines ok and
# not_ok (lib-tap.sh, or the selftest's), sets $tmp, starts the server
# with serve_start and calls serve_checks, then serve_stop.
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
		url=$(grep -o 'http://[^ ]*/v1' "$log" 2>/dev/null | head -1)
		[ -n "$url" ] && return 0
		kill -0 "$serve_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

serve_stop() {
	kill "$serve_pid" 2>/dev/null
	wait "$serve_pid" 2>/dev/null
}

# post PATH BODY — the body in $tmp/body, the status in $code
post() {
	code=$(curl -s -m 120 -o "$tmp/body" -w '%{http_code}' "$url$1" \
		-H 'Content-Type: application/json' --data-binary "$2")
}

# pyjson FILE EXPR... — python asserts over the JSON in FILE (as r)
pyjson() {
	local f=$1
	shift
	python3 -c '
import json, os, sys
r = json.load(open(sys.argv[1]))
for e in sys.argv[2:]:
    assert eval(e), (e, r)' "$f" "$@" 2>&1
}

# sse FILE — the streamed chunks of FILE joined: the text in $tmp/sse.txt
sse() {
	python3 - "$1" "$tmp/sse.txt" <<'PY' 2>&1
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n\n")
events = [l for l in lines if l.startswith("data: ")]
assert events and events[-1] == "data: [DONE]", events[-3:]
text, finish = "", None
for e in events[:-1]:
    c = json.loads(e[6:])["choices"][0]
    text += c.get("text", c.get("delta", {}).get("content") or "")
    finish = c["finish_reason"] or finish
assert finish in ("stop", "length"), finish
open(sys.argv[2], "w", encoding="utf-8").write(text)
PY
}

serve_checks() {
	local out model=$1 prompt='"prompt": "Hello world, the model"'
	local chat='"messages": [{"role": "user", "content": "Say hello"}]'

	code=$(curl -s -m 30 -o "$tmp/body" -w '%{http_code}' "$url/models")
	if [ "$code" = 200 ] && out=$(pyjson "$tmp/body" "r['data'][0]['id'] == '$model'"); then
		ok "GET /v1/models names $model"
	else
		not_ok "GET /v1/models names $model" "$code" "$out"
	fi

	post /completions "{$prompt, \"max_tokens\": 6, \"temperature\": 0}"
	if [ "$code" = 200 ] && out=$(pyjson "$tmp/body" "r['object'] == 'text_completion'" \
		"1 <= r['usage']['completion_tokens'] <= 6" \
		"r['choices'][0]['finish_reason'] in ('stop', 'length')"); then
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["choices"][0]["text"], end="")' \
			"$tmp/body" >"$tmp/whole.txt"
		ok "completion: text, usage, finish_reason"
	else
		not_ok "completion: text, usage, finish_reason" "$code" "$out"
	fi
	post /completions "{$prompt, \"max_tokens\": 6, \"temperature\": 0, \"stream\": true}"
	cp "$tmp/body" "$tmp/stream"
	if [ "$code" = 200 ] && out=$(sse "$tmp/stream") && cmp -s "$tmp/sse.txt" "$tmp/whole.txt"; then
		ok "completion streamed: SSE chunks, [DONE], the same text"
	else
		not_ok "completion streamed: SSE chunks, [DONE], the same text" "$code" "$out"
	fi

	post /chat/completions "{$chat, \"max_tokens\": 6, \"temperature\": 0}"
	if [ "$code" = 200 ] && out=$(pyjson "$tmp/body" "r['object'] == 'chat.completion'" \
		"r['choices'][0]['message']['role'] == 'assistant'" \
		"r['usage']['prompt_tokens'] > 5"); then
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["choices"][0]["message"]["content"], end="")' \
			"$tmp/body" >"$tmp/whole.txt"
		ok "chat: an assistant message"
	else
		not_ok "chat: an assistant message" "$code" "$out"
	fi
	post /chat/completions "{$chat, \"max_tokens\": 6, \"temperature\": 0, \"stream\": true}"
	cp "$tmp/body" "$tmp/stream"
	if [ "$code" = 200 ] && out=$(sse "$tmp/stream") && cmp -s "$tmp/sse.txt" "$tmp/whole.txt"; then
		ok "chat streamed: SSE chunks, [DONE], the same text"
	else
		not_ok "chat streamed: SSE chunks, [DONE], the same text" "$code" "$out"
	fi

	# bad requests: the status and a JSON error that says what is wrong
	while IFS='|' read -r want path body why; do
		post "$path" "$body"
		if [ "$code" = "$want" ] && out=$(WHY=$why pyjson "$tmp/body" "os.environ['WHY'] in r['error']['message']"); then
			ok "$path $body: $code, $why"
		else
			not_ok "$path $body: $want, $why" "got $code" "$(head -c 300 "$tmp/body")" "$out"
		fi
	done <<'EOF2'
400|/completions|{"prompt": "x",|not JSON
400|/completions|[1, 2]|JSON object
400|/completions|{"max_tokens": 3}|'prompt' is missing
400|/completions|{"prompt": 7}|'prompt' must be a string
400|/completions|{"prompt": "x", "max_tokens": "many"}|'max_tokens' must be an integer
400|/completions|{"prompt": "x", "temperature": -1}|'temperature' must be in
400|/completions|{"prompt": "x", "n": 2}|'n' must be 1
400|/completions|{"prompt": "x"} trailing|more after
400|/chat/completions|{"messages": []}|1..
400|/chat/completions|{"messages": [{"role": "user"}]}|no 'content'
400|/chat/completions|{"messages": [{"role": "robot", "content": "x"}]}|'robot'
404|/nowhere|{}|no such path
EOF2
	code=$(curl -s -m 30 -o "$tmp/body" -w '%{http_code}' "$url/completions")
	[ "$code" = 405 ] && ok "GET /v1/completions: 405" || not_ok "GET /v1/completions: 405" "got $code"
	head -c 1100000 /dev/zero | tr '\0' ' ' >"$tmp/big"
	code=$(curl -s -m 30 -o "$tmp/body" -w '%{http_code}' "$url/completions" --data-binary @"$tmp/big")
	[ "$code" = 413 ] && ok "a body over 1 MiB: 413" || not_ok "a body over 1 MiB: 413" "got $code"

	# a client that goes away mid-stream frees the server for the next
	timeout 3 curl -sN -m 30 "$url/completions" -d "{$prompt, \"max_tokens\": 100000, \"stream\": true}" \
		>"$tmp/cut" 2>/dev/null
	local t0=$SECONDS
	post /completions "{$prompt, \"max_tokens\": 2}"
	if [ "$code" = 200 ] && [ -s "$tmp/cut" ] && ((SECONDS - t0 < 60)) &&
	   grep -q 'cancelled' "$serve_log"; then
		ok "a client gone mid-stream: its job cancelled, the next served in $((SECONDS - t0)) s"
	else
		not_ok "a client gone mid-stream: its job cancelled, the next served" "got $code after $((SECONDS - t0)) s" \
			"$(tail -5 "$serve_log")"
	fi

	# two at once: queued, both answered
	curl -s -m 120 -o "$tmp/q1" "$url/completions" -d "{$prompt, \"max_tokens\": 3}" &
	local q=$!
	post /chat/completions "{$chat, \"max_tokens\": 3}"
	wait $q
	if [ "$code" = 200 ] && pyjson "$tmp/q1" "r['usage']['completion_tokens'] >= 1" >/dev/null; then
		ok "two requests at once: both answered"
	else
		not_ok "two requests at once: both answered" "$code" "$(head -c 300 "$tmp/q1")"
	fi

	# the official openai client (npm)
	if out=$(node "$serve_client/client.mjs" "$url" 2>&1); then
		ok "the openai client: $(grep -c '^ok' <<<"$out") checks (completion, chat, streamed and not)"
	else
		not_ok "the openai client" "$out"
	fi
	kill -0 "$serve_pid" 2>/dev/null && ok "the server still runs" ||
		not_ok "the server still runs" "$(tail -5 "$serve_log")"
}
