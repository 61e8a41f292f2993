/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tbrdma: RDMA verbs over Thunderbolt/USB4 (and any Ethernet-type netdev).
 *
 * Private structures of the kernel module.  One struct tbr_dev per RDMA
 * device; each verbs object embeds the core's object as its first member so
 * the RDMA core can allocate it for us (INIT_RDMA_OBJ_SIZE).
 */
#ifndef TBRDMA_H
#define TBRDMA_H

#include <linux/idr.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "../uapi/tbrdma-abi.h"
#include "limits.h"

#define TBR_PORT	1	/* every tbrdma device has exactly one port */

struct tbr_dev {
	struct ib_device ibdev;		/* must stay first: ib_alloc_device() */
	struct net_device *ndev;	/* held (dev_hold) for the device's life */
	enum tbrdma_mode mode;
	struct list_head list;		/* entry in tbr_devices, under tbr_devices_lock */
	struct ida pd_ida;		/* PD numbers; its range is the PD limit */
};

struct tbr_ucontext {
	struct ib_ucontext ibuc;
};

struct tbr_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct tbr_dev *to_tdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct tbr_dev, ibdev);
}

static inline struct tbr_pd *to_tpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct tbr_pd, ibpd);
}

/* device.c: the list of devices and their life cycle */
extern struct list_head tbr_devices;
extern struct mutex tbr_devices_lock;
int tbr_dev_add(const char *name, struct net_device *ndev);
struct tbr_dev *tbr_dev_find_by_netdev_locked(struct net_device *ndev);
void tbr_dev_remove_all(void);

/* query.c: attributes the core and user space ask for */
int tbr_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		     struct ib_udata *udata);
int tbr_query_port(struct ib_device *ibdev, u32 port,
		   struct ib_port_attr *attr);
int tbr_get_port_immutable(struct ib_device *ibdev, u32 port,
			   struct ib_port_immutable *immutable);
int tbr_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
enum rdma_link_layer tbr_get_link_layer(struct ib_device *ibdev, u32 port);
void tbr_get_dev_fw_str(struct ib_device *ibdev, char *str);

/* netdev.c: follow the attached netdev's state */
int tbr_netdev_events_init(void);
void tbr_netdev_events_exit(void);
bool tbr_netdev_port_active(struct net_device *ndev);

/* ucontext.c */
int tbr_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void tbr_dealloc_ucontext(struct ib_ucontext *ibuc);

/* pd.c */
int tbr_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int tbr_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* sysfs.c */
extern const struct attribute_group tbr_dev_attr_group;

#endif /* TBRDMA_H */
