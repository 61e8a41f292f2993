#!/bin/bash
# Install, from Debian 12's own archive, everything tbrdma needs to build
# and test: the four target kernels (image + headers), the kernel source (for
# checkpatch), rdma-core, perftest, QEMU and the build tools; then
# llama.cpp's prebuilt CPU build from the npm registry (tests/llama-ref).
# What is already installed is skipped, so this is cheap to run every time.
set -euo pipefail

packages=(
	# build
	gcc make pkg-config libc6-dev sparse xz-utils
	# target kernels: 6.1 is also the guest kernel of the tests; the
	# PREEMPT_RT flavours of both for the guest tests CI runs on them
	linux-image-amd64 linux-headers-amd64
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	linux-image-rt-amd64 linux-headers-rt-amd64
	linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64
	linux-source-6.1
	# rdma-core 44 and the programs the tests drive
	rdma-core libibverbs-dev ibverbs-utils ibverbs-providers
	librdmacm-dev rdmacm-utils perftest qperf
	# an unmodified TCP program over rsockets (LD_PRELOAD=librspreload.so)
	iperf
	# verbs stacks the clients' selftests run unmodified: UCX, Open MPI
	# (mpicc for tests/progs), libfabric, rdma-core's own test suite
	ucx-utils openmpi-bin libopenmpi-dev libfabric-bin python3-pyverbs
	# admin tool libraries; dkms for `make dkms-install` and its test
	libnl-3-dev libnl-route-3-dev libmnl-dev dkms
	# tprun serve: its HTTP server and JSON; curl for its tests
	libmicrohttpd-dev libjson-c-dev curl
	# the test guest
	qemu-system-x86 busybox-static iproute2 kmod
	# checksum offload off on a veth (235-net-wirefuzz)
	ethtool
	# kernel storage protocols over tbrdma (NVMe-oF, NFS/RDMA, iSER selftests)
	nvme-cli fio nfs-kernel-server open-iscsi
)

# One dpkg-query for all of them: each call reads dpkg's whole database
# (a call per package took 20 s in the TCG test guest's admin-guide test).
declare -A status=()
while read -r pkg st; do
	status[${pkg%%:*}]=$st
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for pkg in "${packages[@]}"; do
	[ "${status[$pkg]:-}" = installed ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#packages[@]} packages present"
else
	echo "install-deps: installing ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: must run as root to install packages" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# llama.cpp, the reference tprun's output is checked against
# (tests/llama-ref): its prebuilt CPU build from the npm registry
"$(dirname "$0")/../tests/llama-ref/setup.sh"
# the official openai client, which tests tprun serve (tests/serve-client)
"$(dirname "$0")/../tests/serve-client/setup.sh"
