#!/bin/bash
# mkinitramfs.sh KVER [ROOT] — print the path of a cached initramfs for
# KVER, building it first if needed. It holds busybox-static, the modules
# needed to mount the 9p root + overlay (with their dependencies from
# modules.dep; none when the kernel has them built in), and
# initramfs-init.sh as /init. ROOT (default /) is where lib/modules is.
set -euo pipefail

kver=${1:?usage: mkinitramfs.sh KVER [ROOT]}
modroot=${2:-/}
here=$(cd "$(dirname "$0")" && pwd -P)
moddir=${modroot%/}/lib/modules/$kver
busybox=/bin/busybox
roots=(virtio_pci 9pnet_virtio 9p overlay)  # what /init mounts; deps are resolved

[[ -f $moddir/modules.dep ]] || { echo "mkinitramfs: no $moddir/modules.dep" >&2; exit 2; }
[[ -x $busybox ]] || { echo "mkinitramfs: $busybox missing (apt-get install busybox-static)" >&2; exit 2; }

# Cache key: the init script, this builder, and the kernel's module set
# (Debian can update a package without changing KVER).
key=$(cat "$here/initramfs-init.sh" "$0" "$moddir/modules.dep" | sha256sum | cut -c1-16)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/tbrdma
out=$cache/initramfs-$kver-$key.cpio
if [[ -s $out ]]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/modules"
cp "$busybox" "$stage/bin/busybox"
install -m 0755 "$here/initramfs-init.sh" "$stage/init"

# modprobe --show-depends prints "insmod PATH" lines in load order (deps
# first) from modules.dep, and "builtin NAME" for built-in ones (6.12).
for m in "${roots[@]}"; do
	modprobe --show-depends -d "$modroot" --set-version="$kver" "$m"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' >"$stage/paths"
touch "$stage/modules/load-order"
while read -r path; do
	name=$(basename "$path")
	# busybox insmod cannot read compressed modules: store them plain.
	case $name in
	*.ko.xz) xz -dc "$path" >"$stage/modules/${name%.xz}"; name=${name%.xz} ;;
	*.ko.zst) zstd -qdc "$path" >"$stage/modules/${name%.zst}"; name=${name%.zst} ;;
	*.ko.gz) gzip -dc "$path" >"$stage/modules/${name%.gz}"; name=${name%.gz} ;;
	*) cp "$path" "$stage/modules/$name" ;;
	esac
	echo "$name" >>"$stage/modules/load-order"
done <"$stage/paths"
rm "$stage/paths"

# Nothing to load is right only when the kernel has them all built in.
if [[ ! -s $stage/modules/load-order ]]; then
	for m in "${roots[@]}"; do
		grep -q "/${m//_/[_-]}\.ko" "$moddir/modules.builtin" ||
			{ echo "mkinitramfs: $m neither a module nor built in" >&2; exit 1; }
	done
fi

# Uncompressed newc cpio: a few MB, nothing to decompress in the slow guest.
tmp=$(mktemp "$cache/.initramfs.XXXXXX")
(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) >"$tmp"
rm -f "$cache/initramfs-$kver-"*.cpio  # drop stale builds for this kernel
chmod 0644 "$tmp"
mv "$tmp" "$out"                       # atomic: concurrent runs never see half a file
echo "$out"
