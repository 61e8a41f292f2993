// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory windows (IB spec 10.6.7): an rkey for a part of a registered MR,
 * which the owner can hand to a peer and revoke again without touching
 * the MR.  A window's rkey comes from the MRs' key space (mr.c): its index
 * in tdev->mr_xa names a tbr_mr of type TBR_MR_MW that holds the window's
 * state, so one lookup finds either.
 *
 * Type 1: VALID from allocation on, bound to nothing; ibv_bind_mw() (a
 * BIND_MW work request the provider posts) binds it, or with length 0
 * unbinds it, and changes the low 8 bits of its rkey each time.  It is
 * used by any QP of its PD.  Only deallocation or a new bind ends it.
 *
 * Type 2: FREE until a BIND_MW work request binds it to a range of an MR
 * under a new rkey; then only the QP it was bound through can use it.
 * LOCAL_INV, a peer's SEND_WITH_INV on that QP, or deallocation make it
 * FREE again, and only a FREE type 2 window can be bound.
 *
 * A bound window counts in its MR's mw_count, under the MR's lock; while
 * that is not 0 the MR cannot be deregistered (EBUSY), so the MR a window
 * points to is always alive.  Locks: a window's lock, then its MR's.  The
 * dying flags (a window's, an MR's), set under the lock, make a bind that
 * races with dealloc or dereg fail instead of leaving a binding behind.
 */
#include "tbrdma.h"

#define TBR_MW_REMOTE	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_ATOMIC)

int tbr_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibmw->device);
	struct tbr_mr *ent;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	ent = tbr_mr_alloc(tdev, to_tpd(ibmw->pd), 0);
	if (IS_ERR(ent))
		return PTR_ERR(ent);
	ent->type = TBR_MR_MW;
	ent->mw_type = ibmw->type;
	ent->state = ibmw->type == IB_MW_TYPE_1 ? TBR_MR_VALID : TBR_MR_FREE;
	ibmw->rkey = ent->key;
	to_tmw(ibmw)->ent = ent;
	tbr_mr_publish(tdev, ent);
	return 0;
}

/* Forget the window's binding, if any; the window's lock is held. */
static void tbr_mw_unbind(struct tbr_mr *mw)
{
	struct tbr_mr *mr = mw->mw_mr;

	if (mr) {
		spin_lock_nested(&mr->lock, SINGLE_DEPTH_NESTING);
		mr->mw_count--;
		spin_unlock(&mr->lock);
		mw->mw_mr = NULL;
	}
	mw->iova = 0;
	mw->length = 0;
	mw->access = 0;
}

/* Deallocation invalidates: the rkey is dead when this returns. */
int tbr_dealloc_mw(struct ib_mw *ibmw)
{
	struct tbr_dev *tdev = to_tdev(ibmw->device);
	struct tbr_mr *mw = to_tmw(ibmw)->ent;
	unsigned long flags;

	spin_lock_irqsave(&mw->lock, flags);
	mw->dying = true;	/* a bind racing with us fails from now on */
	mw->state = TBR_MR_FREE;
	tbr_mw_unbind(mw);
	/*
	 * The index is still ours: its next key starts after the window's
	 * last one, not after its first (binds moved the low byte on).
	 */
	tdev->mr_gen[TBR_KEY_INDEX(mw->key)] = mw->key & 0xff;
	spin_unlock_irqrestore(&mw->lock, flags);
	xa_erase(&tdev->mr_xa, TBR_KEY_INDEX(mw->key));
	if (!refcount_dec_and_test(&mw->users))
		wait_for_completion(&mw->released);
	kfree_rcu(mw, rcu);
	return 0;
}

/*
 * The MR to bind to, referenced: a user MR of the QP's PD with MW_BIND
 * access that holds the whole range, whose local write access the window
 * needs for remote write or atomics (IB spec C10-73, C10-74, C10-75).
 */
static struct tbr_mr *tbr_mw_bind_mr(struct tbr_qp *qp, u32 lkey, u64 addr,
				     u64 length, int access)
{
	struct tbr_mr *mr;

	mr = tbr_mr_get(qp->tdev, lkey, qp->pdn, IB_ACCESS_MW_BIND, addr,
			length);
	if (!mr)
		return NULL;
	if (mr->type != TBR_MR_USER ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->access & IB_ACCESS_LOCAL_WRITE))) {
		tbr_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * BIND_MW on @qp: bind the window named by wr.bind.mw_rkey's index to
 * [addr, addr + length) of the MR wr.bind.mr_lkey, with the window's new
 * rkey (its index, the low 8 bits of wr.bind.rkey).  Every failure is a
 * Memory Window Bind Error, as the IB spec gives.
 */
enum ib_wc_status tbr_mw_bind(struct tbr_qp *qp,
			      const struct tbrdma_send_wqe *wqe)
{
	u32 key = (wqe->wr.bind.mw_rkey & ~0xffU) | (wqe->wr.bind.rkey & 0xff);
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;
	u64 addr = wqe->wr.bind.addr, length = wqe->wr.bind.length;
	int access = wqe->wr.bind.access;
	struct tbr_mr *mw, *mr = NULL;
	unsigned long flags;

	/* Zero-based windows and other flags are not offered. */
	if (access & ~(TBR_MW_REMOTE | IB_ACCESS_LOCAL_WRITE))
		return IB_WC_MW_BIND_ERR;
	mw = tbr_mr_get_index(qp->tdev, wqe->wr.bind.mw_rkey, qp->pdn,
			      TBR_MR_MW);
	if (!mw)
		return IB_WC_MW_BIND_ERR;
	/* o10-37.2.40: a type 2 window is bound to some memory. */
	if (length || mw->mw_type == IB_MW_TYPE_2) {
		if (!length)
			goto out;
		mr = tbr_mw_bind_mr(qp, wqe->wr.bind.mr_lkey, addr, length,
				    access);
		if (!mr)
			goto out;
	}

	spin_lock_irqsave(&mw->lock, flags);
	/* o10-37.2.30: a type 2 window must be FREE to be bound. */
	if (mw->dying ||
	    (mw->mw_type == IB_MW_TYPE_2 && mw->state != TBR_MR_FREE))
		goto out_unlock;
	if (mr) {
		spin_lock_nested(&mr->lock, SINGLE_DEPTH_NESTING);
		if (mr->dying) {
			spin_unlock(&mr->lock);
			goto out_unlock;
		}
		mr->mw_count++;
		spin_unlock(&mr->lock);
	}
	tbr_mw_unbind(mw);	/* type 1: the previous binding */
	mw->mw_mr = mr;
	mw->iova = addr;
	mw->length = length;
	mw->access = access & TBR_MW_REMOTE;
	mw->mw_qpn = qp->ibqp.qp_num;
	mw->key = key;
	mw->state = TBR_MR_VALID;
	status = IB_WC_SUCCESS;
out_unlock:
	spin_unlock_irqrestore(&mw->lock, flags);
out:
	if (mr)
		tbr_mr_put(mr);
	tbr_mr_put(mw);
	return status;
}

/*
 * LOCAL_INV (@remote false) or a peer's SEND_WITH_INV (@remote true) on
 * QP @qpn, for the window @mw (referenced) found by @key.  Only a type 2
 * window can be invalidated (o10-37.2.26), a remote one only through the
 * QP it is bound to; invalidating a FREE window changes nothing.
 */
enum ib_wc_status tbr_mw_invalidate(struct tbr_mr *mw, u32 qpn, u32 key,
				    bool remote)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	unsigned long flags;

	if (mw->mw_type != IB_MW_TYPE_2)
		return IB_WC_LOC_QP_OP_ERR;
	spin_lock_irqsave(&mw->lock, flags);
	if (mw->key != key ||
	    (remote && mw->state == TBR_MR_VALID && mw->mw_qpn != qpn)) {
		status = IB_WC_LOC_PROT_ERR;
	} else {
		mw->state = TBR_MR_FREE;
		tbr_mw_unbind(mw);
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	return status;
}

/*
 * A remote access with the window @mw's rkey @key by QP @qpn of PD @pdn:
 * the MR the window is bound to, referenced, if the window is VALID under
 * that key, belongs to the PD (type 1) or to the QP (type 2), grants
 * @access and covers [@addr, @addr + @len); NULL otherwise.
 */
struct tbr_mr *tbr_mw_target(struct tbr_mr *mw, u32 key, u32 pdn, u32 qpn,
			     int access, u64 addr, u64 len)
{
	struct tbr_mr *mr = NULL;
	unsigned long flags;

	spin_lock_irqsave(&mw->lock, flags);
	if (mw->mw_mr && mw->state == TBR_MR_VALID && mw->key == key &&
	    mw->pdn == pdn &&
	    (mw->mw_type == IB_MW_TYPE_1 || mw->mw_qpn == qpn) &&
	    (mw->access & access) == access &&
	    addr >= mw->iova && len <= mw->length &&
	    addr - mw->iova <= mw->length - len) {
		mr = mw->mw_mr;
		/* Registered (mw_count keeps it so): users is not 0. */
		refcount_inc(&mr->users);
	}
	spin_unlock_irqrestore(&mw->lock, flags);
	return mr;
}
