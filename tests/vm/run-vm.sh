#!/bin/bash
# run-vm.sh [options] [TEST|GLOB...] — run selftests in a throw-away QEMU
# guest: Debian's stock kernel, the host's root as the guest's (read-only
# 9p + tmpfs overlay), results through a second 9p share.
# See Documentation/testing.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: tests/vm/run-vm.sh [options] [TEST|GLOB...]
  TEST|GLOB           selftest file names in the selftest dir, e.g. 00-guest-sanity.sh
                      or '1*' (default: every *.sh except lib*.sh, sorted)
  --kernel SERIES     boot the newest kernel of SERIES in the kernel cache
                      (tools/kernel-cache.sh): 6.1, 6.12, 6.1-rt or 6.12-rt (default 6.1)
  --kver KVER         boot exactly this release from the kernel cache
  --dist DIST         a guest of another Debian release (trixie, sid): its kernel
                      and its root (tools/dist-root.sh), and the tree built inside
                      that root (make dist-build DIST=DIST) as the repo
  --timeout SECS      whole-run timeout, boot included (default 2700)
  --test-timeout SECS default per-test timeout (default 300; a '# timeout: N'
                      line in a test file overrides it)
  --append ARGS       extra kernel command line, e.g. 'loglevel=7'
  --bzimage           boot /boot/vmlinuz itself, not the cached PVH vmlinux
  --kernel-dir DIR    boot a kernel we built (tests/debug-kernel/build.sh prints
                      DIR): DIR/bzImage, modules from DIR/root/lib/modules
  --timeout-scale N   multiply every per-test timeout by N (slow debug kernels)
  --boot-timeout SECS the guest must be up by then, or it is booted once more
                      (default 150 times the --timeout-scale)
  --print-kver        print the release of the kernel that would boot, and exit
  --smp N             virtual CPUs (default 2)
  --results DIR       write the results to DIR (empty or new) instead of a mktemp dir
  --config KEY=VALUE  one more line for the guest's config (repeatable; the
                      guest reads it in /run/tbrdma-results/config; TBR_*
                      keys reach the tests as environment variables, e.g.
                      --config TBR_LOSS_RATES=5)
  --qemu-arg ARG      one more qemu argument (repeatable): run-cluster.sh's
                      cables and shared directory
env: TBRDMA_VM_CPU (qemu's -cpu, default max,erms=off,fsrm=off),
     TBRDMA_SELFTEST_DIR (default <repo>/tests/selftests), TBRDMA_KERNEL, TBRDMA_KVER, TBRDMA_DIST,
     TBRDMA_VM_TIMEOUT, TBRDMA_TEST_TIMEOUT, TBRDMA_VM_BOOT_TIMEOUT
exit: 0 all passed/skipped and dmesg clean, 1 test failure or dirty dmesg,
      2 usage/setup error, 3 guest crashed or timed out, 130/143 interrupted
EOF
}
die() { echo "run-vm: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
kver=${TBRDMA_KVER:-}
series=${TBRDMA_KERNEL:-6.1}
dist=${TBRDMA_DIST:-}
run_timeout=${TBRDMA_VM_TIMEOUT:-2700}
test_timeout=${TBRDMA_TEST_TIMEOUT:-300}
append=""
bzimage=0
kdir=""
scale=1
boot_timeout=${TBRDMA_VM_BOOT_TIMEOUT:-}
print_kver=0
smp=2 res="" extra_config=() extra_qemu=()
pats=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--kver) kver=${2:?}; shift 2 ;;
	--kernel) series=${2:?}; kver=""; shift 2 ;;
	--dist) dist=${2:?}; shift 2 ;;
	--timeout) run_timeout=${2:?}; shift 2 ;;
	--test-timeout) test_timeout=${2:?}; shift 2 ;;
	--append) append=${2:?}; shift 2 ;;
	--bzimage) bzimage=1; shift ;;
	--kernel-dir) kdir=${2:?}; shift 2 ;;
	--timeout-scale) scale=${2:?}; shift 2 ;;
	--boot-timeout) boot_timeout=${2:?}; shift 2 ;;
	--print-kver) print_kver=1; shift ;;
	--smp) smp=${2:?}; shift 2 ;;
	--results) res=${2:?}; shift 2 ;;
	--config) extra_config+=("${2:?}"); shift 2 ;;
	--qemu-arg) extra_qemu+=("${2:?}"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; pats+=("$@"); break ;;
	-*) usage >&2; exit 2 ;;
	*) pats+=("$1"); shift ;;
	esac
done
[[ $run_timeout =~ ^[0-9]+$ && $test_timeout =~ ^[0-9]+$ ]] || die "timeouts must be whole seconds"
[[ $scale =~ ^[1-9][0-9]*$ ]] || die "--timeout-scale must be a whole number >= 1"
[[ $smp =~ ^[1-9][0-9]*$ ]] || die "--smp must be a whole number >= 1"
boot_timeout=${boot_timeout:-$((150 * scale))}
[[ $boot_timeout =~ ^[1-9][0-9]*$ ]] || die "--boot-timeout must be whole seconds"
[[ $series =~ ^6\.(1|12)(-rt)?$ ]] || die "--kernel: 6.1, 6.12, 6.1-rt or 6.12-rt, not '$series'"
# Debian's kernels are unpacked into a cache, not installed on the host
# (tools/kernel-cache.sh): its root is overlaid on the host's in the guest.
kroot=$("$repo/tools/kernel-cache.sh" root)
# Another release's guest (--dist): its own root from the cache
# (tools/dist-root.sh) instead of the host's, with its kernel installed in
# it, and instead of the repo a copy of the tree built inside that root
# (its compiler, its kernel headers, its rdma-core); see the block below.
droot="" tree=""
if [[ -n $dist ]]; then
	[[ -z $kdir && -z $kver ]] || die "--dist boots that release's own kernel: no --kver or --kernel-dir"
	droot=$("$repo/tools/dist-root.sh" root "$dist") || die "unknown release '$dist'"
	kver=$("$repo/tools/dist-root.sh" kver "$dist") ||
		die "no $dist root (make deps DIST=$dist, or tools/dist-root.sh fetch $dist)"
fi
if [[ -z $kver && -z $kdir ]]; then
	kver=$("$repo/tools/kernel-cache.sh" kver "$series")
	[[ -n $kver ]] || die "no $series kernel in $kroot (make deps, or tools/kernel-cache.sh fetch $series)"
fi
if ((print_kver)); then echo "$kver"; exit 0; fi
modroot=$kroot
if [[ -n $dist ]]; then
	modroot=$droot
	kernel=$droot/boot/vmlinuz-$kver
elif [[ -n $kdir ]]; then
	kdir=$(realpath -e "$kdir") || die "no kernel dir $kdir"
	kver=$(cat "$kdir/kernelrelease") || die "$kdir has no kernelrelease"
	kernel=$kdir/bzImage
	modroot=$kdir/root
	bzimage=1	# not Debian's: no cached PVH vmlinux for it
else
	kernel=$kroot/boot/vmlinuz-$kver
fi
[[ -r $kernel && -d $modroot/lib/modules/$kver ]] || die "no readable $kernel or $modroot/lib/modules/$kver"

# The modules the tests load (tbrdma.ko and the test modules) must be built
# for the kernel that boots: the tree's own build when it is for that kernel,
# else a build for it in build/kmods/KVER, made (or brought up to date) here.
# A kernel we built ourselves (--kernel-dir) comes with its own tree.
moddir=$repo
if [[ -n $dist ]]; then
	tree=$repo/build/dist/$dist/tree
	klog=$(mktemp)
	make --no-print-directory -C "$repo" dist-build DIST="$dist" >"$klog" 2>&1 ||
		{ tail -n 40 "$klog" >&2; rm -f "$klog"; die "building the tree in the $dist root failed"; }
	rm -f "$klog"
	moddir=$tree
elif [[ -z $kdir && $(modinfo -F vermagic "$repo/tbrdma.ko" 2>/dev/null) != "$kver "* ]]; then
	moddir=$repo/build/kmods/$kver
	klog=$(mktemp)
	make --no-print-directory -C "$repo" modules-for FOR_KVER="$kver" >"$klog" 2>&1 ||
		{ cat "$klog" >&2; rm -f "$klog"; die "building the modules for $kver failed"; }
	rm -f "$klog"
fi

# The guest sees the host's files at the same paths, except where it mounts
# its own filesystems (/run, /dev, /proc, /sys).
dir=$(realpath -e "${TBRDMA_SELFTEST_DIR:-$repo/tests/selftests}") || die "no selftest dir"
# In another release's guest the tree's copy stands for the repo: its
# tests, its builds.  A selftest dir outside the repo (generated wrappers)
# is shared as it is.
testshare=""
if [[ -n $dist ]]; then
	case $dir/ in
	"$repo"/*) dir=$tree${dir#"$repo"} ;;
	*) testshare=$dir ;;
	esac
	[[ -d $dir ]] || die "no $dir in the $dist copy of the tree"
fi
for p in "$repo" "$dir" "$kroot" $tree; do
	case $p/ in
	/run/* | /dev/* | /proc/* | /sys/*) die "$p is hidden in the guest" ;;
	esac
done

# Resolve test names on the host: typos fail fast, before a boot.
[[ ${#pats[@]} -gt 0 ]] || pats=('*.sh')
# Globs expand sorted (LC_COLLATE=C: 00- before 10-, upper before lower);
# names given one by one keep their order.
export LC_COLLATE=C
shopt -s nullglob
tests=()
for p in "${pats[@]}"; do
	found=0
	for f in "$dir"/${p##*/}; do  # unquoted on purpose: it is a glob
		t=${f##*/}
		[[ -f $f && $t != lib*.sh ]] || continue
		[[ $t =~ ^[A-Za-z0-9._+-]+$ ]] || die "bad test file name '$t'"
		found=1
		[[ " ${tests[*]} " == *" $t "* ]] || tests+=("$t")
	done
	[[ $found -eq 1 ]] || die "no selftest matches '$p' in $dir"
done
shopt -u nullglob

# The verdict relies on the dmesg matcher: make sure it still catches bugs.
"$here/test-dmesg-check.sh" >/dev/null || die "dmesg-check.sh is broken (run tests/vm/test-dmesg-check.sh)"
initrd=$("$here/mkinitramfs.sh" "$kver" "$modroot") || die "initramfs build failed"
[[ $bzimage -eq 1 ]] || kernel=$("$here/vmlinux.sh" "$kernel")  # PVH boot, ~3 s faster
if [[ -n $res ]]; then
	mkdir -p "$res" && [[ -z $(ls -A "$res") ]] || die "--results $res: not an empty directory"
	res=$(realpath -e "$res")
else
	res=$(mktemp -d "${TMPDIR:-/tmp}/tbrdma-vm.XXXXXX")
fi
{
	echo "TBRDMA_ROOT=${tree:-$repo}"
	echo "TBRDMA_MODDIR=$moddir"
	echo "SELFTEST_DIR=$dir"
	echo "TEST_TIMEOUT=$test_timeout"
	echo "TESTS=${tests[*]}"
	echo "TIMEOUT_SCALE=$scale"
	if [[ -n $kdir ]]; then echo "MODULES_ROOT=$modroot"
	elif [[ -z $dist ]]; then echo "KERNEL_ROOT=$kroot"; fi
	[[ -z $tree ]] || echo "TREE=$tree"
	[[ -z $testshare ]] || echo "TESTS_DIR=$testshare"
	for c in "${extra_config[@]}"; do echo "$c"; done
} >"$res/config"
: >"$res/console.log"

# The CPU hides ERMS/FSRM ("fast rep movsb/stosb"): TCG runs rep movsb and
# rep stosb a byte at a time, so a guest kernel that prefers them (page
# clearing, copy_to/from_user, memcpy) spends 4-5 times longer on every
# copy than with the word-wise routines it picks otherwise; on real CPUs the
# two are close. Every test and benchmark runs with the same CPU model.
cpu_model=${TBRDMA_VM_CPU:-max,erms=off,fsrm=off}
# shellcheck disable=SC2054  # commas belong to qemu's option syntax
qemu=(
	qemu-system-x86_64 -accel tcg -cpu "$cpu_model" -smp "$smp" -m 2048
	-no-reboot -nodefaults -no-user-config -display none
	-kernel "$kernel" -initrd "$initrd"
	# loglevel=3: only errors reach the console, so TAP stays readable (the
	# whole log is saved separately). mitigations=off: TCG emulates them slowly.
	# norandmaps: QEMU 7.2's TCG finds the code it translated by virtual
	# address, and with randomized mappings ld.so and every library sit at
	# new addresses in each process, so each exec translated them again:
	# /bin/true took 44 ms instead of 20, and 100+110+210 ran 18 % faster
	# without (2026-11-27). The kernel's own KASLR is untouched.
	# tsc=unstable: the emulated TSCs drift apart under load; 6.1 finds that
	# at boot, 6.12 starts on the TSC and its clocksource watchdog switches
	# away under load, patching a static key on a live SMP guest, which
	# once oopsed in TCG (int3 in sched_clock_cpu, 6.12-rt, 2026-11-26).
	-append "console=ttyS0 loglevel=3 panic=-1 log_buf_len=8M mitigations=off norandmaps tsc=unstable $append"
	-chardev "file,id=con,path=${res//,/,,}/console.log,append=on" -serial chardev:con
	-fsdev "local,id=rootfs,path=${droot:-/},security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=rootfs,mount_tag=tbrroot
	-fsdev "local,id=results,path=${res//,/,,},security_model=none"
	-device virtio-9p-pci,fsdev=results,mount_tag=tbrresults
)
# A compiler cache the guest keeps from run to run, writable, at
# /var/cache/tbrdma-ccache in the guest: DKMS compiles the whole module
# there (tests/packages), eleven minutes under TCG without it.
ccache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/tbrdma/guest-ccache
mkdir -p "$ccache_dir"
qemu+=(
	-fsdev "local,id=ccache,path=${ccache_dir//,/,,},security_model=none"
	-device virtio-9p-pci,fsdev=ccache,mount_tag=tbrccache
)
# The kernel cache, a share of its own: overlayfs refuses a lower layer
# that lies inside another (the cache is under the host's root).
[[ -n $kdir || -n $dist ]] || qemu+=(
	-fsdev "local,id=kernels,path=${kroot//,/,,},security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=kernels,mount_tag=tbrkernels
)

# Another release's guest: the tree built for it, and a selftest dir of
# the host's, shared at their own paths.
[[ -z $tree ]] || qemu+=(
	-fsdev "local,id=tree,path=${tree//,/,,},security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=tree,mount_tag=tbrtree
)
[[ -z $testshare ]] || qemu+=(
	-fsdev "local,id=tests,path=${testshare//,/,,},security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=tests,mount_tag=tbrtests
)
qemu+=("${extra_qemu[@]}")

qpid="" timer="" stream=""
stop_qemu() {
	# qemu holds nothing worth flushing (results are written through 9p as
	# they happen), so SIGKILL is fine and cannot be ignored.
	if [[ -n $qpid ]]; then kill -KILL "$qpid" 2>/dev/null || true; wait "$qpid" 2>/dev/null || true; fi
	if [[ -n $stream ]]; then wait "$stream" 2>/dev/null || true; fi  # ends by itself once qemu is gone
	qpid="" stream=""
}
cleanup() {
	stop_qemu
	if [[ -n $timer ]]; then kill "$timer" 2>/dev/null || true; wait "$timer" 2>/dev/null || true; fi
	timer=""
}
start_qemu() {
	# --pdeathsig: even if this script is SIGKILLed, the kernel kills qemu.
	setpriv --pdeathsig KILL "${qemu[@]}" </dev/null >"$res/qemu.log" 2>&1 &
	qpid=$!
	tail -n +1 -s 0.2 -f --pid="$qpid" "$res/console.log" | sed -u 's/\r$//' &
	stream=$!
}
# True once the guest's runner is up (it writes boot-seconds) or qemu has
# exited (the results tell why); false if neither happened in time.
guest_came_up() {
	local deadline=$((SECONDS + boot_timeout)) state
	while ((SECONDS < deadline)); do
		[[ -e $res/boot-seconds ]] && return 0
		# Exited but not yet reaped is a zombie, which kill -0 still finds.
		state=$(sed 's/.*) //' "/proc/$qpid/stat" 2>/dev/null) || state=""
		[[ -n $state && ${state:0:1} != [ZX] ]] || return 0
		sleep 1
	done
	return 1
}
trap cleanup EXIT
trap 'echo "run-vm: interrupted (partial results in $res)" >&2; exit 130' INT
trap 'exit 143' TERM HUP

echo "run-vm: kernel $kver${dist:+ with a $dist root}, ${#tests[@]} test(s), results in $res"
t0=$SECONDS
setpriv --pdeathsig KILL sleep "$run_timeout" &
timer=$!
start_qemu
# A guest kernel has been seen to hang before our runner started (the
# debug kernel under TCG, once: its second CPU never came up).  Nothing of
# ours has run then, so boot it once more instead of waiting for the
# whole-run timeout; the first console is kept.
if ! guest_came_up; then
	echo "run-vm: guest not up after ${boot_timeout}s, booting it again (first console: $res/console-boot1.log)" >&2
	stop_qemu
	mv "$res/console.log" "$res/console-boot1.log"
	: >"$res/console.log"
	start_qemu
	if ! guest_came_up; then
		echo "run-vm: guest not up after ${boot_timeout}s again, giving up" >&2
		stop_qemu
	fi
fi

done_pid=""
[[ -z $qpid ]] || wait -n -p done_pid "$qpid" "$timer" || true
if [[ $done_pid == "$timer" ]]; then
	echo "run-vm: whole-run timeout (${run_timeout}s), killing qemu" >&2
else
	qpid=""  # already reaped by wait -n
fi
cleanup
[[ ! -s $res/qemu.log ]] || sed 's/^/run-vm: qemu: /' "$res/qemu.log" >&2

rc=0
"$here/results.sh" "$res" || rc=$?
boot=$(cat "$res/boot-seconds" 2>/dev/null || echo "?")
echo "run-vm: total $((SECONDS - t0))s (guest ready after ${boot}s), results in $res"
exit "$rc"
