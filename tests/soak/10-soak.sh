#!/bin/bash
# The soak `make soak` runs in the guest (not part of `make check`): two
# hosts across a veth pair, SOAK_INSTANCES integrity programs at once, each
# 4 processes x 32 RC QP pairs (with the default 4 instances: 1024 QPs, 16
# processes), a seeded random mix of every opcode up to SOAK_MAX_SIZE with
# every byte checked, in rounds until SOAK_SECS have passed.  Each round
# puts another tc netem fault on both ends of the link.  Then the devices
# are deleted and the module unloaded, and the slab caches must be back
# where they started (no cache more than SOAK_SLAB_SLACK objects above its
# start: the rest of the kernel moves a few hundred; one object leaked per
# QP would be 1024 a round).  The harness fails the run on any warning in
# dmesg.
# Knobs (`make soak VAR=...` passes them in through a wrapper script, as
# the host's environment does not reach the guest): SOAK_SECS (600),
# SOAK_INSTANCES (4), SOAK_OPS (ops per instance per round, 40000),
# SOAK_SEED (1), SOAK_SLAB_SLACK (1024), SOAK_ACK_TIMEOUT (20),
# SOAK_MAX_SIZE (4K), SOAK_FAULTS (see below).
# timeout: 7200
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-net.sh"

secs=${SOAK_SECS:-600}
instances=${SOAK_INSTANCES:-4}
ops=${SOAK_OPS:-40000}
seed=${SOAK_SEED:-1}
slack=${SOAK_SLAB_SLACK:-1024}
prog=$TBR_PROGS/integrity
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
procs=4 qps=32	# per instance; 2 QPs per pair
# The protocol has no congestion control (Documentation/wire-protocol.md,
# "Congestion"): what 1024 QPs keep in flight must drain within their ACK
# timeout.  Each QP keeps up to 16 WQEs in flight; with messages up to
# 4 KiB that is 64 MiB, under a second of queue in this emulated guest,
# against an ACK timeout of 20 (4.3 s).  With 64 KiB messages frames
# waited seconds in the queues and QPs ran out of retries.
ack_timeout=${SOAK_ACK_TIMEOUT:-20}
max_size=${SOAK_MAX_SIZE:-4K}

# softnet_drops — frames the kernel dropped because a CPU's receive
# backlog was full (netdev_max_backlog), all CPUs.
softnet_drops() {
	local _ d s=0
	while read -r _ d _; do s=$((s + 0x$d)); done </proc/net/softnet_stat
	echo $s
}

# slab_snapshot — "cache active_objs" for every slab cache.  Dentries and
# inodes are dropped first: they follow file activity, not our module.
slab_snapshot() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	awk 'NR > 2 { print $1, $2 }' /proc/slabinfo | sort
}

# 1024 busy QPs overrun a host's default queues: netem's (1000 frames,
# the usual txqueuelen) and the receiving CPU's backlog from a veth
# (netdev_max_backlog, 1000).  Tail drops there pile up on top of netem's
# losses.  The soak is about faults and leaks at scale: the queues are
# made deep enough to hold what is in flight (see ack_timeout below).
sysctl -qw net.core.netdev_max_backlog=65536
qlimit=100000

tbr_load_core
tbr_modprobe sch_netem veth rdma_ucm
# Once before the snapshot, so the first-use allocations of namespaces,
# veth and netem are not counted against us.
net_two_hosts 9000
net_teardown || fail "teardown of the warm-up"
sleep 2
slab_start=$(slab_snapshot)

net_two_hosts 9000
faults=(
	"loss 1%"
	"delay 1ms reorder 25% 50%"
	"duplicate 5%"
	"corrupt 1%"
	"loss 5%"
	"loss 0.5% duplicate 1% reorder 10% 50% delay 200us"
)
# SOAK_FAULTS="netem args;netem args;..." replaces the list ("delay 0": none).
[[ -z ${SOAK_FAULTS:-} ]] || IFS=';' read -ra faults <<<"$SOAK_FAULTS"
echo "== soak: $secs s, $instances instances x $procs processes x $qps QP pairs" \
	"= $((instances * procs * qps * 2)) QPs, $ops ops per instance per round"
end=$((SECONDS + secs))
round=0
total_ops=0
while ((SECONDS < end)); do
	f=${faults[round % ${#faults[@]}]}
	# shellcheck disable=SC2086  # netem's arguments
	tc qdisc replace dev tbv0 root netem $f limit $qlimit || fail "tc netem $f"
	# shellcheck disable=SC2086
	net_b tc qdisc replace dev tbv1 root netem $f limit $qlimit || fail "tc netem $f (B)"
	pids=()
	t0=$SECONDS
	for ((i = 0; i < instances; i++)); do
		s=$((seed + round * instances + i))
		"$prog" -d tbr0 -g "$NET_GID_A" --dev2 tbr1 --gid2 "$NET_GID_B" \
			--seed "$s" --ops "$ops" --procs $procs --qps $qps --max-size "$max_size" \
			--timeout 1800 --stall 120 --ack-timeout "$ack_timeout" \
			>"$TBRDMA_OUT/soak-$s.log" 2>&1 &
		pids+=($!)
	done
	bad=0
	for ((i = 0; i < instances; i++)); do
		s=$((seed + round * instances + i))
		if ! wait "${pids[i]}"; then
			tail -n 30 "$TBRDMA_OUT/soak-$s.log"
			echo "round $round: integrity seed $s failed under netem '$f'"
			bad=1
		fi
	done
	echo "round $round: netem '$f': $((instances * ops)) ops in $((SECONDS - t0)) s," \
		"retransmits tbr0 $(net_counter tbr0 retransmits) tbr1 $(net_counter tbr1 retransmits)," \
		"bad frames $(net_counter tbr0 rx_bad_frames)/$(net_counter tbr1 rx_bad_frames)," \
		"stale frames $(net_counter tbr0 rx_stale_frames)/$(net_counter tbr1 rx_stale_frames)," \
		"checksum drops $(net_counter tbr0 rx_checksum_errors)/$(net_counter tbr1 rx_checksum_errors)," \
		"ACK timeouts $(net_counter tbr0 ack_timeouts)/$(net_counter tbr1 ack_timeouts)," \
		"backlog drops $(softnet_drops)"
	[[ $bad -eq 0 ]] || fail "integrity failed in round $round"
	total_ops=$((total_ops + instances * ops))
	round=$((round + 1))
done
echo "== $round rounds, $total_ops ops, every byte checked, in $((SECONDS - end + secs)) s"
echo "(counters are totals since the devices were made)"
rdma statistic show link tbr0/1
rdma statistic show link tbr1/1

echo "== device delete and unload"
net_teardown || fail "teardown (device delete, module unload)"
[[ ! -d /sys/module/tbrdma ]] || fail "tbrdma still loaded"
sleep 5	# RCU-deferred frees and the namespace's cleanup work
slab_end=$(slab_snapshot)
grown=$(join <(echo "$slab_start") <(echo "$slab_end") |
	awk -v slack="$slack" '$3 - $2 > slack { printf "%s %d -> %d\n", $1, $2, $3 }')
# A cache that did not exist at the start (one a module created) must be gone.
new=$(join -v 2 <(echo "$slab_start") <(echo "$slab_end") | awk '$2 > 0')
echo "slab caches more than $slack objects above their start: ${grown:-none}"
echo "slab caches that are new and not empty: ${new:-none}"
[[ -z $grown && -z $new ]] || fail "slab counts did not come back"
