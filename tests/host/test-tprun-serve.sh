#!/bin/bash
# tprun serve on the host: 2 ranks over the TCP transport (the host has
# no RDMA; selftest 265 runs the same checks over tbrdma) serving a
# synthetic model exported as GGUF with its tokenizer and chat template.
# curl: /v1/models, completion and chat, whole and streamed (the stream
# adds up to the whole answer), bad requests (400/404/405/413 with a JSON
# error), a client gone mid-stream, two requests at once; then the
# official openai client (npm, tests/serve-client); then a deepseek2 file
# with DeepSeek V3's tokenizer and template and a gpt-oss file with o200k
# and harmony (template-model.py), each served by 2 ranks: the openai
# client's chat counts the prompt tokens the family's template gives.
# Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tprun=$top/tools/tprun
serve_client=$top/tests/serve-client
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"
# shellcheck source=lib-serve.sh
source "$(dirname "$0")/lib-serve.sh"

tap_make "$top/tools/runner"
[ -f "$serve_client/node_modules/openai/package.json" ] ||
	"$serve_client/setup.sh" >"$tmp/setup.log" 2>&1 ||
	{ echo "Bail out! no openai client: tests/serve-client/setup.sh failed: $(tail -3 "$tmp/setup.log")"; exit 1; }

if ! out=$("$tprun" --export-gguf "$tmp/tiny.gguf" --vocab 400 --dim 64 --heads 4 \
	   --kv-heads 2 --layers 2 --ffn 128 2>&1); then
	echo "Bail out! --export-gguf failed: $out"
	exit 1
fi

# usage errors first
for args in "serve --prompt x" "--http 127.0.0.1:1" "serve --json"; do
	# shellcheck disable=SC2086
	"$tprun" $args >/dev/null 2>"$tmp/usage"
	rc=$?
	[ $rc = 2 ] && ok "tprun $args: usage error" || not_ok "tprun $args: usage error (2)" "rc $rc" "$(cat "$tmp/usage")"
done

if serve_start "$tmp/serve.log" timeout 600 "$tprun" serve --model "$tmp/tiny.gguf" \
	--local 2 --transport tcp --http 127.0.0.1:0 --slow-ms 20 --ctx 512 -v; then
	ok "tprun serve --local 2 --transport tcp listens on $url"
	serve_checks tiny.gguf
else
	not_ok "tprun serve --local 2 --transport tcp listens" "$(tail -5 "$tmp/serve.log")"
fi
serve_stop

# The giants' chat templates (issue 42), over 2 ranks: deepseek2 with
# DeepSeek V3's, gpt-oss with harmony
system="Be brief." user="Say hello"
for case in "deepseek2 deepseek3 --q-lora 32 --kv-lora 32" \
	"gpt-oss harmony --kv-heads 2 --sliding-window 16"; do
	read -r arch family shape <<<"$case"
	# shellcheck disable=SC2086 # the shape is words
	if ! out=$("$tprun" --export-gguf "$tmp/$arch.gguf" --arch "$arch" --vocab 400 \
		   --dim 64 --heads 4 --layers 2 --ffn 128 --experts 4 --experts-used 2 \
		   --expert-ffn 64 $shape 2>&1) ||
	   ! out=$(python3 "$serve_client/template-model.py" "$tmp/$arch.gguf" \
		   "$tmp/$arch-$family.gguf" "$family" 2>&1); then
		not_ok "$arch with the $family template: the model" "$out"
		continue
	fi
	want=$(python3 "$serve_client/template-model.py" --count "$family" "$system" "$user")
	if serve_start "$tmp/$arch.log" timeout 120 "$tprun" serve \
		--model "$tmp/$arch-$family.gguf" --local 2 --transport tcp \
		--http 127.0.0.1:0 --ctx 512 -v; then
		if out=$(node "$serve_client/client.mjs" "$url" --chat-only "$want" 2>&1); then
			ok "$arch, 2 ranks, $family template: the openai client's chat ($(grep -c '^ok' <<<"$out") checks, $want prompt tokens)"
		else
			not_ok "$arch, 2 ranks, $family template: the openai client's chat" "$out"
		fi
	else
		not_ok "$arch: tprun serve --local 2 listens" "$(tail -5 "$tmp/$arch.log")"
	fi
	serve_stop
done

# a port in use is a clear error
# A rank lost while a request streams (issue 43): the stream ends with an
# error naming it, a new request is answered 503 with the reason, the
# server exits non-zero (after the 5 s it keeps answering 503).
if serve_start "$tmp/lost.log" timeout 120 "$tprun" serve --model "$tmp/tiny.gguf" \
	--local 2 --transport tcp --http 127.0.0.1:0 --slow-ms 20 --ctx 512 -v; then
	curl -s -N -m 60 -o "$tmp/lost.stream" -H 'Content-Type: application/json' \
		--data-binary '{"prompt": "a", "max_tokens": 400, "stream": true}' "$url/completions" &
	cpid=$!
	for ((i = 0; i < 300; i++)); do grep -q 'data:' "$tmp/lost.stream" 2>/dev/null && break; sleep 0.1; done
	rank1=$(pgrep -P "$(pgrep -P "$serve_pid" | head -1)" | sed -n 2p)
	t0=$(date +%s%N)
	kill -9 "$rank1"
	wait "$cpid"
	code=$(curl -s -m 10 -o "$tmp/lost.new" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary '{"prompt": "a", "max_tokens": 4}' "$url/completions")
	grep -q '"error".*rank 1' "$tmp/lost.stream" &&
		ok "a rank killed mid-stream: the stream ends with $(grep -o '"message":"[^"]*"' "$tmp/lost.stream" | head -1)" ||
		not_ok "a rank killed mid-stream: an error naming rank 1" "$(tail -c 300 "$tmp/lost.stream")" "$(tail -5 "$tmp/lost.log")"
	[ "$code" = 503 ] && grep -q 'rank 1' "$tmp/lost.new" &&
		ok "then a new request: 503 $(cat "$tmp/lost.new")" ||
		not_ok "then a new request: 503 naming rank 1" "code $code" "$(cat "$tmp/lost.new")"
	wait "$serve_pid"
	rc=$?
	t1=$(date +%s%N)
	[ $rc != 0 ] && [ $(( (t1 - t0) / 1000000 )) -lt 10000 ] &&
		ok "the server exits $rc, $(( (t1 - t0) / 1000000 )) ms after the kill" ||
		not_ok "the server exits non-zero within 10 s" "rc $rc after $(( (t1 - t0) / 1000000 )) ms"
else
	not_ok "tprun serve --local 2 (rank lost) listens" "$(tail -5 "$tmp/lost.log")"
fi

if serve_start "$tmp/a.log" timeout 60 "$tprun" serve --vocab 400 --http 127.0.0.1:0; then
	port=${url##*:}
	port=${port%/v1}
	timeout 60 "$tprun" serve --vocab 400 --http "127.0.0.1:$port" >/dev/null 2>"$tmp/b.log"
	rc=$?
	grep -q 'cannot listen' "$tmp/b.log" && [ $rc != 0 ] &&
		ok "a port in use: $(grep -o 'cannot listen.*' "$tmp/b.log")" ||
		not_ok "a port in use: refused" "rc $rc" "$(cat "$tmp/b.log")"
else
	not_ok "one rank serves" "$(tail -5 "$tmp/a.log")"
fi
serve_stop
tap_done
