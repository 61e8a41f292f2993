# tbrdma top-level build.  `make` builds the module, the provider and the
# tools; `make check` runs every test; `make demo` shows it working.

# The kernel to build against: the running kernel's build dir when it has
# one, else Debian 12's 6.1 headers (linux-headers-amd64).
newest = $(lastword $(sort $(wildcard $(1))))
KDIR_6_1  ?= $(call newest,/usr/src/linux-headers-6.1.*-amd64)
KDIR_6_12 ?= $(call newest,/usr/src/linux-headers-6.12.*-amd64)
KDIR ?= $(if $(wildcard /lib/modules/$(shell uname -r)/build/Makefile),\
	/lib/modules/$(shell uname -r)/build,$(KDIR_6_1))

# Scratch space for builds against other kernels; the tree stays clean.
BUILD ?= $(CURDIR)/build

KBUILD_SOURCES = Kbuild $(wildcard kmod/*.[ch]) $(wildcard uapi/*.h)

.PHONY: all module provider test-progs bench clean deps check unit-tests \
	module-6.12 sparse checkpatch guest-tests demo install uninstall

all: module provider

module:
	@test -n "$(KDIR)" || { echo "no kernel headers: run 'make deps'" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

provider:
	$(MAKE) -C provider

# Programs the guest selftests run.
test-progs:
	$(MAKE) -C tests/progs

# Build a copy of the module sources against another kernel in $(BUILD).
# Usage: $(call kbuild_copy,NAME,KDIR)
define kbuild_copy
	rm -rf $(BUILD)/$(1) && mkdir -p $(BUILD)/$(1)
	cp -r --parents $(KBUILD_SOURCES) $(BUILD)/$(1)/
	$(MAKE) -C $(2) M=$(BUILD)/$(1) modules
endef

module-6.12:
	@test -n "$(KDIR_6_12)" || { echo "no 6.12 headers: run 'make deps'" >&2; exit 1; }
	$(call kbuild_copy,linux-6.12,$(KDIR_6_12))

# sparse on every module source (C=2 checks files even when up to date).
sparse:
	tests/host/run-sparse.sh $(KDIR)

checkpatch:
	tests/host/run-checkpatch.sh

deps:
	tools/install-deps.sh

# Host-side tests: the C unit tests and the tests of our test scripts, all
# judged by one TAP runner.
unit-tests:
	$(MAKE) -C tests/unit check EXTRA_TESTS="$(abspath \
		$(wildcard tests/host/test-*.sh tests/vm/test-*.sh))"

print-%:
	@echo $($*)

guest-tests: module provider test-progs
	tests/vm/run-vm.sh

check: deps
	tests/check.sh

demo: deps all test-progs
	TBRDMA_SELFTEST_DIR=$(CURDIR)/tests/demo tests/vm/run-vm.sh

# Benchmarks: ratios against rdma_rxe in the same guest, never a test.
bench: deps all test-progs
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/bench/kcopy modules
	TBRDMA_SELFTEST_DIR=$(CURDIR)/tests/bench tests/vm/run-vm.sh --timeout 5400

# The module goes to updates/ so it wins over any in-tree module of the name.
# depmod runs for real installs only; a DESTDIR staging tree gets it later
# from its package's postinst.
# The release the headers are for (Debian's kernel.release holds only the
# upstream version, utsrelease.h the real one, e.g. 6.1.0-56-amd64).
KVER = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)
MODDIR = $(DESTDIR)/lib/modules/$(KVER)/updates

install: all
	install -D -m 0644 tbrdma.ko $(MODDIR)/tbrdma.ko
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C provider install

uninstall:
	rm -f $(MODDIR)/tbrdma.ko
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C provider uninstall

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/bench/kcopy clean
	-$(MAKE) -C provider clean
	-$(MAKE) -C tests/unit clean
	-$(MAKE) -C tests/progs clean
	rm -rf $(BUILD)
