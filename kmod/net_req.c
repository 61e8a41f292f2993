// SPDX-License-Identifier: GPL-2.0-only
/*
 * The requester side of the network transport.
 *
 * RC: the send engine starts WQEs (net_req_process) up to a window, giving
 * each a range of PSNs, one per frame (a READ takes one per response
 * frame), and transmits their frames.  ACKs and responses arriving in
 * softirq mark WQEs done; done WQEs complete strictly in order.  A
 * sequence NAK or a timeout sends everything again from the first
 * unacknowledged PSN (go-back-N); the responder recognises what it has
 * already executed.  An RNR NAK waits min_rnr_timer, longer after each
 * refusal in a row, then sends the refused frame alone and the rest of
 * the window only once that probe is acknowledged.
 *
 * UC and UD: frames go out once and the WQE completes at once.
 */
#include "net.h"
#include "timers.h"

static u8 tbr_wire_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return TBR_OP_SEND_IMM;
	case IB_UVERBS_WR_SEND_WITH_INV:
		return TBR_OP_SEND_INV;
	case IB_UVERBS_WR_RDMA_WRITE:
		return TBR_OP_WRITE;
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return TBR_OP_WRITE_IMM;
	case IB_UVERBS_WR_RDMA_READ:
		return TBR_OP_READ_REQUEST;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return TBR_OP_CMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return TBR_OP_FETCH_ADD;
	case TBRDMA_WR_ATOMIC_WRITE:
		return TBR_OP_ATOMIC_WRITE;
	default:
		return TBR_OP_SEND;
	}
}

static bool tbr_is_read_or_atomic(u32 wr_opcode)
{
	return wr_opcode == IB_UVERBS_WR_RDMA_READ ||
	       wr_opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/* Fill a data frame (SEND/WRITE) of message @msg, frame @i of @seg bytes. */
static void tbr_frame_data(struct tbr_frame *f, const struct tbr_msg *msg,
			   const struct tbr_sgl *local, u32 i, u32 n, u32 seg)
{
	u64 off = (u64)i * seg;

	f->hdr.flags |= (i == 0 ? TBR_WF_FIRST : 0) |
			(i == n - 1 ? TBR_WF_LAST : 0) |
			(i == n - 1 && msg->solicited ? TBR_WF_SOLICITED : 0);
	f->hdr.msg_len = cpu_to_be32(msg->total);
	f->hdr.msg_off = cpu_to_be32(off);
	f->hdr.imm = msg->imm_data;
	f->hdr.rkey = cpu_to_be32(msg->rkey);
	f->hdr.va = cpu_to_be64(msg->remote_addr);
	f->pay = local;
	f->pay_off = off;
	f->pay_len = min_t(u64, seg, msg->total - off);
}

enum tbr_resp tbr_net_send_unreliable(struct tbr_qp *qp, u32 dst_qpn,
				      struct tbr_msg *msg)
{
	struct tbr_net_req *rq = &qp->net->req;
	u8 op = tbr_wire_opcode(msg->opcode);
	struct tbr_frame f;
	u32 seg, n, i, psn;

	if (tbr_qp_is_datagram(qp)) {
		tbr_net_frame_init(&f, qp, op, dst_qpn, 0);
		tbr_frame_data(&f, msg, &msg->xfer->local, 0, 1,
			       max_t(u64, msg->total, 1));
		f.ext.ud.qkey = cpu_to_be32(msg->qkey);
		memcpy(f.ext.ud.sgid, msg->ah->sgid.raw, sizeof(f.ext.ud.sgid));
		memcpy(f.ext.ud.dgid, msg->ah->dgid.raw, sizeof(f.ext.ud.dgid));
		f.dmac = msg->ah->dmac;
		tbr_net_xmit(qp->tdev, &f);
		return TBR_RESP_OK;
	}

	/* UC */
	seg = tbr_net_max_payload(qp->tdev, op, TBR_TRANSPORT_UC);
	if (!seg)
		return TBR_RESP_DROPPED;
	n = tbr_psn_frames(msg->total, seg);
	spin_lock_bh(&rq->lock);
	psn = rq->psn_next;
	rq->psn_next = tbr_psn_add(psn, n);
	spin_unlock_bh(&rq->lock);
	for (i = 0; i < n; i++) {
		if (i && !(i % TBR_NET_FRAME_WINDOW))
			cond_resched();	/* a UC message may be 2 GiB */
		tbr_net_frame_init(&f, qp, op, dst_qpn, tbr_psn_add(psn, i));
		tbr_frame_data(&f, msg, &msg->xfer->local, i, n, seg);
		f.dmac = tbr_net_peer_mac(qp);
		tbr_net_xmit(qp->tdev, &f);
	}
	return TBR_RESP_OK;
}

static struct tbr_inflight *tbr_req_at(struct tbr_net_req *rq, u32 idx)
{
	return &rq->win[idx & (TBR_NET_WINDOW - 1)];
}

static u32 tbr_req_count(const struct tbr_net_req *rq)
{
	return rq->tail - rq->head;
}

/* The first PSN not yet acknowledged. */
static u32 tbr_req_una(struct tbr_net_req *rq)
{
	return tbr_req_count(rq) ? rq->acked_psn : rq->psn_next;
}

/* Where to resend from after a timeout: the head WQE's first unanswered PSN. */
static u32 tbr_req_resend_from(struct tbr_net_req *rq, struct tbr_inflight *e)
{
	if (e->opcode == IB_UVERBS_WR_RDMA_READ)
		return tbr_psn_add(e->first_psn, rounddown(e->read_next,
							   TBR_NET_READ_CHUNK));
	if (tbr_is_read_or_atomic(e->opcode) ||
	    tbr_psn_before(rq->acked_psn, e->first_psn))
		return e->first_psn;
	return rq->acked_psn;
}

static u32 tbr_inflight_last_psn(const struct tbr_inflight *e)
{
	return tbr_psn_add(e->first_psn, e->nframes - 1);
}

/* The WQE in flight whose PSN range holds @psn, or NULL. */
static struct tbr_inflight *tbr_req_find(struct tbr_net_req *rq, u32 psn)
{
	u32 idx;

	for (idx = rq->head; idx != rq->tail; idx++) {
		struct tbr_inflight *e = tbr_req_at(rq, idx);
		s32 d = tbr_psn_diff(psn, e->first_psn);

		if (d >= 0 && d < (s32)e->nframes)
			return e;
	}
	return NULL;
}

/*
 * Start the retransmission deadline again from now.  The timer itself is
 * moved only when it would fire too late: in a ping-pong every message
 * starts a deadline and its ACK ends it, and a timer operation for each
 * (under the timer base's lock, interrupts off) costs more than a timer
 * that now and then fires early, finds the deadline moved on and waits
 * for it.  An ACK that leaves nothing outstanding just stops the deadline.
 */
static void tbr_req_arm(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;
	unsigned long long us = tbr_ack_timeout_us(qp->timeout);
	unsigned long span;

	rq->timing = us != 0;		/* timeout 0: wait for ever */
	if (!rq->timing)
		return;
	span = usecs_to_jiffies(min(us, 60ULL * USEC_PER_SEC));
	rq->deadline = jiffies + span;
	rq->probe_span = max(span / TBR_NET_PROBE_DIV, 1UL);
	rq->probe_at = jiffies + rq->probe_span;
	if (!timer_pending(&rq->timer) ||
	    time_before(rq->probe_at, rq->timer.expires))
		mod_timer(&rq->timer, rq->probe_at);
}

/*
 * Send the first unacknowledged frame alone, asking for an answer, and
 * let that answer tell where the responder is: a lost ACK costs one
 * frame, not a window.
 */
static void tbr_req_probe(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;

	rq->send_psn = tbr_req_resend_from(rq, tbr_req_at(rq, rq->head));
	rq->probing = true;
	tbr_tx_schedule(qp);
}

/* Complete the WQEs at the head that are done, in order. */
static void tbr_req_advance(struct tbr_qp *qp)
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
	 * Wake the engine only when it waits for room, or to report a
	 * drained SQD: a work item per completion would cost a context
	 * switch per message.
	 */
	if (progress && (rq->blocked || (!tbr_req_count(rq) &&
					 READ_ONCE(qp->state) == IB_QPS_SQD))) {
		rq->blocked = false;
		tbr_tx_schedule(qp);
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
		      HRTIMER_MODE_REL);
}

/* Transmit again from @psn, if it is one we sent. */
static void tbr_req_go_back(struct tbr_qp *qp, u32 psn)
{
	struct tbr_net_req *rq = &qp->net->req;

	if (tbr_psn_before(psn, tbr_req_una(rq)) ||
	    !tbr_psn_before(psn, rq->send_psn))
		return;
	rq->send_psn = psn;
	tbr_tx_schedule(qp);
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
				tbr_tx_schedule(qp);
			}
		} else if (rq->probing && !qp->rnr_wait) {
			/* The probe arrived and nothing after it: resend all. */
			rq->probing = false;
			tbr_tx_schedule(qp);
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
	tbr_tx_schedule(qp);
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
		tbr_tx_schedule(qp);
	}
	if (++e->read_next == e->nframes) {
		e->done = true;
		e->status = IB_WC_SUCCESS;
	}
	return;
bad:
	tbr_count(qp->tdev, TBR_CNT_RX_BAD_FRAMES, 1);
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
		const struct tbr_wire_ack *ack = tbr_wire_op_ext(hdr);

		tbr_req_rx_ack(qp, ack, psn);
		/* Only what we sent can be answered (a forged ACK is not). */
		if (ack->syndrome == TBR_SYN_ACK &&
		    !tbr_psn_before(rq->sent_high, tbr_psn_add(psn, 1)))
			tbr_req_resume_answers(qp, tbr_psn_add(psn, 1));
		else if (ack->syndrome == TBR_SYN_NAK_SEQ &&
			 !tbr_psn_before(rq->sent_high, psn))
			tbr_req_resume_answers(qp, psn);
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
out:
	spin_unlock(&rq->lock);
}

/*
 * The request frame for @e at @psn: an atomic, or the READ request for the
 * chunk of response frames holding @psn.  A READ asks for at most
 * TBR_NET_READ_CHUNK frames at a time, so no request makes the responder
 * send more than a window's worth at once.  Returns the first PSN after it.
 */
static u32 tbr_req_frame_read_atomic(struct tbr_frame *f,
				     struct tbr_inflight *e, u32 psn)
{
	bool xrc = f->hdr.transport == TBR_TRANSPORT_XRC;
	struct tbr_wire_atomic *atomic = xrc ? &f->ext.x.atomic : &f->ext.atomic;
	struct tbr_wire_read *read = xrc ? &f->ext.x.read : &f->ext.read;
	u32 start = 0, n = 1;
	u64 off = 0;

	if (e->opcode == IB_UVERBS_WR_RDMA_READ) {
		start = rounddown(tbr_psn_diff(psn, e->first_psn),
				  TBR_NET_READ_CHUNK);
		n = min_t(u32, TBR_NET_READ_CHUNK, e->nframes - start);
		off = (u64)start * e->seg;
		read->resp_seg = cpu_to_be32(e->seg);
		f->hdr.msg_len = cpu_to_be32(min_t(u64, e->length - off,
						   (u64)n * e->seg));
	} else {
		atomic->compare_add = cpu_to_be64(e->compare_add);
		atomic->swap = cpu_to_be64(e->swap);
		f->hdr.msg_len = cpu_to_be32(e->length);
	}
	f->hdr.psn = cpu_to_be32(tbr_psn_add(e->first_psn, start));
	f->hdr.flags = TBR_WF_FIRST | TBR_WF_LAST;
	f->hdr.rkey = cpu_to_be32(e->rkey);
	f->hdr.va = cpu_to_be64(e->remote_addr + off);
	/*
	 * The answers start again from the chunk's first frame; read_next
	 * stays: the frames before it arrived already and are not taken
	 * twice.  (Going back to the chunk's start threw them away, and a
	 * late frame of an earlier answer could then restart it again.)
	 */
	return tbr_psn_add(e->first_psn, start + n);
}

/* Transmit the frame of @e at @psn; returns the next PSN to send. */
static u32 tbr_req_transmit(struct tbr_qp *qp, struct tbr_inflight *e, u32 psn)
{
	struct tbr_net_req *rq = &qp->net->req;
	u32 i = tbr_psn_diff(psn, e->first_psn);
	struct tbr_msg msg = {
		.opcode = e->opcode,
		.solicited = e->solicited,
		.imm_data = e->imm,
		.total = e->length,
		.remote_addr = e->remote_addr,
		.rkey = e->rkey,
	};
	struct tbr_frame f;
	u32 frame_psn, next;

	tbr_net_frame_init(&f, qp, tbr_wire_opcode(e->opcode),
			   READ_ONCE(qp->dest_qpn), psn);
	f.dmac = tbr_net_peer_mac(qp);
	if (f.hdr.transport == TBR_TRANSPORT_XRC)
		f.ext.x.xrc.srqn = cpu_to_be32(e->xrc_srqn & TBR_PSN_MASK);
	if (tbr_is_read_or_atomic(e->opcode)) {
		next = tbr_req_frame_read_atomic(&f, e, psn);
	} else {
		tbr_frame_data(&f, &msg, &e->local, i, e->nframes, e->seg);
		next = tbr_psn_add(psn, 1);
		/* Ask for an ACK where a burst ends, or the window is filling. */
		if (i == e->nframes - 1 &&
		    (e == tbr_req_at(rq, rq->tail - 1) ||
		     tbr_req_count(rq) >= TBR_NET_WINDOW / 2))
			f.hdr.flags |= TBR_WF_ACK_REQ;
	}
	if (rq->probing)
		f.hdr.flags |= TBR_WF_ACK_REQ;
	frame_psn = be32_to_cpu(f.hdr.psn);
	if (tbr_psn_before(frame_psn, rq->sent_high))
		tbr_count(qp->tdev, TBR_CNT_RETRANSMITS, 1);
	tbr_net_xmit(qp->tdev, &f);

	if (tbr_psn_before(rq->sent_high, next))
		rq->sent_high = next;
	if (!rq->timing)
		tbr_req_arm(qp);
	return next;
}

/* Take the next WQE from the SQ into the window and give it its PSNs. */
static void tbr_req_start(struct tbr_qp *qp, u32 slot)
{
	struct tbr_net_req *rq = &qp->net->req;
	struct tbr_inflight *e = tbr_req_at(rq, rq->tail);
	struct tbrdma_send_wqe *wqe = qp->wqe;
	enum ib_wc_status status;
	struct tbr_ah_info ah;
	struct tbr_msg msg;
	u32 dst_qpn;
	u8 op;

	tbr_tx_copy_wqe(qp, slot, wqe);
	e->wr_id = wqe->wr_id;
	e->opcode = wqe->opcode;
	e->signaled = wqe->send_flags & TBRDMA_WQE_SIGNALED;
	e->done = false;
	e->read_next = 0;
	e->read_asked = 0;
	e->first_psn = rq->psn_next;
	e->nframes = 1;
	e->length = 0;
	e->local.nseg = 0;
	rq->tail++;
	tbr_count(qp->tdev, TBR_CNT_TX_OPS, 1);

	/* REG_MR, LOCAL_INV: done now, no PSN, completes in order. */
	if (tbr_tx_is_local_op(wqe->opcode)) {
		e->nframes = 0;
		e->done = true;
		e->status = tbr_tx_local_op(qp, wqe);
		return;
	}

	status = tbr_tx_prepare(qp, wqe, &msg, &e->local, &ah, &dst_qpn);
	if (status != IB_WC_SUCCESS) {
		e->done = true;		/* completes in order, in error */
		e->status = status;
		return;
	}
	if (wqe->send_flags & TBRDMA_WQE_INLINE) {
		/* The private WQE copy is reused: keep the bytes with us. */
		memcpy(e->inline_buf, wqe + 1, msg.total);
		tbr_sgl_kernel(&e->local, e->inline_buf, msg.total);
	}
	e->length = msg.total;
	e->remote_addr = msg.remote_addr;
	e->rkey = msg.rkey;
	e->compare_add = msg.compare_add;
	e->swap = msg.swap;
	e->imm = msg.imm_data;
	e->solicited = msg.solicited;
	e->xrc_srqn = msg.xrc_srqn;
	op = tbr_wire_opcode(e->opcode);
	e->seg = tbr_net_max_payload(qp->tdev, e->opcode == IB_UVERBS_WR_RDMA_READ ?
				     TBR_OP_READ_RESPONSE : op,
				     tbr_net_transport(qp));
	if (!e->seg) {
		tbr_sgl_put(&e->local);
		e->done = true;
		e->status = IB_WC_LOC_LEN_ERR;
		return;
	}
	if (e->opcode != IB_UVERBS_WR_ATOMIC_CMP_AND_SWP &&
	    e->opcode != IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD)
		e->nframes = tbr_psn_frames(e->length, e->seg);
	rq->psn_next = tbr_psn_add(rq->psn_next, e->nframes);
}

/* The opcode of the next WQE not yet started (a hint; copied later). */
static u32 tbr_req_next_opcode(struct tbr_qp *qp)
{
	const struct tbrdma_send_wqe *wqe;

	wqe = tbr_queue_slot(&qp->sq,
			     qp->sq.kidx + tbr_req_count(&qp->net->req));
	return READ_ONCE(wqe->opcode);
}

/* Flush the window after the QP went to error. */
static void tbr_req_flush(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;

	while (tbr_req_count(rq)) {
		struct tbr_inflight *e = tbr_req_at(rq, rq->head);

		tbr_tx_retire(qp, e->wr_id, e->opcode,
			      e->done && e->status != IB_WC_SUCCESS ?
			      e->status : IB_WC_WR_FLUSH_ERR, 0, true);
		tbr_sgl_put(&e->local);
		rq->head++;
	}
	timer_delete(&rq->timer);
	rq->timing = false;
	rq->send_psn = rq->psn_next;
}

/* Is there a WQE not yet started?  The KERNEL_ACTIVE dance of tx.c. */
static int tbr_req_ready(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;
	int ready = tbr_queue_ready(&qp->sq);

	if (ready < 0)
		return ready;
	ready -= tbr_req_count(rq);
	if (ready)
		return ready;
	WRITE_ONCE(qp->sq.hdr->flags, 0);
	/* Flag store before producer load; user space does the mirror image. */
	smp_mb();
	ready = tbr_queue_ready(&qp->sq);
	if (ready < 0)
		return ready;
	ready -= tbr_req_count(rq);
	if (ready)
		WRITE_ONCE(qp->sq.hdr->flags, TBRDMA_SQ_FLAG_KERNEL_ACTIVE);
	return ready;
}

void tbr_net_req_process(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;
	enum ib_qp_state state;
	unsigned int sent = 0;
	int ready;

	WRITE_ONCE(qp->sq.hdr->flags, TBRDMA_SQ_FLAG_KERNEL_ACTIVE);
	spin_lock_bh(&rq->lock);
	for (;;) {
		/* Let softirqs and other tasks in between windows of frames. */
		if (sent >= TBR_NET_FRAME_WINDOW) {
			spin_unlock_bh(&rq->lock);
			cond_resched();
			spin_lock_bh(&rq->lock);
			sent = 0;
		}
		state = READ_ONCE(qp->state);
		if (state == IB_QPS_ERR || state == IB_QPS_SQE) {
			tbr_req_flush(qp);
			while (tbr_queue_ready(&qp->sq) > 0)
				tbr_tx_flush_one(qp);
			break;
		}
		if (qp->rnr_wait || READ_ONCE(qp->destroyed))
			goto out_active;

		/* What is due: new frames, or again after a NAK or timeout. */
		while (rq->send_psn != rq->psn_next) {
			struct tbr_inflight *e;

			if (tbr_psn_diff(rq->send_psn, tbr_req_una(rq)) >=
			    TBR_NET_FRAME_WINDOW) {
				rq->blocked = true;
				goto out_active;
			}
			e = tbr_req_find(rq, rq->send_psn);
			if (!e || e->done) {	/* acked meanwhile */
				rq->send_psn = e ? tbr_psn_add(e->first_psn, e->nframes) :
						   rq->psn_next;
				continue;
			}
			rq->send_psn = tbr_req_transmit(qp, e, rq->send_psn);
			sent++;
			if (rq->probing) {
				rq->blocked = true;	/* until its ACK */
				goto out_active;
			}
		}

		if (state != IB_QPS_RTS)	/* SQD: nothing new starts */
			break;
		if (tbr_req_count(rq) == TBR_NET_WINDOW) {
			rq->blocked = true;
			goto out_active;
		}
		ready = tbr_req_ready(qp);
		if (ready < 0) {	/* user space corrupted the producer */
			spin_unlock_bh(&rq->lock);
			WRITE_ONCE(qp->sq.hdr->flags, 0);
			tbr_qp_event(qp, IB_EVENT_QP_FATAL);
			tbr_qp_set_error(qp);
			return;
		}
		if (!ready)
			goto out_idle;
		/* LOCAL_INV is fenced: it waits for everything before it. */
		if (tbr_req_count(rq) &&
		    tbr_req_next_opcode(qp) == IB_UVERBS_WR_LOCAL_INV) {
			rq->blocked = true;
			goto out_active;
		}
		tbr_req_start(qp, qp->sq.kidx + tbr_req_count(rq));
		tbr_req_advance(qp);	/* a WQE that failed locally */
	}
	WRITE_ONCE(qp->sq.hdr->flags, 0);
out_idle:
	spin_unlock_bh(&rq->lock);
	if (!tbr_req_count(rq))
		tbr_tx_sq_drained(qp);
	return;
out_active:
	/* KERNEL_ACTIVE stays set: an ACK or a timer runs us again. */
	spin_unlock_bh(&rq->lock);
}

/* No ACK came in time: send everything unacknowledged again, or give up. */
void tbr_net_req_timeout(struct timer_list *t)
{
	struct tbr_net_req *rq = timer_container_of(rq, t, timer);
	struct tbr_qp *qp = rq->qp;
	struct tbr_inflight *e;
	enum ib_qp_state state;

	spin_lock_bh(&rq->lock);
	state = READ_ONCE(qp->state);
	if (!rq->timing || !tbr_req_count(rq) ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD)) {
		rq->timing = false;	/* a transmission starts the next one */
		goto out;
	}
	/*
	 * An RNR wait: the responder answered, and we hold back on purpose
	 * until the probe after the wait.  Neither a timeout nor an early
	 * probe; the deadline starts again from now (a refusing peer uses
	 * up rnr_retry, not retry_cnt).
	 */
	if (READ_ONCE(qp->rnr_wait)) {
		tbr_req_arm(qp);
		goto out;
	}
	if (time_before(jiffies, rq->deadline)) {
		if (time_before(jiffies, rq->probe_at)) {
			/* Early: armed for frames acknowledged since. */
			mod_timer(&rq->timer, rq->probe_at);
			goto out;
		}
		/*
		 * Nothing acknowledged for an eighth of the timeout: the last
		 * frames of a burst, or their ACK or NAK, are likely lost, and
		 * nothing after them will tell.  Probe now, without using up
		 * a retry, instead of idling for the rest of the timeout (a
		 * second per loss at the usual timeouts).  Again every eighth
		 * of the timeout until the deadline or an answer
		 * (tbr_req_arm() starts a new deadline): a probe
		 * lost too, or its answer, would otherwise cost the whole
		 * timeout, which is what stalled atomics at 10 % loss (one
		 * frame each, nothing after the last of a burst to tell).
		 */
		tbr_count(qp->tdev, TBR_CNT_EARLY_PROBES, 1);
		tbr_req_probe(qp);
		rq->probe_at = jiffies + rq->probe_span;
		mod_timer(&rq->timer, time_before(rq->probe_at, rq->deadline) ?
			  rq->probe_at : rq->deadline);
		goto out;
	}
	tbr_count(qp->tdev, TBR_CNT_ACK_TIMEOUTS, 1);
	e = tbr_req_at(rq, rq->head);
	if (!rq->retry_left) {
		/* The peer is gone: the head fails, the QP goes to error. */
		if (!e->done) {
			e->done = true;
			e->status = IB_WC_RETRY_EXC_ERR;
		}
		tbr_req_advance(qp);
		goto out;
	}
	rq->retry_left--;
	rq->timing = false;	/* the probe starts the next deadline */
	tbr_req_probe(qp);
out:
	spin_unlock_bh(&rq->lock);
}
