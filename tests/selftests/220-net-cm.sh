#!/bin/bash
# RDMA CM between two hosts (lib-net.sh): connection set-up goes through
# the GSI QP (QP1, MADs over our UD transport) exactly as on RoCE.
# rping -V verifies every byte; ucmatose (RC), udaddy (UD),
# rdma_server/rdma_client and perftest with -R must all complete.
# timeout: 400
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"

require_cmd rping ucmatose udaddy rdma_server rdma_client ib_send_bw
net_two_hosts 9000

# cm_pair NAME PORT 'SERVER CMD' 'CLIENT CMD' — net_pair (lib-net.sh), run
# again when perftest could not calibrate its clock; the client's last
# lines on success.
cm_pair() {
	perftest_retry net_pair "$@" || return 1
	tail -n 2 "$TBRDMA_OUT/$1.client.log" | sed 's/^/   /'
}

failed=()
echo "== rping -V (100 pings of 60000 bytes, every byte verified)"
cm_pair rping 7400 "rping -s -a $NET_IP_A -p 7400 -C 100 -S 60000 -V" \
	"rping -c -a $NET_IP_A -p 7400 -C 100 -S 60000 -V" || failed+=(rping)
echo "== ucmatose (RC connections and sends)"
cm_pair ucmatose 7471 "ucmatose -b $NET_IP_A -c 4 -C 20" \
	"ucmatose -s $NET_IP_A -c 4 -C 20" || failed+=(ucmatose)
echo "== udaddy (UD datagrams through address handles)"
cm_pair udaddy 7174 "udaddy -b $NET_IP_A -c 4 -C 20" \
	"udaddy -s $NET_IP_A -c 4 -C 20" || failed+=(udaddy)
echo "== rdma_server / rdma_client"
cm_pair rdma_server 7471 "rdma_server -s $NET_IP_A -p 7471" \
	"rdma_client -s $NET_IP_A -p 7471" || failed+=(rdma_client)
echo "== perftest over RDMA CM (-R)"
cm_pair send_bw_R 18700 "ib_send_bw -d tbr0 -R -p 18700 -n 200 -s 65536" \
	"ib_send_bw -d tbr1 -R -p 18700 -n 200 -s 65536 $NET_IP_A" || failed+=("ib_send_bw -R")
cm_pair write_lat_R 18701 "ib_write_lat -d tbr0 -R -p 18701 -n 200 -s 2" \
	"ib_write_lat -d tbr1 -R -p 18701 -n 200 -s 2 $NET_IP_A" || failed+=("ib_write_lat -R")

((${#failed[@]} == 0)) || fail "failed: ${failed[*]}"
echo "RDMA CM works across the link"
