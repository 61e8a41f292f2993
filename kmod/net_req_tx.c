// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RC requester, transmit direction, and UC/UD sends.
 *
 * RC: WQEs are taken from the send queue into a window, up to 16 WQEs and
 * 64 frames unacknowledged, each given a range of PSNs, one per frame (a
 * READ takes one per response frame), and their frames transmitted.  The
 * send loop (tbr_req_run()) runs in the engine's thread after a doorbell
 * or a post, and in softirq wherever an answer or a timer lets more go
 * out (tbr_req_kick()).
 *
 * UC and UD: frames go out once and the WQE completes at once.
 */
#include "net_req.h"

u8 tbr_wire_opcode(u32 wr_opcode)
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
	u32 frame_psn, next, ack_psn;
	bool again;

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
	/* Our responder owes the peer an ACK: this frame carries it. */
	if (tbr_net_ack_carry(qp, &ack_psn)) {
		f.hdr.flags |= TBR_WF_ACK_PSN;
		f.piggy.ack_psn = cpu_to_be32(ack_psn);
	}
	frame_psn = be32_to_cpu(f.hdr.psn);
	again = tbr_psn_before(frame_psn, rq->sent_high);
	if (again)
		tbr_count(qp->tdev, TBR_CNT_RETRANSMITS, 1);
	/* Answered at once: an ACK_REQ frame, a READ or atomic request. */
	if (again || (f.hdr.flags & TBR_WF_ACK_REQ) ||
	    tbr_is_read_or_atomic(e->opcode))
		tbr_req_rtt_sent(rq, frame_psn, again);
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
void tbr_req_flush(struct tbr_qp *qp)
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
	rq->rtt_timing = false;
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

/* Why the send loop stopped. */
enum tbr_req_stop {
	TBR_REQ_IDLE,		/* nothing left to start; KERNEL_ACTIVE cleared */
	TBR_REQ_WAIT,		/* for an ACK, a timer or room in the window */
	TBR_REQ_BUDGET,		/* the budget is spent and there is more */
	TBR_REQ_ERROR,		/* the QP is in error: the engine flushes it */
	TBR_REQ_DRAIN,		/* SQD: the engine reports the drain */
	TBR_REQ_FATAL,		/* user space corrupted the producer */
};

/*
 * Send what is due, then start new WQEs, until nothing is left, the
 * window is full, or @budget frames went out.  Under rq->lock; never
 * sleeps, so it runs in the engine's thread and in softirq alike.
 */
static enum tbr_req_stop tbr_req_run(struct tbr_qp *qp, unsigned int budget)
{
	struct tbr_net_req *rq = &qp->net->req;
	enum ib_qp_state state;
	int ready;

	rq->send_due = false;
	for (;;) {
		state = READ_ONCE(qp->state);
		if (state == IB_QPS_ERR || state == IB_QPS_SQE)
			return TBR_REQ_ERROR;
		if (qp->rnr_wait || READ_ONCE(qp->destroyed))
			return TBR_REQ_WAIT;

		/* What is due: new frames, or again after a NAK or timeout. */
		while (rq->send_psn != rq->psn_next) {
			struct tbr_inflight *e;

			if (tbr_psn_diff(rq->send_psn, tbr_req_una(rq)) >=
			    TBR_NET_FRAME_WINDOW) {
				rq->blocked = true;
				return TBR_REQ_WAIT;
			}
			e = tbr_req_find(rq, rq->send_psn);
			if (!e || e->done) {	/* acked meanwhile */
				rq->send_psn = e ? tbr_psn_add(e->first_psn, e->nframes) :
						   rq->psn_next;
				continue;
			}
			if (!budget)
				return TBR_REQ_BUDGET;
			rq->send_psn = tbr_req_transmit(qp, e, rq->send_psn);
			budget--;
			if (rq->probing) {
				rq->blocked = true;	/* until its ACK */
				return TBR_REQ_WAIT;
			}
		}

		if (state != IB_QPS_RTS)	/* SQD: nothing new starts */
			return TBR_REQ_DRAIN;
		if (tbr_req_count(rq) == TBR_NET_WINDOW) {
			rq->blocked = true;
			return TBR_REQ_WAIT;
		}
		if (!budget)
			return TBR_REQ_BUDGET;
		ready = tbr_req_ready(qp);
		if (ready < 0)
			return TBR_REQ_FATAL;
		if (!ready)
			return TBR_REQ_IDLE;
		/* LOCAL_INV is fenced: it waits for everything before it. */
		if (tbr_req_count(rq) &&
		    tbr_req_next_opcode(qp) == IB_UVERBS_WR_LOCAL_INV) {
			rq->blocked = true;
			return TBR_REQ_WAIT;
		}
		tbr_req_start(qp, qp->sq.kidx + tbr_req_count(rq));
		tbr_req_advance(qp);	/* a WQE that failed locally */
	}
}

/* The engine: a doorbell, a kernel consumer's post, or deferred work. */
void tbr_net_req_process(struct tbr_qp *qp)
{
	struct tbr_net_req *rq = &qp->net->req;
	enum tbr_req_stop why;

	WRITE_ONCE(qp->sq.hdr->flags, TBRDMA_SQ_FLAG_KERNEL_ACTIVE);
	spin_lock_bh(&rq->lock);
	/* A window of frames at a time, softirqs and other tasks between. */
	while ((why = tbr_req_run(qp, TBR_NET_FRAME_WINDOW)) == TBR_REQ_BUDGET) {
		spin_unlock_bh(&rq->lock);
		cond_resched();
		spin_lock_bh(&rq->lock);
	}
	switch (why) {
	case TBR_REQ_ERROR:
		tbr_req_flush(qp);
		while (tbr_queue_ready(&qp->sq) > 0)
			tbr_tx_flush_one(qp);
		fallthrough;
	case TBR_REQ_DRAIN:
		WRITE_ONCE(qp->sq.hdr->flags, 0);
		fallthrough;
	case TBR_REQ_IDLE:
		spin_unlock_bh(&rq->lock);
		if (!tbr_req_count(rq))
			tbr_tx_sq_drained(qp);
		return;
	case TBR_REQ_FATAL:
		spin_unlock_bh(&rq->lock);
		WRITE_ONCE(qp->sq.hdr->flags, 0);
		tbr_qp_event(qp, IB_EVENT_QP_FATAL);
		tbr_qp_set_error(qp);
		return;
	default:
		/* KERNEL_ACTIVE stays set: an ACK or a timer runs us again. */
		spin_unlock_bh(&rq->lock);
	}
}

/*
 * Frames the receive path or a timer sends itself, in softirq, before it
 * hands the rest to the engine's thread: one ACK's worth (the responder
 * ACKs at least every TBR_NET_ACK_EVERY frames), so each ACK refills the
 * window by what it acknowledged and a busy CPU, where a thread would
 * wait its turn, does not hold the connection back.  NAPI's way: a
 * budget, then deferral.
 */
#define TBR_NET_SOFTIRQ_BUDGET	TBR_NET_ACK_EVERY

/*
 * Something can go out: room opened in the window, a NAK or a timer
 * moved send_psn back, an RNR wait ended.  Send it now, from here, up to
 * the budget; the engine's thread gets what is left and what needs a
 * thread (flushing a QP in error, reporting a drained SQD).  Under
 * rq->lock, in softirq.
 */
void tbr_req_kick(struct tbr_qp *qp)
{
	switch (tbr_req_run(qp, TBR_NET_SOFTIRQ_BUDGET)) {
	case TBR_REQ_BUDGET:
	case TBR_REQ_ERROR:
	case TBR_REQ_DRAIN:
	case TBR_REQ_FATAL:
		tbr_tx_schedule(qp);
		break;
	default:
		break;
	}
}
