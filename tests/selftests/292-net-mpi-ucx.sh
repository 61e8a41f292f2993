#!/bin/bash
# Open MPI over UCX across the link: 2 ranks, one on each host (namespaces
# joined by a veth pair, lib-net.sh), tests/progs/mpi_check with every
# result checked, UCX_TLS=rc_verbs,ud_verbs,self. mpirun starts the rank
# of host B through an rsh agent that enters its namespace (as ssh would
# reach another machine) and names each host's device for UCX there.
# timeout: 240
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd mpirun
[[ -x $TBR_PROGS/mpi_check ]] || skip "tests/progs/mpi_check not built (mpicc: libopenmpi-dev)"
net_two_hosts 9000

agent=/tmp/tbr-mpi-rsh
cat >"$agent" <<SH
#!/bin/sh
# mpirun's rsh agent: HOST COMMAND...; host B is a network namespace.
host=\$1
shift
case \$host in
$NET_IP_B) exec ip netns exec $NET_NS env UCX_NET_DEVICES=tbr1:1 sh -c "\$*" ;;
*) exec env UCX_NET_DEVICES=tbr0:1 sh -c "\$*" ;;
esac
SH
chmod +x "$agent"
printf '%s slots=1\n%s slots=1\n' "$NET_IP_A" "$NET_IP_B" >/tmp/tbr-mpi-hosts
defer "rm -f $agent /tmp/tbr-mpi-hosts"

before=$(net_counter tbr0 rx_packets)
log=$TBRDMA_OUT/mpi.log
rc=0
UCX_NET_DEVICES=tbr0:1 timeout 180 mpirun --allow-run-as-root -np 2 \
	--hostfile /tmp/tbr-mpi-hosts --map-by node \
	--mca plm_rsh_agent "$agent" --mca oob_tcp_if_include 10.77.0.0/24 \
	--mca pml ucx -x RDMAV_DRIVERS -x UCX_TLS=rc_verbs,ud_verbs,self \
	-x UCX_LOG_LEVEL=info \
	"$TBR_PROGS/mpi_check" --max 262144 --iters 2 >"$log" 2>&1 || rc=$?
{ grep '^mpi_check:' "$log" || true; } | sed 's/^/   /'
lanes=$(sed -n 's/.*ep_cfg\[1\]: //p' "$log" | sort -u | tr '\n' ' ')
echo "lanes between the ranks: $lanes"
after=$(net_counter tbr0 rx_packets)
echo "tbr0 received $((after - before)) frames"
if ((rc)) || ! grep -q '^mpi_check: PASS' "$log"; then
	cat "$log"
	fail "mpirun across the link: exit $rc"
fi
[[ $lanes == *"rc_verbs/tbr0:1"* && $lanes == *"rc_verbs/tbr1:1"* ]] ||
	fail "the ranks' endpoints are not on tbr0 and tbr1: $lanes"
((after - before > 100)) || fail "tbr0 received only $((after - before)) frames"
echo "Open MPI: 2 ranks across the link, results checked"
