# lib-perftest.sh — the perftest matrix the loopback (110) and the
# two-host (210) tests both run: every program over all sizes and the
# variants that take other provider and kernel paths.
# shellcheck shell=bash

# PROGRAM ARGS... per run; -n iterations (perftest needs >= 5).  Each of
# the six WRITE/READ/SEND programs runs over all sizes (-a: 2 B..8 MiB) in
# one of the two tests and at one size in the other: the caller sets
# PERFTEST_SWEEP to "bw" or "lat", the programs it names sweep.  (A sweep
# takes 9-16 s in the TCG guest; every one in both tests took 143 s.)
# Atomics are 8 B only; the variants use a few sizes to keep the time down.
perftest_one() {
	if [[ $1 == *_"${PERFTEST_SWEEP:?}" ]]; then
		echo "$1 -a -n 5"
	else
		# Not a power of two, several frames at every MTU.
		echo "$1 -s 1000000 -n 5"
	fi
}
PERFTEST_RUNS=(
	"$(perftest_one ib_write_bw)"
	"$(perftest_one ib_write_lat)"
	"$(perftest_one ib_read_bw)"
	"$(perftest_one ib_read_lat)"
	"$(perftest_one ib_send_bw)"
	"$(perftest_one ib_send_lat)"
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
	"ib_send_bw -a -n 5 -c UD"
	"ib_send_lat -s 4096 -n 100 -c UD"
	# completion events instead of polling (perftest: not for WRITE)
	"ib_send_bw -s 65536 -n 50 -e"
	"ib_send_lat -s 64 -n 100 -e"
	"ib_read_lat -s 64 -n 100 -e"
	"ib_atomic_bw -n 100 -e"
)
# Post lists and CQ moderation (unsignalled WRs): the provider's batching,
# the same on every device; 110 runs them.
PERFTEST_PROVIDER_RUNS=(
	"ib_write_bw -s 4096 -n 200 --post_list 8"
	"ib_send_bw -s 4096 -n 200 --post_list 8"
	"ib_send_bw -s 4096 -n 200 --cq-mod 16"
	"ib_write_bw -s 65536 -n 100 --cq-mod 8"
)
