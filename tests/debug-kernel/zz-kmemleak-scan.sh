#!/bin/bash
# Last test of `make check-debug`: with every selftest done (and tbrdma
# unloaded by each of them), kmemleak must find no unreferenced object.
# Two scans some seconds apart, as the kmemleak documentation advises:
# an object must stay unreferenced for a while to be reported.
# timeout: 600
source "$(dirname "$0")/lib.sh"
km=/sys/kernel/debug/kmemleak
[[ -w $km ]] || fail "no $km: not the debug kernel (CONFIG_DEBUG_KMEMLEAK)"
[[ ! -d /sys/module/tbrdma ]] || rmmod tbrdma || fail "tbrdma left loaded and busy"
sleep 6		# kfree_rcu() and deferred work of the last test
echo scan >$km
sleep 6
echo scan >$km
report=$(cat $km)
if [[ -n $report ]]; then
	printf '%s\n' "$report" | head -n 200
	fail "kmemleak: $(grep -c '^unreferenced object' <<<"$report") unreferenced object(s)"
fi
echo "kmemleak: no unreferenced objects"
