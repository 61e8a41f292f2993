#!/bin/bash
# Run sparse over every module source (kbuild C=2 checks files even when
# they are up to date) and fail on any diagnostic it prints.
# Usage: run-sparse.sh KDIR [MODULE_DIR]
set -euo pipefail

kdir=${1:?usage: run-sparse.sh KDIR [MODULE_DIR]}
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

command -v sparse >/dev/null || { echo "sparse is not installed" >&2; exit 1; }
# Kbuild's own output is what we read, so a caller's `make -s` (inherited
# through MAKEFLAGS) must not silence it.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -C "$kdir" M="$src" C=2 modules >"$log" 2>&1; then
	cat "$log"
	exit 1
fi
# A run that checked nothing proves nothing.
grep -q ' CHECK ' "$log" || { echo "sparse checked no file" >&2; exit 1; }
if grep -E ': (warning|error):' "$log"; then
	exit 1
fi
echo "sparse: $(grep -c ' CHECK ' "$log") files clean"
