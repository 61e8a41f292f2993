// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fast path: posting work requests.  WQEs go straight into the shared
 * rings.  Receives never make a system call (the kernel reads the RQ/SRQ
 * when a message arrives); sends make at most one per call, the doorbell,
 * and none while the kernel says it is still working on the SQ.
 */
#include <errno.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "wqe.h"

/*
 * The doorbell: an ioctl on the context's doorbell file when the kernel
 * gave us one (kmod/doorbell.c: it skips the uverbs command parser, a few
 * microseconds per message), else one write() of a zero-WR POST_SEND;
 * see tbrdma_build_doorbell().
 */
int tbrdma_sq_doorbell(struct ibv_qp *ibqp)
{
	struct tbrdma_context *ctx = to_tctx(ibqp->context);
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd;
	ssize_t n;

	if (ctx->doorbell_fd >= 0)
		return ioctl(ctx->doorbell_fd, TBRDMA_IOCTL_SQ_DOORBELL,
			     (unsigned long)ibqp->qp_num) ? errno : 0;
	tbrdma_build_doorbell(&cmd, ibqp->handle, &resp);
	n = write(ibqp->context->cmd_fd, &cmd, sizeof(cmd));
	if (n == (ssize_t)sizeof(cmd))
		return 0;
	return n < 0 ? errno : EIO;
}

/*
 * Make room for one more WQE: first with the consumer value we already
 * have, then with a fresh one (the kernel may have caught up meanwhile).
 */
bool tbrdma_wq_has_room(struct tbrdma_queue *q, uint32_t producer,
			uint32_t *consumer)
{
	if (tbrdma_q_free(producer, *consumer, q->num_slots))
		return true;
	*consumer = tbrdma_q_load_acquire(&q->hdr->consumer);
	return tbrdma_q_free(producer, *consumer, q->num_slots) != 0;
}

bool tbrdma_sq_publish(struct tbrdma_queue *q, uint32_t producer)
{
	q->index = producer;
	/* Release: the WQEs are in the ring before the kernel can see the
	 * new producer. */
	tbrdma_q_store_release(&q->hdr->producer, producer);
	/*
	 * Store-load ordering against the kernel, which clears
	 * KERNEL_ACTIVE, then barriers, then reads the producer once more:
	 * either it sees our producer, or we see the flag clear and ring.
	 * Without the full barrier our flag read could pass our producer
	 * store and both sides would miss.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	return !(__atomic_load_n(&q->hdr->flags, __ATOMIC_RELAXED) &
		 TBRDMA_SQ_FLAG_KERNEL_ACTIVE);
}

int tbrdma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr)
{
	struct tbrdma_qp *qp = to_tqp(ibqp);
	struct tbrdma_wq *sq = &qp->sq;
	struct tbrdma_queue *q = &sq->q;
	uint32_t producer, consumer;
	bool ring = false;
	int ret = 0;

	/* An XRC receive QP has no send queue. */
	if (!q->map || !tbrdma_qp_state_can_send(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&sq->lock);
	producer = q->index;
	/* Acquire: slots below the kernel's consumer are no longer read. */
	consumer = tbrdma_q_load_acquire(&q->hdr->consumer);
	for (; wr; wr = wr->next) {
		if (!tbrdma_wq_has_room(q, producer, &consumer)) {
			ret = ENOMEM;
			break;
		}
		ret = tbrdma_build_send_wqe(wr, ibqp->qp_type, &sq->caps,
					    tbrdma_q_slot(q, producer),
					    q->slot_size);
		if (ret)
			break;
		producer++;
	}

	if (producer != q->index)
		ring = tbrdma_sq_publish(q, producer);
	pthread_spin_unlock(&sq->lock);

	*bad_wr = ret ? wr : NULL;
	/*
	 * Outside the lock: a doorbell only says "look at the producer", so
	 * two threads ringing for overlapping batches is harmless.  If it
	 * fails, the WQEs stay posted (the next doorbell or a flush picks
	 * them up) but the caller learns about the error.
	 */
	if (ring) {
		int err = tbrdma_sq_doorbell(ibqp);

		if (!ret)
			ret = err;
	}
	return ret;
}

/* RQ and SRQ alike: no system call, the kernel reads the ring on arrival. */
static int post_recv_wq(struct tbrdma_wq *wq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct tbrdma_queue *q = &wq->q;
	uint32_t producer, consumer;
	int ret = 0;

	pthread_spin_lock(&wq->lock);
	producer = q->index;
	consumer = tbrdma_q_load_acquire(&q->hdr->consumer);
	for (; wr; wr = wr->next) {
		if (!tbrdma_wq_has_room(q, producer, &consumer)) {
			ret = ENOMEM;
			break;
		}
		ret = tbrdma_build_recv_wqe(wr, &wq->caps,
					    tbrdma_q_slot(q, producer),
					    q->slot_size);
		if (ret)
			break;
		producer++;
	}
	if (producer != q->index) {
		q->index = producer;
		tbrdma_q_store_release(&q->hdr->producer, producer);
	}
	pthread_spin_unlock(&wq->lock);

	*bad_wr = ret ? wr : NULL;
	return ret;
}

int tbrdma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct tbrdma_qp *qp = to_tqp(ibqp);

	/* Receives of a QP on an SRQ go to the SRQ; a QP may also have
	 * been created without an RQ; none in RESET. */
	if (ibqp->srq || !qp->rq.q.map || !tbrdma_qp_state_can_recv(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	return post_recv_wq(&qp->rq, wr, bad_wr);
}

int tbrdma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	return post_recv_wq(&to_tsrq(ibsrq)->rq, wr, bad_wr);
}
