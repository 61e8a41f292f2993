/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The Thunderbolt/USB4 link under a thunderbolt-net netdev, as the
 * Thunderbolt bus reports it in sysfs, and whether it runs below what the
 * hardware can do.
 *
 * In sysfs the netdev's device is a Thunderbolt service ("0-1.0", driver
 * thunderbolt-net), whose parent is the XDomain -- the remote host, "0-1" --
 * with the link's rx/tx lanes and per-lane speed; its parent is the local
 * router ("0-0", the host router, or a dock's router) with the router's
 * generation; above it is the domain ("domain0").
 *
 * The rule for "below what both ends support" (tbrdma(8), admin-guide.md):
 *  - lanes: routers of generation 3 (Thunderbolt 3) and 4 (USB4, TB4, TB5)
 *    bond both lanes of a host-to-host link, so fewer than 2 lanes in a
 *    direction (unless the other direction has the lanes an asymmetric
 *    USB4 v2 link moved there) is half the bandwidth;
 *  - per-lane speed: the router's generation promises 20 Gb/s per lane
 *    (Thunderbolt 2, 3, USB4) or 10 Gb/s (Thunderbolt 1).  USB4 v2 (TB5)
 *    routers also report generation 4, so 40 Gb/s per lane is expected only
 *    once another link in the same domain proves the router runs it: in a
 *    TB5 cluster one cable at 2 x 20 Gb/s next to others at 2 x 40 Gb/s is
 *    the common failure (a passive, long or TB4 cable).
 * The remote host's own generation is not in sysfs; a link to an older
 * host is limited by it, which the warning names as the other possibility.
 */
#ifndef TBRDMA_ADMIN_TBT_LINK_H
#define TBRDMA_ADMIN_TBT_LINK_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#define TBT_NAME_MAX 128
#define TBT_WARNINGS_MAX 2

struct tbt_direction {
	unsigned int lanes;	/* 0: not reported */
	double gbps_per_lane;	/* 0: not reported */
};

struct tbt_link {
	char netdev[IF_NAMESIZE];
	char xdomain[TBT_NAME_MAX];	/* "0-1" */
	char router[TBT_NAME_MAX];	/* "0-0" */
	char domain[TBT_NAME_MAX];	/* "domain0" */
	unsigned int generation;	/* the router's; 0 if not reported */
	char remote_name[TBT_NAME_MAX];	/* the XDomain's device_name */
	char remote_vendor[TBT_NAME_MAX];
	struct tbt_direction rx, tx;

	/* Filled by tbt_link_judge(). */
	unsigned int expected_lanes;	/* 0: no expectation */
	double expected_gbps_per_lane;
	double domain_fastest_gbps_per_lane;
	bool below_capability;
	size_t n_warnings;
	char warnings[TBT_WARNINGS_MAX][320];
};

/*
 * The link under @netdev.  0; -ENOENT if @netdev is not a Thunderbolt
 * network link; -errno if sysfs could not be read.
 */
int tbt_link_find(const char *netdev, struct tbt_link *link);

/* "20.0 Gb/s" -> 20.0.  0 or -EINVAL. */
int tbt_parse_speed(const char *text, double *gbps);

/* "Thunderbolt 3", "USB4", ... for a router generation. */
const char *tbt_generation_name(unsigned int generation);

/*
 * The fastest per-lane speed of any link in @domain (XDomains and device
 * routers), 0 if none reports one.
 */
double tbt_domain_fastest_lane(const char *domain);

/* Apply the rule above to @link, given its domain's fastest lane speed. */
void tbt_link_judge(struct tbt_link *link, double domain_fastest_gbps);

/*
 * The names of the Thunderbolt network links (netdevs whose device is
 * bound to thunderbolt-net), sorted; at most @max.  Returns the count.
 */
size_t tbt_netdevs(char (*names)[IF_NAMESIZE], size_t max);

#endif /* TBRDMA_ADMIN_TBT_LINK_H */
