#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run TAP-producing test programs and judge them.
#   run-tap.sh build/test_a build/test_b ...
#
# A program passes when it exits 0, printed a plan ("1..N", or "1..0 # SKIP"),
# ran exactly N tests and none of them is "not ok" (unless "# TODO").
# Ends with one "N passed, N failed, N skipped" line over all assertions
# (a program that fails without a failing assertion, e.g. a crash or a
# plan mismatch, adds one failure); exits 1 if anything failed.

total_pass=0 total_fail=0 total_skip=0 bad_files=""

for t in "$@"; do
	name=$(basename "$t")
	echo "# ---- $name"
	out=$(mktemp) || exit 1
	"$t" >"$out" 2>&1
	rc=$?
	cat "$out"

	# pass fail skip planned
	set -- $(awk '
		/^1\.\.[0-9]+/ { sub(/^1\.\./, ""); split($0, a, /[^0-9]/); plan = a[1] }
		/^ok / {
			if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) skip++; else pass++
		}
		/^not ok / {
			if ($0 ~ /# *[Tt][Oo][Dd][Oo]/) pass++; else fail++
		}
		/^Bail out!/ { bail = 1 }
		END {
			if (plan == "") plan = -1
			if (bail) fail++
			printf "%d %d %d %d\n", pass, fail, skip, plan
		}' "$out")
	rm -f "$out"
	pass=$1 fail=$2 skip=$3 planned=$4
	ran=$((pass + fail + skip))

	verdict=ok
	if [ "$rc" -ne 0 ] || [ "$fail" -ne 0 ] || [ "$planned" -lt 0 ] ||
	   [ "$ran" -ne "$planned" ]; then
		verdict=FAILED
		[ "$fail" -eq 0 ] && fail=1
		bad_files="$bad_files $name"
	fi
	# "1..0 # SKIP why": the whole program skipped; count it once.
	if [ "$verdict" = ok ] && [ "$planned" -eq 0 ]; then
		verdict=skipped
		skip=1
	fi
	echo "# $name: $verdict (exit $rc, planned $planned, ran $ran," \
	     "$pass passed, $fail failed, $skip skipped)"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done

[ -n "$bad_files" ] && echo "# failed:$bad_files"
echo "unit: $total_pass passed, $total_fail failed, $total_skip skipped"
[ -z "$bad_files" ]
