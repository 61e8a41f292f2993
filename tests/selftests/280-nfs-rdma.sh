#!/bin/bash
# NFS over RDMA on tbrdma: the kernel NFS server (nfsd, listening on
# "rdma 20049") exports a tmpfs from tbks_a (10.88.0.1); the client mounts
# it from tbks_b (10.88.0.2) with -o rdma,port=20049 across the veth pair
# of lib-kstorage.sh, as NFSv4.2 and as NFSv3. For each: a tree of files
# copied to the server and a tree of the server's copied back, checksums
# compared on both sides, unmount and remount, checksums again (a small
# tree: 9 files, 1.5 MB). The
# client's frames and fast registrations (xprtrdma registers every
# read/write chunk with REG_MR) must have moved.
# timeout: 360
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib-verbs.sh"
source "$(dirname "$0")/lib-net.sh"
source "$(dirname "$0")/lib-kstorage.sh"

require_cmd rpc.nfsd exportfs rpc.mountd rpcbind mount.nfs sha256sum
EXPORT=/srv/tbrdma-nfs
MNT=/mnt/tbrdma-nfs
LOCAL=$TBRDMA_OUT/local

ks_two_devices 9000
tbr_modprobe nfsd rpcrdma nfs nfsv3 nfsv4

nfs_teardown() {
	umount -f "$MNT" 2>/dev/null || true
	rpc.nfsd 0 2>/dev/null || true
	exportfs -ua 2>/dev/null || true
	pkill -x rpc.mountd 2>/dev/null || true
	pkill -x rpcbind 2>/dev/null || true
	umount "$EXPORT" 2>/dev/null || true
	umount /proc/fs/nfsd 2>/dev/null || true
}
defer nfs_teardown

# The guest's root is an overlay, which nfsd cannot export: a tmpfs.
mkdir -p "$EXPORT" "$MNT" /var/lib/nfs /run/rpcbind
mount -t tmpfs -o size=96m tmpfs "$EXPORT"
[[ -d /proc/fs/nfsd/threads ]] || [[ -e /proc/fs/nfsd/threads ]] ||
	mount -t nfsd nfsd /proc/fs/nfsd
rpcbind -w 2>/dev/null || rpcbind || fail "rpcbind"
exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 \
	"10.88.0.0/16:$EXPORT" || fail "exportfs"
rpc.mountd || fail "rpc.mountd"
# NFSv4 waits out a grace period after nfsd starts: make it short.
echo 10 >/proc/fs/nfsd/nfsv4leasetime
echo 10 >/proc/fs/nfsd/nfsv4gracetime
rpc.nfsd 4 || fail "rpc.nfsd"
echo "rdma 20049" >/proc/fs/nfsd/portlist || fail "nfsd: no rdma listener"
grep -q "rdma 20049" /proc/fs/nfsd/portlist || fail "rdma 20049 not in the portlist"
echo "nfsd listens on: $(tr '\n' ' ' </proc/fs/nfsd/portlist)"

# make_tree DIR SEED — files of 1 byte to 1 MiB in a few directories
# (few and small: every exec and every MB costs in a TCG guest).
make_tree() {
	local d=$1 i
	mkdir -p "$d/a/b" "$d/c"
	for i in 0 3 7 12 16 20; do
		head -c $((1 << i)) /dev/urandom >"$d/f$i"
	done
	head -c 77777 /dev/urandom >"$d/a/odd"
	head -c 300000 /dev/urandom >"$d/a/b/big"
	printf 'hello %s\n' "$2" >"$d/c/hello"
	ln -s ../f3 "$d/c/link"
}
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

make_tree "$LOCAL/up" up
make_tree "$EXPORT/down" down
sums "$LOCAL/up" >"$TBRDMA_OUT/up.sums"
sums "$EXPORT/down" >"$TBRDMA_OUT/down.sums"

# nfs_round VERS SERVER_PATH
nfs_round() {
	local vers=$1 path=$2 opts="rdma,port=20049,vers=$1"
	[[ $vers == 3 ]] && opts+=",nolock"
	local frames=$(ks_frames tbks_b) reg=$(net_counter tbks_b fast_reg)
	echo "== NFS v$vers over RDMA: mount -o $opts $KS_IP_A:$path"
	timeout 60 mount -t nfs -o "$opts" "$KS_IP_A:$path" "$MNT" ||
		fail "mount v$vers: $(dmesg | tail -n 5)"
	grep " $MNT " /proc/mounts | grep -q "proto=rdma" || fail "not an RDMA mount: $(grep " $MNT " /proc/mounts)"
	rm -rf "$MNT/up" "$LOCAL/down"
	timeout 120 cp -a "$LOCAL/up" "$MNT/up" || fail "v$vers: copy to the server"
	timeout 120 cp -a "$MNT/down" "$LOCAL/down" || fail "v$vers: copy from the server"
	sync
	cmp <(sums "$MNT/up") "$TBRDMA_OUT/up.sums" || fail "v$vers: the copy on the mount differs"
	cmp <(sums "$EXPORT/up") "$TBRDMA_OUT/up.sums" || fail "v$vers: the server's copy differs"
	cmp <(sums "$LOCAL/down") "$TBRDMA_OUT/down.sums" || fail "v$vers: the copy from the server differs"
	[[ -L $MNT/up/c/link ]] || fail "v$vers: symlink lost"
	echo "   $(wc -l <"$TBRDMA_OUT/up.sums") files each way, checksums equal"
	umount "$MNT" || fail "v$vers: umount"
	timeout 60 mount -t nfs -o "$opts" "$KS_IP_A:$path" "$MNT" || fail "v$vers: remount"
	cmp <(sums "$MNT/up") "$TBRDMA_OUT/up.sums" || fail "v$vers: differs after remount"
	cmp <(sums "$MNT/down") "$TBRDMA_OUT/down.sums" || fail "v$vers: differs after remount"
	umount "$MNT" || fail "v$vers: umount"
	frames=$(($(ks_frames tbks_b) - frames))
	reg=$(($(net_counter tbks_b fast_reg) - reg))
	echo "   remounted, checksums equal; tbks_b sent $frames frames, $reg fast registrations"
	((frames > 300 && reg > 0)) || fail "v$vers: the data did not go through tbrdma"
}

nfs_round 4.2 /
nfs_round 3 "$EXPORT"
echo "NFS over RDMA works on tbrdma"
