// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Extended QPs: the ibv_wr_* posting API (man ibv_wr_post), what perftest
 * uses unless told --use_old_post_send.
 *
 *   ibv_wr_start()      takes the SQ lock, starts a batch at our producer
 *   ibv_wr_<op>()       a builder: finishes the previous WQE, claims the
 *                       next slot, starts the header (qp_ex->wr_id and
 *                       qp_ex->wr_flags are read here)
 *   ibv_wr_set_*()      setters: payload (SGEs, inline bytes) straight
 *                       into the claimed slot, UD address into the header
 *   ibv_wr_complete()   finishes the last WQE, then publishes the producer
 *                       and rings the doorbell exactly like post_send
 *   ibv_wr_abort()      forgets the batch: nothing was published
 *
 * The builders and setters cannot return errors; the first one is kept
 * and ibv_wr_complete() returns it after discarding the whole batch, as
 * the man page says ("the entire posting will be aborted").  Errors: a
 * QP in RESET, INIT or RTR (EINVAL, from ibv_wr_start()), a
 * full SQ (ENOMEM, at the builder that found no slot), anything
 * tbrdma_build_send_wqe() would refuse in an ibv_send_wr (EINVAL), a
 * setter with no WQE open, a UD WQE finished without ibv_wr_set_ud_addr().
 *
 * The WQE itself is put together by the same wqe.c steps post_send uses.
 * IBV_SEND_INLINE in wr_flags is ignored: the setter decides (inline
 * setters copy the data before they return, so the caller may reuse it).
 */
#include <errno.h>

#include "wqe.h"

enum {
	TBRDMA_SEND_OPS_UD = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
	TBRDMA_SEND_OPS_UC = TBRDMA_SEND_OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE |
			     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			     IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
			     IBV_QP_EX_WITH_SEND_WITH_INV,
	TBRDMA_SEND_OPS_RC = TBRDMA_SEND_OPS_UC | IBV_QP_EX_WITH_RDMA_READ |
			     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			     IBV_QP_EX_WITH_ATOMIC_WRITE,
};

/* The same transport rules as wqe.c's opcode_allowed(); no TSO or FLUSH
 * anywhere. */
int tbrdma_wr_check_send_ops(enum ibv_qp_type qp_type,
			     uint64_t send_ops_flags)
{
	uint64_t ok;

	switch (qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		ok = TBRDMA_SEND_OPS_RC;
		break;
	case IBV_QPT_UC:
		ok = TBRDMA_SEND_OPS_UC;
		break;
	case IBV_QPT_UD:
		ok = TBRDMA_SEND_OPS_UD;
		break;
	default:
		return EOPNOTSUPP;
	}
	return send_ops_flags & ~ok ? EOPNOTSUPP : 0;
}

static void wr_fail(struct tbrdma_wr_batch *b, int err)
{
	if (!b->err)
		b->err = err;
	b->open = false;
}

/* Finish the open WQE, if any: its header into the slot, slot taken. */
static void wr_close(struct tbrdma_wr_batch *b)
{
	if (!b->open)
		return;
	b->open = false;
	if (b->err)
		return;
	if (b->need_ud) {
		b->err = EINVAL;	/* UD WQE without ibv_wr_set_ud_addr() */
		return;
	}
	tbrdma_send_wqe_commit(b->slot, &b->cur);
	b->producer++;
}

/*
 * The common part of every builder: close the previous WQE, claim the
 * next slot and start the header.  NULL when the batch has failed (now or
 * before); the builder then does nothing.
 */
static struct tbrdma_wr_batch *wr_open(struct ibv_qp_ex *ibqpx,
				       enum ibv_wr_opcode opcode,
				       __be32 imm_data)
{
	struct tbrdma_qp *qp = to_tqp_ex(ibqpx);
	struct tbrdma_wr_batch *b = &qp->wr;
	struct tbrdma_queue *q = &qp->sq.q;
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	int ret;

	wr_close(b);
	if (b->err)
		return NULL;
	if (!tbrdma_wq_has_room(q, b->producer, &b->consumer)) {
		wr_fail(b, ENOMEM);
		return NULL;
	}
	ret = tbrdma_send_wqe_init(&b->cur, ibqpx->wr_id, opcode,
				   ibqpx->wr_flags & ~IBV_SEND_INLINE,
				   imm_data, type, &qp->sq.caps);
	if (ret) {
		wr_fail(b, ret);
		return NULL;
	}
	b->slot = tbrdma_q_slot(q, b->producer);
	b->need_ud = type == IBV_QPT_UD;
	b->open = true;
	return b;
}

/* For the setters: the open WQE, or NULL (an error is recorded). */
static struct tbrdma_qp *wr_current(struct ibv_qp_ex *ibqpx)
{
	struct tbrdma_qp *qp = to_tqp_ex(ibqpx);

	if (qp->wr.err)
		return NULL;
	if (!qp->wr.open) {
		wr_fail(&qp->wr, EINVAL);	/* setter without a builder */
		return NULL;
	}
	return qp;
}

static void wr_setter_result(struct tbrdma_qp *qp, int ret)
{
	if (ret)
		wr_fail(&qp->wr, ret);
}

/* ---- builders ------------------------------------------------------------ */

static void tbrdma_wr_send(struct ibv_qp_ex *ibqpx)
{
	wr_open(ibqpx, IBV_WR_SEND, 0);
}

static void tbrdma_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm_data)
{
	wr_open(ibqpx, IBV_WR_SEND_WITH_IMM, imm_data);
}

static void tbrdma_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				 uint64_t remote_addr)
{
	struct tbrdma_wr_batch *b = wr_open(ibqpx, IBV_WR_RDMA_WRITE, 0);

	if (b)
		tbrdma_send_wqe_set_rdma(&b->cur, remote_addr, rkey);
}

static void tbrdma_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				     uint64_t remote_addr, __be32 imm_data)
{
	struct tbrdma_wr_batch *b =
		wr_open(ibqpx, IBV_WR_RDMA_WRITE_WITH_IMM, imm_data);

	if (b)
		tbrdma_send_wqe_set_rdma(&b->cur, remote_addr, rkey);
}

static void tbrdma_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				uint64_t remote_addr)
{
	struct tbrdma_wr_batch *b = wr_open(ibqpx, IBV_WR_RDMA_READ, 0);

	if (b)
		tbrdma_send_wqe_set_rdma(&b->cur, remote_addr, rkey);
}

static void tbrdma_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t compare,
				     uint64_t swap)
{
	struct tbrdma_wr_batch *b =
		wr_open(ibqpx, IBV_WR_ATOMIC_CMP_AND_SWP, 0);

	if (b)
		tbrdma_send_wqe_set_atomic(&b->cur, remote_addr, compare, swap,
					   rkey);
}

static void tbrdma_wr_atomic_fetch_add(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				       uint64_t remote_addr, uint64_t add)
{
	struct tbrdma_wr_batch *b =
		wr_open(ibqpx, IBV_WR_ATOMIC_FETCH_AND_ADD, 0);

	if (b)
		tbrdma_send_wqe_set_atomic(&b->cur, remote_addr, add, 0, rkey);
}

/* The 8 bytes are copied now: the caller may reuse atomic_wr at once. */
static void tbrdma_wr_atomic_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				   uint64_t remote_addr, const void *atomic_wr)
{
	struct tbrdma_wr_batch *b = wr_open(ibqpx, IBV_WR_ATOMIC_WRITE, 0);
	struct tbrdma_qp *qp = to_tqp_ex(ibqpx);

	if (!b)
		return;
	tbrdma_send_wqe_set_rdma(&b->cur, remote_addr, rkey);
	wr_setter_result(qp, tbrdma_send_wqe_set_atomic_write(
				     &b->cur, b->slot, qp->sq.q.slot_size,
				     atomic_wr));
}

static void tbrdma_wr_send_inv(struct ibv_qp_ex *ibqpx,
			       uint32_t invalidate_rkey)
{
	struct tbrdma_wr_batch *b = wr_open(ibqpx, IBV_WR_SEND_WITH_INV, 0);

	if (b)
		tbrdma_send_wqe_set_inv(&b->cur, invalidate_rkey);
}

/* LOCAL_INV and BIND_MW need no setter: they carry no payload. */
static void tbrdma_wr_local_inv(struct ibv_qp_ex *ibqpx,
				uint32_t invalidate_rkey)
{
	struct tbrdma_wr_batch *b = wr_open(ibqpx, IBV_WR_LOCAL_INV, 0);

	if (b)
		tbrdma_send_wqe_set_inv(&b->cur, invalidate_rkey);
}

static void tbrdma_wr_bind_mw(struct ibv_qp_ex *ibqpx, struct ibv_mw *mw,
			      uint32_t rkey,
			      const struct ibv_mw_bind_info *bind_info)
{
	struct tbrdma_wr_batch *b = wr_open(ibqpx, IBV_WR_BIND_MW, 0);

	if (!b)
		return;
	if (!mw || !bind_info) {
		wr_fail(b, EINVAL);
		return;
	}
	tbrdma_send_wqe_set_bind(&b->cur, mw->rkey, rkey, bind_info);
}

/* ---- setters ------------------------------------------------------------- */

static void tbrdma_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
				  uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct tbrdma_qp *qp = wr_current(ibqpx);
	int ret;

	if (!qp)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD) {
		wr_fail(&qp->wr, EINVAL);
		return;
	}
	ret = tbrdma_send_wqe_set_ud(&qp->wr.cur, ah, remote_qpn, remote_qkey);
	if (!ret)
		qp->wr.need_ud = false;
	wr_setter_result(qp, ret);
}

/* XRC send QPs: the SRQ at the responder this WQE's message is for. */
static void tbrdma_wr_set_xrc_srqn(struct ibv_qp_ex *ibqpx,
				   uint32_t remote_srqn)
{
	struct tbrdma_qp *qp = wr_current(ibqpx);

	if (!qp)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND) {
		wr_fail(&qp->wr, EINVAL);
		return;
	}
	qp->wr.cur.xrc_remote_srqn = remote_srqn;
}

static void tbrdma_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				   const struct ibv_sge *sg_list)
{
	struct tbrdma_qp *qp = wr_current(ibqpx);

	if (qp)
		wr_setter_result(qp, tbrdma_send_wqe_set_sges(
					     &qp->wr.cur, qp->wr.slot,
					     qp->sq.q.slot_size, &qp->sq.caps,
					     sg_list, num_sge));
}

static void tbrdma_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			      uint64_t addr, uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr, .length = length, .lkey = lkey,
	};

	tbrdma_wr_set_sge_list(ibqpx, 1, &sge);
}

static void tbrdma_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					   size_t num_buf,
					   const struct ibv_data_buf *buf_list)
{
	struct tbrdma_qp *qp = wr_current(ibqpx);
	size_t i;
	int ret;

	if (!qp)
		return;
	ret = tbrdma_send_wqe_inline_start(&qp->wr.cur);
	for (i = 0; !ret && i < num_buf; i++)
		ret = tbrdma_send_wqe_inline_add(&qp->wr.cur, qp->wr.slot,
						 qp->sq.q.slot_size,
						 &qp->sq.caps,
						 buf_list[i].addr,
						 buf_list[i].length);
	wr_setter_result(qp, ret);
}

static void tbrdma_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				      size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	tbrdma_wr_set_inline_data_list(ibqpx, 1, &buf);
}

/* ---- the critical region ------------------------------------------------- */

static void tbrdma_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct tbrdma_qp *qp = to_tqp_ex(ibqpx);
	struct tbrdma_queue *q = &qp->sq.q;

	pthread_spin_lock(&qp->sq.lock);
	qp->wr.producer = q->index;
	/* Acquire: slots below the kernel's consumer are no longer read. */
	qp->wr.consumer = tbrdma_q_load_acquire(&q->hdr->consumer);
	/* Not in RESET, INIT or RTR: wr_complete drops the batch, EINVAL. */
	qp->wr.err = tbrdma_qp_state_can_send(&qp->vqp.qp) ? 0 : EINVAL;
	qp->wr.open = false;
	qp->wr.need_ud = false;
}

static int tbrdma_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct tbrdma_qp *qp = to_tqp_ex(ibqpx);
	struct tbrdma_wr_batch *b = &qp->wr;
	bool ring = false;
	int ret;

	wr_close(b);
	ret = b->err;
	/* On error nothing is published: the batch is dropped whole. */
	if (!ret && b->producer != qp->sq.q.index)
		ring = tbrdma_sq_publish(&qp->sq.q, b->producer);
	pthread_spin_unlock(&qp->sq.lock);

	/* Outside the lock, as in post_send; a failed doorbell leaves the
	 * WQEs posted but is reported. */
	if (ring)
		ret = tbrdma_sq_doorbell(&qp->vqp.qp);
	return ret;
}

static void tbrdma_wr_abort(struct ibv_qp_ex *ibqpx)
{
	struct tbrdma_qp *qp = to_tqp_ex(ibqpx);

	/* The claimed slots were never published; the next batch starts
	 * again at q->index and overwrites them. */
	qp->wr.open = false;
	pthread_spin_unlock(&qp->sq.lock);
}

void tbrdma_wr_init_qp(struct tbrdma_qp *qp, uint64_t send_ops_flags)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;

	/* Builders only for what was asked for (and checked by
	 * tbrdma_wr_check_send_ops()); the rest stay NULL, as upstream. */
	if (send_ops_flags & IBV_QP_EX_WITH_SEND)
		x->wr_send = tbrdma_wr_send;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		x->wr_send_imm = tbrdma_wr_send_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE)
		x->wr_rdma_write = tbrdma_wr_rdma_write;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		x->wr_rdma_write_imm = tbrdma_wr_rdma_write_imm;
	if (send_ops_flags & IBV_QP_EX_WITH_RDMA_READ)
		x->wr_rdma_read = tbrdma_wr_rdma_read;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		x->wr_atomic_cmp_swp = tbrdma_wr_atomic_cmp_swp;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		x->wr_atomic_fetch_add = tbrdma_wr_atomic_fetch_add;
	if (send_ops_flags & IBV_QP_EX_WITH_ATOMIC_WRITE)
		x->wr_atomic_write = tbrdma_wr_atomic_write;
	if (send_ops_flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		x->wr_send_inv = tbrdma_wr_send_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_LOCAL_INV)
		x->wr_local_inv = tbrdma_wr_local_inv;
	if (send_ops_flags & IBV_QP_EX_WITH_BIND_MW)
		x->wr_bind_mw = tbrdma_wr_bind_mw;

	x->wr_set_ud_addr = tbrdma_wr_set_ud_addr;
	x->wr_set_xrc_srqn = tbrdma_wr_set_xrc_srqn;
	x->wr_set_sge = tbrdma_wr_set_sge;
	x->wr_set_sge_list = tbrdma_wr_set_sge_list;
	x->wr_set_inline_data = tbrdma_wr_set_inline_data;
	x->wr_set_inline_data_list = tbrdma_wr_set_inline_data_list;

	x->wr_start = tbrdma_wr_start;
	x->wr_complete = tbrdma_wr_complete;
	x->wr_abort = tbrdma_wr_abort;

	qp->vqp.comp_mask |= VERBS_QP_EX;
}
