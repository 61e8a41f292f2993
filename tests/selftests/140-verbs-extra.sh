#!/bin/bash
# Verbs the other data-path tests leave out (tests/progs/verbs_extra): CQ
# resize with unpolled CQEs, the SRQ limit event, completion events with
# solicited-only arming, RLIMIT_MEMLOCK without CAP_IPC_LOCK, device limits,
# completion timestamps on an extended CQ.
# Then, under strace, the fast path: posting receives and polling make no
# write()/ioctl() at all, posting sends at most one doorbell per post_send
# call: an ioctl on the doorbell file (kmod/doorbell.c), never a write().
# Every object must be gone and the module must unload.
# timeout: 150
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"

prog=$TBR_PROGS/verbs_extra
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
verbs_setup

rc=0
before=$(verbs_resources)
timeout 100 "$prog" -d "$TBR_TEST_DEV" -g "$TBR_TEST_GID" || rc=$?
((rc == 0)) || echo "verbs_extra: exit $rc"

# The fast path: the program marks phase N with close(-100N). strace
# records every system call; count write(), ioctl() and the rest per phase.
# Phase 1 = 1000 post_recv, 2 = 100 post_send of 10 WRs, 3 = polling 2000
# CQEs (the program's deadline clock may make clock_gettime calls when the
# guest clock has no vDSO: those are the test's own).
if ! command -v strace >/dev/null; then
	echo "SKIP (fast path): strace not installed"
else
	trace=$TBRDMA_OUT/fastpath.strace
	frc=0
	timeout 60 strace -f -o "$trace" \
		"$prog" -d "$TBR_TEST_DEV" -g "$TBR_TEST_GID" --fastpath || frc=$?
	phase=0
	declare -A n=() other=()
	re='^[0-9]+ +([a-z_0-9]+)\('
	while read -r line; do
		case $line in
		*close\(-100[1-4]\)*) phase=${line#*close(-100}; phase=${phase%%)*} ;;
		*" write("*) n[w$phase]=$((${n[w$phase]:-0} + 1)) ;;
		*" ioctl("*)
			n[i$phase]=$((${n[i$phase]:-0} + 1))
			# TBRDMA_IOCTL_SQ_DOORBELL = _IO(0xdb, 1)
			[[ $line != *"0xdb, 0x1"* ]] || n[d$phase]=$((${n[d$phase]:-0} + 1)) ;;
		*)
			if [[ $line =~ $re ]] && ((phase >= 1 && phase <= 3)); then
				other[$phase]+=" ${BASH_REMATCH[1]}"
			fi ;;
		esac
	done <"$trace"
	w1=${n[w1]:-0} w2=${n[w2]:-0} w3=${n[w3]:-0}
	i1=${n[i1]:-0} i2=${n[i2]:-0} i3=${n[i3]:-0} d2=${n[d2]:-0}
	o1=${other[1]:-} o2=${other[2]:-} o3=$(tr ' ' '\n' <<<"${other[3]:-}" | grep -v '^clock_gettime$' | tr '\n' ' ' || true)
	o3=${o3// /}
	echo "fastpath: post_recv x1000: write $w1 ioctl $i1 other [${o1:0:200}]"
	echo "fastpath: post_send x100 (10 WRs each): write $w2 ioctl $i2 other [${o2:0:200}]"
	echo "fastpath: poll 2000 CQEs: write $w3 ioctl $i3 other [${other[3]:0:200}]"
	echo "fastpath: full trace in \$TBRDMA_OUT/fastpath.strace"
	fok() { if eval "$1"; then echo "ok - fastpath: $2"; else echo "not ok - fastpath: $2"; rc=1; fi; }
	fok '((frc == 0))' "work load ran (exit $frc)"
	fok '((phase == 4))' "phase markers 1..4 seen (last: $phase)"
	fok '((w1 == 0 && i1 == 0)) && [[ -z $o1 ]]' "post_recv made no system call"
	fok '((w2 == 0 && i2 >= 1 && i2 <= 100 && d2 == i2)) && [[ -z $o2 ]]' \
		"post_send: at most 1 doorbell per call, the doorbell file's ioctl ($d2 of $i2 ioctls for 100 calls, $w2 writes), nothing else"
	fok '((w3 == 0 && i3 == 0)) && [[ -z $o3 ]]' "poll_cq made no system call"
fi

after=$(verbs_resources)
echo "device objects before: $before"
echo "device objects after:  $after"
[[ $after == "$before" ]] || fail "objects left behind on $TBR_TEST_DEV"
((rc == 0)) || fail "verbs_extra"
verbs_teardown || fail "the device/module did not go away after the test"
echo "device removed, module unloaded"
