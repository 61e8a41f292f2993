#!/bin/bash
# Memory windows: tests/progs/mw. Type 1 (ibv_bind_mw) and type 2
# (IBV_WR_BIND_MW, ibv_wr_bind_mw) windows bound to an MR that grants no
# remote access itself: remote WRITE, READ and atomics through the
# window's rkey inside its range and rights only (canaries outside), type 2
# only through the QP it was bound through; LOCAL_INV, a peer's
# SEND_WITH_INV (IBV_WC_WITH_INV on the receive), a rebind, a zero-length
# bind and dealloc revoke the rkey; each bad bind (no MW_BIND on the MR,
# outside the MR, zero-length type 2, a still-bound type 2, another PD's or
# a forged window) completes with IBV_WC_MW_BIND_ERR; dereg of an MR with
# a bound window is EBUSY. First on the loopback device, then across a
# link (requester on tbr0, windows on tbr1, two namespaces).
# timeout: 400
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

prog=$TBR_PROGS/mw
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
failed=()

echo "== loopback ($TBR_TEST_DEV)"
verbs_setup
before=$(verbs_resources)
"$prog" -d "$TBR_TEST_DEV" -g "$TBR_TEST_GID" || failed+=("mw on $TBR_TEST_DEV")
after=$(verbs_resources)
echo "device objects before: $before"
echo "device objects after:  $after"
[[ $after == "$before" ]] || failed+=("objects left behind on $TBR_TEST_DEV")
verbs_teardown || failed+=("the device/module did not go away")

if ! verbs_is_rxe; then
	echo "== across a link: requester on tbr0, windows on tbr1"
	net_two_hosts 9000
	"$prog" -d tbr0 -g "$NET_GID_A" --dev2 tbr1 --gid2 "$NET_GID_B" ||
		failed+=("mw across tbr0 -> tbr1")
	echo "counters tbr1: $(rdma statistic show link tbr1/1)"
fi
((${#failed[@]} == 0)) || fail "failed: $(printf '[%s] ' "${failed[@]}")"
echo "memory windows hold"
