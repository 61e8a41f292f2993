#!/usr/bin/env python3
# The verdicts on the answers lib-serve.sh fetched with curl from tprun
# serve, in one process (a python start costs seconds in the TCG guest).
# usage: serve-check.py DIR MODEL; DIR/NAME.code and DIR/NAME.body per
# request, DIR/bad.K.{code,body,want,why} per bad request. Prints one
# "PASS|name" or "FAIL|name|detail" line per check.
import json, os, sys

d, model = sys.argv[1], sys.argv[2]


def get(name):
    code = open(os.path.join(d, name + ".code")).read().strip()
    body = open(os.path.join(d, name + ".body"), encoding="utf-8").read()
    return code, body


def check(name, fn):
    try:
        fn()
        print("PASS|%s" % name)
    except Exception as e:  # any failure is the verdict
        print("FAIL|%s|%s: %s" % (name, type(e).__name__, str(e)[:300].replace("\n", " ")))


def whole(name):
    code, body = get(name)
    assert code == "200", (code, body[:200])
    return json.loads(body)


def stream(name):
    code, body = get(name)
    assert code == "200", (code, body[:200])
    events = [e for e in body.split("\n\n") if e.startswith("data: ")]
    assert len(events) >= 3 and events[-1] == "data: [DONE]", events[-3:]
    text, finish, role = "", None, None
    for e in events[:-1]:
        c = json.loads(e[6:])["choices"][0]
        if "delta" in c:
            role = c["delta"].get("role", role)
            text += c["delta"].get("content") or ""
        else:
            text += c["text"]
        finish = c["finish_reason"] or finish
    assert finish in ("stop", "length"), finish
    return text, role


def models():
    r = whole("models")
    assert r["object"] == "list" and [m["id"] for m in r["data"]] == [model], r


def completion():
    r = whole("comp")
    c = r["choices"][0]
    assert r["object"] == "text_completion" and isinstance(c["text"], str), r
    assert 1 <= r["usage"]["completion_tokens"] <= 6, r["usage"]
    assert c["finish_reason"] in ("stop", "length"), c


def completion_stream():
    text, _ = stream("comp-stream")
    assert text == whole("comp")["choices"][0]["text"], text


def chat():
    r = whole("chat")
    m = r["choices"][0]["message"]
    assert r["object"] == "chat.completion" and m["role"] == "assistant", r
    assert isinstance(m["content"], str) and r["usage"]["prompt_tokens"] > 5, r


def chat_stream():
    text, role = stream("chat-stream")
    assert role == "assistant", role
    assert text == whole("chat")["choices"][0]["message"]["content"], text


check("GET /v1/models names " + model, models)
check("completion: text, usage, finish_reason", completion)
check("completion streamed: SSE chunks, [DONE], the text of the whole answer", completion_stream)
check("chat: an assistant message, usage", chat)
check("chat streamed: SSE chunks, the role, [DONE], the text of the whole answer", chat_stream)

k = 0
while os.path.exists(os.path.join(d, "bad.%d.want" % k)):
    def bad(k=k):
        want = open(os.path.join(d, "bad.%d.want" % k)).read().strip()
        why = open(os.path.join(d, "bad.%d.why" % k)).read().strip()
        code, body = get("bad.%d" % k)
        assert code == want, (code, body[:200])
        msg = json.loads(body)["error"]["message"]
        assert why in msg, msg
    desc = open(os.path.join(d, "bad.%d.desc" % k)).read().strip()
    check(desc, bad)
    k += 1
