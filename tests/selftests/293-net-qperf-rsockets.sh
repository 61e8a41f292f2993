#!/bin/bash
# Two more clients nobody here wrote, across the link (two hosts joined by a
# veth pair, lib-net.sh), server in host A, client in host B:
#  - qperf's RC tests: its own verbs code, connected through RDMA CM (-cm1,
#    the only way qperf reaches a RoCE-style GID); its UC/UD tests build
#    address handles without a GRH, which no RoCE-style device accepts
#    (Documentation/clients.md), so they are not run;
#  - rsockets: rstream and riostream (librdmacm's socket API over RDMA, data
#    verified), and an unmodified TCP program, iperf (2), under
#    LD_PRELOAD=librspreload.so. rspreload falls back to a kernel TCP socket
#    silently when an rsocket cannot connect, so the bytes iperf moved must
#    show up in tbr1's transmit counter, not only in iperf's report.
#    (iperf3 3.12 needs what rsockets does not emulate: TCP_INFO, after
#    which its server never reads the stream and it crashes in libiperf;
#    Documentation/clients.md.)
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd qperf rstream riostream iperf
RSPRELOAD=
for f in /usr/lib/*/rsocket/librspreload.so; do
	if [[ -e $f ]]; then RSPRELOAD=$f; fi
done
[[ -n $RSPRELOAD ]] || skip "librspreload.so (librdmacm1) not installed"
net_two_hosts 9000

failed=()

echo "== qperf RC tests (-cm1), one second each"
qperf -lp 19765 >"$TBRDMA_OUT/qperf.server.log" 2>&1 &
QPID=$!
defer "kill $QPID 2>/dev/null || true"
wait_for "ss -Hltn 'sport = :19765' | grep -q ." 10 || fail "qperf server does not listen"
for t in "rc_lat -m 8" "rc_bw -m 65536" "rc_rdma_write_bw -m 65536" \
	"rc_rdma_read_lat -m 8" "rc_compare_swap_mr"; do
	name=${t%% *}
	# shellcheck disable=SC2086
	if net_b timeout 60 qperf -lp 19765 -cm1 -t 1 $NET_IP_A $t \
		>"$TBRDMA_OUT/qperf-$name.log" 2>&1 &&
		# latency = X us, bw = X MB/sec, msg_rate = X K/sec: a number > 0
		awk '$1 ~ /^(latency|bw|msg_rate)$/ && $2 == "=" && $3 > 0 { ok = 1 }
			END { exit !ok }' "$TBRDMA_OUT/qperf-$name.log"; then
		echo "   $name: $(awk '$2 == "=" && $1 != "msg_size" { printf "%s %s %s  ", $1, $3, $4 }' \
			"$TBRDMA_OUT/qperf-$name.log")"
	else
		echo "--- qperf $t:"; cat "$TBRDMA_OUT/qperf-$name.log"
		failed+=("qperf $name")
	fi
done
kill "$QPID" 2>/dev/null

echo "== rstream (rsockets, data verified: 200 x 64 KiB, then 1000 x 64 B)"
net_pair rstream 7480 "rstream -b $NET_IP_A -p 7480 -S 65536 -C 200 -T v" \
	"rstream -s $NET_IP_A -p 7480 -S 65536 -C 200 -T v" || failed+=("rstream 64K")
net_pair rstream-small 7481 "rstream -b $NET_IP_A -p 7481 -S 64 -C 1000 -T v" \
	"rstream -s $NET_IP_A -p 7481 -S 64 -C 1000 -T v" || failed+=("rstream 64B")
tail -n 1 "$TBRDMA_OUT/rstream.client.log" | sed 's/^/   /'

echo "== riostream (rsockets' RDMA-write I/O mapping, data verified: 200 x 64 KiB)"
net_pair riostream 7482 "riostream -b $NET_IP_A -p 7482 -S 65536 -C 200 -T v" \
	"riostream -s $NET_IP_A -p 7482 -S 65536 -C 200 -T v" || failed+=(riostream)
tail -n 1 "$TBRDMA_OUT/riostream.client.log" | sed 's/^/   /'

echo "== iperf (2) under LD_PRELOAD=$RSPRELOAD (64 MiB from B to A)"
# The server serves until killed: started here, stopped after the client
LD_PRELOAD=$RSPRELOAD timeout 120 iperf -s -B "$NET_IP_A" -p 5301 \
	>"$TBRDMA_OUT/iperf.server.log" 2>&1 &
IPID=$!
defer "kill $IPID 2>/dev/null || true"
wait_cm_listen 5301 10 || echo "--- no rsockets listener on port 5301 yet"
before=$(net_counter tbr1 tx_bytes)
if net_b timeout 60 env LD_PRELOAD="$RSPRELOAD" iperf -c "$NET_IP_A" -p 5301 \
	-n 64M -l 128K >"$TBRDMA_OUT/iperf.client.log" 2>&1; then
	moved=$(($(net_counter tbr1 tx_bytes) - before))
	{ grep -E "sec .*Bytes" "$TBRDMA_OUT/iperf.client.log" || true; } | sed 's/^/   /'
	echo "   tbr1 tx_bytes grew by $moved"
	((moved >= 64 << 20)) || {
		echo "--- iperf did not go through rsockets (tbr1 sent $moved bytes)"
		failed+=("iperf rspreload")
	}
else
	echo "--- iperf client:"; tail -n 10 "$TBRDMA_OUT/iperf.client.log"
	failed+=("iperf rspreload")
fi
kill "$IPID" 2>/dev/null

((${#failed[@]} == 0)) || fail "failed: ${failed[*]}"
echo "qperf, rstream, riostream and iperf over rsockets work across the link"
