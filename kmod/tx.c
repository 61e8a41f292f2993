// SPDX-License-Identifier: GPL-2.0-only
/*
 * The send engine: takes WQEs from a QP's send queue in order, copies each
 * out of the ring before looking at it, validates it, resolves its local
 * keys, hands the message to the transport and writes the requester's
 * completion.  A user doorbell runs the engine in the calling thread (the
 * lowest latency), and so does a kernel consumer's post from a thread that
 * may sleep (post.c); other kernel posts, state changes and RNR timers run
 * it from a workqueue.  One thread at a time runs a QP's engine.
 */
#include <linux/sched.h>

#include "net.h"
#include "timers.h"

/* An answer the responder cannot give yet: wait, then execute again. */
#define TBR_TX_RNR_WAIT		(-1)
/* No answer at all (loopback XRC): wait the ACK timeout, then again. */
#define TBR_TX_ACK_WAIT		(-2)

static bool tbr_opcode_allowed(const struct tbr_qp *qp, u32 opcode)
{
	enum ib_qp_type type = qp->ibqp.qp_type;

	/* An XRC_INI QP is an RC requester; an XRC_TGT QP never sends. */
	if (type == IB_QPT_XRC_TGT)
		return false;
	if (type == IB_QPT_XRC_INI)
		type = IB_QPT_RC;
	switch (opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return true;
	/* Fast registration: kernel consumers' connected QPs. */
	case TBRDMA_WR_REG_MR:
		return !qp->is_user && (qp->ibqp.qp_type == IB_QPT_RC ||
					qp->ibqp.qp_type == IB_QPT_UC);
	/*
	 * Invalidation (fast-registration MRs, type 2 windows) and binding:
	 * RC and UC QPs, not XRC ones.
	 */
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_BIND_MW:
		return qp->ibqp.qp_type == IB_QPT_RC ||
		       qp->ibqp.qp_type == IB_QPT_UC;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case TBRDMA_WR_ATOMIC_WRITE:
		return type == IB_QPT_RC;
	default:
		return false;
	}
}

static enum ib_wc_opcode tbr_wc_opcode(u32 opcode)
{
	switch (opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case TBRDMA_WR_ATOMIC_WRITE:	/* user QPs only: 6.1 has no name for it */
		return (enum ib_wc_opcode)TBRDMA_WC_ATOMIC_WRITE;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case TBRDMA_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return IB_WC_SEND;
	}
}

static enum ib_wc_status tbr_resp_status(enum tbr_resp resp)
{
	switch (resp) {
	case TBR_RESP_OK:
	case TBR_RESP_DROPPED:		/* UC/UD: unreliable by definition */
		return IB_WC_SUCCESS;
	case TBR_RESP_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case TBR_RESP_REM_INV:
		return IB_WC_REM_INV_REQ_ERR;
	case TBR_RESP_REM_OP:
		return IB_WC_REM_OP_ERR;
	case TBR_RESP_RNR:
		return IB_WC_RNR_RETRY_EXC_ERR;
	case TBR_RESP_NO_QP:
	default:
		return IB_WC_RETRY_EXC_ERR;
	}
}

/* The local memory of the WQE: inline bytes or SGEs resolved to MRs. */
static enum ib_wc_status tbr_tx_local(struct tbr_qp *qp,
				      struct tbrdma_send_wqe *wqe,
				      struct tbr_sgl *local)
{
	bool reads_in = wqe->opcode == IB_UVERBS_WR_RDMA_READ ||
			wqe->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
			wqe->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;

	/* ATOMIC_WRITE: its 8 bytes are inline, whatever max_inline says. */
	if (wqe->opcode == TBRDMA_WR_ATOMIC_WRITE) {
		if (!(wqe->send_flags & TBRDMA_WQE_INLINE) ||
		    wqe->inline_len != sizeof(u64))
			return IB_WC_LOC_LEN_ERR;
		tbr_sgl_kernel(local, wqe + 1, sizeof(u64));
		return IB_WC_SUCCESS;
	}
	if (wqe->send_flags & TBRDMA_WQE_INLINE) {
		if (reads_in || wqe->inline_len > qp->max_inline)
			return IB_WC_LOC_QP_OP_ERR;
		tbr_sgl_kernel(local, wqe + 1, wqe->inline_len);
		return IB_WC_SUCCESS;
	}
	if (wqe->num_sge > qp->max_send_sge)
		return IB_WC_LOC_QP_OP_ERR;
	return tbr_sgl_resolve(local, qp->tdev, qp->pdn,
			       (struct tbrdma_sge *)(wqe + 1), wqe->num_sge,
			       reads_in ? IB_ACCESS_LOCAL_WRITE : 0,
			       TBR_SGL_ALL);
}

/* Fill @msg for a UD send; false when the AH is not usable by this QP. */
static bool tbr_tx_ud(struct tbr_qp *qp, struct tbrdma_send_wqe *wqe,
		      struct tbr_msg *msg, struct tbr_ah_info *ah)
{
	if (!tbr_ah_lookup(qp->tdev, wqe->wr.ud.ah, qp->pdn, ah))
		return false;
	msg->ah = ah;
	/* A Q_Key with the high bit set means "use the QP's own". */
	msg->qkey = (wqe->wr.ud.remote_qkey & 0x80000000) ? READ_ONCE(qp->qkey) :
							    wqe->wr.ud.remote_qkey;
	return true;
}

/* The longest datagram a UD QP of this device can send. */
u32 tbr_tx_ud_max(struct tbr_dev *tdev)
{
	u32 max = ib_mtu_enum_to_int(IB_MTU_4096);

	if (tdev->mode == TBRDMA_MODE_LOOPBACK)
		return max;
	return min(max, tbr_net_max_payload(tdev, TBR_OP_SEND,
					    TBR_TRANSPORT_UD));
}

/*
 * Check @wqe and describe it in @msg as one whole message.  On success the
 * local keys are held in @local (the caller puts them); on failure nothing
 * is held and the completion status is returned.
 */
enum ib_wc_status tbr_tx_prepare(struct tbr_qp *qp,
				 struct tbrdma_send_wqe *wqe,
				 struct tbr_msg *msg, struct tbr_sgl *local,
				 struct tbr_ah_info *ah, u32 *dst_qpn)
{
	enum ib_wc_status status;

	*msg = (struct tbr_msg) {
		.opcode = wqe->opcode,
		.solicited = wqe->send_flags & TBRDMA_WQE_SOLICITED,
		.imm_data = wqe->imm_data,
		.src_qpn = qp->ibqp.qp_num,
		.first = true,
		.last = true,
		/* XRC_INI: every request names the SRQ at the responder. */
		.xrc_srqn = qp->ibqp.qp_type == IB_QPT_XRC_INI ?
			    wqe->xrc_remote_srqn : 0,
	};
	if (!tbr_opcode_allowed(qp, wqe->opcode) ||
	    tbr_tx_is_local_op(wqe->opcode))
		return IB_WC_LOC_QP_OP_ERR;
	status = tbr_tx_local(qp, wqe, local);
	if (status != IB_WC_SUCCESS)
		return status;
	msg->length = local->total;

	if (tbr_qp_is_datagram(qp)) {
		status = IB_WC_LOC_QP_OP_ERR;
		if (!tbr_tx_ud(qp, wqe, msg, ah))
			goto err;
		status = IB_WC_LOC_LEN_ERR;
		if (msg->length > tbr_tx_ud_max(qp->tdev))
			goto err;
		*dst_qpn = wqe->wr.ud.remote_qpn;
	} else {
		*dst_qpn = READ_ONCE(qp->dest_qpn);
	}

	switch (wqe->opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
	case IB_UVERBS_WR_RDMA_READ:
	case TBRDMA_WR_ATOMIC_WRITE:
		msg->remote_addr = wqe->wr.rdma.remote_addr;
		msg->rkey = wqe->wr.rdma.rkey;
		break;
	case IB_UVERBS_WR_SEND_WITH_INV:
		msg->rkey = wqe->wr.inv.rkey;	/* the peer's key to invalidate */
		break;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		status = IB_WC_LOC_LEN_ERR;
		if (msg->length < sizeof(u64))
			goto err;
		msg->length = sizeof(u64);
		msg->remote_addr = wqe->wr.atomic.remote_addr;
		msg->rkey = wqe->wr.atomic.rkey;
		msg->compare_add = wqe->wr.atomic.compare_add;
		msg->swap = wqe->wr.atomic.swap;
		break;
	}
	msg->total = msg->length;
	return IB_WC_SUCCESS;
err:
	tbr_sgl_put(local);
	return status;
}

/* Work requests that act on this device only: nothing goes to the peer. */
bool tbr_tx_is_local_op(u32 opcode)
{
	return opcode == TBRDMA_WR_REG_MR || opcode == IB_UVERBS_WR_LOCAL_INV ||
	       opcode == IB_UVERBS_WR_BIND_MW;
}

/* Execute a local operation (REG_MR, LOCAL_INV, BIND_MW): its status. */
enum ib_wc_status tbr_tx_local_op(struct tbr_qp *qp,
				  const struct tbrdma_send_wqe *wqe)
{
	if (!tbr_opcode_allowed(qp, wqe->opcode))
		return IB_WC_LOC_QP_OP_ERR;
	if (wqe->opcode == TBRDMA_WR_REG_MR)
		return tbr_mr_fast_reg(qp->tdev, qp->pdn, wqe->wr.reg.key,
				       wqe->wr.reg.access, wqe->wr.reg.iova,
				       wqe->wr.reg.length);
	if (wqe->opcode == IB_UVERBS_WR_BIND_MW)
		return tbr_mw_bind(qp, wqe);
	return tbr_mr_invalidate(qp->tdev, qp->pdn, qp->ibqp.qp_num,
				 wqe->wr.inv.rkey, false);
}

/* Execute one WQE at once: a completion status, or TBR_TX_RNR_WAIT. */
static int tbr_tx_execute(struct tbr_qp *qp, struct tbrdma_send_wqe *wqe,
			  u32 *byte_len)
{
	struct tbr_xfer *xfer = qp->xfer;
	enum ib_wc_status status;
	struct tbr_ah_info ah;
	struct tbr_msg msg;
	enum tbr_resp resp;
	u32 dst_qpn;

	if (tbr_tx_is_local_op(wqe->opcode))
		return tbr_tx_local_op(qp, wqe);

	status = tbr_tx_prepare(qp, wqe, &msg, &xfer->local, &ah, &dst_qpn);
	if (status != IB_WC_SUCCESS)
		return status;
	msg.xfer = xfer;

	if (qp->net)
		resp = tbr_net_send_unreliable(qp, dst_qpn, &msg);
	else
		resp = tbr_loopback_deliver(qp, dst_qpn, &msg);
	if (resp == TBR_RESP_RNR) {
		tbr_sgl_put(&xfer->local);
		return TBR_TX_RNR_WAIT;
	}
	/*
	 * Nobody took the request: the QP is gone, not connected yet, or not
	 * receiving.  On a network the request would go unanswered and be
	 * resent after the ACK timeout, retry_cnt times, before the WQE
	 * fails; do the same here.  An XRC receive QP is often connected
	 * last, by another process (ibv_xsrq_pingpong's clients); a peer
	 * that has finished may have destroyed the QP an extra message of
	 * ibv_srq_pingpong's goes to, and the sender, still polling, must
	 * not see that fail before it would on a wire.
	 */
	if (resp == TBR_RESP_NO_QP) {
		tbr_sgl_put(&xfer->local);
		return TBR_TX_ACK_WAIT;
	}
	status = tbr_resp_status(resp);
	if (status == IB_WC_SUCCESS && msg.length == sizeof(u64) &&
	    (wqe->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	     wqe->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD)) {
		struct tbr_sgl orig;

		tbr_sgl_kernel(&orig, &xfer->atomic_orig, sizeof(u64));
		tbr_sgl_copy(&xfer->local, 0, &orig, sizeof(u64));
	}
	*byte_len = msg.length;
	tbr_sgl_put(&xfer->local);
	return status;
}

/*
 * The SQ's oldest WQE is done: free its slot, then write its completion
 * (an error always, a success if the WQE or the QP asked for one).  In
 * that order: a poller that sees the CQE may post again at once (perftest's
 * latency tests and the pingpongs run a one-slot SQ).  The caller passes
 * what it needs of the WQE, which user space may now overwrite.
 */
void tbr_tx_retire(struct tbr_qp *qp, u64 wr_id, u32 opcode,
		   enum ib_wc_status status, u32 byte_len, bool signaled)
{
	struct tbrdma_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = tbr_wc_opcode(opcode),
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
	};

	tbr_queue_consume(&qp->sq);
	if (status == IB_WC_SUCCESS && !signaled && !qp->sq_sig_all)
		return;
	if (tbr_cq_post(tbr_qp_scq(qp), &cqe, qp, false))
		tbr_qp_set_error(qp);	/* CQ overrun */
}

/* A failed WQE: RC and XRC QPs go to error, UC/UD QPs to send queue error. */
void tbr_tx_fail(struct tbr_qp *qp)
{
	unsigned long flags;

	if (tbr_qp_is_reliable(qp)) {
		tbr_qp_set_error(qp);
		return;
	}
	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state == IB_QPS_RTS)
		qp->state = IB_QPS_SQE;
	spin_unlock_irqrestore(&qp->state_lock, flags);
}

/*
 * The head WQE got an RNR NAK: wait and retry, or give up.  Each refusal
 * in a row doubles the wait (tbr_rnr_backoff_us()); every refusal counts
 * against rnr_retry.
 */
static bool tbr_tx_rnr(struct tbr_qp *qp)
{
	unsigned int us;

	if (qp->rnr_retry != TBR_RNR_RETRY_INFINITE) {
		if (!qp->rnr_left)
			return false;
		qp->rnr_left--;
	}
	us = tbr_rnr_backoff_us(tbr_rnr_timer_us(qp->min_rnr_timer),
				qp->rnr_backoff);
	if (qp->rnr_backoff < TBR_RNR_BACKOFF_SHIFT_MAX)
		qp->rnr_backoff++;
	qp->rnr_wait = true;
	hrtimer_start(&qp->rnr_timer, ns_to_ktime((u64)us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
	return true;
}

/* Loopback XRC: nobody answered the head WQE; wait and retry, or give up. */
static bool tbr_tx_ack_timeout(struct tbr_qp *qp)
{
	u64 us = tbr_ack_timeout_us(qp->timeout);

	if (!us || !qp->retry_left)
		return false;
	qp->retry_left--;
	qp->rnr_wait = true;	/* the same timer and wait as for an RNR */
	hrtimer_start(&qp->rnr_timer, ns_to_ktime(us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
	return true;
}

/*
 * Copy the WQE in SQ slot @slot to @wqe, the engine's private copy: from
 * here on only the copy is looked at, so user space cannot change a field
 * after it was checked.  Only the header and what it says follows (the
 * SGEs or the inline bytes, at most the rest of the slot) are copied: a
 * 2-byte send costs a 50-byte copy, not a whole slot of up to 560 bytes.
 * A WQE claiming more than its slot holds fails its checks on the copy.
 */
void tbr_tx_copy_wqe(struct tbr_qp *qp, u32 slot, struct tbrdma_send_wqe *wqe)
{
	const struct tbrdma_send_wqe *src = tbr_queue_slot(&qp->sq, slot);
	u64 room = qp->sq.slot_size - sizeof(*wqe);
	u64 body;

	memcpy(wqe, src, sizeof(*wqe));
	if (wqe->send_flags & TBRDMA_WQE_INLINE)
		body = wqe->inline_len;
	else
		body = (u64)wqe->num_sge * sizeof(struct tbrdma_sge);
	memcpy(wqe + 1, src + 1, min(body, room));
}

/* Complete every WQE left in the SQ with a flush error (QP in ERR or SQE). */
void tbr_tx_flush_one(struct tbr_qp *qp)
{
	struct tbrdma_send_wqe *slot = tbr_queue_slot(&qp->sq, qp->sq.kidx);

	tbr_tx_retire(qp, READ_ONCE(slot->wr_id), READ_ONCE(slot->opcode),
		      IB_WC_WR_FLUSH_ERR, 0, true);
}

void tbr_tx_sq_drained(struct tbr_qp *qp)
{
	unsigned long flags;
	bool notify;

	spin_lock_irqsave(&qp->state_lock, flags);
	notify = qp->state == IB_QPS_SQD && qp->sq_drained_notify;
	if (notify)
		qp->sq_drained_notify = false;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (notify)
		tbr_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/*
 * Is there a WQE to act on?  When the SQ looks empty, clear KERNEL_ACTIVE
 * and look once more: user space publishes its producer before it reads
 * the flag, so either we see its WQE now or it sees the flag clear and
 * rings the doorbell.
 */
static int tbr_tx_next(struct tbr_qp *qp)
{
	struct tbrdma_queue_hdr *hdr = qp->sq.hdr;
	int ready = tbr_queue_ready(&qp->sq);

	if (ready)
		return ready;
	WRITE_ONCE(hdr->flags, 0);
	/* Flag store before producer load; user space does the mirror image. */
	smp_mb();
	ready = tbr_queue_ready(&qp->sq);
	if (ready)
		WRITE_ONCE(hdr->flags, TBRDMA_SQ_FLAG_KERNEL_ACTIVE);
	return ready;
}

static void tbr_tx_process(struct tbr_qp *qp)
{
	struct tbrdma_send_wqe *wqe = qp->wqe;
	enum ib_qp_state state;
	u32 byte_len;
	int ready, status;

	if (READ_ONCE(qp->destroyed) || qp->rnr_wait)
		return;
	if (qp->net && READ_ONCE(qp->state) == IB_QPS_ERR)
		tbr_net_qp_error(qp);
	if (qp->net && tbr_qp_is_reliable(qp)) {
		tbr_net_req_process(qp);	/* WQEs complete on ACKs */
		return;
	}
	WRITE_ONCE(qp->sq.hdr->flags, TBRDMA_SQ_FLAG_KERNEL_ACTIVE);

	for (;;) {
		ready = tbr_tx_next(qp);
		if (ready < 0) {	/* user space corrupted the producer */
			WRITE_ONCE(qp->sq.hdr->flags, 0);
			tbr_qp_event(qp, IB_EVENT_QP_FATAL);
			tbr_qp_set_error(qp);
			return;
		}
		if (!ready || READ_ONCE(qp->destroyed))
			break;

		state = READ_ONCE(qp->state);
		if (state == IB_QPS_ERR || state == IB_QPS_SQE) {
			tbr_tx_flush_one(qp);
			continue;
		}
		if (state != IB_QPS_RTS)	/* not yet ready, or draining */
			break;

		tbr_tx_copy_wqe(qp, qp->sq.kidx, wqe);
		byte_len = 0;
		status = tbr_tx_execute(qp, wqe, &byte_len);
		tbr_count(qp->tdev, TBR_CNT_TX_OPS, 1);
		if (status == TBR_TX_RNR_WAIT) {
			if (tbr_tx_rnr(qp))
				return;		/* KERNEL_ACTIVE stays set */
			status = IB_WC_RNR_RETRY_EXC_ERR;
		}
		if (status == TBR_TX_ACK_WAIT) {
			if (tbr_tx_ack_timeout(qp))
				return;
			status = IB_WC_RETRY_EXC_ERR;
		}
		qp->rnr_left = qp->rnr_retry;
		qp->rnr_backoff = 0;
		qp->retry_left = qp->retry_cnt;
		tbr_tx_retire(qp, wqe->wr_id, wqe->opcode, status, byte_len,
			      wqe->send_flags & TBRDMA_WQE_SIGNALED);
		if (status != IB_WC_SUCCESS)
			tbr_tx_fail(qp);
		cond_resched();
	}
	WRITE_ONCE(qp->sq.hdr->flags, 0);
	tbr_tx_sq_drained(qp);
}

/*
 * Run the engine, in process context.  Whoever finds it running leaves a
 * PENDING mark, and the running thread goes round once more before it
 * lets go, so no request is ever left behind.
 */
void tbr_tx_kick(struct tbr_qp *qp)
{
	set_bit(TBR_TX_PENDING, &qp->tx_flags);
	while (!test_and_set_bit_lock(TBR_TX_RUNNING, &qp->tx_flags)) {
		clear_bit(TBR_TX_PENDING, &qp->tx_flags);
		tbr_tx_process(qp);
		clear_bit_unlock(TBR_TX_RUNNING, &qp->tx_flags);
		/* RUNNING cleared before PENDING read; kickers do the reverse. */
		smp_mb__after_atomic();
		if (!test_bit(TBR_TX_PENDING, &qp->tx_flags))
			break;
	}
}

void tbr_tx_schedule(struct tbr_qp *qp)
{
	if (!READ_ONCE(qp->destroyed))
		queue_work(tbr_wq, &qp->tx_work);
}

static void tbr_tx_work(struct work_struct *work)
{
	tbr_tx_kick(container_of(work, struct tbr_qp, tx_work));
}

/*
 * The RNR (or loopback ACK) wait is over.  A soft hrtimer: this runs in
 * softirq, so an RC QP on a network sends its probe from here, as the
 * receive path sends what an ACK lets go (net_req_tx.c); other QPs'
 * engines run in a thread.
 */
static enum hrtimer_restart tbr_tx_rnr_timer(struct hrtimer *timer)
{
	struct tbr_qp *qp = container_of(timer, struct tbr_qp, rnr_timer);

	if (qp->net && tbr_qp_is_reliable(qp)) {
		tbr_net_req_rnr_over(qp);
		return HRTIMER_NORESTART;
	}
	WRITE_ONCE(qp->rnr_wait, false);
	tbr_tx_schedule(qp);
	return HRTIMER_NORESTART;
}

void tbr_tx_init(struct tbr_qp *qp)
{
	INIT_WORK(&qp->tx_work, tbr_tx_work);
	hrtimer_setup(&qp->rnr_timer, tbr_tx_rnr_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
}

/* Destroy: after this the engine never runs again for @qp. */
void tbr_tx_stop(struct tbr_qp *qp)
{
	WRITE_ONCE(qp->destroyed, true);
	do {
		hrtimer_cancel(&qp->rnr_timer);
		/* It sends probes itself, and may hand work to the thread. */
		if (qp->net)
			timer_delete_sync(&qp->net->req.timer);
		cancel_work_sync(&qp->tx_work);
		while (test_bit(TBR_TX_RUNNING, &qp->tx_flags))
			cond_resched();
		/* A run that had started may have armed a timer again. */
	} while (hrtimer_active(&qp->rnr_timer) || work_pending(&qp->tx_work) ||
		 (qp->net && timer_pending(&qp->net->req.timer)));
}
