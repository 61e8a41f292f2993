#!/bin/bash
# rdma-core's own test suite (Debian's python3-pyverbs and the tests it
# installs under /usr/share/doc/rdma-core/tests), unmodified, on the
# loopback device and then on rdma_rxe on lo in the same guest: no test
# may fail or error on tbrdma, and every test that passes on rxe must pass
# on tbrdma too, except the features listed below as not offered yet
# (Documentation/testing.md has the whole comparison).  Some features only
# tbrdma has (XRC: rxe has none) are required to pass on tbrdma.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"

suite=/usr/share/doc/rdma-core/tests
require_cmd python3
[[ -f $suite/run_tests.py ]] || skip "rdma-core's tests are not installed"
python3 -c 'import pyverbs' 2>/dev/null || skip "python3-pyverbs is not installed"
verbs_setup
verbs_is_rxe && skip "compares tbrdma with rxe itself"

# Passing on rxe, not offered by tbrdma (yet): none.  The memory-window
# tests (test_mr.MWTest, test_qpex ... test_qp_ex_rc_bind_mw) and RDMA
# ATOMIC WRITE's (test_qp_ex_rc_atomic_write: rxe passes it on 6.2+ only)
# must pass: they are listed in required_mw below.
not_offered='^$'
required_mw='^tests\.test_mr\.MWTest\.test_(mw_type1|invalidate_mw_type1|mw_type2|mw_type2_invalidate_local|mw_type2_invalidate_remote|mw_type2_invalidate_dealloc)$|^tests\.test_qpex\.QpExTestCase\.test_qp_ex_rc_(bind_mw|atomic_write)$'
# Required on tbrdma whatever rxe does: XRC (XRC domains, XRC SRQs, XRC
# send/receive QPs).  Every XRC test passes, or is skipped for another
# feature it needs (ODP), and at least this many pass.
required_xrc='\.test_\w*xrc\w*$'
required_xrc_min=6

# Debian installs some of the modules gzipped; Python imports them unpacked.
work=/tmp/rdma-core-tests
rm -rf "$work"
mkdir -p "$work"
cp -r "$suite" "$work/tests"
gunzip -f "$work"/tests/*.gz
defer "rm -rf $work"

run_suite() {	# DEV LOG
	local t0=$SECONDS rc=0
	(cd "$work" && timeout 200 python3 tests/run_tests.py --dev "$1" --gid "$TBR_TEST_GID" -v) >"$2" 2>&1 || rc=$?
	echo "$1: $(grep -E '^(Ran|OK|FAILED)' "$2" | tr '\n' ' ')(exit $rc, $((SECONDS - t0)) s)"
}
run_suite tbrlo0 "$TBRDMA_OUT/tbrdma.log"
tbr_load_core
rdma link add r0 type rxe netdev lo || fail "rdma link add r0 type rxe"
defer 'rdma link delete r0 2>/dev/null; modprobe -r rdma_rxe'
wait_for "[[ \$(</sys/class/infiniband/r0/ports/1/gids/$TBR_TEST_GID) == 0000:0000:0000:0000:0000:ffff:7f00:0001 ]]" 10 ||
	fail "r0: no IPv4 GID at index $TBR_TEST_GID"
run_suite r0 "$TBRDMA_OUT/rxe.log"

python3 - "$TBRDMA_OUT/tbrdma.log" "$TBRDMA_OUT/rxe.log" "$not_offered" \
	"$required_mw" "$required_xrc" "$required_xrc_min" <<'PY'
import re, sys
from collections import Counter

def results(path):
    text = open(path).read()
    pat = r'^(test_\w+) \(([\w.]+)\)(?:[^\n]*\n?)??[^\n]*? \.\.\. ([^\n]*)$'
    return {m.group(2): m.group(3) for m in re.finditer(pat, text, re.M)}

def kind(v):
    return 'skipped' if v.startswith('skipped') else v

tbr, rxe = results(sys.argv[1]), results(sys.argv[2])
allowed = re.compile(sys.argv[3])
required = re.compile(sys.argv[4])
for name, res in (('tbrdma', tbr), ('rxe', rxe)):
    print(f'{name}: {len(res)} tests,',
          ', '.join(f'{n} {k}' for k, n in sorted(Counter(map(kind, res.values())).items())))
bad = []
if len(tbr) < 200:
    bad.append(f'only {len(tbr)} tests parsed from the tbrdma run')
for t, v in sorted(tbr.items()):
    if kind(v) not in ('ok', 'skipped'):
        bad.append(f'{t}: {v} on tbrdma')
for t, v in sorted(rxe.items()):
    if v == 'ok' and tbr.get(t) != 'ok':
        if allowed.search(t):
            print(f'not offered: {t} ({tbr.get(t)})')
        else:
            bad.append(f'{t}: passes on rxe, {tbr.get(t)} on tbrdma')
must, must_min = re.compile(sys.argv[5]), int(sys.argv[6])
req = sorted(t for t in tbr if must.search(t))
print(f'required on tbrdma: {len(req)} tests:', ', '.join(f'{t.split(".")[-1]} {tbr[t]}' for t in req))
req_ok = [t for t in req if tbr[t] == 'ok']
if len(req_ok) < must_min:
    bad.append(f'{len(req_ok)} of the required XRC tests ({sys.argv[5]}) pass, not {must_min}')
for t in req:
    v = tbr[t]
    if v != 'ok' and not (kind(v) == 'skipped' and 'XRC' not in v.upper() and 'ODP' in v.upper()):
        bad.append(f'{t}: required, {v} on tbrdma')
for t, v in sorted(tbr.items()):
    if v == 'ok' and rxe.get(t) != 'ok':
        print(f'tbrdma only: {t} (rxe: {rxe.get(t)})')
# Required on tbrdma whatever rxe does: seven memory-window tests and
# the atomic write.
req = sorted(t for t in tbr if required.search(t))
if len(req) != 8:
    bad.append(f'{len(req)} of the 8 required memory-window and atomic-write tests found')
for t in req:
    if tbr[t] != 'ok':
        bad.append(f'{t}: required, {tbr[t]} on tbrdma')
print(f'required (memory windows, atomic write): {sum(tbr[t] == "ok" for t in req)} of {len(req)} ok')
for b in bad:
    print('FAIL:', b)
sys.exit(1 if bad else 0)
PY
echo "rdma-core's tests: nothing passes on rxe and fails on tbrdma beyond what is not offered"
