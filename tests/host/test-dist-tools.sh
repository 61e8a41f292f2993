#!/bin/bash
# The tools behind other Debian releases' builds, without building a root:
# provider/rdma-core-abi.sh reads the private ABI and release of a
# libibverbs, tools/tree-copy.sh keeps a copy of the tree up to date
# (new, changed and removed files; build products kept), and
# tools/dist-root.sh refuses what it does not know.  Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- rdma-core-abi.sh -------------------------------------------------------
abi=$("$top/provider/rdma-core-abi.sh" 2>"$tmp/err")
if [[ $abi =~ ^([0-9]+)\ ([0-9]+)$ ]]; then
	pabi=${BASH_REMATCH[1]} release=${BASH_REMATCH[2]}
	ok "rdma-core-abi.sh: private ABI $pabi, rdma-core $release"
	lib=$(readlink -f "$(${CC:-cc} -print-file-name=libibverbs.so)")
	# (grep -q would end objdump early: with pipefail, a failure)
	if [[ $lib == *.$release.* ]] &&
		objdump -T "$lib" | grep -c "IBVERBS_PRIVATE_$pabi" >/dev/null; then
		ok "they are the installed library's ($lib)"
	else
		not_ok "they are the installed library's" "$lib"
	fi
else
	not_ok "rdma-core-abi.sh prints 'PABI VERSION'" "$abi $(cat "$tmp/err")"
fi
if "$top/provider/rdma-core-abi.sh" /nonexistent/libibverbs.so.1 >/dev/null 2>&1; then
	not_ok "rdma-core-abi.sh fails on a missing library"
else
	ok "rdma-core-abi.sh fails on a missing library"
fi
if "$top/provider/rdma-core-abi.sh" /bin/true >/dev/null 2>"$tmp/err"; then
	not_ok "rdma-core-abi.sh fails on a library without IBVERBS_PRIVATE_*"
else
	ok "rdma-core-abi.sh fails on a library without IBVERBS_PRIVATE_*: $(cat "$tmp/err")"
fi

# --- tree-copy.sh -------------------------------------------------------------
dest=$tmp/copy
if "$top/tools/tree-copy.sh" "$dest"; then
	want=$(cd "$top" && git ls-files --cached --others --exclude-standard |
		while read -r f; do [[ -e $f ]] && echo "$f"; done | sort)
	got=$(cd "$dest" && find . -type f ! -name .tree-copy-files | sed 's|^\./||' | sort)
	if [[ $got == "$want" ]]; then
		ok "tree-copy.sh copies exactly the tree's files ($(wc -l <<<"$got"))"
	else
		not_ok "tree-copy.sh copies exactly the tree's files" "$(diff <(echo "$want") <(echo "$got") | head)"
	fi
	cmp -s "$top/Makefile" "$dest/Makefile" && ok "a copied file is the same" ||
		not_ok "a copied file is the same"
else
	not_ok "tree-copy.sh runs"
fi
# A file the copy had and the tree lost goes; what a build made stays; a
# file changed in the copy's place is copied again when the tree's is newer.
printf 'gone\0' | cat "$dest/.tree-copy-files" - | sort -zu >"$tmp/list"
cp "$tmp/list" "$dest/.tree-copy-files"
echo stale >"$dest/gone"
echo built >"$dest/built.o"
echo old >"$dest/Kbuild"
touch -d '2000-01-01' "$dest/Kbuild"
"$top/tools/tree-copy.sh" "$dest"
[[ ! -e $dest/gone ]] && ok "a file no longer in the tree is removed from the copy" ||
	not_ok "a file no longer in the tree is removed from the copy"
[[ -e $dest/built.o ]] && ok "build products in the copy stay" ||
	not_ok "build products in the copy stay"
cmp -s "$top/Kbuild" "$dest/Kbuild" && ok "an older copy of a file is replaced" ||
	not_ok "an older copy of a file is replaced"

# --- dist-root.sh ---------------------------------------------------------------
[[ $("$top/tools/dist-root.sh" list) == "trixie sid" ]] && ok "dist-root.sh knows trixie and sid" ||
	not_ok "dist-root.sh knows trixie and sid" "$("$top/tools/dist-root.sh" list)"
if "$top/tools/dist-root.sh" root buster >/dev/null 2>&1; then
	not_ok "dist-root.sh refuses an unknown release"
else
	ok "dist-root.sh refuses an unknown release"
fi
if TBRDMA_DIST_CACHE=$tmp/empty "$top/tools/dist-root.sh" kver sid >/dev/null 2>"$tmp/err"; then
	not_ok "dist-root.sh kver fails when the root was never built"
else
	ok "dist-root.sh kver fails when the root was never built: $(cat "$tmp/err")"
fi
[[ $(TBRDMA_DIST_CACHE=/x "$top/tools/dist-root.sh" root trixie) == /x/trixie/root ]] &&
	ok "the roots live in the cache (TBRDMA_DIST_CACHE)" ||
	not_ok "the roots live in the cache (TBRDMA_DIST_CACHE)"

tap_done
