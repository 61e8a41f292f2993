// SPDX-License-Identifier: GPL-2.0-only
/*
 * Address handles: where a UD datagram goes.  User space names an AH by
 * the handle the create response returns; the send engine looks the handle
 * up and copies what it needs under RCU, because an AH may be destroyed
 * (in atomic context, so without waiting) while a WQE naming it is read.
 */
#include <linux/etherdevice.h>
#include <rdma/ib_cache.h>

#include "tbrdma.h"
#include "ah.h"

/*
 * Can a netdev-mode device send to @dgid at @dmac?  Frames to the netdev's
 * own MAC are received by this device (tbr_net_xmit()), which is right
 * only when @dgid is one of its own GIDs.  The core resolves any local
 * address to the sender's own MAC (a route through lo), also one that
 * belongs to another device of the same namespace: such frames would
 * reach this device's QP of the same number, so refuse the address.
 */
int tbr_av_check(struct tbr_dev *tdev, const union ib_gid *dgid,
		 const u8 *dmac)
{
	const struct ib_gid_attr *attr;

	if (tdev->mode != TBRDMA_MODE_NETDEV ||
	    !ether_addr_equal(dmac, tdev->ndev->dev_addr))
		return 0;
	attr = rdma_find_gid_by_port(&tdev->ibdev, dgid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, 1, NULL);
	if (IS_ERR(attr))
		return -EHOSTUNREACH;
	rdma_put_gid_attr(attr);
	return 0;
}

int tbr_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		  struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibah->device);
	gfp_t gfp = (init->flags & RDMA_CREATE_AH_SLEEPABLE) ? GFP_KERNEL :
							       GFP_ATOMIC;
	unsigned long flags;
	struct rdma_ah_attr *attr = init->ah_attr;
	struct tbrdma_create_ah_resp resp = {};
	struct tbr_ah *ah = to_tah(ibah);
	const struct ib_global_route *grh;
	struct tbr_ah_info *info;
	int err;

	/* RoCE: every AH carries a GRH (the GIDs are IP addresses). */
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	err = tbr_av_check(tdev, &grh->dgid, attr->roce.dmac);
	if (err)
		return err;

	info = kzalloc(sizeof(*info), gfp);
	if (!info)
		return -ENOMEM;
	info->pdn = to_tpd(ibah->pd)->pdn;
	info->dgid = grh->dgid;
	if (grh->sgid_attr)
		info->sgid = grh->sgid_attr->gid;
	memcpy(info->dmac, attr->roce.dmac, ETH_ALEN);

	/* AHs come and go in any context, even with interrupts off. */
	xa_lock_irqsave(&tdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&tdev->ah_xa, &ah->handle, info,
				XA_LIMIT(1, TBR_MAX_AH), &tdev->ah_next,
				GFP_ATOMIC);
	xa_unlock_irqrestore(&tdev->ah_xa, flags);
	if (err < 0) {
		kfree(info);
		return err == -EBUSY ? -ENOMEM : err;
	}
	ah->info = info;

	if (udata) {
		resp.ah_handle = ah->handle;
		err = tbr_respond(udata, &resp, sizeof(resp));
		if (err) {
			tbr_destroy_ah(ibah, 0);
			return err;
		}
	}
	return 0;
}

int tbr_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct xarray *xa = &to_tdev(ibah->device)->ah_xa;
	struct tbr_ah *ah = to_tah(ibah);
	unsigned long irqflags;

	xa_lock_irqsave(xa, irqflags);
	__xa_erase(xa, ah->handle);
	xa_unlock_irqrestore(xa, irqflags);
	kfree_rcu(ah->info, rcu);
	return 0;
}

/* A copy of what the AH @handle says, if it exists and belongs to PD @pdn. */
bool tbr_ah_lookup(struct tbr_dev *tdev, u32 handle, u32 pdn,
		   struct tbr_ah_info *out)
{
	struct tbr_ah_info *info;
	bool found;

	rcu_read_lock();
	info = xa_load(&tdev->ah_xa, handle);
	found = info && info->pdn == pdn;
	if (found)
		*out = *info;
	rcu_read_unlock();
	return found;
}
