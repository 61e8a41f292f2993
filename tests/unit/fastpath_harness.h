/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the fast-path tests (test_fastpath.c, test_wr_api.c): rings in
 * plain memory standing in for the kernel's mappings, QPs on them, and a
 * non-blocking pipe as the context's cmd_fd so that doorbells can be
 * counted and checked byte for byte (the context has no doorbell file, so
 * the provider rings with write()).  Header only; include once per test.
 */
#ifndef TBRDMA_FASTPATH_HARNESS_H
#define TBRDMA_FASTPATH_HARNESS_H

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any #include (pipe2)"
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "../../provider/wqe.h"

static int pipefd[2];
static struct tbrdma_context tctx;

/* A ring of n slots in plain memory, counters starting at 'start'. */
static __attribute__((unused)) void make_queue(struct tbrdma_queue *q, uint32_t n, uint32_t slot_size,
		       uint32_t start)
{
	size_t size = TBRDMA_QUEUE_SLOTS_OFFSET + (size_t)n * slot_size;

	q->map = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (!q->map)
		bail_out("out of memory");
	memset(q->map, 0, size);
	q->map_size = size;
	q->hdr = q->map;
	q->num_slots = n;
	q->slot_size = slot_size;
	q->hdr->producer = start;
	q->hdr->consumer = start;
	q->index = start;
}

static __attribute__((unused)) void make_qp(struct tbrdma_qp *qp, enum ibv_qp_type type, uint32_t n,
		    uint32_t start)
{
	memset(qp, 0, sizeof(*qp));
	qp->vqp.qp.context = &tctx.ibv_ctx.context;
	qp->vqp.qp.handle = 0x77;
	qp->vqp.qp.qp_type = type;
	qp->vqp.qp.state = IBV_QPS_RTS;
	make_queue(&qp->sq.q, n, 64 + 4 * 16, start);
	qp->sq.caps = (struct tbrdma_wq_caps){ .max_sge = 4, .max_inline = 64 };
	pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	make_queue(&qp->rq.q, n, 16 + 4 * 16, start);
	qp->rq.caps = (struct tbrdma_wq_caps){ .max_sge = 4 };
	pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
}

static __attribute__((unused)) void free_qp(struct tbrdma_qp *qp)
{
	free(qp->sq.q.map);
	free(qp->rq.q.map);
}

/* Doorbells waiting in the pipe; each must be exactly the 32 bytes. */
static __attribute__((unused)) int doorbells(uint32_t qp_handle)
{
	struct ibv_post_send cmd;
	int n = 0;

	for (;;) {
		ssize_t r = read(pipefd[0], &cmd, sizeof(cmd));

		if (r < 0 && errno == EAGAIN)
			return n;
		if (r != sizeof(cmd) ||
		    cmd.hdr.command != IB_USER_VERBS_CMD_POST_SEND ||
		    cmd.hdr.in_words != 8 || cmd.hdr.out_words != 1 ||
		    cmd.core_payload.qp_handle != qp_handle ||
		    cmd.core_payload.wr_count || cmd.core_payload.sge_count ||
		    cmd.core_payload.wqe_size != sizeof(struct ib_uverbs_send_wr))
			return -1000;	/* malformed doorbell */
		n++;
	}
}

static __attribute__((unused)) void harness_init(void)
{
	if (pipe2(pipefd, O_NONBLOCK))
		bail_out("pipe: %s", strerror(errno));
	tctx.ibv_ctx.context.cmd_fd = pipefd[1];
	tctx.doorbell_fd = -1;
}

#endif /* TBRDMA_FASTPATH_HARNESS_H */
