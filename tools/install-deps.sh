#!/bin/bash
# install-deps.sh [--minimal | --demo | --deb] [--dist DIST]... — everything tbrdma
# needs to build and test, from Debian 12's own archive (and, for the
# tests, two npm packages):
#
#  - on the host, as packages: the compiler and build tools, rdma-core and
#    the programs the tests drive, QEMU, the libraries the tools link;
#  - Debian's four target kernels (6.1, 6.12 and their PREEMPT_RT flavours),
#    image and headers, unpacked into the project's kernel cache
#    (~/.cache/tbrdma/kernels, tools/kernel-cache.sh), never installed as
#    host kernels: the host's /boot and boot menu stay as they were;
#  - llama.cpp's prebuilt CPU build and the openai client from the npm
#    registry, into tests/llama-ref and tests/serve-client.
#
# No service is started or enabled on the host: the NFS server, iSCSI and
# NVMe-oF are for the test guest only, so their units are left disabled.
# --minimal: only what building and using tbrdma on this machine needs
# (an administrator's machine, admin-guide.md): the compiler, rdma-core and
# its tools, the tools' libraries; no test kernels, guest or test clients.
# --demo: only what `make demo` needs (the 6.1 kernel, no npm packages).
# --deb: only what `make deb` needs (the packaging tools and the build
# dependencies of tools/debian/control).
# --dist DIST: also the root of another Debian release (trixie, sid) in the
# project's cache (tools/dist-root.sh), with debootstrap to build it; with
# --demo or --deb, that root instead of the 6.1 kernel or the host's
# build dependencies (the release's guest and packages use its own).
# What is already there is skipped, so this is cheap to run every time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: install-deps.sh [--minimal | --demo | --deb] [--dist DIST]..." >&2; exit 2; }
mode=all
dists=()
while [[ $# -gt 0 ]]; do
	case $1 in
	--minimal) mode=minimal; shift ;;
	--demo) mode=demo; shift ;;
	--deb) mode=deb; shift ;;
	--dist) [[ -n ${2:-} ]] || usage; dists+=("$2"); shift 2 ;;
	*) usage ;;
	esac
done

# What `make deb` builds with on the host (tools/debian/control's
# Build-Depends, dpkg-buildpackage, lintian; git lists the tree's files).
deb_packages=(
	gcc make pkg-config libc6-dev git
	debhelper dpkg-dev fakeroot lintian
	libibverbs-dev libnl-3-dev libnl-route-3-dev libmnl-dev
	libmicrohttpd-dev libjson-c-dev
)
packages=(
	# build: the kernel's kbuild tools (in the kernel cache) need libelf,
	# libssl and, for 6.12, pahole; cpio and zstd/xz for the guest's initramfs
	gcc make pkg-config libc6-dev sparse xz-utils zstd cpio kmod
	libelf1 libssl3 pahole
	# rdma-core 44 and the programs the demo and the tests drive
	rdma-core libibverbs-dev ibverbs-utils ibverbs-providers
	librdmacm-dev rdmacm-utils perftest
	# admin tool libraries
	libnl-3-dev libnl-route-3-dev libmnl-dev
	# tprun serve: its HTTP server and JSON
	libmicrohttpd-dev libjson-c-dev
	# the test guest
	qemu-system-x86 busybox-static iproute2
)
if [[ $mode == minimal ]]; then
	# The module builds against the running kernel's headers package
	# (linux-headers-$(uname -r), which brings kbuild's own needs).
	packages=(
		gcc make pkg-config libc6-dev kmod iproute2
		rdma-core libibverbs-dev ibverbs-utils ibverbs-providers
		librdmacm-dev rdmacm-utils perftest
		libnl-3-dev libnl-route-3-dev libmnl-dev
		libmicrohttpd-dev libjson-c-dev
	)
fi
if [[ $mode == deb ]]; then
	# Another release's packages are built inside its root, which has
	# all of these; the host only copies the tree there.
	if ((${#dists[@]})); then packages=(git); else packages=("${deb_packages[@]}"); fi
fi
# Another release's root is built by debootstrap.
((${#dists[@]} == 0)) || packages+=(debootstrap)
if [[ $mode == all ]]; then
	packages+=(
		# other Debian releases' roots (tools/dist-root.sh), for CI
		debootstrap
		# checkpatch.pl comes from the kernel source
		linux-source-6.1
		qperf
		# an unmodified TCP program over rsockets (LD_PRELOAD=librspreload.so)
		iperf
		# verbs stacks the clients' selftests run unmodified: UCX, Open MPI
		# (mpicc for tests/progs), libfabric, rdma-core's own test suite
		ucx-utils openmpi-bin libopenmpi-dev libfabric-bin python3-pyverbs
		# `make dkms-install`, `make deb` and their tests
		dkms debhelper dpkg-dev fakeroot lintian
		# the guest's compiler cache (tests/packages: DKMS compiles in the guest)
		ccache
		# curl for tprun serve's tests
		curl
		# checksum offload off on a veth (235-net-wirefuzz)
		ethtool
		# kernel storage protocols over tbrdma (NVMe-oF, NFS/RDMA, iSER
		# selftests): the guest runs their daemons, the host only has them
		nvme-cli fio nfs-kernel-server open-iscsi
	)
fi

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

# unit_links — the units enabled on the host, as their symlinks.
unit_links() {
	find /etc/systemd/system -mindepth 2 -maxdepth 2 -type l \
		\( -path '*.wants/*' -o -path '*.requires/*' \) 2>/dev/null | sort
}

# install_quietly PKG... — apt-get install with no service started (a
# policy-rc.d that denies every start, unless the machine has one) and
# every unit the packages enabled disabled again: the guest starts what
# it needs itself.
install_quietly() {
	local before policy=/usr/sbin/policy-rc.d own_policy=0 link unit
	before=$(unit_links)
	if [ ! -e $policy ]; then
		printf '#!/bin/sh\n# tbrdma install-deps: start no service while installing\nexit 101\n' >$policy
		chmod 0755 $policy
		own_policy=1
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "$@"
	if ((own_policy)); then
		rm -f $policy
		trap - EXIT
	fi
	while read -r link; do
		unit=${link##*/}
		echo "install-deps: leaving $unit disabled (the test guest starts it itself)"
		systemctl disable --quiet --no-reload "$unit" 2>/dev/null || rm -f "$link"
	done < <(comm -13 <(echo "$before") <(unit_links))
}

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#packages[@]} packages present"
else
	echo "install-deps: installing ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: must run as root to install packages" >&2
		exit 1
	fi
	install_quietly "${missing[@]}"
fi

# The target kernels, unpacked into the kernel cache (not the host's /boot).
if [[ $mode == deb || $mode == minimal ]]; then
	:
elif [[ $mode == demo ]]; then
	# Another release's demo boots that release's kernel, from its root.
	((${#dists[@]})) || "$here/kernel-cache.sh" fetch 6.1
else
	"$here/kernel-cache.sh" fetch 6.1 6.12 6.1-rt 6.12-rt
	# llama.cpp, the reference tprun's output is checked against
	# (tests/llama-ref): its prebuilt CPU build from the npm registry
	"$here/../tests/llama-ref/setup.sh"
	# the official openai client, which tests tprun serve (tests/serve-client)
	"$here/../tests/serve-client/setup.sh"
fi

# Other Debian releases' roots, built once into the cache.
((${#dists[@]} == 0)) || "$here/dist-root.sh" fetch "${dists[@]}"
