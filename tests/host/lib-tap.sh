# lib-tap.sh — TAP for the shell tests in tests/host: a scratch directory
# $tmp removed on exit, ok/not_ok to report a point, tap_done to finish.
# Source it after `set -uo pipefail`.
# shellcheck shell=bash

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }

# not_ok NAME [DETAIL...] — each DETAIL line is shown as a TAP comment.
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	local line
	for line in "$@"; do
		printf '%s\n' "$line" | sed 's/^/#   /'
	done
}

# tap_make DIR — build DIR quietly, or bail out with the build's last lines
tap_make() {
	make -s -C "$1" >"$tmp/build.log" 2>&1 ||
		{ echo "Bail out! $1 does not build: $(tail -5 "$tmp/build.log")"; exit 1; }
}

# The plan, last; the exit status says whether every point passed.
tap_done() {
	echo "1..$n"
	[[ $failed -eq 0 ]]
}
