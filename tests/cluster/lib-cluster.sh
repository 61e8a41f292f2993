# lib-cluster.sh — helpers for the cluster tests (tests/vm/run-cluster.sh):
# every guest runs the same test at the same time; this says which node it
# is, brings its cables up and lets the nodes wait for each other.
#     source "$(dirname "$0")/lib-cluster.sh"   # also lib.sh, lib-verbs.sh, lib-net.sh
#     cluster_up                  # cables up, tbrdma on each, defers nothing
#
# Set here, from the guest's config (run-cluster.sh writes it):
#   NODE, NODES                this guest's number (0..NODES-1) and how many
#   CABLES                     "0-1 1-2 ...": cable k joins the two nodes named
#   CABLE_MTU                  every cable's MTU
# (Every TBR_* setting given to run-cluster.sh --set is in the environment
# already: guest-run.sh exports the config's TBR_* keys to every test.)
# Cable k is netdev cab<k> on both its nodes, 10.90.<k>.<node + 1>/24, with an
# RDMA device tbr<k> (cluster_tbrdma) or rxe<k> (cluster_rxe) on it.
# shellcheck shell=bash

# shellcheck source=../selftests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../selftests/lib.sh"
# shellcheck source=../selftests/lib-verbs.sh
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"
# shellcheck source=../selftests/lib-net.sh
source "$TBRDMA_ROOT/tests/selftests/lib-net.sh"

CLUSTER_CONFIG=/run/tbrdma-results/config
CLUSTER_SHARED=/run/tbrdma-cluster
CLUSTER_TEST=$(basename "$0" .sh)
[[ -r $CLUSTER_CONFIG ]] || fail "no $CLUSTER_CONFIG: run through tests/vm/run-cluster.sh"
while IFS='=' read -r _k _v; do
	case $_k in
	TBRDMA_CLUSTER_NODE) NODE=$_v ;;
	TBRDMA_CLUSTER_NODES) NODES=$_v ;;
	TBRDMA_CLUSTER_CABLES) CABLES=$_v ;;
	TBRDMA_CLUSTER_MTU) CABLE_MTU=$_v ;;
	esac
done <"$CLUSTER_CONFIG"
[[ -n ${NODE:-} && -n ${NODES:-} ]] || fail "$CLUSTER_CONFIG names no cluster node: run through tests/vm/run-cluster.sh"
read -ra CABLE_LIST <<<"$CABLES"
export NODE NODES CABLES CABLE_MTU

# cable_ip K NODE — NODE's address on cable K.
cable_ip() { echo "10.90.$1.$(($2 + 1))"; }
# cable_peer K — the other end of cable K from this node.
cable_peer() {
	local c=${CABLE_LIST[$1]}
	if [[ ${c%-*} == "$NODE" ]]; then echo "${c#*-}"; else echo "${c%-*}"; fi
}
# cable_mine K — is this node on cable K?
cable_mine() { [[ " ${CABLE_LIST[$1]/-/ } " == *" $NODE "* ]]; }
# cable_to NODE — the cable between this node and NODE.
cable_to() {
	local k
	for k in "${!CABLE_LIST[@]}"; do
		cable_mine "$k" && [[ $(cable_peer "$k") == "$1" ]] && { echo "$k"; return 0; }
	done
	return 1
}

# The shared directory (a 9p share of the host's, cache=none: what one
# guest writes the others see at once): barriers and small values.
cluster_shared() {
	if ! mountpoint -q "$CLUSTER_SHARED"; then
		mkdir -p "$CLUSTER_SHARED"
		mount -t 9p -o trans=virtio,version=9p2000.L,cache=none tbrcluster "$CLUSTER_SHARED" ||
			fail "cannot mount the cluster's shared directory"
	fi
	mkdir -p "$CLUSTER_SHARED/$CLUSTER_TEST"
}
cluster_shared

# cluster_put KEY VALUE / cluster_get NODE KEY [SECS] — a value for the
# other nodes; cluster_get waits for NODE's (default 120 s).
cluster_put() {
	printf '%s\n' "$2" >"$CLUSTER_SHARED/$CLUSTER_TEST/$1.$NODE.tmp"
	mv "$CLUSTER_SHARED/$CLUSTER_TEST/$1.$NODE.tmp" "$CLUSTER_SHARED/$CLUSTER_TEST/$1.$NODE"
}
cluster_get() {
	local f=$CLUSTER_SHARED/$CLUSTER_TEST/$2.$1
	wait_for "[[ -e $f ]] || cluster_failed" "${3:-120}" || fail "node $1 never published $2"
	cluster_failed && fail "node $(cluster_failed_node) failed"
	cat "$f"
}

cluster_failed_node() {
	local f
	for f in "$CLUSTER_SHARED/$CLUSTER_TEST"/failed.*; do
		[[ -e $f ]] && { echo "${f##*.}"; return 0; }
	done
	return 1
}
cluster_failed() { cluster_failed_node >/dev/null; }

# cluster_sync NAME [SECS] — wait until every node got here (default
# 300 s: the first sync waits for the slowest guest to boot).  Fails the
# test when another node's test failed meanwhile.  Every node makes the
# same calls in the same order, so each call gets a number of its own:
# a name used twice (a run repeated) is two syncs, not one.
_cluster_calls=0
cluster_sync() {
	local name=$1.$((++_cluster_calls)) secs=${2:-300} n all
	: >"$CLUSTER_SHARED/$CLUSTER_TEST/sync-$name.$NODE"
	all="true"
	for ((n = 0; n < NODES; n++)); do
		all+=" && [[ -e $CLUSTER_SHARED/$CLUSTER_TEST/sync-$name.$n || -e $CLUSTER_SHARED/gone.$n ]]"
	done
	wait_for "$all || cluster_failed" "$secs" || fail "sync $name: not every node came within $secs s"
	! cluster_failed || fail "sync $name: node $(cluster_failed_node) failed"
}

# cluster_poweroff — power this guest off at once, as a machine that dies
# or loses power (no shutdown, nothing sent to the peers).  From then on
# the other nodes' syncs count it as arrived, and run-cluster.sh counts
# the test as passed on this node if it is the last test of the run.
cluster_poweroff() {
	echo "${0##*/}" >"$CLUSTER_SHARED/poweroff.$NODE"
	: >"$CLUSTER_SHARED/gone.$NODE"
	sync
	echo o >/proc/sysrq-trigger
	tbr_sleep 60
}

# A test that fails here tells the others (their syncs stop waiting); one
# that passes waits for the others at its end, so that no guest powers off,
# taking its cables down, while another still uses them.
_cluster_exit() {
	local rc=$?
	if ((rc != 0 && rc != 4)); then
		: >"$CLUSTER_SHARED/$CLUSTER_TEST/failed.$NODE"
	else
		(cluster_sync end 120) || rc=1
	fi
	_tbr_run_deferred
	exit "$rc"
}
trap _cluster_exit EXIT

# cluster_net_up — every cable of this node up: its NIC (found by the MAC
# run-cluster.sh gave it, 02:74:62:CC:00:NN) renamed cab<k>, MTU, address.
# Idempotent: the tests of one boot share the cables.
cluster_net_up() {
	local k mac f
	tbr_modprobe virtio_net
	for k in "${!CABLE_LIST[@]}"; do
		cable_mine "$k" || continue
		[[ -e /sys/class/net/cab$k ]] && continue
		printf -v mac '02:74:62:%02x:00:%02x' "$k" "$NODE"
		wait_for "grep -lqx $mac /sys/class/net/*/address" 10 || fail "no NIC with MAC $mac (cable $k)"
		for f in /sys/class/net/*/address; do
			[[ $(<"$f") == "$mac" ]] || continue
			f=${f%/address}
			ip link set "${f##*/}" name "cab$k"
		done
		ip link set "cab$k" mtu "$CABLE_MTU" || fail "cab$k: MTU $CABLE_MTU refused"
		ip addr add "$(cable_ip "$k" "$NODE")/24" dev "cab$k"
		ip link set "cab$k" up
	done
	for k in "${!CABLE_LIST[@]}"; do
		cable_mine "$k" || continue
		wait_for "[[ \$(</sys/class/net/cab$k/operstate) == up ]]" 10 || fail "cab$k not up"
	done
}

# cluster_tbrdma — tbrdma on every cable of this node: device tbr<k> on
# cab<k>, port ACTIVE with its IPv4 GID.  Its removal is deferred.
cluster_tbrdma() {
	local k
	cluster_net_up
	tbr_load_core
	defer cluster_tbrdma_down
	[[ -d /sys/module/tbrdma ]] || tbr_insmod ${TBR_MODPARAMS:-}
	export RDMAV_DRIVERS=$TBRDMA_ROOT/provider/libtbrdma
	for k in "${!CABLE_LIST[@]}"; do
		cable_mine "$k" || continue
		cluster_tbrdma_link "$k"
	done
}
# cluster_tbrdma_link K — tbr<K> on this node's end of cable K, its port
# ACTIVE with its IPv4 GID
cluster_tbrdma_link() {
	rdma link add "tbr$1" type tbrdma netdev "cab$1" || fail "rdma link add tbr$1"
	wait_for "net_gid tbr$1 $(cable_ip "$1" "$NODE")" 10 || fail "tbr$1: no IPv4 GID"
	wait_for "[[ \$(</sys/class/infiniband/tbr$1/ports/1/state) == *ACTIVE ]]" 10 ||
		fail "tbr$1: port not ACTIVE"
}
cluster_tbrdma_down() {
	local k rc=0
	for k in "${!CABLE_LIST[@]}"; do
		[[ -e /sys/class/infiniband/tbr$k ]] || continue
		rdma link delete "tbr$k" || rc=1
	done
	tbr_rmmod || rc=1
	return $rc
}

# cluster_rxe — rdma_rxe on every cable of this node: rxe<k> on cab<k>.
cluster_rxe() {
	local k
	cluster_net_up
	tbr_load_core
	defer cluster_rxe_down
	for k in "${!CABLE_LIST[@]}"; do
		cable_mine "$k" || continue
		rdma link add "rxe$k" type rxe netdev "cab$k" || fail "rdma link add rxe$k"
		wait_for "net_gid rxe$k $(cable_ip "$k" "$NODE")" 10 || fail "rxe$k: no IPv4 GID"
	done
}
cluster_rxe_down() {
	local k rc=0
	for k in "${!CABLE_LIST[@]}"; do
		[[ -e /sys/class/infiniband/rxe$k ]] || continue
		rdma link delete "rxe$k" || rc=1
	done
	[[ ! -d /sys/module/rdma_rxe ]] || modprobe -r rdma_rxe || rc=1
	return $rc
}

# cluster_pair NAME PORT SECS SRV CLI 'SERVER CMD' 'CLIENT CMD' — the
# server command on node SRV, the client on node CLI once the server
# listens on PORT (TCP, or an RDMA CM listener); other nodes only sync.
# Both must exit 0 within SECS; a server command written 'daemon:CMD'
# (qperf, which serves for ever) is stopped once the client is done.
# Each node's log is $TBRDMA_OUT/NAME.log, shown on failure.  Returns this
# node's command's status.
cluster_pair() {
	local name=$1 port=$2 secs=$3 srv=$4 cli=$5 log=$TBRDMA_OUT/$1.log rc=0 pid
	local cmd=${6#daemon:} key=$1.$((++_cluster_calls)) done_mark
	done_mark=$CLUSTER_SHARED/$CLUSTER_TEST/$key-done.$cli
	cluster_sync "$name-start" 120
	if ((NODE == srv)); then
		# shellcheck disable=SC2086  # a word list on purpose
		timeout "$secs" $cmd >"$log" 2>&1 &
		pid=$!
		wait_for "pid_exited $pid || ss -Hltn 'sport = :$port' | grep -q . ||
			rdma resource show cm_id | grep -q 'state LISTEN .*:$port '" 30 ||
			echo "--- $name: nothing listens on $port yet"
		cluster_put "$key-listening" 1
		if [[ $6 == daemon:* ]]; then
			wait_for "[[ -e $done_mark ]] || pid_exited $pid || cluster_failed" "$secs" || true
			kill "$pid" 2>/dev/null || true
			wait "$pid" || true
		else
			wait "$pid" || rc=$?
		fi
	elif ((NODE == cli)); then
		cluster_get "$srv" "$key-listening" 60 >/dev/null
		# shellcheck disable=SC2086
		timeout "$secs" $7 >"$log" 2>&1 || rc=$?
		cluster_put "$key-done" "$rc"
	fi
	if ((rc)); then
		echo "--- $name: exit $rc (124 = timeout ${secs}s)"
		tail -n 20 "$log"
	fi
	cluster_sync "$name-end" $((secs + 60))
	return $rc
}
