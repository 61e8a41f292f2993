#!/bin/bash
# The reliable transport under a bad link: tc netem on both ends of the
# veth pair drops, reorders, duplicates and corrupts frames. The
# integrity test (every byte compared, atomics against a model), rping -V
# and ibv_rc_pingpong -c must still complete with correct data, and the
# counters must show the recovery (retransmissions, checksum drops).
# timeout: 900
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd tc rping ibv_rc_pingpong
prog=$TBR_PROGS/integrity
[[ -x $prog ]] || fail "$prog not built (make test-progs)"
tbr_modprobe sch_netem || skip "no sch_netem"
net_two_hosts 9000

faults=(
	"loss 1%"
	"loss 5%"
	"delay 1ms reorder 25% 50%"
	"duplicate 5%"
	"corrupt 2%"
)
# rping -V, 30 pings of 20000 bytes; the client checks every byte.  The
# server leaves when the client's disconnect request (a CM MAD) arrives.
# If the fault eats that DREQ, it is never sent again: the client exits
# at once, and the kernel's CM cancels a DREQ's retries when its ID is
# destroyed.  The server would then wait for a next ping for ever.  That
# is the connection's teardown, not its data: so once the client has
# passed, the server gets 15 s, and otherwise passes if it served every
# ping (-v prints each one) -- under a fault that loses frames (LOSSY=1);
# where netem loses nothing, a missed disconnect is our bug and fails.
# rping_pair PORT LOSSY
rping_pair() {
	local port=$(($1 + 1000)) slog=$TBRDMA_OUT/rping-$1.server.log spid served
	local pings=30 args
	args="-a $NET_IP_A -p $port -C $pings -S 20000 -V"
	# shellcheck disable=SC2086  # args is a word list on purpose
	timeout 120 rping -s -v $args >"$slog" 2>&1 &
	spid=$!
	wait_cm_listen $port 30 || echo "   no rping listener yet"
	# shellcheck disable=SC2086
	if ! net_b timeout 120 rping -c $args >"$TBRDMA_OUT/rping-$1.client.log" 2>&1; then
		echo "   rping client failed: $(tail -n 3 "$TBRDMA_OUT/rping-$1.client.log")"
		wait $spid
		return 1
	fi
	if wait_for "pid_exited $spid" 15; then
		wait $spid && return 0
		echo "   rping server failed: $(grep -v '^server ping data' "$slog" | tail -n 3)"
		return 1
	fi
	kill $spid
	wait $spid
	served=$(grep -c '^server ping data: ' "$slog")
	echo "   rping server: served $served pings, then saw no disconnect (DREQ lost?)"
	((served == pings && $2))
}

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
		--seed $seed --ops 1500 --procs 2 --qps 2 --max-size 256K \
		--timeout 240 --stall 60 >"$TBRDMA_OUT/integrity-$seed.log" 2>&1 ||
		{ tail -n 20 "$TBRDMA_OUT/integrity-$seed.log"; failed+=("integrity/$f"); }
	tail -n 1 "$TBRDMA_OUT/integrity-$seed.log" | sed 's/^/   /'

	PORT=$((PORT + 1))
	run_pair "rc-$PORT" 120 "ibv_rc_pingpong -d tbr0 -g $NET_GID_A -c -p $PORT -s 65536 -n 30" \
		"ip netns exec $NET_NS ibv_rc_pingpong -d tbr1 -g $NET_GID_B -c -p $PORT -s 65536 -n 30 $NET_IP_A" ||
		failed+=("rc_pingpong/$f")

	lossy=0
	[[ $f == loss* || $f == corrupt* ]] && lossy=1
	rping_pair "$PORT" $lossy || failed+=("rping/$f")

	re1=$(net_counter tbr1 retransmits)
	cs1=$(net_counter tbr0 rx_checksum_errors)
	echo "   tbr1 retransmits +$((re1 - re0)), tbr0 checksum drops +$((cs1 - cs0))"
	case $f in
	loss*) ((re1 > re0)) || failed+=("no retransmissions counted under $f") ;;
	corrupt*) ((cs1 > cs0)) || failed+=("no checksum drops counted under $f") ;;
	esac
	tc qdisc del dev tbv0 root
	net_b tc qdisc del dev tbv1 root
done
echo "counters tbr0: $(rdma statistic show link tbr0/1)"
echo "counters tbr1: $(rdma statistic show link tbr1/1)"
((${#failed[@]} == 0)) || fail "failed: $(printf '[%s] ' "${failed[@]}")"
echo "every byte arrived intact under every fault"
