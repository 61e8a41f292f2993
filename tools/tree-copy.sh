#!/bin/bash
# tree-copy.sh DEST — bring DEST up to date with the tree's sources: every
# file git tracks or would track (not what .gitignore ignores: no build
# products, no npm packages), copied when the tree's is newer, and the
# files the tree no longer has removed from DEST.  What was built in DEST
# stays, so a build there only redoes what changed.  `make dist-build`
# builds such a copy inside another release's root (tools/dist-root.sh).
set -euo pipefail

dest=${1:?usage: tree-copy.sh DEST}
top=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$top"
mkdir -p "$dest"
list=$(mktemp)
trap 'rm -f "$list"' EXIT
# Tracked files deleted in the work tree are listed too: skip them.
git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done |
	sort -zu >"$list"
xargs -0 -r cp -u -P --parents -t "$dest" <"$list"
# What an earlier copy had and the tree no longer has.
if [[ -f $dest/.tree-copy-files ]]; then
	comm -z -23 "$dest/.tree-copy-files" "$list" |
		(cd "$dest" && xargs -0 -r rm -f --)
fi
cp "$list" "$dest/.tree-copy-files"
