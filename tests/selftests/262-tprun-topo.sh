#!/bin/bash
# tools/tprun on clusters cabled as Thunderbolt clusters are (lib-topo.sh:
# a network namespace per host, a veth pair per cable, a tbrdma device on
# each end): a triangle (3 hosts, 3 cables), a full mesh of 4 (6 cables)
# and a ring of 4 (4 cables; hosts 1 and 3, 2 and 4 have none). One rank
# per host, started with --rank/--peers, each entry listing the host's
# address on every cable ("a|b|c:port") and no -d: each rank must pick,
# for each peer, the device on the cable to it (the ring's non-neighbours:
# none, the all-reduce runs the ring over the neighbours' cables only and
# the control path is routed through a neighbour). The tokens must be
# those of --local N, the JSON's "links" name the cable's device for each
# pair, and every cable's devices must have carried bytes.
# timeout: 300
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-tprun.sh"
source "$(dirname "$0")/lib-topo.sh"

gen=(--synthetic "${TP_SHAPE[@]}" --seed 21 --tokens 8 --prompt-len 8 --json --logits)
port=18800
failed=()

# check_links NAME — every pair's device in the JSON: the cable's, or null
# for hosts without a cable
check_links() {
	local name=$1 r p want got bad=0
	for ((r = 0; r < TOPO_HOSTS; r++)); do
		for ((p = 0; p < TOPO_HOSTS; p++)); do
			((r == p)) && continue
			topo_cabled $((r + 1)) $((p + 1)) && want="\"tbrt$((r + 1))$((p + 1))\"" || want=null
			got=$(grep -oE "\{\"rank\": $r, \"peer\": $p, \"device\": [^,]*" "$TBRDMA_OUT/$name.json")
			got=${got##*\"device\": }
			if [[ $got != "$want" ]]; then
				echo "FAIL $name: rank $r reaches rank $p over ${got:-nothing}, not $want"
				bad=1
			fi
		done
	done
	return $bad
}

topo_case() {
	local kind=$1 n=$2 name=$3 bad=0 dev tx
	local -A before
	topo_build "$kind" "$n"
	tp_run "$name-local" --local "$n" --transport tcp "${gen[@]}" || { failed+=("$name-local"); return; }
	while read -r dev tx; do before[$dev]=$tx; done < <(topo_tx)
	port=$((port + 1))
	peers=$(topo_peers $port)
	echo "$name: --peers $peers"
	topo_ranks "$name" "$peers" -v "${gen[@]}"
	topo_wait "$name" || bad=1
	cp "$TBRDMA_OUT/$name.r0.json" "$TBRDMA_OUT/$name.json"
	if ((bad)); then
		failed+=("$name")
		return
	fi
	grep -h "rank [0-9]* (.*): \(tbrt\|over IP\)" "$TBRDMA_OUT/$name".r*.err | sed 's/^/   /' || true
	tp_compare "$name" "$TBRDMA_OUT/$name-local.json" "$TBRDMA_OUT/$name.json" || bad=1
	check_links "$name" || bad=1
	while read -r dev tx; do
		echo "   $dev sent $((tx - ${before[$dev]:-0})) bytes"
		((tx > ${before[$dev]:-0})) || { echo "FAIL $name: $dev sent nothing"; bad=1; }
	done < <(topo_tx)
	((bad)) && failed+=("$name")
	return 0
}

topo_case mesh 3 triangle
topo_case mesh 4 mesh-4
topo_case ring 4 ring-4
((${#failed[@]} == 0)) || fail "failed: ${failed[*]}"
