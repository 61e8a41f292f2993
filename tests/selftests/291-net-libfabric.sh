#!/bin/bash
# libfabric (Debian's libfabric-bin), unmodified, across the link (two
# hosts joined by a veth pair, lib-net.sh): fi_pingpong with the verbs
# provider on msg endpoints (RDMA CM + RC), rdm endpoints (verbs;ofi_rxm),
# and dgram endpoints (UD), with data checks (-c), the server in host A
# and the client in host B. dgram runs twice: with the devices named
# (tbr0-dgram, tbr1-dgram: across the link) and with libfabric's own
# choice, where both ends take the first device and talk to themselves
# through its own GIDs. fabtests (fi_rma_bw, ...) are not in Debian 12.
# timeout: 200
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd fi_pingpong fi_info
net_two_hosts 9000

fi_info -p verbs >"$TBRDMA_OUT/fi_info.txt" 2>&1 || fail "fi_info -p verbs lists nothing"
for d in tbr0 tbr1 tbr0-dgram tbr1-dgram; do
	grep -q "domain: $d\$" "$TBRDMA_OUT/fi_info.txt" || fail "fi_info -p verbs does not list domain $d"
done
echo "fi_info -p verbs: domains tbr0, tbr1, tbr0-dgram, tbr1-dgram"

# PROVIDER EP SIZE ITERS [SERVER DOMAIN] [CLIENT DOMAIN]
runs=(
	"verbs msg 64 200"
	"verbs msg 1048576 10"
	"verbs;ofi_rxm rdm 64 200"
	"verbs;ofi_rxm rdm 1048576 10"
	"verbs dgram 4000 50 tbr0-dgram tbr1-dgram"
	"verbs dgram 64 200"
	"verbs dgram 1024 50"
)
PORT=19400
n=0
failed=()
for r in "${runs[@]}"; do
	read -r prov ep size iters sdom cdom <<<"$r"
	n=$((n + 1))
	PORT=$((PORT + 1))
	sargs="-p $prov -e $ep -S $size -I $iters -c -B $PORT ${sdom:+-d $sdom}"
	cargs="-p $prov -e $ep -S $size -I $iters -c -P $PORT ${cdom:+-d $cdom}"
	echo "== fi_pingpong -p '$prov' -e $ep -S $size -I $iters ${sdom:+(-d $sdom / $cdom)}"
	if run_pair_once "fi-$n" 60 "fi_pingpong $sargs" \
		"ip netns exec $NET_NS fi_pingpong $cargs $NET_IP_A"; then
		tail -n 1 "$TBRDMA_OUT/fi-$n.client.log" | sed 's/^/   /'
	else
		failed+=("$prov $ep $size ${sdom:-}")
	fi
done
echo "counters tbr0: $(rdma statistic show link tbr0/1)"
((${#failed[@]} == 0)) || fail "${#failed[@]} of $n fi_pingpong runs failed: $(printf '[%s] ' "${failed[@]}")"
echo "all $n fi_pingpong runs passed with data checks"
