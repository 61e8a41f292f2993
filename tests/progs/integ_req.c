// SPDX-License-Identifier: GPL-2.0-only
/*
 * Integrity test, requester side of one QP pair.  Works in rounds: build
 * up to MAX_BATCH WRs whose destinations do not overlap, post them as 1..3
 * post lists (random SGE lists, inline, fence, only some signalled; the
 * last one always), wait for the last completion, then check every READ
 * and WRITE destination byte, the canaries around them and the atomic
 * results.  One round in flight per QP keeps the check simple; the device
 * still sees many QPs and processes at once.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integ.h"

struct wrec {
	struct op op;
	long k;			/* op index on this QP */
	int nsge;
	size_t loff[MAX_SGE];	/* local segments, offsets into L */
	uint32_t llen[MAX_SGE];
	size_t roff;		/* remote range in R */
	int cnt;		/* atomics: counter */
	uint64_t arg, swp;
	int signalled, inl, fence;
};

struct req {
	const struct cfg *c;
	int q, gq;		/* local and global QP index */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *L, *R;
	uint32_t rrkey, crkey;
	struct rng ops, lay;
	long next, nops;
	int have_pend;
	struct op pend;
	int nb, busy, cqe_next;	/* round size; waiting; next signalled */
	struct wrec b[MAX_BATCH];
	uint32_t aseq;
	int max_inline;
};

struct req *req_new(const struct cfg *c, int q, struct ibv_pd *pd,
		    struct ibv_qp *qp)
{
	struct req *r = calloc(1, sizeof(*r));
	int peer = (me + 1) % c->procs;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!r)
		return NULL;
	r->c = c;
	r->q = q;
	r->gq = me * MAX_QPS + q;
	r->qp = qp;
	r->L = lay.L[me][q];
	r->R = lay.R[me][q];
	r->rrkey = sh->pub[peer].r_rkey[q];
	r->crkey = sh->pub[peer].cnt_rkey;
	r->nops = ops_for(c, me, q);
	rng_seed(&r->ops, c->seed, me, q);
	rng_seed(&r->lay, c->seed, me, q + 1000);
	r->mr = ibv_reg_mr(pd, r->L, c->lsize, IBV_ACCESS_LOCAL_WRITE);
	if (!r->mr || ibv_query_qp(qp, &a, IBV_QP_CAP, &ia)) {
		fail_op("requester %d: reg_mr/query_qp failed", q);
		free(r);
		return NULL;
	}
	r->max_inline = ia.cap.max_inline_data;
	return r;
}

int req_done(const struct req *r)
{
	return !r->busy && r->next >= r->nops;
}

void req_state(const struct req *r, char *buf, size_t len)
{
	int n = snprintf(buf, len, "req qp %u: op %ld/%ld, %s", r->qp->qp_num,
			 r->next, r->nops, r->busy ? "waiting for" : "idle");

	/* The round in flight: op, type, size, SGEs, Signalled/Inline/Fence. */
	for (int i = 0; r->busy && i < r->nb && n > 0 && (size_t)n < len; i++) {
		const struct wrec *w = &r->b[i];

		n += snprintf(buf + n, len - n, "%s %ld:%s/%u/%d%s%s%s%s",
			      i ? "," : "", w->k, op_name(w->op.type), w->op.size,
			      w->nsge, w->signalled ? "S" : "", w->inl ? "I" : "",
			      w->fence ? "F" : "", i == r->cqe_next ? "<" : "");
	}
}

static int is_atomic(int t)
{
	return t == OP_CAS || t == OP_FAA;
}

static int sge_limit(const struct req *r, int type)
{
	return type == OP_READ ? r->c->read_sge : r->c->send_sge;
}

/* Split SIZE bytes into up to N pieces at random cut points; returns the
 * number of pieces. */
static int split(struct rng *g, uint32_t size, int n, uint32_t *len)
{
	uint32_t cut[MAX_SGE + 1];
	int m = 0;

	if (n > (int)size)
		n = size;
	for (int i = 0; i < n - 1; i++) {
		uint32_t x = 1 + rnd_below(g, size - 1), j = m;

		while (j > 0 && cut[j - 1] > x) {
			cut[j] = cut[j - 1];
			j--;
		}
		cut[j] = x;
		m++;
	}
	int k = 0;
	uint32_t prev = 0;

	cut[m++] = size;
	for (int i = 0; i < m; i++) {
		if (cut[i] == prev)
			continue;	/* duplicate cut */
		len[k++] = cut[i] - prev;
		prev = cut[i];
	}
	return k;
}

/* Lay out W in L (from *lcur) and R (from *rcur); 0 if it fits. */
static int place(struct req *r, struct wrec *w, size_t *lcur, size_t *rcur)
{
	struct rng *g = &r->lay;
	int t = w->op.type, dest = (t == OP_READ);
	size_t l = *lcur;

	if (is_atomic(t)) {
		size_t off = (l + GUARD + 7 + 8 * rnd_below(g, 4)) & ~(size_t)7;

		if (off + 8 + GUARD > r->c->lsize)
			return -1;
		w->nsge = 1;
		w->loff[0] = off;
		w->llen[0] = 8;
		*lcur = off + 8;
		return 0;
	}
	int n = rnd_below(g, 2) ? 1 : 1 + rnd_below(g, sge_limit(r, t));

	w->nsge = split(g, w->op.size, n, w->llen);
	for (int i = 0; i < w->nsge; i++) {
		size_t gap = dest ? GUARD + rnd_below(g, 64) :
			     rnd_below(g, 2) ? 0 : rnd_below(g, 64);

		w->loff[i] = l + gap + (i == 0 ? GUARD : 0);
		l = w->loff[i] + w->llen[i];
	}
	if (l + GUARD > r->c->lsize)
		return -1;
	if (t == OP_WRITE || t == OP_WRITE_IMM || t == OP_READ) {
		w->roff = *rcur + GUARD + rnd_below(g, 64);
		if (w->roff + w->op.size + GUARD > r->c->rsize)
			return -1;
		*rcur = w->roff + w->op.size;
	}
	*lcur = l;
	return 0;
}

/* Fill sources, poison destinations, pick atomic operands. */
static void prepare(struct req *r, struct wrec *w)
{
	struct rng *g = &r->lay;
	uint64_t pos = 0;

	switch (w->op.type) {
	case OP_SEND: case OP_SEND_IMM: case OP_WRITE: case OP_WRITE_IMM:
		for (int i = 0; i < w->nsge; pos += w->llen[i++])
			pat_fill(r->L + w->loff[i], w->llen[i], w->op.key, pos);
		if (w->op.type == OP_WRITE || w->op.type == OP_WRITE_IMM)
			memset(r->R + w->roff - GUARD, CANARY,
			       w->op.size + 2 * GUARD);
		break;
	case OP_READ:
		for (int i = 0; i < w->nsge; i++)
			memset(r->L + w->loff[i] - GUARD, CANARY,
			       w->llen[i] + 2 * GUARD);
		pat_fill(r->R + w->roff, w->op.size, w->op.key, 0);
		break;
	default: {
		uint64_t cur;

		memset(r->L + w->loff[0] - GUARD, CANARY, 8 + 2 * GUARD);
		w->cnt = rnd_below(g, NCNT);
		cur = __atomic_load_n(counter_addr(&lay, w->cnt), __ATOMIC_RELAXED);
		if (w->op.type == OP_FAA) {
			w->arg = 1 + rnd_below(g, 1000);
		} else {
			/* Mostly the current value (often wins), else a stale one
			 * (must lose: the counter only grows). */
			w->arg = rnd_below(g, 10) < 7 ? cur : cur - 1 - rnd_below(g, 5);
			w->swp = w->arg + 1 + rnd_below(g, 1000);
		}
	}
	}
}

static void to_wr(struct req *r, struct wrec *w, struct ibv_send_wr *wr,
		  struct ibv_sge *sg)
{
	static const enum ibv_wr_opcode opc[NOPTYPES] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};

	memset(wr, 0, sizeof(*wr));
	for (int i = 0; i < w->nsge; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)(r->L + w->loff[i]),
					  w->llen[i], r->mr->lkey };
	wr->wr_id = ((uint64_t)r->q << 32) | (uint32_t)w->k;
	wr->sg_list = sg;
	wr->num_sge = w->nsge;
	wr->opcode = opc[w->op.type];
	wr->send_flags = (w->signalled ? IBV_SEND_SIGNALED : 0) |
			 (w->inl ? IBV_SEND_INLINE : 0);
	w->fence = r->c->fence && rnd_below(&r->lay, 20) == 0;
	if (w->fence)
		wr->send_flags |= IBV_SEND_FENCE;
	wr->imm_data = htonl(w->op.imm);
	if (is_atomic(w->op.type)) {
		wr->wr.atomic.remote_addr = (uintptr_t)counter_addr(&lay, w->cnt);
		wr->wr.atomic.rkey = r->crkey;
		wr->wr.atomic.compare_add = w->arg;
		wr->wr.atomic.swap = w->swp;
	} else {
		wr->wr.rdma.remote_addr = (uintptr_t)(r->R + w->roff);
		wr->wr.rdma.rkey = r->rrkey;
	}
}

int req_idle_post(struct req *r)
{
	struct ibv_send_wr wr[MAX_BATCH], *bad;
	struct ibv_sge sg[MAX_BATCH][MAX_SGE];
	size_t lcur = 0, rcur = 0;
	int want, i;

	if (r->busy || r->next >= r->nops)
		return 0;
	want = 1 + rnd_below(&r->lay, MAX_BATCH);
	for (r->nb = 0; r->nb < want && r->next < r->nops; r->nb++) {
		struct wrec *w = &r->b[r->nb];

		if (!r->have_pend) {
			gen_op(&r->ops, r->c, &r->pend);
			r->have_pend = 1;
		}
		memset(w, 0, sizeof(*w));
		w->op = r->pend;
		w->k = r->next;
		if (place(r, w, &lcur, &rcur))
			break;	/* the next round starts with it */
		r->have_pend = 0;
		r->next++;
		prepare(r, w);
		w->signalled = rnd_below(&r->lay, 4) == 0;
		w->inl = w->op.type <= OP_WRITE_IMM && w->op.size <= (uint32_t)r->max_inline &&
			 rnd_below(&r->lay, 2);
	}
	if (r->nb == 0) {
		fail_op("QP %u: op %ld (%s, %u B) does not fit an empty round",
			r->qp->qp_num, r->next, op_name(r->pend.type), r->pend.size);
		return -1;
	}
	r->b[r->nb - 1].signalled = 1;
	for (i = 0; i < r->nb; i++) {
		to_wr(r, &r->b[i], &wr[i], sg[i]);
		if (i)
			wr[i - 1].next = &wr[i];
	}
	/* Post as 1..3 lists; inline data must be copied at post time, so
	 * scribble over inline sources as soon as post_send returns. */
	for (int first = 0; first < r->nb;) {
		int n = 1 + rnd_below(&r->lay, r->nb - first), err;

		if (rnd_below(&r->lay, 2))
			n = r->nb - first;
		wr[first + n - 1].next = NULL;
		err = ibv_post_send(r->qp, &wr[first], &bad);
		if (err) {
			fail_op("QP %u: ibv_post_send of %d WRs failed: %s", r->qp->qp_num,
				n, strerror(err));
			return -1;
		}
		for (i = first; i < first + n; i++)
			if (r->b[i].inl)
				for (int s = 0; s < r->b[i].nsge; s++)
					memset(r->L + r->b[i].loff[s], 0x5A, r->b[i].llen[s]);
		first += n;
	}
	r->busy = 1;
	r->cqe_next = 0;
	while (!r->b[r->cqe_next].signalled)
		r->cqe_next++;
	return 0;
}

static int check_range(struct req *r, const struct wrec *w, const uint8_t *p,
		       size_t len, uint64_t pos, const char *what)
{
	long bad = pat_check(p, len, w->op.key, pos);
	long g1 = canary_check(p - GUARD, GUARD), g2 = canary_check(p + len, GUARD);

	if (bad < 0 && g1 < 0 && g2 < 0)
		return 0;
	if (bad >= 0)
		fail_op("QP %u op %ld %s %u B (%d SGEs): %s byte %" PRIu64 " is 0x%02x, expected 0x%02x",
			r->qp->qp_num, w->k, op_name(w->op.type), w->op.size, w->nsge,
			what, pos + bad, p[bad], pat_byte(w->op.key, pos + bad));
	else
		fail_op("QP %u op %ld %s %u B (%d SGEs): %s: canary %s the range overwritten",
			r->qp->qp_num, w->k, op_name(w->op.type), w->op.size, w->nsge,
			what, g1 >= 0 ? "before" : "after");
	return -1;
}

static int verify(struct req *r, struct wrec *w)
{
	struct result *res = &sh->res[me];
	uint64_t pos = 0;

	res->ops++;
	res->bytes += w->op.size;
	if (w->op.type == OP_READ)
		res->bytes_in += w->op.size;
	else if (!is_atomic(w->op.type))
		res->bytes_out += w->op.size;
	switch (w->op.type) {
	case OP_WRITE: case OP_WRITE_IMM:
		return check_range(r, w, r->R + w->roff, w->op.size, 0,
				   "remote target");
	case OP_READ:
		for (int i = 0; i < w->nsge; pos += w->llen[i++])
			if (check_range(r, w, r->L + w->loff[i], w->llen[i], pos,
					"local READ destination"))
				return -1;
		return 0;
	case OP_CAS: case OP_FAA: {
		uint8_t *p = r->L + w->loff[0];
		long n = sh->nlog[me];

		if (canary_check(p - GUARD, GUARD) >= 0 || canary_check(p + 8, GUARD) >= 0) {
			fail_op("QP %u op %ld %s: wrote outside its 8-byte result",
				r->qp->qp_num, w->k, op_name(w->op.type));
			return -1;
		}
		if (n >= lay.logcap) {
			fail_op("atomic log full");
			return -1;
		}
		lay.log[me][n] = (struct alog){
			.counter = w->cnt, .qp = r->gq, .seq = r->aseq++,
			.kind = w->op.type == OP_FAA ? AOP_FAA : AOP_CAS,
			.arg = w->arg, .swp = w->swp,
		};
		memcpy(&lay.log[me][n].ret, p, 8);
		sh->nlog[me] = n + 1;
		res->atomics++;
		return 0;
	}
	}
	return 0;
}

int req_complete(struct req *r, const struct ibv_wc *wc)
{
	static const enum ibv_wc_opcode wco[NOPTYPES] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
	};
	struct wrec *w;

	if (!r->busy) {
		fail_op("QP %u: completion wr_id 0x%" PRIx64 " with nothing posted",
			r->qp->qp_num, wc->wr_id);
		return -1;
	}
	w = &r->b[r->cqe_next];
	if (wc->status != IBV_WC_SUCCESS || (uint32_t)wc->wr_id != (uint32_t)w->k ||
	    wc->opcode != wco[w->op.type] || wc->qp_num != r->qp->qp_num) {
		fail_op("QP %u: completion status %s (%d, vendor 0x%x) opcode %d wr_id op %u; expected op %ld %s %u B, %d SGEs%s, opcode %d",
			r->qp->qp_num, ibv_wc_status_str(wc->status), wc->status,
			wc->vendor_err, wc->opcode, (uint32_t)wc->wr_id, w->k,
			op_name(w->op.type), w->op.size, w->nsge, w->inl ? ", inline" : "",
			wco[w->op.type]);
		return -1;
	}
	if (r->cqe_next < r->nb - 1) {
		while (!r->b[++r->cqe_next].signalled)
			;
		return 0;
	}
	/* The last WR completed: on RC so did every one before it. */
	for (int i = 0; i < r->nb; i++)
		if (verify(r, &r->b[i]))
			return -1;
	r->busy = 0;
	return 0;
}
