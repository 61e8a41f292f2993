#!/bin/bash
# The reliable transport under a bad link: tc netem on both ends of the
# veth pair reorders, duplicates and corrupts frames (one at a time). The
# integrity test (every byte compared, atomics against a model), rping -V
# and ibv_rc_pingpong -c must still complete with correct data, and the
# counters must show the recovery (retransmissions, checksum drops).
# Random-size operations with atomics, 600 per fault (231-net-loss moves
# bulk data under loss combined with reordering, duplication and
# corruption; 1500 here made this one of the longest selftests, 81 s).
# timeout: 900
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd tc rping ibv_rc_pingpong
prog=$TBR_PROGS/integrity
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
tbr_modprobe sch_netem || skip "no sch_netem"
net_two_hosts 9000

# Loss alone is not here: 231-net-loss runs 1, 5 and 10 % loss, each with
# reordering and duplication or with corruption.
faults=(
	"delay 1ms reorder 25% 50%"
	"duplicate 5%"
	"corrupt 2%"
)
failed=()
PORT=18800
seed=7
for f in "${faults[@]}"; do
	echo "== netem $f (both directions)"
	# shellcheck disable=SC2086
	tc qdisc replace dev tbv0 root netem $f || fail "tc netem $f"
	# shellcheck disable=SC2086
	net_b tc qdisc replace dev tbv1 root netem $f || fail "tc netem $f (B)"
	re0=$(net_counter tbr1 retransmits)
	cs0=$(net_counter tbr0 rx_checksum_errors)

	seed=$((seed + 1))
	timeout 300 "$prog" -d tbr0 -g "$NET_GID_A" --dev2 tbr1 --gid2 "$NET_GID_B" \
		--seed $seed --ops 600 --procs 2 --qps 2 --max-size 256K \
		--timeout 240 --stall 60 >"$TBRDMA_OUT/integrity-$seed.log" 2>&1 ||
		{ tail -n 20 "$TBRDMA_OUT/integrity-$seed.log"; failed+=("integrity/$f"); }
	tail -n 1 "$TBRDMA_OUT/integrity-$seed.log" | sed 's/^/   /'

	PORT=$((PORT + 1))
	run_pair "rc-$PORT" 120 "ibv_rc_pingpong -d tbr0 -g $NET_GID_A -c -p $PORT -s 65536 -n 20" \
		"ip netns exec $NET_NS ibv_rc_pingpong -d tbr1 -g $NET_GID_B -c -p $PORT -s 65536 -n 20 $NET_IP_A" ||
		failed+=("rc_pingpong/$f")

	lossy=0
	[[ $f == corrupt* ]] && lossy=1
	rping_pair "$PORT" $lossy 10 20000 || failed+=("rping/$f")

	re1=$(net_counter tbr1 retransmits)
	cs1=$(net_counter tbr0 rx_checksum_errors)
	echo "   tbr1 retransmits +$((re1 - re0)), tbr0 checksum drops +$((cs1 - cs0))"
	[[ $f != corrupt* ]] || ((cs1 > cs0)) || failed+=("no checksum drops counted under $f")
	tc qdisc del dev tbv0 root
	net_b tc qdisc del dev tbv1 root
done
echo "counters tbr0: $(rdma statistic show link tbr0/1)"
echo "counters tbr1: $(rdma statistic show link tbr1/1)"
((${#failed[@]} == 0)) || fail "failed: $(printf '[%s] ' "${failed[@]}")"
echo "every byte arrived intact under every fault"
