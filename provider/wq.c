// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work queues (SQ, RQ, SRQ): mapping one and deciding what it accepts.
 * Shared by qp.c and srq.c.
 */
#include <string.h>

#include "tbrdma.h"

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/*
 * The kernel granted granted_sge SGEs (and granted_inline inline bytes);
 * we accept no more than that, and never more than one slot holds, so a
 * WQE can never spill into the next slot whatever the kernel said.
 */
int tbrdma_wq_init(struct tbrdma_wq *wq, int cmd_fd,
		   const struct tbrdma_queue_info *info, bool send,
		   uint32_t granted_sge, uint32_t granted_inline)
{
	uint32_t min_slot = send ? sizeof(struct tbrdma_send_wqe) :
				   sizeof(struct tbrdma_recv_wqe);
	int ret;

	memset(wq, 0, sizeof(*wq));
	ret = tbrdma_queue_map(&wq->q, cmd_fd, info, min_slot,
			       TBRDMA_QUEUE_PRODUCER);
	if (ret)
		return ret;

	if (send) {
		wq->caps.max_sge = min_u32(granted_sge,
				tbrdma_send_slot_max_sge(wq->q.slot_size));
		wq->caps.max_inline = min_u32(granted_inline,
				tbrdma_send_slot_max_inline(wq->q.slot_size));
	} else {
		wq->caps.max_sge = min_u32(granted_sge,
				tbrdma_recv_slot_max_sge(wq->q.slot_size));
	}

	ret = pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ret) {
		tbrdma_queue_unmap(&wq->q);
		return ret;
	}
	return 0;
}

void tbrdma_wq_destroy(struct tbrdma_wq *wq)
{
	if (!wq->q.map)
		return;
	pthread_spin_destroy(&wq->lock);
	tbrdma_queue_unmap(&wq->q);
}

/* Every slot is usable (full is producer - consumer == num_slots). */
uint32_t tbrdma_wq_max_wr(const struct tbrdma_wq *wq, uint32_t granted)
{
	return min_u32(granted, wq->q.num_slots);
}
