// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provider's fast path (provider/post.c, the poll/arm half of
 * provider/cq.c) against rings in ordinary memory (fastpath_harness.h), with this test playing
 * the kernel: it reads WQEs, advances consumers, writes CQEs, sets
 * KERNEL_ACTIVE.  The context's cmd_fd is a pipe, so every doorbell the
 * provider rings can be counted and its bytes checked, and "no system
 * call" can be checked as "nothing arrived in the pipe".
 *
 * Also two threaded stress runs: concurrent posters against a consuming
 * "kernel" thread, and concurrent pollers against a producing one; every
 * WQE/CQE must be seen exactly once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fastpath_harness.h"

static struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 1 };

static void chain(struct ibv_send_wr *wr, int n, uint64_t first_id)
{
	int i;

	memset(wr, 0, sizeof(*wr) * n);
	for (i = 0; i < n; i++) {
		wr[i].wr_id = first_id + i;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
}

static uint64_t slot_wr_id(struct tbrdma_queue *q, uint32_t index)
{
	return ((struct tbrdma_send_wqe *)tbrdma_q_slot(q, index))->wr_id;
}

static void test_post_send(void)
{
	struct ibv_send_wr wr[10], *bad = (void *)1;
	struct tbrdma_qp qp;
	struct tbrdma_queue *q = &qp.sq.q;

	make_qp(&qp, IBV_QPT_RC, 8, 0xfffffffd);	/* wraps after 3 */

	chain(wr, 3, 100);
	is_int(tbrdma_post_send(&qp.vqp.qp, wr, &bad), 0, "post 3 sends");
	ok(bad == NULL, "bad_wr NULL on success");
	ok(q->hdr->producer == 0, "producer published, across the 2^32 wrap");
	ok(slot_wr_id(q, 0xfffffffd) == 100 && slot_wr_id(q, 0xffffffff) == 102,
	   "WQEs in the slots of their counter values");
	is_int(doorbells(0x77), 1, "one doorbell for a 3-WR post");

	chain(wr, 1, 103);
	q->hdr->flags = TBRDMA_SQ_FLAG_KERNEL_ACTIVE;
	is_int(tbrdma_post_send(&qp.vqp.qp, wr, &bad), 0,
	       "post while the kernel is active");
	is_int(doorbells(0x77), 0, "KERNEL_ACTIVE: no doorbell");
	q->hdr->flags = 0;

	/* 4 in flight, 4 free: a 6-WR chain gets 4 in, ENOMEM at the 5th. */
	chain(wr, 6, 200);
	is_int(tbrdma_post_send(&qp.vqp.qp, wr, &bad), ENOMEM,
	       "full queue: ENOMEM");
	ok(bad == &wr[4], "bad_wr is the first WR that did not fit");
	is_int(q->hdr->producer - q->hdr->consumer, 8,
	       "the WRs that fit are published");
	is_int(doorbells(0x77), 1, "doorbell still rung for the posted part");
	is_int(tbrdma_post_send(&qp.vqp.qp, &wr[4], &bad), ENOMEM,
	       "still full");
	ok(bad == &wr[4], "nothing posted: bad_wr is the first WR");
	is_int(doorbells(0x77), 0, "nothing posted: no doorbell");

	/* The "kernel" consumes 2: room for exactly 2 more. */
	__atomic_store_n(&q->hdr->consumer, q->hdr->consumer + 2,
			 __ATOMIC_RELEASE);
	is_int(tbrdma_post_send(&qp.vqp.qp, &wr[4], &bad), 0,
	       "room again after the kernel consumed");
	ok(slot_wr_id(q, q->index - 1) == 205, "last WQE written");

	/* A corrupted consumer (ahead of the producer) must not open room. */
	__atomic_store_n(&q->hdr->consumer, q->hdr->producer + 3,
			 __ATOMIC_RELEASE);
	chain(wr, 1, 300);
	is_int(tbrdma_post_send(&qp.vqp.qp, wr, &bad), ENOMEM,
	       "consumer ahead of producer: treated as full");
	ok(slot_wr_id(q, q->index) != 300, "no slot overwritten");
	__atomic_store_n(&q->hdr->consumer, q->hdr->producer, __ATOMIC_RELEASE);
	/* The app scribbling on the shared producer does not move ours. */
	q->hdr->producer += 1000;
	is_int(tbrdma_post_send(&qp.vqp.qp, wr, &bad), 0, "post after reset");
	ok(q->hdr->producer == q->index,
	   "producer republished from our own copy");
	doorbells(0x77);

	/* A bad WR in the middle: the ones before it are posted. */
	chain(wr, 3, 400);
	wr[1].opcode = IBV_WR_BIND_MW;
	{
		uint32_t before = q->index;

		is_int(tbrdma_post_send(&qp.vqp.qp, wr, &bad), EINVAL,
		       "unsupported opcode mid-chain: EINVAL");
		ok(bad == &wr[1], "bad_wr is the bad WR");
		is_int(q->index - before, 1, "the WR before it was posted");
		is_int(doorbells(0x77), 1, "and the doorbell rung for it");
	}
	wr[1].opcode = IBV_WR_SEND;
	wr[1].num_sge = 5;
	is_int(tbrdma_post_send(&qp.vqp.qp, &wr[1], &bad), EINVAL,
	       "num_sge > max_send_sge: EINVAL");
	ok(bad == &wr[1], "bad_wr set");
	is_int(doorbells(0x77), 0, "nothing posted: no doorbell");

	/* UD: RDMA WRITE refused. */
	qp.vqp.qp.qp_type = IBV_QPT_UD;
	chain(wr, 1, 500);
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	is_int(tbrdma_post_send(&qp.vqp.qp, wr, &bad), EINVAL,
	       "UD RDMA_WRITE: EINVAL");
	free_qp(&qp);
}

/* Posting in a state that forbids it fails before anything is written. */
static void test_post_qp_state(void)
{
	static const struct { enum ibv_qp_state st; int send, recv; } t[] = {
		{ IBV_QPS_RESET, EINVAL, EINVAL },
		{ IBV_QPS_INIT, EINVAL, 0 },
		{ IBV_QPS_RTR, EINVAL, 0 },
		{ IBV_QPS_RTS, 0, 0 },
		{ IBV_QPS_SQD, 0, 0 },
		{ IBV_QPS_SQE, 0, 0 },
		{ IBV_QPS_ERR, 0, 0 },
	};
	struct ibv_send_wr swr, *sbad;
	struct ibv_recv_wr rwr, *rbad;
	struct tbrdma_qp qp;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		make_qp(&qp, IBV_QPT_RC, 4, 0);
		qp.vqp.qp.state = t[i].st;
		chain(&swr, 1, 900);
		memset(&rwr, 0, sizeof(rwr));
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		sbad = NULL;
		rbad = NULL;
		is_int(tbrdma_post_send(&qp.vqp.qp, &swr, &sbad), t[i].send,
		       "state %d: post_send %d", t[i].st, t[i].send);
		ok(t[i].send ? sbad == &swr && qp.sq.q.hdr->producer == 0 &&
				       doorbells(0x77) == 0 :
			       sbad == NULL && qp.sq.q.hdr->producer == 1 &&
				       doorbells(0x77) == 1,
		   "state %d: %s", t[i].st,
		   t[i].send ? "nothing posted, bad_wr set" : "posted, doorbell");
		is_int(tbrdma_post_recv(&qp.vqp.qp, &rwr, &rbad), t[i].recv,
		       "state %d: post_recv %d", t[i].st, t[i].recv);
		ok(qp.rq.q.hdr->producer == (t[i].recv ? 0u : 1u) &&
		   rbad == (t[i].recv ? &rwr : NULL),
		   "state %d: receive %s", t[i].st,
		   t[i].recv ? "not posted, bad_wr set" : "posted");
		free_qp(&qp);
	}
}

static void test_post_recv(void)
{
	struct ibv_recv_wr wr[10], *bad;
	struct tbrdma_qp qp;
	struct tbrdma_srq srq;
	struct ibv_srq fake_srq;
	int i;

	make_qp(&qp, IBV_QPT_RC, 4, 0);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 10; i++) {
		wr[i].wr_id = 10 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < 10 ? &wr[i + 1] : NULL;
	}
	is_int(tbrdma_post_recv(&qp.vqp.qp, wr, &bad), ENOMEM,
	       "10 receives on a 4-slot RQ: ENOMEM");
	ok(bad == &wr[4], "bad_wr is the 5th");
	is_int(qp.rq.q.hdr->producer, 4, "4 receives published");
	is_int(doorbells(0x77), 0, "post_recv: no system call");
	ok(((struct tbrdma_recv_wqe *)tbrdma_q_slot(&qp.rq.q, 3))->wr_id == 13,
	   "recv WQE in its slot");

	qp.rq.q.hdr->consumer = 4;
	wr[4].num_sge = 5;
	is_int(tbrdma_post_recv(&qp.vqp.qp, &wr[4], &bad), EINVAL,
	       "too many SGEs: EINVAL");
	ok(bad == &wr[4], "bad_wr set");

	qp.vqp.qp.srq = &fake_srq;
	is_int(tbrdma_post_recv(&qp.vqp.qp, &wr[5], &bad), EINVAL,
	       "QP on an SRQ: post_recv EINVAL");
	ok(bad == &wr[5], "bad_wr is the first WR");
	free_qp(&qp);

	memset(&srq, 0, sizeof(srq));
	make_queue(&srq.rq.q, 2, 32, 7);
	srq.rq.caps.max_sge = 1;
	pthread_spin_init(&srq.rq.lock, PTHREAD_PROCESS_PRIVATE);
	wr[5].num_sge = 1;
	is_int(tbrdma_post_srq_recv(&srq.ibv_srq, &wr[5], &bad), ENOMEM,
	       "SRQ: 2 slots, 5 WRs: ENOMEM");
	ok(bad == &wr[7], "SRQ: bad_wr is the 3rd");
	is_int(srq.rq.q.hdr->producer, 9, "SRQ: producer 7 + 2");
	is_int(doorbells(0x77), 0, "post_srq_recv: no system call");
	free(srq.rq.q.map);
}

/* The "kernel" side of a CQ: write one CQE, then publish (release). */
static void kernel_cqe(struct tbrdma_queue *q, uint32_t *prod, uint64_t wr_id)
{
	struct tbrdma_cqe *cqe = tbrdma_q_slot(q, *prod);

	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = wr_id;
	cqe->opcode = IBV_WC_RECV;
	cqe->byte_len = 8;
	cqe->wc_flags = TBRDMA_CQE_WITH_IMM;
	(*prod)++;
	__atomic_store_n(&q->hdr->producer, *prod, __ATOMIC_RELEASE);
}

static void test_cq(void)
{
	struct tbrdma_cq cq;
	struct ibv_wc wc[8];
	uint32_t prod = 0xfffffffe;
	int i;

	memset(&cq, 0, sizeof(cq));
	make_queue(&cq.q, 4, 64, prod);
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);

	is_int(tbrdma_poll_cq(&cq.ibv_cq, 8, wc), 0, "empty CQ polls 0");
	for (i = 0; i < 3; i++)
		kernel_cqe(&cq.q, &prod, 50 + i);
	is_int(tbrdma_poll_cq(&cq.ibv_cq, 2, wc), 2, "poll at most num_entries");
	ok(wc[0].wr_id == 50 && wc[1].wr_id == 51, "in order");
	is_int(wc[0].wc_flags, IBV_WC_WITH_IMM, "flags converted");
	is_int(cq.q.hdr->consumer, 0, "consumer published across the wrap");
	is_int(tbrdma_poll_cq(&cq.ibv_cq, 8, wc), 1, "the rest");
	ok(wc[0].wr_id == 52, "third CQE");
	is_int(doorbells(0x77), 0, "poll: no system call");

	cq.q.hdr->producer = cq.q.index + 5;	/* kernel bug: > 4 slots */
	ok(tbrdma_poll_cq(&cq.ibv_cq, 8, wc) < 0,
	   "producer more than num_slots ahead: error, not stale CQEs");
	cq.q.hdr->producer = cq.q.index;

	is_int(tbrdma_req_notify_cq(&cq.ibv_cq, 0), 0, "arm next");
	is_int(cq.q.hdr->flags, TBRDMA_CQ_ARM_NEXT, "ARM_NEXT set");
	is_int(tbrdma_req_notify_cq(&cq.ibv_cq, 1), 0, "arm solicited");
	is_int(cq.q.hdr->flags, TBRDMA_CQ_ARM_NEXT | TBRDMA_CQ_ARM_SOLICITED,
	       "bits are ORed, not overwritten");
	cq.q.hdr->flags = 0;
	is_int(tbrdma_req_notify_cq(&cq.ibv_cq, 1), 0, "arm solicited only");
	is_int(cq.q.hdr->flags, TBRDMA_CQ_ARM_SOLICITED, "ARM_SOLICITED only");
	is_int(doorbells(0x77), 0, "arming: no system call");
	free(cq.q.map);
}

/*
 * An empty CQ is recognised without the lock (cq.c, cq_peek_empty()):
 * polled while another thread holds the lock, it answers 0 at once (a
 * poll that took the lock would spin until the alarm kills the test).
 * A CQE, or no published header (a resize under way), goes through the
 * lock as before.
 */
static void test_cq_peek(void)
{
	struct tbrdma_cq cq;
	struct ibv_wc wc[8];
	uint32_t prod = 0xffffffff;

	memset(&cq, 0, sizeof(cq));
	make_queue(&cq.q, 4, 64, prod);
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);
	cq.peek_hdr = cq.q.hdr;		/* as create_cq publishes it */
	cq.peek_index = cq.q.index;

	alarm(10);
	pthread_spin_lock(&cq.lock);
	is_int(tbrdma_poll_cq(&cq.ibv_cq, 8, wc), 0,
	       "empty CQ: 0 without taking the lock");
	pthread_spin_unlock(&cq.lock);
	alarm(0);
	kernel_cqe(&cq.q, &prod, 70);
	kernel_cqe(&cq.q, &prod, 71);
	is_int(tbrdma_poll_cq(&cq.ibv_cq, 8, wc), 2, "CQEs: polled under the lock");
	ok(wc[0].wr_id == 70 && wc[1].wr_id == 71, "in order");
	is_int(cq.peek_index, cq.q.index, "lock-free copy of the index follows");
	is_int(tbrdma_poll_cq(&cq.ibv_cq, 8, wc), 0, "empty again");
	cq.q.hdr->producer = cq.q.index + 5;	/* kernel bug: > 4 slots */
	ok(tbrdma_poll_cq(&cq.ibv_cq, 8, wc) < 0,
	   "insane producer: not 'empty', the locked path reports it");
	cq.q.hdr->producer = cq.q.index;
	cq.peek_hdr = NULL;			/* a resize runs */
	kernel_cqe(&cq.q, &prod, 72);
	is_int(tbrdma_poll_cq(&cq.ibv_cq, 8, wc), 1,
	       "no published header: polled under the lock");
	free(cq.q.map);
}

static int lock_is_free(pthread_spinlock_t *l)
{
	if (pthread_spin_trylock(l))
		return 0;
	pthread_spin_unlock(l);
	return 1;
}

/* Extended CQs: ibv_start_poll/ibv_next_poll/ibv_end_poll on the ring. */
static void test_cq_ex(void)
{
	struct ibv_poll_cq_attr attr = {};
	struct tbrdma_cq cq;
	struct ibv_cq_ex *x = &cq.ibv_cq_ex;
	uint32_t prod = 0xffffffff;
	int i;

	memset(&cq, 0, sizeof(cq));
	make_queue(&cq.q, 4, 64, prod);
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);
	tbrdma_cq_ex_init(&cq, IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
				       IBV_WC_EX_WITH_QP_NUM);
	ok(x->read_byte_len && x->read_imm_data && x->read_qp_num &&
	   !x->read_src_qp && !x->read_completion_ts,
	   "cq_ex: readers for the requested wc_flags only");
	ok((void *)x == (void *)&cq.ibv_cq, "cq_ex: the ibv_cq is its start");

	is_int(ibv_start_poll(x, &attr), ENOENT, "cq_ex: empty CQ: ENOENT");
	ok(lock_is_free(&cq.lock), "cq_ex: ENOENT drops the lock");
	for (i = 0; i < 3; i++)
		kernel_cqe(&cq.q, &prod, 70 + i);
	is_int(ibv_start_poll(x, &attr), 0, "cq_ex: start_poll finds a CQE");
	ok(x->wr_id == 70 && x->status == IBV_WC_SUCCESS, "cq_ex: wr_id, status");
	ok(ibv_wc_read_wc_flags(x) == IBV_WC_WITH_IMM,
	   "cq_ex: wc_flags converted");
	is_int(cq.q.hdr->consumer, 0xffffffff, "cq_ex: nothing consumed yet");
	is_int(ibv_next_poll(x), 0, "cq_ex: next_poll");
	ok(x->wr_id == 71, "cq_ex: second CQE");
	is_int(ibv_next_poll(x), 0, "cq_ex: next_poll");
	ok(x->wr_id == 72, "cq_ex: third CQE");
	is_int(ibv_next_poll(x), ENOENT, "cq_ex: then ENOENT");
	ibv_end_poll(x);
	ok(lock_is_free(&cq.lock), "cq_ex: end_poll drops the lock");
	is_int(cq.q.hdr->consumer, 2, "cq_ex: all three consumed, published");

	kernel_cqe(&cq.q, &prod, 80);
	kernel_cqe(&cq.q, &prod, 81);
	is_int(ibv_start_poll(x, &attr), 0, "cq_ex: start_poll");
	ibv_end_poll(x);
	is_int(cq.q.hdr->consumer, 3, "cq_ex: end_poll consumes the one read");
	is_int(ibv_start_poll(x, &attr), 0, "cq_ex: the other is still there");
	ok(x->wr_id == 81, "cq_ex: wr_id 81");
	ibv_end_poll(x);

	cq.q.hdr->producer = cq.q.index + 5;	/* kernel bug: > 4 slots */
	is_int(ibv_start_poll(x, &attr), EIO,
	       "cq_ex: producer more than num_slots ahead: EIO");
	ok(lock_is_free(&cq.lock), "cq_ex: error drops the lock");
	attr.comp_mask = 1;
	is_int(ibv_start_poll(x, &attr), EINVAL, "cq_ex: unknown comp_mask");
	is_int(doorbells(0x77), 0, "cq_ex: no system call");
	free(cq.q.map);
}

/* ---- threaded runs ------------------------------------------------------ */

#define POSTERS 2
#define PER_POSTER 20000

static struct tbrdma_qp sqp;
static int stop;

static void *poster(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	struct ibv_send_wr wr, *bad;
	int i = 0;

	chain(&wr, 1, 0);
	while (i < PER_POSTER) {
		wr.wr_id = (id << 32) | (uint64_t)i;
		if (tbrdma_post_send(&sqp.vqp.qp, &wr, &bad) == 0)
			i++;
	}
	return NULL;
}

static void test_concurrent_post(void)
{
	pthread_t t[POSTERS];
	uint32_t cons, next[POSTERS] = { 0 };
	int seen = 0, bad_order = 0;
	uintptr_t i;

	make_qp(&sqp, IBV_QPT_RC, 64, 0xffffff00);
	/* Keep the kernel "active" so the pipe does not fill with doorbells. */
	sqp.sq.q.hdr->flags = TBRDMA_SQ_FLAG_KERNEL_ACTIVE;
	for (i = 0; i < POSTERS; i++)
		pthread_create(&t[i], NULL, poster, (void *)i);

	cons = sqp.sq.q.hdr->consumer;
	while (seen < POSTERS * PER_POSTER) {
		uint32_t prod = __atomic_load_n(&sqp.sq.q.hdr->producer,
						__ATOMIC_ACQUIRE);

		for (; cons != prod; cons++) {
			uint64_t id = slot_wr_id(&sqp.sq.q, cons);
			uint32_t who = id >> 32;

			/* Each poster's WRs arrive exactly once, in order. */
			if (who >= POSTERS || (uint32_t)id != next[who])
				bad_order++;
			else
				next[who]++;
			seen++;
		}
		__atomic_store_n(&sqp.sq.q.hdr->consumer, cons,
				 __ATOMIC_RELEASE);
	}
	for (i = 0; i < POSTERS; i++)
		pthread_join(t[i], NULL);
	is_int(bad_order, 0, "%d posters x %d WRs through a 64-slot SQ: "
	       "each WQE once, per-thread order kept", POSTERS, PER_POSTER);
	is_int(doorbells(0x77), 0, "no doorbell while KERNEL_ACTIVE");
	free_qp(&sqp);
}

#define POLLERS 2
#define CQES 100000

static struct tbrdma_cq scq;
static unsigned char got[CQES];

static void *poller(void *arg)
{
	struct ibv_wc wc[5];
	long *count = arg;

	/* Until the producer is done and everything was consumed. */
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&scq.q.hdr->producer, __ATOMIC_ACQUIRE) !=
		       __atomic_load_n(&scq.q.hdr->consumer, __ATOMIC_ACQUIRE)) {
		int n = tbrdma_poll_cq(&scq.ibv_cq, 5, wc), j;

		for (j = 0; j < n; j++) {
			if (wc[j].wr_id < CQES)
				__atomic_fetch_add(&got[wc[j].wr_id], 1,
						   __ATOMIC_RELAXED);
			(*count)++;
		}
	}
	return NULL;
}

static void test_concurrent_poll(void)
{
	pthread_t t[POLLERS];
	long count[POLLERS] = { 0 };
	uint32_t prod = 0xffff0000;
	int i, once = 1;

	memset(&scq, 0, sizeof(scq));
	make_queue(&scq.q, 32, 64, prod);
	pthread_spin_init(&scq.lock, PTHREAD_PROCESS_PRIVATE);
	scq.peek_hdr = scq.q.hdr;	/* the lock-free empty check too */
	scq.peek_index = scq.q.index;
	for (i = 0; i < POLLERS; i++)
		pthread_create(&t[i], NULL, poller, &count[i]);
	for (i = 0; i < CQES; i++) {
		/* Respect the consumer we are told, like the kernel must. */
		while (!tbrdma_q_free(prod, __atomic_load_n(&scq.q.hdr->consumer,
							    __ATOMIC_ACQUIRE),
				      scq.q.num_slots))
			;
		kernel_cqe(&scq.q, &prod, i);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < POLLERS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < CQES; i++)
		if (got[i] != 1)
			once = 0;
	is_int(count[0] + count[1], CQES, "%d pollers: %d CQEs polled in all",
	       POLLERS, CQES);
	ok(once, "every CQE returned exactly once");
	free(scq.q.map);
}

/*
 * With a doorbell file the provider rings by ioctl, never by write(): a
 * pipe refuses the ioctl (ENOTTY), which post_send reports, and nothing
 * arrives in the cmd_fd pipe.
 */
static void test_doorbell_file(void)
{
	struct ibv_send_wr wr[1], *bad = (void *)1;
	struct tbrdma_qp qp;

	make_qp(&qp, IBV_QPT_RC, 8, 0);
	tctx.doorbell_fd = pipefd[0];
	chain(wr, 1, 300);
	is_int(tbrdma_post_send(&qp.vqp.qp, wr, &bad), ENOTTY,
	       "doorbell file: the ioctl's error is reported");
	ok(bad == NULL, "doorbell file: the WR itself was posted");
	is_int(qp.sq.q.hdr->producer, 1, "doorbell file: producer published");
	is_int(doorbells(0x77), 0, "doorbell file: no write() on cmd_fd");
	tctx.doorbell_fd = -1;
	free_qp(&qp);
}

int main(void)
{
	harness_init();

	plan(NO_PLAN);
	test_post_send();
	test_post_recv();
	test_post_qp_state();
	test_cq();
	test_cq_peek();
	test_cq_ex();
	test_concurrent_post();
	test_concurrent_poll();
	test_doorbell_file();
	return done();
}
