#!/bin/bash
# results.sh RESULTS_DIR — host-side verdict of one VM run, computed only
# from the files the guest wrote to the results share (never from the
# console). Prints "N passed, N failed[, N skipped]".
# Exit 0: every test passed or skipped, the guest finished, full dmesg clean.
# Exit 1: a test failed or the kernel log is dirty. Exit 3: the guest did not
# finish (crash, hang, whole-run timeout); the console tail is printed.
set -euo pipefail

res=${1:?usage: results.sh RESULTS_DIR}
here=$(dirname "$0")
pass=0 fail=0 skip=0 rc=0
failed=()

read -ra tests <<<"$(sed -n 's/^TESTS=//p' "$res/config")"
for t in "${tests[@]}"; do
	if [[ -f $res/tests/$t/result ]]; then
		r=$(<"$res/tests/$t/result")
	elif [[ -d $res/tests/$t ]]; then
		r="did not finish"
	else
		r="not run"
	fi
	case $r in
	pass) pass=$((pass + 1)) ;;
	skip) skip=$((skip + 1)) ;;
	fail) fail=$((fail + 1)); failed+=("$t") ;;
	*) fail=$((fail + 1)); failed+=("$t ($r)") ;;
	esac
done

if [[ ! -f $res/status ]]; then
	echo "run-vm: the guest did not finish (crash, hang or timeout); console tail:"
	tail -n 40 "$res/console.log" 2>/dev/null | sed 's/\r$//; s/^/  | /'
	rc=3
elif ! bad=$("$here/dmesg-check.sh" "$res/dmesg.txt"); then
	# Per-test slices were checked in the guest; this also covers the boot
	# and the time between tests.
	echo "run-vm: the full kernel log is dirty ($res/dmesg.txt):"
	printf '%s\n' "${bad:-dmesg-check failed to run}" | sed 's/^/  dmesg: /'
	rc=1
fi
if [[ $fail -gt 0 ]]; then
	echo "run-vm: failed: ${failed[*]}"
	[[ $rc -ne 0 ]] || rc=1
fi

line="$pass passed, $fail failed"
[[ $skip -eq 0 ]] || line+=", $skip skipped"
echo "$line"
exit "$rc"
