#!/bin/bash
# tools/tprun across two "hosts": network namespaces joined by a veth pair
# (lib-net.sh), rank 0 on tbr0 in host A, rank 1 on tbr1 in host B, each
# started on its own with --rank/--peers. Mesh and ring over RDMA, and TCP,
# must make the tokens of the 1-rank run.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-tprun.sh"

net_two_hosts 9000
gen=(--synthetic "${TP_SHAPE[@]}" --seed 13 --tokens 8 --prompt-len 8 --json --logits)
tp_run net-1 "${gen[@]}" || fail "1 rank"
port=18700
failed=()
for run in "rdma mesh" "rdma ring" "tcp auto"; do
	read -r tr algo <<<"$run"
	name=net-2-$tr-$algo
	port=$((port + 1))
	peers=$NET_IP_A:$port,$NET_IP_B:$port
	timeout 120 "$TPRUN" --rank 0 --peers "$peers" -d tbr0 --transport "$tr" \
		--algorithm "$algo" "${gen[@]}" >"$TBRDMA_OUT/$name.json" 2>"$TBRDMA_OUT/$name.err" &
	p0=$!
	rc1=0 rc0=0
	net_b timeout 120 "$TPRUN" --rank 1 --peers "$peers" -d tbr1 --transport "$tr" \
		--algorithm "$algo" "${gen[@]}" >/dev/null 2>"$TBRDMA_OUT/$name.1.err" || rc1=$?
	wait "$p0" || rc0=$?
	if ((rc0 || rc1)); then
		echo "--- $name: rank 0 exit $rc0, rank 1 exit $rc1"
		cat "$TBRDMA_OUT/$name.err" "$TBRDMA_OUT/$name.1.err"
		failed+=("$name")
		continue
	fi
	tp_compare "$name" "$TBRDMA_OUT/net-1.json" "$TBRDMA_OUT/$name.json" || failed+=("$name")
	grep -E '"device"' "$TBRDMA_OUT/$name.json" || true
done
((${#failed[@]} == 0)) || fail "failed: ${failed[*]}"
