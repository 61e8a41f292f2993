#!/bin/bash
# The whole test suite (`make check`): builds for both target kernels,
# static checks, host unit tests and the guest selftests.  Each stage is
# reported as it finishes; the last line is "N passed, N failed" over every
# individual test point of every stage.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
export LC_COLLATE=C	# test order as run-vm.sh sorts
make=(make --no-print-directory)

passed=0
failed=0
failed_stages=()
log=$(mktemp)
# The host's tests start python3 hundreds of times (the llama.cpp
# comparison about 500): Debian's own interpreter, the one the project
# depends on, rather than whatever PATH finds first.  A pyenv shim costs
# 0.7 s of CPU per start against 0.08 s for /usr/bin/python3: two thirds
# of the comparison's time (2026-11-28).
pybin=$(mktemp -d)
trap 'rm -rf "$log" "$pybin"' EXIT
[[ -x /usr/bin/python3 ]] && ln -s /usr/bin/python3 "$pybin/python3"
# The C compilers through ccache (installed by make deps for the guest's
# DKMS), its cache kept between runs beside the kernels: every run
# compiles the same sources again, the runner's once for each unit test
# that links them and the module for four kernels, on the two cores the
# 6.1 guest runs on meanwhile.  A source that changed misses the cache and
# is compiled as before.
if command -v ccache >/dev/null; then
	ln -s "$(command -v ccache)" "$pybin/cc"
	ln -s "$(command -v ccache)" "$pybin/gcc"
	export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/tbrdma/host-ccache}
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G}
fi
export PATH="$pybin:$PATH"

# Count a finished stage.  A stage that ends with "N passed, N failed"
# contributes those numbers, one that prints TAP contributes its test
# points, any other stage counts as one test; a non-zero exit always counts
# as (at least) one failure.
account() {
	local name=$1 rc=$2 secs=$3 p f summary
	summary=$(tr -d '\r' <"$log" | grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed' | tail -n1)
	if [ -n "$summary" ]; then
		p=$(sed -E 's/^([A-Za-z]+: )?([0-9]+) passed.*/\2/' <<<"$summary")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$summary")
	# (grep reads it all: with -q it would stop at the first point and,
	# under pipefail, tr's SIGPIPE on a long log would make this false)
	elif tr -d '\r' <"$log" | grep -E '^(not )?ok ' >/dev/null; then
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
		echo "== ok: $name ($p passed, ${secs}s)"
	else
		echo "== FAILED: $name ($p passed, $f failed, exit $rc, ${secs}s)"
		failed_stages+=("$name")
	fi
}

stage() {
	local name=$1 rc t0=$SECONDS
	shift
	echo "== $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	account "$name" "$rc" $((SECONDS - t0))
}

# Builds use every core (the guests have not started yet); kbuild and the
# sub-makes share make's job slots.
build_jobs=(-j"$(nproc)")
# What the first guest (the whole suite on 6.1) needs; the other builds
# run beside it (below): until 2026-11-28 they came first, six minutes
# with a core idle.
stage "build (6.1)" "${make[@]}" "${build_jobs[@]}" all test-progs
# later_builds — the other kernels' modules and the Debian packages, for
# the guests after the first (each waits for $gdir/built, see run_guest).
later_builds() {
	stage "build (6.12)" "${make[@]}" "${build_jobs[@]}" module-6.12
	# The Debian packages, with lintian; a guest installs them below.
	stage "debian packages" "${make[@]}" "${build_jobs[@]}" deb
	# The PREEMPT_RT flavours: the module and the test modules, in
	# build/kmods/KVER, where run-vm.sh finds them when it boots that
	# kernel.
	for series in 6.1-rt 6.12-rt; do
		stage "build ($series)" "${make[@]}" "${build_jobs[@]}" modules-for \
			FOR_KVER="$(tests/vm/run-vm.sh --kernel $series --print-kver)"
	done
	touch "$gdir/built"
}
# The guest selftests, once per kernel in KERNELS: a series (6.1, 6.12,
# 6.1-rt, 6.12-rt) runs every selftest, SERIES:kernel the kernel subset
# below, SERIES:smoke only the smoke subset.  Here the default is 6.1
# alone (the whole suite takes about 15 of the 30 minutes make check may
# take; two would leave no margin).  CI (.ci/run runs with CI=true) also
# runs the kernel subset on 6.12-rt, the newest thunderbolt code on the
# kernel where locking mistakes show first, and the smoke subset on
# 6.1-rt.  Every stage is CPU-bound on the two-core build machine, so
# CI's time is the sum of its work: with the whole suite on 6.12-rt (864
# s) CI took 68 minutes (2026-11-28), past its 60; the kernel subset takes
# about 380 s.  The whole suite on another kernel: make check KERNELS=6.12-rt.
# Under CI the smoke subset on Debian 12's 6.12 (6.12.117+deb12) gives way
# to the trixie guest below, which boots the same kernel release
# (6.12.117+deb13) and runs a superset of the smoke tests with rdma-core
# 56.
if [[ ${CI:-} == true ]]; then
	default_kernels="6.1 6.12-rt:kernel 6.1-rt:smoke"
else
	default_kernels="6.1"
fi
# Loading, loopback and link data checks, loss, link removal and unplug:
# what differs between kernels if anything does; and rdma-core's suite
# against the same kernel's rxe, which gains features with the kernel (on
# 6.12 it passed RDMA ATOMIC WRITE, which tbrdma lacked then: only the
# whole suite on 6.12-rt showed it, 2026-11-27).
# (230-net-faults is left to the whole suite: 231-net-loss covers loss,
# and 120/200 the data checks.)
smoke_tests=(00-guest-sanity.sh 10-module-load.sh 20-link-loopback.sh
	120-integrity.sh 190-rdma-core-tests.sh 200-net-pingpong.sh
	231-net-loss.sh 240-net-linkloss.sh 40-netdev-events.sh
	50-unload-busy.sh)
# The smoke subset's loss test at one rate (5 %: once with reordering and
# duplication, once with corruption) and without perftest
# (TBR_LOSS_PERF_RATES empty): whether this kernel's netem and softirq
# path let the transport recover is the question there, which the
# data-checked transfer, rping and pingpong answer; 6.1 and 6.12-rt run
# every rate and perftest.  (It took 47-118 s on each smoke guest,
# 2026-11-28.)
smoke_knobs="--config TBR_LOSS_RATES=5 --config TBR_LOSS_PERF_RATES="
# The kernel subset: the smoke tests and those whose outcome depends on
# the kernel's code rather than the provider's or the tools': load and
# module parameters, Thunderbolt binding, bad input and fuzzing through
# uverbs and the wire, isolation, faults and meshes on the link, memory
# registration and windows, XRC, and the kernel's own consumers (NVMe-oF,
# NFS, iSER, SRP).  perftest, the MPI/UCX/libfabric clients, the runner
# and the admin tool run on 6.1 (the whole suite).
kernel_tests=("${smoke_tests[@]}" 30-loopback-param.sh 45-thunderbolt-attach.sh
	46-peers-sysfs.sh 60-load-cycles.sh 130-badinput.sh 135-fuzz-uverbs.sh
	136-isolation.sh 138-doorbell.sh 230-net-faults.sh 235-net-wirefuzz.sh
	250-net-mesh.sh 270-nvmeof.sh 275-fastreg.sh 276-mw.sh 277-xrc.sh
	280-nfs-rdma.sh 285-iser.sh 286-srp.sh)

# full_suite — every selftest, 152-tprun-llama-ref last: it reads the
# answers the host's llama.cpp stage, which runs beside the guest, keeps
# in build/llama-ref (about 85 s; the guest comes to the end after 20
# minutes).
full_suite() {
	local t last=152-tprun-llama-ref.sh
	for t in tests/selftests/[0-9]*.sh; do
		[[ ${t##*/} == "$last" ]] || printf '%s ' "${t##*/}"
	done
	echo "$last"
}

# GUEST_JOBS guests at a time (default 1).  Two side by side took as long
# as one after the other on the two-core build machine (each ran at half
# speed, 2026-11-26) and stretch every test's time towards its timeout;
# on a machine with more cores GUEST_JOBS=2 saves time.  Each run's output
# is kept and printed when it ends, so the logs do not interleave.
guest_names=()
guest_cmds=()
guest_early=()	# set: the guest needs only "build (6.1)"
for k in ${KERNELS:-$default_kernels}; do
	series=${k%:*}
	[[ $series != 6.1 ]] || guest_early[${#guest_cmds[@]}]=1
	if [[ $k == *:smoke ]]; then
		guest_names+=("guest smoke tests ($series)")
		guest_cmds+=("tests/vm/run-vm.sh --kernel $series $smoke_knobs ${smoke_tests[*]}")
	elif [[ $k == *:kernel ]]; then
		guest_names+=("guest kernel tests ($series)")
		guest_cmds+=("tests/vm/run-vm.sh --kernel $series ${kernel_tests[*]}")
	else
		guest_names+=("guest selftests ($series)")
		guest_cmds+=("tests/vm/run-vm.sh --kernel $series $(full_suite)")
	fi
done
# The Debian packages of the stage above, installed, used and removed in
# the stock 6.1 guest (tests/packages, make check-packages): a guest of its
# own, about 8 minutes (DKMS compiles the module under TCG, with the
# guest's compiler cache warm; 13 cold), on 6.1 alone.
if [[ " ${KERNELS:-$default_kernels} " == *" 6.1 "* ]]; then
	guest_names+=("Debian packages in the guest (6.1)")
	guest_cmds+=("env TBRDMA_SELFTEST_DIR=$top/tests/packages tests/vm/run-vm.sh --kernel 6.1 --timeout 1800")
fi
# Two guests, each its own 6.1 kernel and one vCPU, on a virtual cable
# (tests/vm/run-cluster.sh, tests/cluster): the pingpongs and RDMA CM
# across it, the loss suite with netem on one guest's NIC, tprun with a
# rank per guest, and a guest powered off mid-transfer.  A few minutes;
# here and in CI.
guest_names+=("two guests on a cable (6.1)")
guest_cmds+=("tests/vm/run-cluster.sh --timeout 1500")
# Three guests in a triangle, a cable between each pair (two per guest):
# tprun with a rank per guest over each cable's device, a rank stopped, a
# cable down (tests/cluster/40-tprun.sh; make check-triangle).  About a
# minute: the three one-vCPU guests boot side by side.
guest_names+=("three guests in a triangle (6.1)")
guest_cmds+=("tests/vm/run-cluster.sh --nodes 3 --timeout 900 40-tprun.sh")

# Other Debian releases (DISTS; under CI trixie and sid, locally none:
# `DISTS=sid make check` adds one): their roots are built from Debian's
# archive (tools/dist-root.sh, about 8 minutes each on a fresh machine),
# the tree inside each root, then its guests run the demo, rdma-core's
# suite and the transport selftests below.  The preparation runs beside
# the Debian 12 guests (it waits on the network and dpkg more than on the
# CPU), its guests after theirs (last: they wait for it).  Cost: see
# Documentation/testing.md, "Other Debian releases".
if [[ ${CI:-} == true ]]; then
	default_dists="trixie sid"
else
	default_dists=""
fi
dists=${DISTS-$default_dists}
# The smoke subset (190 included: that release's rdma-core suite against
# its rdma-core, the Debian 12 one's counterpart) plus RDMA CM (220)
# across the link.  210-net-perftest (each release's own perftest across
# the link, 1-3 minutes each) stays out to keep CI's time bounded (it took
# 68 minutes on 2026-11-28 with the whole suite on 6.12-rt); the demo runs
# the release's perftest and `run-vm.sh --dist DIST 210-net-perftest.sh`
# the whole matrix.
dist_tests=("${smoke_tests[@]}" 220-net-cm.sh)
for d in $dists; do
	guest_names+=("demo ($d)" "guest selftests ($d)")
	guest_cmds+=("dist_guest $d demo" "dist_guest $d $smoke_knobs ${dist_tests[*]}")
done

jobs_max=${GUEST_JOBS:-1}
gdir=$(mktemp -d)
trap 'rm -rf "$log" "$pybin" "$gdir"' EXIT

# prepare_dists — the releases' roots, then per release the tree built,
# sparse, the provider's ABI tests and the packages in its root; each step
# is a stage reported after the guests ($gdir/dist/N.{name,log,rc}).
# $gdir/dist/done says it has ended: dist_guest waits for it.
dist_stage() {
	local n=$1 name=$2 t0=$SECONDS rc=0
	shift 2
	echo "$name" >"$gdir/dist/$n.name"
	{ echo "== $name: $*"; "$@"; } >"$gdir/dist/$n.log" 2>&1 || rc=$?
	echo "$rc $((SECONDS - t0))" >"$gdir/dist/$n.rc"
	return "$rc"
}
prepare_dists() {
	local d n=0
	mkdir -p "$gdir/dist"
	dist_stage $((n++)) "roots ($dists)" tools/dist-root.sh fetch $dists || return
	for d in $dists; do
		if dist_stage $((n++)) "build ($d)" "${make[@]}" dist-build DIST="$d"; then
			touch "$gdir/dist/built-$d"
			dist_stage $((n++)) "sparse ($d)" "${make[@]}" dist-sparse DIST="$d"
			dist_stage $((n++)) "provider ABI tests ($d)" "${make[@]}" dist-unit-tests DIST="$d"
			dist_stage $((n++)) "Debian packages ($d)" "${make[@]}" deb-run DIST="$d"
		fi
	done
}
# dist_guest DIST demo|TEST... — a guest run of another release, once its
# root and tree are ready (a failed preparation is reported as its stage).
dist_guest() {
	local d=$1
	shift
	# A marker, not a lock: a lock could be kept by anything the
	# preparation leaves running (an agent apt started in a root).
	while [[ ! -e $gdir/dist/done ]]; do sleep 5; done
	[[ -e $gdir/dist/built-$d ]] || { echo "no $d tree to test: see its preparation stages"; return 1; }
	if [[ $1 == demo ]]; then
		TBRDMA_SELFTEST_DIR=$top/tests/demo tests/vm/run-vm.sh --dist "$d"
	else
		tests/vm/run-vm.sh --dist "$d" "$@"
	fi
}
# run_guest INDEX — one guest run, its output and "exit seconds" kept.
run_guest() {
	local t0 rc=0
	# The Debian 12 6.1 guests need only the 6.1 build; the others what
	# later_builds makes (a failed build shows as its own stage and as
	# the guest's failure).
	if [[ -z ${guest_early[$1]:-} ]]; then
		while [[ ! -e $gdir/built ]]; do sleep 5; done
	fi
	t0=$SECONDS
	# shellcheck disable=SC2086  # a command line of plain words
	${guest_cmds[$1]} >"$gdir/$1.log" 2>&1 || rc=$?
	echo "$rc $((SECONDS - t0))" >"$gdir/$1.rc"
}
(
	for i in "${!guest_cmds[@]}"; do
		while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do wait -n || true; done
		run_guest "$i" &
	done
	wait
) &
guests=$!
echo "== guest runs started: ${guest_names[*]} (their output follows when they end)"
# What the host does beside the guests (the later builds, the other
# releases' preparation, the llama.cpp comparison, the static checks and
# the unit tests) runs at nice 10: the guests are the critical path, and a
# two-vCPU TCG guest that shares the two cores with equal work slows far
# more than the work it yields to (a vCPU preempted while the other waits
# on it): 120-integrity 3 s alone, 10 s beside a build at nice 0, 6 s at
# nice 10; 137-limits 16, 137 and 36 s (2026-11-29).  The host's work fills
# the cycles the guests leave, while the first guest runs its 25 minutes
# (the later guests and its own last test wait for some of it).
renice -n 10 -p $$ >/dev/null
dists_job=""
if [[ -n $dists ]]; then
	mkdir -p "$gdir/dist"
	{ prepare_dists; touch "$gdir/dist/done"; } &
	dists_job=$!
fi

later_builds
# The llama.cpp comparison, the static checks and the host unit tests
# run beside the guests: a TCG guest keeps about 1.3 of the 2 cores busy,
# and these need the builds above only (sparse and kbuild rebuild nothing
# then).  About 200 s of make check's time, 2026-11-26.
# tprun against llama.cpp; its answers, in build/llama-ref, are for the
# guest's last test (full_suite).
stage "llama.cpp reference" "${make[@]}" llama-ref
stage "sparse (6.1)" tests/host/run-sparse.sh "$("${make[@]}" -s print-KDIR_6_1)"
stage "sparse (6.12)" tests/host/run-sparse.sh "$("${make[@]}" -s print-KDIR_6_12)" "$top/build/linux-6.12"
stage "checkpatch" tests/host/run-checkpatch.sh
stage "host unit tests" "${make[@]}" unit-tests

wait "$guests"
if [[ -n $dists_job ]]; then
	wait "$dists_job"
	for f in "$gdir"/dist/*.rc; do
		[[ -e $f ]] || continue
		i=${f%.rc}
		cp "$i.log" "$log"
		cat "$log"
		read -r rc secs <"$f"
		account "$(cat "$i.name")" "$rc" "$secs"
	done
fi
for i in "${!guest_cmds[@]}"; do
	echo "== ${guest_names[i]}: ${guest_cmds[i]}"
	cp "$gdir/$i.log" "$log"
	cat "$log"
	read -r rc secs <"$gdir/$i.rc" || { rc=1; secs=0; }
	account "${guest_names[i]}" "$rc" "$secs"
done

if [ ${#failed_stages[@]} -gt 0 ]; then
	echo "failed stages: ${failed_stages[*]}"
fi
echo "make check: ${SECONDS}s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
