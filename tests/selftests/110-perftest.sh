#!/bin/bash
# perftest over the verbs data path, server and client on the same device
# (loopback): every test program (write/read/send/atomic, bw and lat), the
# latency programs over all sizes (-a; the bandwidth programs sweep in
# 210-net-perftest), plus variants that take other provider and kernel paths:
# several QPs, inline, post lists, CQ moderation, bidirectional, SRQ, UC,
# UD, completion events. Bounded iterations: this proves that every run
# completes, not performance. A failing run fails the test, output shown.
# Device: TBR_TEST_DEV (lib-verbs.sh), tbrdma loopback by default.
# timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"

require_cmd ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_send_bw \
	ib_send_lat ib_atomic_bw ib_atomic_lat
verbs_setup

# shellcheck disable=SC2034  # lib-perftest.sh reads it
PERFTEST_SWEEP=lat
source "$(dirname "$0")/lib-perftest.sh"
runs=("${PERFTEST_RUNS[@]}" "${PERFTEST_PROVIDER_RUNS[@]}")
PORT=18600
failed=()
for r in "${runs[@]}"; do
	read -r prog args <<<"$r"
	PORT=$((PORT + 1))	# a fresh port each run: no TIME_WAIT surprises
	cmd="$prog -d $TBR_TEST_DEV -x $TBR_TEST_GID -F -p $PORT $args"
	echo "== $prog $args"
	name=$prog${args// /}
	run_pair "$name" 120 "$cmd" "$cmd 127.0.0.1" || failed+=("$r")
done
((${#failed[@]} == 0)) || fail "${#failed[@]} of ${#runs[@]} runs failed: $(printf '[%s] ' "${failed[@]}")"
echo "all ${#runs[@]} perftest runs completed"
