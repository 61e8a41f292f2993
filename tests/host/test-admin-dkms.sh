#!/bin/bash
# DKMS builds the module from what `make dkms-source` copies, against
# Debian's 6.1 headers: dkms add, build (signed with a throw-away key, as
# dkms signs on Debian) and remove, all in a scratch dkms tree -- nothing
# under /var/lib/dkms, /usr/src or /lib/modules is touched.  Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"

if ! command -v dkms >/dev/null; then
	echo "1..0 # SKIP dkms not installed (tools/install-deps.sh installs it)"
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "1..0 # SKIP dkms build needs root"
	exit 0
fi
kdir=$(make -s --no-print-directory -C "$top" print-KDIR_6_1)
kver=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$kdir/include/generated/utsrelease.h" 2>/dev/null)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
[[ -n $kver && -n $version ]] ||
	{ echo "Bail out! no 6.1 headers ($kdir) or no version in dkms.conf"; exit 1; }

src=$tmp/src
tree=$tmp/dkms
arch=$(uname -m)
# dkms signs modules on Debian, generating its key under /var/lib/dkms
# unless told where: keep it here.
export mok_signing_key=$tmp/mok.key mok_certificate=$tmp/mok.pub
# dkms looks for sign-file in the host's kbuild package; the 6.1 headers
# here are the kernel cache's (tools/kernel-cache.sh), which has its own.
export sign_file=$kdir/scripts/sign-file
mkdir -p "$tree"
dkms=(dkms --dkmstree "$tree" --sourcetree "$src")
system_state() { ls -d /var/lib/dkms/tbrdma /var/lib/dkms/mok.key /usr/src/tbrdma-* 2>/dev/null; }
before=$(system_state)

# What dkms builds from.
if make -s --no-print-directory -C "$top" dkms-source DKMS_SOURCE="$src/tbrdma-$version" \
	>"$tmp/source.log" 2>&1; then
	ok "make dkms-source"
else
	not_ok "make dkms-source" "$(cat "$tmp/source.log")"
fi
missing=""
for f in dkms.conf Kbuild kmod/main.c kmod/tbrdma.h uapi/tbrdma-abi.h; do
	[[ -f $src/tbrdma-$version/$f ]] || missing+=" $f"
done
built=$(cd "$src/tbrdma-$version" 2>/dev/null && find . -name '*.o' -o -name '*.ko' -o -name '*.cmd')
if [[ -z $missing && -z $built ]]; then
	ok "the source tree has dkms.conf, Kbuild, kmod/, uapi/ and no build output"
else
	not_ok "the source tree has dkms.conf, Kbuild, kmod/, uapi/ and no build output" \
		"missing:$missing" "build output: $built"
fi

if "${dkms[@]}" add -m tbrdma -v "$version" >"$tmp/add.log" 2>&1; then
	ok "dkms add tbrdma/$version"
else
	not_ok "dkms add tbrdma/$version" "$(cat "$tmp/add.log")"
fi

if "${dkms[@]}" build -m tbrdma -v "$version" -k "$kver" --kernelsourcedir "$kdir" \
	>"$tmp/build.log" 2>&1; then
	ok "dkms build against $kver"
else
	not_ok "dkms build against $kver" "$(tail -20 "$tmp/build.log")" \
		"$(tail -30 "$tree/tbrdma/$version/build/make.log" 2>/dev/null)"
fi

ko=$(ls "$tree/tbrdma/$version/$kver/$arch/module/"tbrdma.ko* 2>/dev/null | head -1)
if [[ -n $ko ]]; then
	ok "the built module is kept in the dkms tree ($(basename "$ko"))"
	vermagic=$(modinfo -F vermagic "$ko")
	if [[ $vermagic == "$kver "* ]]; then
		ok "built for $kver (vermagic $vermagic)"
	else
		not_ok "built for $kver" "vermagic: $vermagic"
	fi
	if modinfo -F alias "$ko" | grep -qx 'rdma-link-tbrdma'; then
		ok "it is tbrdma: the rdma-link-tbrdma alias"
	else
		not_ok "it is tbrdma: the rdma-link-tbrdma alias" "$(modinfo "$ko")"
	fi
	if modinfo -F signer "$ko" | grep -q 'DKMS module signing key'; then
		ok "signed with dkms's (here: throw-away) key"
	else
		not_ok "signed with dkms's (here: throw-away) key" "$(modinfo "$ko" | grep -i sig)"
	fi
else
	not_ok "the built module is kept in the dkms tree" "$(ls -R "$tree" 2>&1 | head -30)"
	for what in "built for $kver" "the rdma-link-tbrdma alias" "signed"; do
		not_ok "$what" "no module"
	done
fi

status=$("${dkms[@]}" status -m tbrdma 2>&1)
if grep -qE "^tbrdma/$version, $kver, $arch: built" <<<"$status"; then
	ok "dkms status: built for $kver"
else
	not_ok "dkms status: built for $kver" "$status"
fi

if "${dkms[@]}" remove -m tbrdma -v "$version" --all >"$tmp/remove.log" 2>&1 &&
	[[ -z $("${dkms[@]}" status -m tbrdma 2>&1) ]]; then
	ok "dkms remove --all leaves no trace in the tree"
else
	not_ok "dkms remove --all leaves no trace in the tree" "$(cat "$tmp/remove.log")" \
		"$("${dkms[@]}" status -m tbrdma 2>&1)"
fi

after=$(system_state)
if [[ $before == "$after" ]]; then
	ok "nothing changed under /var/lib/dkms or /usr/src"
else
	not_ok "nothing changed under /var/lib/dkms or /usr/src" "before: $before" "after: $after"
fi

tap_done
