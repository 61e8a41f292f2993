#!/bin/bash
# Memory isolation: tests/progs/isolation. Another process's memory cannot
# be read or written without a valid rkey (its exact keys through our own
# QPs, its window's key outside the window, neighbouring, forged and dead
# keys through its QP); an MR of another PD is refused as lkey and rkey;
# MR rights and QP access flags hold; a deregistered key is dead at once
# (no stale data, nothing lands after dereg returns, even with WRITEs
# queued); a reused MR index does not revive the old key. Every refusal is
# checked on the memory too (canaries). First on the loopback device, then
# across a link (tbr0 -> tbr1, two namespaces). badinput (130) covers the
# plain completion statuses of bad keys and rights; this adds processes,
# PDs, memory checks, dereg races and key reuse.
# timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

prog=$TBR_PROGS/isolation
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
failed=()
# TBR_ISOLATION_XFAIL=CASE,... reports known failures as TODO (none now).
opts=()
[[ -z ${TBR_ISOLATION_XFAIL:-} ]] || opts=(--xfail "$TBR_ISOLATION_XFAIL")
# TBR_ISOLATION_SKIP=CASE,... leaves cases out (make check-debug: key-reuse's
# 4 x 65,536 registrations take over 30 minutes on the debug kernel).
[[ -z ${TBR_ISOLATION_SKIP:-} ]] || opts+=(--skip "$TBR_ISOLATION_SKIP")

echo "== loopback ($TBR_TEST_DEV)"
verbs_setup
before=$(verbs_resources)
"$prog" -d "$TBR_TEST_DEV" -g "$TBR_TEST_GID" "${opts[@]}" || failed+=("isolation on $TBR_TEST_DEV")
after=$(verbs_resources)
echo "device objects before: $before"
echo "device objects after:  $after"
[[ $after == "$before" ]] || failed+=("objects left behind on $TBR_TEST_DEV")
verbs_teardown || failed+=("the device/module did not go away")

if ! verbs_is_rxe; then
	echo "== across a link: requester on tbr0, targets and victim processes on tbr1"
	net_two_hosts 9000
	"$prog" -d tbr0 -g "$NET_GID_A" --dev2 tbr1 --gid2 "$NET_GID_B" "${opts[@]}" ||
		failed+=("isolation across tbr0 -> tbr1")
	echo "counters tbr1: $(rdma statistic show link tbr1/1)"
fi
((${#failed[@]} == 0)) || fail "failed: $(printf '[%s] ' "${failed[@]}")"
echo "isolation holds"
