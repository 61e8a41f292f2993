/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A port's GID table from sysfs (ports/N/gids/I, gid_attrs/types/I,
 * gid_attrs/ndevs/I): the addresses RoCE peers reach the device at.
 */
#ifndef TBRDMA_ADMIN_GIDS_H
#define TBRDMA_ADMIN_GIDS_H

#include <arpa/inet.h>
#include <net/if.h>
#include <stddef.h>

#define GIDS_MAX 64

struct gid_entry {
	unsigned int index;
	char address[INET6_ADDRSTRLEN];	/* "fe80::1", "::ffff:10.0.0.1" */
	char type[16];			/* "RoCE v2", "IB/RoCE v1" */
	char netdev[IF_NAMESIZE];
};

struct gid_table {
	size_t n;
	struct gid_entry g[GIDS_MAX];
};

/*
 * The sysfs text of a GID ("fe80:0000:...:0001", eight groups) as an IPv6
 * address, e.g. "fe80::1".  0, or -EINVAL if it is not one; -ENODATA for
 * the all-zero GID of an empty slot.
 */
int gid_format(const char *sysfs_text, char *buf, size_t size);

/* The valid (non-zero) GIDs of @ibdev's @port, by index.  0 or -errno. */
int gids_read(const char *ibdev, unsigned int port, struct gid_table *table);

#endif /* TBRDMA_ADMIN_GIDS_H */
