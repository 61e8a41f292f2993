// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.  Creating, resizing and destroying are kernel
 * commands; polling and arming only touch the shared ring (no system
 * call).  Completion events still come through libibverbs' completion
 * channel (ibv_get_cq_event/ibv_ack_cq_events) unchanged.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "wqe.h"

struct ibv_cq *tbrdma_create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel,
				int comp_vector)
{
	struct tbrdma_cmd_create_cq_resp resp = {};
	struct ibv_create_cq cmd = {};
	struct tbrdma_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector, &cq->ibv_cq,
				&cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = tbrdma_queue_map(&cq->q, context->cmd_fd, &resp.drv.cq,
			       sizeof(struct tbrdma_cqe), TBRDMA_QUEUE_CONSUMER);
	if (ret) {
		tbrdma_err(&to_tctx(context)->ibv_ctx, "CQ ring: error %d", ret);
		goto err_destroy;
	}
	ret = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret)
		goto err_unmap;
	return &cq->ibv_cq;

err_unmap:
	tbrdma_queue_unmap(&cq->q);
err_destroy:
	/* libibverbs initialises cq->mutex/cond only after we return; the
	 * calloc()ed zeroes are glibc's static initialisers, and no event
	 * can have been reported yet, so the helper does not wait. */
	ibv_cmd_destroy_cq(&cq->ibv_cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

/*
 * The kernel copies the CQEs we have not consumed into the new ring,
 * starting at the consumer value we published, and writes the new ring's
 * counters (and carries the arm flags over) before answering.  The lock
 * keeps pollers off both rings meanwhile.
 */
int tbrdma_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct tbrdma_cmd_resize_cq_resp resp = {};
	struct tbrdma_cq *cq = to_tcq(ibcq);
	struct ibv_resize_cq cmd = {};
	struct tbrdma_queue old;
	int ret;

	pthread_spin_lock(&cq->lock);
	/* poll_cq already publishes after every batch; repeat it so the
	 * kernel's copy provably starts after what we consumed. */
	if (cq->q.map)
		tbrdma_q_store_release(&cq->q.hdr->consumer, cq->q.index);

	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;

	/* The kernel now writes only to the new ring: the old one goes
	 * whatever happens.  If the new one cannot be mapped the CQ stays
	 * unusable (poll fails) until a resize succeeds. */
	old = cq->q;
	ret = tbrdma_queue_map(&cq->q, ibcq->context->cmd_fd, &resp.drv.cq,
			       sizeof(struct tbrdma_cqe), TBRDMA_QUEUE_CONSUMER);
	tbrdma_queue_unmap(&old);
out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

int tbrdma_destroy_cq(struct ibv_cq *ibcq)
{
	struct tbrdma_cq *cq = to_tcq(ibcq);
	int ret;

	/* The kernel may still write the ring until the CQ is gone. */
	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	tbrdma_queue_unmap(&cq->q);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

int tbrdma_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct tbrdma_cq *cq = to_tcq(ibcq);
	struct tbrdma_queue *q = &cq->q;
	uint32_t producer, ready, i;
	int ret;

	if (num_entries <= 0)
		return 0;

	pthread_spin_lock(&cq->lock);
	if (!q->map) {
		ret = -EIO;
		goto out;
	}
	/* Acquire: the CQEs below the producer are completely written. */
	producer = tbrdma_q_load_acquire(&q->hdr->producer);
	if (!tbrdma_q_sane(producer, q->index, q->num_slots)) {
		/* Only a kernel bug gets here; never return stale slots. */
		ret = -EIO;
		goto out;
	}
	ready = tbrdma_q_ready(producer, q->index, q->num_slots);
	if (ready > (uint32_t)num_entries)
		ready = (uint32_t)num_entries;

	for (i = 0; i < ready; i++)
		tbrdma_cqe_to_wc(tbrdma_q_slot(q, q->index + i), &wc[i]);

	if (ready) {
		q->index += ready;
		/* Release: we are done reading these slots; the kernel may
		 * reuse them. */
		tbrdma_q_store_release(&q->hdr->consumer, q->index);
	}
	ret = (int)ready;
out:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

/*
 * Arming is a flag in the ring header that the kernel tests after each
 * CQE it publishes and clears when it raises the event.  The usual
 * "arm, then poll once more" pattern is race-free because both sides use
 * a full barrier between their write and their read: we set the flag then
 * read the producer (in the next poll); the kernel publishes the producer
 * then reads the flag.
 */
int tbrdma_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct tbrdma_cq *cq = to_tcq(ibcq);
	uint32_t arm = solicited_only ? TBRDMA_CQ_ARM_SOLICITED :
					TBRDMA_CQ_ARM_NEXT;
	int ret = 0;

	/* The lock only keeps a concurrent resize from unmapping the
	 * header under us. */
	pthread_spin_lock(&cq->lock);
	if (cq->q.map) {
		__atomic_fetch_or(&cq->q.hdr->flags, arm, __ATOMIC_SEQ_CST);
		atomic_thread_fence(memory_order_seq_cst);
	} else {
		ret = EIO;
	}
	pthread_spin_unlock(&cq->lock);
	return ret;
}
