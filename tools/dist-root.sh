#!/bin/bash
# dist-root.sh — a root filesystem of another Debian release (Debian 13
# "trixie", Debian unstable "sid"), built once from Debian's archive into
# the project's cache: the build root for that release (its compiler, its
# kernel headers, its rdma-core) and the root of its QEMU test guest (its
# kernel, unpacked there, with its rdma-core, perftest, iproute2, pyverbs).
# The host stays what it is: debootstrap fetches from the same mirror the
# host's apt uses, and everything else runs with apt inside the root.
#
#   dist-root.sh fetch DIST...        build (or check) the root of each DIST
#   dist-root.sh root DIST            the root's directory
#   dist-root.sh kver DIST            the kernel release unpacked in it
#   dist-root.sh kdir DIST            its headers, as a path inside the root
#   dist-root.sh rdma-core DIST       the rdma-core version installed there
#   dist-root.sh run DIST [--bind DIR]... [--] CMD...
#                                     run CMD inside the root (chroot, with
#                                     /proc, /sys, /dev and each DIR bound at
#                                     its own path); root only
#   dist-root.sh list                 the releases this knows
#
# The cache (TBRDMA_DIST_CACHE, default ~/.cache/tbrdma/dists) holds one
# directory per release, DIST/root.  A root is rebuilt when the package
# list below changes; `make distclean` removes them all.
set -euo pipefail

cache=${TBRDMA_DIST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tbrdma/dists}
dists=(trixie sid)

die() { echo "dist-root: $*" >&2; exit 2; }

# What each root holds beyond debootstrap's minimal base.
packages=(
	# the release's kernel (the guest boots it; no initramfs is made, see
	# no_initramfs) and its headers, which pull in the compiler the kernel
	# was built with (sid's 7.2: gcc-16) and its kbuild tools
	linux-image-amd64 linux-headers-amd64
	build-essential pkg-config sparse kmod xz-utils zstd
	# rdma-core, and what the demo and the guest tests drive
	rdma-core libibverbs-dev librdmacm-dev ibverbs-utils ibverbs-providers
	rdmacm-utils perftest python3-pyverbs
	iproute2 procps psmisc iputils-ping ethtool util-linux
	# the admin tool's and the runner's libraries
	libnl-3-dev libnl-route-3-dev libmnl-dev libmicrohttpd-dev libjson-c-dev
	# `make deb` in the root, and DKMS in its guest (tests/packages)
	debhelper dpkg-dev fakeroot lintian dkms ccache
)

check_dist() {
	local d
	for d in "${dists[@]}"; do [[ $1 == "$d" ]] && return 0; done
	die "unknown release '$1' (known: ${dists[*]})"
}

# mirror — the Debian mirror the host's apt uses (deb822 or one-line
# sources), so the roots come from where the host's packages come from.
mirror() {
	local m
	if [[ -n ${TBRDMA_DIST_MIRROR:-} ]]; then echo "$TBRDMA_DIST_MIRROR"; return; fi
	m=$(awk 'tolower($1) == "uris:" && $2 !~ /security/ { print $2; exit }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	[[ -n $m ]] || m=$(awk '$1 == "deb" && $0 !~ /security/ {
		for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
	echo "${m:-http://deb.debian.org/debian}"
}

# in_root ROOT CMD... — CMD in ROOT with the pseudo filesystems bound, in
# a mount namespace of its own: every mount goes away with it, whatever
# happens.  BINDS (an array of host directories) are bound at their paths.
binds=()
in_root() {
	local r=$1 script
	shift
	[[ $(id -u) -eq 0 ]] || die "running commands in a root needs root (chroot, mounts)"
	# shellcheck disable=SC2016  # expanded by the inner shell
	# The root bound onto itself: inside, / is a mount point, as programs
	# that make their own mount namespace (unit tests) expect.
	script='r=$1; shift; n=$1; shift
		mount --bind "$r" "$r"
		for d in proc sys dev; do mount --rbind "/$d" "$r/$d"; done
		mount -t tmpfs tmpfs "$r/dev/shm" 2>/dev/null || true
		while [ "$n" -gt 0 ]; do
			mkdir -p "$r$1" && mount --bind "$1" "$r$1"; shift; n=$((n - 1))
		done
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
			INITRD=No "$@"'
	unshare --mount --propagation private /bin/sh -c "$script" in-root \
		"$r" "${#binds[@]}" ${binds[@]+"${binds[@]}"} "$@"
}

# no_initramfs ROOT — the guest boots the kernel with an initramfs of our
# own (tests/vm/mkinitramfs.sh): installing the kernel should spend neither
# a minute nor 20-35 MB on one nobody boots.  The kernel's hooks (trixie's
# initramfs-tools, sid's dracut) skip it when INITRD=No (in_root sets it);
# initramfs-tools' trigger does not ask, so update-initramfs is diverted.
no_initramfs() {
	local r=$1
	[[ -L $r/usr/sbin/update-initramfs ]] && return
	in_root "$r" dpkg-divert --local --rename --divert /usr/sbin/update-initramfs.tbrdma \
		--add /usr/sbin/update-initramfs >/dev/null
	ln -sfn /bin/true "$r/usr/sbin/update-initramfs"
}

# sparse_probe ROOT — Debian's 7.x headers lack scripts/checker-valid.sh,
# which their Makefile runs before it lets C=1/C=2 use sparse; without it
# kbuild warns and checks nothing.  Supply one that answers as the
# kernel's does: 1 when the checker ("$@") parses __typeof_unqual__.
sparse_probe() {
	local d f
	for d in "$1"/usr/src/linux-headers-*; do
		[[ -f $d/Makefile ]] && grep -q 'scripts/checker-valid.sh' "$d/Makefile" || continue
		f=$d/scripts/checker-valid.sh
		[[ -e $f ]] && continue
		mkdir -p "${f%/*}"
		cat >"$f" <<'PROBE'
#!/bin/sh
# Added by tbrdma's tools/dist-root.sh: Debian's headers package does not
# ship this probe.  Prints 1 if the checker "$@" parses __typeof_unqual__.
command -v "$1" >/dev/null 2>&1 || { echo 0; exit 0; }
src=$(mktemp --suffix=.c)
trap 'rm -f "$src"' EXIT
printf 'static int f(const int *p)\n{\n\t__typeof_unqual__(*p) v = *p;\n\treturn v;\n}\n' >"$src"
if "$@" "$src" 2>&1 | grep -q error; then echo 0; else echo 1; fi
PROBE
		chmod 0755 "$f"
	done
}

# installed_kver ROOT — the release of the headers installed in ROOT (the
# one linux-headers-amd64 depends on).
installed_kver() {
	local d
	for d in "$1"/usr/src/linux-headers-*-amd64; do
		[[ -f $d/Makefile ]] && basename "$d"
	done | sed 's/^linux-headers-//' | sort -V | tail -n 1
}

fetch_dist() {
	local dist=$1 dir=$cache/$1 r key m kver t0=$SECONDS
	r=$dir/root
	key=$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-16)
	if [[ -f $r/.tbrdma-ready && $(cat "$r/.tbrdma-ready") == "$key" ]]; then
		sparse_probe "$r"
		echo "dist-root: $dist present ($(installed_kver "$r"), rdma-core $(rdma_core_version "$r"))"
		return
	fi
	[[ $(id -u) -eq 0 ]] || die "building the $dist root needs root (debootstrap, chroot)"
	command -v debootstrap >/dev/null || die "debootstrap is not installed (make deps)"
	m=$(mirror)
	if [[ ! -f $r/.tbrdma-base ]]; then
		echo "dist-root: debootstrap $dist from $m into $r"
		rm -rf "$r"
		mkdir -p "$dir"
		debootstrap --variant=minbase --components=main \
			--keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
			"$dist" "$r" "$m" >"$dir/debootstrap.log" 2>&1 ||
			{ tail -n 20 "$dir/debootstrap.log" >&2; die "debootstrap $dist failed (log: $dir/debootstrap.log)"; }
		# dpkg without fsync (a throw-away root: minutes saved), no
		# service started by a package, no recommended extras.  sid's
		# Release file says how long it is valid (a week); a mirror or
		# snapshot older than that is still what this machine gets.
		echo force-unsafe-io >"$r/etc/dpkg/dpkg.cfg.d/tbrdma-unsafe-io"
		printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
		chmod 0755 "$r/usr/sbin/policy-rc.d"
		printf '%s\n' 'APT::Install-Recommends "false";' 'APT::Install-Suggests "false";' \
			'Acquire::Check-Valid-Until "false";' >"$r/etc/apt/apt.conf.d/90tbrdma"
		echo "tbrdma-$dist" >"$r/etc/hostname"
		no_initramfs "$r"
		touch "$r/.tbrdma-base"
		echo "dist-root: $dist base in $((SECONDS - t0)) s"
	fi
	echo "dist-root: installing ${#packages[@]} packages into the $dist root"
	in_root "$r" apt-get update -q >"$dir/apt.log" 2>&1 &&
		in_root "$r" apt-get install -y -q "${packages[@]}" >>"$dir/apt.log" 2>&1 ||
		{ tail -n 20 "$dir/apt.log" >&2; die "apt-get install in the $dist root failed (log: $dir/apt.log)"; }
	kver=$(installed_kver "$r")
	[[ -n $kver && -f $r/boot/vmlinuz-$kver && -f $r/lib/modules/$kver/modules.dep ]] ||
		die "no kernel image with its headers in the $dist root (log: $dir/apt.log)"
	in_root "$r" apt-get clean
	sparse_probe "$r"
	echo "$key" >"$r/.tbrdma-ready"
	echo "dist-root: $dist ready in $((SECONDS - t0)) s: kernel $(installed_kver "$r"), rdma-core $(rdma_core_version "$r")"
}

rdma_core_version() {
	sed -n '/^Package: libibverbs1$/,/^$/s/^Version: //p' "$1/var/lib/dpkg/status" | head -n 1
}

# ready_root DIST — the root of DIST, or an error if it was never built.
ready_root() {
	check_dist "$1"
	[[ -f $cache/$1/root/.tbrdma-ready ]] ||
		die "no $1 root in $cache (tools/dist-root.sh fetch $1, or make deps DIST=$1)"
	echo "$cache/$1/root"
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
fetch)
	[[ $# -gt 0 ]] || die "usage: dist-root.sh fetch DIST..."
	for d in "$@"; do check_dist "$d"; done
	mkdir -p "$cache"
	# The releases side by side: mostly downloads and dpkg.  One builder
	# per root; another fetch of it waits and then finds it present.
	pids=()
	for d in "$@"; do
		(flock 9 && fetch_dist "$d") 9>"$cache/.$d.lock" &
		pids+=($!)
	done
	rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=$?; done
	exit "$rc"
	;;
root) [[ $# -eq 1 ]] || die "usage: dist-root.sh root DIST"; check_dist "$1"; echo "$cache/$1/root" ;;
kver)
	[[ $# -eq 1 ]] || die "usage: dist-root.sh kver DIST"
	r=$(ready_root "$1")
	installed_kver "$r"
	;;
kdir)
	[[ $# -eq 1 ]] || die "usage: dist-root.sh kdir DIST"
	r=$(ready_root "$1")
	echo "/usr/src/linux-headers-$(installed_kver "$r")"
	;;
rdma-core)
	[[ $# -eq 1 ]] || die "usage: dist-root.sh rdma-core DIST"
	rdma_core_version "$(ready_root "$1")"
	;;
run)
	[[ $# -ge 2 ]] || die "usage: dist-root.sh run DIST [--bind DIR]... [--] CMD..."
	r=$(ready_root "$1")
	shift
	while [[ $# -gt 0 ]]; do
		case $1 in
		--bind) binds+=("$(realpath -e "${2:?}")") || die "no directory $2"; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	[[ $# -gt 0 ]] || die "run: no command"
	in_root "$r" "$@"
	;;
list) echo "${dists[*]}" ;;
*) die "usage: dist-root.sh fetch DIST... | root DIST | kver DIST | kdir DIST | rdma-core DIST | run DIST [--bind DIR]... CMD... | list" ;;
esac
