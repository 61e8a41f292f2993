#!/bin/bash
# `tbrdma stats` on the real counters: while ibv_rc_pingpong runs on
# tbrlo0, `stats -w 1 -c 3 --json` reports growing traffic, and each
# report's rates times its interval are exactly the counters' growth since
# the report before.  Also: the text table, -w until SIGINT, one device by
# name, and the errors (no such device 2, module not loaded 3).
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-admin.sh"

require_cmd ibv_rc_pingpong
expect_rc 3 tbrdma stats
verbs_setup

echo "== idle, text"
expect_rc 0 tbrdma stats -c 1
grep -qE '^DEVICE +TX +RX +TX OPS +RX OPS +TX PKTS +RX PKTS +RETRANS +RX ERRORS$' <<<"$out" ||
	fail "no header line"
grep -qE '^tbrlo0 +[0-9.]+ [kMG]?B/s +[0-9.]+ [kMG]?B/s' <<<"$out" || fail "no tbrlo0 line"
[[ $(wc -l <<<"$out") -eq 2 ]] || fail "one report is a header and one line per device"

echo "== traffic: ibv_rc_pingpong on tbrlo0 while stats watches"
port=18700
ibv_rc_pingpong -d tbrlo0 -g "$TBR_TEST_GID" -p $port -s 4096 -n 1000000 \
	>"$TBRDMA_OUT/server.log" 2>&1 &
server=$!
defer "kill $server 2>/dev/null || true"
wait_for "ss -ltn | grep -q ':$port '" 10 || fail "pingpong server not listening"
ibv_rc_pingpong -d tbrlo0 -g "$TBR_TEST_GID" -p $port -s 4096 -n 1000000 127.0.0.1 \
	>"$TBRDMA_OUT/client.log" 2>&1 &
client=$!
defer "kill $client 2>/dev/null || true"
wait_for '[[ $(tbrdma status --json tbrlo0 | "$TBR_PY" -c "import json,sys; print(json.load(sys.stdin)[\"devices\"][0][\"counters\"][\"tx_ops\"])") -gt 0 ]]' 20 ||
	fail "no traffic started: $(cat "$TBRDMA_OUT"/*.log)"
tbrdma stats tbrlo0 -w 1 -c 3 --json >"$TBRDMA_OUT/stats.jsonl" || fail "stats -w 1 -c 3 --json failed"
kill "$client" "$server" 2>/dev/null || true
cat "$TBRDMA_OUT/stats.jsonl"
"$TBR_PY" - "$TBRDMA_OUT/stats.jsonl" <<'EOF' || fail "stats reports are wrong"
import json, sys
reports = [json.loads(line) for line in open(sys.argv[1])]
assert len(reports) == 3, len(reports)
for r in reports:
    assert 0.9 < r["interval_s"] < 3, r["interval_s"]
    assert [d["name"] for d in r["devices"]] == ["tbrlo0"], r
    rates = r["devices"][0]["rates"]
    for k in ("tx_bytes", "rx_bytes", "tx_ops", "rx_ops", "tx_packets", "rx_packets"):
        assert rates[k] > 0, (k, rates)
    # pingpong: every 4 KiB message sent is also received, on one device.
    assert rates["retransmits"] == 0 and rates["rx_errors"] == 0, rates
    assert rates["tx_bytes"] >= 4096 * rates["tx_ops"] * 0.99, rates
# Rate x interval = the counters' growth between consecutive reports.
for prev, cur in zip(reports, reports[1:]):
    c0, c1 = prev["devices"][0]["counters"], cur["devices"][0]["counters"]
    rates = cur["devices"][0]["rates"]
    for k in ("tx_bytes", "tx_ops", "rx_packets"):
        growth = c1[k] - c0[k]
        assert growth > 0, (k, c0, c1)
        # Rates carry one decimal, the interval three: allow their rounding.
        assert abs(rates[k] * cur["interval_s"] - growth) <= 0.05 * cur["interval_s"] + 0.0005 * rates[k] + 1, \
            (k, rates[k], cur["interval_s"], growth)
print("3 reports consistent with the counters")
EOF

echo "== -w until interrupted"
# The program itself, not the tbrdma() function: a background subshell
# would ignore SIGINT for it.
"$TBR_TOOL" stats -w 0.5 >"$TBRDMA_OUT/watch.txt" 2>&1 &
watcher=$!
sleep 2.2
kill -INT $watcher
rc=0
wait $watcher || rc=$?
cat "$TBRDMA_OUT/watch.txt"
[[ $rc -eq 0 ]] || fail "stats -w ended with $rc on SIGINT"
reports=$(grep -c '^tbrlo0 ' "$TBRDMA_OUT/watch.txt")
((reports >= 3 && reports <= 5)) || fail "$reports reports in 2.2 s at -w 0.5"

echo "== errors"
expect_rc 2 tbrdma stats nosuch0
grep -q 'no RDMA device named nosuch0' <<<"$out" || fail "message for an unknown device"
expect_rc 1 tbrdma stats -w -1
