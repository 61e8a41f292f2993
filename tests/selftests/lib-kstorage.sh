# lib-kstorage.sh — two tbrdma devices for the kernel's storage protocols
# (NVMe over Fabrics, NFS over RDMA). Kernel RDMA consumers open their RDMA
# CM IDs in the initial network namespace, so both ends of a veth pair stay
# there: ks0 (10.88.0.1, device tbks_a, the server) and ks1 (10.88.0.2,
# device tbks_b, the client), with policy routing that sends traffic
# between the two addresses through the pair instead of delivering it
# locally (as tests/bench/20-verbs-veth.sh does).
# Source after lib.sh and lib-net.sh:
#     ks_two_devices [MTU]   # loads tbrdma, builds both ends, defers teardown
# shellcheck shell=bash

KS_IP_A=10.88.0.1
KS_IP_B=10.88.0.2
KS_DRIVER=${TBR_KS_DRIVER:-tbrdma}	# rxe: the same test on rdma_rxe, to compare

ks_teardown() {
	local d
	for d in tbks_a tbks_b; do
		[[ -e /sys/class/infiniband/$d ]] && rdma link delete $d
	done
	ip link del ks0 2>/dev/null
	ip rule del pref 1 iif ks0 lookup local 2>/dev/null
	ip rule del pref 1 iif ks1 lookup local 2>/dev/null
	ip rule del pref 2 to $KS_IP_B lookup 101 2>/dev/null
	ip rule del pref 2 to $KS_IP_A lookup 102 2>/dev/null
	ip rule del pref 10 lookup local 2>/dev/null && ip rule add pref 0 lookup local
	tbr_rmmod
}

ks_two_devices() {
	local mtu=${1:-9000} c
	require_cmd ip rdma
	tbr_load_core
	tbr_modprobe rdma_cm
	if [[ $KS_DRIVER == rxe ]]; then
		tbr_modprobe rdma_rxe
	else
		[[ -d /sys/module/tbrdma ]] || tbr_insmod
	fi
	defer ks_teardown
	ip link add ks0 type veth peer name ks1 || fail "veth pair"
	ip addr add $KS_IP_A/32 dev ks0
	ip addr add $KS_IP_B/32 dev ks1
	ip link set ks0 mtu "$mtu" up
	ip link set ks1 mtu "$mtu" up
	for c in all default ks0 ks1; do
		sysctl -qw net.ipv4.conf.$c.rp_filter=0 net.ipv4.conf.$c.accept_local=1
	done
	# What arrives on the pair is delivered here; what is sent to the
	# other address leaves through the pair. Not "iif lo" for the latter:
	# RDMA CM checks a connection request with a lookup that names no
	# input interface (validate_net_dev()), and it must find the veth.
	ip rule add pref 1 iif ks0 lookup local
	ip rule add pref 1 iif ks1 lookup local
	ip rule add pref 2 to $KS_IP_B lookup 101
	ip rule add pref 2 to $KS_IP_A lookup 102
	ip route add $KS_IP_B dev ks0 src $KS_IP_A table 101
	ip route add $KS_IP_A dev ks1 src $KS_IP_B table 102
	ip rule add pref 10 lookup local
	ip rule del pref 0 lookup local
	rdma link add tbks_a type "$KS_DRIVER" netdev ks0 || fail "$KS_DRIVER on ks0"
	rdma link add tbks_b type "$KS_DRIVER" netdev ks1 || fail "$KS_DRIVER on ks1"
	wait_for "net_gid tbks_a $KS_IP_A && net_gid tbks_b $KS_IP_B" 10 ||
		fail "no IPv4 GIDs on tbks_a/tbks_b"
	wait_for "[[ \$(</sys/class/infiniband/tbks_b/ports/1/state) == *ACTIVE ]]" 10 ||
		fail "tbks_b: port not ACTIVE"
	echo "devices: tbks_a on ks0 $KS_IP_A, tbks_b on ks1 $KS_IP_B, MTU $mtu"
}

# ks_frames DEV — frames DEV sent so far (proof the traffic used tbrdma).
ks_frames() { net_counter "$1" tx_packets; }
