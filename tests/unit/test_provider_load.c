// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The built provider, loaded by the installed libibverbs 44, against a
 * fake sysfs tree: proves the library dlopen()s, its constructor
 * registers, and libibverbs' own matching (which reads our
 * verbs_device_ops and calls match_device() with its verbs_sysfs_dev)
 * picks exactly the devices we expect.  This checks our declared layouts
 * against the real binary without a kernel module.
 *
 * How: libibverbs honours $SYSFS_PATH for sysfs and $RDMAV_DRIVERS for an
 * extra provider, but also stat()s /dev/infiniband/uverbsN, so the test
 * enters a private mount namespace and puts a tmpfs on /dev.  Skipped when
 * that is not possible (not root, no namespaces) and when the kernel has
 * RDMA netlink (libibverbs would list the real devices instead).
 *
 * TBRDMA_PROVIDER_DIR (compile-time) is the directory holding
 * libtbrdma-rdmav34.so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "../../provider/rdma-core-private.h"
#include "../../uapi/tbrdma-abi.h"

#ifndef TBRDMA_PROVIDER_DIR
#error "build with -DTBRDMA_PROVIDER_DIR=\"/abs/path/to/provider\""
#endif

#ifndef NETLINK_RDMA
#define NETLINK_RDMA 20
#endif

static char root[PATH_MAX];

/* Our ABI version as sysfs shows it, so the cases follow the macro. */
#define STR_(x) #x
#define STR(x) STR_(x)
#define OUR_VER_ATTR STR(TBRDMA_UVERBS_ABI_VERSION) "\n"

/* snprintf into a PATH_MAX buffer; a truncated path is a setup error. */
static __attribute__((format(printf, 2, 3))) void
pathf(char *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX)
		bail_out("path too long: %s", fmt);
}

static void put(const char *dir, const char *name, const char *data)
{
	char path[PATH_MAX];
	FILE *f;

	pathf(path, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(data, f) < 0 || fclose(f))
		bail_out("write %s: %s", path, strerror(errno));
}

static void mkdir_or_die(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		bail_out("mkdir %s: %s", path, strerror(errno));
}

/*
 * One uverbs device as libibverbs' sysfs scan sees it:
 *   class/infiniband_verbs/uverbsN/{ibdev,dev,abi_version}
 *   class/infiniband/<ibdev>/{node_type,node_guid[,tbrdma_abi_version]}
 *   /dev/infiniband/uverbsN (only stat()ed)
 */
static void fake_device(int n, const char *ibdev, unsigned int uverbs_abi,
			const char *attr)
{
	char uv[PATH_MAX], ib[PATH_MAX], buf[64];

	pathf(uv, "%s/class/infiniband_verbs/uverbs%d", root, n);
	mkdir_or_die(uv);
	snprintf(buf, sizeof(buf), "%s\n", ibdev);
	put(uv, "ibdev", buf);
	snprintf(buf, sizeof(buf), "231:%d\n", 192 + n);
	put(uv, "dev", buf);
	snprintf(buf, sizeof(buf), "%u\n", uverbs_abi);
	put(uv, "abi_version", buf);

	pathf(ib, "%s/class/infiniband/%s", root, ibdev);
	mkdir_or_die(ib);
	put(ib, "node_type", "1: CA\n");
	snprintf(buf, sizeof(buf), "0000:0000:0000:%04x\n", n);
	put(ib, "node_guid", buf);
	if (attr)
		put(ib, TBRDMA_SYSFS_ABI_ATTR, attr);

	snprintf(buf, sizeof(buf), "/dev/infiniband/uverbs%d", n);
	put("/", buf + 1, "");
}

static void enter_private_dev(void)
{
	int fd;

	if (geteuid() != 0)
		skip_all("needs root for a private mount namespace");
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd >= 0) {
		close(fd);
		skip_all("kernel has RDMA netlink; fake sysfs would be ignored");
	}
	if (unshare(CLONE_NEWNS))
		skip_all("unshare(CLONE_NEWNS): %s", strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		skip_all("make / private: %s", strerror(errno));
	if (mount("tbrdma-test", "/dev", "tmpfs", MS_NOSUID, "mode=0755"))
		skip_all("tmpfs on /dev: %s", strerror(errno));
	mkdir_or_die("/dev/infiniband");
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb; (void)flag; (void)ftw;
	return remove(path);
}

static struct ibv_device *find(struct ibv_device **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

static const char *provider_of(struct ibv_device *dev)
{
	return dev ? verbs_get_device(dev)->ops->name : NULL;
}

int main(void)
{
	struct ibv_device **list, *dev;
	char path[PATH_MAX], want[PATH_MAX], newer[32];
	int num = -1;

	enter_private_dev();

	/* Safe to build the tree only now: /tmp is untouched by the tmpfs. */
	pathf(root, "%s/tbrdma-load-XXXXXX",
	      getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		bail_out("mkdtemp: %s", strerror(errno));
	pathf(path, "%s/class", root);
	mkdir_or_die(path);
	pathf(path, "%s/class/infiniband", root);
	mkdir_or_die(path);
	pathf(path, "%s/class/infiniband_verbs", root);
	mkdir_or_die(path);
	/* The global uverbs ABI libibverbs insists on (3..6). */
	put(path, "abi_version", "6\n");

	snprintf(newer, sizeof(newer), "%d\n", TBRDMA_UVERBS_ABI_VERSION + 1);
	fake_device(0, "tbrdma0", TBRDMA_UVERBS_ABI_VERSION, OUR_VER_ATTR);
	fake_device(1, "roce_renamed", TBRDMA_UVERBS_ABI_VERSION, OUR_VER_ATTR);
	fake_device(2, "tbrdma_newabi", TBRDMA_UVERBS_ABI_VERSION, newer);
	fake_device(3, "tbrdma_junk", TBRDMA_UVERBS_ABI_VERSION, "junk\n");
	fake_device(4, "tbrdma_noattr", TBRDMA_UVERBS_ABI_VERSION, NULL);
	/* Attribute fine but uverbs ABI outside our min..max: libibverbs'
	 * own range check must reject it (it prints a warning). */
	fake_device(5, "tbrdma_uverbs2", TBRDMA_UVERBS_ABI_VERSION + 1,
		    OUR_VER_ATTR);
	fake_device(6, "rxe0", 2, NULL);

	setenv("SYSFS_PATH", root, 1);
	setenv("RDMAV_DRIVERS", TBRDMA_PROVIDER_DIR "/libtbrdma", 1);

	plan(NO_PLAN);
	diag("fake sysfs %s, provider %s/libtbrdma-rdmav%d.so", root,
	     TBRDMA_PROVIDER_DIR, RDMA_CORE_PABI_VERSION);

	diag("libibverbs will warn that tbrdma does not support kernel ABI %d"
	     " for tbrdma_uverbs2: that rejection is tested below",
	     TBRDMA_UVERBS_ABI_VERSION + 1);
	list = ibv_get_device_list(&num);
	if (!ok(list != NULL, "ibv_get_device_list"))
		bail_out("no device list: %s", strerror(errno));

	dev = find(list, "tbrdma0");
	is_str(provider_of(dev), TBRDMA_DRIVER_NAME,
	       "tbrdma0 claimed by the tbrdma provider (library loaded)");
	pathf(want, "%s/class/infiniband/tbrdma0", root);
	is_str(dev ? verbs_get_device(dev)->sysfs->ibdev_path : NULL, want,
	       "verbs_sysfs_dev.ibdev_path where our header says");
	is_str(dev ? dev->dev_name : NULL, "uverbs0", "ibv_device filled in");
	ok(dev && verbs_get_device(dev)->sysfs->abi_ver ==
			  TBRDMA_UVERBS_ABI_VERSION,
	   "verbs_sysfs_dev.abi_ver where our header says");

	is_str(provider_of(find(list, "roce_renamed")), TBRDMA_DRIVER_NAME,
	       "renamed device matched by attribute, not name");
	ok(!find(list, "tbrdma_newabi"), "other tbrdma ABI not listed");
	ok(!find(list, "tbrdma_junk"), "malformed attribute not listed");
	ok(!find(list, "tbrdma_noattr"), "no attribute, not listed");
	ok(!find(list, "tbrdma_uverbs2"),
	   "uverbs ABI outside match_min..max not listed");

	/* rxe0 goes to librxe when Debian's providers are installed; it must
	 * never be ours. */
	dev = find(list, "rxe0");
	ok(!dev || strcmp(provider_of(dev), TBRDMA_DRIVER_NAME),
	   "rxe-like device not claimed by tbrdma (%s)",
	   dev ? provider_of(dev) : "unclaimed");

	ibv_free_device_list(list);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return done();
}
