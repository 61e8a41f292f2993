/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Routes to the peers and the RDMA devices on them (route.c): a host
 * with several cables (a Thunderbolt triangle, ring or mesh) has a
 * netdev, and so a tbrdma device, per cable, and reaches each peer
 * through the one whose subnet the peer's address is on.
 */
#ifndef TPRUN_ROUTE_H
#define TPRUN_ROUTE_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>

/* The most addresses a rank announces (its --peers entry "a|b|c:port"). */
#define TP_MAX_ADDRS 8

struct tp_route {
	int onlink;		/* no gateway: the peer is on this netdev's link */
	int local;		/* the address is this host's own */
	int ifindex;
	char ifname[IF_NAMESIZE];	/* the netdev it leaves by */
	char src[INET6_ADDRSTRLEN];	/* the source address the kernel picks */
};

/*
 * The route to ADDR (numeric IPv4 or IPv6, IPv6 optionally in
 * brackets) in this network namespace: 0, or -1 (no route, not an
 * address).
 */
int tp_route_get(const char *addr, struct tp_route *r);
/*
 * The RDMA device whose port IB_PORT has R's source address as a GID
 * (preferring the one whose GID sits on R's netdev), into DEV, and
 * the GID's index: 0, or -1 (no device has it).
 */
int tp_route_device(const struct tp_route *r, int ib_port, char *dev,
		    size_t devlen, int *gid_index);
/*
 * This host's addresses that another host can use (up, not loopback,
 * no IPv6 link-local), "a|b|[v6]", at most TP_MAX_ADDRS - 1 of them.
 * Returns how many.
 */
int tp_local_addrs(char *out, size_t len);

#endif /* TPRUN_ROUTE_H */
