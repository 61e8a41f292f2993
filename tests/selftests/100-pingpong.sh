#!/bin/bash
# rdma-core's example programs over the verbs data path, server and client
# on the same device (loopback): ibv_rc/uc/ud/srq_pingpong with several
# message sizes, polled and event-driven (-e), each checking the received
# buffer (-c). Every run must complete.
# Device: TBR_TEST_DEV (lib-verbs.sh), tbrdma loopback by default.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"

require_cmd ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong
verbs_setup

# TYPE ARGS... per run; -s size, -n iterations, -m path MTU, -q QPs (SRQ).
runs=(
	"rc -s 1 -n 200"
	"rc -s 4096 -n 200"
	"rc -s 65536 -n 100 -m 4096"
	"rc -s 1048576 -n 20 -m 4096"
	"rc -s 4096 -n 100 -e"
	"uc -s 1 -n 200"
	"uc -s 4096 -n 200"
	"uc -s 65536 -n 50 -m 4096"
	"uc -s 4096 -n 100 -e"
	"ud -s 1 -n 200"
	"ud -s 1024 -n 200"
	"ud -s 4096 -n 100"
	"ud -s 1024 -n 100 -e"
	"srq -s 1 -n 20 -q 8"
	"srq -s 4096 -n 20 -q 8"
	"srq -s 65536 -n 10 -q 4 -m 4096"
	"srq -s 4096 -n 20 -q 4 -e"
)
PORT=18515
failed=()
for r in "${runs[@]}"; do
	read -r type args <<<"$r"
	PORT=$((PORT + 1))	# a fresh port each run: no TIME_WAIT surprises
	cmd="ibv_${type}_pingpong -d $TBR_TEST_DEV -g $TBR_TEST_GID -c -p $PORT $args"
	echo "== ${cmd#ibv_}"
	name=${type}${args// /}
	run_pair "$name" 60 "$cmd" "$cmd 127.0.0.1" || failed+=("$type $args")
	tail -n 2 "$TBRDMA_OUT/$name.client.log" 2>/dev/null | sed "s/^/   /" || true
done
((${#failed[@]} == 0)) || fail "${#failed[@]} of ${#runs[@]} runs failed: $(printf '[%s] ' "${failed[@]}")"
echo "all ${#runs[@]} pingpong runs completed"
