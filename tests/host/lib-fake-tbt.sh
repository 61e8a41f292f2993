# lib-fake-tbt.sh — fake sysfs trees with Thunderbolt network links, laid
# out as the kernel lays them out (drivers/thunderbolt, drivers/net/
# thunderbolt.c), for testing `tbrdma` with TBRDMA_SYSFS_ROOT.  Sourced by
# tests/host/test-admin-cli.sh and tests/selftests/160-admin-status.sh.
# shellcheck shell=bash

# fake_tbt_link ROOT DOMAIN XDOMAIN GENERATION RX_SPEED RX_LANES TX_SPEED
#               TX_LANES NETDEV
# Under ROOT/sys: domainDOMAIN, its host router DOMAIN-0 (with GENERATION),
# the XDomain XDOMAIN (the remote host, with the link's lanes and speeds),
# its thunderbolt-net service XDOMAIN.0 and the netdev NETDEV under it, the
# bus/thunderbolt/devices links, and class/net/NETDEV.
fake_tbt_link() {
	local root=$1 dom=$2 xd=$3 gen=$4 netdev=$9
	local domdir=sys/devices/pci0000:00/0000:00:0d.$dom/domain$dom
	local router=$domdir/$dom-0
	local xdir=$router/$xd
	local svc=$xdir/$xd.0
	local d
	mkdir -p "$root/$svc/net/$netdev" "$root/sys/bus/thunderbolt/devices" \
		"$root/sys/bus/thunderbolt/drivers/thunderbolt-net" "$root/sys/class/net"
	echo "$gen" >"$root/$router/generation"
	printf '%s\n' "$5" >"$root/$xdir/rx_speed"
	echo "$6" >"$root/$xdir/rx_lanes"
	printf '%s\n' "$7" >"$root/$xdir/tx_speed"
	echo "$8" >"$root/$xdir/tx_lanes"
	echo "node-$xd" >"$root/$xdir/device_name"
	for d in "$router" "$xdir" "$svc"; do
		ln -sfn "$root/sys/bus/thunderbolt" "$root/$d/subsystem"
		ln -sfn "$root/$d" "$root/sys/bus/thunderbolt/devices/${d##*/}"
	done
	ln -sfn "$root/sys/bus/thunderbolt/drivers/thunderbolt-net" "$root/$svc/driver"
	ln -sfn "$root/$svc" "$root/$svc/net/$netdev/device"
	ln -sfn "$root/$svc/net/$netdev" "$root/sys/class/net/$netdev"
}
