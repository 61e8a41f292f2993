#!/bin/bash
# UCX across the link: ucx_perftest between two hosts (namespaces joined
# by a veth pair, lib-net.sh), the server on tbr0, the client on tbr1, with
# UCX_TLS=rc_verbs,ud_verbs,self, ud_verbs,self and UCX's default
# selection (lib-ucx.sh). UD carries UCX's wire-up, so this also proves
# UD address handles with RoCE GIDs and the GRH UCX checks on receive.
# timeout: 420
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-ucx.sh"

require_cmd ucx_info ucx_perftest
net_two_hosts 9000
ucx_matrix tbr0 tbr1 "$NET_IP_A" "ip netns exec $NET_NS"
echo "counters tbr0: $(rdma statistic show link tbr0/1)"
