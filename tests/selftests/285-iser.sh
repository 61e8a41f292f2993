#!/bin/bash
# iSCSI over RDMA (iSER) on tbrdma: a LIO target (configfs, ib_isert)
# exports a RAM disk on tbks_a's address with iSER enabled on its portal;
# open-iscsi logs in from tbks_b with the iser interface (ib_iser) across
# the veth pair of lib-kstorage.sh. Random data written with dd and read
# back identical, logout, login again, still identical; the initiator's
# fast registrations (ib_iser registers every command's pages) moved.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-kstorage.sh"

require_cmd iscsiadm iscsid cmp
IQN=iqn.2026-11.org.tbrdma:iser-test
MB=${TBR_ISER_MB:-8}

ks_two_devices 9000
tbr_modprobe target_core_mod iscsi_target_mod ib_isert ib_iser sd_mod
[[ -d /sys/kernel/config/target ]] || mount -t configfs configfs /sys/kernel/config
[[ -d /sys/kernel/config/target ]] || skip "LIO configfs not available"

C=/sys/kernel/config/target
T=$C/iscsi/$IQN/tpgt_1
NP=$T/np/$KS_IP_A:3260
RD=$C/core/rd_mcp_0/tbrd

iser_teardown() {
	iscsiadm -m node -T $IQN -p $KS_IP_A -I iser --logout >/dev/null 2>&1 || true
	iscsiadm -m node -o delete >/dev/null 2>&1 || true
	pkill -x iscsid 2>/dev/null || true
	[[ -e $T/enable ]] && echo 0 >"$T/enable"
	rm -f "$T/lun/lun_0/tbrd"
	rmdir "$T/lun/lun_0" "$NP" "$T" "$C/iscsi/$IQN" 2>/dev/null
	rmdir "$RD" "$C/core/rd_mcp_0" 2>/dev/null
	modprobe -r ib_iser ib_isert 2>/dev/null || true
}
defer iser_teardown

# The target, in LIO's configfs as targetcli would write it (targetcli-fb
# itself wants a D-Bus the test guest does not run): a RAM disk, LUN 0,
# a portal on tbks_a's address with iSER on, no authentication, any
# initiator may log in.
mkdir -p "$RD"
echo "rd_pages=$((MB * 2 * 256))" >"$RD/control"
echo 1 >"$RD/enable" || fail "RAM disk backstore"
mkdir -p "$T/lun/lun_0"
ln -s "$RD" "$T/lun/lun_0/tbrd"
mkdir "$NP"
echo 1 >"$NP/iser" || fail "iSER on the portal (ib_isert)"
echo 0 >"$T/attrib/authentication"
echo 1 >"$T/attrib/generate_node_acls"
echo 1 >"$T/attrib/cache_dynamic_acls"
echo 0 >"$T/attrib/demo_mode_write_protect"
echo 1 >"$T/enable" || fail "enabling the target portal group"

mkdir -p /etc/iscsi /run/lock/iscsi /var/lib/iscsi
[[ -s /etc/iscsi/initiatorname.iscsi ]] ||
	echo "InitiatorName=iqn.2026-11.org.tbrdma:initiator" >/etc/iscsi/initiatorname.iscsi
iscsid || fail "iscsid"
wait_for "pgrep -x iscsid" 10 || fail "iscsid did not start"

disk() {
	local s
	for s in /sys/class/iscsi_session/session*; do
		[[ $(<"$s/targetname") == "$IQN" ]] || continue
		ls "$s/device/target"*/*/block 2>/dev/null | head -n 1
		return 0
	done
	return 1
}

login() {
	iscsiadm -m discovery -t st -p $KS_IP_A -I iser >/dev/null ||
		fail "discovery: $(dmesg | tail -n 5)"
	iscsiadm -m node -T $IQN -p $KS_IP_A -I iser --login >/dev/null ||
		fail "login over iser: $(dmesg | tail -n 5)"
	wait_for '[[ -n $(disk) ]]' 30 || fail "no disk after login"
	DEV=/dev/$(disk)
	wait_for "[[ -b $DEV ]]" 10 || fail "$DEV missing"
	echo "   $(iscsiadm -m session | grep "$IQN"), disk $DEV"
}

reg0=$(net_counter tbks_b fast_reg)
echo "== login with -I iser"
login
iscsiadm -m session | grep "$IQN" | grep -q "^iser:" || fail "the session is not iSER"

echo "== dd: $MB MiB of random data written and read back (direct I/O)"
head -c $((MB << 20)) /dev/urandom >"$TBRDMA_OUT/data"
dd if="$TBRDMA_OUT/data" of="$DEV" bs=256k oflag=direct status=none || fail "dd write"
dd if="$DEV" of="$TBRDMA_OUT/back" bs=256k count=$((MB * 4)) iflag=direct status=none || fail "dd read"
cmp "$TBRDMA_OUT/data" "$TBRDMA_OUT/back" || fail "read-back differs"
echo "   $MB MiB identical"

echo "== logout, login again"
iscsiadm -m node -T $IQN -p $KS_IP_A -I iser --logout >/dev/null || fail "logout"
login
dd if="$DEV" of="$TBRDMA_OUT/back" bs=256k count=$((MB * 4)) iflag=direct status=none || fail "dd read after login"
cmp "$TBRDMA_OUT/data" "$TBRDMA_OUT/back" || fail "data differs after a new login"
reg=$(($(net_counter tbks_b fast_reg) - reg0))
echo "   $MB MiB identical; the initiator made $reg fast registrations"
((reg > 0)) || fail "the initiator did not use fast registration (not over tbrdma?)"
iscsiadm -m node -T $IQN -p $KS_IP_A -I iser --logout >/dev/null || fail "logout"
echo "iSER works on tbrdma"
