#!/bin/bash
# Guest sanity: proves the VM harness itself, without tbrdma. Checks the
# overlay root, the repo, the network/devices set-up, and that the kernel's
# module autoloader works (rdma link add -> rdma_rxe -> crc32 modules), then
# runs Debian's rxe provider end to end through /dev/infiniband/uverbs*.
# timeout: 120
# shellcheck source=tests/selftests/lib.sh
source "$(dirname "$0")/lib.sh"

require_cmd rdma ibv_devinfo findmnt

echo "== root is a writable overlay, the repo is visible"
[[ $(findmnt -no FSTYPE /) == overlay ]] || fail "/ is not the overlay"
echo ok >/etc/tbrdma-sanity
[[ $(cat /etc/tbrdma-sanity) == ok ]] || fail "/ not writable"
rm /etc/tbrdma-sanity
[[ $PWD == "$TBRDMA_ROOT" && -f $TBRDMA_ROOT/tests/selftests/lib.sh ]] || fail "repo not visible"
touch "$TBRDMA_OUT/probe" || fail "TBRDMA_OUT not writable"
t=$(mktemp -p /tmp) && rm -f "$t" || fail "/tmp is not writable"

echo "== devices, lo, limits"
[[ -c /dev/null && -c /dev/kmsg && -c /dev/ptmx ]] || fail "/dev incomplete"
[[ $(findmnt -no FSTYPE /dev/pts) == devpts ]] || fail "/dev/pts not mounted"
ip -o link show lo | grep -q '[<,]UP[,>]' || fail "lo is down"
[[ $(ulimit -l) == unlimited ]] || fail "memlock limit is $(ulimit -l)"

echo "== module autoload (modprobe ib_uverbs)"
modprobe ib_uverbs
[[ -d /sys/module/ib_uverbs ]] || fail "ib_uverbs not loaded"

echo "== rxe on lo: rdma link add must autoload rdma_rxe"
[[ ! -d /sys/module/rdma_rxe ]] || fail "rdma_rxe already loaded"
defer 'rdma link delete r0 2>/dev/null || true; modprobe -r rdma_rxe 2>/dev/null || true'
rdma link add r0 type rxe netdev lo
[[ -d /sys/module/rdma_rxe ]] || fail "rdma_rxe was not autoloaded"
# rxe before 6.15 asked the crypto API for "crc32", which autoloads
# crc32_generic/_pclmul; later ones call the crc32 library directly.
ko=$(modinfo -n rdma_rxe)
case $ko in
*.xz) unpack=(xz -dc) ;;
*.zst) unpack=(zstd -qdc) ;;
*) unpack=(cat) ;;
esac
if "${unpack[@]}" "$ko" | grep -qa crypto_alloc_shash; then
	grep -q '^name *: crc32$' /proc/crypto || fail "no crc32 transform: crypto autoload broken"
else
	echo "(this rdma_rxe uses the crc32 library: no crypto module to autoload)"
fi
ls -l /dev/infiniband/
compgen -G '/dev/infiniband/uverbs*' >/dev/null || fail "no /dev/infiniband/uverbs* node"
wait_for 'ibv_devinfo -d r0 | grep -q PORT_ACTIVE' 10 || true
expect_output 'ibv_devinfo -d r0' 'state:[[:space:]]+PORT_ACTIVE'

echo "== teardown"
rdma link delete r0
modprobe -r rdma_rxe
[[ ! -d /sys/module/rdma_rxe ]] || fail "rdma_rxe still loaded"
echo "guest is sane"
