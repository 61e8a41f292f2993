#!/bin/bash
# vmlinux.sh BZIMAGE — print the kernel image QEMU should boot for the
# Debian kernel BZIMAGE (boot/vmlinuz-KVER in the kernel cache).
#
# Debian's vmlinuz is a compressed bzImage; decompressing it inside a
# TCG guest costs 3-4 s per boot (xz on 6.1). The same kernel, decompressed
# once on the host and cached, boots directly through its PVH entry point
# (CONFIG_PVH=y in Debian). Falls back to the bzImage if anything is off.
set -euo pipefail

bz=${1:?usage: vmlinux.sh BZIMAGE}
kver=${bz##*/vmlinuz-}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/tbrdma
key=$(sha256sum <"$bz" | cut -c1-16)
out=$cache/vmlinux-$kver-$key

fallback() { echo "$bz"; exit 0; }
if [[ -s $out ]]; then
	echo "$out"
	exit 0
fi
command -v readelf >/dev/null || fallback

# Find the compressed payload by its magic (what scripts/extract-vmlinux does).
magics=($'\xfd7zXZ' $'\x28\xb5\x2f\xfd' $'\x1f\x8b\x08')
tools=("xz -dc" "zstd -qdc" "gzip -dc")
for i in "${!magics[@]}"; do
	magic=${magics[i]} tool=${tools[i]}
	command -v "${tool%% *}" >/dev/null || continue
	mkdir -p "$cache"
	tmp=$(mktemp "$cache/.vmlinux.XXXXXX")
	while read -r off; do
		# The payload is followed by other data: decompressors complain, ignore.
		tail -c "+$((off + 1))" "$bz" | $tool >"$tmp" 2>/dev/null || true
		# Usable only if it is an ELF kernel with a PVH entry note (Xen note 0x12).
		if readelf -n "$tmp" 2>/dev/null | grep -q 'Xen.*(0x00000012)'; then
			chmod 0644 "$tmp"
			rm -f "$cache/vmlinux-$kver-"*  # stale extractions of this kernel
			mv "$tmp" "$out"
			echo "$out"
			exit 0
		fi
	done < <(LC_ALL=C grep -abo "$magic" "$bz" | cut -d: -f1 | head -n 5)
	rm -f "$tmp"
done
fallback
