#!/bin/bash
# Documentation/admin-guide.md, followed as a newcomer would: its "Trying it
# on one machine" commands, taken from the guide itself and run as written
# in the source tree -- build, load, two network namespaces joined by a veth
# as two machines, a tbrdma device on each end, `rping -V` across them and
# the runner with one rank on each -- then the guide's clean-up.  Nothing
# else is set up for it (`make install` has its own tests: 70-install.sh and
# tests/host/test-admin-install.sh).
# timeout: 600
source "$(dirname "$0")/lib.sh"

guide=$TBRDMA_ROOT/Documentation/admin-guide.md
require_cmd rping rdma make
tbr_needs_tree_build

# The ```sh blocks between <!-- NAME --> and <!-- /NAME -->.
guide_block() {
	awk -v first="<!-- $1 -->" -v last="<!-- /$1 -->" '
		$0 == first { inside = 1; next }
		$0 == last { inside = 0 }
		inside && !/^```/ { print }' "$guide"
}
walkthrough=$(guide_block walkthrough)
cleanup=$(guide_block walkthrough-cleanup)
[[ -n $walkthrough && -n $cleanup ]] || fail "no walkthrough in $guide"
# Each command traced with the seconds since the start (bash takes no PS4
# from the environment when run as root).
printf 'PS4="+ [\\${SECONDS}s] "\n%s\n' "$walkthrough" >"$TBRDMA_OUT/walkthrough.sh"
printf '%s\n' "$cleanup" >"$TBRDMA_OUT/cleanup.sh"

[[ ! -d /sys/module/tbrdma ]] || fail "tbrdma loaded before the test"
unset RDMAV_DRIVERS
cd "$TBRDMA_ROOT"
# The guide's clean-up, once: at the end, or when the test fails half-way.
cleaned=""
guide_cleanup() {
	[[ -z $cleaned ]] || return 0
	cleaned=1
	(cd "$TBRDMA_ROOT" && bash -x "$TBRDMA_OUT/cleanup.sh") >"$TBRDMA_OUT/cleanup.log" 2>&1 ||
		{ cat "$TBRDMA_OUT/cleanup.log"; return 1; }
}
defer guide_cleanup

rc=0
bash -euxo pipefail "$TBRDMA_OUT/walkthrough.sh" >"$TBRDMA_OUT/walkthrough.log" 2>&1 || rc=$?
# The build's output is long and not the point; show the rest.
{ grep '^+ ' "$TBRDMA_OUT/walkthrough.log" || true; } | sed '/insmod tbrdma.ko$/Q' || true
sed -n '/^+ .*insmod tbrdma.ko$/,$p' "$TBRDMA_OUT/walkthrough.log"
[[ $rc -eq 0 ]] || fail "the walkthrough stopped with exit code $rc (log: $TBRDMA_OUT/walkthrough.log)"

log=$TBRDMA_OUT/walkthrough.log
grep -q '^tbr1: attached to tb-node1 (netdev mode)$' "$log" || fail "tbr1 not attached"
grep -q '^tbr2: attached to tb-node2 (netdev mode)$' "$log" || fail "tbr2 not attached"
grep -qE 'state:[[:space:]]+PORT_ACTIVE' "$log" || fail "ibv_devinfo did not show tbr1 ACTIVE"
grep -qE '::ffff:10\.77\.0\.1 \(RoCE v2\)' "$log" || fail "no GID for 10.77.0.1 in the status"
grep -q 'ping data: rdma-ping-9: ' "$log" || fail "rping did not complete 10 verified pings"
grep -q '^tprun: 2 ranks, rdma (tbr1 ' "$log" || fail "tprun did not run 2 ranks over tbr1"
grep -q '^tokens: ' "$log" || fail "tprun generated no tokens"
grep -q '^tbr1 ' "$log" || fail "no stats line for tbr1"

# The devices counted the traffic and saw each other (the kernel's counters
# and peer table, through the tool the walkthrough built).
source "$TBRDMA_ROOT/tests/selftests/lib-admin.sh"
mac2=$(ip -n node2 -j link show tb-node2 | "$TBR_PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')
json=$(ip netns exec node1 "$TBR_TOOL" status --json tbr1) || fail "status --json tbr1"
json_assert "tbr1 after rping and tprun" "$json" "
d = s['devices'][0]
assert d['netdev'] == 'tb-node1' and d['mtu'] == 4096 and d['state'] == 'ACTIVE', d
assert d['counters']['tx_packets'] > 0 and d['counters']['rx_packets'] > 0, d['counters']
assert d['counters']['tx_ops'] > 0 and d['counters']['rx_bytes'] > 0, d['counters']
assert [p['mac'] for p in d['peers']] == ['$mac2'], d['peers']
assert d['peers'][0]['rx_packets'] > 0, d['peers']
"

# The clean-up leaves nothing behind.
guide_cleanup || fail "the guide's clean-up failed"
[[ ! -d /sys/module/tbrdma ]] || fail "tbrdma still loaded after the clean-up"
[[ -z $(ip netns list) ]] || fail "namespaces left: $(ip netns list)"
