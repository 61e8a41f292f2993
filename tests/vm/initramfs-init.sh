#!/bin/busybox sh
# shellcheck shell=dash
# /init of the test initramfs (runs as PID 1, busybox only).
# Job: make the host's root (9p, read-only) writable with a tmpfs overlay
# (or another Debian release's root and the tree built in it, run-vm.sh
# --dist),
# mount the results share and the usual pseudo filesystems, bring lo up, then
# switch_root so that PID 1 and the kernel's module autoloader
# (/sbin/modprobe) run inside the real root.
/bin/busybox --install -s /bin
export PATH=/bin

mkdir -p /proc /sys /dev /newroot /lower /rw
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1

die() {
	echo "tbrdma-init: FATAL: $*"
	poweroff -f  # busybox: reboot(RB_POWER_OFF) at once; qemu exits
	sleep 5
	exit 1       # last resort: PID 1 exits, kernel panics, -no-reboot ends qemu
}

# Load order was resolved on the host from modules.dep (mkinitramfs.sh).
while read -r m; do
	insmod "/modules/$m" || die "insmod $m failed"
done </modules/load-order

# msize: 512000 is the largest the virtio transport accepts (6.1 and 6.12).
opts=trans=virtio,version=9p2000.L,msize=512000
# The results share first: its config says how to build the root.
# cache=none: every write reaches the host at once, nothing is lost at
# poweroff.
mkdir -p /results
mount -t 9p -o "$opts" tbrresults /results || die "mount results share"
config() { sed -n "s/^$1=//p" /results/config; }
root=$(config TBRDMA_ROOT)
kernel_root=$(config KERNEL_ROOT)
modroot=$(config MODULES_ROOT)
tree=$(config TREE)
tests_dir=$(config TESTS_DIR)

# cache=loose: the lower layer is read-only for the guest, so caching is
# safe and makes exec/stat over 9p much faster under TCG.
mount -t 9p -o "ro,$opts,cache=loose" tbrroot /lower || die "mount 9p root"
# Debian's kernels live in the project's kernel cache, not in the host's
# /boot and /lib/modules (tools/kernel-cache.sh): the cache's root, shared
# on its own, goes on top of the host's, so the booted kernel's modules
# and headers are at their usual paths.
lower=/lower
if [ -n "$kernel_root" ]; then
	mkdir -p /kernels
	mount -t 9p -o "ro,$opts,cache=loose" tbrkernels /kernels || die "mount the kernel cache"
	lower=/kernels:/lower
fi
mount -t tmpfs -o mode=0755 tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=$lower,upperdir=/rw/upper,workdir=/rw/work \
	overlay /newroot || die "mount overlay"

# Another release's guest: the copy of the tree built for it, at its own
# path and writable the same way (tests run make in it), and a selftest
# dir of the host's.
if [ -n "$tree" ]; then
	mkdir -p /tree /rw/tree-upper /rw/tree-work "/newroot$tree"
	mount -t 9p -o "ro,$opts,cache=loose" tbrtree /tree || die "mount the tree"
	mount -t overlay -o lowerdir=/tree,upperdir=/rw/tree-upper,workdir=/rw/tree-work \
		overlay "/newroot$tree" || die "mount the tree's overlay"
fi
if [ -n "$tests_dir" ]; then
	mkdir -p "/newroot$tests_dir"
	mount -t 9p -o "ro,$opts,cache=loose" tbrtests "/newroot$tests_dir" || die "mount $tests_dir"
fi

# /run is a fresh tmpfs; the results share moves under it.
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run
mkdir -p /newroot/run/tbrdma-results
mount --move /results /newroot/run/tbrdma-results || die "move results share"
# The compiler cache run-vm.sh keeps for the guest (the host's
# ~/.cache/tbrdma/guest-ccache).
mkdir -p /newroot/var/cache/tbrdma-ccache
mount -t 9p -o "$opts" tbrccache /newroot/var/cache/tbrdma-ccache || die "mount the compiler cache"

# The rest of the system set-up, done here because busybox applets start in
# ~25 ms while each dynamically linked host binary costs ~100 ms under TCG.
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug
# devtmpfs has no /dev/fd & co; bash process substitution needs /dev/fd.
ln -sfn /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
# /tmp stays the overlay's: a tree checked out under the host's /tmp (as CI
# may do) must be visible; guest writes there land in the tmpfs upper layer.
# lo starts down, and an RDMA device on a down netdev reports PORT_DOWN.
ip link set lo up
hostname tbrdma-vm

# A kernel we built (run-vm.sh --kernel-dir) has its modules outside
# /lib/modules: show them where modprobe looks.
if [ -n "$modroot" ]; then
	kver=$(uname -r)
	mkdir -p "/newroot/lib/modules/$kver"
	mount --bind "/newroot$modroot/lib/modules/$kver" "/newroot/lib/modules/$kver" ||
		die "bind modules of $kver"
fi
runner=$root/tests/vm/guest-run.sh
[ -f "/newroot$runner" ] || die "guest runner '$runner' not visible in the guest"

echo "tbrdma-init: root ready, switching to it" >/dev/kmsg
for d in proc sys dev; do  # with what is mounted below them
	mount --move "/$d" "/newroot/$d" || die "move /$d"
done
exec switch_root /newroot /bin/bash "$runner" /run/tbrdma-results
