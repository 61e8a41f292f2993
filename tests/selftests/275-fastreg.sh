#!/bin/bash
# Fast registration as a kernel consumer uses it (tests/kfastreg): alloc_mr,
# map_mr_sg with a first-byte offset, REG_MR with the consumer's key byte,
# the peer's WRITE/READ through the rkey, bounds, a wrong key, REG_MR of a
# VALID MR, LOCAL_INV, the invalidated rkey failing remotely, a read-only
# registration, SEND_WITH_INV (IB_WC_WITH_INVALIDATE, ex.invalidate_rkey)
# and its errors, another PD's MR. On a loopback device, then between two
# devices across a veth pair (the network transport).
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-kstorage.sh"

ko=$TBRDMA_MODDIR/tests/kfastreg/tbrdma_kfastreg.ko
[[ -f $ko ]] || fail "$ko not built (make test-progs)"

# run_kfastreg DEV_A DEV_B — load the test module; it never stays loaded:
# ECANCELED means every check passed.
run_kfastreg() {
	local out seen
	seen=$(dmesg | wc -l)
	insmod "$ko" dev_a="$1" dev_b="$2" 2>"$TBRDMA_OUT/insmod.err" || true
	out=$(dmesg | tail -n +$((seen + 1)) | grep 'kfastreg: ' |
		sed 's/^\[[^]]*\] kfastreg: //')
	sed 's/^/   /' <<<"$out"
	grep -q "Operation canceled" "$TBRDMA_OUT/insmod.err" ||
		fail "kfastreg on $1/$2: $(cat "$TBRDMA_OUT/insmod.err")"
	grep -q '^not ok' <<<"$out" && fail "kfastreg on $1/$2: a check failed"
	grep -qE '^[0-9]+ checks, 0 failed' <<<"$out" || fail "kfastreg on $1/$2: no summary"
}

ks_two_devices 9000
rdma link add tbks_lo type tbrdma netdev lo || fail "loopback device"
defer "rdma link delete tbks_lo"
wait_for "[[ \$(</sys/class/infiniband/tbks_lo/ports/1/state) == *ACTIVE ]]" 10 ||
	fail "tbks_lo: port not ACTIVE"

echo "== loopback device"
run_kfastreg tbks_lo tbks_lo
echo "== across the veth pair (MR on tbks_a, peer on tbks_b)"
run_kfastreg tbks_a tbks_b
echo "fast registration follows the verbs spec on both transports"
