// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bad-input case "qp-state-machine": walk one RC QP through RESET, INIT,
 * RTR, RTS, ERR and back to RESET, trying at each state the transitions the
 * IB specification forbids and attribute masks with a required attribute
 * missing or a forbidden one added.  Each must fail with EINVAL and leave
 * the state unchanged; the legal steps must succeed.  (On Linux the driver
 * enforces this, normally through ib_modify_qp_is_ok().)
 */
#include <errno.h>
#include <string.h>

#include "../unit/tap.h"
#include "badinput.h"

#define INIT_MASK (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | \
		   IBV_QP_ACCESS_FLAGS)
#define RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | \
		  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | \
		  IBV_QP_MIN_RNR_TIMER)
#define RTS_MASK (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | \
		  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)

/* Every attribute valid, so only the state and the mask decide. */
static void full_attr(struct ibv_qp_attr *a, uint32_t self)
{
	memset(a, 0, sizeof(*a));
	a->port_num = V.port_num;
	a->qp_access_flags = CN.access;
	a->path_mtu = V.port.active_mtu;
	a->dest_qp_num = self;	/* connected to itself: fine for this */
	a->rq_psn = a->sq_psn = psn_for(self);
	a->max_dest_rd_atomic = a->max_rd_atomic = CN.rd_atomic;
	a->min_rnr_timer = CN.min_rnr_timer;
	a->timeout = CN.timeout;
	a->retry_cnt = CN.retry_cnt;
	a->rnr_retry = CN.rnr_retry;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = V.gid;
	a->ah_attr.grh.sgid_index = V.gid_index;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = V.port_num;
}

enum { OK_VAL, BAD_PORT, BAD_RD_ATOMIC };

struct step {
	int from, to, mask, want;
	const char *what;
	int bad;	/* BAD_*: an attribute value out of range */
};

static const struct step steps[] = {
	{ IBV_QPS_RESET, IBV_QPS_RTR, RTR_MASK, EINVAL, "RESET -> RTR", OK_VAL },
	{ IBV_QPS_RESET, IBV_QPS_RTS, RTS_MASK, EINVAL, "RESET -> RTS", OK_VAL },
	{ IBV_QPS_RESET, IBV_QPS_INIT, INIT_MASK & ~IBV_QP_PORT, EINVAL, "RESET -> INIT without PORT", OK_VAL },
	{ IBV_QPS_RESET, IBV_QPS_INIT, INIT_MASK | IBV_QP_SQ_PSN, EINVAL, "RESET -> INIT with SQ_PSN", OK_VAL },
	{ IBV_QPS_RESET, IBV_QPS_INIT, INIT_MASK, EINVAL, "RESET -> INIT on port 7", BAD_PORT },
	{ IBV_QPS_RESET, IBV_QPS_INIT, INIT_MASK, 0, "RESET -> INIT", OK_VAL },
	{ IBV_QPS_INIT, IBV_QPS_RTS, RTS_MASK, EINVAL, "INIT -> RTS", OK_VAL },
	{ IBV_QPS_INIT, IBV_QPS_RTR, RTR_MASK & ~IBV_QP_AV, EINVAL, "INIT -> RTR without AV", OK_VAL },
	{ IBV_QPS_INIT, IBV_QPS_RTR, RTR_MASK & ~IBV_QP_DEST_QPN, EINVAL, "INIT -> RTR without DEST_QPN", OK_VAL },
	{ IBV_QPS_INIT, IBV_QPS_RTR, RTR_MASK | IBV_QP_SQ_PSN, EINVAL, "INIT -> RTR with SQ_PSN", OK_VAL },
	{ IBV_QPS_INIT, IBV_QPS_RTR, RTR_MASK, 0, "INIT -> RTR", OK_VAL },
	{ IBV_QPS_RTR, IBV_QPS_RTS, RTS_MASK & ~IBV_QP_SQ_PSN, EINVAL, "RTR -> RTS without SQ_PSN", OK_VAL },
	{ IBV_QPS_RTR, IBV_QPS_INIT, INIT_MASK, EINVAL, "RTR -> INIT", OK_VAL },
	{ IBV_QPS_RTR, IBV_QPS_RTS, RTS_MASK, EINVAL, "RTR -> RTS with max_rd_atomic above the device's", BAD_RD_ATOMIC },
	{ IBV_QPS_RTR, IBV_QPS_RTS, RTS_MASK, 0, "RTR -> RTS", OK_VAL },
	{ IBV_QPS_RTS, IBV_QPS_RTR, RTR_MASK, EINVAL, "RTS -> RTR", OK_VAL },
	{ IBV_QPS_RTS, IBV_QPS_INIT, INIT_MASK, EINVAL, "RTS -> INIT", OK_VAL },
	{ IBV_QPS_RTS, IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_PATH_MTU, EINVAL, "RTS -> RTS changing PATH_MTU", OK_VAL },
	{ IBV_QPS_RTS, IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER, 0, "RTS -> RTS changing MIN_RNR_TIMER", OK_VAL },
	{ IBV_QPS_RTS, IBV_QPS_ERR, IBV_QP_STATE, 0, "RTS -> ERR", OK_VAL },
	{ IBV_QPS_ERR, IBV_QPS_RTS, RTS_MASK, EINVAL, "ERR -> RTS", OK_VAL },
	{ IBV_QPS_ERR, IBV_QPS_INIT, INIT_MASK, EINVAL, "ERR -> INIT", OK_VAL },
	{ IBV_QPS_ERR, IBV_QPS_RESET, IBV_QP_STATE, 0, "ERR -> RESET", OK_VAL },
	{ IBV_QPS_RESET, IBV_QPS_INIT, INIT_MASK, 0, "RESET -> INIT again (the QP is reusable)", OK_VAL },
};

int qp_state_machine(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(V.ctx);
	struct ibv_cq *cq = ibv_create_cq(V.ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = pd && cq ? new_qp(pd, cq, 4) : NULL;
	int r = !!qp;

	for (unsigned i = 0; qp && i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *s = &steps[i];
		struct ibv_qp_attr a;

		if (s->bad == BAD_RD_ATOMIC && V.attr.max_qp_init_rd_atom >= 255)
			continue;	/* cannot go above it */
		full_attr(&a, qp->qp_num);
		a.qp_state = s->to;
		if (s->bad == BAD_PORT)
			a.port_num = 7;
		if (s->bad == BAD_RD_ATOMIC)
			a.max_rd_atomic = V.attr.max_qp_init_rd_atom + 1;
		r &= expect_errno(ibv_modify_qp(qp, &a, s->mask), s->want, s->what);
		r &= expect_state(qp, s->want ? s->from : s->to, s->what);
	}
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	return r;
}
