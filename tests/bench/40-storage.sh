#!/bin/bash
# Benchmark of the kernel's storage protocols on tbrdma (issue 22): NVMe
# over Fabrics with nvme-rdma on tbrdma, on rdma_rxe and with NVMe over TCP
# (nvme-tcp), and NFS over RDMA (tbrdma, rxe) against NFS over TCP, all
# across the same veth pair in the initial namespace (lib-kstorage.sh:
# ks0 10.88.0.1 serves, ks1 10.88.0.2 is the client) and the same backing
# store: a RAM disk (brd) for NVMe, a file on a tmpfs for NFS, so the
# figures are the transport's, not a disk's.
# Each transport gets its best MTU, as in 20-verbs-veth.sh: tbrdma and TCP
# 65000, rxe 9000 (RoCE frames carry at most 4 KiB).
# Figures: fio 4 KiB random reads (IOPS, queue depth 32) and 1 MiB
# sequential reads (MB/s, queue depth 8), direct I/O, BENCH_STORAGE_SECS
# seconds each after a 2 s ramp; the median of BENCH_STORAGE_ROUNDS runs.
# Targets: tbrdma >= 3 x rxe and >= 1.5 x TCP for both figures.
# Run it alone: a second guest on the host turns timings into noise.
# timeout: 3000
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-net.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-kstorage.sh"
source "$(dirname "$0")/lib-bench.sh"

require_cmd nvme fio python3 rpc.nfsd exportfs rpc.mountd rpcbind mount.nfs
ROUNDS=${BENCH_STORAGE_ROUNDS:-3}
SECS=${BENCH_STORAGE_SECS:-8}
# What to run (all by default): a change to one path measured alone, e.g.
# BENCH_STORAGE_PROTOCOLS=nvme BENCH_STORAGE_TRANSPORTS=rdma_tbrdma.
read -ra PROTOCOLS <<<"${BENCH_STORAGE_PROTOCOLS:-nvme nfs}"
read -ra TRANSPORTS <<<"${BENCH_STORAGE_TRANSPORTS:-rdma_tbrdma rdma_rxe tcp}"
DISK_MB=256
NQN=tbrdma-storage-bench
CFG=/sys/kernel/config/nvmet
SUB=$CFG/subsystems/$NQN
PORT=$CFG/ports/1
EXPORT=/srv/tbrdma-bench
MNT=/mnt/tbrdma-bench

tbr_load_core
tbr_modprobe rdma_cm rdma_rxe nvme_rdma nvme_tcp nvmet nvmet_rdma nvmet_tcp \
	nfsd rpcrdma nfs nfsv4
modprobe brd rd_nr=1 rd_size=$((DISK_MB * 1024)) || fail "brd"
defer "rmmod brd 2>/dev/null || true"
[[ -d $CFG ]] || mount -t configfs configfs /sys/kernel/config
# Something to read: reads of a never-written RAM disk page cost nothing.
dd if=/dev/urandom of=/dev/ram0 bs=1M count=$DISK_MB status=none || fail "filling the RAM disk"

mkdir "$SUB"
echo 1 >"$SUB/attr_allow_any_host"
mkdir "$SUB/namespaces/1"
echo /dev/ram0 >"$SUB/namespaces/1/device_path"
echo 1 >"$SUB/namespaces/1/enable" || fail "namespace enable"
# Also called directly (set -e): nothing in it may fail the script.
nvmet_teardown() {
	nvme disconnect -n $NQN >/dev/null 2>&1 || true
	rm -f "$PORT/subsystems/$NQN" 2>/dev/null || true
	rmdir "$PORT" 2>/dev/null || true
	if [[ -d $SUB/namespaces/1 ]]; then
		echo 0 >"$SUB/namespaces/1/enable"
		rmdir "$SUB/namespaces/1"
	fi
	rmdir "$SUB" 2>/dev/null || true
	modprobe -r nvme_rdma nvmet_rdma nvme_tcp nvmet_tcp 2>/dev/null || true
}
defer nvmet_teardown

# The block device of our subsystem's namespace, once it is there.
ns_blk() {
	local d n
	for d in /sys/class/nvme-subsystem/nvme-subsys* /sys/class/nvme/nvme*; do
		[[ -e $d/subsysnqn && $(<"$d/subsysnqn") == "$NQN" ]] || continue
		for n in "$d"/nvme*n*; do
			[[ -b /dev/${n##*/} ]] && { echo "/dev/${n##*/}"; return 0; }
		done
	done
	return 1
}
ns_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ -e $c/subsysnqn && $(<"$c/subsysnqn") == "$NQN" ]] && return 0
	done
	return 1
}

# fio_read NAME FILE BS DEPTH -> IOPS for 4k, MB/s otherwise (median of ROUNDS)
fio_read() {
	local name=$1 file=$2 bs=$3 qd=$4 rw=read i
	[[ $bs == 4k ]] && rw=randread
	for ((i = 0; i < ROUNDS; i++)); do
		fio --name="$name" --filename="$file" --direct=1 --ioengine=libaio \
			--rw=$rw --bs="$bs" --iodepth="$qd" --size=$((DISK_MB - 16))M \
			--time_based --runtime="$SECS" --ramp_time=2 \
			--output-format=json --output="$TBRDMA_OUT/$name.$i.json" >/dev/null 2>&1 ||
			fail "fio $name: $(tail -n 5 "$TBRDMA_OUT/$name.$i.json")"
		python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
print("%.0f" % r["iops"] if sys.argv[2] == "4k" else "%.1f" % (r["bw_bytes"] / 1e6))' \
			"$TBRDMA_OUT/$name.$i.json" "$bs"
	done | median
}

# nvme_bench TRANSPORT (rdma_tbrdma, rdma_rxe, tcp) -> sets IOPS[T] and BW[T]
declare -A IOPS BW
nvme_bench() {
	local t=$1 trtype=${1%%_*} dev mtu=65000

	[[ $t == rdma_rxe ]] && mtu=9000
	KS_DRIVER=tbrdma
	[[ $t == rdma_rxe ]] && KS_DRIVER=rxe
	ks_two_devices $mtu >/dev/null
	mkdir "$PORT"
	echo "$trtype" >"$PORT/addr_trtype"
	echo ipv4 >"$PORT/addr_adrfam"
	echo $KS_IP_A >"$PORT/addr_traddr"
	echo 4420 >"$PORT/addr_trsvcid"
	ln -s "$SUB" "$PORT/subsystems/$NQN"
	nvme connect -t "$trtype" -a $KS_IP_A -s 4420 -w $KS_IP_B -n $NQN >/dev/null ||
		fail "nvme connect -t $trtype: $(dmesg | tail -n 5)"
	wait_for ns_blk 30 || fail "$t: no namespace block device"
	dev=$(ns_blk)
	grep -qx "$trtype" /sys/class/nvme/*/transport || fail "$t: no $trtype controller"
	IOPS[$t]=$(fio_read "nvme-$t-4k" "$dev" 4k 32)
	BW[$t]=$(fio_read "nvme-$t-1m" "$dev" 1M 8)
	echo "NVMe-oF $t (MTU $mtu): 4 KiB random read ${IOPS[$t]} IOPS, 1 MiB read ${BW[$t]} MB/s"
	nvme disconnect -n $NQN >/dev/null || fail "nvme disconnect"
	wait_for "! ns_ctrl" 20 || fail "$t: controller still present"
	rm "$PORT/subsystems/$NQN"
	rmdir "$PORT"
	modprobe -r nvme_rdma nvmet_rdma 2>/dev/null || true	# they hold the RDMA devices
	ks_teardown
	tbr_modprobe nvme_rdma nvmet_rdma
}

# nfs_bench TRANSPORT (rdma_tbrdma, rdma_rxe, tcp) -> sets NIOPS[T], NBW[T]
declare -A NIOPS NBW
nfs_setup() {
	mkdir -p "$EXPORT" "$MNT" /var/lib/nfs /run/rpcbind
	mount -t tmpfs -o size=$((DISK_MB + 32))m tmpfs "$EXPORT"
	head -c $((DISK_MB << 20)) /dev/urandom >"$EXPORT/data" || fail "NFS data file"
	[[ -e /proc/fs/nfsd/threads ]] || mount -t nfsd nfsd /proc/fs/nfsd
	rpcbind -w 2>/dev/null || rpcbind || fail "rpcbind"
	exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 \
		"10.88.0.0/16:$EXPORT" || fail "exportfs"
	rpc.mountd || fail "rpc.mountd"
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	rpc.nfsd 8 || fail "rpc.nfsd"
	echo "rdma 20049" >/proc/fs/nfsd/portlist || fail "nfsd: no rdma listener"
}
nfs_teardown() {
	umount -f "$MNT" 2>/dev/null || true
	rpc.nfsd 0 2>/dev/null || true
	exportfs -ua 2>/dev/null || true
	pkill -x rpc.mountd 2>/dev/null || true
	pkill -x rpcbind 2>/dev/null || true
	umount "$EXPORT" 2>/dev/null || true
	umount /proc/fs/nfsd 2>/dev/null || true
}
nfs_bench() {
	local t=$1 opts=vers=4.2 mtu=65000

	[[ $t == rdma_* ]] && opts+=",rdma,port=20049"
	[[ $t == rdma_rxe ]] && mtu=9000
	KS_DRIVER=tbrdma
	[[ $t == rdma_rxe ]] && KS_DRIVER=rxe
	ks_two_devices $mtu >/dev/null
	timeout 60 mount -t nfs -o "$opts" "$KS_IP_A:/" "$MNT" || fail "NFS $t mount: $(dmesg | tail -n 5)"
	if [[ $t == rdma_* ]]; then
		grep " $MNT " /proc/mounts | grep -q proto=rdma || fail "NFS $t: not an RDMA mount"
	fi
	NIOPS[$t]=$(fio_read "nfs-$t-4k" "$MNT/data" 4k 32)
	NBW[$t]=$(fio_read "nfs-$t-1m" "$MNT/data" 1M 8)
	echo "NFS $t (MTU $mtu): 4 KiB random read ${NIOPS[$t]} IOPS, 1 MiB read ${NBW[$t]} MB/s"
	umount "$MNT" || fail "NFS $t umount"
	ks_teardown
}

if [[ " ${PROTOCOLS[*]} " == *" nvme "* ]]; then
	for t in "${TRANSPORTS[@]}"; do
		nvme_bench "$t"
	done
fi
nvmet_teardown
if [[ " ${PROTOCOLS[*]} " == *" nfs "* ]]; then
	defer nfs_teardown
	nfs_setup
	for t in "${TRANSPORTS[@]}"; do
		nfs_bench "$t"
	done
fi

rows=()
verdict() { # VALUE_A VALUE_B TARGET -> ratio and yes/no
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {
		if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b == 0) { print "n/a no"; exit }
		r = a / b; v = substr(t, 3) + 0
		printf "%.2f %s\n", r, (r >= v ? "yes" : "no") }'
}
row() { # NAME OURS THEIRS TARGET
	local rv
	read -r -a rv <<<"$(verdict "$2" "$3" "$4")"
	rows+=("$(printf '%-38s %10s %10s %7s %7s %5s' "$1" "$2" "$3" "${rv[0]}" "$4" "${rv[1]}")")
}
row "NVMe-oF 4K randread IOPS vs rxe" "${IOPS[rdma_tbrdma]:-}" "${IOPS[rdma_rxe]:-}" ">=3"
row "NVMe-oF 4K randread IOPS vs nvme-tcp" "${IOPS[rdma_tbrdma]:-}" "${IOPS[tcp]:-}" ">=1.5"
row "NVMe-oF 1M read MB/s vs rxe" "${BW[rdma_tbrdma]:-}" "${BW[rdma_rxe]:-}" ">=3"
row "NVMe-oF 1M read MB/s vs nvme-tcp" "${BW[rdma_tbrdma]:-}" "${BW[tcp]:-}" ">=1.5"
row "NFS 4K randread IOPS vs rxe" "${NIOPS[rdma_tbrdma]:-}" "${NIOPS[rdma_rxe]:-}" ">=3"
row "NFS 4K randread IOPS vs NFS/TCP" "${NIOPS[rdma_tbrdma]:-}" "${NIOPS[tcp]:-}" ">=1.5"
row "NFS 1M read MB/s vs rxe" "${NBW[rdma_tbrdma]:-}" "${NBW[rdma_rxe]:-}" ">=3"
row "NFS 1M read MB/s vs NFS/TCP" "${NBW[rdma_tbrdma]:-}" "${NBW[tcp]:-}" ">=1.5"
echo
echo "storage over the veth pair, medians of $ROUNDS x ${SECS} s:"
printf '%-38s %10s %10s %7s %7s %5s\n' metric tbrdma other ratio target met
printf '%s\n' "${rows[@]}"
