#!/bin/bash
# check-debug.sh [TEST|GLOB...] — `make check-debug`: the selftests on a
# debug kernel (KASAN, lockdep, kmemleak, DEBUG_ATOMIC_SLEEP; build.sh
# builds it once and caches it), with a kmemleak scan after the last one.
# The module and the test modules are built against that kernel in a copy
# of the tree beside the kernel (the tree itself keeps its 6.1 objects).
# Prints the guest's TAP and "N passed, N failed"; exit 0 only if all passed
# and no checker spoke (a KASAN or lockdep report fails the test during
# which it appeared, through the harness's dmesg check).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
t0=$SECONDS
kdir=$("$here/build.sh")
kver=$(cat "$kdir/kernelrelease")
ksrc=$kdir/linux-source-6.1
copy=${XDG_CACHE_HOME:-$HOME/.cache}/tbrdma/check-debug-tree
echo "check-debug: kernel $kver from $kdir (ready after $((SECONDS - t0)) s)"

# The user-space side is the tree's own build (the Makefile made it).
rm -rf "$copy"
mkdir -p "$copy"
tar -C "$repo" --exclude=./.git --exclude=./build -cf - . | tar -C "$copy" -xf -
for m in "$copy" "$copy/tests/fake-tbnet"; do
	make -s -C "$ksrc" M="$m" clean
	make -s -C "$ksrc" M="$m" modules
done
[[ $(modinfo -F vermagic "$copy/tbrdma.ko") == "$kver "* ]] ||
	{ echo "check-debug: tbrdma.ko not built for $kver" >&2; exit 2; }
# Kbuild's clean removed every object file under the copy, the provider's
# and the tools' too: build them again here, not in the slow guest (70's
# make install would).
make -s -C "$copy" provider tools runner
make -s -C "$copy/tests/progs"
cp "$here/0-kmemleak-clear.sh" "$here/zz-kmemleak-scan.sh" "$copy/tests/selftests/"
# Settings for the tests in the copy (lib.sh sources them), for the loops
# that take longest here; make check runs them in full.  136's key-reuse
# case: 4 x 65,536 MR registrations, over 30 min, no code the other cases
# do not run.  137: all six kinds took 40 min; exhaust one kind per way
# the driver counts objects: PDs (an IDA), CQs (a counter), QPs (a cyclic
# xarray, as MRs and AHs; the 65,536 AHs are most of 137's time).
cat >"$copy/tests/selftests/.test-env" <<'END'
TBR_ISOLATION_SKIP=key-reuse
TBR_LIMITS_KINDS="pd cq qp"
END

# Everything runs several times slower under KASAN and lockdep (00-guest-
# sanity: 42 s instead of 5 s; the boot: 100 s instead of 8 s).
#
# no5lvl: 6.1's identify_cpu() clears boot_cpu_data's feature bits with
# interrupts on; an interrupt in that window sees LA57 (which -cpu max
# has) clear, KASAN then takes the 5-level direct map for wild memory, and
# its false report at boot turns lockdep off for the whole run (run 11 in
# Documentation/testing.md).  With 4-level paging nothing flips.
# kasan_multi_shot: a first report no longer silences every later one.
rc=0
"$copy/tests/vm/run-vm.sh" --kernel-dir "$kdir" --timeout-scale 6 --timeout 18000 \
	--append "no5lvl kasan_multi_shot" \
	"$@" | tee "$copy/check-debug.log" || rc=$?
pass=$(grep -cE '^ok ' "$copy/check-debug.log" || true)
fail=$(grep -cE '^not ok ' "$copy/check-debug.log" || true)
[[ $rc -eq 0 || $fail -gt 0 ]] || fail=$((fail + 1))
echo "check-debug: $(( (SECONDS - t0) / 60 )) min in all"
echo "$pass passed, $fail failed"
exit "$rc"
