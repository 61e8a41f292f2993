// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sysfs.h"
#include "tbt_link.h"

/* Nominal per-lane speeds (Gb/s) of the link generations. */
#define TBT_LANE_GBPS_TBT1 10.0
#define TBT_LANE_GBPS_GEN3 20.0	/* Thunderbolt 2/3, USB4 Gen 3 */

static const char *last_component(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Copy as much of @src as fits: sysfs names are short, paths are not. */
static void copy_truncated(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void strip_last_component(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash && slash != path)
		*slash = '\0';
}

static int read_attr(const char *dir, const char *name, char *buf,
		     size_t size)
{
	char path[TBR_PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return tbr_read_text(path, buf, size);
}

int tbt_parse_speed(const char *text, double *gbps)
{
	char *end;
	double v;

	v = strtod(text, &end);
	if (end == text || v < 0 || strcmp(end, " Gb/s"))
		return -EINVAL;
	*gbps = v;
	return 0;
}

static void read_direction(const char *dir, const char *prefix,
			   struct tbt_direction *d)
{
	char name[32], text[64], *end;
	unsigned long lanes;

	snprintf(name, sizeof(name), "%s_speed", prefix);
	if (read_attr(dir, name, text, sizeof(text)) ||
	    tbt_parse_speed(text, &d->gbps_per_lane))
		d->gbps_per_lane = 0;
	snprintf(name, sizeof(name), "%s_lanes", prefix);
	if (!read_attr(dir, name, text, sizeof(text))) {
		lanes = strtoul(text, &end, 10);
		if (end != text && !*end && lanes < 16)
			d->lanes = lanes;
	}
}

/* Is @dir a device on the Thunderbolt bus (its subsystem link)? */
static bool on_thunderbolt_bus(const char *dir)
{
	char path[TBR_PATH_MAX], target[TBR_PATH_MAX];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/subsystem", dir) >=
	    (int)sizeof(path))
		return false;
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strcmp(last_component(target), "thunderbolt");
}

int tbt_link_find(const char *netdev, struct tbt_link *link)
{
	char path[TBR_PATH_MAX], dir[PATH_MAX], text[64], *end;
	unsigned long gen;
	int err;

	memset(link, 0, sizeof(*link));
	copy_truncated(link->netdev, sizeof(link->netdev), netdev);

	/* The service the netdev is the child of. */
	err = tbr_sysfs_path(path, sizeof(path), "class/net/%s/device", netdev);
	if (err)
		return err;
	if (!realpath(path, dir))
		return errno == ENOENT ? -ENOENT : -errno;
	if (!on_thunderbolt_bus(dir))
		return -ENOENT;

	/* Its parent, the XDomain: the link to the remote host. */
	strip_last_component(dir);
	if (!on_thunderbolt_bus(dir))
		return -ENOENT;
	copy_truncated(link->xdomain, sizeof(link->xdomain),
		       last_component(dir));
	read_direction(dir, "rx", &link->rx);
	read_direction(dir, "tx", &link->tx);
	read_attr(dir, "device_name", link->remote_name,
		  sizeof(link->remote_name));
	read_attr(dir, "vendor_name", link->remote_vendor,
		  sizeof(link->remote_vendor));

	/* The router whose port the link leaves from. */
	strip_last_component(dir);
	copy_truncated(link->router, sizeof(link->router),
		       last_component(dir));
	if (!read_attr(dir, "generation", text, sizeof(text))) {
		gen = strtoul(text, &end, 10);
		if (end != text && !*end && gen < 100)
			link->generation = gen;
	}

	/* The domain above the router(s). */
	while (strchr(dir + 1, '/')) {
		if (!strncmp(last_component(dir), "domain", 6)) {
			copy_truncated(link->domain, sizeof(link->domain),
				       last_component(dir));
			break;
		}
		strip_last_component(dir);
	}
	return 0;
}

const char *tbt_generation_name(unsigned int generation)
{
	switch (generation) {
	case 1:
		return "Thunderbolt 1";
	case 2:
		return "Thunderbolt 2";
	case 3:
		return "Thunderbolt 3";
	case 4:
		return "USB4";
	default:
		return "unknown generation";
	}
}

/* Does the absolute @path have a component equal to @name? */
static bool path_has_component(const char *path, const char *name)
{
	size_t len = strlen(name);
	const char *p = path;

	while ((p = strstr(p, name))) {
		if (p > path && p[-1] == '/' && (p[len] == '/' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

double tbt_domain_fastest_lane(const char *domain)
{
	char dir[TBR_PATH_MAX], entry[TBR_PATH_MAX], real[PATH_MAX], text[64];
	struct tbt_direction d;
	struct dirent *de;
	double fastest = 0;
	DIR *devices;

	if (!domain[0] ||
	    tbr_sysfs_path(dir, sizeof(dir), "bus/thunderbolt/devices"))
		return 0;
	devices = opendir(dir);
	if (!devices)
		return 0;
	while ((de = readdir(devices))) {
		if (de->d_name[0] == '.' ||
		    snprintf(entry, sizeof(entry), "%s/%s", dir, de->d_name) >=
			    (int)sizeof(entry) ||
		    !realpath(entry, real) || !path_has_component(real, domain))
			continue;
		/* Routers and XDomains have speeds; services do not. */
		if (read_attr(real, "rx_speed", text, sizeof(text)))
			continue;
		memset(&d, 0, sizeof(d));
		read_direction(real, "rx", &d);
		if (d.gbps_per_lane > fastest)
			fastest = d.gbps_per_lane;
		read_direction(real, "tx", &d);
		if (d.gbps_per_lane > fastest)
			fastest = d.gbps_per_lane;
	}
	closedir(devices);
	return fastest;
}

static void add_warning(struct tbt_link *link, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add_warning(struct tbt_link *link, const char *fmt, ...)
{
	va_list ap;

	if (link->n_warnings == TBT_WARNINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(link->warnings[link->n_warnings++],
		  sizeof(link->warnings[0]), fmt, ap);
	va_end(ap);
}

static double slower_lane(const struct tbt_link *link)
{
	double rx = link->rx.gbps_per_lane, tx = link->tx.gbps_per_lane;

	if (rx > 0 && tx > 0)
		return rx < tx ? rx : tx;
	return rx > 0 ? rx : tx;
}

void tbt_link_judge(struct tbt_link *link, double domain_fastest_gbps)
{
	unsigned int gen = link->generation;
	double lane;

	link->n_warnings = 0;
	link->below_capability = false;
	link->domain_fastest_gbps_per_lane = domain_fastest_gbps;
	link->expected_lanes = 0;
	link->expected_gbps_per_lane = 0;
	if (gen == 0)
		return;	/* nothing to compare with */

	link->expected_lanes = gen >= 3 ? 2 : 1;
	link->expected_gbps_per_lane = gen >= 2 ? TBT_LANE_GBPS_GEN3 :
						  TBT_LANE_GBPS_TBT1;
	/* USB4 v2 (TB5) routers say "4" too: trust what the domain shows. */
	if (gen >= 4 && domain_fastest_gbps > link->expected_gbps_per_lane)
		link->expected_gbps_per_lane = domain_fastest_gbps;

	if (link->rx.lanes && link->tx.lanes &&
	    link->rx.lanes + link->tx.lanes < 2 * link->expected_lanes) {
		link->below_capability = true;
		add_warning(link,
			    "Thunderbolt link %s (%s) uses %u rx and %u tx lane(s); a %s router bonds %u lanes each way, so it runs at half the bandwidth. "
			    "Check the cable (a certified Thunderbolt/USB4 cable, short or active) and that the other host bonds lanes.",
			    link->xdomain, link->netdev, link->rx.lanes,
			    link->tx.lanes, tbt_generation_name(gen),
			    link->expected_lanes);
	}

	lane = slower_lane(link);
	if (lane > 0 && lane < link->expected_gbps_per_lane) {
		link->below_capability = true;
		if (link->expected_gbps_per_lane > TBT_LANE_GBPS_GEN3)
			add_warning(link,
				    "Thunderbolt link %s (%s) runs at %.0f Gb/s per lane, while another link in %s runs at %.0f Gb/s (Thunderbolt 5 / USB4 v2). "
				    "A passive, long or Thunderbolt 4 cable, or an older host at the other end, holds this one back.",
				    link->xdomain, link->netdev, lane,
				    link->domain,
				    link->expected_gbps_per_lane);
		else
			add_warning(link,
				    "Thunderbolt link %s (%s) runs at %.0f Gb/s per lane, below the %.0f Gb/s of this %s router. "
				    "A passive, long or non-Thunderbolt cable, or an older host at the other end, holds it back.",
				    link->xdomain, link->netdev, lane,
				    link->expected_gbps_per_lane,
				    tbt_generation_name(gen));
	}
}

static int by_string(const void *a, const void *b)
{
	return strcmp(a, b);
}

size_t tbt_netdevs(char (*names)[IF_NAMESIZE], size_t max)
{
	char dir[TBR_PATH_MAX], driver[64];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	if (tbr_sysfs_path(dir, sizeof(dir), "class/net"))
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE)
			continue;
		if (tbr_sysfs_link_name(driver, sizeof(driver),
					"class/net/%s/device/driver",
					de->d_name) ||
		    strcmp(driver, "thunderbolt-net"))
			continue;
		snprintf(names[n++], IF_NAMESIZE, "%s", de->d_name);
	}
	closedir(d);
	qsort(names, n, IF_NAMESIZE, by_string);
	return n;
}
