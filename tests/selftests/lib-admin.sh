# lib-admin.sh — helpers for the tbrdma admin tool's selftests (16x).
# Source it after lib.sh:
#     source "$(dirname "$0")/lib.sh"
#     source "$(dirname "$0")/lib-admin.sh"
# shellcheck shell=bash

TBR_TOOL=$TBRDMA_ROOT/tools/tbrdma
[[ -x $TBR_TOOL ]] || fail "$TBR_TOOL not built (make tools)"
# Debian's python3 parses the JSON back (the host's / is the guest's /).
TBR_PY=$(command -v /usr/bin/python3 || command -v python3) || skip "python3 not installed"

# tbrdma ARGS... — the tool under test.
tbrdma() { "$TBR_TOOL" "$@"; }

# expect_rc WANT CMD... — run CMD, show its output (kept in $out), fail the
# test unless it exits with WANT.
out=""
expect_rc() {
	local want=$1 rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	printf '%s\n' "$out"
	[[ $rc -eq $want ]] || fail "'$*' exited with $rc, expected $want"
}

# json_assert WHAT JSON PYTHON — run PYTHON (statements; `s` is the parsed
# JSON) and fail the test with WHAT unless its asserts hold.
json_assert() {
	local what=$1 json=$2 code=$3
	"$TBR_PY" -c "import json, sys
s = json.loads(sys.argv[1])
$code" "$json" || fail "$what: $json"
}

# as_nobody CMD... — run CMD as an unprivileged user (no CAP_NET_ADMIN).
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
