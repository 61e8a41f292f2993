#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# rdma-core-abi.sh [LIBIBVERBS] — print "PABI VERSION" for the libibverbs
# the provider is built against: PABI is its private provider ABI (the N
# of the IBVERBS_PRIVATE_N symbol version it exports, which libibverbs also
# puts in the provider file names it loads, lib<name>-rdmavN.so), VERSION
# the rdma-core release it comes from (the 56 of libibverbs.so.1.14.56.1).
# rdma-core-private.h declares the private structures for that release.
#
# LIBIBVERBS (or $LIBIBVERBS) is the library; by default the one the C
# compiler ($CC, default cc) links with -libverbs.
set -eu

die() { echo "rdma-core-abi: $*" >&2; exit 1; }

lib=${1:-${LIBIBVERBS:-}}
if [ -z "$lib" ]; then
	cc=${CC:-cc}
	# -print-file-name answers the bare name when the compiler's search
	# path has no such file.
	for name in libibverbs.so libibverbs.so.1; do
		lib=$($cc -print-file-name=$name 2>/dev/null || true)
		[ "$lib" != "$name" ] && [ -e "$lib" ] && break
		lib=
	done
	[ -n "$lib" ] || die "no libibverbs found by $cc (install libibverbs-dev, or set LIBIBVERBS=/path/to/libibverbs.so.1)"
fi
[ -e "$lib" ] || die "$lib does not exist"
real=$(readlink -f "$lib")

command -v objdump >/dev/null 2>&1 || die "objdump is missing (binutils)"
pabi=$(objdump -T "$real" | sed -n 's/.*IBVERBS_PRIVATE_\([0-9][0-9]*\).*/\1/p' | sort -u)
[ -n "$pabi" ] || die "$real exports no IBVERBS_PRIVATE_* symbols: not rdma-core's libibverbs?"
[ "$(echo "$pabi" | wc -l)" -eq 1 ] ||
	die "$real exports several private ABIs ($(echo $pabi)): refusing to guess"

# rdma-core names the library libibverbs.so.1.<lib minor>.<release>.<patch>.
version=$(basename "$real" | sed -n 's/^libibverbs\.so\.1\.[0-9]*\.\([0-9][0-9]*\)\.[0-9]*$/\1/p')
if [ -z "$version" ] && command -v pkg-config >/dev/null 2>&1; then
	version=$(pkg-config --modversion libibverbs 2>/dev/null |
		sed -n 's/^1\.[0-9]*\.\([0-9][0-9]*\)\..*/\1/p')
fi
[ -n "$version" ] || die "cannot tell the rdma-core release of $real (its name is not libibverbs.so.1.X.RELEASE.Y)"
echo "$pabi $version"
