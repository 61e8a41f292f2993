#!/bin/bash
# The whole test suite (`make check`): builds for both target kernels,
# static checks, host unit tests and the guest selftests.  Each stage is
# reported as it finishes; the last line is "N passed, N failed" over every
# individual test point of every stage.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
make=(make --no-print-directory)

passed=0
failed=0
failed_stages=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Count a finished stage.  A stage that ends with "N passed, N failed"
# contributes those numbers, one that prints TAP contributes its test
# points, any other stage counts as one test; a non-zero exit always counts
# as (at least) one failure.
account() {
	local name=$1 rc=$2 p f summary
	summary=$(tr -d '\r' <"$log" | grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' | tail -n1)
	if [ -n "$summary" ]; then
		p=$(sed -E 's/^([A-Za-z]+: )?([0-9]+) passed.*/\2/' <<<"$summary")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$summary")
	elif tr -d '\r' <"$log" | grep -qE '^(not )?ok '; then
		p=$(tr -d '\r' <"$log" | grep -cE '^ok ')
		f=$(tr -d '\r' <"$log" | grep -cE '^not ok ')
	elif [ "$rc" -eq 0 ]; then
		p=1
		f=0
	else
		p=0
		f=1
	fi
	# Tests that passed but a stage that failed afterwards (a crash, a
	# dirty dmesg) is still a failure.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "== ok: $name ($p passed)"
	else
		echo "== FAILED: $name ($p passed, $f failed, exit $rc)"
		failed_stages+=("$name")
	fi
}

stage() {
	local name=$1 rc
	shift
	echo "== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	account "$name" "$rc"
}

stage "build (6.1)" "${make[@]}" all test-progs
stage "build (6.12)" "${make[@]}" module-6.12
stage "sparse (6.1)" tests/host/run-sparse.sh "$("${make[@]}" -s print-KDIR_6_1)"
stage "sparse (6.12)" tests/host/run-sparse.sh "$("${make[@]}" -s print-KDIR_6_12)" "$top/build/linux-6.12"
stage "checkpatch" tests/host/run-checkpatch.sh
stage "host unit tests" "${make[@]}" unit-tests
stage "llama.cpp reference" "${make[@]}" llama-ref
stage "guest selftests" tests/vm/run-vm.sh

if [ ${#failed_stages[@]} -gt 0 ]; then
	echo "failed stages: ${failed_stages[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
