#!/bin/bash
# perftest over the verbs data path, server and client on the same device
# (loopback): every test program (write/read/send/atomic, bw and lat) over
# all sizes (-a), plus variants that take other provider and kernel paths:
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

# PROGRAM ARGS... per run; -n iterations (perftest needs >= 5). The eight
# programs run over all sizes (-a: 2 B..8 MiB; atomics are 8 B only); the
# variants use a few sizes to keep the time down.
runs=(
	"ib_write_bw -a -n 10"
	"ib_write_lat -a -n 10"
	"ib_read_bw -a -n 10"
	"ib_read_lat -a -n 10"
	"ib_send_bw -a -n 10"
	"ib_send_lat -a -n 10"
	"ib_atomic_bw -n 100"
	"ib_atomic_bw -n 100 -A CMP_AND_SWAP"
	"ib_atomic_lat -n 100"
	"ib_atomic_lat -n 100 -A CMP_AND_SWAP"
	# several QPs
	"ib_write_bw -q 4 -s 65536 -n 50"
	"ib_read_bw -q 4 -s 65536 -n 50"
	"ib_send_bw -q 4 -s 4096 -n 100"
	"ib_atomic_bw -q 4 -n 100"
	# inline sends and writes (-I: up to that many bytes inline)
	"ib_send_lat -s 100 -n 100 -I 128"
	"ib_write_lat -s 128 -n 100 -I 128"
	"ib_send_bw -s 64 -n 200 -I 64"
	"ib_write_bw -s 8 -n 200 -I 64"
	# post lists, CQ moderation (unsignalled WRs)
	"ib_write_bw -s 4096 -n 200 --post_list 8"
	"ib_send_bw -s 4096 -n 200 --post_list 8"
	"ib_send_bw -s 4096 -n 200 --cq-mod 16"
	"ib_write_bw -s 65536 -n 100 --cq-mod 8"
	# bidirectional
	"ib_write_bw -s 1048576 -n 10 -b"
	"ib_send_bw -s 65536 -n 50 -b"
	"ib_read_bw -s 65536 -n 50 -b"
	# shared receive queue
	"ib_send_bw -s 64 -n 200 --use-srq"
	"ib_send_bw -s 1048576 -n 10 --use-srq"
	# UC and UD
	"ib_write_bw -s 65536 -n 50 -c UC"
	"ib_send_bw -s 4096 -n 100 -c UC"
	"ib_send_lat -s 64 -n 100 -c UC"
	"ib_send_bw -a -n 10 -c UD"
	"ib_send_lat -s 4096 -n 100 -c UD"
	# completion events instead of polling (perftest: not for WRITE)
	"ib_send_bw -s 65536 -n 50 -e"
	"ib_send_lat -s 64 -n 100 -e"
	"ib_read_lat -s 64 -n 100 -e"
	"ib_atomic_bw -n 100 -e"
)
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
