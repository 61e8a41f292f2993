// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_uverbs, layer "verbs": random sequences of libibverbs calls through
 * the provider, on small pools of objects, with random and often invalid
 * arguments.  Only what would crash libibverbs or the provider themselves
 * (NULL CQs, SGE lists shorter than num_sge, inline data from unmapped
 * memory) is avoided: everything else goes to the kernel as it comes.
 *
 * Checked: every call returns success or an error code; destroying a PD,
 * CQ or SRQ that others use fails, destroying an unused object succeeds;
 * every completion has a valid status and opcode and a wr_id we posted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

#define NPD	4
#define NCQ	6
#define NQP	10
#define NSRQ	3
#define NMR	8
#define NAH	4
#define NMW	2
#define ARENA	(256 * 1024)
#define MAXSGE	40	/* our SGE arrays: more than the device's 32 */

struct vstate {
	struct rng r;
	uint64_t iter;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd[NPD];
	struct ibv_cq *cq[NCQ];
	struct ibv_qp *qp[NQP];
	struct ibv_srq *srq[NSRQ];
	struct ibv_mr *mr[NMR];
	struct ibv_ah *ah[NAH];
	struct ibv_mw *mw[NMW];
	uint8_t *arena;		/* what MRs register and SGEs point into */
	void *bad;		/* a PROT_NONE page */
};

#define PICK(s, arr) ((arr)[rnd(&(s)->r, sizeof(arr) / sizeof((arr)[0]))])
#define SLOT(s, arr) (&(arr)[rnd(&(s)->r, sizeof(arr) / sizeof((arr)[0]))])

/* A random live object of a pool, or NULL. */
static void *pick_live(struct rng *r, void **arr, unsigned int n)
{
	unsigned int i, start = rnd(r, n);

	for (i = 0; i < n; i++)
		if (arr[(start + i) % n])
			return arr[(start + i) % n];
	return NULL;
}
#define LIVE(s, arr) \
	pick_live(&(s)->r, (void **)(arr), sizeof(arr) / sizeof((arr)[0]))

/* A size for a create: mostly small and valid, sometimes at or past the
 * device limit, sometimes absurd. */
static uint32_t rnd_size(struct rng *r, uint32_t dev_max)
{
	switch (rnd(r, 20)) {
	case 0:
		return 0;
	case 1:
		return dev_max;
	case 2:
		return dev_max + 1;
	case 3:
		return rnd_u32(r);
	default:
		return 1 + rnd(r, 64);
	}
}

static int rnd_access(struct rng *r)
{
	static const int good[] = {
		IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_REMOTE_READ,
		0,
	};

	if (chance(r, 75))
		return good[rnd(r, sizeof(good) / sizeof(good[0]))];
	return (int)(rnd_u32(r) & 0xffff);
}

/* An address for an SGE or an MR: in the arena, near it, or nowhere. */
static uint64_t rnd_addr(struct vstate *s, uint32_t len)
{
	struct rng *r = &s->r;

	switch (rnd(r, 12)) {
	case 0:
		return 0;
	case 1:
		return (uintptr_t)s->bad;
	case 2:
		return 0xffff888000000000ULL + rnd(r, 1 << 20);	/* kernel */
	case 3:
		return rnd_u64(r);
	case 4:
		return (uintptr_t)s->arena + ARENA - rnd(r, 64);	/* runs off */
	default:
		len = len < ARENA ? len : ARENA;
		return (uintptr_t)s->arena + rnd(r, ARENA - len + 1);
	}
}

static uint32_t rnd_len(struct rng *r)
{
	switch (rnd(r, 8)) {
	case 0:
		return rnd_u32(r);
	case 1:
		return 0;
	default:
		return rnd(r, 8192);
	}
}

/* A key: one of a live MR's, a dead or made-up one. */
static uint32_t rnd_key(struct vstate *s, bool remote)
{
	struct ibv_mr *mr = LIVE(s, s->mr);

	if (mr && chance(&s->r, 70))
		return remote ? mr->rkey : mr->lkey;
	if (mr && chance(&s->r, 50))
		return (remote ? mr->rkey : mr->lkey) ^ (1U << rnd(&s->r, 32));
	return rnd_u32(&s->r);
}

static void fill_sges(struct vstate *s, struct ibv_sge *sg, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_mr *mr = LIVE(s, s->mr);

		sg[i].length = rnd_len(&s->r);
		if (mr && chance(&s->r, 60)) {
			/* Inside (or just off the end of) a live MR. */
			uint64_t base = (uintptr_t)mr->addr;
			uint32_t len = sg[i].length < mr->length ?
				       sg[i].length : (uint32_t)mr->length;

			sg[i].addr = base + rnd(&s->r, (uint32_t)mr->length -
							len + 2);
			sg[i].lkey = chance(&s->r, 90) ? mr->lkey :
							 rnd_key(s, false);
		} else {
			sg[i].addr = rnd_addr(s, sg[i].length);
			sg[i].lkey = rnd_key(s, false);
		}
	}
}

/* Which objects use another. */
static bool pd_busy(struct vstate *s, struct ibv_pd *pd)
{
	for (int i = 0; i < NQP; i++)
		if (s->qp[i] && s->qp[i]->pd == pd)
			return true;
	for (int i = 0; i < NMR; i++)
		if (s->mr[i] && s->mr[i]->pd == pd)
			return true;
	for (int i = 0; i < NSRQ; i++)
		if (s->srq[i] && s->srq[i]->pd == pd)
			return true;
	for (int i = 0; i < NAH; i++)
		if (s->ah[i] && s->ah[i]->pd == pd)
			return true;
	for (int i = 0; i < NMW; i++)
		if (s->mw[i] && s->mw[i]->pd == pd)
			return true;
	return false;
}

/* Is there a live memory window in PD (one may be bound to its MRs)? */
static bool mw_in_pd(struct vstate *s, struct ibv_pd *pd)
{
	for (int i = 0; i < NMW; i++)
		if (s->mw[i] && s->mw[i]->pd == pd)
			return true;
	return false;
}

/*
 * An XRC send QP has no receive side: the kernel takes neither its
 * receive CQ nor its SRQ (libibverbs still shows what was passed).
 */
static bool qp_receives(const struct ibv_qp *qp)
{
	return qp->qp_type != IBV_QPT_XRC_SEND;
}

static bool cq_busy(struct vstate *s, struct ibv_cq *cq)
{
	for (int i = 0; i < NQP; i++)
		if (s->qp[i] && (s->qp[i]->send_cq == cq ||
				 (qp_receives(s->qp[i]) &&
				  s->qp[i]->recv_cq == cq)))
			return true;
	return false;
}

static bool srq_busy(struct vstate *s, struct ibv_srq *srq)
{
	for (int i = 0; i < NQP; i++)
		if (s->qp[i] && qp_receives(s->qp[i]) && s->qp[i]->srq == srq)
			return true;
	return false;
}

/* A destroy: must fail when the object is busy, succeed otherwise. */
static bool check_destroy(const char *what, int ret, bool busy)
{
	if (busy && !ret) {
		fuzz_fail("%s of an object in use succeeded", what);
		return true;
	}
	if (!busy && ret) {
		fuzz_fail("%s of an unused object failed: %d", what, ret);
		return false;
	}
	fuzz_ret(what, ret);
	return !ret;
}

static void drain_events(struct vstate *s)
{
	struct ibv_cq *cq;
	void *ctx;

	fuzz_drain_async(F.v.ctx);
	while (!ibv_get_cq_event(s->ch, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
}

/* ---- the operations ----------------------------------------------------- */

static void op_pd(struct vstate *s)
{
	struct ibv_pd **p = SLOT(s, s->pd);

	if (!*p) {
		*p = ibv_alloc_pd(F.v.ctx);
		fuzz_ptr("alloc_pd", *p);
	} else if (check_destroy("dealloc_pd", ibv_dealloc_pd(*p),
				 pd_busy(s, *p))) {
		*p = NULL;
	}
}

static void op_cq(struct vstate *s)
{
	struct ibv_cq **p = SLOT(s, s->cq);
	struct rng *r = &s->r;

	if (!*p) {
		int cqe = (int)rnd_size(r, F.v.attr.max_cqe);
		int vec = chance(r, 90) ? 0 : (int)rnd_u32(r);

		*p = ibv_create_cq(F.v.ctx, cqe, NULL,
				   chance(r, 50) ? s->ch : NULL, vec);
		fuzz_ptr("create_cq", *p);
		if (*p && (cqe < 1 || cqe > F.v.attr.max_cqe))
			fuzz_fail("create_cq with cqe %d succeeded", cqe);
		return;
	}
	drain_events(s);
	if (check_destroy("destroy_cq", ibv_destroy_cq(*p), cq_busy(s, *p)))
		*p = NULL;
}

static void op_cq_misc(struct vstate *s)
{
	struct ibv_cq *cq = LIVE(s, s->cq);
	struct rng *r = &s->r;
	struct ibv_wc wc[16];
	int n;

	if (!cq)
		return;
	switch (rnd(r, 4)) {
	case 0:
		fuzz_ret("resize_cq",
			 ibv_resize_cq(cq, (int)rnd_size(r, F.v.attr.max_cqe)));
		break;
	case 1:
		fuzz_ret("req_notify_cq", ibv_req_notify_cq(cq, rnd(r, 2)));
		break;
	default:
		n = ibv_poll_cq(cq, 1 + rnd(r, 16), wc);
		if (n < 0) {
			fuzz_fail("poll_cq returned %d", n);
			return;
		}
		F.ok_ret++;
		for (int i = 0; i < n; i++)
			fuzz_check_wc(&wc[i], true);
	}
}

static void op_mr(struct vstate *s)
{
	struct ibv_mr **p = SLOT(s, s->mr);
	struct rng *r = &s->r;
	int ret;

	if (!*p) {
		struct ibv_pd *pd = LIVE(s, s->pd);
		uint32_t len = chance(r, 80) ? 1 + rnd(r, ARENA) : rnd_u32(r);
		uint64_t addr;

		/* Never memory of ours outside the arena: what an MR covers,
		 * traffic may write into.  Past the arena's end is its guard
		 * page, so lengths that run off fail to pin. */
		switch (rnd(r, 10)) {
		case 0: addr = 0; break;
		case 1: addr = (uintptr_t)s->bad; break;
		case 2: addr = 0xffff888000000000ULL; break;
		case 3: addr = 0x8000000000000000ULL | rnd_u64(r); break;
		default:
			addr = (uintptr_t)s->arena +
			       rnd(r, ARENA - (len < ARENA ? len : ARENA) + 1);
		}

		if (!pd)
			return;
		*p = ibv_reg_mr(pd, (void *)(uintptr_t)addr, len,
				rnd_access(r));
		fuzz_ptr("reg_mr", *p);
		return;
	}
	/* A window of its PD may be bound to it: then EBUSY is right
	 * (IB spec 10.6.7.2.6); which binds succeeded is not tracked. */
	ret = ibv_dereg_mr(*p);
	if (ret == EBUSY && mw_in_pd(s, (*p)->pd)) {
		fuzz_ret("dereg_mr", ret);
		return;
	}
	if (check_destroy("dereg_mr", ret, false))
		*p = NULL;
}

static void op_mw(struct vstate *s)
{
	struct ibv_mw **p = SLOT(s, s->mw);
	struct ibv_pd *pd = LIVE(s, s->pd);

	if (!*p) {
		if (!pd)
			return;
		*p = ibv_alloc_mw(pd, chance(&s->r, 50) ? IBV_MW_TYPE_1 :
							  IBV_MW_TYPE_2);
		fuzz_ptr("alloc_mw", *p);
		return;
	}
	if (chance(&s->r, 50)) {
		/* ibv_bind_mw (type 1; libibverbs refuses others) on any QP. */
		struct ibv_mr *mr = LIVE(s, s->mr);
		struct ibv_qp *qp = LIVE(s, s->qp);
		struct ibv_mw_bind b = {
			.wr_id = fuzz_wr_id(&s->r),
			.send_flags = chance(&s->r, 80) ? IBV_SEND_SIGNALED : 0,
			.bind_info = {
				.mr = mr,
				.addr = mr ? (uintptr_t)mr->addr +
					rnd(&s->r, (uint32_t)mr->length) : 0,
				.length = mr ? rnd(&s->r, 8192) : 0,
				.mw_access_flags = rnd_access(&s->r),
			},
		};

		if (qp)
			fuzz_ret("bind_mw", ibv_bind_mw(qp, *p, &b));
		return;
	}
	if (check_destroy("dealloc_mw", ibv_dealloc_mw(*p), false))
		*p = NULL;
}

static void op_srq(struct vstate *s)
{
	struct ibv_srq **p = SLOT(s, s->srq);
	struct rng *r = &s->r;

	if (!*p) {
		struct ibv_pd *pd = LIVE(s, s->pd);
		struct ibv_srq_init_attr a = {
			.attr = {
				.max_wr = rnd_size(r, F.v.attr.max_srq_wr),
				.max_sge = rnd_size(r, F.v.attr.max_srq_sge),
				.srq_limit = chance(r, 70) ? rnd(r, 8) :
							     rnd_u32(r),
			},
		};

		if (!pd)
			return;
		*p = ibv_create_srq(pd, &a);
		fuzz_ptr("create_srq", *p);
		return;
	}
	switch (rnd(r, 3)) {
	case 0: {
		struct ibv_srq_attr a = {
			.max_wr = rnd_u32(r),
			.srq_limit = chance(r, 70) ? rnd(r, 16) : rnd_u32(r),
		};

		fuzz_ret("modify_srq",
			 ibv_modify_srq(*p, &a, (int)(rnd_u32(r) & 7)));
		break;
	}
	case 1: {
		struct ibv_srq_attr a;

		fuzz_ret("query_srq", ibv_query_srq(*p, &a));
		break;
	}
	default:
		drain_events(s);
		if (check_destroy("destroy_srq", ibv_destroy_srq(*p),
				  srq_busy(s, *p)))
			*p = NULL;
	}
}

static const enum ibv_qp_type qp_types[] = {
	IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_UD,
	IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND, IBV_QPT_DRIVER,
	(enum ibv_qp_type)77,
};

static void op_qp_create(struct vstate *s, struct ibv_qp **p)
{
	struct rng *r = &s->r;
	struct ibv_cq *scq = LIVE(s, s->cq), *rcq = LIVE(s, s->cq);
	struct ibv_pd *pd = LIVE(s, s->pd);
	struct ibv_qp_init_attr_ex a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = chance(r, 25) ? LIVE(s, s->srq) : NULL,
		.cap = {
			.max_send_wr = rnd_size(r, F.v.attr.max_qp_wr),
			.max_recv_wr = rnd_size(r, F.v.attr.max_qp_wr),
			.max_send_sge = rnd_size(r, F.v.attr.max_sge),
			.max_recv_sge = rnd_size(r, F.v.attr.max_sge),
			.max_inline_data = chance(r, 60) ? rnd(r, 600) :
							   rnd_u32(r),
		},
		.qp_type = PICK(s, qp_types),
		.sq_sig_all = rnd(r, 2),
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};

	if (!scq || !rcq || !pd)
		return;
	if (chance(r, 15)) {
		/* The extended entry point with odd masks and flags. */
		a.comp_mask |= rnd_u32(r) & 0xfff;
		a.create_flags = chance(r, 50) ? 0 : rnd_u32(r);
		a.send_ops_flags = chance(r, 50) ? IBV_QP_EX_WITH_SEND :
						   rnd_u32(r);
		/* The provider refuses unknown bits before it looks at
		 * what they would point to (XRCD, RSS, ...). */
		if (chance(r, 70))
			a.comp_mask &= IBV_QP_INIT_ATTR_PD |
				       IBV_QP_INIT_ATTR_CREATE_FLAGS |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		*p = ibv_create_qp_ex(F.v.ctx, &a);
	} else {
		struct ibv_qp_init_attr b = {
			.send_cq = a.send_cq, .recv_cq = a.recv_cq,
			.srq = a.srq, .cap = a.cap, .qp_type = a.qp_type,
			.sq_sig_all = a.sq_sig_all,
		};

		*p = ibv_create_qp(pd, &b);
	}
	fuzz_ptr("create_qp", *p);
}

/* Random attributes, random mask, random target state. */
static void op_qp_modify(struct vstate *s, struct ibv_qp *qp)
{
	struct rng *r = &s->r;
	struct ibv_qp *peer = LIVE(s, s->qp);
	struct ibv_qp_attr a;
	int mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = chance(r, 90) ? (enum ibv_qp_state)rnd(r, 7) :
				     (enum ibv_qp_state)rnd_u32(r);
	a.cur_qp_state = (enum ibv_qp_state)rnd(r, 8);
	a.path_mtu = (enum ibv_mtu)(chance(r, 80) ? 1 + rnd(r, 5) : rnd(r, 256));
	a.path_mig_state = (enum ibv_mig_state)rnd(r, 4);
	a.qkey = chance(r, 10) ? 0x80010000 : rnd_u32(r);	/* GSI Q_Key */
	a.rq_psn = rnd_u32(r);
	a.sq_psn = rnd_u32(r);
	a.dest_qp_num = peer && chance(r, 70) ? peer->qp_num : rnd_u32(r);
	a.qp_access_flags = (unsigned int)rnd_access(r);
	a.pkey_index = chance(r, 80) ? 0 : (uint16_t)rnd_u32(r);
	a.en_sqd_async_notify = rnd(r, 2);
	a.sq_draining = rnd(r, 2);
	a.max_rd_atomic = chance(r, 80) ? rnd(r, 17) : (uint8_t)rnd_u32(r);
	a.max_dest_rd_atomic = chance(r, 80) ? rnd(r, 17) : (uint8_t)rnd_u32(r);
	a.min_rnr_timer = chance(r, 80) ? 1 : (uint8_t)rnd(r, 32);
	a.port_num = chance(r, 85) ? 1 : (uint8_t)rnd(r, 4);
	a.timeout = chance(r, 80) ? 14 : (uint8_t)rnd(r, 32);
	a.retry_cnt = (uint8_t)rnd(r, 8);
	a.rnr_retry = (uint8_t)rnd(r, 8);
	a.alt_port_num = (uint8_t)rnd(r, 3);
	a.alt_timeout = (uint8_t)rnd(r, 32);
	a.ah_attr.is_global = chance(r, 90);
	a.ah_attr.port_num = chance(r, 90) ? 1 : (uint8_t)rnd(r, 4);
	a.ah_attr.dlid = (uint16_t)rnd_u32(r);
	a.ah_attr.sl = (uint8_t)rnd(r, 16);
	a.ah_attr.grh.sgid_index = chance(r, 85) ? (uint8_t)F.v.gid_index :
						   (uint8_t)rnd(r, 256);
	a.ah_attr.grh.hop_limit = (uint8_t)rnd_u32(r);
	a.ah_attr.grh.traffic_class = (uint8_t)rnd_u32(r);
	a.ah_attr.grh.flow_label = rnd_u32(r);
	a.ah_attr.grh.dgid = F.v.gid;
	if (chance(r, 3))
		for (int i = 0; i < 16; i++)
			a.ah_attr.grh.dgid.raw[i] = (uint8_t)rnd(r, 256);
	a.alt_ah_attr = a.ah_attr;
	a.cap.max_send_wr = rnd_u32(r);
	a.cap.max_recv_wr = rnd_u32(r);
	a.rate_limit = rnd_u32(r);

	/* Mostly the masks a real transition uses, plus noise. */
	switch (rnd(r, 5)) {
	case 0:
		mask = IBV_QP_STATE;
		break;
	case 1:
		mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       (qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY :
						    IBV_QP_ACCESS_FLAGS);
		break;
	case 2:
		mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		break;
	case 3:
		mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		mask = (int)(rnd_u32(r) & ((1U << 25) - 1));
	}
	if (chance(r, 20))
		mask ^= 1 << rnd(r, 25);
	fuzz_ret("modify_qp", ibv_modify_qp(qp, &a, mask));
}

/* The proper way to RTS, towards a random QP, so traffic flows. */
static void op_qp_connect(struct vstate *s, struct ibv_qp *qp)
{
	struct ibv_qp *peer = LIVE(s, s->qp);
	struct conn c;
	int ret;

	if (!peer)
		return;
	conn_defaults(&c, &F.v);
	c.rnr_retry = (uint8_t)rnd(&s->r, 8);
	c.retry_cnt = (uint8_t)rnd(&s->r, 8);
	c.timeout = 8 + rnd(&s->r, 8);
	if (qp->qp_type == IBV_QPT_UD) {
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
					 .qkey = chance(&s->r, 80) ? 0x11111111 :
								     0x80010000 };

		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					    IBV_QP_PORT | IBV_QP_QKEY);
		if (!ret)
			ret = qp_to_state(qp, IBV_QPS_RTR);
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = rnd(&s->r, 1 << 24);
		if (!ret)
			ret = ibv_modify_qp(qp, &a,
					    IBV_QP_STATE | IBV_QP_SQ_PSN);
	} else if (peer != qp && peer->qp_type == qp->qp_type &&
		   chance(&s->r, 70)) {
		/* Both ways, from whatever state they are in, so messages
		 * are accepted and real traffic flows (6-8 calls). */
		ret = qp_to_state(qp, IBV_QPS_RESET);
		fuzz_ret("reset", ret);
		ret = qp_to_state(peer, IBV_QPS_RESET);
		fuzz_ret("reset", ret);
		ret = qp_connect(peer, &F.v, qp->qp_num, &c);
		fuzz_ret("connect", ret);
		F.iters += 3;
		ret = qp_connect(qp, &F.v, peer->qp_num, &c);
	} else {
		ret = qp_connect(qp, &F.v, peer->qp_num, &c);
	}
	fuzz_ret("connect", ret);
}

/* A live MR of PD (for WRs that should work), or NULL. */
static struct ibv_mr *mr_of(struct vstate *s, struct ibv_pd *pd)
{
	unsigned int start = rnd(&s->r, NMR);

	for (unsigned int i = 0; i < NMR; i++) {
		struct ibv_mr *mr = s->mr[(start + i) % NMR];

		if (mr && mr->pd == pd && mr->length >= 64)
			return mr;
	}
	return NULL;
}

/* One SGE inside MR, at most 4 KiB. */
static struct ibv_sge good_sge(struct vstate *s, struct ibv_mr *mr)
{
	uint32_t max = mr->length < 4096 ? (uint32_t)mr->length : 4096;
	uint32_t len = rnd(&s->r, max + 1);

	return (struct ibv_sge){
		.addr = (uintptr_t)mr->addr +
			rnd(&s->r, (uint32_t)(mr->length - len) / 8 + 1) * 8,
		.length = len,
		.lkey = mr->lkey,
	};
}

static const enum ibv_wr_opcode send_ops[] = {
	IBV_WR_SEND, IBV_WR_SEND, IBV_WR_SEND, IBV_WR_SEND_WITH_IMM,
	IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
	IBV_WR_RDMA_READ, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
	IBV_WR_SEND_WITH_INV, IBV_WR_TSO, IBV_WR_DRIVER1,
	(enum ibv_wr_opcode)99,
};

/* A WR that should work: SEND, WRITE, READ or an atomic inside an MR of
 * the QP's PD (the peer's MR is the same one: loopback, one PD). */
static bool good_send(struct vstate *s, struct ibv_qp *qp)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP,
	};
	struct ibv_mr *mr = mr_of(s, qp->pd);
	struct ibv_send_wr wr = { 0 }, *bad = NULL;
	struct ibv_sge sge;
	int ret;

	if (!mr || qp->qp_type == IBV_QPT_UD)
		return false;
	sge = good_sge(s, mr);
	wr.wr_id = fuzz_wr_id(&s->r);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = ops[rnd(&s->r, qp->qp_type == IBV_QPT_RC ? 7 : 4)];
	wr.send_flags = IBV_SEND_SIGNALED;
	if (wr.opcode >= IBV_WR_ATOMIC_CMP_AND_SWP) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = sge.addr;
		wr.wr.atomic.rkey = mr->rkey;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)mr->addr +
			rnd(&s->r, (uint32_t)(mr->length - sge.length) + 1);
		wr.wr.rdma.rkey = mr->rkey;
	}
	ret = ibv_post_send(qp, &wr, &bad);
	fuzz_ret("post_send", ret);
	return true;
}

static bool good_recv(struct vstate *s, struct ibv_qp *qp)
{
	struct ibv_mr *mr = mr_of(s, qp->pd);
	struct ibv_recv_wr wr = { 0 }, *bad = NULL;
	struct ibv_sge sge;
	int ret;

	if (!mr)
		return false;
	sge = good_sge(s, mr);
	sge.length = (uint32_t)(mr->length < 4096 + 40 ? mr->length : 4096 + 40);
	sge.addr = (uintptr_t)mr->addr;
	wr.wr_id = fuzz_wr_id(&s->r);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ret = qp->srq ? ibv_post_srq_recv(qp->srq, &wr, &bad) :
			ibv_post_recv(qp, &wr, &bad);
	fuzz_ret("post_recv", ret);
	return true;
}

static void op_post_send(struct vstate *s, struct ibv_qp *qp)
{
	struct rng *r = &s->r;
	struct ibv_send_wr wr[4], *bad = NULL;
	struct ibv_sge sg[4][MAXSGE];
	int n = 1 + rnd(r, 4), i, ret;

	if (chance(r, 40) && good_send(s, qp))
		return;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		struct ibv_mr *mr = LIVE(s, s->mr);
		int nsge = chance(r, 85) ? rnd(r, 4) : rnd(r, MAXSGE + 1);

		wr[i].wr_id = fuzz_wr_id(r);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].opcode = PICK(s, send_ops);
		wr[i].send_flags = chance(r, 80) ?
			(unsigned int)(rnd(r, 16) & ~IBV_SEND_INLINE) :
			rnd_u32(r) & ~(unsigned int)IBV_SEND_INLINE;
		wr[i].imm_data = rnd_u32(r);
		wr[i].sg_list = sg[i];
		wr[i].num_sge = chance(r, 97) ? nsge : -(int)rnd(r, 4) - 1;
		fill_sges(s, sg[i], nsge);
		if (chance(r, 15) && mr && mr->length >= 1024) {
			/* Inline: the provider copies from these addresses, so
			 * they must be real memory; lengths are still free. */
			wr[i].send_flags |= IBV_SEND_INLINE;
			for (int k = 0; k < nsge; k++) {
				sg[i][k].length = rnd(r, 700);
				sg[i][k].addr = (uintptr_t)s->arena +
						rnd(r, ARENA - 700);
			}
		}
		if (qp->qp_type == IBV_QPT_UD) {
			wr[i].wr.ud.ah = LIVE(s, s->ah);
			wr[i].wr.ud.remote_qpn = chance(r, 50) && LIVE(s, s->qp) ?
				((struct ibv_qp *)LIVE(s, s->qp))->qp_num :
				rnd_u32(r);
			wr[i].wr.ud.remote_qkey = chance(r, 70) ? 0x11111111 :
								  rnd_u32(r);
			if (chance(r, 5)) {
				/* Garbage MADs for the device's own QP1 (a UD
				 * QP whose Q_Key is the GSI one, below). */
				wr[i].wr.ud.remote_qpn = 1;
				wr[i].wr.ud.remote_qkey = 0x80000000;
			}
		} else if (wr[i].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			   wr[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr[i].wr.atomic.remote_addr = mr && chance(r, 70) ?
				((uintptr_t)mr->addr + rnd(r, (uint32_t)mr->length) / 8 * 8) :
				rnd_addr(s, 8);
			wr[i].wr.atomic.rkey = rnd_key(s, true);
			wr[i].wr.atomic.compare_add = rnd_u64(r);
			wr[i].wr.atomic.swap = rnd_u64(r);
		} else if (wr[i].opcode == IBV_WR_BIND_MW) {
			/* The provider reads the window and the MR through
			 * these pointers, as every provider does: real objects
			 * (of any PD) or none; the rest is random. */
			wr[i].bind_mw.mw = LIVE(s, s->mw);
			wr[i].bind_mw.rkey = rnd_u32(r);
			wr[i].bind_mw.bind_info.mr = chance(r, 80) ? mr : NULL;
			wr[i].bind_mw.bind_info.addr = mr && chance(r, 70) ?
				(uintptr_t)mr->addr + rnd(r, (uint32_t)mr->length) :
				rnd_addr(s, 64);
			wr[i].bind_mw.bind_info.length = chance(r, 80) ?
				rnd(r, 8192) : rnd_u64(r);
			wr[i].bind_mw.bind_info.mw_access_flags = rnd_access(r);
			if (wr[i].bind_mw.mw && chance(r, 70))
				wr[i].bind_mw.rkey =
					ibv_inc_rkey(wr[i].bind_mw.mw->rkey);
		} else {
			wr[i].wr.rdma.remote_addr = mr && chance(r, 70) ?
				(uintptr_t)mr->addr + rnd(r, (uint32_t)mr->length) :
				rnd_addr(s, 64);
			wr[i].wr.rdma.rkey = rnd_key(s, true);
		}
	}
	ret = ibv_post_send(qp, wr, &bad);
	fuzz_ret("post_send", ret);
	if (ret && !bad)
		fuzz_fail("post_send failed (%d) without a bad_wr", ret);
}

static void post_recv_common(struct vstate *s, struct ibv_qp *qp,
			     struct ibv_srq *srq)
{
	struct rng *r = &s->r;
	struct ibv_recv_wr wr[4], *bad = NULL;
	struct ibv_sge sg[4][MAXSGE];
	int n = 1 + rnd(r, 4), i, ret;

	if (chance(r, 50) && good_recv(s, qp))
		return;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		int nsge = chance(r, 85) ? rnd(r, 4) : rnd(r, MAXSGE + 1);

		wr[i].wr_id = fuzz_wr_id(r);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = sg[i];
		wr[i].num_sge = chance(r, 97) ? nsge : -1;
		fill_sges(s, sg[i], nsge);
	}
	ret = srq ? ibv_post_srq_recv(srq, wr, &bad) :
		    ibv_post_recv(qp, wr, &bad);
	fuzz_ret("post_recv", ret);
	if (ret && !bad)
		fuzz_fail("post_recv failed (%d) without a bad_wr", ret);
}

static void op_qp(struct vstate *s)
{
	struct ibv_qp **p = SLOT(s, s->qp);
	struct rng *r = &s->r;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (!*p) {
		op_qp_create(s, p);
		return;
	}
	switch (rnd(r, 20)) {
	case 0:
	case 1:
		drain_events(s);
		if (check_destroy("destroy_qp", ibv_destroy_qp(*p), false))
			*p = NULL;
		break;
	case 2:
	case 3:
	case 4:
		op_qp_modify(s, *p);
		break;
	case 5:
	case 6:
		op_qp_connect(s, *p);
		break;
	case 7:
		fuzz_ret("query_qp", ibv_query_qp(*p, &a,
						  (int)(rnd_u32(r) & 0x1ffffff),
						  &ia));
		break;
	case 8:
	case 9:
	case 10:
		if ((*p)->srq)
			post_recv_common(s, *p, (*p)->srq);
		else
			post_recv_common(s, *p, NULL);
		break;
	default:
		op_post_send(s, *p);
	}
}

static void op_ah(struct vstate *s)
{
	struct ibv_ah **p = SLOT(s, s->ah);
	struct rng *r = &s->r;

	if (!*p) {
		struct ibv_pd *pd = LIVE(s, s->pd);
		struct ibv_ah_attr a = {
			.is_global = chance(r, 90),
			.port_num = chance(r, 90) ? 1 : (uint8_t)rnd(r, 4),
			.dlid = (uint16_t)rnd_u32(r),
			.sl = (uint8_t)rnd(r, 16),
			.grh = {
				.dgid = F.v.gid,
				.sgid_index = chance(r, 85) ?
					(uint8_t)F.v.gid_index :
					(uint8_t)rnd(r, 256),
				.hop_limit = (uint8_t)rnd_u32(r),
				.flow_label = rnd_u32(r),
			},
		};

		if (!pd)
			return;
		if (chance(r, 3))
			for (int i = 0; i < 16; i++)
				a.grh.dgid.raw[i] = (uint8_t)rnd(r, 256);
		*p = ibv_create_ah(pd, &a);
		fuzz_ptr("create_ah", *p);
		return;
	}
	if (check_destroy("destroy_ah", ibv_destroy_ah(*p), false))
		*p = NULL;
}

static void op_query(struct vstate *s)
{
	struct rng *r = &s->r;
	struct ibv_port_attr pa;
	struct ibv_device_attr_ex da;
	union ibv_gid gid;
	uint16_t pkey;
	uint8_t port = chance(r, 80) ? 1 : (uint8_t)rnd(r, 256);

	switch (rnd(r, 4)) {
	case 0:
		fuzz_ret("query_port", ibv_query_port(F.v.ctx, port, &pa));
		break;
	case 1:
		fuzz_ret("query_gid", ibv_query_gid(F.v.ctx, port,
						    (int)rnd_count(r, 64), &gid));
		break;
	case 2:
		fuzz_ret("query_pkey", ibv_query_pkey(F.v.ctx, port,
						      (int)rnd_count(r, 2), &pkey));
		break;
	default:
		fuzz_ret("query_device_ex",
			 ibv_query_device_ex(F.v.ctx, NULL, &da));
	}
}

/* Tear everything down in a valid order: every destroy must succeed. */
static void cleanup(struct vstate *s)
{
	int i;

	drain_events(s);
	for (i = 0; i < NQP; i++)
		if (s->qp[i])
			check_destroy("destroy_qp", ibv_destroy_qp(s->qp[i]), false);
	for (i = 0; i < NAH; i++)
		if (s->ah[i])
			check_destroy("destroy_ah", ibv_destroy_ah(s->ah[i]), false);
	for (i = 0; i < NMW; i++)
		if (s->mw[i])
			check_destroy("dealloc_mw", ibv_dealloc_mw(s->mw[i]), false);
	for (i = 0; i < NMR; i++)
		if (s->mr[i])
			check_destroy("dereg_mr", ibv_dereg_mr(s->mr[i]), false);
	for (i = 0; i < NSRQ; i++)
		if (s->srq[i])
			check_destroy("destroy_srq", ibv_destroy_srq(s->srq[i]), false);
	drain_events(s);
	for (i = 0; i < NCQ; i++)
		if (s->cq[i])
			check_destroy("destroy_cq", ibv_destroy_cq(s->cq[i]), false);
	for (i = 0; i < NPD; i++)
		if (s->pd[i])
			check_destroy("dealloc_pd", ibv_dealloc_pd(s->pd[i]), false);
	memset(s->qp, 0, sizeof(s->qp));
	memset(s->ah, 0, sizeof(s->ah));
	memset(s->mw, 0, sizeof(s->mw));
	memset(s->mr, 0, sizeof(s->mr));
	memset(s->srq, 0, sizeof(s->srq));
	memset(s->cq, 0, sizeof(s->cq));
	memset(s->pd, 0, sizeof(s->pd));
}

int fuzz_verbs(uint64_t seed, uint64_t iters)
{
	static const char *const names[] = {
		"pd", "cq", "cq-misc", "mr", "mw", "srq", "qp", "ah", "query",
	};
	struct vstate s;

	memset(&s, 0, sizeof(s));
	s.r.s = seed;
	/* The arena, then a PROT_NONE page: s.bad, and the arena's guard. */
	s.arena = mmap(NULL, ARENA + 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	s.bad = s.arena + ARENA;
	s.ch = ibv_create_comp_channel(F.v.ctx);
	if (s.arena == MAP_FAILED || mprotect(s.bad, 4096, PROT_NONE) || !s.ch) {
		fuzz_fail("verbs: set-up failed");
		return -1;
	}
	memset(s.arena, 0x5a, ARENA);
	fcntl(s.ch->fd, F_SETFL, fcntl(s.ch->fd, F_GETFL) | O_NONBLOCK);

	for (s.iter = 0; s.iter < iters; s.iter++) {
		/* Weights: the data path and QP states get most calls. */
		uint32_t w = rnd(&s.r, 100);
		int op = w < 5 ? 0 : w < 12 ? 1 : w < 22 ? 2 : w < 30 ? 3 :
			 w < 31 ? 4 : w < 37 ? 5 : w < 92 ? 6 : w < 96 ? 7 : 8;

		fuzz_note("verbs", s.iter, names[op]);
		F.iters++;
		switch (op) {
		case 0: op_pd(&s); break;
		case 1: op_cq(&s); break;
		case 2: op_cq_misc(&s); break;
		case 3: op_mr(&s); break;
		case 4: op_mw(&s); break;
		case 5: op_srq(&s); break;
		case 6: op_qp(&s); break;
		case 7: op_ah(&s); break;
		default: op_query(&s); break;
		}
		if ((s.iter & 15) == 0)
			drain_events(&s);
		/* Now and then start over from nothing (a full teardown with
		 * QPs in every state, work in flight, events pending). */
		if (s.iter % 5000 == 4999)
			cleanup(&s);
	}
	fuzz_note("verbs", s.iter, "cleanup");
	cleanup(&s);
	ibv_destroy_comp_channel(s.ch);
	munmap(s.arena, ARENA + 4096);
	return 0;
}
