#!/bin/bash
# run-cluster.sh [options] [TEST|GLOB...] — N QEMU guests, each with its own
# kernel, joined by virtual cables (a QEMU socket netdev between two
# virtio-net NICs), all running the same cluster tests at the same time,
# each in its role.  Every guest is an ordinary run-vm.sh run (kernel cache,
# 9p root, initramfs, per-guest results); this script adds the cables and a
# shared directory, starts the guests in an order in which every cable's
# listening end exists before its connecting end, and merges the results.
# See Documentation/testing.md, "Two or more guests on cables".
set -euo pipefail

usage() {
	cat <<'EOF'
usage: tests/vm/run-cluster.sh [options] [TEST|GLOB...]
  TEST|GLOB           tests in the cluster test dir (default tests/cluster/*.sh
                      except lib*.sh); every guest runs each of them
  --nodes N           guests (default 2)
  --cables LIST       cables between guests, e.g. "0-1 1-2 0-2" (default: every
                      pair for 3 nodes or fewer, else a ring)
  --mtu N             the cables' MTU (default 65520, virtio-net's limit here)
  --cable TYPE        unix (default): a QEMU stream netdev over a Unix socket;
                      tcp: QEMU's socket netdev over TCP on 127.0.0.1, which
                      holds back small frames (Nagle, see testing.md)
  --kernel SERIES     as run-vm.sh, for every guest (default 6.1); SERIES,SERIES,...
                      gives each guest its own (node 0 first)
  --smp N             virtual CPUs per guest (default 1)
  --nic-opts OPTS     more virtio-net-pci properties, e.g. rx_queue_size=1024
  --timeout SECS      whole run (default 1800)
  --test-timeout SECS default per-test timeout (default 300)
  --set TBR_X=VALUE   a setting for the tests (repeatable): lib-cluster.sh
                      exports every TBR_* line of the guest's config
env: TBRDMA_CLUSTER_DIR (default <repo>/tests/cluster)
exit: as run-vm.sh, the worst of the guests'
EOF
}
die() { echo "run-cluster: $*" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
nodes=2 cables="" cable_type=unix mtu=65520 kernels=6.1 smp=1 nic_opts= run_timeout=1800 test_timeout=300
pats=() sets=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--nodes) nodes=${2:?}; shift 2 ;;
	--cables) cables=${2:?}; shift 2 ;;
	--mtu) mtu=${2:?}; shift 2 ;;
	--cable) cable_type=${2:?}; shift 2 ;;
	--kernel) kernels=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--nic-opts) nic_opts=,${2:?}; shift 2 ;;
	--timeout) run_timeout=${2:?}; shift 2 ;;
	--test-timeout) test_timeout=${2:?}; shift 2 ;;
	--set) [[ $2 =~ ^TBR_[A-Z0-9_]+=[^$'\n']*$ ]] || die "--set TBR_NAME=VALUE, not '$2'"
		sets+=("$2"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; pats+=("$@"); break ;;
	-*) usage >&2; exit 2 ;;
	*) pats+=("$1"); shift ;;
	esac
done
[[ $nodes =~ ^[1-9]$ ]] || die "--nodes: 1 to 9"
[[ $cable_type == unix || $cable_type == tcp ]] || die "--cable: unix or tcp"
[[ $mtu =~ ^[0-9]+$ && $mtu -ge 1280 && $mtu -le 65535 ]] || die "--mtu: 1280 to 65535"
if [[ -z $cables ]]; then
	for ((a = 0; a < nodes; a++)); do
		for ((b = a + 1; b < nodes; b++)); do
			((nodes <= 3 || b == a + 1 || (a == 0 && b == nodes - 1))) && cables+="$a-$b "
		done
	done
fi
read -ra cable_list <<<"$cables"
for c in "${cable_list[@]}"; do
	if ! [[ $c =~ ^([0-9])-([0-9])$ ]] ||
		((BASH_REMATCH[1] >= BASH_REMATCH[2] || BASH_REMATCH[2] >= nodes)); then
		die "--cables: '$c' is not A-B with A < B < $nodes"
	fi
done
IFS=, read -ra kernel_of <<<"$kernels"
for ((i = ${#kernel_of[@]}; i < nodes; i++)); do kernel_of[i]=${kernel_of[0]}; done

dir=$(realpath -e "${TBRDMA_CLUSTER_DIR:-$repo/tests/cluster}") || die "no cluster test dir"
[[ ${#pats[@]} -gt 0 ]] || pats=('*.sh')
export LC_COLLATE=C
shopt -s nullglob
tests=()
for p in "${pats[@]}"; do
	found=0
	for f in "$dir"/${p##*/}; do  # unquoted on purpose: it is a glob
		t=${f##*/}
		[[ -f $f && $t != lib*.sh ]] || continue
		found=1
		[[ " ${tests[*]} " == *" $t "* ]] || tests+=("$t")
	done
	((found)) || die "no cluster test matches '$p' in $dir"
done
shopt -u nullglob

# A TCP port for each cable: the lower-numbered node listens, the other
# connects.  Ports nobody on the host listens on, from a random start.
port_free() { ! ss -Hltn "sport = :$1" | grep -q .; }
port=$((20000 + RANDOM % 20000))
ports=()
for c in "${cable_list[@]}"; do
	until port_free "$port"; do port=$((port + 1)); done
	ports+=("$port")
	port=$((port + 1))
done

root=$(mktemp -d "${TMPDIR:-/tmp}/tbrdma-cluster.XXXXXX")
mkdir -p "$root/shared"
echo "run-cluster: $nodes guests, cables ${cable_list[*]} (MTU $mtu), ${#tests[@]} test(s), results in $root"

# The qemu arguments of node $1: its end of each cable it is on, and the
# shared directory.  MAC 02:74:62:CC:00:NN: cable CC, node NN (locally
# administered and distinct: two NICs with QEMU's default MAC on one cable
# hear nothing).
node_args() {
	local n=$1 k a b mode
	# shellcheck disable=SC2054  # commas belong to qemu's option syntax
	args=(--smp "$smp" --kernel "${kernel_of[n]}" --timeout "$run_timeout"
		--test-timeout "$test_timeout" --results "$root/node$n"
		--config "TBRDMA_CLUSTER_NODE=$n" --config "TBRDMA_CLUSTER_NODES=$nodes"
		--config "TBRDMA_CLUSTER_CABLES=${cable_list[*]}"
		--config "TBRDMA_CLUSTER_MTU=$mtu"
		--qemu-arg -fsdev --qemu-arg "local,id=cluster,path=${root//,/,,}/shared,security_model=none"
		--qemu-arg -device --qemu-arg virtio-9p-pci,fsdev=cluster,mount_tag=tbrcluster)
	for k in "${sets[@]}"; do args+=(--config "$k"); done
	for k in "${!cable_list[@]}"; do
		a=${cable_list[k]%-*} b=${cable_list[k]#*-}
		if ((n == a)); then
			mode=listen
		elif ((n == b)); then
			mode=connect
		else
			continue
		fi
		if [[ $cable_type == tcp ]]; then
			args+=(--qemu-arg -netdev --qemu-arg "socket,id=cable$k,$mode=127.0.0.1:${ports[k]}")
		else
			args+=(--qemu-arg -netdev --qemu-arg "stream,id=cable$k,server=$([[ $mode == listen ]] && echo on || echo off),addr.type=unix,addr.path=${root//,/,,}/cable$k.sock")
		fi
		args+=(
			--qemu-arg -device
			--qemu-arg "virtio-net-pci,netdev=cable$k,host_mtu=$mtu,mac=02:74:62:$(printf %02x "$k"):00:$(printf %02x "$n")$nic_opts")
	done
}

# Is every cable node $1 listens on listening?
listening() {
	local k
	for k in "${!cable_list[@]}"; do
		[[ ${cable_list[k]%-*} == "$1" ]] || continue
		if [[ $cable_type == tcp ]]; then
			! port_free "${ports[k]}" || return 1
		else
			[[ -S $root/cable$k.sock ]] || return 1
		fi
	done
}

# The cable's end is QEMU's main loop thread (it moves frames between the
# NIC and the socket); the guest's CPU is another thread of the same
# process.  A guest that busy-polls (perftest, ibv_*_pingpong) keeps its
# CPU thread running, and on a host with as many cores as guests the main
# loops then wait for a core: frames sat for milliseconds, and polled
# latency came out several times worse than blocking TCP's.  A NIC does
# not take the CPU from the programs; here its thread gets the priority,
# nice -10, so it runs as soon as a frame is there.  (Its 9p workers,
# started from it later, inherit that; the CPU thread keeps nice 0.)
prioritize_cable() {
	local p
	for p in $(pgrep -f "qemu-system.*${root}/node$1/"); do
		renice -n -10 -p "$p" >/dev/null || echo "run-cluster: could not renice qemu $p" >&2
	done
}

pids=()
# shellcheck disable=SC2317  # a trap
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'echo "run-cluster: interrupted (results in $root)" >&2; exit 130' INT
trap 'exit 143' TERM HUP

t0=$SECONDS
for ((n = 0; n < nodes; n++)); do
	node_args "$n"
	# Each guest's console, its lines marked with the node.
	TBRDMA_SELFTEST_DIR=$dir "$here/run-vm.sh" "${args[@]}" "${tests[@]}" > >(sed -u "s/^/n$n| /" | tee "$root/node$n.log") 2>&1 &
	pids+=($!)
	# Its listening ends must exist before a later node connects to them;
	# the first node also builds the modules and the initramfs the others
	# then find ready.
	deadline=$((SECONDS + 900))
	until listening "$n" && pgrep -f "qemu-system.*${root}/node$n/" >/dev/null; do
		if ! kill -0 "${pids[n]}" 2>/dev/null || ((SECONDS > deadline)); then
			echo "run-cluster: node $n did not start its guest" >&2
			exit 3
		fi
		sleep 0.2
	done
	prioritize_cable "$n"
done

# A node that powered itself off in its last test (cluster_poweroff, a
# machine dying under its peers) did not finish: that is the test.
last=${tests[${#tests[@]} - 1]}
rc=0
for ((n = 0; n < nodes; n++)); do
	r=0
	wait "${pids[n]}" || r=$?
	if [[ $(cat "$root/shared/poweroff.$n" 2>/dev/null) == "$last" ]]; then
		echo "run-cluster: node $n powered off in $last, as that test does"
		mkdir -p "$root/node$n/tests/$last"
		echo pass >"$root/node$n/tests/$last/result"
		r=0
	fi
	((r <= rc)) || rc=$r
done
pids=()
sleep 0.3	# the consoles' last lines

# One verdict per test: it passed if it passed on every node.
echo "TAP version 13"
echo "1..${#tests[@]}"
pass=0 fail=0 skip=0 i=0
for t in "${tests[@]}"; do
	i=$((i + 1)) verdict=pass why=""
	for ((n = 0; n < nodes; n++)); do
		r=$(cat "$root/node$n/tests/$t/result" 2>/dev/null || echo "not run")
		case $r in
		pass) ;;
		skip) [[ $verdict == fail ]] || verdict=skip ;;
		*) verdict=fail why+=" node $n: $r;" ;;
		esac
	done
	case $verdict in
	pass) pass=$((pass + 1)); echo "ok $i - $t" ;;
	skip) skip=$((skip + 1)); echo "ok $i - $t # SKIP" ;;
	*) fail=$((fail + 1)); echo "not ok $i - $t #$why" ;;
	esac
done
((fail == 0)) || ((rc != 0)) || rc=1
echo "run-cluster: total $((SECONDS - t0))s, results in $root (node*/tests/NAME/)"
line="$pass passed, $fail failed"
((skip == 0)) || line+=", $skip skipped"
echo "$line"
exit "$rc"
