#!/bin/bash
# NVMe over Fabrics on tbrdma: the kernel's nvmet-rdma target on one device
# (tbks_a) exports a RAM disk, nvme-rdma (`nvme connect -t rdma`) on the
# other (tbks_b) uses it across a veth pair in the initial namespace
# (lib-kstorage.sh). nvme-rdma registers every I/O's pages with fast
# registration (REG_MR), and the target invalidates them with
# SEND_WITH_INV. Checked: dd writes random data and reads it back, fio
# --verify=crc32c at queue depths 1 and 32 with 4 KiB and 128 KiB blocks,
# a disconnect and reconnect (the data is still there), and the target's
# port removed under I/O: the I/O fails within the controller-loss timeout,
# nothing hangs.
# Sizes are small (a TCG guest moves a few MB/s): TBR_NVMEOF_MB (default
# 16) for dd, a few MiB per fio job. TBR_KS_DRIVER=rxe runs the same on
# rdma_rxe. Not on a loopback device: RDMA CM cannot bind to an address of
# lo (the port's enable fails with ENODEV), for rxe as for tbrdma.
# timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-kstorage.sh"

require_cmd nvme fio dd cmp
MB=${TBR_NVMEOF_MB:-16}
NQN=tbrdma-nvmeof-test
CFG=/sys/kernel/config/nvmet
SUB=$CFG/subsystems/$NQN
PORT=$CFG/ports/1

ks_two_devices 9000
tbr_modprobe nvme_rdma
modprobe brd rd_nr=1 rd_size=$(((MB + 32) * 1024)) || fail "brd"
defer "rmmod brd 2>/dev/null || true"
tbr_modprobe nvmet nvmet_rdma
[[ -d $CFG ]] || mount -t configfs configfs /sys/kernel/config
[[ -d $CFG ]] || skip "nvmet configfs not available"

target_teardown() {
	nvme disconnect -n $NQN >/dev/null 2>&1 || true
	rm -f "$PORT/subsystems/$NQN" 2>/dev/null
	rmdir "$PORT" 2>/dev/null
	[[ -d $SUB/namespaces/1 ]] && { echo 0 >"$SUB/namespaces/1/enable"; rmdir "$SUB/namespaces/1"; }
	rmdir "$SUB" 2>/dev/null
	# The consumers hold the devices: let them go before the devices do.
	modprobe -r nvme_rdma nvmet_rdma 2>/dev/null || true
}
defer target_teardown

mkdir "$SUB"
echo 1 >"$SUB/attr_allow_any_host"
mkdir "$SUB/namespaces/1"
echo /dev/ram0 >"$SUB/namespaces/1/device_path"
echo 1 >"$SUB/namespaces/1/enable" || fail "namespace enable"

add_port() {
	mkdir "$PORT"
	echo rdma >"$PORT/addr_trtype"
	echo ipv4 >"$PORT/addr_adrfam"
	echo $KS_IP_A >"$PORT/addr_traddr"
	echo 4420 >"$PORT/addr_trsvcid"
	ln -s "$SUB" "$PORT/subsystems/$NQN"
}
add_port

# The block device of our subsystem's namespace (with native multipath
# under the subsystem, else under the controller), once it is there.
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
# Any controller of our subsystem left?
ns_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ -e $c/subsysnqn && $(<"$c/subsysnqn") == "$NQN" ]] && return 0
	done
	return 1
}

connect() {
	nvme connect -t rdma -a $KS_IP_A -s 4420 -w $KS_IP_B -n $NQN \
		--ctrl-loss-tmo=6 --reconnect-delay=1 "$@" ||
		fail "nvme connect: $(dmesg | tail -n 5)"
	wait_for "ns_blk" 30 || fail "no namespace block device"
	DEV=$(ns_blk)
	echo "connected: $DEV ($(cat /sys/class/nvme/*/transport | sort -u | tr '\n' ' '))"
	grep -q rdma /sys/class/nvme/*/transport || fail "not an rdma controller"
}

frames_before=$(ks_frames tbks_b)
connect

echo "== dd: $MB MiB of random data written and read back (direct I/O)"
head -c $((MB << 20)) /dev/urandom >"$TBRDMA_OUT/data"
dd if="$TBRDMA_OUT/data" of="$DEV" bs=1M oflag=direct status=none || fail "dd write"
dd if="$DEV" of="$TBRDMA_OUT/back" bs=1M count=$MB iflag=direct status=none || fail "dd read"
cmp "$TBRDMA_OUT/data" "$TBRDMA_OUT/back" || fail "read-back differs from what was written"
echo "   $MB MiB identical"

echo "== fio --verify=crc32c"
fio_job() {
	local bs=$1 qd=$2 size=$3 off=$4
	fio --name="v$bs-$qd" --filename="$DEV" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs="$bs" --iodepth="$qd" --size="$size" \
		--offset="$off" --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--output="$TBRDMA_OUT/fio-$bs-$qd.log" >/dev/null 2>&1 ||
		{ tail -n 20 "$TBRDMA_OUT/fio-$bs-$qd.log"; fail "fio bs=$bs iodepth=$qd"; }
	{ grep -E "^  (write|read):" "$TBRDMA_OUT/fio-$bs-$qd.log" || true; } | sed "s/^/   bs=$bs qd=$qd /"
}
# Past the dd data, which the reconnect below reads again.
fio_job 4k 1 2M $((MB + 1))M
fio_job 4k 32 4M $((MB + 4))M
fio_job 128k 1 4M $((MB + 8))M
fio_job 128k 32 8M $((MB + 12))M

frames=$(($(ks_frames tbks_b) - frames_before))
echo "   tbks_b sent $frames frames"
((frames > 1000)) || fail "the I/O did not go through tbrdma"
if [[ $KS_DRIVER == tbrdma ]]; then
	reg=$(net_counter tbks_b fast_reg)
	rinv=$(net_counter tbks_b remote_inv)
	linv=$(net_counter tbks_b local_inv)
	echo "   host tbks_b: $reg fast registrations, $rinv invalidated by the target (SEND_WITH_INV), $linv locally"
	((reg > 0 && rinv > 0)) || fail "nvme-rdma did not use fast registration and remote invalidation"
fi

echo "== disconnect, reconnect: the data is still there"
nvme disconnect -n $NQN >/dev/null || fail "nvme disconnect"
wait_for "! ns_ctrl" 20 || fail "controller still present after disconnect"
connect
dd if="$DEV" of="$TBRDMA_OUT/back" bs=1M count=$MB iflag=direct status=none || fail "dd read after reconnect"
cmp "$TBRDMA_OUT/data" "$TBRDMA_OUT/back" || fail "data differs after reconnect"
echo "   $MB MiB identical after reconnect"

echo "== the target's port removed under I/O"
# Over the whole disk again and again until a write fails: one pass takes
# about a second in a fast guest, and dd must still be writing when the
# port goes.
(
	while :; do
		dd if=/dev/zero of="$DEV" bs=64k count=$(((MB + 32) * 16)) \
			oflag=direct status=none || exit
	done
) 2>"$TBRDMA_OUT/dd-removed.log" &
ddpid=$!
sleep 2
pid_exited $ddpid && fail "dd ended before the port was removed: $(cat "$TBRDMA_OUT/dd-removed.log")"
rm "$PORT/subsystems/$NQN"
rmdir "$PORT"
# ctrl-loss-tmo 6 s: the host retries, gives up, fails the I/O.
wait_for "pid_exited $ddpid" 90 || fail "dd still waiting 90 s after the port went away"
rc=0
wait $ddpid || rc=$?
((rc != 0)) || fail "dd succeeded although the target went away"
echo "   dd failed as it should (exit $rc): $(head -n 1 "$TBRDMA_OUT/dd-removed.log")"
nvme disconnect -n $NQN >/dev/null 2>&1 || true
wait_for "! ns_ctrl" 30 || fail "controller still present"
echo "NVMe over Fabrics works on tbrdma"
