# tbrdma top-level build.  `make` builds the module, the provider and the
# tools; `make check` runs every test; `make demo` shows it working.

# The kernel to build against: the running kernel's build dir when it has
# one, else Debian 12's 6.1 headers from the project's kernel cache
# (tools/kernel-cache.sh; `make deps` fills it).  Read once per make, when
# the Makefile is parsed: the targets that install the cache first (demo,
# check, bench, soak, check-debug) run their builds in a make of their own,
# started after it.
ifeq ($(origin KDIR_6_1),undefined)
KDIR_6_1 := $(shell tools/kernel-cache.sh kdir 6.1)
endif
ifeq ($(origin KDIR_6_12),undefined)
KDIR_6_12 := $(shell tools/kernel-cache.sh kdir 6.12)
endif
KDIR ?= $(if $(wildcard /lib/modules/$(shell uname -r)/build/Makefile),\
	/lib/modules/$(shell uname -r)/build,$(KDIR_6_1))

# Scratch space for builds against other kernels; the tree stays clean.
BUILD ?= $(CURDIR)/build

KBUILD_SOURCES = Kbuild $(wildcard kmod/*.[ch]) $(wildcard uapi/*.h)

.PHONY: all module provider test-progs bench clean deps check unit-tests \
	module-6.12 modules-for sparse checkpatch guest-tests demo install uninstall soak \
	check-debug deps-demo demo-run soak-run check-debug-run bench-run distclean \
	check-cluster check-triangle

all: module provider runner tools

# kbuild walks the kernel's build tree even when nothing changed: 1.5 s
# here, most of a minute in the TCG test guest (its `make` and `make
# install` tests).  A stamp per kernel tree runs it only when a source or
# the kernel's configuration is newer, tbrdma.ko is missing, or C= or W=
# asks kbuild itself for checks.
# A kbuild run in this tree for another kernel (`make sparse KDIR=...` of
# another release) leaves a tbrdma.ko the stamp cannot see: compare the
# module's release with KDIR's too.
MODULE_STAMP = $(BUILD)/.module-$(notdir $(realpath $(KDIR)))
KDIR_RELEASE = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
KO_RELEASE = $(firstword $(shell modinfo -F vermagic tbrdma.ko 2>/dev/null))
module: $(MODULE_STAMP)
$(MODULE_STAMP): $(KBUILD_SOURCES) \
		$(wildcard $(KDIR)/Module.symvers $(KDIR)/include/config/auto.conf) \
		$(if $(wildcard tbrdma.ko),,FORCE) $(if $(C)$(W),FORCE) \
		$(if $(filter-out $(KDIR_RELEASE),$(KO_RELEASE)),FORCE)
	@test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps'" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules
	@mkdir -p $(@D) && touch $@

.PHONY: FORCE
FORCE:

provider:
	$(MAKE) -C provider

# tools/tbrdma, the admin tool (Documentation/admin-guide.md, tbrdma(8)).
.PHONY: tools
tools:
	$(MAKE) -C tools/admin

# tools/tprun, the tensor-parallel runner (Documentation/runner.md).
.PHONY: runner
runner:
	$(MAKE) -C tools/runner

# Programs the guest selftests run, and the fake thunderbolt-net module.
test-progs:
	$(MAKE) -C tests/progs
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/fake-tbnet modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kfastreg modules

# Build a copy of the module sources against another kernel in $(BUILD).
# Usage: $(call kbuild_copy,NAME,KDIR).  Sources are copied when newer, so
# kbuild rebuilds only what changed (a fresh copy each time cost a full
# build, about a minute, in every make check).
define kbuild_copy
	mkdir -p $(BUILD)/$(1)
	cp -u --parents $(KBUILD_SOURCES) $(BUILD)/$(1)/
	$(MAKE) -C $(2) M=$(BUILD)/$(1) modules
endef

module-6.12:
	@test -n "$(KDIR_6_12)" || { echo "no 6.12 headers: run 'make deps'" >&2; exit 1; }
	$(call kbuild_copy,linux-6.12,$(KDIR_6_12))

# Every module the guest tests load (tbrdma.ko and the test modules), built
# for another installed kernel FOR_KVER (a release such as
# 6.12.117+deb12-rt-amd64) in $(BUILD)/kmods/FOR_KVER, laid out as in the
# tree.  tests/vm/run-vm.sh makes it when it boots a kernel the tree's own
# build is not for.  Sources are copied when newer, so kbuild rebuilds only
# what changed.
KMOD_TEST_DIRS = tests/fake-tbnet tests/kfastreg tests/bench/kcopy
KMOD_TEST_SOURCES = $(foreach d,$(KMOD_TEST_DIRS),$(d)/Kbuild $(wildcard $(d)/*.c))
modules-for:
	@kdir=$$(tools/kernel-cache.sh kdir "$(FOR_KVER)") || \
		{ echo "modules-for: no headers for kernel '$(FOR_KVER)' in the kernel cache (FOR_KVER=release)" >&2; exit 1; }; \
	set -ex; \
	mkdir -p $(BUILD)/kmods/$(FOR_KVER); \
	cp -u --parents $(KBUILD_SOURCES) $(KMOD_TEST_SOURCES) $(BUILD)/kmods/$(FOR_KVER)/; \
	$(MAKE) -C $$kdir M=$(BUILD)/kmods/$(FOR_KVER) modules; \
	for d in $(KMOD_TEST_DIRS); do \
		$(MAKE) -C $$kdir M=$(BUILD)/kmods/$(FOR_KVER)/$$d modules; \
	done

# ---- Other Debian releases: DIST=trixie (Debian 13) or DIST=sid -------------
# Each release has a root in the project's cache (tools/dist-root.sh; `make
# deps DIST=...` builds it from Debian's archive): its kernel and headers,
# its compiler, its rdma-core.  A copy of the tree (build/dist/DIST/tree,
# tools/tree-copy.sh) is built inside it -- the module for its kernel with
# the compiler its headers ask for, the provider against its libibverbs --
# and is what that release's guest runs (run-vm.sh --dist DIST).
DIST ?=
KNOWN_DISTS := $(shell tools/dist-root.sh list)
DIST_TREE = $(BUILD)/dist/$(DIST)/tree
# $(call in_dist,COMMAND): COMMAND inside DIST's root, the copy of the tree
# visible at its own path.
in_dist = tools/dist-root.sh run $(DIST) --bind $(DIST_TREE) -- $(1)
comma := ,
.PHONY: dist-build dist-sparse dist-unit-tests check-dist-name
check-dist-name:
	@test -n "$(filter $(DIST),$(KNOWN_DISTS))" -a -n "$(DIST)" || \
		{ echo "DIST must be one of: $(KNOWN_DISTS)" >&2; exit 2; }

dist-build: check-dist-name
	tools/tree-copy.sh $(DIST_TREE)
	$(call in_dist,make -C $(DIST_TREE) -j2 all test-progs KDIR=$$(tools/dist-root.sh kdir $(DIST)))

# sparse on the module against DIST's kernel, with DIST's sparse.
dist-sparse: dist-build
	$(call in_dist,$(DIST_TREE)/tests/host/run-sparse.sh $$(tools/dist-root.sh kdir $(DIST)) $(DIST_TREE))

# The provider's ABI tests against DIST's libibverbs (the layouts declared
# for its rdma-core release, checked against its binary).
DIST_UNIT_TESTS = test_provider_abi test_provider_ops test_provider_load \
	test_provider_match test_wqe test_fastpath test_wr_api test_queue
dist-unit-tests: dist-build
	$(call in_dist,make -C $(DIST_TREE)/tests/unit check ONLY="$(DIST_UNIT_TESTS)")

# sparse on every module source (C=2 checks files even when up to date).
sparse:
	tests/host/run-sparse.sh $(KDIR)

checkpatch:
	tests/host/run-checkpatch.sh

deps:
	tools/install-deps.sh $(if $(DIST),--dist $(DIST))

# What `make demo` needs only: the 6.1 kernel (or DIST's root), no npm packages.
deps-demo:
	tools/install-deps.sh --demo $(if $(DIST),--dist $(DIST))

# What `make deb` needs: the packaging tools and the build dependencies
# (or DIST's root, which has them).
deps-deb:
	tools/install-deps.sh --deb $(if $(DIST),--dist $(DIST))

# Host-side tests: the C unit tests and the tests of our test scripts, all
# judged by one TAP runner.
unit-tests:
	$(MAKE) -C tests/unit check EXTRA_TESTS="$(abspath \
		$(wildcard tests/host/test-*.sh tests/vm/test-*.sh))"

# tprun against llama.cpp (tests/llama-ref, installed by `make deps`):
# the same prompt tokens and greedy tokens for every exported weight type,
# over 1, 2 and 4 ranks (TCP on the host; the types of issues 41 and 42
# over 1 and 4 in `make check`, all three with llama-ref-full); the
# architectures of issue 41 on 1 and 3 ranks (Q8_0 and Q4_K on 1-4), those
# of issue 42 (deepseek2, gpt-oss) on 1-4 in every type; llama-ref-full
# runs every architecture and type on 1-4 ranks.
.PHONY: llama-ref llama-ref-full
llama-ref: runner
	tests/llama-ref/compare.sh --save-ref build/llama-ref
llama-ref-full: runner
	tests/llama-ref/compare.sh --save-ref build/llama-ref --newer-ranks '1 2 4' --archs-full

# The compute table alone (tprun against llama.cpp, host only); that of
# the weight types of issues 41 and 42.
.PHONY: bench-compute bench-compute-types bench-compute-moe bench-compute-giants
bench-compute: runner
	tests/llama-ref/bench-compute.sh
bench-compute-types: runner
	tests/llama-ref/bench-compute.sh --shapes small --types newer --threads 1
bench-compute-moe: runner
	tests/llama-ref/bench-compute.sh --shapes 'qwen3moe glm4moe' --types 'q8_0 q4_k'
bench-compute-giants: runner
	tests/llama-ref/bench-compute.sh --shapes deepseek2 --types 'q8_0 q4_k'
	tests/llama-ref/bench-compute.sh --shapes gpt-oss --types 'q8_0 q4_k mxfp4'

print-%:
	@echo $($*)

guest-tests: module provider test-progs runner
	tests/vm/run-vm.sh

# Two guests, each its own kernel, on a virtual cable: every cluster test
# (tests/cluster; Documentation/testing.md).  make check runs them too.
check-cluster: module provider test-progs runner
	tests/vm/run-cluster.sh

# Three guests in a triangle (a cable between each pair, two per guest):
# tprun with a rank per guest over the device of each cable, and a rank
# lost (tests/cluster/40-tprun.sh).
check-triangle: module provider test-progs runner
	tests/vm/run-cluster.sh --nodes 3 --timeout 900 40-tprun.sh

check: deps
	tests/check.sh

# The builds run in a make started after the dependencies are in: this
# make read KDIR before `make deps` had unpacked any headers.
# DIST=trixie|sid: the demo in that release's guest (run-vm.sh builds the
# tree in its root).
demo: deps-demo
	$(MAKE) demo-run
demo-run: $(if $(DIST),check-dist-name,all test-progs)
	TBRDMA_SELFTEST_DIR=$(CURDIR)/tests/demo tests/vm/run-vm.sh $(if $(DIST),--dist $(DIST))

# The soak (issue 7; not in `make check`): >= 10 minutes of 1024 QPs with
# netem faults, then delete, unload and slab counts back to their start.
# The knobs reach the guest through a generated wrapper (the host's
# environment does not).  Documentation/testing.md has the last result.
SOAK_SECS ?= 600
SOAK_INSTANCES ?= 4
SOAK_OPS ?= 40000
SOAK_SEED ?= 1
# Then the full-size loss matrix (231-net-loss.sh, TBR_LOSS_FULL=1); 0: not.
SOAK_LOSS ?= 1
# Then UCX's whole matrix (170-ucx, 290-net-ucx with TBR_UCX_FULL=1); 0: not.
SOAK_CLIENTS ?= 1
soak: deps
	$(MAKE) soak-run
soak-run: all test-progs
	@d=$$(mktemp -d /var/tmp/tbrdma-soak.XXXXXX) && \
	printf '%s\n' '#!/bin/bash' '# timeout: $(shell echo $$(($(SOAK_SECS) * 2 + 900)))' \
		'export SOAK_SECS=$(SOAK_SECS) SOAK_INSTANCES=$(SOAK_INSTANCES)' \
		'export SOAK_OPS=$(SOAK_OPS) SOAK_SEED=$(SOAK_SEED)' \
		'exec bash "$$TBRDMA_ROOT/tests/soak/10-soak.sh"' >$$d/10-soak.sh && \
	if [ "$(SOAK_LOSS)" != 0 ]; then \
		printf '%s\n' '#!/bin/bash' '# timeout: 7200' 'export TBR_LOSS_FULL=1' \
			'exec bash "$$TBRDMA_ROOT/tests/selftests/231-net-loss.sh"' >$$d/20-loss.sh; \
	fi && \
	if [ "$(SOAK_CLIENTS)" != 0 ]; then \
		for t in 170-ucx 290-net-ucx; do \
			printf '%s\n' '#!/bin/bash' '# timeout: 1500' 'export TBR_UCX_FULL=1' \
				"exec bash \"\$$TBRDMA_ROOT/tests/selftests/$$t.sh\"" >$$d/30-$$t.sh; \
		done; \
	fi && \
	TBRDMA_SELFTEST_DIR=$$d tests/vm/run-vm.sh --timeout $$(($(SOAK_SECS) * 2 + 1200 + $(SOAK_LOSS) * 7200 + $(SOAK_CLIENTS) * 3000)); \
	rc=$$?; rm -rf $$d; exit $$rc

# Every selftest on a debug kernel (KASAN, lockdep, kmemleak,
# DEBUG_ATOMIC_SLEEP) built once from linux-source-6.1 and cached in
# ~/.cache/tbrdma, then a kmemleak scan.  Not in `make check`: the first
# build takes about an hour here.  See Documentation/testing.md.
check-debug: deps
	$(MAKE) check-debug-run
check-debug-run: all test-progs
	tests/debug-kernel/check-debug.sh

# Benchmarks: ratios against rdma_rxe in the same guest, never a test;
# first, on the host, tprun's compute against llama.cpp's on the same cores
# and the runner's memory per rank on a 515 MB model, 1, 2 and 4 ranks and
# two under a 60 % memory cgroup (Documentation/benchmarks.md).
bench: deps
	$(MAKE) bench-run
bench-run: all test-progs
	tests/llama-ref/bench-compute.sh
	tests/llama-ref/bench-compute.sh --shapes small --types newer --threads 1
	tests/llama-ref/bench-compute.sh --shapes 'qwen3moe glm4moe' --types 'q8_0 q4_k'
	tests/llama-ref/bench-compute.sh --shapes deepseek2 --types 'q8_0 q4_k'
	tests/llama-ref/bench-compute.sh --shapes gpt-oss --types 'q8_0 q4_k mxfp4'
	tests/host/bench-tprun-memory.sh $(BUILD)/bench-memory
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/bench/kcopy modules
	TBRDMA_SELFTEST_DIR=$(CURDIR)/tests/bench tests/vm/run-vm.sh --timeout 5400
	TBRDMA_CLUSTER_DIR=$(CURDIR)/tests/bench/cluster tests/vm/run-cluster.sh \
		--timeout 5400 --test-timeout 5400

# The module goes to updates/ so it wins over any in-tree module of the name.
# depmod runs for real installs only; a DESTDIR staging tree gets it later
# from its package's postinst.
# The release the headers are for (Debian's kernel.release holds only the
# upstream version, utsrelease.h the real one, e.g. 6.1.0-56-amd64).
KVER = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)
MODDIR = $(DESTDIR)/lib/modules/$(KVER)/updates

# The provider always goes to Debian's libibverbs directory (the only one
# libibverbs searches) with /etc/libibverbs.d/tbrdma.driver; PREFIX
# (default /usr/local) places the tools and the man page.
PREFIX  ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
# dkms.conf holds the package's one version.
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

.PHONY: install-module install-userspace uninstall-module uninstall-userspace \
	dkms-source dkms-install dkms-remove

install: install-module install-userspace

install-module: module
	install -D -m 0644 tbrdma.ko $(MODDIR)/tbrdma.ko
	$(if $(DESTDIR),,depmod -a $(KVER))

# Everything but the module (dkms-install installs the module its own way).
install-userspace: provider tools runner
	$(MAKE) -C provider install PREFIX=/usr
	install -D -m 0755 tools/tbrdma $(DESTDIR)$(SBINDIR)/tbrdma
	install -D -m 0755 tools/tprun $(DESTDIR)$(BINDIR)/tprun
	install -D -m 0644 Documentation/tbrdma.8 $(DESTDIR)$(MANDIR)/man8/tbrdma.8

uninstall: uninstall-module uninstall-userspace

uninstall-module:
	rm -f $(MODDIR)/tbrdma.ko
	$(if $(DESTDIR),,depmod -a $(KVER))

uninstall-userspace:
	$(MAKE) -C provider uninstall PREFIX=/usr
	rm -f $(DESTDIR)$(SBINDIR)/tbrdma $(DESTDIR)$(BINDIR)/tprun \
		$(DESTDIR)$(MANDIR)/man8/tbrdma.8

# DKMS (Debian's dkms package) rebuilds the module for every kernel
# installed later.  dkms-source copies what dkms builds from -- the same
# files as the 6.12 build copy, plus dkms.conf -- to DKMS_SOURCE (the host
# tests point it at a scratch directory).  dkms-install replaces a module
# `make install` put in updates/, which would otherwise shadow dkms's copy.
DKMS_SOURCE ?= /usr/src/tbrdma-$(VERSION)

dkms-source:
	@test -n "$(VERSION)" || { echo "no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	rm -rf $(DKMS_SOURCE)
	mkdir -p $(DKMS_SOURCE)
	cp --parents $(KBUILD_SOURCES) dkms.conf $(DKMS_SOURCE)/

dkms-install: install-userspace
	@test -z "$(DESTDIR)" || { echo "dkms installs into the live system: no DESTDIR" >&2; exit 1; }
	$(MAKE) dkms-source DKMS_SOURCE=/usr/src/tbrdma-$(VERSION)
	-dkms remove tbrdma/$(VERSION) --all >/dev/null 2>&1
	rm -f /lib/modules/$(KVER)/updates/tbrdma.ko
	dkms add tbrdma/$(VERSION)
	dkms build tbrdma/$(VERSION) -k $(KVER)
	dkms install tbrdma/$(VERSION) -k $(KVER)

dkms-remove:
	@test -z "$(DESTDIR)" || { echo "dkms installs into the live system: no DESTDIR" >&2; exit 1; }
	-dkms remove tbrdma/$(VERSION) --all
	rm -rf /usr/src/tbrdma-$(VERSION)

# Debian packages (Documentation/admin-guide.md): tbrdma-dkms (the module's
# sources, built by DKMS on the user's machine), tbrdma-provider (the
# libibverbs provider where libibverbs finds it, with its .driver file) and
# tbrdma-tools (tbrdma(8), tprun(1)), version from dkms.conf.  Built with
# dpkg-buildpackage from a copy of the tree's sources in $(DEB_DIR), where
# tools/debian becomes debian/; then lintian, which must find no error
# and no warning.
# DIST=trixie|sid: built inside that release's root (its compiler, its
# libibverbs, its debhelper and lintian), into the copy of the tree its
# guest runs (build/dist/DIST/tree/build/deb).  `make deb` first installs
# what it needs (deps-deb), as `make demo` does.
DEB_DIR = $(if $(DIST),$(DIST_TREE)/build/deb,$(BUILD)/deb)
DEB_SRC = $(DEB_DIR)/tbrdma-$(VERSION)
# $(call deb_sh,COMMAND): COMMAND by sh, in DIST's root if DIST is set.
deb_sh = $(if $(DIST),$(call in_dist,sh -c '$(1)'),sh -c '$(1)')
.PHONY: deb deb-run deps-deb check-packages
deb: deps-deb
	$(MAKE) deb-run
deb-run: $(if $(DIST),check-dist-name)
	@test -n "$(VERSION)" || { echo "no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	git ls-files -z --cached --others --exclude-standard -- Makefile Kbuild \
		dkms.conf kmod uapi provider tools Documentation | \
		xargs -0 cp --parents -t $(DEB_SRC)
	mv $(DEB_SRC)/tools/debian $(DEB_SRC)/debian
	sed -i 's/#VERSION#/$(VERSION)/g' $(DEB_SRC)/debian/*.postinst $(DEB_SRC)/debian/*.prerm
	printf '%s\n' "tbrdma ($(VERSION)) unstable; urgency=medium" "" \
		"  * Built from the tbrdma tree at $$(git describe --always --dirty 2>/dev/null || echo unknown)." "" \
		" -- tbrdma developers <tbrdma@example.org>  $$(git log -1 --format=%aD 2>/dev/null || date -R)" \
		>$(DEB_SRC)/debian/changelog
	$(call deb_sh,cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc >../build.log 2>&1) || \
		{ tail -40 $(DEB_DIR)/build.log; exit 1; }
	$(call deb_sh,lintian --fail-on error$(comma)warning $(DEB_DIR)/tbrdma_$(VERSION)_*.changes)
	@ls $(DEB_DIR)/*.deb

# The packages installed, used and removed in the stock 6.1 guest (dpkg -i,
# DKMS, modprobe, ibv_devinfo, ibv_rc_pingpong, dpkg -r), alone; `make
# check` runs it after the selftests.
check-packages: $(if $(DIST),deps-deb,deps)
	$(MAKE) deb-run
	TBRDMA_SELFTEST_DIR=$(CURDIR)/tests/packages tests/vm/run-vm.sh --timeout 1800 \
		$(if $(DIST),--dist $(DIST))

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f $(BUILD)/.module-*
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/bench/kcopy clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/fake-tbnet clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kfastreg clean
	-$(MAKE) -C provider clean
	-$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/progs clean
	-$(MAKE) -C tools/runner clean
	-$(MAKE) -C tools/admin clean
	rm -rf $(BUILD)

# Also what `make deps` put into the tree and the user's cache: the
# unpacked kernels, the guest's initramfs and vmlinux, the npm packages.
# (The Debian packages it installed stay: `apt-get autoremove` is yours.)
distclean: clean
	rm -rf "$$(tools/kernel-cache.sh root)" "$${XDG_CACHE_HOME:-$$HOME/.cache}/tbrdma"
	rm -rf tests/llama-ref/node_modules tests/llama-ref/runtime tests/serve-client/node_modules
