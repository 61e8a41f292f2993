#!/bin/bash
# Benchmark of tprun on clusters cabled as Thunderbolt clusters are
# (tests/selftests/lib-topo.sh: a network namespace per host, a veth pair
# per cable at MTU 9000, a tbrdma device on each end): a triangle, a full
# mesh of 4 and a ring of 4, one rank per host, each rank on the device
# of the cable to each peer (no -d), against tprun's TCP transport over
# the same cables in the same run. Decode tokens/s and the all-reduce's
# p50, medians of BENCH_TOPO_ROUNDS rounds (the transports taking turns),
# and each cable's share of the bytes tbrdma sent. Every run's tokens
# must be those of --local N over TCP (else it fails, never a number).
# timeout: 1800
source "$TBRDMA_ROOT/tests/selftests/lib.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-verbs.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-net.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-tprun.sh"
source "$TBRDMA_ROOT/tests/selftests/lib-topo.sh"

ROUNDS=${BENCH_TOPO_ROUNDS:-3}
gen=(--synthetic --dim 256 --layers 4 --heads 8 --kv-heads 4 --ffn 704 --vocab 1024
     --seed 31 --tokens 32 --prompt-len 16 --json)
port=19100

median() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "failed"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# one NAME TRANSPORT — one run; "TOKENS/S P50_US" or "failed"
one() {
	local name=$1 tr=$2
	port=$((port + 1))
	topo_ranks "$name" "$(topo_peers $port)" --transport "$tr" "${gen[@]}"
	if ! topo_wait "$name" >&2 ||
		[[ $(tp_field "$TBRDMA_OUT/$name.r0.json" tokens) != "$(tp_field "$TBRDMA_OUT/ref.json" tokens)" ]]; then
		echo failed
		return
	fi
	echo "$(tp_field "$TBRDMA_OUT/$name.r0.json" decode_tokens_per_s) $(tp_field "$TBRDMA_OUT/$name.r0.json" allreduce_p50_us)"
}

rows=()
shares=()
for t in "mesh 3 triangle" "mesh 4 mesh-4" "ring 4 ring-4"; do
	read -r kind n name <<<"$t"
	topo_build "$kind" "$n" >/dev/null
	tp_run ref --local "$n" --transport tcp "${gen[@]}" || fail "$name: --local $n"
	: >"$TBRDMA_OUT/$name.rdma" && : >"$TBRDMA_OUT/$name.tcp"
	declare -A before=()
	while read -r dev tx; do before[$dev]=$tx; done < <(topo_tx)
	for ((k = 1; k <= ROUNDS; k++)); do
		one "$name-rdma-$k" rdma >>"$TBRDMA_OUT/$name.rdma"
		one "$name-tcp-$k" tcp >>"$TBRDMA_OUT/$name.tcp"
	done
	total=0 share=""
	declare -A sent=()
	while read -r dev tx; do
		sent[$dev]=$((tx - ${before[$dev]:-0}))
		total=$((total + sent[$dev]))
	done < <(topo_tx)
	for dev in $(printf '%s\n' "${!sent[@]}" | sort); do
		share+=" $dev $(awk -v a="${sent[$dev]}" -v t="$total" 'BEGIN { printf "%.0f%%", t ? 100 * a / t : 0 }')"
	done
	unset before sent
	grep -q failed "$TBRDMA_OUT/$name.rdma" "$TBRDMA_OUT/$name.tcp" && fail "$name: a run failed"
	rt=$(awk '{ print $1 }' "$TBRDMA_OUT/$name.rdma" | median)
	rp=$(awk '{ print $2 }' "$TBRDMA_OUT/$name.rdma" | median)
	ct=$(awk '{ print $1 }' "$TBRDMA_OUT/$name.tcp" | median)
	cp=$(awk '{ print $2 }' "$TBRDMA_OUT/$name.tcp" | median)
	rows+=("$(printf '%-9s %6s %10.1f %10.1f %7.2f %11.0f %11.0f %7.2f' "$name" \
		"${#TOPO_CABLES[@]}" "$rt" "$ct" "$(awk -v a="$rt" -v b="$ct" 'BEGIN { print a / b }')" \
		"$rp" "$cp" "$(awk -v a="$cp" -v b="$rp" 'BEGIN { print a / b }')")")
	shares+=("$name:$share")
done
echo
echo "tprun on cabled clusters, $(uname -r), $(nproc) vCPUs (TCG), dim 256, 4 layers, 32 tokens; median of $ROUNDS rounds"
printf '%-9s %6s %10s %10s %7s %11s %11s %7s\n' topology cables "tbrdma t/s" "tcp t/s" speedup "tbrdma p50" "tcp p50" speedup
printf '%s\n' "${rows[@]}"
echo "share of the bytes tbrdma sent, per device (cable end):"
printf '  %s\n' "${shares[@]}"
