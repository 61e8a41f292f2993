/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The RC requester's window, shared by its three files:
 *   net_req_tx.c     WQEs into the window, frames out: the send loop, run
 *                    by the engine (process context) and by the receive
 *                    path and the timers themselves (softirq, a budget)
 *   net_req.c        ACKs, NAKs and responses in: WQEs done, completions
 *   net_req_timer.c  the retransmission deadline, the early probe and the
 *                    round trip it is measured against
 * Everything in struct tbr_net_req is under its lock.
 */
#ifndef TBRDMA_NET_REQ_H
#define TBRDMA_NET_REQ_H

#include "net.h"

static inline bool tbr_is_read_or_atomic(u32 wr_opcode)
{
	return wr_opcode == IB_UVERBS_WR_RDMA_READ ||
	       wr_opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

static inline struct tbr_inflight *tbr_req_at(struct tbr_net_req *rq, u32 idx)
{
	return &rq->win[idx & (TBR_NET_WINDOW - 1)];
}

static inline u32 tbr_req_count(const struct tbr_net_req *rq)
{
	return rq->tail - rq->head;
}

/* The first PSN not yet acknowledged. */
static inline u32 tbr_req_una(struct tbr_net_req *rq)
{
	return tbr_req_count(rq) ? rq->acked_psn : rq->psn_next;
}

/* Where to resend from after a timeout: the head WQE's first unanswered PSN. */
static inline u32 tbr_req_resend_from(struct tbr_net_req *rq, struct tbr_inflight *e)
{
	if (e->opcode == IB_UVERBS_WR_RDMA_READ)
		return tbr_psn_add(e->first_psn, rounddown(e->read_next,
							   TBR_NET_READ_CHUNK));
	if (tbr_is_read_or_atomic(e->opcode) ||
	    tbr_psn_before(rq->acked_psn, e->first_psn))
		return e->first_psn;
	return rq->acked_psn;
}

static inline u32 tbr_inflight_last_psn(const struct tbr_inflight *e)
{
	return tbr_psn_add(e->first_psn, e->nframes - 1);
}

/* The WQE in flight whose PSN range holds @psn, or NULL. */
static inline struct tbr_inflight *tbr_req_find(struct tbr_net_req *rq, u32 psn)
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

/* net_req_tx.c */
u8 tbr_wire_opcode(u32 wr_opcode);
void tbr_req_kick(struct tbr_qp *qp);
void tbr_req_flush(struct tbr_qp *qp);

/* net_req.c */
void tbr_req_advance(struct tbr_qp *qp);

/* net_req_timer.c */
void tbr_req_arm(struct tbr_qp *qp);
void tbr_req_rtt_sent(struct tbr_net_req *rq, u32 psn, bool again);
void tbr_req_rtt_acked(struct tbr_net_req *rq, u32 next);

#endif /* TBRDMA_NET_REQ_H */
