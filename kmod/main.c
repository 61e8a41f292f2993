// SPDX-License-Identifier: GPL-2.0-only
/*
 * tbrdma module entry: module parameters, the `rdma link` type, and the
 * order in which the pieces start and stop.
 */
#include <linux/module.h>
#include <net/net_namespace.h>
#include <rdma/rdma_netlink.h>

#include "tbrdma.h"

/* Runs send engines for kernel consumers, state changes and RNR retries. */
struct workqueue_struct *tbr_wq;

static bool loopback;
module_param(loopback, bool, 0444);
MODULE_PARM_DESC(loopback,
		 "Create the loopback soft-mode device tbrlo0 at load time (default: no)");

int tbr_checksum = -1;
module_param_named(checksum, tbr_checksum, int, 0644);
MODULE_PARM_DESC(checksum,
		 "End-to-end checksum on every frame of devices created from now on: 1 on, 0 off, -1 (default) on except on thunderbolt-net, whose link has its own CRC");

/* `rdma link add NAME type tbrdma netdev DEV` */
static int tbr_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return tbr_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops tbr_link_ops = {
	.type = TBRDMA_DRIVER_NAME,
	.newlink = tbr_newlink,
};

static int __init tbr_init(void)
{
	int err;

	tbr_wq = alloc_workqueue("tbrdma", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!tbr_wq)
		return -ENOMEM;
	err = tbr_netdev_events_init();
	if (err)
		goto err_wq;
	tbr_net_init();		/* frames in, before any device exists */
	err = tbr_removal_init();
	if (err)
		goto err_net;

	rdma_link_register(&tbr_link_ops);

	if (loopback) {
		err = tbr_dev_add("tbrlo%d", init_net.loopback_dev);
		if (err) {
			pr_err("tbrdma: cannot create the loopback device: %d\n",
			       err);
			goto err_link;
		}
	}
	tbr_tbt_start();	/* thunderbolt_attach: last, nothing to undo */
	return 0;

err_link:
	rdma_link_unregister(&tbr_link_ops);
	tbr_removal_exit();
err_net:
	tbr_net_exit();
	tbr_netdev_events_exit();
err_wq:
	destroy_workqueue(tbr_wq);
	return err;
}

static void __exit tbr_exit(void)
{
	/*
	 * No new devices from now on, then remove the existing ones while the
	 * netdev notifier still runs, so a netdev going away meanwhile is not
	 * left waiting on a reference we hold.
	 */
	rdma_link_unregister(&tbr_link_ops);
	tbr_tbt_stop();
	tbr_dev_remove_all();
	tbr_removal_exit();
	tbr_net_exit();
	tbr_netdev_events_exit();
	destroy_workqueue(tbr_wq);
}

module_init(tbr_init);
module_exit(tbr_exit);

MODULE_DESCRIPTION("RDMA verbs over Thunderbolt/USB4 and Ethernet-type links");
MODULE_AUTHOR("tbrdma developers");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK(TBRDMA_DRIVER_NAME);
