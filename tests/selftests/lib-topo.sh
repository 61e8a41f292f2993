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
topo_in() { ip netns exec "tbrt$1" "$@"; }

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

# topo_tx — "DEV BYTES" for every device: its tx_bytes counter
topo_tx() {
	local c i j
	for c in "${TOPO_CABLES[@]}"; do
		read -r i j <<<"$c"
		echo "tbrt$i$j $(net_counter "tbrt$i$j" tx_bytes)"
		echo "tbrt$j$i $(net_counter "tbrt$j$i" tx_bytes)"
	done
}
