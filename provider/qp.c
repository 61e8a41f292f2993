// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: create (and map the SQ and RQ), modify, query, destroy.
 * Posting is in post.c.
 */
#include <errno.h>
#include <stdlib.h>

#include "tbrdma.h"

/*
 * Tell the application what the QP really accepts: what the kernel
 * granted, lowered where the rings are smaller (a kernel that overstates
 * would otherwise make legal-looking posts fail).
 */
static void effective_caps(const struct tbrdma_qp *qp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = tbrdma_wq_max_wr(&qp->sq, cap->max_send_wr);
	cap->max_send_sge = qp->sq.caps.max_sge;
	cap->max_inline_data = qp->sq.caps.max_inline;
	if (qp->rq.q.map) {
		cap->max_recv_wr = tbrdma_wq_max_wr(&qp->rq, cap->max_recv_wr);
		cap->max_recv_sge = qp->rq.caps.max_sge;
	} else {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
}

/* comp_mask bits create_qp_ex accepts.  CREATE_FLAGS only with no flags
 * (the kernel module refuses them all). */
#define TBRDMA_QP_INIT_ATTR_MASK (IBV_QP_INIT_ATTR_PD |                 \
				  IBV_QP_INIT_ATTR_XRCD |               \
				  IBV_QP_INIT_ATTR_CREATE_FLAGS |       \
				  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

/* 0, or the errno create_qp_ex fails with. */
static int check_init_attr(const struct ibv_qp_init_attr_ex *attr)
{
	/* post.c and wr.c know how to build WQEs for these transports only. */
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND:
		break;
	case IBV_QPT_XRC_RECV:
		/* No PD, no queues: the XRC domain only. */
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd)
			return EINVAL;
		if (attr->comp_mask & ~(IBV_QP_INIT_ATTR_XRCD |
					IBV_QP_INIT_ATTR_PD))
			return EOPNOTSUPP;
		return 0;
	default:
		return EOPNOTSUPP;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;		/* as libibverbs' own check */
	if (attr->comp_mask & ~TBRDMA_QP_INIT_ATTR_MASK ||
	    (attr->comp_mask & IBV_QP_INIT_ATTR_XRCD))
		return EOPNOTSUPP;	/* TSO header, RSS, ... */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		return tbrdma_wr_check_send_ops(attr->qp_type,
						attr->send_ops_flags);
	return 0;
}

/*
 * Both entry points end here.  One command for both, ibv_cmd_create_qp_ex:
 * the same CREATE_QP request and ib_uverbs_create_qp_resp core as
 * ibv_cmd_create_qp, so our tbrdma_create_qp_resp arrives the same way.
 * attr->cap is updated with what the QP really accepts.
 */
static struct ibv_qp *create_qp_common(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr)
{
	struct tbrdma_cmd_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct ibv_qp_init_attr_ex kattr;
	int fd = context->cmd_fd;
	struct tbrdma_qp *qp;
	int ret;

	ret = check_init_attr(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	/* calloc: vqp.comp_mask and the qp_ex ops start zeroed, so a QP from
	 * the old create_qp is never mistaken for an extended one. */
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	/* ibv_cmd_create_qp_ex refuses CREATE_FLAGS (even with no flags);
	 * send_ops_flags are ours alone.  Works on a copy: the command
	 * overwrites kattr.cap with what the kernel granted. */
	kattr = *attr;
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		kattr.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		kattr.pd = NULL;
	} else {
		kattr.comp_mask = IBV_QP_INIT_ATTR_PD;
	}
	ret = ibv_cmd_create_qp_ex(context, &qp->vqp, &kattr, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	/* An XRC receive QP has no queues: the kernel gives no rings. */
	if (attr->qp_type == IBV_QPT_XRC_RECV) {
		memset(&attr->cap, 0, sizeof(attr->cap));
		return &qp->vqp.qp;
	}

	ret = tbrdma_wq_init(&qp->sq, fd, &resp.drv.sq, true,
			     kattr.cap.max_send_sge, resp.drv.max_inline_data);
	if (ret)
		goto err_destroy;
	qp->sq.caps.sig_all = attr->sq_sig_all;

	/* A QP on an SRQ (or created without receive WRs) has no RQ. */
	if (resp.drv.rq.num_slots) {
		ret = tbrdma_wq_init(&qp->rq, fd, &resp.drv.rq, false,
				     kattr.cap.max_recv_sge, 0);
		if (ret)
			goto err_destroy;
	} else if (!attr->srq && kattr.cap.max_recv_wr) {
		ret = EPROTO;	/* receives were granted but no ring given */
		goto err_destroy;
	}

	/* After the command: it resets vqp.comp_mask. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		tbrdma_wr_init_qp(qp, attr->send_ops_flags);

	effective_caps(qp, &kattr.cap);
	attr->cap = kattr.cap;
	return &qp->vqp.qp;

err_destroy:
	tbrdma_err(&to_tctx(context)->ibv_ctx, "QP rings: error %d", ret);
	tbrdma_wq_destroy(&qp->rq);
	tbrdma_wq_destroy(&qp->sq);
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *tbrdma_create_qp_ex(struct ibv_context *context,
				   struct ibv_qp_init_attr_ex *attr)
{
	return create_qp_common(context, attr);
}

/*
 * ibv_open_qp(): another handle on an XRC receive QP of an XRC domain we
 * share (the XRC_TGT QP may belong to another process).  Like the QP from
 * create, it has no queues.
 */
struct ibv_qp *tbrdma_open_qp(struct ibv_context *context,
			      struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp = {};
	struct ibv_open_qp cmd = {};
	struct tbrdma_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_open_qp(context, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

/* ibv_create_qp(), and ibv_create_qp_ex() with comp_mask == PD only
 * (libibverbs' inline wrapper routes that here). */
struct ibv_qp *tbrdma_create_qp(struct ibv_pd *pd,
				struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp;

	qp = create_qp_common(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

/* State changes are the kernel's business; libibverbs updates qp->state. */
int tbrdma_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

int tbrdma_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (ret)
		return ret;
	/* Same answer as create_qp gave. */
	effective_caps(to_tqp(ibqp), &init_attr->cap);
	attr->cap = init_attr->cap;
	return 0;
}

int tbrdma_destroy_qp(struct ibv_qp *ibqp)
{
	struct tbrdma_qp *qp = to_tqp(ibqp);
	int ret;

	/* The kernel flushes the queues and stops touching the rings
	 * before it answers; only then may they go away. */
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	tbrdma_wq_destroy(&qp->rq);
	tbrdma_wq_destroy(&qp->sq);
	free(qp);
	return 0;
}
