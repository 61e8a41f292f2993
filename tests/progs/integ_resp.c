// SPDX-License-Identifier: GPL-2.0-only
/*
 * Integrity test, responder side of one QP pair.  Replays the requester's
 * op sequence to know, in order, which messages consume a receive WQE (SEND,
 * SEND_WITH_IMM, WRITE_WITH_IMM), their size, immediate and pattern; posts
 * receives sized for them (random scatter lists, sometimes with slack) in a
 * ring over V, and on each completion checks status, opcode, flags,
 * immediate, byte_len, every payload byte and that nothing outside the
 * message (slack, gaps, guards; all of a WRITE_WITH_IMM's buffer) changed.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integ.h"

struct rrec {
	long k;
	struct op op;
	size_t coff, clen;	/* chunk of V */
	int nsge;
	size_t off[MAX_SGE];	/* offsets into V */
	uint32_t len[MAX_SGE];
};

struct resp {
	const struct cfg *c;
	int q;
	struct ibv_qp *qp;
	struct ibv_mr *vmr, *rmr;
	uint8_t *V;
	struct rng ops, lay;
	long replay, nops;	/* next op of the pair's sequence to look at */
	int have_pend;
	struct rrec pend;
	struct rrec fifo[RQ_DEPTH];	/* posted, oldest first */
	int head, n;
	size_t wpos;		/* ring: end of the newest chunk */
};

struct resp *resp_new(const struct cfg *c, int q, struct ibv_pd *pd,
		      struct ibv_qp *qp)
{
	struct resp *r = calloc(1, sizeof(*r));
	int peer = (me + c->procs - 1) % c->procs;	/* whose pair this is */

	if (!r)
		return NULL;
	r->c = c;
	r->q = q;
	r->qp = qp;
	r->V = lay.V[peer][q];
	r->nops = ops_for(c, peer, q);
	rng_seed(&r->ops, c->seed, peer, q);
	rng_seed(&r->lay, c->seed, peer, q + 2000);
	r->vmr = ibv_reg_mr(pd, r->V, c->vsize, IBV_ACCESS_LOCAL_WRITE);
	r->rmr = ibv_reg_mr(pd, lay.R[peer][q], c->rsize,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ);
	if (!r->vmr || !r->rmr) {
		fail_op("responder %d: ibv_reg_mr failed", q);
		free(r);
		return NULL;
	}
	sh->pub[me].r_rkey[q] = r->rmr->rkey;
	return r;
}

int resp_done(const struct resp *r)
{
	return r->replay >= r->nops && !r->have_pend && r->n == 0;
}

void resp_state(const struct resp *r, char *buf, size_t len)
{
	snprintf(buf, len, "resp qp %u: replayed %ld/%ld, %d receives posted, oldest for op %ld",
		 r->qp->qp_num, r->replay, r->nops, r->n,
		 r->n ? r->fifo[r->head].k : -1L);
}

/* Lay the receive out relative to its chunk: segments with gaps >= GUARD. */
static void layout(struct resp *r, struct rrec *e)
{
	struct rng *g = &r->lay;
	size_t l = 0;

	if (e->op.type == OP_WRITE_IMM) {
		/* Consumes a WQE but must not touch its buffer. */
		e->nsge = rnd_below(g, 2);
		e->len[0] = 16;
	} else {
		uint32_t cap = e->op.size, left;
		int n;

		if (rnd_below(g, 3))
			cap += rnd_below(g, 256);	/* slack must stay untouched */
		n = rnd_below(g, 2) ? 1 : 1 + rnd_below(g, r->c->recv_sge);
		if (n > (int)cap)
			n = cap;
		left = cap;
		for (int i = 0; i < n; i++) {
			e->len[i] = i == n - 1 ? left :
				    1 + rnd_below(g, left - (n - 1 - i));
			left -= e->len[i];
		}
		e->nsge = n;
	}
	for (int i = 0; i < e->nsge; i++) {
		e->off[i] = l + GUARD + rnd_below(g, 32);
		l = e->off[i] + e->len[i];
	}
	e->clen = l + GUARD;
}

/* FIFO ring allocation of LEN bytes in V; -1 when it does not fit now. */
static long ring_alloc(struct resp *r, size_t len)
{
	size_t tail = r->n ? r->fifo[r->head].coff : 0;
	int wrapped = r->n && r->wpos <= tail;

	if (!r->n)
		r->wpos = 0;
	if (!wrapped) {
		if (r->wpos + len <= r->c->vsize)
			return r->wpos;
		if (len <= tail)
			return 0;
		return -1;
	}
	return r->wpos + len <= tail ? (long)r->wpos : -1;
}

/* Next op of the sequence that consumes a receive, into r->pend. */
static int next_recv_op(struct resp *r)
{
	while (!r->have_pend && r->replay < r->nops) {
		struct op op;

		gen_op(&r->ops, r->c, &op);
		if (op_recv(&op)) {
			memset(&r->pend, 0, sizeof(r->pend));
			r->pend.op = op;
			r->pend.k = r->replay;
			layout(r, &r->pend);
			r->have_pend = 1;
		}
		r->replay++;
	}
	return r->have_pend;
}

int resp_replenish(struct resp *r)
{
	struct ibv_recv_wr wr[RQ_DEPTH], *bad;
	struct ibv_sge sg[RQ_DEPTH][MAX_SGE];
	int m = 0, err;

	while (r->n < RQ_DEPTH && next_recv_op(r)) {
		struct rrec *e = &r->pend;
		long off = ring_alloc(r, e->clen);

		if (off < 0)
			break;
		e->coff = off;
		r->wpos = off + e->clen;
		for (int i = 0; i < e->nsge; i++)
			e->off[i] += off;
		memset(r->V + off, CANARY, e->clen);
		memset(&wr[m], 0, sizeof(wr[m]));
		for (int i = 0; i < e->nsge; i++)
			sg[m][i] = (struct ibv_sge){ (uintptr_t)(r->V + e->off[i]),
						     e->len[i], r->vmr->lkey };
		wr[m].wr_id = ((uint64_t)r->q << 32) | (uint32_t)e->k;
		wr[m].sg_list = sg[m];
		wr[m].num_sge = e->nsge;
		if (m)
			wr[m - 1].next = &wr[m];
		m++;
		r->fifo[(r->head + r->n++) % RQ_DEPTH] = *e;
		r->have_pend = 0;
	}
	if (!m)
		return 0;
	err = ibv_post_recv(r->qp, wr, &bad);
	if (err)
		fail_op("QP %u: ibv_post_recv of %d WRs failed: %s", r->qp->qp_num,
			m, strerror(err));
	return err ? -1 : 0;
}

/* Payload in the scatter list, canaries everywhere else in the chunk. */
static int check_data(struct resp *r, const struct rrec *e)
{
	uint64_t pos = 0, msg = e->op.type == OP_WRITE_IMM ? 0 : e->op.size;
	size_t prev = e->coff;
	const uint8_t *V = r->V;
	const char *where = NULL;
	long bad;
	int i;

	for (i = 0; i < e->nsge; i++) {
		size_t m = msg - pos < e->len[i] ? msg - pos : e->len[i];

		if (canary_check(V + prev, e->off[i] - prev) >= 0) {
			where = "before the SGE";
			break;
		}
		bad = pat_check(V + e->off[i], m, e->op.key, pos);
		if (bad >= 0) {
			fail_op("QP %u op %ld %s %u B: received byte %" PRIu64 " (SGE %d of %d) is 0x%02x, expected 0x%02x",
				r->qp->qp_num, e->k, op_name(e->op.type), e->op.size,
				pos + bad, i, e->nsge, V[e->off[i] + bad],
				pat_byte(e->op.key, pos + bad));
			return -1;
		}
		if (canary_check(V + e->off[i] + m, e->len[i] - m) >= 0) {
			where = "past the message's end in the SGE";
			break;
		}
		pos += m;
		prev = e->off[i] + e->len[i];
	}
	if (!where && canary_check(V + prev, e->coff + e->clen - prev) >= 0)
		where = "after the last SGE";
	if (!where)
		return 0;
	fail_op("QP %u op %ld %s %u B: receive buffer changed %s (SGE %d of %d)",
		r->qp->qp_num, e->k, op_name(e->op.type), e->op.size, where,
		i, e->nsge);
	return -1;
}

int resp_complete(struct resp *r, const struct ibv_wc *wc)
{
	const struct rrec *e = &r->fifo[r->head];
	int imm = e->op.type != OP_SEND;
	enum ibv_wc_opcode opc = e->op.type == OP_WRITE_IMM ?
				 IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;

	if (!r->n) {
		fail_op("QP %u: receive completion with nothing posted",
			r->qp->qp_num);
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS || (uint32_t)wc->wr_id != (uint32_t)e->k ||
	    wc->opcode != opc || !!(wc->wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && wc->imm_data != htonl(e->op.imm)) ||
	    wc->byte_len != e->op.size || wc->qp_num != r->qp->qp_num) {
		fail_op("QP %u: receive completion status %s (%d) opcode %d flags 0x%x imm 0x%x byte_len %u wr_id op %u; expected op %ld %s, %u B, imm 0x%x, %d SGEs",
			r->qp->qp_num, ibv_wc_status_str(wc->status), wc->status,
			wc->opcode, wc->wc_flags, ntohl(wc->imm_data), wc->byte_len,
			(uint32_t)wc->wr_id, e->k, op_name(e->op.type), e->op.size,
			e->op.imm, e->nsge);
		return -1;
	}
	if (check_data(r, e))
		return -1;
	sh->res[me].recvs++;
	r->head = (r->head + 1) % RQ_DEPTH;
	r->n--;
	return 0;
}
