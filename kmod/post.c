// SPDX-License-Identifier: GPL-2.0-only
/*
 * The post verbs.  User space writes its WQEs into the shared rings itself
 * and only rings a doorbell: POST_SEND or POST_RECV with no work requests,
 * which reach us as a NULL list.  Kernel consumers hand us ib_send_wr and
 * ib_recv_wr lists, which we write into the same rings the same way.
 */
#include <linux/preempt.h>
#include <linux/rcupdate.h>

#include "msg.h"

/* Work requests that kernel consumers may post (the rest is EINVAL). */
static bool tbr_kernel_opcode_ok(enum ib_wr_opcode opcode)
{
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		return true;
	default:
		return false;
	}
}

static_assert(IB_WR_REG_MR == TBRDMA_WR_REG_MR);
static_assert((int)IB_WR_LOCAL_INV == (int)IB_UVERBS_WR_LOCAL_INV);
static_assert((int)IB_WR_SEND_WITH_INV == (int)IB_UVERBS_WR_SEND_WITH_INV);

/*
 * The local operations of fast registration carry no SGEs.  REG_MR takes
 * the MR's iova and length now, as ib_map_mr_sg() left them: the MR is
 * named in the WQE by its key's index only.
 */
static int tbr_build_local_wqe(struct tbr_qp *qp, const struct ib_send_wr *wr,
			       struct tbrdma_send_wqe *wqe)
{
	const struct ib_reg_wr *reg;

	if (wr->opcode == IB_WR_LOCAL_INV) {
		wqe->wr.inv.rkey = wr->ex.invalidate_rkey;
		return 0;
	}
	reg = reg_wr(wr);
	if (!reg->mr || reg->mr->device != qp->ibqp.device)
		return -EINVAL;
	wqe->wr.reg.iova = reg->mr->iova;
	wqe->wr.reg.length = reg->mr->length;
	wqe->wr.reg.key = reg->key;
	wqe->wr.reg.access = reg->access;
	return 0;
}

/* Kernel SGE addresses are kernel virtual addresses (no DMA mapping). */
static int tbr_build_inline(struct tbr_qp *qp, const struct ib_send_wr *wr,
			    struct tbrdma_send_wqe *wqe)
{
	u8 *dst = (u8 *)(wqe + 1);
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline - len)
			return -EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	wqe->inline_len = len;
	return 0;
}

static int tbr_build_send_wqe(struct tbr_qp *qp, const struct ib_send_wr *wr,
			      struct tbrdma_send_wqe *wqe)
{
	struct tbrdma_sge *sge = (struct tbrdma_sge *)(wqe + 1);
	int i;

	if (!tbr_kernel_opcode_ok(wr->opcode) || wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	/* Datagram QPs send; fast registration is for connected QPs. */
	if (tbr_qp_is_datagram(qp) && wr->opcode != IB_WR_SEND &&
	    wr->opcode != IB_WR_SEND_WITH_IMM)
		return -EINVAL;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	/* These IB_WR_* values are defined as their IB_UVERBS_WR_* twins. */
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags & (TBRDMA_WQE_FENCE |
		TBRDMA_WQE_SIGNALED | TBRDMA_WQE_SOLICITED | TBRDMA_WQE_INLINE);
	if (wr->opcode == IB_WR_LOCAL_INV || wr->opcode == IB_WR_REG_MR) {
		wqe->send_flags &= ~TBRDMA_WQE_INLINE;
		return tbr_build_local_wqe(qp, wr, wqe);
	}
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		wqe->imm_data = wr->ex.imm_data;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->wr.atomic.swap = atomic_wr(wr)->swap;
		wqe->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_SEND_WITH_INV:
		wqe->wr.inv.rkey = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}
	if (tbr_qp_is_datagram(qp)) {
		wqe->wr.ud.ah = to_tah(ud_wr(wr)->ah)->handle;
		wqe->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}

	if (wr->send_flags & IB_SEND_INLINE)
		return tbr_build_inline(qp, wr, wqe);
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/*
 * Whether a kernel consumer's post may run the send engine in its own
 * thread: only when that thread could sleep, holding no spinlock, RCU
 * read side or disabled bottom halves or interrupts.  Consumers post
 * from all of these (nvme-rdma inside blk-mq's RCU section, others under
 * their own locks, which the completion handler may take); those posts go
 * to the workqueue.  Those from a consumer's own work item (nvmet-rdma's
 * and svcrdma's answers) run here: a hop to another worker was a
 * scheduler round trip per request.
 */
static bool tbr_poster_may_sleep(void)
{
	return preemptible() && !rcu_preempt_depth();
}

static int tbr_post_send_kernel(struct tbr_qp *qp, const struct ib_send_wr *wr,
				const struct ib_send_wr **bad_wr)
{
	struct tbr_queue *q = &qp->sq;
	unsigned long flags;
	int err = 0;

	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		*bad_wr = wr;
		return -EINVAL;
	default:
		break;
	}

	spin_lock_irqsave(&qp->sq_post_lock, flags);
	for (; wr; wr = wr->next) {
		if (tbr_kqueue_full(q)) {
			err = -ENOMEM;
			break;
		}
		err = tbr_build_send_wqe(qp, wr, tbr_kqueue_next_slot(q));
		if (err)
			break;
		tbr_kqueue_publish(q);
	}
	spin_unlock_irqrestore(&qp->sq_post_lock, flags);
	if (err)
		*bad_wr = wr;
	if (tbr_poster_may_sleep())
		tbr_tx_kick(qp);
	else
		tbr_tx_schedule(qp);
	return err;
}

int tbr_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	struct tbr_qp *qp = to_tqp(ibqp);

	/* An XRC_TGT QP has no send queue (the core made it kernel-owned). */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!qp->is_user)
		return tbr_post_send_kernel(qp, wr, bad_wr);
	/*
	 * A user QP's WQEs are only ever in its ring; the command's own work
	 * requests (whose addresses would be user pointers) are refused.
	 */
	if (wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	tbr_tx_kick(qp);	/* the doorbell */
	return 0;
}

/* Complete every receive WQE with a flush error (QP in ERR). */
void tbr_rq_flush(struct tbr_qp *qp)
{
	struct tbrdma_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};

	while (tbr_recvq_drop(&qp->rq, &cqe.wr_id) >= 0)
		if (tbr_cq_post(tbr_qp_rcq(qp), &cqe, qp, false))
			break;
}

int tbr_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	struct tbr_qp *qp = to_tqp(ibqp);
	int err = 0;

	if (!tbr_qp_has_rq(qp) || (qp->is_user && wr)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (wr) {
		if (READ_ONCE(qp->state) == IB_QPS_RESET) {
			*bad_wr = wr;
			return -EINVAL;
		}
		err = tbr_recvq_post(&qp->rq, wr, bad_wr);
	}
	/* In error, posted receives complete at once with a flush error. */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		tbr_rq_flush(qp);
	return err;
}
