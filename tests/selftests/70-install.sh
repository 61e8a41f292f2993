#!/bin/bash
# After `make install` (module into /lib/modules/<kver>/updates + depmod,
# provider into libibverbs' directory and /etc/libibverbs.d), everything works
# the way an installed driver does: no insmod, no RDMAV_DRIVERS.  `rdma link
# add ... type tbrdma` loads the module by its rdma-link alias.  The guest's
# root is a throw-away overlay, so installing here touches nothing on the host.
# timeout: 600
source "$(dirname "$0")/lib.sh"

tbr_needs_tree_build
tbr_load_core
defer tbr_rmmod
unset RDMAV_DRIVERS

make -C "$TBRDMA_ROOT" install >"$TBRDMA_OUT/install.log" 2>&1 ||
	fail "make install: $(tail -20 "$TBRDMA_OUT/install.log")"
kver=$(uname -r)
[ -f "/lib/modules/$kver/updates/tbrdma.ko" ] || fail "module not installed"
# libtbrdma-rdmav<N>.so, N the private ABI of the system's libibverbs.
lib=$(make --no-print-directory -s -C "$TBRDMA_ROOT/provider" print-LIB)
ls /usr/lib/*/libibverbs/"$lib" >/dev/null || fail "provider $lib not installed"
grep -qx 'driver tbrdma' /etc/libibverbs.d/tbrdma.driver || fail "tbrdma.driver"
modinfo -F alias tbrdma | grep -qx 'rdma-link-tbrdma' || fail "no rdma-link alias"

# Autoload through the link type: the module is not loaded yet.
[ ! -d /sys/module/tbrdma ] || fail "module loaded before the test"
rdma link add ti0 type tbrdma netdev lo || fail "rdma link add did not autoload tbrdma"
[ -d /sys/module/tbrdma ] || fail "module not loaded"
info=$(ibv_devinfo -d ti0) || fail "installed provider did not serve ti0"
grep -q PORT_ACTIVE <<<"$info" || fail "ti0 not ACTIVE: $info"
rdma link delete ti0
modprobe -r tbrdma || fail "modprobe -r"
[ ! -d /sys/module/tbrdma ] || fail "module still loaded after modprobe -r"

# modprobe with the parameter, then uninstall the provider.
modprobe tbrdma loopback=1 || fail "modprobe tbrdma loopback=1"
ibv_devinfo -d tbrlo0 >/dev/null || fail "tbrlo0 via installed provider"
modprobe -r tbrdma
make -C "$TBRDMA_ROOT/provider" uninstall >/dev/null || fail "uninstall"
[ ! -e /etc/libibverbs.d/tbrdma.driver ] || fail "tbrdma.driver left after uninstall"
