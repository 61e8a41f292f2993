// SPDX-License-Identifier: GPL-2.0-only
/*
 * Receive queues: the RQ of a QP and the shared receive queue (SRQ) are the
 * same ring of receive WQEs.  User space posts to it without a system call;
 * the responder takes one WQE per incoming message that consumes one.
 */
#include "net.h"

int tbr_recvq_init(struct tbr_recvq *rq, struct ib_device *ibdev,
		   struct ib_udata *udata, u32 max_wr, u32 max_sge,
		   struct tbrdma_queue_info *info)
{
	int err;

	if (max_wr > TBR_MAX_QP_WR || max_sge > TBR_MAX_SGE)
		return -EINVAL;
	spin_lock_init(&rq->lock);
	rq->max_sge = max(max_sge, 1U);
	err = tbr_queue_alloc(&rq->queue, ibdev, udata, max_wr,
			      sizeof(struct tbrdma_recv_wqe) +
			      rq->max_sge * sizeof(struct tbrdma_sge));
	if (err)
		return err;
	if (info)
		tbr_queue_info(&rq->queue, info);
	return 0;
}

void tbr_recvq_destroy(struct tbr_recvq *rq)
{
	tbr_queue_free(&rq->queue);
}

/*
 * Consume the oldest WQE: copy the whole slot into @wqe, or, when @wqe is
 * NULL (flushing), only its wr_id into @wr_id, which needs no scratch
 * buffer and so can run beside the engine.  Returns how many remain,
 * -ENOENT when there is none, -EIO when user space corrupted the producer
 * counter.
 */
static int tbr_recvq_pop(struct tbr_recvq *rq, struct tbrdma_recv_wqe *wqe,
			 u64 *wr_id)
{
	struct tbr_queue *q = &rq->queue;
	struct tbrdma_recv_wqe *slot;
	unsigned long flags;
	int ready;

	spin_lock_irqsave(&rq->lock, flags);
	ready = tbr_queue_ready(q);
	if (ready > 0) {
		slot = tbr_queue_slot(q, q->kidx);
		if (wqe)
			memcpy(wqe, slot, q->slot_size);
		else
			*wr_id = READ_ONCE(slot->wr_id);
		tbr_queue_consume(q);
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	if (ready <= 0)
		return ready ? ready : -ENOENT;
	return ready - 1;
}

/*
 * Take the oldest receive WQE into @wqe (slot_size bytes).  Returns what
 * tbr_recvq_pop() does, or -EINVAL when the WQE itself is malformed (it is
 * consumed: it completes in error).
 */
int tbr_recvq_take(struct tbr_recvq *rq, struct tbrdma_recv_wqe *wqe)
{
	int left = tbr_recvq_pop(rq, wqe, NULL);

	/* Checked on our copy: user space may rewrite the slot any time. */
	if (left >= 0 && wqe->num_sge > rq->max_sge)
		return -EINVAL;
	return left;
}

/* Consume the oldest WQE reading only its wr_id, for flushing. */
int tbr_recvq_drop(struct tbr_recvq *rq, u64 *wr_id)
{
	return tbr_recvq_pop(rq, NULL, wr_id);
}

/* Kernel consumers: write WQEs the way the provider does in user space. */
int tbr_recvq_post(struct tbr_recvq *rq, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct tbr_queue *q = &rq->queue;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&rq->lock, flags);
	for (; wr; wr = wr->next) {
		struct tbrdma_recv_wqe *wqe;
		struct tbrdma_sge *sge;
		int i;

		if (wr->num_sge > rq->max_sge) {
			err = -EINVAL;
			break;
		}
		if (tbr_kqueue_full(q)) {
			err = -ENOMEM;
			break;
		}
		wqe = tbr_kqueue_next_slot(q);
		sge = (struct tbrdma_sge *)(wqe + 1);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		tbr_kqueue_publish(q);
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/*
 * XRC domains carry nothing of ours: the core tracks their SRQs and TGT
 * QPs, and the responder compares the domain pointers.
 */
int tbr_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

int tbr_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

/* An XRC SRQ gets the number XRC_INI QPs' requests name. */
static int tbr_srq_alloc_number(struct tbr_dev *tdev, struct tbr_srq *srq)
{
	int err;

	err = xa_alloc_cyclic_irq(&tdev->srq_xa, &srq->srqn, NULL,
				  XA_LIMIT(1, TBR_MAX_SRQ), &tdev->srq_next,
				  GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	srq->ibsrq.ext.xrc.srq_num = srq->srqn;
	return 0;
}

int tbr_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibsrq->device);
	struct tbr_srq *srq = to_tsrq(ibsrq);
	struct tbrdma_create_srq_resp resp = {};
	bool xrc = init->srq_type == IB_SRQT_XRC;
	int err;

	if (init->srq_type != IB_SRQT_BASIC && !xrc)
		return -EOPNOTSUPP;
	if (xrc && (!init->ext.cq || !init->ext.xrc.xrcd))
		return -EINVAL;
	if (!init->attr.max_wr || init->attr.max_wr > TBR_MAX_SRQ_WR ||
	    init->attr.srq_limit > init->attr.max_wr)
		return -EINVAL;
	if (atomic_inc_return(&tdev->num_srq) > TBR_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}
	err = tbr_recvq_init(&srq->rq, ibsrq->device, udata, init->attr.max_wr,
			     init->attr.max_sge, &resp.srq);
	if (err)
		goto err_count;
	srq->limit = init->attr.srq_limit;
	srq->pdn = to_tpd(ibsrq->pd)->pdn;
	refcount_set(&srq->users, 1);
	init_completion(&srq->released);
	init->attr.max_wr = srq->rq.queue.num_slots;
	init->attr.max_sge = srq->rq.max_sge;
	if (xrc) {
		err = tbr_srq_alloc_number(tdev, srq);
		if (err)
			goto err_queue;
	}

	if (udata) {
		err = tbr_respond(udata, &resp, sizeof(resp));
		if (err)
			goto err_number;
	}
	/* Visible to the responder from here on. */
	if (xrc)
		xa_store_irq(&tdev->srq_xa, srq->srqn, srq, GFP_KERNEL);
	return 0;

err_number:
	if (xrc)
		xa_erase_irq(&tdev->srq_xa, srq->srqn);
err_queue:
	tbr_recvq_destroy(&srq->rq);
err_count:
	atomic_dec(&tdev->num_srq);
	return err;
}

/*
 * An XRC SRQ by the number a request named, held (tbr_srq_put), if @tgt
 * may use it: it must be an XRC SRQ of @tgt's XRC domain.  NULL otherwise.
 */
struct tbr_srq *tbr_srq_get_xrc(struct tbr_qp *tgt, u32 srqn)
{
	struct tbr_dev *tdev = tgt->tdev;
	unsigned long flags;
	struct tbr_srq *srq;

	/* Under the xarray lock, as tbr_qp_get(): destroy waits for us. */
	xa_lock_irqsave(&tdev->srq_xa, flags);
	srq = xa_load(&tdev->srq_xa, srqn);
	if (srq && !refcount_inc_not_zero(&srq->users))
		srq = NULL;
	xa_unlock_irqrestore(&tdev->srq_xa, flags);
	if (!srq)
		return NULL;
	if (srq->ibsrq.srq_type != IB_SRQT_XRC ||
	    srq->ibsrq.ext.xrc.xrcd != tgt->ibqp.xrcd) {
		tbr_srq_put(srq);
		return NULL;
	}
	return srq;
}

void tbr_srq_put(struct tbr_srq *srq)
{
	if (refcount_dec_and_test(&srq->users))
		complete(&srq->released);
}

/* Resizing is not supported (query_device does not claim it); the limit is. */
int tbr_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct tbr_srq *srq = to_tsrq(ibsrq);
	unsigned long flags;

	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;
	if (attr->srq_limit > srq->rq.queue.num_slots)
		return -EINVAL;
	spin_lock_irqsave(&srq->rq.lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return 0;
}

int tbr_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct tbr_srq *srq = to_tsrq(ibsrq);

	attr->max_wr = srq->rq.queue.num_slots;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/*
 * The core refuses to destroy an SRQ that QPs still use; XRC SRQs are
 * used by number, by whichever TGT QP a request arrives at.
 */
int tbr_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct tbr_srq *srq = to_tsrq(ibsrq);

	if (ibsrq->srq_type == IB_SRQT_XRC) {
		struct tbr_dev *tdev = to_tdev(ibsrq->device);

		/*
		 * No new message finds it; wait for those being delivered, and
		 * end the SENDs a peer left half sent into it (a lookup that
		 * was under way may still start one: look again until none).
		 */
		xa_erase_irq(&tdev->srq_xa, srq->srqn);
		if (!refcount_dec_and_test(&srq->users)) {
			do {
				tbr_net_srq_gone(tdev, srq);
			} while (!wait_for_completion_timeout(&srq->released,
							      HZ / 10));
		}
	}
	tbr_recvq_destroy(&srq->rq);
	atomic_dec(&to_tdev(ibsrq->device)->num_srq);
	return 0;
}

int tbr_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	return tbr_recvq_post(&to_tsrq(ibsrq)->rq, wr, bad_wr);
}

/*
 * After a WQE was taken: once fewer than the armed limit remain, raise
 * IB_EVENT_SRQ_LIMIT_REACHED once and disarm, as the verbs spec says.
 */
void tbr_srq_check_limit(struct tbr_srq *srq, int remaining)
{
	struct ib_event event = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};
	unsigned long flags;
	bool fire;

	spin_lock_irqsave(&srq->rq.lock, flags);
	fire = srq->limit && remaining < srq->limit;
	if (fire)
		srq->limit = 0;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	if (fire && srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&event, srq->ibsrq.srq_context);
}
