#!/bin/bash
# `tbrdma thunderbolt enable|disable|status`: saved in
# /etc/modprobe.d/tbrdma.conf (modprobe sees it), applied to the running
# module's thunderbolt_attach at once -- a Thunderbolt network link (the
# fake thunderbolt-net of tests/fake-tbnet) gets a device on enable and
# keeps it on disable --, reported back as JSON; `status` names a
# Thunderbolt link without a device; without privileges: exit 4.
# The guest's root is a throw-away overlay: /etc is ours to write.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-admin.sh"

require_cmd modprobe setpriv
fake=$TBRDMA_MODDIR/tests/fake-tbnet/tbrdma_fake_tbnet.ko
[[ -f $fake ]] || fail "$fake not built (make test-progs)"
conf=/etc/modprobe.d/tbrdma.conf
param=/sys/module/tbrdma/parameters/thunderbolt_attach
[[ ! -e $conf ]] || fail "$conf exists before the test"
defer "rm -f $conf"
tbr_load_core
defer tbr_rmmod
fake_rmmod() { if [[ -d /sys/module/tbrdma_fake_tbnet ]]; then rmmod tbrdma_fake_tbnet; fi; }
defer fake_rmmod
modprobe_option() { modprobe --showconfig | grep -E '^options tbrdma ' || true; }

echo "== module not loaded: saved for later"
expect_rc 0 tbrdma thunderbolt status
grep -qE '^  running +module not loaded$' <<<"$out" || fail "status without the module"
expect_rc 0 tbrdma thunderbolt enable
grep -q 'applies when it loads' <<<"$out" || fail "enable without the module"
grep -qx 'options tbrdma thunderbolt_attach=1' $conf || fail "$conf: $(cat $conf)"
[[ $(modprobe_option) == *thunderbolt_attach=1* ]] || fail "modprobe does not see it: $(modprobe_option)"

echo "== loaded by insmod (which reads no modprobe.d): saved on, running off"
tbr_insmod
[[ -f $param ]] || fail "the module has no thunderbolt_attach parameter"
json=$(tbrdma thunderbolt status --json) || fail "thunderbolt status --json"
json_assert "saved on, running off" "$json" "
assert s['persisted'] is True and s['persisted_file'] == '$conf', s
assert s['module_loaded'] is True and s['running'] is False, s
assert s['enabled'] is False and s['links'] == [], s
"

echo "== a Thunderbolt network link appears"
insmod "$fake"
wait_for '[[ -e /sys/class/net/faketb0 ]]' 10 || fail "faketb0 missing"
json=$(tbrdma status --json) || fail "status --json"
json_assert "faketb0 unattached" "$json" '
assert s["unattached_thunderbolt_netdevs"] == ["faketb0"], s
'
expect_rc 0 tbrdma status
grep -q '^faketb0: Thunderbolt network link without a tbrdma device' <<<"$out" ||
	fail "status does not name faketb0"

echo "== enable: applied at once"
expect_rc 0 tbrdma thunderbolt enable
[[ $(<$param) == Y ]] || fail "parameter $(<$param) after enable"
wait_for 'rdma link show | grep -q "netdev faketb0"' 20 || fail "faketb0 not attached: $(rdma link show)"
dev=$(rdma link show | sed -nE 's|^link ([^/]+)/1 .*netdev faketb0.*|\1|p')
json=$(tbrdma thunderbolt status --json) || fail "thunderbolt status --json"
json_assert "enabled, faketb0 attached" "$json" "
assert s['enabled'] is True and s['persisted'] is True and s['running'] is True, s
assert s['links'] == [{'netdev': 'faketb0', 'device': '$dev', 'link': None}], s['links']
"
json=$(tbrdma status --json "$dev") || fail "status --json $dev"
json_assert "$dev on faketb0" "$json" "
d = s['devices'][0]
assert d['netdev'] == 'faketb0' and d['netdev_driver'] == 'thunderbolt-net', d
assert d['mode'] == 'netdev' and d['thunderbolt'] is None, d
"

echo "== disable: no new attachments, the device stays"
expect_rc 0 tbrdma thunderbolt disable
[[ $(<$param) == N ]] || fail "parameter $(<$param) after disable"
grep -qx 'options tbrdma thunderbolt_attach=0' $conf || fail "$conf: $(cat $conf)"
grep -q 'thunderbolt_attach=1' $conf && fail "$conf still enables: $(cat $conf)"
[[ $(modprobe_option) == *thunderbolt_attach=0* ]] || fail "modprobe: $(modprobe_option)"
[[ -e /sys/class/infiniband/$dev ]] || fail "disable removed $dev"
expect_rc 0 tbrdma thunderbolt status
grep -qE '^Thunderbolt auto-attach: disabled$' <<<"$out" || fail "status after disable"
grep -qE "^  links +faketb0 -> $dev\$" <<<"$out" || fail "status does not show faketb0 -> $dev"

echo "== without privileges"
expect_rc 4 as_nobody "$TBR_TOOL" thunderbolt enable
grep -q 'permission denied' <<<"$out" || fail "message for enable as nobody"
[[ $(<$param) == N ]] || fail "nobody switched it on"
expect_rc 0 as_nobody "$TBR_TOOL" thunderbolt status

fake_rmmod
wait_for "[[ ! -e /sys/class/infiniband/$dev ]]" 20 || fail "$dev survived its netdev"
tbr_rmmod
