// SPDX-License-Identifier: GPL-2.0-only
/*
 * The responder side of the network transport.  RC requests execute
 * strictly in PSN order: a gap is NAKed once, a duplicate is answered
 * again without executing twice (ACKed; a READ is read again, an atomic
 * answered from its saved result).  UC executes in order and drops what
 * follows a gap; UD takes each datagram on its own.  The execution itself
 * is rx.c's, frame by frame.  Softirq context.
 *
 * The ACK a requester asks for at the end of a burst is held back (a soft
 * hrtimer) where our own requester has been answering quickly: in a
 * ping-pong it sends a request moments later, and that frame carries the
 * ACK (TBR_WF_ACK_PSN) instead of a frame of its own.  Under emulation
 * every frame costs 100-200 us of CPU.  How long it waits follows the
 * turns this QP has seen, up to ack_delay_us (ack_turn.h).  NAKs, READ and
 * atomic responses, the answers to duplicates and the ACK every
 * TBR_NET_ACK_EVERY requests are never held back: they recover losses,
 * and keep a one-way stream going.
 */
#include <linux/sched/clock.h>
#include <linux/module.h>

#include "net.h"

/*
 * The longest wait; 0 (the default) never holds an ACK back and watches
 * no turns.  Where it is set, the wait follows the turns seen on the QP
 * (ack_turn.h).  Measured on 2026-11-29 with 1000: between two emulated
 * guests RC's ping-pong gained about 12 % and ib_write_lat nothing
 * measurable, while in one guest tprun's all-reduce on a veth took 1.5-3
 * times as long (about one held ACK in 30 ran out, and every hold is a
 * timer started and stopped).  Not worth a default;
 * Documentation/wire-protocol.md.
 */
static unsigned int tbr_ack_delay_us;
module_param_named(ack_delay_us, tbr_ack_delay_us, uint, 0644);
MODULE_PARM_DESC(ack_delay_us,
		 "The longest an RC responder holds an asked-for ACK back for a request of its own to carry it, in us (0, the default: never; at most 1000); the wait follows how fast this QP's replies have come");

static u32 tbr_wire_to_wr_opcode(u8 op, bool last)
{
	switch (op) {
	case TBR_OP_SEND:
		return IB_UVERBS_WR_SEND;
	case TBR_OP_SEND_IMM:
		return last ? IB_UVERBS_WR_SEND_WITH_IMM : IB_UVERBS_WR_SEND;
	case TBR_OP_SEND_INV:
		/* The invalidation belongs to the last frame, as the completion. */
		return last ? IB_UVERBS_WR_SEND_WITH_INV : IB_UVERBS_WR_SEND;
	case TBR_OP_WRITE:
		return IB_UVERBS_WR_RDMA_WRITE;
	case TBR_OP_WRITE_IMM:
		/* The immediate and its receive WQE belong to the last frame. */
		return last ? IB_UVERBS_WR_RDMA_WRITE_WITH_IMM :
			      IB_UVERBS_WR_RDMA_WRITE;
	case TBR_OP_READ_REQUEST:
		return IB_UVERBS_WR_RDMA_READ;
	case TBR_OP_CMP_SWAP:
		return IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
	case TBR_OP_ATOMIC_WRITE:
		return TBRDMA_WR_ATOMIC_WRITE;
	default:
		return IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
	}
}

void tbr_net_send_ack(struct tbr_qp *qp, u8 syndrome, u32 psn)
{
	tbr_net_xmit_ack(qp->tdev, tbr_net_peer_mac(qp), tbr_net_transport(qp),
			 qp->ibqp.qp_num,
			 READ_ONCE(qp->dest_qpn), psn, syndrome,
			 qp->min_rnr_timer);
}

/* A turn of @ns ended: fold it into the QP's estimate (ack_turn.h). */
static void tbr_net_turn_end(struct tbr_net_resp *rs, s64 ns)
{
	u32 us = ns > 0 ? (u32)min_t(u64, div_u64(ns, NSEC_PER_USEC),
				     TBR_ACK_TURN_MAX_US) : 0;

	WRITE_ONCE(rs->turn8, tbr_ack_turn_fold(READ_ONCE(rs->turn8), us));
}

/* The ACK owed, if any, for the caller to send: it is owed no more. */
static bool tbr_net_ack_take(struct tbr_net_resp *rs, u32 *psn)
{
	int owed;

	if (!atomic_read(&rs->ack_owed))
		return false;
	owed = atomic_xchg(&rs->ack_owed, 0);
	if (!(owed & TBR_NET_ACK_OWED))
		return false;
	*psn = owed & TBR_PSN_MASK;
	return true;
}

/*
 * Our requester is about to send a request to the peer: may it carry the
 * ACK owed (in *@psn)?  Then the delayed ACK is not sent.  Any context.
 */
bool tbr_net_ack_carry(struct tbr_qp *qp, u32 *psn)
{
	struct tbr_net_resp *rs = &qp->net->resp;
	s64 start;

	/* A request of ours: the reply that ends the turn. */
	if (atomic64_read(&rs->turn_start)) {
		start = atomic64_xchg(&rs->turn_start, 0);
		if (start)
			tbr_net_turn_end(rs, local_clock() - start);
	}
	if (!tbr_net_ack_take(rs, psn))
		return false;
	/* Running or not, it finds nothing owed now. */
	if (hrtimer_try_to_cancel(&rs->ack_timer) == 1)
		WRITE_ONCE(rs->hold_misses, 0);	/* a held ACK carried */
	tbr_count(qp->tdev, TBR_CNT_ACKS_PIGGYBACKED, 1);
	return true;
}

/* The delay is over and no request carried the ACK: send it alone. */
static enum hrtimer_restart tbr_net_ack_timer_fired(struct hrtimer *timer)
{
	struct tbr_net_resp *rs = container_of(timer, struct tbr_net_resp,
					       ack_timer);
	u32 psn;

	if (tbr_net_ack_take(rs, &psn)) {
		tbr_count(rs->qp->tdev, TBR_CNT_ACKS_DELAYED, 1);
		tbr_net_send_ack(rs->qp, TBR_SYN_ACK, psn);
		/* A miss: the next asks are not held (ack_turn.h). */
		spin_lock(&rs->lock);
		WRITE_ONCE(rs->hold_misses, min(READ_ONCE(rs->hold_misses) + 1,
						TBR_ACK_TURN_MISSES_MAX));
		rs->hold_skip = tbr_ack_turn_skip(rs->hold_misses);
		spin_unlock(&rs->lock);
	}
	return HRTIMER_NORESTART;
}

void tbr_net_ack_timer_init(struct tbr_net_resp *rs)
{
	atomic_set(&rs->ack_owed, 0);
	atomic64_set(&rs->turn_start, 0);
	rs->turn8 = 0;
	rs->hold_misses = 0;
	rs->hold_skip = 0;
	hrtimer_setup(&rs->ack_timer, tbr_net_ack_timer_fired, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
}

/*
 * The QP is in error or being destroyed: what we executed is acknowledged
 * now, not after the delay (the peer learns what arrived, as it did
 * before the delay).  May run again; any context.
 */
void tbr_net_ack_flush(struct tbr_qp *qp)
{
	struct tbr_net_resp *rs = &qp->net->resp;
	u32 psn;

	hrtimer_try_to_cancel(&rs->ack_timer);
	if (tbr_net_ack_take(rs, &psn))
		tbr_net_send_ack(qp, TBR_SYN_ACK, psn);
}

/* Reset: nothing is owed, the timer is not running, no turn is known. */
void tbr_net_ack_cancel(struct tbr_net_resp *rs)
{
	atomic_set(&rs->ack_owed, 0);
	hrtimer_cancel(&rs->ack_timer);
	atomic64_set(&rs->turn_start, 0);
	WRITE_ONCE(rs->turn8, 0);
	WRITE_ONCE(rs->hold_misses, 0);
	rs->hold_skip = 0;
}

/* An ACK for everything up to @psn now: nothing is owed after it. */
static void tbr_net_ack_now(struct tbr_qp *qp, u32 psn)
{
	atomic_set(&qp->net->resp.ack_owed, 0);
	tbr_net_send_ack(qp, TBR_SYN_ACK, psn);
}

/*
 * A request asked for an ACK: a turn starts, and ends when our requester
 * sends its next request.  An ask that finds the last turn still open
 * had no reply of ours between: it counts as the longest turn, so that a
 * one-way stream, whose asks come quickly one after the other, is never
 * taken for a fast ping-pong.  Returns how long to hold the ACK back.
 * Under rs->lock.
 */
static u32 tbr_net_turn_start(struct tbr_net_resp *rs)
{
	u32 cap = min_t(unsigned int, READ_ONCE(tbr_ack_delay_us),
			TBR_NET_ACK_DELAY_MAX_US);

	if (!cap)
		return 0;	/* nothing to learn the turns for */
	if (atomic64_xchg(&rs->turn_start, local_clock() ? : 1))
		tbr_net_turn_end(rs, (s64)TBR_ACK_TURN_MAX_US * NSEC_PER_USEC);
	if (rs->hold_skip) {
		rs->hold_skip--;
		return 0;
	}
	return tbr_ack_turn_delay_us(READ_ONCE(rs->turn8), cap);
}

/*
 * @psn was executed in order.  The ACK is owed; it goes out at once
 * every TBR_NET_ACK_EVERY requests, after a wait when the requester
 * asked for it (@ack_req; none if our replies have not been quick), and
 * otherwise on whichever comes first: one of those, or a request of ours
 * carrying it.  A second ask while one is held back is answered at once:
 * that is a stream, whose requester asks as its window fills
 * (net_req_tx.c), not a ping-pong, where our reply comes between two
 * asks.  Under rs->lock.
 */
static void tbr_net_ack_owe(struct tbr_qp *qp, u32 psn, bool ack_req)
{
	struct tbr_net_resp *rs = &qp->net->resp;
	u32 us = ack_req ? tbr_net_turn_start(rs) : 0;

	/* Nothing owed: an ACK went out since, count from here. */
	if (!atomic_read(&rs->ack_owed))
		rs->unacked = 0;
	if (++rs->unacked >= TBR_NET_ACK_EVERY ||
	    (ack_req && (!us || hrtimer_is_queued(&rs->ack_timer)))) {
		rs->unacked = 0;
		hrtimer_try_to_cancel(&rs->ack_timer);
		tbr_net_ack_now(qp, psn);
		return;
	}
	atomic_set(&rs->ack_owed, TBR_NET_ACK_OWED | psn);
	if (ack_req)
		hrtimer_start(&rs->ack_timer, ns_to_ktime((u64)us * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_SOFT);
}

/* The frames answering a READ of @len bytes from @src, PSNs from @psn. */
static void tbr_net_read_respond(struct tbr_qp *qp, const struct tbr_sgl *src,
				 u64 len, u32 seg, u32 psn)
{
	u32 n = tbr_psn_frames(len, seg), i;
	struct tbr_frame f;

	for (i = 0; i < n; i++) {
		u64 off = (u64)i * seg;

		tbr_net_frame_init(&f, qp, TBR_OP_READ_RESPONSE,
				   READ_ONCE(qp->dest_qpn), tbr_psn_add(psn, i));
		f.hdr.flags = (i == 0 ? TBR_WF_FIRST : 0) |
			      (i == n - 1 ? TBR_WF_LAST : 0);
		f.hdr.msg_len = cpu_to_be32(len);
		f.hdr.msg_off = cpu_to_be32(off);
		f.pay = src;
		f.pay_off = off;
		f.pay_len = min_t(u64, seg, len - off);
		/*
		 * A READ returns the memory as it is when the READ executes:
		 * the WRITEs and atomics after it may change the pages while
		 * the frame still waits in a queue.  (The checksum then
		 * caught it, and a READ of busy memory was dropped again
		 * and again until its requester gave up.)
		 */
		f.snapshot = true;
		f.dmac = tbr_net_peer_mac(qp);
		tbr_net_xmit(qp->tdev, &f);
	}
}

static void tbr_net_atomic_respond(struct tbr_qp *qp, u32 psn, u64 orig)
{
	struct tbr_frame f;
	struct tbr_sgl pay;
	__be64 value = cpu_to_be64(orig);

	tbr_sgl_kernel(&pay, &value, sizeof(value));
	tbr_net_frame_init(&f, qp, TBR_OP_ATOMIC_RESPONSE,
			   READ_ONCE(qp->dest_qpn), psn);
	f.hdr.flags = TBR_WF_FIRST | TBR_WF_LAST;
	f.pay = &pay;
	f.pay_len = sizeof(value);
	f.dmac = tbr_net_peer_mac(qp);
	tbr_net_xmit(qp->tdev, &f);
}

/* Describe a request frame as a message for rx.c; false if malformed. */
static bool tbr_net_parse(struct tbr_qp *qp, const struct sk_buff *skb,
			  const struct tbr_wire_hdr *hdr, unsigned int hdr_len,
			  struct tbr_msg *msg, struct tbr_ah_info *ah)
{
	u64 total = be32_to_cpu(hdr->msg_len);
	u64 off = be32_to_cpu(hdr->msg_off);
	u32 len = be32_to_cpu(hdr->pay_len);
	bool first = hdr->flags & TBR_WF_FIRST, last = hdr->flags & TBR_WF_LAST;

	*msg = (struct tbr_msg) {
		.opcode = tbr_wire_to_wr_opcode(hdr->opcode, last),
		.solicited = last && (hdr->flags & TBR_WF_SOLICITED),
		.imm_data = hdr->imm,
		.src_qpn = be32_to_cpu(hdr->src_qpn) & TBR_PSN_MASK,
		.length = len,
		.total = total,
		.offset = off,
		.first = first,
		.last = last,
		.rkey = be32_to_cpu(hdr->rkey),
		.remote_addr = be64_to_cpu(hdr->va),
		.xfer = qp->net->resp.xfer,
		.skb = skb,
		.skb_off = hdr_len,
	};
	if (total > TBR_MAX_MSG_SIZE)
		return false;
	if (hdr->transport == TBR_TRANSPORT_XRC)
		msg->xrc_srqn = be32_to_cpu(((const struct tbr_wire_xrc *)
					     (hdr + 1))->srqn) & TBR_PSN_MASK;

	switch (hdr->opcode) {
	case TBR_OP_READ_REQUEST:
	case TBR_OP_CMP_SWAP:
	case TBR_OP_FETCH_ADD:
		if (len || !first || !last)
			return false;
		msg->length = total;
		if (hdr->opcode == TBR_OP_READ_REQUEST)
			return true;
		if (total != sizeof(u64))
			return false;
		msg->compare_add = be64_to_cpu(((const struct tbr_wire_atomic *)
						tbr_wire_op_ext(hdr))->compare_add);
		msg->swap = be64_to_cpu(((const struct tbr_wire_atomic *)
					 tbr_wire_op_ext(hdr))->swap);
		return true;
	}
	/* SEND and WRITE: the frame's bytes lie inside the message. */
	if (off + len > total || first == !!off ||
	    last != (off + len == total))
		return false;
	switch (hdr->opcode) {
	case TBR_OP_WRITE:
	case TBR_OP_WRITE_IMM:
		msg->remote_addr += off;	/* where this frame's bytes go */
		return true;
	case TBR_OP_ATOMIC_WRITE:	/* its length is rx.c's to judge */
		return first && last;
	default:		/* SEND */
		if (hdr->transport == TBR_TRANSPORT_UD) {
			const struct tbr_wire_ud *ud = (const void *)(hdr + 1);

			if (!first || !last)
				return false;
			msg->qkey = be32_to_cpu(ud->qkey);
			memcpy(ah->sgid.raw, ud->sgid, sizeof(ah->sgid.raw));
			memcpy(ah->dgid.raw, ud->dgid, sizeof(ah->dgid.raw));
			msg->ah = ah;
		}
		return true;
	}
}

static void tbr_net_nak(struct tbr_qp *qp, enum tbr_resp resp, u32 psn)
{
	switch (resp) {
	case TBR_RESP_RNR:
		tbr_count(qp->tdev, TBR_CNT_RNR_NAK_SENT, 1);
		tbr_net_send_ack(qp, TBR_SYN_RNR_NAK, psn);
		break;
	case TBR_RESP_REM_ACCESS:
		tbr_net_send_ack(qp, TBR_SYN_NAK_ACCESS, psn);
		break;
	case TBR_RESP_REM_INV:
		tbr_net_send_ack(qp, TBR_SYN_NAK_INV, psn);
		break;
	case TBR_RESP_REM_OP:
		tbr_net_send_ack(qp, TBR_SYN_NAK_OP, psn);
		break;
	default:		/* not receiving: the requester times out */
		break;
	}
}

/*
 * A READ request's answer must fit our frames (both ends of a link have
 * one MTU) and be at most a chunk of frames: a peer may not make us send
 * millions of frames from one request.
 */
static bool tbr_net_read_seg_ok(struct tbr_qp *qp, u32 seg, u64 len)
{
	return seg && seg <= tbr_net_max_payload(qp->tdev, TBR_OP_READ_RESPONSE,
						 tbr_net_transport(qp)) &&
	       tbr_psn_frames(len, seg) <= TBR_NET_READ_CHUNK;
}

static struct tbr_replay *tbr_net_replay_find(struct tbr_net_resp *rs, u32 psn)
{
	int i;

	for (i = 0; i < TBR_NET_REPLAY; i++)
		if (rs->replay[i].valid && rs->replay[i].psn == psn)
			return &rs->replay[i];
	return NULL;
}

/* Is @psn one of the READ requests executed recently (TBR_NET_READS)? */
static bool tbr_net_read_seen(struct tbr_net_resp *rs, u32 psn)
{
	int i;

	for (i = 0; i < TBR_NET_READS; i++)
		if (rs->reads[i].valid && rs->reads[i].psn == psn)
			return true;
	return false;
}

/* A request we executed before: answer it again, never execute it twice. */
static void tbr_net_duplicate(struct tbr_qp *qp, const struct tbr_wire_hdr *hdr,
			      struct tbr_msg *msg, u32 psn)
{
	struct tbr_net_resp *rs = &qp->net->resp;
	struct tbr_replay *r;
	u32 seg;

	tbr_count(qp->tdev, TBR_CNT_DUPLICATE_REQUESTS, 1);
	switch (hdr->opcode) {
	case TBR_OP_READ_REQUEST:
		/* Reading again is harmless, and the memory may have changed. */
		seg = be32_to_cpu(((const struct tbr_wire_read *)
				   tbr_wire_op_ext(hdr))->resp_seg);
		if (!tbr_net_read_seg_ok(qp, seg, msg->length) ||
		    !tbr_net_read_seen(rs, psn))
			return;
		/* XRC: the memory is that of the named SRQ's PD, as at first. */
		if (qp->ibqp.qp_type == IB_QPT_XRC_TGT && !msg->srq)
			return;
		if (!(qp->access & IB_ACCESS_REMOTE_READ) ||
		    tbr_sgl_resolve_remote(&rs->xfer->remote, qp->tdev,
					   msg->srq ? msg->srq->pdn : qp->pdn,
					   qp->ibqp.qp_num, msg->rkey,
					   msg->remote_addr,
					   msg->length, IB_ACCESS_REMOTE_READ))
			return;
		tbr_net_read_respond(qp, &rs->xfer->remote, msg->length, seg,
				     psn);
		tbr_sgl_put(&rs->xfer->remote);
		return;
	case TBR_OP_CMP_SWAP:
	case TBR_OP_FETCH_ADD:
		r = tbr_net_replay_find(rs, psn);
		if (r)
			tbr_net_atomic_respond(qp, psn, r->orig);
		return;
	default:
		/*
		 * Where the requester asks (a probe, the end of a burst);
		 * ACKing every duplicate of a resent window would flood it.
		 */
		if (hdr->flags & TBR_WF_ACK_REQ)
			tbr_net_ack_now(qp, tbr_psn_add(rs->epsn, -1));
		return;
	}
}

static void tbr_net_rc_rx(struct tbr_qp *qp, const struct tbr_wire_hdr *hdr,
			  struct tbr_msg *msg)
{
	struct tbr_net_resp *rs = &qp->net->resp;
	u32 psn = be32_to_cpu(hdr->psn) & TBR_PSN_MASK;
	s32 d = tbr_psn_diff(psn, rs->epsn);
	enum tbr_resp resp;
	u32 frames = 1, seg = 0;

	if (d < 0)
		return tbr_net_duplicate(qp, hdr, msg, psn);
	if (d > 0) {
		tbr_count(qp->tdev, TBR_CNT_OUT_OF_SEQUENCE, 1);
		/*
		 * One NAK per gap, and one more each time the frames after
		 * the gap start over (a PSN not after the one that made us
		 * NAK): the requester went back, and the frame we wait for
		 * was lost again.  Without it only the timer would tell.
		 */
		if (!rs->nak_sent || !tbr_psn_before(rs->nak_trigger, psn)) {
			rs->nak_sent = true;
			rs->nak_trigger = psn;
			tbr_net_send_ack(qp, TBR_SYN_NAK_SEQ, rs->epsn);
		}
		return;
	}

	if (hdr->opcode == TBR_OP_READ_REQUEST) {
		seg = be32_to_cpu(((const struct tbr_wire_read *)
				   tbr_wire_op_ext(hdr))->resp_seg);
		if (!tbr_net_read_seg_ok(qp, seg, msg->length)) {
			tbr_qp_set_error(qp);
			return tbr_net_nak(qp, TBR_RESP_REM_INV, psn);
		}
		frames = tbr_psn_frames(msg->length, seg);
	}

	resp = tbr_rx_message(qp, msg);
	if (resp != TBR_RESP_OK)
		return tbr_net_nak(qp, resp, psn);

	rs->nak_sent = false;
	rs->epsn = tbr_psn_add(psn, frames);
	switch (hdr->opcode) {
	case TBR_OP_READ_REQUEST:
		/* Its answers acknowledge everything before them. */
		atomic_set(&rs->ack_owed, 0);
		rs->reads[rs->reads_next] = (struct tbr_read_seen) {
			.psn = psn, .valid = true,
		};
		rs->reads_next = (rs->reads_next + 1) % TBR_NET_READS;
		tbr_net_read_respond(qp, &rs->xfer->remote, msg->length, seg,
				     psn);
		tbr_sgl_put(&rs->xfer->remote);
		return;
	case TBR_OP_CMP_SWAP:
	case TBR_OP_FETCH_ADD:
		atomic_set(&rs->ack_owed, 0);
		rs->replay[rs->replay_next] = (struct tbr_replay) {
			.psn = psn, .valid = true, .orig = rs->xfer->atomic_orig,
		};
		rs->replay_next = (rs->replay_next + 1) % TBR_NET_REPLAY;
		tbr_net_atomic_respond(qp, psn, rs->xfer->atomic_orig);
		return;
	}
	tbr_net_ack_owe(qp, psn, hdr->flags & TBR_WF_ACK_REQ);
}

void tbr_net_resp_rx(struct tbr_qp *qp, const struct sk_buff *skb,
		     const struct tbr_wire_hdr *hdr, unsigned int hdr_len)
{
	struct tbr_net_resp *rs = &qp->net->resp;
	u32 src_qpn = be32_to_cpu(hdr->src_qpn) & TBR_PSN_MASK;
	struct tbr_ah_info ah;
	struct tbr_msg msg;
	u32 psn;

	spin_lock(&rs->lock);
	if (!tbr_net_parse(qp, skb, hdr, hdr_len, &msg, &ah)) {
		tbr_count(qp->tdev, TBR_CNT_RX_BAD_FRAMES, 1);
		goto out;
	}
	if (hdr->transport == TBR_TRANSPORT_UD) {
		/* Datagrams: the Q_Key is the only admission check. */
		if (msg.qkey == READ_ONCE(qp->qkey))
			tbr_rx_message(qp, &msg);
		goto out;
	}
	/*
	 * A connected QP takes traffic only from the QP it is connected to;
	 * others are left over from an earlier owner of its number.
	 */
	if (src_qpn != READ_ONCE(qp->dest_qpn)) {
		tbr_count(qp->tdev, TBR_CNT_RX_STALE_FRAMES, 1);
		goto out;
	}
	if (hdr->transport == TBR_TRANSPORT_RC ||
	    hdr->transport == TBR_TRANSPORT_XRC) {
		tbr_rx_xrc_get(qp, &msg);
		tbr_net_rc_rx(qp, hdr, &msg);
		tbr_rx_xrc_put(&msg);
		goto out;
	}
	/* UC carries SEND and WRITE only: a READ or atomic is invalid. */
	if (hdr->opcode != TBR_OP_SEND && hdr->opcode != TBR_OP_SEND_IMM &&
	    hdr->opcode != TBR_OP_SEND_INV &&
	    hdr->opcode != TBR_OP_WRITE && hdr->opcode != TBR_OP_WRITE_IMM) {
		tbr_count(qp->tdev, TBR_CNT_RX_BAD_FRAMES, 1);
		goto out;
	}
	/* UC: in order, or the first frame of a new message. */
	psn = be32_to_cpu(hdr->psn) & TBR_PSN_MASK;
	if (psn != rs->epsn) {
		tbr_count(qp->tdev, TBR_CNT_OUT_OF_SEQUENCE, 1);
		if (!msg.first)
			goto out;
	}
	rs->epsn = tbr_psn_add(psn, 1);
	tbr_rx_message(qp, &msg);
out:
	spin_unlock(&rs->lock);
}
