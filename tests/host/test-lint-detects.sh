#!/bin/bash
# The static checks must be able to fail: run the sparse and checkpatch
# wrappers on a tiny module with one known defect each, and on a clean one.
# Prints TAP.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kdir=$(make -s -C "$top" --no-print-directory print-KDIR)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

write_module() {	# write_module DIR BODY
	mkdir -p "$1"
	printf 'obj-m := lintprobe.o\n' >"$1/Kbuild"
	cat >"$1/lintprobe.c" <<EOC
// SPDX-License-Identifier: GPL-2.0-only
#include <linux/module.h>

$2

MODULE_LICENSE("GPL");
EOC
}

write_module "$tmp/clean" 'static int probe_value(void)
{
	return 1;
}

static int __init probe_init(void)
{
	return probe_value() - 1;
}
module_init(probe_init);'

# sparse: a user-space pointer dereferenced directly.
write_module "$tmp/sparse-bad" 'int probe_read(int __user *p);
int probe_read(int __user *p)
{
	return *p;
}
EXPORT_SYMBOL(probe_read);'

# checkpatch: spaces instead of a tab, and a C99 // comment inside code.
write_module "$tmp/style-bad" 'static int probe_value(void)
{
        return 1; // one
}'

echo "1..4"
n=0
report() {	# report EXPECT_OK RC NAME
	n=$((n + 1))
	if { [ "$1" = yes ] && [ "$2" -eq 0 ]; } || { [ "$1" = no ] && [ "$2" -ne 0 ]; }; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3 (exit $2)"
	fi
}

"$here/run-sparse.sh" "$kdir" "$tmp/clean" >"$tmp/log" 2>&1
report yes $? "sparse passes a clean module"
"$here/run-sparse.sh" "$kdir" "$tmp/sparse-bad" >"$tmp/log" 2>&1
report no $? "sparse catches a __user pointer dereference"
"$here/run-checkpatch.sh" "$tmp/clean/lintprobe.c" >"$tmp/log" 2>&1
report yes $? "checkpatch passes a clean file"
"$here/run-checkpatch.sh" "$tmp/style-bad/lintprobe.c" >"$tmp/log" 2>&1
report no $? "checkpatch catches bad style"
