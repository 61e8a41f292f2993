#!/bin/bash
# Pulling the cable: with traffic running, the link goes down (both
# programs must fail promptly, not hang), comes back (new connections
# work), then the netdev is deleted under traffic and beside an idle
# process that holds the device (the deletion does not wait for either,
# the devices go away, the programs exit, nothing oopses) and everything
# can be rebuilt.
# The harness fails the test on any kernel warning.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd ibv_rc_pingpong
net_two_hosts 9000
# A failed test must not leave its programs behind.
defer 'pkill -KILL -x ibv_rc_pingpong || true'

# DEV has an ibv_rc_pingpong QP that is connected (RTS); the core's own
# GSI QP is always in RTS.
connected() {
	rdma resource show qp link "$1"/1 | grep ' type RC state RTS ' |
		grep -q ' comm ibv_rc_pingpong'
}

# traffic PORT — a long pingpong in the background; sets SPID and CPID.
traffic() {
	ibv_rc_pingpong -d tbr0 -g "$NET_GID_A" -p "$1" -s 65536 -n 1000000 \
		>"$TBRDMA_OUT/long-$1.server.log" 2>&1 &
	SPID=$!
	wait_listen "$1" 20 "$SPID" || fail "server did not listen"
	net_b ibv_rc_pingpong -d tbr1 -g "$NET_GID_B" -p "$1" -s 65536 -n 1000000 \
		"$NET_IP_A" >"$TBRDMA_OUT/long-$1.client.log" 2>&1 &
	CPID=$!
	# Not pid_exited: a client that failed at once would leave the
	# server waiting, which looks the same as traffic for a while.
	if ! wait_for "connected tbr0 && connected tbr1" 30; then
		cat "$TBRDMA_OUT"/long-"$1".*.log
		fail "traffic did not start"
	fi
	sleep 2
}

# gone_within SECS PID... — every PID exits within SECS, with an error.
gone_within() {
	local secs=$1 pid rc
	shift
	for pid; do
		if ! wait_for "pid_exited $pid" "$secs"; then
			kill -9 "$pid"
			fail "process $pid still running $secs s after the link loss"
		fi
		rc=0
		wait "$pid" || rc=$?
		((rc != 0)) || fail "process $pid exited 0 although its link died"
		echo "   process $pid: exit status $rc"
	done
}

echo "== link down under traffic"
traffic 18900
ip link set tbv0 down
gone_within 30 "$SPID" "$CPID"
# What each program said besides its addresses (stdout, buffered, lands
# after the error). Only printed: under pipefail a grep that matched
# nothing here ended the test with no message (make check, 11-27).
for log in "$TBRDMA_OUT"/long-18900.*.log; do
	echo "   ${log##*/}: $(grep -v ' address: ' "$log" | tr '\n' ' ')"
done
[[ $(</sys/class/infiniband/tbr0/ports/1/state) == *DOWN* ]] || fail "tbr0 port not DOWN"

echo "== link up again: new connections work"
ip link set tbv0 up
wait_for "[[ \$(</sys/class/infiniband/tbr0/ports/1/state) == *ACTIVE ]]" 10 || fail "tbr0 not ACTIVE again"
PORT=18901
run_pair relink 60 "ibv_rc_pingpong -d tbr0 -g $NET_GID_A -c -p $PORT -s 4096 -n 50" \
	"ip netns exec $NET_NS ibv_rc_pingpong -d tbr1 -g $NET_GID_B -c -p $PORT -s 4096 -n 50 $NET_IP_A" ||
	fail "pingpong after the link came back"

echo "== netdev deleted under traffic and beside an idle holder"
traffic 18902
# Holds tbr0 and never exits by itself: before the driver let the core
# disassociate contexts, a process like it (a server still waiting for its
# peer) kept the netdev from going away, and `ip link del` waited for ever.
holder_start holder tbr0 20
finishes_within 30 ip link del tbv0
gone_within 30 "$SPID" "$CPID"
holder_done holder
wait_for "[[ ! -e /sys/class/infiniband/tbr0 && ! -e /sys/class/infiniband/tbr1 ]]" 20 ||
	fail "devices still there after their netdevs were deleted"
ip netns del "$NET_NS"
tbr_rmmod || fail "module still busy after the devices went away"

echo "== everything rebuilt"
net_two_hosts 9000
PORT=18903
run_pair rebuilt 60 "ibv_rc_pingpong -d tbr0 -g $NET_GID_A -c -p $PORT -s 4096 -n 50" \
	"ip netns exec $NET_NS ibv_rc_pingpong -d tbr1 -g $NET_GID_B -c -p $PORT -s 4096 -n 50 $NET_IP_A" ||
	fail "pingpong after rebuilding"
echo "link loss handled"
