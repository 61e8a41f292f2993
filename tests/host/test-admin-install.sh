#!/bin/bash
# `make install` / `make uninstall` into a DESTDIR, checked file by file:
# the module under /lib/modules/<kver>/updates, the provider in Debian's
# libibverbs directory with its .driver file (whatever PREFIX says), the
# tools and the man page under PREFIX -- nothing else -- and uninstall
# leaves nothing behind.  Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"
make=(make --no-print-directory -C "$top")

kver=$("${make[@]}" -s print-KVER)
multiarch=$(${CC:-cc} -print-multiarch)
[[ -n $kver && -n $multiarch ]] ||
	{ echo "Bail out! cannot tell the kernel release ($kver) or multiarch ($multiarch)"; exit 1; }
provider_dir=usr/lib/$multiarch/libibverbs
# libtbrdma-rdmav<N>.so, N the private ABI of the libibverbs it builds against.
lib=$(make --no-print-directory -s -C "$top/provider" print-LIB)
[[ $lib =~ ^libtbrdma-rdmav[0-9]+\.so$ ]] || { echo "Bail out! provider library name '$lib'"; exit 1; }

# check_file DESTDIR PATH MODE [SOURCE]: installed with MODE (and equal to SOURCE).
check_file() {
	local dest=$1 path=$2 mode=$3 src=${4:-} got
	if [[ ! -f $dest/$path ]]; then
		not_ok "/$path installed" "missing"
		return
	fi
	got=$(stat -c %a "$dest/$path")
	if [[ $got != "$mode" ]]; then
		not_ok "/$path installed" "mode $got, expected $mode"
	elif [[ -n $src ]] && ! cmp -s "$top/$src" "$dest/$path"; then
		not_ok "/$path installed" "differs from $src"
	else
		ok "/$path installed, mode $mode${src:+, same as $src}"
	fi
}

# only_files DESTDIR PATH...: the files under DESTDIR are exactly these
# (so also: no modules.dep, depmod runs for real installs only).
only_files() {
	local dest=$1 want got
	shift
	want=$(printf '%s\n' "$@" | sort)
	got=$(cd "$dest" && find . -type f -o -type l | sed 's|^\./||' | sort)
	if [[ $got == "$want" ]]; then
		ok "nothing else installed (${#@} files)"
	else
		not_ok "nothing else installed" "$(diff <(echo "$want") <(echo "$got"))"
	fi
}

# --- explicit PREFIX ------------------------------------------------------------
dest=$tmp/dest
if ! "${make[@]}" install DESTDIR="$dest" PREFIX=/opt/tbr >"$tmp/install.log" 2>&1; then
	echo "Bail out! make install failed: $(tail -20 "$tmp/install.log")"
	exit 1
fi
expected=(
	"lib/modules/$kver/updates/tbrdma.ko"
	"$provider_dir/$lib"
	etc/libibverbs.d/tbrdma.driver
	opt/tbr/sbin/tbrdma
	opt/tbr/bin/tprun
	opt/tbr/share/man/man8/tbrdma.8
)
check_file "$dest" "lib/modules/$kver/updates/tbrdma.ko" 644 tbrdma.ko
check_file "$dest" "$provider_dir/$lib" 644 "provider/$lib"
check_file "$dest" etc/libibverbs.d/tbrdma.driver 644
if [[ $(cat "$dest/etc/libibverbs.d/tbrdma.driver" 2>/dev/null) == "driver tbrdma" ]]; then
	ok "tbrdma.driver names the provider by its bare name (libibverbs' own directory)"
else
	not_ok "tbrdma.driver names the provider by its bare name" \
		"$(cat "$dest/etc/libibverbs.d/tbrdma.driver" 2>&1)"
fi
check_file "$dest" opt/tbr/sbin/tbrdma 755 tools/tbrdma
check_file "$dest" opt/tbr/bin/tprun 755 tools/tprun
check_file "$dest" opt/tbr/share/man/man8/tbrdma.8 644 Documentation/tbrdma.8
only_files "$dest" "${expected[@]}"
if "$dest/opt/tbr/sbin/tbrdma" --version | grep -q '^tbrdma '; then
	ok "the installed tbrdma runs"
else
	not_ok "the installed tbrdma runs"
fi

if ! "${make[@]}" uninstall DESTDIR="$dest" PREFIX=/opt/tbr >"$tmp/uninstall.log" 2>&1; then
	not_ok "make uninstall" "$(tail -20 "$tmp/uninstall.log")"
else
	left=$(cd "$dest" && find . -type f -o -type l)
	if [[ -z $left ]]; then
		ok "make uninstall removes every installed file"
	else
		not_ok "make uninstall removes every installed file" "$left"
	fi
fi

# --- the default PREFIX -----------------------------------------------------------
dest=$tmp/default
if "${make[@]}" install DESTDIR="$dest" >"$tmp/install2.log" 2>&1; then
	only_files "$dest" "lib/modules/$kver/updates/tbrdma.ko" \
		"$provider_dir/$lib" etc/libibverbs.d/tbrdma.driver \
		usr/local/sbin/tbrdma usr/local/bin/tprun \
		usr/local/share/man/man8/tbrdma.8
else
	not_ok "make install with the default PREFIX" "$(tail -20 "$tmp/install2.log")"
fi

tap_done
