#!/bin/bash
# SCSI RDMA Protocol (SRP) on tbrdma: a LIO target (ib_srpt, configfs)
# exports a RAM disk and listens through RDMA CM (ib_srpt's rdma_cm_port);
# ib_srp logs in from tbks_b across the veth pair of lib-kstorage.sh
# (add_target with dest=IP:PORT). Random data written with dd and read
# back identical, logged out (the remote port deleted), logged in again,
# still identical.
# SRP needs nothing beyond what NVMe-oF and iSER use: RDMA CM, fast
# registration (ib_srp registers every command's pages), SEND and RDMA
# READ/WRITE.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-kstorage.sh"

require_cmd cmp
MB=${TBR_SRP_MB:-8}
CM_PORT=5555

ks_two_devices 9000
tbr_modprobe target_core_mod ib_srpt ib_srp sd_mod
[[ -d /sys/kernel/config/target ]] || mount -t configfs configfs /sys/kernel/config
[[ -d /sys/kernel/config/target ]] || skip "LIO configfs not available"

C=/sys/kernel/config/target
RD=$C/core/rd_mcp_1/tbsrp
# The target port is named after the port's first GID's interface ID
# (GUID form, xxxx:xxxx:xxxx:xxxx), as ib_srpt names it.
gid0=$(</sys/class/infiniband/tbks_a/ports/1/gids/0)
PORTNAME=$(awk -F: '{printf "%s:%s:%s:%s", $5, $6, $7, $8}' <<<"$gid0")
SP=$C/srpt/$PORTNAME
T=$SP/tpg_1
# With RDMA CM, ib_srpt names the session after its cm_id's source
# address, which on the accepting side is the target's own address (the
# kernel's ib_srpt does this on every device): the ACL carries that name.
ACL=$T/acls/$KS_IP_A
srp_host=/sys/class/infiniband_srp/srp-tbks_b-1

srp_scsi_hosts() {
	local h
	for h in /sys/class/scsi_host/host*; do
		[[ -e $h/proc_name && $(<"$h/proc_name") == ib_srp ]] && echo "${h##*/}"
	done
}
srp_disk() {
	local h d
	for h in $(srp_scsi_hosts); do
		for d in /sys/class/scsi_host/"$h"/device/target*/*/block/*; do
			[[ -e $d ]] && { echo "/dev/${d##*/}"; return 0; }
		done
	done
	return 1
}
srp_logout() {
	local h
	for h in $(srp_scsi_hosts); do
		echo 1 >/sys/class/srp_remote_ports/port-"${h#host}":1/delete 2>/dev/null || true
	done
}
srp_teardown() {
	srp_logout
	[[ -e $T/enable ]] && echo 0 >"$T/enable"
	rm -f "$T/lun/lun_0/tbsrp" 2>/dev/null
	rmdir "$T/lun/lun_0" "$ACL/lun_0" 2>/dev/null
	rmdir "$ACL" "$T" "$SP" 2>/dev/null
	rmdir "$RD" "$C/core/rd_mcp_1" 2>/dev/null
	modprobe -r ib_srp ib_srpt 2>/dev/null || true
}
defer srp_teardown

mkdir -p "$RD"
echo "rd_pages=$((MB * 256))" >"$RD/control"
echo 1 >"$RD/enable" || fail "RAM disk backstore"
[[ -d $C/srpt ]] || mkdir "$C/srpt" || fail "ib_srpt's configfs directory"
echo $CM_PORT >"$C/srpt/discovery_auth/rdma_cm_port" || fail "ib_srpt: RDMA CM port"
mkdir "$SP" || { ls "$C/srpt"; fail "target port $PORTNAME (ib_srpt did not add tbks_a?)"; }
mkdir -p "$T/lun/lun_0"
ln -s "$RD" "$T/lun/lun_0/tbsrp"
mkdir -p "$ACL/lun_0"
ln -s "$T/lun/lun_0" "$ACL/lun_0/tbsrp_lun"
echo 1 >"$T/enable" || fail "enabling the target port group"
echo "target: $PORTNAME on tbks_a, RDMA CM port $CM_PORT, ACL $KS_IP_A"

[[ -e $srp_host/add_target ]] || fail "ib_srp did not add tbks_b ($srp_host)"
guid=$(tr -d : </sys/class/infiniband/tbks_a/node_guid)
login() {
	local try
	# After a logout ib_srp drops the target port from its list a moment
	# after the SCSI host is gone; until then it says "Already connected"
	# (EEXIST).  Seen once in 3 make check runs.
	for try in 1 2 3 4 5 6 7 8 9 10; do
		echo "id_ext=$guid,ioc_guid=$guid,dest=$KS_IP_A:$CM_PORT" \
			>"$srp_host/add_target" 2>"$TBRDMA_OUT/add_target.err" && break
		grep -q 'File exists' "$TBRDMA_OUT/add_target.err" && ((try < 10)) ||
			fail "ib_srp add_target refused: $(cat "$TBRDMA_OUT/add_target.err"; dmesg | tail -n 5)"
		sleep 1
	done
	wait_for "srp_disk >/dev/null" 30 || fail "no SCSI disk after the SRP login"
	DISK=$(srp_disk)
	echo "logged in: $DISK"
}

frames0=$(ks_frames tbks_b)
login
pattern=$TBRDMA_OUT/srp.pattern
head -c $((MB << 20)) /dev/urandom >"$pattern"
dd if="$pattern" of="$DISK" bs=1M oflag=direct status=none || fail "dd write to $DISK"
cmp <(dd if="$DISK" bs=1M iflag=direct count=$MB status=none) "$pattern" ||
	fail "read back differs"
echo "ok: $MB MiB written and read back identical"
srp_logout
# Deleting the remote port removes the SCSI host in the background: ib_srp
# refuses a new login to the same target until it is gone.
wait_for '[[ -z $(srp_scsi_hosts) ]]' 30 || fail "the SRP host stayed after logout"
login
cmp <(dd if="$DISK" bs=1M iflag=direct count=$MB status=none) "$pattern" ||
	fail "read back after a new login differs"
echo "ok: logged in again, the data is still there"
frames=$(($(ks_frames tbks_b) - frames0))
((frames > MB * 1024 * 1024 / 9000)) || fail "only $frames frames on tbks_b: did SRP use tbrdma?"
echo "tbks_b sent $frames frames"
