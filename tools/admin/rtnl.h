/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Network interfaces as rtnetlink reports them, through libnl-route-3. */
#ifndef TBRDMA_ADMIN_RTNL_H
#define TBRDMA_ADMIN_RTNL_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

struct netdev_info {
	int ifindex;
	char name[IF_NAMESIZE];
	unsigned int mtu;
	bool admin_up;		/* IFF_UP */
	bool carrier;		/* IFLA_CARRIER */
	bool loopback;		/* IFF_LOOPBACK */
	char operstate[24];	/* "up", "down", "lowerlayerdown", ... */
	char kind[32];		/* rtnl link kind ("veth"); "" for hardware */
	char address[64];	/* MAC address */
};

/* Look up a netdev by name: 0, -ENODEV if there is none, or -errno. */
int netdev_lookup(const char *name, struct netdev_info *info);

/*
 * The driver behind a netdev, as a reader would name it: the bound
 * device driver from sysfs ("thunderbolt-net"), else the rtnl link kind
 * ("veth"), else "loopback" for lo; "" if none of these.
 */
void netdev_driver(const struct netdev_info *info, char *buf, size_t size);

#endif /* TBRDMA_ADMIN_RTNL_H */
