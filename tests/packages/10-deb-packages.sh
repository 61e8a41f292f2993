#!/bin/bash
# The Debian packages `make deb` builds (build/deb), installed the way a
# user installs them: dpkg -i into the stock 6.1 guest (or, with `make
# check-packages DIST=trixie|sid`, into that release's guest, the packages
# built in its root), DKMS builds
# tbrdma.ko for the running kernel, the system's libibverbs finds the
# provider with no RDMAV_DRIVERS, the packaged `tbrdma` attaches a device
# and ibv_rc_pingpong passes; then dpkg -r removes everything, the module
# included, and dpkg -P the provider's .driver file (a conffile).  The
# guest's root is a throw-away overlay: nothing reaches the host.
# make check runs it in a guest of its own (make check-packages alone):
# DKMS's build takes 6-8 minutes in the TCG guest with every object in
# the guest's compiler cache, 11-13 without.
# timeout: 1500
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"	# run_pair

# DKMS compiles every object in the TCG guest (minutes): once per
# release, on Debian 12's stock 6.1 or in another release's own guest
# (run-vm.sh --dist, `make check-packages DIST=...`), with its packages.
kver=$(uname -r)
release=$(. /etc/os-release && echo "${VERSION_CODENAME:-unknown}")
[[ $release != bookworm || ($kver == 6.1.* && $kver != *-rt-*) ]] ||
	skip "DKMS compiles the whole module in the TCG guest: the stock 6.1 kernel runs it"
echo "# $release, kernel $kver, rdma-core $(dpkg-query -W -f='${Version}' libibverbs1)"
debs=()
for p in tbrdma-dkms tbrdma-provider tbrdma-tools; do
	f=$(ls "$TBRDMA_ROOT"/build/deb/"${p}"_*.deb 2>/dev/null | tail -n 1)
	[[ -n $f ]] || fail "no $p package in build/deb: run 'make deb' on the host"
	debs+=("$f")
done
tbr_load_core
unset RDMAV_DRIVERS
# On failure only: the test removes both itself.
defer '[[ ! -e /sys/class/infiniband/t0 ]] || rdma link delete t0; [[ ! -d /sys/module/tbrdma ]] || modprobe -r tbrdma'

# A stock guest has one kernel: the kernel cache shows all four under
# /boot, and DKMS's postinst would build for the newest of them as well.
for f in /boot/config-*; do
	[[ $f == /boot/config-$kver ]] || rm -f "$f"
done

# The compiler cache run-vm.sh keeps for the guest, through Debian's own
# kbuild switch: the first run compiles (about eleven minutes under TCG),
# later runs compile only what changed.
export DEBIAN_KERNEL_USE_CCACHE=1 CCACHE_DIR=/var/cache/tbrdma-ccache
t0=$SECONDS
dpkg -i "${debs[@]}" >"$TBRDMA_OUT/dpkg-i.log" 2>&1 ||
	fail "dpkg -i: $(tail -30 "$TBRDMA_OUT/dpkg-i.log")"
echo "# dpkg -i with the DKMS build: $((SECONDS - t0)) s; $(ccache -s 2>/dev/null | grep -iE 'hits|misses' | tr -s ' \n' ' ')"
cp /var/lib/dkms/tbrdma/*/build/make.log "$TBRDMA_OUT/dkms-make.log" 2>/dev/null || true
ko=$(modinfo -n tbrdma) || fail "modinfo finds no tbrdma module after dpkg -i"
[[ $ko == /lib/modules/$kver/updates/dkms/tbrdma.ko* ]] || fail "module at $ko, not DKMS's"
dkms status tbrdma | grep -q "$kver.*installed" || fail "dkms status: $(dkms status tbrdma)"
echo "ok: DKMS built and installed $ko"

modprobe tbrdma || fail "modprobe tbrdma"
tbrdma attach lo t0 || fail "tbrdma attach lo t0 (the packaged tool)"
info=$(ibv_devinfo -d t0) || fail "the system's libibverbs did not open t0"
grep -q PORT_ACTIVE <<<"$info" || fail "t0 not ACTIVE: $info"
echo "ok: ibv_devinfo -d t0 shows the port ACTIVE (no RDMAV_DRIVERS)"

# On lo, GID 1 is ::ffff:127.0.0.1 (lib-verbs.sh).
PORT=18531
gid=1
wait_for "[[ \$(</sys/class/infiniband/t0/ports/1/gids/$gid) == 0000:0000:0000:0000:0000:ffff:7f00:0001 ]]" 10 ||
	fail "t0: GID $gid is not ::ffff:127.0.0.1"
run_pair deb-pingpong 60 "ibv_rc_pingpong -d t0 -g $gid -n 100 -s 4096 -c -p $PORT" \
	"ibv_rc_pingpong -d t0 -g $gid -n 100 -s 4096 -c -p $PORT 127.0.0.1" ||
	fail "ibv_rc_pingpong on the packaged stack"
echo "ok: ibv_rc_pingpong, every byte checked"

rdma link delete t0 || fail "rdma link delete t0"
modprobe -r tbrdma || fail "modprobe -r tbrdma"
dpkg -r tbrdma-tools tbrdma-provider tbrdma-dkms >"$TBRDMA_OUT/dpkg-r.log" 2>&1 ||
	fail "dpkg -r: $(tail -30 "$TBRDMA_OUT/dpkg-r.log")"
! modinfo -n tbrdma >/dev/null 2>&1 || fail "module still found after dpkg -r: $(modinfo -n tbrdma)"
[[ -z $(find /lib/modules/"$kver"/updates -name 'tbrdma.ko*' 2>/dev/null) ]] ||
	fail "tbrdma.ko left under /lib/modules/$kver/updates"
left=$(ls -d /usr/src/tbrdma-* /usr/sbin/tbrdma /usr/bin/tprun 2>/dev/null || true)
[[ -z $left ]] || fail "left after dpkg -r: $left"
! ls /usr/lib/*/libibverbs/libtbrdma-rdmav*.so >/dev/null 2>&1 || fail "provider left after dpkg -r"
! dkms status tbrdma | grep -q . || fail "dkms still knows tbrdma: $(dkms status tbrdma)"
dpkg -P tbrdma-provider >/dev/null || fail "dpkg -P tbrdma-provider"
[[ ! -e /etc/libibverbs.d/tbrdma.driver ]] || fail "tbrdma.driver left after dpkg -P"
echo "ok: dpkg -r removed the module, the sources, the provider and the tools; dpkg -P the .driver file"
