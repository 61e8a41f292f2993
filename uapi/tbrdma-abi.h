/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * tbrdma user/kernel ABI: everything tbrdma.ko and libtbrdma exchange.
 *
 * Included by the kernel module (kmod/) and by the rdma-core provider
 * (provider/).  Only fixed-size types, explicit padding, no pointers, so the
 * layout is the same for every compiler and both sides can assert sizes.
 *
 * Versioning: TBRDMA_UVERBS_ABI_VERSION is the driver ABI version the kernel
 * reports in /sys/class/infiniband_verbs/uverbsN/abi_version and in the
 * per-device attribute TBRDMA_SYSFS_ABI_ATTR.  The provider refuses any
 * device whose version differs from the one it was built with.  Structures
 * only ever grow at the end; the kernel copies min(its size, user size).
 */
#ifndef TBRDMA_ABI_H
#define TBRDMA_ABI_H

#include <linux/types.h>

#define TBRDMA_UVERBS_ABI_VERSION	1

/* Name of the provider, of the rdma link type and of the kernel module. */
#define TBRDMA_DRIVER_NAME		"tbrdma"

/*
 * Per-device sysfs attributes, under /sys/class/infiniband/<ibdev>/.
 * The provider matches a device by reading TBRDMA_SYSFS_ABI_ATTR: udev may
 * rename devices, so the name alone proves nothing.
 */
#define TBRDMA_SYSFS_ABI_ATTR		"tbrdma_abi_version"
#define TBRDMA_SYSFS_MODE_ATTR		"tbrdma_mode"

/* Contents of TBRDMA_SYSFS_MODE_ATTR, and tbrdma_alloc_ucontext_resp.mode. */
enum tbrdma_mode {
	TBRDMA_MODE_LOOPBACK = 1,	/* netdev lo: traffic stays in the kernel */
	TBRDMA_MODE_NETDEV = 2,		/* an Ethernet-type link (thunderbolt-net, veth) */
};

#define TBRDMA_MODE_LOOPBACK_NAME	"loopback"
#define TBRDMA_MODE_NETDEV_NAME		"netdev"

/* Driver data of IB_USER_VERBS_CMD_GET_CONTEXT (no request data). */
struct tbrdma_alloc_ucontext_resp {
	__u32 abi_version;	/* TBRDMA_UVERBS_ABI_VERSION */
	__u32 mode;		/* enum tbrdma_mode */
};

/* Driver data of IB_USER_VERBS_CMD_ALLOC_PD (no request data). */
struct tbrdma_alloc_pd_resp {
	__u32 pdn;		/* device-unique PD number, for diagnostics */
	__u32 reserved;
};

#endif /* TBRDMA_ABI_H */
