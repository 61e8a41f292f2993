#!/bin/bash
# tprun on clusters cabled as Thunderbolt clusters are, over TCP on the
# host (the guest's 262-tprun-topo.sh and 263-tprun-lost.sh do the same
# over tbrdma devices): a network namespace per host, a veth pair per
# cable, each host's --peers entry listing its address on every cable
# ("a|b:port"). A triangle and a ring of 4 (the ring's opposite hosts
# have no cable: the control path is routed through a neighbour) make
# the tokens of --local N. Then on the triangle: a rank stopped (SIGSTOP)
# and a cable taken down at one end: the other ranks exit non-zero
# within 5 s naming the lost peer, and the stopped rank, resumed, says it
# was given up. Needs root (ip netns); skipped without. Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
tprun=$top/tools/tprun
# shellcheck source=lib-tap.sh
source "$(dirname "$0")/lib-tap.sh"

if [[ $(id -u) != 0 ]] || ! ip netns add tptopo-probe$$ 2>/dev/null; then
	echo "1..0 # SKIP needs root and ip netns"
	exit 0
fi
ip netns del tptopo-probe$$
tap_make "$top/tools/runner"

ns=tptopo$$-
hosts=0
cables=()
teardown() {
	local i
	for ((i = 1; i <= hosts; i++)); do ip netns del "$ns$i" 2>/dev/null; done
	hosts=0
	cables=()
}
trap 'teardown; rm -rf "$tmp"' EXIT
addr() { (($1 < $2)) && echo "10.89.$1$2.$1" || echo "10.89.$2$1.$1"; }
in_host() { local h=$1; shift; ip netns exec "$ns$h" "$@"; }

# build mesh|ring N
build() {
	local kind=$1 i j c
	teardown
	hosts=$2
	for ((i = 1; i <= hosts; i++)); do
		ip netns add "$ns$i" && ip -n "$ns$i" link set lo up
	done
	if [[ $kind == mesh ]]; then
		for ((i = 1; i <= hosts; i++)); do
			for ((j = i + 1; j <= hosts; j++)); do cables+=("$i $j"); done
		done
	else
		for ((i = 1; i < hosts; i++)); do cables+=("$i $((i + 1))"); done
		cables+=("1 $hosts")
	fi
	for c in "${cables[@]}"; do
		read -r i j <<<"$c"
		ip link add "t$i$j" netns "$ns$i" type veth peer name "t$j$i" netns "$ns$j"
		ip -n "$ns$i" addr add "$(addr "$i" "$j")/24" dev "t$i$j"
		ip -n "$ns$j" addr add "$(addr "$j" "$i")/24" dev "t$j$i"
		ip -n "$ns$i" link set "t$i$j" up
		ip -n "$ns$j" link set "t$j$i" up
	done
	if [[ $kind == ring ]]; then
		for ((i = 1; i <= hosts; i++)); do
			j=$((i % hosts + 1))
			in_host "$i" sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward
				for f in /proc/sys/net/ipv4/conf/*/rp_filter; do echo 0 >"$f"; done'
			ip -n "$ns$i" route add 10.89.0.0/16 via "$(addr "$j" "$i")"
		done
	fi
}

peers() {
	local i a b c list="" addrs
	for ((i = 1; i <= hosts; i++)); do
		addrs=""
		for c in "${cables[@]}"; do
			read -r a b <<<"$c"
			((a == i)) && addrs+=${addrs:+|}$(addr "$i" "$b")
			((b == i)) && addrs+=${addrs:+|}$(addr "$i" "$a")
		done
		list+=${list:+,}$addrs:$1
	done
	echo "$list"
}

port=$((20000 + $$ % 20000))
pids=()
# ranks NAME ARGS... — one rank per host, in the background: pids[r]
ranks() {
	local name=$1 i p
	shift
	port=$((port + 1))
	p=$(peers $port)
	pids=()
	for ((i = 1; i <= hosts; i++)); do
		in_host "$i" timeout 60 "$tprun" --rank $((i - 1)) --peers "$p" \
			--transport tcp --connect-timeout 20 "$@" \
			>"$tmp/$name.r$((i - 1)).json" 2>"$tmp/$name.r$((i - 1)).err" &
		pids+=($!)
	done
}
tokens() { grep -o '"tokens": \[[^]]*\]' "$1"; }

gen=(--synthetic --dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128
     --vocab 256 --seed 21 --tokens 8 --prompt-len 8 --json)
for t in "mesh 3 triangle" "ring 4 ring-4"; do
	read -r kind nh name <<<"$t"
	build "$kind" "$nh"
	"$tprun" --local "$nh" --transport tcp "${gen[@]}" >"$tmp/$name.local" 2>&1
	ranks "$name" -v "${gen[@]}"
	rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=$?; done
	want=$(tokens "$tmp/$name.local")
	got=$(tokens "$tmp/$name.r0.json")
	[[ $rc == 0 && -n $want && $got == "$want" ]] &&
		ok "$name over TCP, a|b peer entries$([[ $kind == ring ]] && echo ", control routed across"): $got as --local $nh" ||
		not_ok "$name: the tokens of --local $nh" "exit $rc, $got, want $want" "$(tail -n 3 "$tmp/$name".r*.err)"
done

ms() { echo $(($(date +%s%N) / 1000000)); }
long=(--synthetic --dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128
      --vocab 256 --seed 5 --tokens 5000 --slow-ms 20 --json -v)
# lost NAME LOST ACTION — ACTION mid-decoding; every rank but LOST out
# non-zero within 5 s, naming LOST (-1: a cable: every rank, naming a rank)
lost() {
	local name=$1 lost=$2 action=$3 r t0 t1 rc bad="" i
	build mesh 3
	ranks "$name" "${long[@]}"
	for ((i = 0; i < 300; i++)); do
		[[ $(cat "$tmp/$name".r*.err 2>/dev/null | grep -c "decoding") == 3 ]] && break
		sleep 0.1
	done
	sleep 0.5
	t0=$(ms)
	eval "$action"
	for r in 0 1 2; do
		((r == lost)) && continue
		rc=0
		wait "${pids[r]}" || rc=$?
		((rc)) || bad+=" rank $r exited 0;"
		if ((lost >= 0)); then
			grep -q "rank $lost (" "$tmp/$name.r$r.err" || bad+=" rank $r does not name rank $lost;"
		else
			grep -q "rank [0-2] (.*exiting" "$tmp/$name.r$r.err" || bad+=" rank $r names no rank;"
		fi
	done
	t1=$(ms)
	((t1 - t0 <= 5000)) || bad+=" $((t1 - t0)) ms;"
	[[ -z $bad ]] &&
		ok "$name: the others out in $((t1 - t0)) ms: $(grep -h exiting "$tmp/$name".r*.err | head -1 | sed 's/^tprun//')" ||
		not_ok "$name: the others out within 5 s naming the peer" "$bad" "$(grep -h "exiting\|failed" "$tmp/$name".r*.err)"
}

# shellcheck disable=SC2016  # the actions expand when lost evals them
lost "a rank stopped (SIGSTOP)" 2 'kill -STOP $(ip netns pids "${ns}3")'
stopped=$tmp/"a rank stopped (SIGSTOP).r2.err"
# shellcheck disable=SC2046  # the PIDs, one word each
kill -CONT $(ip netns pids "${ns}3") 2>/dev/null
rc=0
wait "${pids[2]}" || rc=$?
((rc != 0)) && grep -q "was given up" "$stopped" &&
	ok "the stopped rank, resumed, exits $rc: $(grep -h "given up" "$stopped" | head -1 | sed 's/^tprun//')" ||
	not_ok "the stopped rank, resumed, says it was given up" "exit $rc" "$(tail -n 3 "$stopped")"
# shellcheck disable=SC2016
lost "cable 1-2 down at host 2's end" -1 'ip -n "${ns}2" link set t21 down'
teardown
tap_done
