// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RC requester, receive direction: ACKs, NAKs and READ/atomic
 * responses arriving in softirq mark WQEs done; done WQEs complete
 * strictly in order, here, in the receive path.  A sequence NAK sends
 * everything again from the PSN it names (go-back-N; the responder
 * recognises what it has already executed).  An RNR NAK waits
 * min_rnr_timer, longer after each refusal in a row, then sends the
 * refused frame alone and the rest of the window only once that probe
 * is acknowledged.  Whatever an answer lets go out next (room in the
 * window, a go-back, a lost answer asked for again) is sent from here
 * too, up to a budget (tbr_req_kick()): no RC progress waits for a
 * thread to be scheduled.
 */
#include "net_req.h"
#include "timers.h"

/* Complete the WQEs at the head that are done, in order. */
void tbr_req_advance(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;
	bool progress = false, failed = false;

	while (tbr_req_count(rq)) {
		struct tbr_inflight *e = tbr_req_at(rq, rq->head);

		if (!e->done)
			break;
		tbr_tx_retire(qp, e->wr_id, e->opcode, e->status,
			      e->status == IB_WC_SUCCESS ? e->length : 0,
			      e->signaled);
		tbr_sgl_put(&e->local);
		rq->head++;
		progress = true;
		if (e->status != IB_WC_SUCCESS) {
			failed = true;
			break;
		}
	}
	if (progress) {
		rq->retry_left = qp->retry_cnt;
		if (tbr_req_count(rq))
			tbr_req_arm(qp);
		else
			rq->timing = false;
	}
	if (failed) {
		tbr_tx_fail(qp);	/* RC: the QP goes to error */
		return;
	}
	/*
	 * Run the send loop again only when it waits for room, or to report
	 * a drained SQD; otherwise the next post's doorbell runs it.
	 */
	if (progress && (rq->blocked || (!tbr_req_count(rq) &&
					 READ_ONCE(qp->state) == IB_QPS_SQD))) {
		rq->blocked = false;
		rq->send_due = true;
	}
}

/*
 * Everything up to and including @psn arrived: SEND and WRITE are done.
 * True when that acknowledges something new.
 */
static bool tbr_req_acked(struct tbr_net_req *rq, u32 psn)
{
	u32 next = tbr_psn_add(psn, 1);
	bool news = false;
	u32 idx;

	/*
	 * Only what we sent can be acknowledged: an ACK beyond it is forged,
	 * and must not complete a WQE that never left.
	 */
	if (tbr_psn_before(rq->sent_high, next))
		return false;
	if (tbr_psn_before(rq->acked_psn, next)) {
		rq->acked_psn = next;
		news = true;
		tbr_req_rtt_acked(rq, next);
		/* Never send again what the responder confirmed. */
		if (tbr_psn_before(rq->send_psn, next))
			rq->send_psn = next;
		rq->probing = false;
		/*
		 * The responder took something new: RNR NAKs after this are a
		 * new refusal, with rnr_retry retries and the shortest wait
		 * again (rxe, too, restores its RNR retries on every ACK).
		 */
		rq->qp->rnr_left = rq->qp->rnr_retry;
		rq->qp->rnr_backoff = 0;
	}

	for (idx = rq->head; idx != rq->tail; idx++) {
		struct tbr_inflight *e = tbr_req_at(rq, idx);

		if (tbr_psn_before(psn, tbr_inflight_last_psn(e)))
			break;
		if (!tbr_is_read_or_atomic(e->opcode) && !e->done) {
			e->done = true;
			e->status = IB_WC_SUCCESS;
		}
	}
	return news;
}

/*
 * The responder had no receive WQE for @psn and sent an RNR NAK.  Wait,
 * then send that frame alone, asking for an answer (a probe): only its
 * ACK lets the rest of the window follow (tbr_req_rx_ack()).  Going back
 * to @psn with the whole window after every wait, as before, resent
 * everything in flight every min_rnr_timer for as long as the receiver
 * was behind (an RNR storm: ggml's 10 us against a descheduled receiver);
 * a probe costs one frame per wait.  The wait doubles with each refusal
 * in a row, up to a cap (tbr_rnr_backoff_us()), and is back to the
 * responder's min_rnr_timer once it takes something (tbr_req_acked()).
 */
static void tbr_req_rnr_wait(struct tbr_qp *qp, u32 psn, u8 rnr_timer)
{
	struct tbr_net_req *rq = &qp->net->req;
	unsigned int us = tbr_rnr_backoff_us(tbr_rnr_timer_us(rnr_timer),
					     qp->rnr_backoff);

	if (qp->rnr_backoff < TBR_RNR_BACKOFF_SHIFT_MAX)
		qp->rnr_backoff++;
	rq->send_psn = psn;
	rq->probing = true;
	qp->rnr_wait = true;
	hrtimer_start(&qp->rnr_timer, ns_to_ktime((u64)us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
}

/* The RNR wait is over (the soft hrtimer, softirq): send the probe now. */
void tbr_net_req_rnr_over(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;

	spin_lock(&rq->lock);
	WRITE_ONCE(qp->rnr_wait, false);
	tbr_req_kick(qp);
	spin_unlock(&rq->lock);
}

/* Transmit again from @psn, if it is one we sent. */
static void tbr_req_go_back(struct tbr_qp *qp, u32 psn)
{
	struct tbr_net_req *rq = &qp->net->req;

	if (tbr_psn_before(psn, tbr_req_una(rq)) ||
	    !tbr_psn_before(psn, rq->send_psn))
		return;
	rq->send_psn = psn;
	rq->send_due = true;
}

static void tbr_req_fail_at(struct tbr_net_req *rq, u32 psn,
			    enum ib_wc_status status)
{
	struct tbr_inflight *e = tbr_req_find(rq, psn);

	if (e && !e->done) {
		e->done = true;
		e->status = status;
	}
}

static void tbr_req_rx_ack(struct tbr_qp *qp, const struct tbr_wire_ack *ack,
			   u32 psn)
{
	struct tbr_net_req *rq = &qp->net->req;

	switch (ack->syndrome) {
	case TBR_SYN_ACK:
		if (tbr_req_acked(rq, psn)) {
			/* Progress inside a long message: the peer is alive. */
			rq->retry_left = qp->retry_cnt;
			tbr_req_arm(qp);
			if (rq->blocked) {
				rq->blocked = false;
				rq->send_due = true;
			}
		} else if (rq->probing && !qp->rnr_wait) {
			/* The probe arrived and nothing after it: resend all. */
			rq->probing = false;
			rq->send_due = true;
		}
		break;
	case TBR_SYN_NAK_SEQ:
		tbr_req_acked(rq, tbr_psn_add(psn, -1));
		tbr_req_go_back(qp, psn);
		break;
	case TBR_SYN_RNR_NAK:
		tbr_count(qp->tdev, TBR_CNT_RNR_NAK_RECEIVED, 1);
		tbr_req_acked(rq, tbr_psn_add(psn, -1));
		/*
		 * Only a NAK that starts a wait is a retry: the responder NAKs
		 * every frame it cannot take, and the copies of one refusal,
		 * or a NAK for a PSN not (or no longer) outstanding, must not
		 * use up rnr_retry.  After a wait only the probe goes out, so
		 * each refusal of a probe is one NAK and one retry.
		 */
		if (tbr_psn_before(psn, tbr_req_una(rq)) ||
		    !tbr_psn_before(psn, rq->send_psn) || qp->rnr_wait)
			break;
		if (qp->rnr_retry != TBR_RNR_RETRY_INFINITE) {
			if (!qp->rnr_left) {
				tbr_req_fail_at(rq, psn, IB_WC_RNR_RETRY_EXC_ERR);
				break;
			}
			qp->rnr_left--;
		}
		tbr_req_rnr_wait(qp, psn, ack->rnr_timer);
		break;
	case TBR_SYN_NAK_INV:
		tbr_req_acked(rq, tbr_psn_add(psn, -1));
		tbr_req_fail_at(rq, psn, IB_WC_REM_INV_REQ_ERR);
		break;
	case TBR_SYN_NAK_ACCESS:
		tbr_req_acked(rq, tbr_psn_add(psn, -1));
		tbr_req_fail_at(rq, psn, IB_WC_REM_ACCESS_ERR);
		break;
	case TBR_SYN_NAK_OP:
		tbr_req_acked(rq, tbr_psn_add(psn, -1));
		tbr_req_fail_at(rq, psn, IB_WC_REM_OP_ERR);
		break;
	default:
		tbr_count(qp->tdev, TBR_CNT_RX_BAD_FRAMES, 1);
		break;
	}
}

/*
 * The responder executes in PSN order and answers a READ or an atomic when
 * it executes it: an answer (or an ACK) for @upto means every answer before
 * @upto was sent.  If one of them has not arrived, it was lost (or is
 * late): ask for it again now instead of waiting for the retransmission
 * timer.  Once per gap: until the answers get past it, further frames
 * after the gap say nothing new.
 */
static void tbr_req_resume_answers(struct tbr_qp *qp, u32 upto)
{
	struct tbr_net_req *rq = &qp->net->req;
	struct tbr_inflight *e = NULL;
	u32 idx, from;
	s32 seen;

	for (idx = rq->head; idx != rq->tail; idx++) {
		e = tbr_req_at(rq, idx);
		if (tbr_is_read_or_atomic(e->opcode) && !e->done && e->nframes)
			break;
		e = NULL;
	}
	if (!e)
		return;
	seen = tbr_psn_diff(upto, e->first_psn);
	if (seen > (s32)e->nframes)
		seen = e->nframes;
	if (seen <= (s32)e->read_next || e->read_next < e->read_asked)
		return;
	e->read_asked = e->read_next + 1;
	from = tbr_req_resend_from(rq, e);
	if (!tbr_psn_before(from, rq->send_psn))
		return;		/* the engine is about to send it anyway */
	tbr_count(qp->tdev, TBR_CNT_RESPONSE_GAPS, 1);
	/* Its request alone, as after a timeout; its answers resume the rest. */
	rq->send_psn = from;
	rq->probing = true;
	rq->send_due = true;
}

/* A READ response for an atomic, or an atomic response for a READ. */
static bool tbr_read_mismatch(const struct tbr_inflight *e,
			      const struct tbr_wire_hdr *hdr)
{
	bool is_read = e->opcode == IB_UVERBS_WR_RDMA_READ;

	return is_read != (hdr->opcode == TBR_OP_READ_RESPONSE);
}

/* A READ response frame or an atomic response for @e. */
static void tbr_req_rx_response(struct tbr_qp *qp, struct tbr_inflight *e,
				const struct sk_buff *skb,
				const struct tbr_wire_hdr *hdr,
				unsigned int hdr_len, u32 psn)
{
	u32 i = tbr_psn_diff(psn, e->first_psn);
	u32 len = be32_to_cpu(hdr->pay_len);
	u64 off = (u64)i * e->seg;

	if (e->done || i != e->read_next)
		return;		/* a duplicate, or after a loss (see the caller) */

	if (hdr->opcode == TBR_OP_ATOMIC_RESPONSE) {
		__be64 orig;
		u64 value;
		struct tbr_sgl src;

		if (e->opcode == IB_UVERBS_WR_RDMA_READ || len != sizeof(orig) ||
		    skb_copy_bits(skb, hdr_len, &orig, sizeof(orig)))
			goto bad;
		value = be64_to_cpu(orig);
		tbr_sgl_kernel(&src, &value, sizeof(value));
		tbr_sgl_copy(&e->local, 0, &src, sizeof(value));
	} else {
		/* Where it goes follows from its PSN alone. */
		if (e->opcode != IB_UVERBS_WR_RDMA_READ ||
		    len != min_t(u64, e->seg, e->length - off))
			goto bad;
		tbr_sgl_copy_from_skb(&e->local, off, skb, hdr_len, len);
	}
	/* Responses flowing: the peer is alive, however long the READ. */
	qp->net->req.retry_left = qp->retry_cnt;
	tbr_req_arm(qp);
	/*
	 * An answered PSN is an acknowledged one: the window moves on.  An
	 * answer in order also ends a probe: after a lost answer the PSNs it
	 * acknowledges may have been acknowledged by later frames already.
	 */
	if ((tbr_req_acked(&qp->net->req, psn) || qp->net->req.probing) &&
	    qp->net->req.blocked) {
		qp->net->req.probing = false;
		qp->net->req.blocked = false;
		qp->net->req.send_due = true;
	}
	if (++e->read_next == e->nframes) {
		e->done = true;
		e->status = IB_WC_SUCCESS;
	}
	return;
bad:
	tbr_count(qp->tdev, TBR_CNT_RX_BAD_FRAMES, 1);
}

/*
 * An ACK or NAK for @psn: from an ACK frame, or an ACK a request carried
 * (tbr_net_req_rx_piggy()).  Under rq->lock.
 */
static void tbr_req_on_ack(struct tbr_qp *qp, const struct tbr_wire_ack *ack,
			   u32 psn)
{
	struct tbr_net_req *rq = &qp->net->req;

	tbr_req_rx_ack(qp, ack, psn);
	/* Only what we sent can be answered (a forged ACK is not). */
	if (ack->syndrome == TBR_SYN_ACK &&
	    !tbr_psn_before(rq->sent_high, tbr_psn_add(psn, 1)))
		tbr_req_resume_answers(qp, tbr_psn_add(psn, 1));
	else if (ack->syndrome == TBR_SYN_NAK_SEQ &&
		 !tbr_psn_before(rq->sent_high, psn))
		tbr_req_resume_answers(qp, psn);
}

/*
 * A request from our peer carried an ACK (TBR_WF_ACK_PSN): the same as an
 * ACK frame for its PSN, if that acknowledges something we have in flight.
 * One that acknowledges nothing new is no answer to a probe, as an ACK
 * frame would be, and is passed over; one outside what we sent is forged
 * or far out of date, and counted.
 */
void tbr_net_req_rx_piggy(struct tbr_qp *qp, const struct tbr_wire_hdr *hdr)
{
	static const struct tbr_wire_ack ack = { .syndrome = TBR_SYN_ACK };
	struct tbr_net_req *rq = &qp->net->req;
	u32 psn = be32_to_cpu(tbr_wire_piggy_of(hdr)->ack_psn) & TBR_PSN_MASK;
	u32 next = tbr_psn_add(psn, 1);
	enum ib_qp_state state;

	/* Requests reach XRC targets, which send none to be acknowledged. */
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		tbr_count(qp->tdev, TBR_CNT_PIGGY_ACKS_IGNORED, 1);
		return;
	}
	/* A stale frame, of an earlier peer: the responder counts it. */
	if ((be32_to_cpu(hdr->src_qpn) & TBR_PSN_MASK) != READ_ONCE(qp->dest_qpn))
		return;
	spin_lock(&rq->lock);
	state = READ_ONCE(qp->state);
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		goto out;
	if (next == rq->acked_psn)
		goto out;
	if (tbr_psn_before(next, rq->acked_psn) ||
	    tbr_psn_before(rq->sent_high, next)) {
		tbr_count(qp->tdev, TBR_CNT_PIGGY_ACKS_IGNORED, 1);
		goto out;
	}
	tbr_req_on_ack(qp, &ack, psn);
	tbr_req_advance(qp);
	if (rq->send_due)
		tbr_req_kick(qp);
out:
	spin_unlock(&rq->lock);
}

void tbr_net_req_rx(struct tbr_qp *qp, const struct sk_buff *skb,
		    const struct tbr_wire_hdr *hdr, unsigned int hdr_len)
{
	struct tbr_net_req *rq = &qp->net->req;
	u32 psn = be32_to_cpu(hdr->psn) & TBR_PSN_MASK;
	struct tbr_inflight *e;
	enum ib_qp_state state;

	if (qp->ibqp.qp_type != IB_QPT_RC && qp->ibqp.qp_type != IB_QPT_XRC_INI) {
		tbr_count(qp->tdev, TBR_CNT_RX_BAD_FRAMES, 1);
		return;
	}
	/* An answer to an earlier owner of this QP number. */
	if ((be32_to_cpu(hdr->src_qpn) & TBR_PSN_MASK) != READ_ONCE(qp->dest_qpn)) {
		tbr_count(qp->tdev, TBR_CNT_RX_STALE_FRAMES, 1);
		return;
	}
	spin_lock(&rq->lock);
	state = READ_ONCE(qp->state);
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		goto out;
	if (hdr->opcode == TBR_OP_ACK) {
		tbr_req_on_ack(qp, tbr_wire_op_ext(hdr), psn);
	} else {
		e = tbr_req_find(rq, psn);
		/* None: a late answer to something completed; ignore it. */
		if (!e || !tbr_is_read_or_atomic(e->opcode) ||
		    tbr_read_mismatch(e, hdr))
			goto out;
		/* A response means everything before its request arrived. */
		tbr_req_acked(rq, tbr_psn_add(e->first_psn, -1));
		tbr_req_rx_response(qp, e, skb, hdr, hdr_len, psn);
		tbr_req_resume_answers(qp, psn);
	}
	tbr_req_advance(qp);
	if (rq->send_due)
		tbr_req_kick(qp);
out:
	spin_unlock(&rq->lock);
}

