#!/bin/bash
# thunderbolt_attach: off by default; when on, every thunderbolt-net netdev
# gets an RDMA device tbr<N>: those present when it is switched on (or at
# load time) and those registered later; other netdevs (veth) never.  When
# switched off, no new attachments, existing devices stay.  A device goes
# away with its netdev.
#
# Without Thunderbolt hardware, tests/fake-tbnet (built by `make
# test-progs`) stands in: netdevs faketb<N> whose parent device is bound to
# a (platform) driver named "thunderbolt-net", as the real driver's are.
# timeout: 600
source "$(dirname "$0")/lib.sh"

fake=$TBRDMA_MODDIR/tests/fake-tbnet/tbrdma_fake_tbnet.ko
[[ -f $fake ]] || fail "$fake not built (make test-progs)"
param=/sys/module/tbrdma/parameters/thunderbolt_attach

tbr_load_core
defer tbr_rmmod
fake_rmmod() { if [[ -d /sys/module/tbrdma_fake_tbnet ]]; then rmmod tbrdma_fake_tbnet; fi; }
defer fake_rmmod

# ibdevs_on NETDEV [NETNS]: the RDMA devices attached to NETDEV.
ibdevs_on() {
	local out
	if [[ -n ${2:-} ]]; then
		out=$(ip netns exec "$2" rdma link show)
	else
		out=$(rdma link show)
	fi
	sed -nE "s|^link ([^/ ]+)/1 .*netdev $1( .*)?\$|\1|p" <<<"$out"
}
attached() { [[ -n $(ibdevs_on "$@") ]]; }
tbr_count() { find /sys/class/infiniband -maxdepth 1 -name 'tbr[0-9]*' | wc -l; }
# A negative answer needs time for a deferred attachment that should not be.
settle() { sleep 2; }

# Off by default; veths and fake Thunderbolt netdevs stay alone.
tbr_insmod
[[ $(cat $param) == N ]] || fail "thunderbolt_attach should default to N, is $(cat $param)"
[[ $(stat -c %a $param) == 644 ]] || fail "parameter mode $(stat -c %a $param)"
ip link add tbveth0 type veth peer name tbveth1
defer 'ip link del tbveth0 2>/dev/null || true'
insmod "$fake"
ip link show faketb0 >/dev/null || fail "fake thunderbolt netdev missing"
[[ $(readlink /sys/class/net/faketb0/device/driver) == */thunderbolt-net ]] ||
	fail "faketb0's parent is not bound to thunderbolt-net"
settle
[[ $(tbr_count) -eq 0 ]] || fail "attached with thunderbolt_attach=N: $(rdma link show)"

# Switched on at run time: what exists is attached, the veth is not.
echo Y >$param
[[ $(cat $param) == Y ]] || fail "parameter did not switch on"
wait_for 'attached faketb0' 20 || fail "faketb0 not attached when switched on: $(rdma link show)"
dev=$(ibdevs_on faketb0)
[[ $dev =~ ^tbr[0-9]+$ ]] || fail "device name '$dev' is not tbr<N>"
[[ $(cat "/sys/class/infiniband/$dev/tbrdma_mode") == netdev ]] || fail "$dev mode"
[[ -z $(cat "/sys/class/infiniband/$dev/tbrdma_peers") ]] || fail "$dev has peers already"
if attached tbveth0 || attached tbveth1; then fail "a veth was attached"; fi
echo Y >$param	# again: nothing new, no error
settle
[[ $(tbr_count) -eq 1 ]] || fail "writing Y again duplicated: $(rdma link show)"

# Registered later (plugged in): attached; a new veth is not.
ip link add tbveth2 type veth peer name tbveth3
defer 'ip link del tbveth2 2>/dev/null || true'
fake_rmmod	# unplugged: the device goes with its netdev
wait_for '[ ! -e /sys/class/infiniband/$dev ]' 20 || fail "$dev survived its netdev"
insmod "$fake" num=2
wait_for 'attached faketb0 && attached faketb1' 20 ||
	fail "hot-plugged netdevs not attached: $(rdma link show)"
if attached tbveth2 || attached tbveth3; then fail "a new veth was attached"; fi
[[ $(tbr_count) -eq 2 ]] || fail "expected 2 devices: $(rdma link show)"

# Switched off: existing devices stay, new netdevs are left alone.
echo N >$param
settle
[[ $(tbr_count) -eq 2 ]] || fail "switching off removed devices"
fake_rmmod
wait_for '[ $(tbr_count) -eq 0 ]' 20 || fail "devices survived their netdevs"
insmod "$fake"
settle
[[ $(tbr_count) -eq 0 ]] || fail "attached after switching off"

# Every namespace: a netdev moved away (while off) is found when switched on.
ip netns add tbtns
defer 'ip netns del tbtns 2>/dev/null || true'
ip link set faketb0 netns tbtns
echo 1 >$param
wait_for 'attached faketb0 tbtns' 20 ||
	fail "netdev in another namespace not attached: $(ip netns exec tbtns rdma link show)"
fake_rmmod	# unregisters it in its namespace
wait_for '[ $(tbr_count) -eq 0 ]' 20 || fail "devices survived their netdevs"

# Unload with it on and devices attached: clean.
insmod "$fake" num=2
wait_for '[ $(tbr_count) -eq 2 ]' 20 || fail "not attached before unload"
tbr_rmmod
[[ $(tbr_count) -eq 0 ]] || fail "devices survived rmmod"

# At load time, by insmod argument: present netdevs are attached.
tbr_insmod thunderbolt_attach=1
[[ $(cat $param) == Y ]] || fail "insmod argument not taken"
wait_for '[ $(tbr_count) -eq 2 ]' 20 || fail "not attached at load: $(rdma link show)"
tbr_rmmod
fake_rmmod

# Plug and unplug while attachments are in flight, and unload in the middle
# of them: no warning, no leaked reference (dmesg is checked after the run).
tbr_insmod thunderbolt_attach=1
for s in 0 0.02 0.05 0.1 0.3; do
	insmod "$fake" num=8
	sleep $s
	fake_rmmod
done
wait_for '[ $(tbr_count) -eq 0 ]' 30 || fail "devices left after plug/unplug: $(rdma link show)"
insmod "$fake" num=8
tbr_rmmod
fake_rmmod
[[ $(tbr_count) -eq 0 ]] || fail "devices survived rmmod"

# modprobe, as an administrator would: on the command line, and in
# /etc/modprobe.d.  A module tree of our own (depmod -a over the guest's
# whole tree takes minutes under TCG); ib_core and ib_uverbs are loaded.
kver=$(uname -r)
mroot=$TBRDMA_OUT/modroot
mkdir -p "$mroot/lib/modules/$kver/updates"
cp "$TBRDMA_MODDIR/tbrdma.ko" "$mroot/lib/modules/$kver/updates/"
depmod -b "$mroot" "$kver" 2>/dev/null
mp() { modprobe -d "$mroot" "$@"; }
insmod "$fake"
mp tbrdma thunderbolt_attach=1 || fail "modprobe tbrdma thunderbolt_attach=1"
[[ $(cat $param) == Y ]] || fail "modprobe argument not taken"
wait_for 'attached faketb0' 20 || fail "not attached after modprobe"
mp -r tbrdma
conf=/etc/modprobe.d/tbrdma-test.conf	# the guest's root is a throw-away overlay
echo 'options tbrdma thunderbolt_attach=Y' >$conf
defer "rm -f $conf"
mp tbrdma || fail "modprobe tbrdma with options"
[[ $(cat $param) == Y ]] || fail "modprobe.d option not taken"
wait_for 'attached faketb0' 20 || fail "not attached with the modprobe.d option"
mp -r tbrdma
