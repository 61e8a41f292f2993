// SPDX-License-Identifier: GPL-2.0-only
/*
 * Completion queues.  The kernel writes CQEs into the ring; user space
 * polls it without a system call, kernel consumers through tbr_poll_cq().
 * Arming (req_notify) is a flag in the ring header that the producer
 * checks after each CQE.
 */
#include <linux/bottom_half.h>
#include <linux/preempt.h>

#include "tbrdma.h"

int tbr_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibcq->device);
	struct tbr_cq *cq = to_tcq(ibcq);
	struct tbrdma_create_cq_resp resp = {};
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > TBR_MAX_CQE)
		return -EINVAL;
	if (atomic_inc_return(&tdev->num_cq) > TBR_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&cq->lock);

	err = tbr_queue_alloc(&cq->queue, ibcq->device, udata, attr->cqe,
			      sizeof(struct tbrdma_cqe));
	if (err)
		goto err_count;
	if (!udata) {
		cq->slot_qp = kcalloc(cq->queue.num_slots,
				      sizeof(*cq->slot_qp), GFP_KERNEL);
		if (!cq->slot_qp) {
			err = -ENOMEM;
			goto err_queue;
		}
	}
	ibcq->cqe = cq->queue.num_slots;

	if (udata) {
		tbr_queue_info(&cq->queue, &resp.cq);
		err = tbr_respond(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	kfree(cq->slot_qp);
	tbr_queue_free(&cq->queue);
err_count:
	atomic_dec(&tdev->num_cq);
	return err;
}

/* The core refuses to destroy a CQ that QPs still use. */
int tbr_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct tbr_cq *cq = to_tcq(ibcq);

	kfree(cq->slot_qp);
	tbr_queue_free(&cq->queue);
	atomic_dec(&to_tdev(ibcq->device)->num_cq);
	return 0;
}

/*
 * Resize: the unconsumed CQEs move to the new ring at the same counter
 * values, so user space keeps its consumer counter as it is.
 */
int tbr_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct tbr_cq *cq = to_tcq(ibcq);
	struct tbrdma_create_cq_resp resp = {};
	struct tbr_queue fresh, old;
	struct ib_qp **slot_qp = NULL, **old_slot_qp;
	unsigned long flags;
	u32 cons, i;
	int err, used;

	if (cqe < 1 || cqe > TBR_MAX_CQE)
		return -EINVAL;
	err = tbr_queue_alloc(&fresh, ibcq->device, udata, cqe,
			      sizeof(struct tbrdma_cqe));
	if (err)
		return err;
	if (cq->slot_qp) {
		slot_qp = kcalloc(fresh.num_slots, sizeof(*slot_qp), GFP_KERNEL);
		if (!slot_qp) {
			err = -ENOMEM;
			goto err_fresh;
		}
	}
	/*
	 * Tell user space about the new ring before switching to it: once
	 * switched, a failed copy would leave the process polling a ring the
	 * kernel no longer fills.  On any error below it keeps the old one.
	 */
	if (udata) {
		tbr_queue_info(&fresh, &resp.cq);
		err = tbr_respond(udata, &resp, sizeof(resp));
		if (err)
			goto err_fresh;
	}

	spin_lock_irqsave(&cq->lock, flags);
	used = cq->queue.num_slots - tbr_queue_space(&cq->queue);
	if (used < 0 || used > fresh.num_slots) {
		spin_unlock_irqrestore(&cq->lock, flags);
		err = -EINVAL;
		goto err_fresh;
	}
	cons = cq->queue.kidx - used;
	for (i = cons; i != cq->queue.kidx; i++) {
		memcpy(tbr_queue_slot(&fresh, i), tbr_queue_slot(&cq->queue, i),
		       sizeof(struct tbrdma_cqe));
		if (slot_qp)
			slot_qp[i & (fresh.num_slots - 1)] =
				cq->slot_qp[i & (cq->queue.num_slots - 1)];
	}
	fresh.kidx = cq->queue.kidx;
	fresh.hdr->producer = cq->queue.kidx;
	fresh.hdr->consumer = cons;
	fresh.hdr->flags = READ_ONCE(cq->queue.hdr->flags);
	old = cq->queue;
	old_slot_qp = cq->slot_qp;
	cq->queue = fresh;
	cq->slot_qp = slot_qp;
	ibcq->cqe = fresh.num_slots;
	spin_unlock_irqrestore(&cq->lock, flags);

	kfree(old_slot_qp);
	tbr_queue_free(&old);
	return 0;

err_fresh:
	kfree(slot_qp);
	tbr_queue_free(&fresh);
	return err;
}

static void tbr_cq_overflow(struct tbr_cq *cq)
{
	struct ib_event event = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&event, cq->ibcq.cq_context);
}

/* Raise the completion event if the consumer armed the CQ for this CQE. */
static void tbr_cq_notify(struct tbr_cq *cq, u32 arm, bool solicited)
{
	if (!(arm & TBRDMA_CQ_ARM_NEXT) &&
	    !((arm & TBRDMA_CQ_ARM_SOLICITED) && solicited))
		return;
	if (!xchg(&cq->queue.hdr->flags, 0))
		return;		/* someone else fired it */
	if (!cq->ibcq.comp_handler)
		return;
	/*
	 * A NIC calls the handler from its interrupt; from a thread (the
	 * send engine completing a local operation), keep bottom halves off
	 * around it, as the handler may expect, which also runs a softirq it
	 * raises (irq_poll, NAPI) in this thread as soon as it returns
	 * instead of waking ksoftirqd for it.
	 */
	if (in_interrupt() || irqs_disabled()) {
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		return;
	}
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

/*
 * Add one CQE.  Any context.  A full CQ (or a consumer counter user space
 * corrupted) is an overrun: the CQE is lost, the CQ reports IB_EVENT_CQ_ERR
 * once, and the caller puts its QP in error.
 */
int tbr_cq_post(struct tbr_cq *cq, const struct tbrdma_cqe *cqe,
		struct tbr_qp *qp, bool solicited)
{
	struct tbrdma_cqe *slot;
	unsigned long flags;
	bool first_overflow;
	u32 arm;

	spin_lock_irqsave(&cq->lock, flags);
	if (tbr_queue_space(&cq->queue) <= 0) {
		first_overflow = !cq->overflowed;
		cq->overflowed = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		if (first_overflow)
			tbr_cq_overflow(cq);
		return -EOVERFLOW;
	}
	slot = tbr_queue_slot(&cq->queue, cq->queue.kidx);
	memcpy(slot, cqe, sizeof(*cqe));
	/* User CQs only: ibv_wc_read_completion_ts() reads it. */
	if (!cq->slot_qp)
		slot->completion_ns = ktime_get_ns();
	if (cq->slot_qp)
		cq->slot_qp[cq->queue.kidx & (cq->queue.num_slots - 1)] =
			&qp->ibqp;
	tbr_queue_produce(&cq->queue);
	/* Read under the lock: resize swaps the ring. */
	arm = READ_ONCE(cq->queue.hdr->flags);
	spin_unlock_irqrestore(&cq->lock, flags);

	if (arm)
		tbr_cq_notify(cq, arm, solicited || cqe->status != IB_WC_SUCCESS);
	return 0;
}

static void tbr_cqe_to_wc(const struct tbrdma_cqe *cqe, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->port_num = TBR_PORT;
	if (cqe->wc_flags & TBRDMA_CQE_WITH_IMM) {
		wc->ex.imm_data = cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	}
	if (cqe->wc_flags & TBRDMA_CQE_WITH_INV) {
		wc->ex.invalidate_rkey = cqe->invalidate_rkey;
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (cqe->wc_flags & TBRDMA_CQE_GRH) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->network_hdr_type;
	}
}

/* Kernel consumers only: user CQs are polled in user space. */
int tbr_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct tbr_cq *cq = to_tcq(ibcq);
	struct tbr_queue *q = &cq->queue;
	unsigned long flags;
	int n = 0;

	if (!cq->slot_qp)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && q->hdr->consumer != q->kidx) {
		u32 cons = q->hdr->consumer;

		tbr_cqe_to_wc(tbr_queue_slot(q, cons), &wc[n]);
		wc[n].qp = cq->slot_qp[cons & (q->num_slots - 1)];
		q->hdr->consumer = cons + 1;
		n++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int tbr_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct tbr_cq *cq = to_tcq(ibcq);
	struct tbr_queue *q = &cq->queue;
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	q->hdr->flags |= (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
			 TBRDMA_CQ_ARM_SOLICITED : TBRDMA_CQ_ARM_NEXT;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && q->hdr->consumer != q->kidx)
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}
