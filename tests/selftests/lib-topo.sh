# lib-topo.sh — clusters cabled as Thunderbolt clusters are, inside the
# guest: host i (1..N) is network namespace tbrtI; a cable between hosts
# i < j is a veth pair, tIJ in host i (10.89.IJ.i/24) and tJI in host j
# (10.89.IJ.j/24), with a tbrdma device on each end, tbrtIJ and tbrtJI
# (one device per cable end, as thunderbolt-net gives one netdev per
# port). Source after lib.sh and lib-verbs.sh:
#     topo_build mesh N   # every pair its own cable (3: the triangle)
#     topo_build ring N   # host i to i+1 and N to 1 only; the others are
#                         # reached over IP through the neighbours
#                         # (forwarding, a route to 10.89.0.0/16 via the
#                         # next host): the control path may be routed,
#                         # RDMA needs a cable
# Every call tears down the previous cluster; the teardown is deferred.
# shellcheck shell=bash

TOPO_HOSTS=0
TOPO_CABLES=()	# "I J" for every cable, I < J

topo_teardown() {
	local d ns
	topo_kill KILL
	for d in /sys/class/infiniband/tbrt*; do
		[[ -e $d ]] && rdma link delete "${d##*/}"
	done
	for ns in $(ip netns list | awk '/^tbrt/ {print $1}'); do ip netns del "$ns"; done
	TOPO_HOSTS=0
	TOPO_CABLES=()
	return 0
}

# topo_ip I J — host I's address on the cable to host J
topo_ip() {
	local a=$1 b=$2
	((a < b)) && echo "10.89.$a$b.$1" || echo "10.89.$b$a.$1"
}

# topo_in I CMD... — CMD in host I
topo_in() {
	local h=$1
	shift
	ip netns exec "tbrt$h" "$@"
}

_topo_cable() {
	local i=$1 j=$2
	ip link add "t$i$j" netns "tbrt$i" type veth peer name "t$j$i" netns "tbrt$j" ||
		fail "cable $i-$j"
	ip -n "tbrt$i" addr add "10.89.$i$j.$i/24" dev "t$i$j"
	ip -n "tbrt$j" addr add "10.89.$i$j.$j/24" dev "t$j$i"
	ip -n "tbrt$i" link set "t$i$j" mtu 9000 up
	ip -n "tbrt$j" link set "t$j$i" mtu 9000 up
	topo_in "$i" rdma link add "tbrt$i$j" type tbrdma netdev "t$i$j" || fail "device on t$i$j"
	topo_in "$j" rdma link add "tbrt$j$i" type tbrdma netdev "t$j$i" || fail "device on t$j$i"
	TOPO_CABLES+=("$i $j")
}

topo_build() {
	local kind=$1 n=$2 i j c
	[[ -d /sys/module/tbrdma ]] || tbr_insmod
	if [[ ${_topo_deferred:-} != 1 ]]; then
		defer topo_teardown
		_topo_deferred=1
	fi
	topo_teardown
	TOPO_HOSTS=$n
	for ((i = 1; i <= n; i++)); do
		ip netns add "tbrt$i" || fail "netns tbrt$i"
		ip -n "tbrt$i" link set lo up
	done
	if [[ $kind == mesh ]]; then
		for ((i = 1; i <= n; i++)); do
			for ((j = i + 1; j <= n; j++)); do _topo_cable $i $j; done
		done
	else
		for ((i = 1; i < n; i++)); do _topo_cable $i $((i + 1)); done
		_topo_cable 1 "$n"
		for ((i = 1; i <= n; i++)); do
			j=$((i % n + 1))
			# forwarding, and no reverse-path filter: the way back
			# may go round the other side of the ring
			topo_in "$i" sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward
				for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 >"$f"; done'
			ip -n "tbrt$i" route add 10.89.0.0/16 via "$(topo_ip "$j" "$i")"
		done
	fi
	for c in "${TOPO_CABLES[@]}"; do
		read -r i j <<<"$c"
		wait_for "net_gid tbrt$i$j $(topo_ip "$i" "$j") && net_gid tbrt$j$i $(topo_ip "$j" "$i")" 10 ||
			fail "GIDs of cable $i-$j"
	done
	export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
	echo "$kind of $n hosts: ${#TOPO_CABLES[@]} cables, $((2 * ${#TOPO_CABLES[@]})) devices"
}

# topo_peers PORT — the --peers list: host i's address on each of its
# cables ("a|b:PORT"), rank i - 1 being host i
topo_peers() {
	local i a b c list="" addrs
	for ((i = 1; i <= TOPO_HOSTS; i++)); do
		addrs=""
		for c in "${TOPO_CABLES[@]}"; do
			read -r a b <<<"$c"
			if ((a == i)); then
				addrs+=${addrs:+|}$(topo_ip "$i" "$b")
			elif ((b == i)); then
				addrs+=${addrs:+|}$(topo_ip "$i" "$a")
			fi
		done
		list+=${list:+,}$addrs:$1
	done
	echo "$list"
}

# topo_cabled I J — hosts I and J share a cable
topo_cabled() {
	local c a b
	for c in "${TOPO_CABLES[@]}"; do
		read -r a b <<<"$c"
		if ((a == $1 && b == $2 || a == $2 && b == $1)); then return 0; fi
	done
	return 1
}

# topo_ranks NAME PEERS ARGS... — one tprun rank per host (rank i - 1 in
# host i) with --peers PEERS and ARGS (ARGS may start with serve), in the
# background: TOPO_PIDS[r]; stdout to $TBRDMA_OUT/NAME.rR.json, stderr to
# NAME.rR.err
topo_ranks() {
	local name=$1 peers=$2 i sub=()
	shift 2
	[[ ${1:-} == serve ]] && { sub=(serve); shift; }
	TOPO_PIDS=()
	for ((i = 1; i <= TOPO_HOSTS; i++)); do
		topo_in "$i" timeout 200 "$TPRUN" "${sub[@]}" --rank $((i - 1)) --peers "$peers" "$@" \
			>"$TBRDMA_OUT/$name.r$((i - 1)).json" 2>"$TBRDMA_OUT/$name.r$((i - 1)).err" &
		TOPO_PIDS+=($!)
	done
}

# topo_kill SIG [I...] — send SIG to every process in host I (default:
# every host): TOPO_PIDS are the shells around them, not the ranks
topo_kill() {
	local sig=$1 i hs=("${@:2}") p
	((${#hs[@]})) || for ((i = 1; i <= TOPO_HOSTS; i++)); do hs+=("$i"); done
	for i in "${hs[@]}"; do
		for p in $(ip netns pids "tbrt$i" 2>/dev/null); do
			kill "-$sig" "$p" 2>/dev/null || true
		done
	done
}

# topo_wait NAME — wait for every rank of topo_ranks; 0 when all exited 0,
# else show the ends of their messages
topo_wait() {
	local p rc bad=0
	for p in "${TOPO_PIDS[@]}"; do
		rc=0
		wait "$p" || rc=$?
		((rc)) && bad=1
	done
	((bad)) || return 0
	echo "--- $1: a rank failed"
	tail -n 5 "$TBRDMA_OUT/$1".r*.err
	return 1
}

# topo_tx — "DEV BYTES" for every device: its tx_bytes counter
topo_tx() {
	local c i j
	for c in "${TOPO_CABLES[@]}"; do
		read -r i j <<<"$c"
		echo "tbrt$i$j $(net_counter "tbrt$i$j" tx_bytes)"
		echo "tbrt$j$i $(net_counter "tbrt$j$i" tx_bytes)"
	done
}
