// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: plain kernel commands.  The kernel pins the pages and
 * keeps the lkey/rkey tables; user space only holds the keys.
 */
#include <errno.h>
#include <stdlib.h>

#include "tbrdma.h"

/* v44 passes the iova (hca_va) the region answers to, and access. */
struct ibv_mr *tbrdma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			     uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ibv_reg_mr cmd = {};
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int tbrdma_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (!ret)
		free(vmr);
	return ret;
}

/*
 * Memory windows (kmod/mw.c has the rules).  Allocation and deallocation
 * are kernel commands; binding is a work request on a QP's send queue.
 */
struct ibv_mw *tbrdma_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ibv_alloc_mw cmd = {};
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

int tbrdma_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (!ret)
		free(mw);
	return ret;
}

/*
 * ibv_bind_mw() (type 1 windows): a BIND_MW work request with the next
 * rkey (ibv_inc_rkey()), which becomes mw->rkey once posted, as the man
 * page says; if the bind then completes in error the window keeps its
 * old rkey, which the application restores (libibverbs cannot know).
 */
int tbrdma_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		   struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
	};
	struct ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ret = tbrdma_post_send(qp, &wr, &bad);
	if (ret)
		return ret;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
