// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An in-process transport: N threads, one per rank, writing into each
 * other's receive buffers with memcpy and release/acquire counters. It
 * runs the mesh and ring algorithms and the sharded model on the host,
 * without a device (the unit tests).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "comm/allreduce.h"

struct loop_x {
	struct tp_xport x;
	struct tp_loop *l;
	/* messages that arrived from each peer */
	uint64_t recvd[TP_MAX_RANKS];
};

struct tp_loop {
	int n;
	struct loop_x *r;
};

static int loop_put(struct tp_xport *x, int peer, size_t src_off,
		    size_t dst_off, size_t len, int par)
{
	struct loop_x *me = (struct loop_x *)x;
	struct loop_x *to = &me->l->r[peer];

	(void)par;
	if (!(x->link_mask >> peer & 1)) {	/* a test's topology */
		tp_err("loop: rank %d has no link to rank %d", x->rank, peer);
		return -1;
	}
	if (src_off + len > x->sbuf_len || dst_off + len > to->x.rbuf_len) {
		tp_err("loop: put out of bounds");
		return -1;
	}
	memcpy(to->x.rbuf + dst_off, x->sbuf + src_off, len);
	__atomic_add_fetch(&to->recvd[x->rank], 1, __ATOMIC_RELEASE);
	x->bytes_sent += len;
	x->peer_bytes[peer] += len;
	return 0;
}

static int loop_wait_recv(struct tp_xport *x, int peer, uint64_t count)
{
	struct loop_x *me = (struct loop_x *)x;
	uint64_t deadline = tp_now_ns() + (uint64_t)x->timeout_ms * 1000000u;

	while (__atomic_load_n(&me->recvd[peer], __ATOMIC_ACQUIRE) < count) {
		if (tp_now_ns() > deadline) {
			tp_err("loop: rank %d waited %d ms for rank %d",
			       x->rank, x->timeout_ms, peer);
			return -1;
		}
		sched_yield();
	}
	return 0;
}

static int loop_wait_sent(struct tp_xport *x, int par)
{
	(void)x;
	(void)par;
	return 0;	/* memcpy is done when put returns */
}

static void loop_destroy(struct tp_xport *x)
{
	(void)x;
}

static const struct tp_xport_ops loop_ops = {
	.put = loop_put,
	.wait_recv = loop_wait_recv,
	.wait_sent = loop_wait_sent,
	.destroy = loop_destroy,
};

struct tp_loop *tp_loop_new(int nranks, size_t sbuf_bytes, size_t rbuf_bytes)
{
	struct tp_loop *l = tp_calloc(1, sizeof(*l));
	int i;

	l->n = nranks;
	l->r = tp_calloc((size_t)nranks, sizeof(*l->r));
	for (i = 0; i < nranks; i++) {
		struct tp_xport *x = &l->r[i].x;

		l->r[i].l = l;
		x->ops = &loop_ops;
		x->name = "loop";
		x->rank = i;
		x->nranks = nranks;
		x->sbuf = tp_alloc_pages(sbuf_bytes);
		x->rbuf = tp_alloc_pages(rbuf_bytes);
		x->sbuf_len = sbuf_bytes;
		x->rbuf_len = rbuf_bytes;
		x->timeout_ms = 20000;
		x->lost_peer = -1;
		/* every other rank (64 ranks: every bit) */
		x->link_mask = (nranks < 64 ? (1ull << nranks) - 1 : ~0ull) &
			       ~(1ull << i);
	}
	return l;
}

struct tp_xport *tp_loop_xport(struct tp_loop *l, int rank)
{
	return &l->r[rank].x;
}

void tp_loop_free(struct tp_loop *l)
{
	int i;

	for (i = 0; i < l->n; i++) {
		free(l->r[i].x.sbuf);
		free(l->r[i].x.rbuf);
	}
	free(l->r);
	free(l);
}
