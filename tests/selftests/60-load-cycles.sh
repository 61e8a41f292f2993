#!/bin/bash
# 20 cycles of load / link add / link delete / unload (and 5 more that unload
# with the devices still present) leave no warning in dmesg (the harness
# checks dmesg after every test).
# timeout: 600
source "$(dirname "$0")/lib.sh"

tbr_load_core
defer tbr_rmmod	# a failed test must not leave the module to the next one
for i in $(seq 1 20); do
	tbr_insmod
	rdma link add "c$i" type tbrdma netdev lo || fail "cycle $i: link add"
	rdma link delete "c$i" || fail "cycle $i: link delete"
	tbr_rmmod
done
for i in $(seq 1 5); do
	tbr_insmod loopback=1
	rdma link add "u$i" type tbrdma netdev lo 2>/dev/null &&
		fail "cycle $i: lo already has tbrlo0, a second device must be refused"
	tbr_rmmod
done
echo "25 cycles done"
