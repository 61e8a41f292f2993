/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tbrdma's RDMA devices.  The kernel registers them with driver id
 * RDMA_DRIVER_UNKNOWN, so netlink alone cannot tell them from others: a
 * device is ours when it has the tbrdma_mode sysfs attribute.
 */
#ifndef TBRDMA_ADMIN_DEVICE_H
#define TBRDMA_ADMIN_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "rdma_nl.h"

/* tbrdma devices have one port. */
#define TBR_PORT 1

struct tbr_device {
	struct rdma_nl_dev nl;
	char mode[16];		/* "loopback" or "netdev" */
	unsigned int abi_version;
	struct rdma_nl_port port;
};

bool tbr_device_is_ours(const char *ibdev);

/*
 * Every tbrdma device, sorted by name, into a malloc()ed array (free() it).
 * 0 or -errno.
 */
int tbr_devices_list(struct rdma_nl *nl, struct tbr_device **devs, size_t *n);

/* One device: -ENODEV if there is none, -EMEDIUMTYPE if it is not ours. */
int tbr_device_get(struct rdma_nl *nl, const char *name,
		   struct tbr_device *dev);

#endif /* TBRDMA_ADMIN_DEVICE_H */
