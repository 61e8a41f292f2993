// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Thunderbolt part of `tbrdma status` on fake sysfs trees laid out like
 * the kernel's (drivers/thunderbolt, net/thunderbolt.c): domain, host
 * router with its generation, XDomain with rx/tx lanes and speeds, the
 * thunderbolt-net service, and its netdev.  Checks the parsing and the
 * "runs below what it can" rule (tools/admin/tbt_link.h) for a healthy
 * link, a single-lane one, a slow one, a TB5 domain with one slow cable,
 * asymmetric lanes, links the firmware does not describe, and netdevs that
 * are not Thunderbolt at all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "tbt_link.h"

static char root[PATH_MAX];

static void path_of(char *buf, const char *rel)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", root, rel) >= PATH_MAX)
		bail_out("path too long: %s", rel);
}

static void mkdirs(const char *rel)
{
	char path[PATH_MAX], *p;

	path_of(path, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			bail_out("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		bail_out("mkdir %s: %s", path, strerror(errno));
}

static void put(const char *rel, const char *content)
{
	char path[PATH_MAX];
	FILE *f;

	path_of(path, rel);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%s\n", content) < 0 || fclose(f))
		bail_out("write %s", path);
}

/* A symlink like sysfs's (absolute targets inside the fake root work the
 * same for realpath and readlink's last component). */
static void link_to(const char *rel, const char *target_rel)
{
	char path[PATH_MAX], target[PATH_MAX];

	path_of(path, rel);
	path_of(target, target_rel);
	unlink(path);
	if (symlink(target, path))
		bail_out("symlink %s: %s", path, strerror(errno));
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_root(void)
{
	if (root[0])
		nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	root[0] = '\0';
}

static void new_root(void)
{
	remove_root();
	snprintf(root, sizeof(root), "/tmp/tbrdma-tbt-XXXXXX");
	if (!mkdtemp(root))
		bail_out("mkdtemp");
	setenv("TBRDMA_SYSFS_ROOT", root, 1);
	mkdirs("sys/bus/thunderbolt/devices");
	mkdirs("sys/bus/thunderbolt/drivers/thunderbolt-net");
	mkdirs("sys/class/net");
}

struct fake_link {
	int domain;		/* domainN, host router N-0 */
	const char *xdomain;	/* "0-1" */
	const char *generation;	/* of the host router; NULL: no attribute */
	const char *rx_speed, *rx_lanes, *tx_speed, *tx_lanes;
	const char *netdev;	/* NULL: an XDomain without thunderbolt-net */
};

/* Lay out one host-to-host link the way the kernel does. */
static void add_link(const struct fake_link *l)
{
	char dom[128], router[192], xd[256], svc[320], rel[512], name[64];

	snprintf(dom, sizeof(dom), "sys/devices/pci0000:00/0000:00:0d.%d/domain%d",
		 l->domain, l->domain);
	snprintf(router, sizeof(router), "%s/%d-0", dom, l->domain);
	snprintf(xd, sizeof(xd), "%s/%s", router, l->xdomain);
	snprintf(svc, sizeof(svc), "%s/%s.0", xd, l->xdomain);
	mkdirs(svc);

	snprintf(rel, sizeof(rel), "%s/subsystem", router);
	link_to(rel, "sys/bus/thunderbolt");
	if (l->generation) {
		snprintf(rel, sizeof(rel), "%s/generation", router);
		put(rel, l->generation);
	}
	snprintf(rel, sizeof(rel), "%s/subsystem", xd);
	link_to(rel, "sys/bus/thunderbolt");
#define PUT_XD(attr, value) do { \
		snprintf(rel, sizeof(rel), "%s/" attr, xd); put(rel, value); \
	} while (0)
	PUT_XD("rx_speed", l->rx_speed);
	PUT_XD("rx_lanes", l->rx_lanes);
	PUT_XD("tx_speed", l->tx_speed);
	PUT_XD("tx_lanes", l->tx_lanes);
	PUT_XD("device_name", "node-b");
	PUT_XD("vendor_name", "Example Inc.");
#undef PUT_XD
	snprintf(rel, sizeof(rel), "%s/subsystem", svc);
	link_to(rel, "sys/bus/thunderbolt");

	snprintf(name, sizeof(name), "sys/bus/thunderbolt/devices/domain%d",
		 l->domain);
	link_to(name, dom);
	snprintf(name, sizeof(name), "sys/bus/thunderbolt/devices/%d-0",
		 l->domain);
	link_to(name, router);
	snprintf(name, sizeof(name), "sys/bus/thunderbolt/devices/%s",
		 l->xdomain);
	link_to(name, xd);
	snprintf(name, sizeof(name), "sys/bus/thunderbolt/devices/%s.0",
		 l->xdomain);
	link_to(name, svc);

	if (!l->netdev)
		return;
	snprintf(rel, sizeof(rel), "%s/driver", svc);
	link_to(rel, "sys/bus/thunderbolt/drivers/thunderbolt-net");
	snprintf(rel, sizeof(rel), "%s/net/%s", svc, l->netdev);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "%s/net/%s/device", svc, l->netdev);
	link_to(rel, svc);
	snprintf(name, sizeof(name), "sys/class/net/%s", l->netdev);
	snprintf(rel, sizeof(rel), "%s/net/%s", svc, l->netdev);
	link_to(name, rel);
}

/* A virtual netdev (veth): no device link at all. */
static void add_virtual_netdev(const char *name)
{
	char rel[256], cls[128];

	snprintf(rel, sizeof(rel), "sys/devices/virtual/net/%s", name);
	mkdirs(rel);
	snprintf(cls, sizeof(cls), "sys/class/net/%s", name);
	link_to(cls, rel);
}

/*
 * tests/fake-tbnet's stand-in: a platform device bound to a driver named
 * thunderbolt-net, not on the Thunderbolt bus.
 */
static void add_platform_tbnet(const char *name)
{
	char dev[128], rel[256], cls[128];

	mkdirs("sys/bus/platform/drivers/thunderbolt-net");
	snprintf(dev, sizeof(dev), "sys/devices/platform/faketb.%s", name);
	snprintf(rel, sizeof(rel), "%s/net/%s", dev, name);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "%s/subsystem", dev);
	link_to(rel, "sys/bus/platform");
	snprintf(rel, sizeof(rel), "%s/driver", dev);
	link_to(rel, "sys/bus/platform/drivers/thunderbolt-net");
	snprintf(rel, sizeof(rel), "%s/net/%s/device", dev, name);
	link_to(rel, dev);
	snprintf(cls, sizeof(cls), "sys/class/net/%s", name);
	snprintf(rel, sizeof(rel), "%s/net/%s", dev, name);
	link_to(cls, rel);
}

static int examine(const char *netdev, struct tbt_link *link)
{
	int err = tbt_link_find(netdev, link);

	if (!err)
		tbt_link_judge(link, tbt_domain_fastest_lane(link->domain));
	return err;
}

static void test_healthy_usb4(void)
{
	struct fake_link l = { 0, "0-1", "4", "20.0 Gb/s", "2", "20.0 Gb/s",
			       "2", "thunderbolt0" };
	struct tbt_link link;

	new_root();
	add_link(&l);
	is_int(examine("thunderbolt0", &link), 0, "USB4 link found");
	ok(!strcmp(link.xdomain, "0-1") && !strcmp(link.router, "0-0") &&
		   !strcmp(link.domain, "domain0") && link.generation == 4,
	   "XDomain, router, domain and generation read");
	ok(!strcmp(link.remote_name, "node-b") &&
		   !strcmp(link.remote_vendor, "Example Inc."),
	   "the remote host's name and vendor read");
	ok(link.rx.lanes == 2 && link.tx.lanes == 2 &&
		   link.rx.gbps_per_lane == 20 && link.tx.gbps_per_lane == 20,
	   "2 x 20 Gb/s each way");
	ok(link.expected_lanes == 2 && link.expected_gbps_per_lane == 20 &&
		   !link.below_capability && link.n_warnings == 0,
	   "a USB4 router's full speed: no warning");
}

static void test_single_lane(void)
{
	struct fake_link l = { 0, "0-1", "4", "20.0 Gb/s", "1", "20.0 Gb/s",
			       "1", "thunderbolt0" };
	struct tbt_link link;

	new_root();
	add_link(&l);
	examine("thunderbolt0", &link);
	ok(link.below_capability && link.n_warnings == 1 &&
		   strstr(link.warnings[0], "1 rx and 1 tx lane") &&
		   strstr(link.warnings[0], "cable"),
	   "one lane each way: warned, the cable named");
	diag("%s", link.warnings[0]);
}

static void test_slow_tb3(void)
{
	struct fake_link l = { 0, "0-1", "3", "10.0 Gb/s", "2", "10.0 Gb/s",
			       "2", "thunderbolt0" };
	struct tbt_link link;

	new_root();
	add_link(&l);
	examine("thunderbolt0", &link);
	ok(link.below_capability && link.n_warnings == 1 &&
		   strstr(link.warnings[0], "10 Gb/s per lane") &&
		   strstr(link.warnings[0], "20 Gb/s of this Thunderbolt 3"),
	   "10 Gb/s lanes on a Thunderbolt 3 router: warned");
	diag("%s", link.warnings[0]);
}

static void test_slow_and_single(void)
{
	struct fake_link l = { 0, "0-1", "4", "10.0 Gb/s", "1", "10.0 Gb/s",
			       "1", "thunderbolt0" };
	struct tbt_link link;

	new_root();
	add_link(&l);
	examine("thunderbolt0", &link);
	ok(link.n_warnings == 2, "slow and single-lane: both warnings");
}

static void test_tb5_domain(void)
{
	struct fake_link fast = { 0, "0-1", "4", "40.0 Gb/s", "2", "40.0 Gb/s",
				  "2", "thunderbolt0" };
	struct fake_link slow = { 0, "0-3", "4", "20.0 Gb/s", "2", "20.0 Gb/s",
				  "2", "thunderbolt1" };
	struct fake_link other = { 1, "1-1", "4", "20.0 Gb/s", "2",
				   "20.0 Gb/s", "2", "thunderbolt2" };
	struct tbt_link link;

	new_root();
	add_link(&fast);
	add_link(&slow);
	add_link(&other);
	examine("thunderbolt0", &link);
	ok(link.expected_gbps_per_lane == 40 && link.n_warnings == 0,
	   "TB5: the 2 x 40 Gb/s link is fine");
	examine("thunderbolt1", &link);
	ok(link.expected_gbps_per_lane == 40 && link.below_capability &&
		   link.n_warnings == 1 &&
		   strstr(link.warnings[0], "runs at 20 Gb/s per lane") &&
		   strstr(link.warnings[0], "40 Gb/s"),
	   "TB5: a 2 x 20 Gb/s link beside a 2 x 40 one is warned about");
	diag("%s", link.warnings[0]);
	examine("thunderbolt2", &link);
	ok(link.domain_fastest_gbps_per_lane == 20 &&
		   link.expected_gbps_per_lane == 20 && link.n_warnings == 0,
	   "a fast link in another domain raises no expectation here");
}

static void test_asymmetric(void)
{
	struct fake_link l = { 0, "0-1", "4", "40.0 Gb/s", "1", "40.0 Gb/s",
			       "3", "thunderbolt0" };
	struct tbt_link link;

	new_root();
	add_link(&l);
	examine("thunderbolt0", &link);
	ok(link.n_warnings == 0 && !link.below_capability,
	   "asymmetric USB4 v2 (3 lanes one way, 1 back) is not a lane problem");
}

static void test_not_reported(void)
{
	struct fake_link zero = { 0, "0-1", "3", "0.0 Gb/s", "0", "0.0 Gb/s",
				  "0", "thunderbolt0" };
	struct fake_link nogen = { 1, "1-1", NULL, "10.0 Gb/s", "1",
				   "10.0 Gb/s", "1", "thunderbolt1" };
	struct tbt_link link;

	new_root();
	add_link(&zero);
	add_link(&nogen);
	is_int(examine("thunderbolt0", &link), 0,
	       "link with unreported speed found");
	ok(link.rx.lanes == 0 && link.rx.gbps_per_lane == 0 &&
		   link.n_warnings == 0,
	   "firmware-managed link without speeds: nothing to judge");
	examine("thunderbolt1", &link);
	ok(link.generation == 0 && link.expected_lanes == 0 &&
		   link.n_warnings == 0,
	   "router without a generation: no expectation, no warning");
}

static void test_not_thunderbolt(void)
{
	struct fake_link l = { 0, "0-1", "4", "20.0 Gb/s", "2", "20.0 Gb/s",
			       "2", "thunderbolt0" };
	char names[8][IF_NAMESIZE];
	struct tbt_link link;
	size_t n;

	new_root();
	add_link(&l);
	add_virtual_netdev("veth0");
	add_platform_tbnet("faketb0");
	is_int(tbt_link_find("veth0", &link), -ENOENT, "veth: not Thunderbolt");
	is_int(tbt_link_find("nosuch0", &link), -ENOENT,
	       "missing netdev: not Thunderbolt");
	is_int(tbt_link_find("faketb0", &link), -ENOENT,
	       "thunderbolt-net driver off the Thunderbolt bus: no link info");
	n = tbt_netdevs(names, 8);
	ok(n == 2 && !strcmp(names[0], "faketb0") &&
		   !strcmp(names[1], "thunderbolt0"),
	   "Thunderbolt netdevs are those bound to thunderbolt-net, sorted");
}

static void test_parse_speed(void)
{
	double v = -1;

	ok(!tbt_parse_speed("20.0 Gb/s", &v) && v == 20, "\"20.0 Gb/s\"");
	ok(!tbt_parse_speed("40 Gb/s", &v) && v == 40, "\"40 Gb/s\"");
	ok(tbt_parse_speed("20.0Gb/s", &v) == -EINVAL &&
		   tbt_parse_speed("fast", &v) == -EINVAL &&
		   tbt_parse_speed("-1 Gb/s", &v) == -EINVAL &&
		   tbt_parse_speed("", &v) == -EINVAL &&
		   tbt_parse_speed("20 Mb/s", &v) == -EINVAL,
	   "anything else refused");
}

int main(void)
{
	plan(22);
	test_healthy_usb4();
	test_single_lane();
	test_slow_tb3();
	test_slow_and_single();
	test_tb5_domain();
	test_asymmetric();
	test_not_reported();
	test_not_thunderbolt();
	test_parse_speed();
	remove_root();
	return done();
}
