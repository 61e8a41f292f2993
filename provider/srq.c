// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: create (and map the ring), modify (arming the
 * limit is a kernel command), query, destroy.  Posting is in post.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "tbrdma.h"

/*
 * Map the ring of an SRQ the kernel just created and report the granted
 * sizes in @attr; on failure the kernel object is destroyed again.
 */
static int srq_map_ring(struct ibv_context *context, struct tbrdma_srq *srq,
			const struct tbrdma_cmd_create_srq_resp *resp,
			struct ibv_srq_attr *attr)
{
	int ret;

	ret = tbrdma_wq_init(&srq->rq, context->cmd_fd, &resp->drv.srq,
			     false, attr->max_sge, 0);
	if (ret) {
		tbrdma_err(&to_tctx(context)->ibv_ctx, "SRQ ring: error %d",
			   ret);
		ibv_cmd_destroy_srq(&srq->ibv_srq);
		return ret;
	}
	attr->max_wr = tbrdma_wq_max_wr(&srq->rq, attr->max_wr);
	attr->max_sge = srq->rq.caps.max_sge;
	return 0;
}

struct ibv_srq *tbrdma_create_srq(struct ibv_pd *pd,
				  struct ibv_srq_init_attr *attr)
{
	struct tbrdma_cmd_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct tbrdma_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	/* Fills handle, context, mutex/cond and the granted max_wr/max_sge. */
	ret = ibv_cmd_create_srq(pd, &srq->ibv_srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = srq_map_ring(pd->context, srq, &resp, &attr->attr);
	if (ret)
		goto err_free;
	return &srq->ibv_srq;

err_free:
	free(srq);
	errno = ret;
	return NULL;
}

/*
 * ibv_create_srq_ex(): a basic SRQ as above, or an XRC SRQ (XRCD and CQ
 * given), whose number XRC send QPs name in their WQEs.
 */
struct ibv_srq *tbrdma_create_srq_ex(struct ibv_context *context,
				     struct ibv_srq_init_attr_ex *attr)
{
	struct tbrdma_cmd_create_srq_resp resp = {};
	struct ibv_create_xsrq cmd = {};
	struct tbrdma_srq *srq;
	int ret;

	if (attr->comp_mask & ~(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
				IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)) {
		errno = EOPNOTSUPP;	/* tag matching */
		return NULL;
	}
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type != IBV_SRQT_BASIC &&
	    attr->srq_type != IBV_SRQT_XRC) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	ret = ibv_cmd_create_srq_ex(context, &srq->vsrq, attr, &cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = srq_map_ring(context, srq, &resp, &attr->attr);
	if (ret)
		goto err_free;
	return &srq->ibv_srq;

err_free:
	free(srq);
	errno = ret;
	return NULL;
}

/* ibv_get_srq_num(): the number create_srq_ex got back (XRC SRQs only). */
int tbrdma_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct tbrdma_srq *srq = to_tsrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

int tbrdma_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		      int attr_mask)
{
	struct ibv_modify_srq cmd = {};

	/* Resizing would need a new ring, and MODIFY_SRQ has no response
	 * to say where it is. */
	if (attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int tbrdma_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct tbrdma_srq *srq = to_tsrq(ibsrq);
	struct ibv_query_srq cmd = {};
	int ret;

	ret = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	/* Same answer as create_srq gave. */
	attr->max_wr = tbrdma_wq_max_wr(&srq->rq, attr->max_wr);
	attr->max_sge = srq->rq.caps.max_sge;
	return 0;
}

int tbrdma_destroy_srq(struct ibv_srq *ibsrq)
{
	struct tbrdma_srq *srq = to_tsrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	tbrdma_wq_destroy(&srq->rq);
	free(srq);
	return 0;
}
