#!/bin/bash
# Run the kernel's checkpatch.pl over the module and uapi sources.  The
# script comes from Debian's linux-source-6.1 package and is unpacked into a
# cache outside the tree (it is not ours to commit).
# Usage: run-checkpatch.sh [FILE...]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/tbrdma/checkpatch
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1)

if [ ! -x "$cache/scripts/checkpatch.pl" ]; then
	[ -n "$tarball" ] || { echo "linux-source-6.1 is not installed" >&2; exit 1; }
	mkdir -p "$cache"
	tar -xf "$tarball" -C "$cache" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
fi

cd "$top"
if [ $# -eq 0 ]; then
	set -- kmod/*.[ch] uapi/*.h
fi
# --no-tree: we are not a kernel tree; --strict: the rules new code meets.
# uapi headers are compiled by user space too, where BIT() does not exist.
rc=0
for f in "$@"; do
	ignore=FILE_PATH_CHANGES
	case $f in */uapi/* | uapi/*) ignore=$ignore,BIT_MACRO ;; esac
	"$cache/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
		--ignore "$ignore" -f "$f" || rc=1
done
exit $rc
