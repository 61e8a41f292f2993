#!/bin/bash
# Per-device object limits (tests/progs/limits): PDs, CQs, QPs, MRs, SRQs
# and AHs are allocated on a fresh loopback device until it refuses; the
# count must be exactly query_device's maximum less what the kernel holds
# (counted here with `rdma resource`), the refusal ENOMEM, and a free must
# make room for the next one.  WR depths, SGEs, inline data and pinned
# memory are checked by 140-verbs-extra.
# timeout: 600
source "$(dirname "$0")/lib.sh"

prog=$TBRDMA_ROOT/tests/progs/limits
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
tbr_load_core
defer tbr_rmmod
tbr_insmod
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
rdma link add tlim type tbrdma netdev lo || fail "rdma link add failed"
defer 'rdma link delete tlim 2>/dev/null || true'

# in_use KIND — objects of KIND the kernel already holds on tlim.  The GSI
# QP (number 1) is outside the range user QP numbers come from.  (An rdma
# tool that cannot list a kind lists nothing: on a fresh device that is 0.)
in_use() {
	{ rdma resource show "$1" dev tlim 2>/dev/null || true; } |
		awk -v k="$1" '$0 ~ /dev tlim / && !(k == "qp" && / lqpn 1 /) { n++ } END { print n + 0 }'
}
# A PD the kernel allocates (the MAD layer's) gets an MR of its own from
# the core (get_dma_mr: we have no global local_dma_lkey), which restrack
# does not list but which counts against max_mr.
kernel_pds() {
	{ rdma resource show pd dev tlim 2>/dev/null || true; } | grep -c 'comm \[' || true
}
# counts — KIND=IN_USE, a line per kind: what the kernel holds on tlim.
counts() {
	local k
	for k in pd cq qp srq; do echo "$k=$(in_use "$k")"; done
	echo "mr=$(($(in_use mr) + $(kernel_pds)))"
	echo "ah=0"	# restrack does not list AHs; nothing has sent a MAD yet
}
before=$(counts)
# TBR_LIMITS_KINDS: the kinds to exhaust (make check-debug exhausts fewer:
# all six took 40 minutes on its kernel).
args=()
for k in ${TBR_LIMITS_KINDS:-pd cq qp mr srq ah}; do
	args+=("$(grep "^$k=" <<<"$before")") || fail "TBR_LIMITS_KINDS: unknown kind $k"
done
echo "# in use by the kernel: ${args[*]}"
"$prog" tlim "${args[@]}" || fail "limits"

# Everything the program held is gone again.
after=$(counts)
[[ $after == "$before" ]] ||
	fail "objects left behind: $(tr '\n' ' ' <<<"$after")(before: $(tr '\n' ' ' <<<"$before"))"
rdma link delete tlim || fail "rdma link delete failed"
