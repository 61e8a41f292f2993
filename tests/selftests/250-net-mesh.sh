#!/bin/bash
# Full meshes of 3 and 4 hosts, cabled as a Thunderbolt cluster is: every
# pair of hosts (network namespaces tbrm1..tbrmN) has its own link (a veth
# pair) and a tbrdma device on each end. Every pair then talks at once
# (ibv_rc_pingpong -c, 64 KiB messages checked, both directions of every
# link busy).
# timeout: 600
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd ip rdma ibv_rc_pingpong
tbr_load_core
[[ -d /sys/module/tbrdma ]] || tbr_insmod
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma

mesh_teardown() {
	local d ns
	for d in /sys/class/infiniband/tbrm*; do
		[[ -e $d ]] && rdma link delete "${d##*/}"
	done
	for ns in $(ip netns list | awk '/^tbrm/ {print $1}'); do ip netns del "$ns"; done
	return 0
}
defer "mesh_teardown; tbr_rmmod"

# mesh N — hosts 1..N, link i-j: veth mIJ in host i (10.88.IJ.i), mJI in
# host j (10.88.IJ.j), devices tbrmIJ and tbrmJI.
mesh() {
	local n=$1 i j
	mesh_teardown
	for ((i = 1; i <= n; i++)); do
		ip netns add tbrm$i || fail "netns tbrm$i"
		ip -n tbrm$i link set lo up
	done
	for ((i = 1; i <= n; i++)); do
		for ((j = i + 1; j <= n; j++)); do
			ip link add m$i$j netns tbrm$i type veth peer name m$j$i netns tbrm$j ||
				fail "veth $i-$j"
			ip -n tbrm$i addr add 10.88.$i$j.$i/24 dev m$i$j
			ip -n tbrm$j addr add 10.88.$i$j.$j/24 dev m$j$i
			ip -n tbrm$i link set m$i$j mtu 9000 up
			ip -n tbrm$j link set m$j$i mtu 9000 up
			ip netns exec tbrm$i rdma link add tbrm$i$j type tbrdma netdev m$i$j ||
				fail "device on m$i$j"
			ip netns exec tbrm$j rdma link add tbrm$j$i type tbrdma netdev m$j$i ||
				fail "device on m$j$i"
		done
	done
	for ((i = 1; i <= n; i++)); do
		for ((j = i + 1; j <= n; j++)); do
			wait_for "net_gid tbrm$i$j 10.88.$i$j.$i && net_gid tbrm$j$i 10.88.$i$j.$j" 10 ||
				fail "GIDs of link $i-$j"
		done
	done
	echo "mesh of $n hosts: $((n * (n - 1) / 2)) links, $((n * (n - 1))) devices"
}

# all_pairs N — a pingpong on every link at once, server in the lower host.
all_pairs() {
	local n=$1 i j port=19000 pids=() names=() k rc failed=0
	for ((i = 1; i <= n; i++)); do
		for ((j = i + 1; j <= n; j++)); do
			port=$((port + 1))
			ip netns exec tbrm$i timeout 120 ibv_rc_pingpong -d tbrm$i$j \
				-g "$(net_gid tbrm$i$j 10.88.$i$j.$i)" -c -p $port -s 65536 -n 100 \
				>"$TBRDMA_OUT/mesh$n-$i$j.server.log" 2>&1 &
			pids+=($!)
			names+=("$i-$j server")
		done
	done
	sleep 3
	port=19000
	for ((i = 1; i <= n; i++)); do
		for ((j = i + 1; j <= n; j++)); do
			port=$((port + 1))
			ip netns exec tbrm$j timeout 120 ibv_rc_pingpong -d tbrm$j$i \
				-g "$(net_gid tbrm$j$i 10.88.$i$j.$j)" -c -p $port -s 65536 -n 100 \
				10.88.$i$j.$i >"$TBRDMA_OUT/mesh$n-$i$j.client.log" 2>&1 &
			pids+=($!)
			names+=("$i-$j client")
		done
	done
	for k in "${!pids[@]}"; do
		rc=0
		wait "${pids[$k]}" || rc=$?
		if ((rc)); then
			echo "link ${names[$k]}: exit $rc"
			failed=1
		fi
	done
	return $failed
}

for n in 3 4; do
	mesh $n
	all_pairs $n || fail "not every pair of the $n-host mesh completed"
	echo "all $((n * (n - 1) / 2)) links of the $n-host mesh carried traffic at once"
done
