#!/bin/bash
# kernel-cache.sh — Debian 12's target kernels for building and for the
# QEMU test guest, unpacked into a cache of the project's instead of
# installed on the host: installing them would add kernels to the host's
# /boot and boot menu (the newest, a PREEMPT_RT one, would boot next time)
# for a test harness that only boots them inside QEMU.
#
#   kernel-cache.sh fetch SERIES...   unpack the newest image + headers of each
#                                     series (6.1, 6.12, 6.1-rt, 6.12-rt)
#   kernel-cache.sh root              the cache's root directory
#   kernel-cache.sh kver SERIES       the newest unpacked release of SERIES
#   kernel-cache.sh kdir SERIES|KVER  its headers (a kbuild tree)
#
# The cache (TBRDMA_KERNEL_CACHE, default ~/.cache/tbrdma/kernels) holds
# one root: boot/vmlinuz-KVER, lib/modules/KVER (with modules.dep), and the
# headers under usr/src, as the packages lay them out.  The guest overlays
# it on the host's root, so inside the guest every path is the usual one.
# `make distclean` removes it.  Nothing here needs root but `fetch`'s
# apt-get update on a machine that never ran one.
set -euo pipefail

cache=${TBRDMA_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tbrdma/kernels}
root=$cache/root

die() { echo "kernel-cache: $*" >&2; exit 2; }

# meta_packages SERIES -> the image and headers metapackages of a series.
meta_packages() {
	case $1 in
	6.1) echo linux-image-amd64 linux-headers-amd64 ;;
	6.12) echo linux-image-6.12-amd64 linux-headers-6.12-amd64 ;;
	6.1-rt) echo linux-image-rt-amd64 linux-headers-rt-amd64 ;;
	6.12-rt) echo linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64 ;;
	*) die "unknown series '$1' (6.1, 6.12, 6.1-rt, 6.12-rt)" ;;
	esac
}

# depends_on PKG PATTERN -> PKG's direct dependencies whose names match.
depends_on() {
	apt-cache depends "$1" 2>/dev/null |
		awk -v pat="$2" '$1 == "Depends:" && $2 ~ pat { print $2 }'
}

# newest_kver SERIES -> the newest release of SERIES in the cache (Debian
# names them 6.1.0-N-amd64, 6.1.0-N-rt-amd64, 6.12.N+debNN-amd64,
# 6.12.N+debNN-rt-amd64): no release is written into the tests, so a point
# release changes nothing.
newest_kver() {
	local ver=${1%-rt} rt=0 k r
	[[ $1 == *-rt ]] && rt=1
	for k in "$root"/boot/vmlinuz-"$ver".*; do
		[[ -e $k ]] || continue
		r=${k#"$root"/boot/vmlinuz-}
		[[ -f $root/lib/modules/$r/modules.dep && $r == *-amd64 ]] || continue
		if ((rt)); then [[ $r == *-rt-amd64 ]] || continue
		else [[ $r != *-rt-amd64 ]] || continue; fi
		echo "$r"
	done | sort -V | tail -n 1
}

# unpack PKG... — download the packages and unpack them into the cache;
# no maintainer script runs (no initramfs, no boot loader, no DKMS pass).
unpack() {
	local dl deb
	dl=$(mktemp -d "$cache/.download.XXXXXX")
	# apt's _apt user must be able to write there (else apt warns).
	chmod 0755 "$dl"
	(cd "$dl" && apt-get download -q -o APT::Sandbox::User=root "$@" >/dev/null) ||
		{ rm -rf "$dl"; die "apt-get download $* failed"; }
	for deb in "$dl"/*.deb; do
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" --keep-directory-symlink
	done
	rm -rf "$dl"
}

fetch_series() {
	local img_meta hdr_meta img hdr kver extra kdir
	read -r img_meta hdr_meta <<<"$(meta_packages "$1")"
	img=$(depends_on "$img_meta" '^linux-image-')
	hdr=$(depends_on "$hdr_meta" '^linux-headers-')
	[[ -n $img && -n $hdr ]] ||
		die "apt knows no $img_meta/$hdr_meta (run apt-get update)"
	kver=${img#linux-image-}
	kdir=$root/usr/src/linux-headers-$kver
	if [[ -f $root/lib/modules/$kver/modules.dep && -f $kdir/.tbrdma-ready ]]; then
		echo "kernel-cache: $1 ($kver) present"
		return
	fi
	# The headers' own parts: the common tree and the kbuild tools.
	extra=$(depends_on "$hdr" '^linux-(headers-.*-common|kbuild-)')
	echo "kernel-cache: unpacking $img, $hdr and $(echo $extra) into $root"
	unpack "$img" "$hdr" $extra
	# The flavour's Makefile includes the common tree by its absolute path
	# under /usr/src: point it at the cache's copy.
	sed -i "s|^include /usr/src/|include $root/usr/src/|" "$kdir/Makefile"
	# modules.dep is made by the image's postinst, which did not run.
	depmod -b "$root" -F "$root/boot/System.map-$kver" "$kver"
	touch "$kdir/.tbrdma-ready"
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
fetch)
	[[ $# -gt 0 ]] || die "usage: kernel-cache.sh fetch SERIES..."
	mkdir -p "$root"
	# apt-cache knows no package on a machine that never ran apt-get update.
	if ! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
		[[ $(id -u) -eq 0 ]] || die "apt has no package lists: run apt-get update as root"
		apt-get update -q
	fi
	# The guest overlays the cache on the host's root: where the host has
	# merged /usr (/lib -> usr/lib, ...), the cache must too, or its lib/
	# would hide the host's whole /lib in the guest.
	for d in bin sbin lib lib64; do
		if [[ -L /$d && ! -e $root/$d ]]; then
			mkdir -p "$root/$(readlink "/$d")"
			ln -s "$(readlink "/$d")" "$root/$d"
		fi
	done
	for s in "$@"; do fetch_series "$s"; done
	;;
root) echo "$root" ;;
kver)
	[[ $# -eq 1 ]] || die "usage: kernel-cache.sh kver SERIES"
	meta_packages "$1" >/dev/null
	newest_kver "$1"
	;;
kdir)
	[[ $# -eq 1 ]] || die "usage: kernel-cache.sh kdir SERIES|KVER"
	if [[ $1 =~ ^6\.(1|12)(-rt)?$ ]]; then kver=$(newest_kver "$1"); else kver=$1; fi
	[[ -n $kver && -f $root/usr/src/linux-headers-$kver/.tbrdma-ready ]] || exit 1
	echo "$root/usr/src/linux-headers-$kver"
	;;
*) die "usage: kernel-cache.sh fetch SERIES... | root | kver SERIES | kdir SERIES|KVER" ;;
esac
