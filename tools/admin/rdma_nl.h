/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RDMA core's netlink interface (NETLINK_RDMA, the "nldev" client that
 * iproute2's `rdma` tool uses), spoken through libmnl: devices, their
 * ports, their hw counters, and `rdma link add/delete`.
 */
#ifndef TBRDMA_ADMIN_RDMA_NL_H
#define TBRDMA_ADMIN_RDMA_NL_H

#include <linux/netlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "counters.h"

#define RDMA_DEV_NAME_MAX 64	/* IB_DEVICE_NAME_MAX */

struct mnl_socket;

struct rdma_nl {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
};

struct rdma_nl_dev {
	uint32_t index;
	char name[RDMA_DEV_NAME_MAX];
	char fw_version[64];
	uint64_t node_guid;
	uint32_t num_ports;
};

struct rdma_nl_port {
	uint8_t state;		/* enum ib_port_state: 4 = ACTIVE */
	uint8_t phys_state;	/* 5 = LINK_UP */
	bool has_netdev;	/* false: none, or in another namespace */
	uint32_t netdev_index;
	char netdev[IF_NAMESIZE];
};

/*
 * Open the socket.  -EPROTONOSUPPORT when the kernel has no RDMA netlink
 * (ib_core not loaded and not loadable).
 */
int rdma_nl_open(struct rdma_nl *nl);
void rdma_nl_close(struct rdma_nl *nl);

/* Call @cb for every RDMA device; a non-zero return stops and is returned. */
int rdma_nl_dev_list(struct rdma_nl *nl,
		     int (*cb)(const struct rdma_nl_dev *dev, void *arg),
		     void *arg);
/* One device by name; -ENODEV if there is none. */
int rdma_nl_dev_by_name(struct rdma_nl *nl, const char *name,
			struct rdma_nl_dev *dev);
int rdma_nl_port_get(struct rdma_nl *nl, uint32_t dev_index, uint32_t port,
		     struct rdma_nl_port *out);
/* The port's hw counters; -EOPNOTSUPP if the device has none. */
int rdma_nl_hw_counters(struct rdma_nl *nl, uint32_t dev_index,
			uint32_t port, struct counter_set *set);
/* `rdma link add NAME type TYPE netdev NETDEV` */
int rdma_nl_link_add(struct rdma_nl *nl, const char *name, const char *type,
		     const char *netdev);
/* `rdma link delete NAME` */
int rdma_nl_link_del(struct rdma_nl *nl, uint32_t dev_index);

/* Parsers, separate from the socket so unit tests feed them messages. */
int rdma_nl_parse_dev(const struct nlmsghdr *nlh, struct rdma_nl_dev *dev);
int rdma_nl_parse_port(const struct nlmsghdr *nlh, struct rdma_nl_port *port);
int rdma_nl_parse_hw_counters(const struct nlmsghdr *nlh,
			      struct counter_set *set);

/* "ACTIVE", "DOWN", ...; "UNKNOWN" for values this tool does not know. */
const char *rdma_port_state_name(uint8_t state);
const char *rdma_port_phys_state_name(uint8_t phys_state);

#endif /* TBRDMA_ADMIN_RDMA_NL_H */
