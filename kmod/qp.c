// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queue pairs: creation with their send and receive rings, the state
 * machine (RESET -> INIT -> RTR -> RTS -> SQD/SQE/ERR), and lookup by
 * number for the responder.  Which transitions and attribute masks are
 * legal is the core's table (ib_modify_qp_is_ok); the values are checked
 * here against what the device supports.
 */
#include "ah.h"
#include "net.h"
#include "timers.h"

/* Send WQE slots hold the header and either the SGEs or the inline data. */
static u32 tbr_sq_slot_size(u32 max_sge, u32 max_inline)
{
	return ALIGN(sizeof(struct tbrdma_send_wqe) +
		     max(max_sge * (u32)sizeof(struct tbrdma_sge), max_inline),
		     64);
}

static int tbr_qp_check_caps(struct tbr_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > TBR_MAX_QP_WR || cap->max_send_sge > TBR_MAX_SGE ||
	    cap->max_inline_data > TBR_MAX_INLINE)
		return -EINVAL;
	if (tbr_qp_has_rq(qp) && (cap->max_recv_wr > TBR_MAX_QP_WR ||
				  cap->max_recv_sge > TBR_MAX_SGE))
		return -EINVAL;
	return 0;
}

static int tbr_qp_alloc_number(struct tbr_dev *tdev, struct tbr_qp *qp)
{
	u32 qpn;
	int err;

	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		err = xa_insert_irq(&tdev->qp_xa, 1, NULL, GFP_KERNEL);
		qpn = 1;
	} else {
		/* QP numbers 0 and 1 are the special QPs. */
		err = xa_alloc_cyclic_irq(&tdev->qp_xa, &qpn, NULL,
					  XA_LIMIT(2, TBR_MAX_QP + 1),
					  &tdev->qp_next, GFP_KERNEL);
		if (err > 0)
			err = 0;
	}
	if (err)
		return err == -EBUSY ? -ENOMEM : err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

static int tbr_qp_alloc_queues(struct tbr_qp *qp, struct ib_qp_init_attr *init,
			       struct ib_udata *udata,
			       struct tbrdma_create_qp_resp *resp)
{
	struct ib_qp_cap *cap = &init->cap;
	int err;

	/*
	 * An XRC_TGT QP never sends: a one-slot kernel queue nobody posts to
	 * keeps the send engine's paths (error, reset, destroy) the same.
	 */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		memset(cap, 0, sizeof(*cap));
	qp->max_send_sge = max(cap->max_send_sge, 1U);
	err = tbr_queue_alloc(&qp->sq, qp->ibqp.device, udata,
			      cap->max_send_wr,
			      tbr_sq_slot_size(qp->max_send_sge,
					       cap->max_inline_data));
	if (err)
		return err;
	/* Whatever the slot has room for, up to the device limit. */
	qp->max_inline = min_t(u32, TBR_MAX_INLINE, qp->sq.slot_size -
			       sizeof(struct tbrdma_send_wqe));
	tbr_queue_info(&qp->sq, &resp->sq);
	resp->max_inline_data = qp->max_inline;

	if (tbr_qp_has_rq(qp)) {
		err = tbr_recvq_init(&qp->rq, qp->ibqp.device, udata,
				     cap->max_recv_wr, cap->max_recv_sge,
				     &resp->rq);
		if (err) {
			tbr_queue_free(&qp->sq);
			return err;
		}
		cap->max_recv_wr = qp->rq.queue.num_slots;
		cap->max_recv_sge = qp->rq.max_sge;
	}
	cap->max_send_wr = qp->sq.num_slots;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_inline_data = qp->max_inline;
	return 0;
}

int tbr_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibqp->device);
	struct tbr_qp *qp = to_tqp(ibqp);
	struct tbrdma_create_qp_resp resp = {};
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		break;
	case IB_QPT_XRC_INI:
		/* Its WQEs name the remote SRQ: only the user ABI has the field. */
		if (!udata || init->srq)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_TGT:
		/* The core creates it without PD, CQs or udata, for a domain. */
		if (!init->xrcd)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	qp->srq = init->srq ? to_tsrq(init->srq) : NULL;
	err = tbr_qp_check_caps(qp, init);
	if (err)
		return err;

	qp->tdev = tdev;
	/* XRC_TGT: none; its memory checks use the named SRQ's PD (rx.c). */
	qp->pdn = ibqp->pd ? to_tpd(ibqp->pd)->pdn : 0;
	qp->is_user = !!udata;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	spin_lock_init(&qp->state_lock);
	mutex_init(&qp->modify_lock);
	spin_lock_init(&qp->sq_post_lock);
	refcount_set(&qp->users, 1);
	init_completion(&qp->released);
	tbr_tx_init(qp);

	err = tbr_qp_alloc_number(tdev, qp);
	if (err)
		return err;
	err = tbr_qp_alloc_queues(qp, init, udata, &resp);
	if (err)
		goto err_number;
	err = -ENOMEM;
	qp->wqe = kmalloc(qp->sq.slot_size, GFP_KERNEL);
	qp->xfer = kmalloc(sizeof(*qp->xfer), GFP_KERNEL);
	if (!qp->wqe || !qp->xfer)
		goto err_queues;
	if (tdev->mode == TBRDMA_MODE_NETDEV) {
		err = tbr_net_qp_create(qp);
		if (err)
			goto err_queues;
	}

	if (udata) {
		err = tbr_respond(udata, &resp, sizeof(resp));
		if (err)
			goto err_net;
	}
	/* Visible to the responder from here on. */
	xa_store_irq(&tdev->qp_xa, ibqp->qp_num, qp, GFP_KERNEL);
	return 0;

err_net:
	tbr_net_qp_destroy(qp);
err_queues:
	kfree(qp->xfer);
	kfree(qp->wqe);
	if (tbr_qp_has_rq(qp))
		tbr_recvq_destroy(&qp->rq);
	tbr_queue_free(&qp->sq);
err_number:
	xa_erase_irq(&tdev->qp_xa, ibqp->qp_num);
	return err;
}

int tbr_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct tbr_qp *qp = to_tqp(ibqp);

	/* No new messages can find it; wait for those being delivered. */
	xa_erase_irq(&qp->tdev->qp_xa, ibqp->qp_num);
	if (!refcount_dec_and_test(&qp->users))
		wait_for_completion(&qp->released);
	tbr_tx_stop(qp);
	tbr_net_qp_destroy(qp);

	kfree(qp->xfer);
	kfree(qp->wqe);
	if (tbr_qp_has_rq(qp))
		tbr_recvq_destroy(&qp->rq);
	tbr_queue_free(&qp->sq);
	return 0;
}

struct tbr_qp *tbr_qp_get(struct tbr_dev *tdev, u32 qpn)
{
	unsigned long flags;
	struct tbr_qp *qp;

	/*
	 * Under the xarray lock, so destroy's xa_erase fences lookups: what
	 * it did not erase yet holds a reference it then waits for.
	 */
	xa_lock_irqsave(&tdev->qp_xa, flags);
	qp = xa_load(&tdev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->users))
		qp = NULL;
	xa_unlock_irqrestore(&tdev->qp_xa, flags);
	return qp;
}

void tbr_qp_put(struct tbr_qp *qp)
{
	if (refcount_dec_and_test(&qp->users))
		complete(&qp->released);
}

/*
 * Call @fn on every QP of @tdev, each held for the call (@fn may sleep);
 * one created or destroyed meanwhile may or may not be visited.
 */
void tbr_qp_for_each(struct tbr_dev *tdev, void (*fn)(struct tbr_qp *qp))
{
	unsigned long qpn;
	struct tbr_qp *qp;

	xa_for_each(&tdev->qp_xa, qpn, qp) {
		qp = tbr_qp_get(tdev, qpn);
		if (!qp)
			continue;
		fn(qp);
		tbr_qp_put(qp);
	}
}

void tbr_qp_event(struct tbr_qp *qp, enum ib_event_type type)
{
	struct ib_event event = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&event, qp->ibqp.qp_context);
}

/*
 * Enter the error state from anywhere (the responder, the engine, an
 * overrun CQ, modify_qp): receives are flushed now, sends by the engine.
 */
void tbr_qp_set_error(struct tbr_qp *qp)
{
	unsigned long flags;
	bool was_error;

	spin_lock_irqsave(&qp->state_lock, flags);
	was_error = qp->state == IB_QPS_ERR;
	qp->state = IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (was_error)
		return;

	if (qp->srq) {
		tbr_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	} else if (tbr_qp_has_rq(qp)) {
		WRITE_ONCE(qp->rq.queue.hdr->flags, TBRDMA_RQ_FLAG_FLUSH);
		tbr_rq_flush(qp);
	}
	tbr_tx_schedule(qp);
}

/*
 * RESET empties both queues without completions.  The state is already
 * RESET, so the engines take no new WQE; but the send queue's consumer
 * index belongs to whoever runs the send engine, and a run may be under
 * way: take that role while moving it, as the receive side's lock (and
 * on a network the requester's lock too: its receive path and timers
 * run the send loop and complete WQEs without the engine's role).
 */
static void tbr_qp_reset_queues(struct tbr_qp *qp)
{
	unsigned long flags;

	while (test_and_set_bit_lock(TBR_TX_RUNNING, &qp->tx_flags))
		cond_resched();
	if (qp->net)
		tbr_net_sq_discard(qp);
	else
		tbr_queue_discard(&qp->sq);
	qp->rnr_wait = false;
	qp->rnr_backoff = 0;
	clear_bit_unlock(TBR_TX_RUNNING, &qp->tx_flags);
	/* A kick that came meanwhile left its run to us: hand it on. */
	smp_mb__after_atomic();
	if (test_bit(TBR_TX_PENDING, &qp->tx_flags))
		tbr_tx_schedule(qp);

	if (tbr_qp_has_rq(qp)) {
		spin_lock_irqsave(&qp->rq.lock, flags);
		tbr_queue_discard(&qp->rq.queue);
		WRITE_ONCE(qp->rq.queue.hdr->flags, 0);
		spin_unlock_irqrestore(&qp->rq.lock, flags);
	}
}

static int tbr_qp_check_attr(struct tbr_qp *qp, struct ib_qp_attr *attr,
			     int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != TBR_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= TBR_PKEY_TABLE_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > TBR_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > TBR_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > 0xffffff)
		return -EINVAL;
	/*
	 * LOCAL_WRITE means nothing for a QP, but applications pass it.  So
	 * do the FLUSH rights (rdma-core's tests ask every RC QP for them):
	 * no FLUSH can leave or reach a QP of this device, and the memory it
	 * would reach is refused them (EOPNOTSUPP), so they grant nothing
	 * and are dropped (tbr_qp_apply_attr), as siw and mlx5 drop what
	 * they do not serve.  Bits no kernel defines are EINVAL.
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       TBR_ACCESS_NOT_OFFERED)))
		return -EINVAL;
	if ((mask & IB_QP_AV) && attr->ah_attr.type != RDMA_AH_ATTR_TYPE_ROCE)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		int err = tbr_av_check(to_tdev(qp->ibqp.device),
				       &rdma_ah_read_grh(&attr->ah_attr)->dgid,
				       attr->ah_attr.roce.dmac);

		if (err)
			return err;
	}
	if ((mask & IB_QP_CAP) &&
	    (attr->cap.max_send_wr > qp->sq.num_slots ||
	     attr->cap.max_recv_wr > (tbr_qp_has_rq(qp) ?
				      qp->rq.queue.num_slots : 0)))
		return -EINVAL;		/* resizing a QP is not supported */
	return 0;
}

static void tbr_qp_apply_attr(struct tbr_qp *qp, struct ib_qp_attr *attr,
			      int mask)
{
	if (mask & IB_QP_QKEY)
		WRITE_ONCE(qp->qkey, attr->qkey);
	if (mask & IB_QP_DEST_QPN)
		WRITE_ONCE(qp->dest_qpn, attr->dest_qp_num);
	if (mask & IB_QP_ACCESS_FLAGS)
		WRITE_ONCE(qp->access,
			   attr->qp_access_flags & ~TBR_ACCESS_NOT_OFFERED);
	if (mask & IB_QP_PATH_MTU)
		qp->path_mtu = attr->path_mtu;
	if (mask & IB_QP_AV)
		qp->av = attr->ah_attr;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_RNR_RETRY) {
		qp->rnr_retry = attr->rnr_retry;
		qp->rnr_left = attr->rnr_retry;
		qp->rnr_backoff = 0;
	}
	if (mask & IB_QP_RETRY_CNT) {
		qp->retry_cnt = attr->retry_cnt;
		qp->retry_left = attr->retry_cnt;
	}
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		qp->sq_drained_notify = attr->en_sqd_async_notify;
}

int tbr_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	enum ib_qp_state cur, next;
	unsigned long flags;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	/* One transition at a time: its work outside state_lock included. */
	mutex_lock(&qp->modify_lock);
	spin_lock_irqsave(&qp->state_lock, flags);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	if (cur != qp->state ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out;
	err = tbr_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;
	tbr_qp_apply_attr(qp, attr, mask);
	if (next != IB_QPS_ERR)
		qp->state = next;
out:
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (err)
		goto unlock;

	if (next == IB_QPS_RESET)
		tbr_qp_reset_queues(qp);
	if (cur != next)
		tbr_net_qp_start(qp, next);
	if (next == IB_QPS_ERR)
		tbr_qp_set_error(qp);
	else if (next == IB_QPS_RTS || next == IB_QPS_SQD)
		tbr_tx_schedule(qp);	/* start, or drain and notify */
unlock:
	mutex_unlock(&qp->modify_lock);
	return err;
}

int tbr_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&qp->state_lock, flags);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access;
	attr->ah_attr = qp->av;
	attr->port_num = TBR_PORT;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->rnr_retry = qp->rnr_retry;
	attr->retry_cnt = qp->retry_cnt;
	attr->timeout = qp->timeout;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->en_sqd_async_notify = qp->sq_drained_notify;
	attr->sq_draining = qp->state == IB_QPS_SQD &&
			    tbr_queue_ready(&qp->sq) > 0;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	attr->cap.max_send_wr = qp->sq.num_slots;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	if (tbr_qp_has_rq(qp)) {
		attr->cap.max_recv_wr = qp->rq.queue.num_slots;
		attr->cap.max_recv_sge = qp->rq.max_sge;
	}
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->xrcd = ibqp->xrcd;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}
