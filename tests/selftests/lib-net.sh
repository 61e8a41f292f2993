# lib-net.sh — two hosts inside the guest for the network transport tests
# (2xx): the initial network namespace is host A (veth tbv0, 10.77.0.1,
# device tbr0), namespace tbrB is host B (veth tbv1, 10.77.0.2, device tbr1).
# RDMA devices are visible in every namespace (the core's shared mode), so
# one process may use both; TCP side channels and RDMA CM addresses follow
# the namespace. Servers run in A, clients in B (net_b CMD...).
# Source after lib.sh and lib-verbs.sh:
#     net_two_hosts [MTU]   # loads tbrdma, builds both hosts, defers teardown
# shellcheck shell=bash

NET_NS=tbrB
NET_IP_A=10.77.0.1
NET_IP_B=10.77.0.2

net_b() { ip netns exec "$NET_NS" "$@"; }

# net_gid DEV IPV4 — the index of DEV's IPv4-mapped GID for IPV4.
net_gid() {
	local want f
	want=0000:0000:0000:0000:0000:ffff:$(printf '%02x%02x:%02x%02x' ${2//./ })
	for f in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		[[ $(<"$f") == "$want" ]] && { basename "$f"; return 0; }
	done
	return 1
}

net_teardown() {
	local rc=0
	[[ -e /sys/class/infiniband/tbr0 ]] && { rdma link delete tbr0 || rc=1; }
	[[ -e /sys/class/infiniband/tbr1 ]] && { rdma link delete tbr1 || rc=1; }
	ip netns del "$NET_NS" 2>/dev/null
	ip link del tbv0 2>/dev/null
	tbr_rmmod || rc=1
	return $rc
}

net_two_hosts() {
	local mtu=${1:-9000}
	require_cmd ip rdma
	tbr_load_core
	defer net_teardown
	[[ -d /sys/module/tbrdma ]] || tbr_insmod ${NET_MODPARAMS:-}
	ip link add tbv0 type veth peer name tbv1 || fail "veth pair"
	ip netns add "$NET_NS" || fail "namespace $NET_NS"
	ip link set tbv1 netns "$NET_NS"
	ip addr add "$NET_IP_A/24" dev tbv0
	ip link set tbv0 mtu "$mtu" up
	net_b ip addr add "$NET_IP_B/24" dev tbv1
	net_b ip link set tbv1 mtu "$mtu" up
	net_b ip link set lo up
	rdma link add tbr0 type tbrdma netdev tbv0 || fail "rdma link add tbr0"
	net_b rdma link add tbr1 type tbrdma netdev tbv1 || fail "rdma link add tbr1"
	export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
	wait_for "net_gid tbr0 $NET_IP_A && net_gid tbr1 $NET_IP_B" 10 ||
		fail "no IPv4 GIDs on tbr0/tbr1"
	wait_for "[[ \$(</sys/class/infiniband/tbr1/ports/1/state) == *ACTIVE ]]" 10 ||
		fail "tbr1: port not ACTIVE"
	NET_GID_A=$(net_gid tbr0 "$NET_IP_A")
	NET_GID_B=$(net_gid tbr1 "$NET_IP_B")
	export NET_GID_A NET_GID_B
	echo "hosts: A tbr0 $NET_IP_A (GID $NET_GID_A)  B tbr1 $NET_IP_B (GID $NET_GID_B), MTU $mtu"
}

# net_counters DEV — every transport counter of DEV, "name value" a line,
# from one `rdma statistic` call (each call costs a tenth of a second in
# the TCG guest; the words are paired by the shell, not by more programs).
net_counters() {
	local out w name=""
	out=$(rdma statistic show link "$1"/1) || return 1
	for w in $out; do
		if [[ -n $name && $w =~ ^[0-9]+$ ]]; then
			echo "$name $w"
			name=""
		elif [[ $w =~ ^[a-z_]+$ ]]; then
			name=$w
		else
			name=""
		fi
	done
}

# net_counter DEV NAME — one of DEV's transport counters.
net_counter() {
	local k v
	while read -r k v; do
		[[ $k == "$2" ]] && { echo "$v"; return 0; }
	done < <(net_counters "$1")
	return 0	# no such counter: nothing printed, as before
}

# wait_cm_listen PORT SECS — until an RDMA CM listener (rping -s, ...) of
# this namespace is bound to PORT: a client that comes too early is
# rejected ("invalid service ID"), and a busy TCG guest starts slowly.
wait_cm_listen() {
	wait_for "rdma resource show cm_id | grep -q 'state LISTEN .*:$1 '" "$2"
}

# net_pair NAME PORT 'SERVER CMD' 'CLIENT CMD' — the server in host A,
# given 30 s to listen on PORT (TCP, or an RDMA CM listener: rsockets,
# rping, perftest -R), then the client in host B; both must exit 0 within
# 120 s.  Logs: $TBRDMA_OUT/NAME.{server,client}.log, shown on failure.
net_pair() {
	local name=$1 port=$2 spid rc=0 src=0
	# shellcheck disable=SC2086  # the commands are word lists on purpose
	timeout 120 $3 >"$TBRDMA_OUT/$name.server.log" 2>&1 &
	spid=$!
	wait_for "ss -Hltn 'sport = :$port' | grep -q . || rdma resource show cm_id |
		grep -q 'state LISTEN .*:$port '" 30 ||
		echo "--- $name: nothing listens on port $port yet"
	# shellcheck disable=SC2086
	timeout 120 ip netns exec "$NET_NS" $4 >"$TBRDMA_OUT/$name.client.log" 2>&1 || rc=$?
	wait "$spid" || src=$?
	((rc || src)) || return 0
	echo "--- $name: client exit $rc, server exit $src"
	tail -n 15 "$TBRDMA_OUT/$name.server.log" "$TBRDMA_OUT/$name.client.log"
	return 1
}

# rping_pair PORT LOSSY PINGS SIZE — rping -V between the hosts (server in
# A on PORT + 1000, client in B): PINGS pings of SIZE bytes; the client
# checks every byte.  The server leaves when the client's disconnect
# request (a CM MAD) arrives.  If the fault eats that DREQ, it is never
# sent again: the client exits at once, and the kernel's CM cancels a
# DREQ's retries when its ID is destroyed.  The server would then wait for
# a next ping for ever.  That is the connection's teardown, not its data:
# so once the client has passed, the server gets 5 s (a DREQ that arrives
# takes milliseconds; 15 s cost 30 s of 231-net-loss's time), and
# otherwise passes if it served every ping (-v prints each one) -- under a
# fault that loses frames (LOSSY=1); where netem loses nothing, a missed
# disconnect is our bug and fails.
rping_pair() {
	local port=$(($1 + 1000)) slog=$TBRDMA_OUT/rping-$1.server.log spid served
	local pings=$3 args secs=$((60 + $3 * 2))
	args="-a $NET_IP_A -p $port -C $pings -S $4 -V"
	# shellcheck disable=SC2086  # args is a word list on purpose
	timeout $secs rping -s -v $args >"$slog" 2>&1 &
	spid=$!
	wait_cm_listen $port 30 || echo "   no rping listener yet"
	# shellcheck disable=SC2086
	if ! net_b timeout $secs rping -c $args >"$TBRDMA_OUT/rping-$1.client.log" 2>&1; then
		echo "   rping client failed: $(tail -n 3 "$TBRDMA_OUT/rping-$1.client.log")"
		wait $spid || true	# its status says nothing more; set -e must not end the test here
		return 1
	fi
	if wait_for "pid_exited $spid" 5; then
		wait $spid && return 0
		echo "   rping server failed: $(grep -v '^server ping data' "$slog" | tail -n 3)"
		return 1
	fi
	kill $spid
	wait $spid || true	# killed: 143, which set -e would take for the test's failure
	served=$(grep -c '^server ping data: ' "$slog" || true)
	echo "   rping server: served $served pings, then did not exit within 5 s of the client (a lost DREQ or DREP?)"
	((served == pings && $2))
}
