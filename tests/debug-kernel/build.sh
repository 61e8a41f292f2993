#!/bin/bash
# build.sh — print the directory of a cached debug kernel (KASAN, lockdep,
# kmemleak, DEBUG_ATOMIC_SLEEP), building it first if needed, from Debian's
# linux-source-6.1 package and debug.config.  The directory holds:
#   kernelrelease      the KVER string, e.g. 6.1.192-tbrdma-debug
#   bzImage            the image QEMU boots (its PVH entry triple-faults
#                      with KASAN's early shadow set-up, so not vmlinux)
#   root/lib/modules/KVER/   the installed modules (depmod'ed)
#   linux-source-6.1/  the configured, built tree external modules build against
# The cache lives outside the tree (it is ~4 GB): $XDG_CACHE_HOME/tbrdma.
# First build: see Documentation/testing.md for how long it takes here.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
tarball=/usr/src/linux-source-6.1.tar.xz
[[ -r $tarball ]] || { echo "debug-kernel: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 2; }

# Cache key: the source package version and the config fragment (bump
# CACHE_REV when a change to this script must force a rebuild).
CACHE_REV=1
version=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$( { echo "$version $CACHE_REV"; cat "$here/debug.config"; } | sha256sum | cut -c1-12)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/tbrdma
out=$cache/debug-kernel-$key
if [[ -f $out/done ]]; then
	echo "$out"
	exit 0
fi

log() { echo "debug-kernel: $*" >&2; }

# What a kernel build needs beyond a C compiler.
pkgs=(flex bison bc libelf-dev libssl-dev)
need=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if [[ ${#need[@]} -gt 0 ]]; then
	log "installing ${need[*]}"
	[[ $(id -u) -eq 0 ]] || { log "run as root, or: apt-get install ${need[*]}"; exit 2; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >&2
fi
mkdir -p "$cache"
# Built in place (the module tree's build link must stay valid); "done"
# marks a finished build, anything else there is a broken one.
rm -rf "$out"
work=$out
mkdir -p "$work"
log "building in $work (linux-source-6.1 $version); log in $work/build.log"
t0=$SECONDS
tar -xJf "$tarball" -C "$work"
src=$work/linux-source-6.1
jobs=$(nproc)
{
	make -C "$src" x86_64_defconfig
	"$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" \
		"$src/kernel/configs/kvm_guest.config" "$here/debug.config"
	make -C "$src" olddefconfig
} >"$work/build.log" 2>&1

# olddefconfig silently drops what a dependency refuses: check every line.
missing=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) grep -qxF -- "$line" "$src/.config" || { log "config not taken: $line"; missing=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		! grep -q "^$opt=" "$src/.config" || { log "config not taken: $line"; missing=1; } ;;
	esac
done <"$here/debug.config"
[[ $missing -eq 0 ]] || exit 1

if ! make -C "$src" -j"$jobs" bzImage modules >>"$work/build.log" 2>&1; then
	tail -n 30 "$work/build.log" >&2
	exit 1
fi
make -C "$src" INSTALL_MOD_PATH="$work/root" INSTALL_MOD_STRIP=1 modules_install \
	>>"$work/build.log" 2>&1
make -C "$src" -s kernelrelease >"$work/kernelrelease"
cp "$src/arch/x86/boot/bzImage" "$work/bzImage"
echo "$((SECONDS - t0))" >"$work/build-seconds"
touch "$work/done"
log "built $(cat "$out/kernelrelease") in $((SECONDS - t0)) s"
echo "$out"
