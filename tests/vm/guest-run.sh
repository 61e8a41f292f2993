#!/bin/bash
# guest-run.sh RESULTS_DIR — PID 1 of the test guest (exec'd by the
# initramfs /init after switch_root). Sets the system up, runs the selftests
# named in RESULTS_DIR/config, prints TAP 13 on the console, writes per-test
# results and dmesg to RESULTS_DIR (a 9p share the host reads), powers off.
#
# No "set -e": PID 1 must always reach the poweroff below.
set -uo pipefail

res=${1:?usage: guest-run.sh RESULTS_DIR}
here=$(dirname "$(readlink -f "$0")")
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

power_off() {
	sync
	echo o >/proc/sysrq-trigger  # powers off at once, needs no userspace
	# Wait for it without exec: while the power-off tears the 9p root down
	# (seconds on a debug kernel) /usr/bin/sleep cannot be loaded, and an
	# early exit of PID 1 would print a kernel panic in every console log.
	local end=$((SECONDS + 60))
	while ((SECONDS < end)); do :; done
	# Not powered off after a minute: PID 1 exits, the kernel panics, and
	# qemu (-no-reboot) exits.
}
trap power_off EXIT

declare -A cfg
while IFS='=' read -r k v; do cfg[$k]=$v; done <"$res/config"
root=${cfg[TBRDMA_ROOT]:-} moddir=${cfg[TBRDMA_MODDIR]:-${cfg[TBRDMA_ROOT]:-}} dir=${cfg[SELFTEST_DIR]:-} default_timeout=${cfg[TEST_TIMEOUT]:-300}
scale=${cfg[TIMEOUT_SCALE]:-1}	# a debug kernel runs everything slower
read -ra tests <<<"${cfg[TESTS]:-}"
# A test's knobs (TBR_*, each test's header names its own) from
# `run-vm.sh --config TBR_X=V`: make check bounds some tests with them on
# the kernels after the first.
for k in "${!cfg[@]}"; do
	[[ $k == TBR_* ]] && export "$k=${cfg[$k]}"
done

# The initramfs /init did the mounts, lo and the hostname (it is faster).
setup_system() {
	mount -t configfs configfs /sys/kernel/config 2>/dev/null  # a module: autoloaded here
	ulimit -l unlimited  # verbs pin memory (ibv_reg_mr); the default 8 MiB is too small
}

# /dev/kmsg gives one record per read(), "prio,seq,usec,flags;text"
# (continuation lines start with a space); a non-blocking read returns
# EAGAIN at the end, which stops dd. The runner writes a unique marker before
# each test, so "what did this test log" is exactly the records after it.
kmsg() { echo "tbrdma-vm: $*" >/dev/kmsg; }
kmsg_after() {  # print records after the one whose text is $1 as "[secs] text"
	{ dd if=/dev/kmsg iflag=nonblock bs=65536 status=none 2>/dev/null || true; } |
		awk -v m="$1" '/^ / { next } {
		i = index($0, ";"); split(substr($0, 1, i - 1), h, ","); t = substr($0, i + 1)
		if (on) printf "[%5d.%06d] %s\n", h[3] / 1000000, h[3] % 1000000, t
		if (t == m) on = 1
	} END { exit !on }'
}

# Runs in a pipeline subshell; the test gets its own process group (made by
# timeout), so leftovers can be killed and cannot hold the output pipe.
run_test() {
	local file=$1 limit=$2 out=$3 pid rc
	cd "$root" || return 1
	TBRDMA_ROOT=$root TBRDMA_MODDIR=$moddir TBRDMA_OUT=$out timeout --kill-after=10 "$limit" bash "$file" </dev/null 2>&1 &
	pid=$!
	wait "$pid"
	rc=$?
	kill -KILL -- "-$pid" 2>/dev/null
	return "$rc"
}

# "# " before each line, in real time (mawk would buffer a pipe), and a
# missing final newline cannot glue the output to the TAP result line.
prefix_lines() {
	local l
	while IFS= read -r l || [[ -n $l ]]; do
		printf '# %s\n' "$l"
	done
}

run_one() {
	local i=$1 name=$2 file=$dir/$2 out=$res/tests/$2 limit line marker taint0 taint1 start rc secs bad
	local verdict=pass directive="" skip_reason="" gained
	local bad_taint=$(((1 << 5) | (1 << 7) | (1 << 9) | (1 << 14)))  # B, D, W, L
	mkdir -p "$out/out"
	if [[ ! -f $file ]]; then
		echo "# $file not found in the guest"
		echo fail >"$out/result"
		echo "not ok $i - $name"
		return
	fi
	limit=$default_timeout
	while read -r line; do  # builtins only: every exec costs ~0.1 s under TCG
		if [[ $line =~ ^#[[:space:]]*timeout:[[:space:]]*([0-9]+) ]]; then
			limit=${BASH_REMATCH[1]}
			break
		fi
	done <"$file"
	limit=$((limit * scale))
	marker="test $i $name: start"
	kmsg "$marker"
	taint0=$(</proc/sys/kernel/tainted)
	start=$SECONDS
	run_test "$file" "$limit" "$out/out" | tee "$out/output.log" | prefix_lines
	rc=${PIPESTATUS[0]}
	secs=$((SECONDS - start))
	if ! kmsg_after "tbrdma-vm: $marker" >"$out/dmesg.txt"; then
		echo "tbrdma-vm: start marker not found, this test's kernel log is lost (BUG: harness)" >>"$out/dmesg.txt"
	fi
	kmsg "test $i $name: end, exit code $rc"
	taint1=$(</proc/sys/kernel/tainted)
	echo "$rc" >"$out/exit-code"

	if [[ $rc -eq 0 ]]; then
		:
	elif [[ $rc -eq 4 ]]; then
		verdict=skip
		skip_reason=$(sed -n 's/^SKIP:[[:space:]]*//p' "$out/output.log" | tail -n1)
	elif [[ ($rc -eq 124 || $rc -eq 137) && $secs -ge $limit ]]; then
		verdict=fail directive=" # TIMEOUT $limit seconds"
		echo "# $name: killed after the $limit s timeout"
	else
		verdict=fail
		echo "# $name: exit code $rc"
	fi
	if ! bad=$("$here/dmesg-check.sh" "$out/dmesg.txt"); then
		verdict=fail
		echo "# $name: kernel log shows a problem (full log: tests/$name/dmesg.txt):"
		printf '%s\n' "${bad:-dmesg-check failed to run}" | sed 's/^/# dmesg: /'
	fi
	gained=$((taint1 & ~taint0 & bad_taint))
	if [[ $gained -ne 0 ]]; then
		verdict=fail
		echo "# $name: kernel became tainted ($taint0 -> $taint1)"
	fi
	echo "$verdict" >"$out/result"
	echo "# $name: ${secs}s"
	case $verdict in
	pass) echo "ok $i - $name" ;;
	skip) echo "ok $i - $name # SKIP ${skip_reason:-no reason given}" ;;
	*) echo "not ok $i - $name$directive" ;;
	esac
}

kmsg "runner started"
setup_system
kmsg "system set up"
read -r up _ </proc/uptime
echo "$up" >"$res/boot-seconds"
echo "TAP version 13"
echo "# guest up after ${up}s, kernel $(uname -r)"
echo "1..${#tests[@]}"
n=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	run_one "$n" "$t"
done
dmesg >"$res/dmesg.txt"
cat /proc/sys/kernel/tainted >"$res/tainted"
echo "complete ${#tests[@]}" >"$res/status"  # written last: the host's "guest finished" proof
