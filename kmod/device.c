// SPDX-License-Identifier: GPL-2.0-only
/*
 * Life cycle of a tbrdma device: creation on `rdma link add` (or at load
 * time for the loopback parameter), registration with the RDMA core, and
 * removal by `rdma link delete`, netdev unregistration or module unload.
 *
 * The core owns the memory of a registered device.  We only keep a list of
 * our devices so module unload can remove exactly ours (the shared driver id
 * RDMA_DRIVER_UNKNOWN rules out ib_unregister_driver()).
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <net/addrconf.h>

#include "net.h"

LIST_HEAD(tbr_devices);
/* Guards tbr_devices; taken under RTNL by the netdev notifier. */
DEFINE_MUTEX(tbr_devices_lock);

static void tbr_dealloc_driver(struct ib_device *ibdev);

static const struct ib_device_ops tbr_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = TBRDMA_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = tbr_alloc_hw_port_stats,
	.alloc_mr = tbr_alloc_mr,
	.alloc_mw = tbr_alloc_mw,
	.alloc_pd = tbr_alloc_pd,
	.alloc_ucontext = tbr_alloc_ucontext,
	.alloc_xrcd = tbr_alloc_xrcd,
	.create_ah = tbr_create_ah,
	.create_cq = TBR_CREATE_CQ_OP,
#ifdef TBR_HAS_CREATE_USER_CQ
	.create_user_cq = TBR_CREATE_CQ_OP,
#endif
	.create_qp = tbr_create_qp,
	.create_srq = tbr_create_srq,
	.create_user_ah = tbr_create_ah,
	.dealloc_driver = tbr_dealloc_driver,
	.dealloc_mw = tbr_dealloc_mw,
	.dealloc_pd = tbr_dealloc_pd,
	.dealloc_ucontext = tbr_dealloc_ucontext,
	.dealloc_xrcd = tbr_dealloc_xrcd,
	.dereg_mr = tbr_dereg_mr,
	.destroy_ah = tbr_destroy_ah,
	.destroy_cq = tbr_destroy_cq,
	.destroy_qp = tbr_destroy_qp,
	.destroy_srq = tbr_destroy_srq,
	.disassociate_ucontext = tbr_disassociate_ucontext,
	.device_group = &tbr_dev_attr_group,
	.get_dev_fw_str = tbr_get_dev_fw_str,
	.get_dma_mr = tbr_get_dma_mr,
	.map_mr_sg = tbr_map_mr_sg,
	.get_hw_stats = tbr_get_hw_stats,
	.get_link_layer = tbr_get_link_layer,
	.get_port_immutable = tbr_get_port_immutable,
	.mmap = tbr_mmap,
	.mmap_free = tbr_mmap_free,
	.modify_qp = tbr_modify_qp,
	.modify_srq = tbr_modify_srq,
	.poll_cq = tbr_poll_cq,
	.post_recv = tbr_post_recv,
	.post_send = tbr_post_send,
	.post_srq_recv = tbr_post_srq_recv,
	.query_device = tbr_query_device,
	.query_pkey = tbr_query_pkey,
	.query_port = tbr_query_port,
	.query_qp = tbr_query_qp,
	.query_srq = tbr_query_srq,
	.reg_user_mr = TBR_REG_USER_MR_OP,
	.req_notify_cq = tbr_req_notify_cq,
#ifdef TBR_HAS_RESIZE_USER_CQ
	.resize_user_cq = tbr_resize_user_cq,
#else
	.resize_cq = tbr_resize_cq,
#endif

	INIT_RDMA_OBJ_SIZE(ib_ah, tbr_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, tbr_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, tbr_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, tbr_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, tbr_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, tbr_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, tbr_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, tbr_xrcd, ibxrcd),
};

/*
 * A node GUID that is unique per device: from the MAC for a real link (as
 * RoCE devices do), random for loopback devices, which all share lo's
 * all-zero MAC.
 */
static __be64 tbr_make_node_guid(struct net_device *ndev, enum tbrdma_mode mode)
{
	u8 mac[ETH_ALEN];
	__be64 guid;

	if (mode == TBRDMA_MODE_LOOPBACK)
		eth_random_addr(mac);
	else
		ether_addr_copy(mac, ndev->dev_addr);
	addrconf_addr_eui48((u8 *)&guid, mac);
	return guid;
}

struct tbr_dev *tbr_dev_find_by_netdev_locked(struct net_device *ndev)
{
	struct tbr_dev *tdev;

	lockdep_assert_held(&tbr_devices_lock);
	list_for_each_entry(tdev, &tbr_devices, list)
		if (tdev->ndev == ndev)
			return tdev;
	return NULL;
}

/*
 * Our device on @ndev, with a reference (ib_device_put), for the packet
 * handler: the core's ib_device_get_by_netdev() would also return another
 * driver's device on the same netdev (rdma_rxe on a veth, say).
 */
struct tbr_dev *tbr_dev_get_by_netdev_rcu(struct net_device *ndev)
{
	struct tbr_dev *tdev;

	list_for_each_entry_rcu(tdev, &tbr_devices, list)
		if (tdev->ndev == ndev)
			return ib_device_try_get(&tdev->ibdev) ? tdev : NULL;
	return NULL;
}

static bool tbr_netdev_supported(struct net_device *ndev)
{
	return ndev->type == ARPHRD_ETHER || ndev->type == ARPHRD_LOOPBACK;
}

/*
 * Just registered: if @ndev started unregistering meanwhile, the netdev
 * notifier found the device not yet registered and left it alone (netdev.c),
 * so remove it here, or the netdev would wait forever for its reference.
 * RTNL orders reg_state before the notifier, which takes tbr_devices_lock.
 */
static int tbr_dev_check_netdev(struct tbr_dev *tdev, struct net_device *ndev)
{
	bool gone = false;

	mutex_lock(&tbr_devices_lock);
	/* Unless something removed it already (then the pointer is stale). */
	if (tbr_dev_find_by_netdev_locked(ndev) == tdev &&
	    READ_ONCE(ndev->reg_state) != NETREG_REGISTERED) {
		gone = true;
		get_device(&tdev->ibdev.dev);
	}
	mutex_unlock(&tbr_devices_lock);
	if (!gone)
		return 0;
	ib_unregister_device(&tdev->ibdev);
	put_device(&tdev->ibdev.dev);
	return -ENODEV;
}

/*
 * xa_init_flags() gives every xarray set up in one file the same lockdep
 * class.  The QP and AH tables are locked from softirq (frames arrive),
 * the XRC SRQ table too, the MR table only from process context: as one class, lockdep reports
 * an inconsistent lock state.  They are different locks; say so.
 */
static void tbr_xa_lock_classes(struct tbr_dev *tdev)
{
	static struct lock_class_key mr_key, qp_key, ah_key, srq_key;

	lockdep_set_class(&tdev->mr_xa.xa_lock, &mr_key);
	lockdep_set_class(&tdev->qp_xa.xa_lock, &qp_key);
	lockdep_set_class(&tdev->ah_xa.xa_lock, &ah_key);
	lockdep_set_class(&tdev->srq_xa.xa_lock, &srq_key);
}

/*
 * Create and register a device on @ndev.  @name may be a pattern such as
 * "tbrlo%d".  The caller keeps its own reference to @ndev; the device takes
 * one of its own for as long as it exists.
 */
int tbr_dev_add(const char *name, struct net_device *ndev)
{
	struct tbr_dev *tdev;
	struct ib_device *ibdev;
	int err;

	if (!tbr_netdev_supported(ndev))
		return -EINVAL;

	mutex_lock(&tbr_devices_lock);
	if (tbr_dev_find_by_netdev_locked(ndev)) {
		err = -EEXIST;
		goto out_unlock;
	}

	tdev = ib_alloc_device(tbr_dev, ibdev);
	if (!tdev) {
		err = -ENOMEM;
		goto out_unlock;
	}
	ibdev = &tdev->ibdev;
	INIT_LIST_HEAD(&tdev->list);

	tdev->mode = (ndev->flags & IFF_LOOPBACK) ? TBRDMA_MODE_LOOPBACK :
						   TBRDMA_MODE_NETDEV;
	tdev->ndev = ndev;
	/* Thunderbolt links carry their own CRC on every packet; others may not. */
	tdev->csum = tbr_checksum < 0 ? !tbr_tbt_is_thunderbolt(ndev) :
					!!tbr_checksum;
	dev_hold(ndev);
	ida_init(&tdev->pd_ida);
	xa_init_flags(&tdev->mr_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&tdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&tdev->ah_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&tdev->srq_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	tbr_xa_lock_classes(tdev);
	tbr_peers_init(tdev);
	err = tbr_counters_init(tdev);
	if (err)
		goto out_dealloc;
	err = -ENOMEM;
	tdev->mr_gen = kvzalloc(TBR_MAX_MR + 1, GFP_KERNEL);
	if (!tdev->mr_gen)
		goto out_dealloc;
	spin_lock_init(&tdev->tomb_lock);
	if (tdev->mode == TBRDMA_MODE_NETDEV) {
		err = -ENOMEM;
		tdev->tombs = kcalloc(TBR_NET_TOMBS, sizeof(*tdev->tombs),
				      GFP_KERNEL);
		if (!tdev->tombs)
			goto out_dealloc;
	}

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->node_guid = tbr_make_node_guid(ndev, tdev->mode);
	/* The doorbells of user QPs are POST_SEND/POST_RECV with no WRs. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	strscpy(ibdev->node_desc, "tbrdma", sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &tbr_dev_ops);

	/* Lets the core keep the GID table from the netdev's IP addresses. */
	err = ib_device_set_netdev(ibdev, ndev, TBR_PORT);
	if (err)
		goto out_dealloc;

	/*
	 * On the list before registering: dealloc_driver, which the core may
	 * call as soon as registration fails or the device is unregistered,
	 * takes it off again.
	 */
	list_add_tail_rcu(&tdev->list, &tbr_devices);
	mutex_unlock(&tbr_devices_lock);

	err = ib_register_device(ibdev, name, NULL);
	if (err) {
		ib_dealloc_device(ibdev);	/* the caller's job on failure */
		return err;
	}
	return tbr_dev_check_netdev(tdev, ndev);

out_dealloc:
	ib_dealloc_device(ibdev);	/* calls tbr_dealloc_driver */
out_unlock:
	mutex_unlock(&tbr_devices_lock);
	return err;
}

/* Called by the core, exactly once, as the last driver op of a device. */
static void tbr_dealloc_driver(struct ib_device *ibdev)
{
	struct tbr_dev *tdev = to_tdev(ibdev);
	bool listed;

	/*
	 * Off the list only in the early error unwind of tbr_dev_add(), which
	 * still holds the lock; on the list, only we remove it.
	 */
	listed = !list_empty(&tdev->list);
	if (listed) {
		mutex_lock(&tbr_devices_lock);
		list_del_rcu(&tdev->list);
		mutex_unlock(&tbr_devices_lock);
		/* The packet handler may still be looking at it. */
		synchronize_rcu();
	}
	ida_destroy(&tdev->pd_ida);
	/* Every object is gone by now: users have closed, kernel ULPs detached. */
	WARN_ON(!xa_empty(&tdev->mr_xa) || !xa_empty(&tdev->qp_xa) ||
		!xa_empty(&tdev->ah_xa) || !xa_empty(&tdev->srq_xa));
	xa_destroy(&tdev->mr_xa);
	xa_destroy(&tdev->qp_xa);
	xa_destroy(&tdev->ah_xa);
	xa_destroy(&tdev->srq_xa);
	tbr_counters_free(tdev);
	kvfree(tdev->mr_gen);
	kfree(tdev->tombs);
	dev_put(tdev->ndev);
}

/*
 * Module unload: unregister every device of ours.  Holding a reference on
 * the embedded struct device keeps the memory valid even if a concurrent
 * `rdma link delete` or a queued netdev-unregister removes it first;
 * ib_unregister_device() is fenced against such concurrent callers.
 */
void tbr_dev_remove_all(void)
{
	struct tbr_dev *tdev;

	for (;;) {
		mutex_lock(&tbr_devices_lock);
		tdev = list_first_entry_or_null(&tbr_devices, struct tbr_dev,
						list);
		if (tdev)
			get_device(&tdev->ibdev.dev);
		mutex_unlock(&tbr_devices_lock);
		if (!tdev)
			break;

		ib_unregister_device(&tdev->ibdev);
		put_device(&tdev->ibdev.dev);
	}
}
