#!/bin/bash
# `tbrdma status`: a loopback device and a netdev-mode device on a veth as
# text and as JSON parsed back (mode, netdev and driver, port state, MTU --
# the same as ibv_devinfo's active_mtu --, GIDs, peers, counters), the
# warning and its fix when the veth is down, a single device by name, no
# devices at all, and the errors: module not loaded (3), no such device and
# a device of another driver (2).  Works without privileges.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-admin.sh"

require_cmd ibv_devinfo rdma setpriv
tbr_load_core
defer tbr_rmmod

echo "== module not loaded"
tbr_rmmod
expect_rc 3 tbrdma status
grep -q 'module is not loaded' <<<"$out" || fail "no 'module is not loaded' message"

echo "== the loopback device"
tbr_insmod loopback=1
export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
wait_for '[[ $(</sys/class/infiniband/tbrlo0/ports/1/state) == *ACTIVE ]]' 10 ||
	fail "tbrlo0 not ACTIVE"
expect_rc 0 tbrdma status
for re in '^tbrlo0$' '^  mode +loopback$' '^  netdev +lo \(loopback\), up' \
	'^  port +ACTIVE \(LINK_UP\)$' '^  mtu +4096$' '::ffff:127\.0\.0\.1 \(RoCE v2\)' \
	'^  peers +none seen \(loopback mode\)$' '^  counters +tx [0-9]+ packets' \
	'^provider: RDMAV_DRIVERS='; do
	grep -qE -- "$re" <<<"$out" || fail "status text lacks /$re/"
done
grep -q WARNING <<<"$out" && fail "warnings for a healthy loopback device"

json=$(tbrdma status --json) || fail "status --json failed"
json_assert "status --json, loopback device" "$json" '
d = {x["name"]: x for x in s["devices"]}["tbrlo0"]
assert d["mode"] == "loopback" and d["netdev"] == "lo", d
assert d["netdev_driver"] == "loopback" and d["netdev_mtu"] == 65536, d
assert d["state"] == "ACTIVE" and d["phys_state"] == "LINK_UP", d
assert d["mtu"] == 4096 and isinstance(d["index"], int), d
assert "::ffff:127.0.0.1" in [g["gid"] for g in d["gids"]], d["gids"]
assert all(g["type"] == "RoCE v2" and g["netdev"] == "lo" for g in d["gids"]), d["gids"]
names = ("tx_packets tx_bytes rx_packets rx_bytes tx_ops rx_ops retransmits "
         "duplicate_requests out_of_sequence rnr_nak_sent rnr_nak_received "
         "ack_timeouts rx_bad_frames rx_stale_frames rx_checksum_errors "
         "fast_reg local_inv remote_inv response_gaps early_probes "
         "acks_piggybacked acks_delayed piggy_acks_ignored").split()
assert sorted(d["counters"]) == sorted(names), d["counters"]
assert d["peers"] == [] and d["thunderbolt"] is None and d["warnings"] == [], d
assert s["provider"]["found"] is True, s["provider"]
'
info=$(ibv_devinfo -d tbrlo0) || fail "ibv_devinfo -d tbrlo0"
grep -q 'active_mtu:[[:space:]]*4096' <<<"$info" || fail "ibv_devinfo disagrees: $info"

echo "== a netdev-mode device on a veth that is down"
ip link add tbadm0 type veth peer name tbadm1
defer 'ip link del tbadm0 2>/dev/null || true'
ip link set tbadm0 mtu 3000
rdma link add tba0 type tbrdma netdev tbadm0 || fail "rdma link add tba0"
expect_rc 0 tbrdma status tba0
grep -qE '^  WARNING +port DOWN: tbadm0 is down \(ip link set tbadm0 up\)$' <<<"$out" ||
	fail "no 'tbadm0 is down' warning"
grep -q '^tbrlo0' <<<"$out" && fail "status tba0 showed another device"
json=$(tbrdma status tba0 --json) || fail "status tba0 --json failed"
json_assert "status tba0 --json, veth down" "$json" '
assert [d["name"] for d in s["devices"]] == ["tba0"], s
d = s["devices"][0]
assert d["mode"] == "netdev" and d["netdev"] == "tbadm0", d
assert d["netdev_driver"] == "veth" and d["netdev_mtu"] == 3000, d
assert d["state"] == "DOWN" and d["netdev_up"] is False, d
assert any("is down" in w for w in d["warnings"]), d["warnings"]
assert d["peers"] == [] and d["counters"]["tx_packets"] == 0, d
'

echo "== the same veth up, with an address"
ip link set tbadm1 up
ip link set tbadm0 up
ip addr add 10.66.0.1/24 dev tbadm0
wait_for 'grep -q "ffff:0a42:0001" /sys/class/infiniband/tba0/ports/1/gids/*' 10 ||
	fail "no GID for 10.66.0.1"
wait_for '[[ $(</sys/class/infiniband/tba0/ports/1/state) == *ACTIVE ]]' 10 ||
	fail "tba0 not ACTIVE"
json=$(tbrdma status --json tba0) || fail "status --json tba0 failed"
mtu=$(ibv_devinfo -d tba0 | sed -nE 's/.*active_mtu:[[:space:]]*([0-9]+).*/\1/p')
echo "ibv_devinfo: active_mtu $mtu"
json_assert "status --json tba0, veth up" "$json" "
d = s['devices'][0]
assert d['state'] == 'ACTIVE' and d['netdev_up'] and d['netdev_carrier'], d
assert d['mtu'] == int('$mtu'), (d['mtu'], '$mtu')
assert '::ffff:10.66.0.1' in [g['gid'] for g in d['gids']], d['gids']
assert d['warnings'] == [], d['warnings']
"

echo "== on a Thunderbolt link (a fake sysfs tree around the real devices)"
# TBRDMA_SYSFS_ROOT moves every sysfs read: the RDMA devices and modules
# stay the real ones, while tbadm1 appears as a thunderbolt-net link at
# 2 x 20 Gb/s in a domain whose other link runs at 2 x 40 (Thunderbolt 5).
source "$TBRDMA_ROOT/tests/host/lib-fake-tbt.sh"
fake=/tmp/tbadm-sysfs
rm -rf $fake
defer "rm -rf $fake"
mkdir -p $fake/sys/class
ln -s /sys/class/infiniband $fake/sys/class/infiniband
ln -s /sys/module $fake/sys/module
fake_tbt_link $fake 0 0-1 4 "40.0 Gb/s" 2 "40.0 Gb/s" 2 faketbt0
fake_tbt_link $fake 0 0-3 4 "20.0 Gb/s" 2 "20.0 Gb/s" 2 tbadm1
rdma link add tba1 type tbrdma netdev tbadm1 || fail "rdma link add tba1"
json=$(TBRDMA_SYSFS_ROOT=$fake tbrdma status --json) || fail "status --json on the fake tree"
json_assert "status --json, tba1 on a slow Thunderbolt link" "$json" '
d = {x["name"]: x for x in s["devices"]}
tb = d["tba1"]["thunderbolt"]
assert d["tba1"]["netdev_driver"] == "thunderbolt-net", d["tba1"]
assert tb["xdomain"] == "0-3" and tb["generation"] == 4, tb
assert tb["rx"] == {"lanes": 2, "gbps_per_lane": 20.0}, tb
assert tb["expected_gbps_per_lane"] == 40.0 and tb["below_capability"] is True, tb
assert any("40 Gb/s" in w for w in d["tba1"]["warnings"]), d["tba1"]["warnings"]
assert d["tba0"]["thunderbolt"] is None and d["tbrlo0"]["thunderbolt"] is None, d
assert s["unattached_thunderbolt_netdevs"] == ["faketbt0"], s
'
expect_rc 0 env TBRDMA_SYSFS_ROOT=$fake "$TBR_TOOL" status tba1
grep -qE '^  thunderbolt +0-3 "node-0-3" via router 0-0, generation 4 \(USB4\)$' <<<"$out" ||
	fail "no thunderbolt line"
grep -qE '^ +rx 2 x 20 Gb/s, tx 2 x 20 Gb/s; expected 2 x 40 Gb/s$' <<<"$out" ||
	fail "no lanes line"
grep -qE '^  WARNING +Thunderbolt link 0-3 \(tbadm1\) runs at 20 Gb/s per lane' <<<"$out" ||
	fail "no warning about the slow link"
rdma link delete tba1

echo "== without privileges"
as_nobody "$TBR_TOOL" status --json >"$TBRDMA_OUT/nobody.json" ||
	fail "status as nobody failed"
json_assert "status as nobody" "$(<"$TBRDMA_OUT/nobody.json")" '
assert sorted(d["name"] for d in s["devices"]) == ["tba0", "tbrlo0"], s
'

echo "== errors"
expect_rc 2 tbrdma status nosuch0
grep -q 'no RDMA device named nosuch0' <<<"$out" || fail "message for an unknown device"
modprobe rdma_rxe
rdma link add tbarxe type rxe netdev lo || fail "cannot add an rxe device"
defer 'rdma link delete tbarxe 2>/dev/null || true'
expect_rc 2 tbrdma status tbarxe
grep -q 'tbarxe is not a tbrdma device' <<<"$out" || fail "message for an rxe device"
json=$(tbrdma status --json) || fail "status --json with rxe present"
json_assert "rxe device not listed" "$json" '
assert "tbarxe" not in [d["name"] for d in s["devices"]], s
'
rdma link delete tbarxe
modprobe -r rdma_rxe

echo "== no devices"
rdma link delete tba0
tbr_rmmod
tbr_insmod
expect_rc 0 tbrdma status
grep -q '^no tbrdma devices' <<<"$out" || fail "no 'no tbrdma devices' line"
json=$(tbrdma status --json) || fail "status --json without devices"
json_assert "no devices" "$json" 'assert s["devices"] == [], s'
tbr_rmmod
