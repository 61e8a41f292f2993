// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_uverbs, layer "ring": scribbling on the shared rings while traffic
 * runs.
 *
 * Each round sets up RC QPs A and B (B receives from an SRQ) and UD QPs U
 * and W, with valid traffic between them; each step then does one of:
 * valid posts, polls, a random value written at a random place of a ring
 * (header counters and flags, WQE fields, SGEs), a mutated WQE published
 * behind the provider's back (random opcode, flags, SGE count, inline
 * length, keys, addresses, AH handle, ...), a bare doorbell, a state
 * change (error, reset and reconnect), arming or resizing a CQ.  With the
 * racer, a second thread writes random values into the same rings all the
 * time, racing the kernel's reads.
 *
 * Where the rings are: the test reaches into the provider's own structs
 * (provider/tbrdma.h, the same header the provider is built from) for the
 * mapping of each queue, and checks once per run that each of them is a
 * mapping of the uverbs file in /proc/self/maps.
 *
 * Expected: error completions, QPs in error, QP_FATAL / CQ_ERR events,
 * calls failing with an error; never a kernel complaint or a hang, and
 * every round's objects must be destroyable.  Completions are checked for
 * a valid status only (the CQ ring itself is written on, so wr_ids and
 * opcodes of flushed garbage WQEs are whatever was scribbled).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../provider/tbrdma.h"
#include "fuzz.h"

#define ARENA		(256 * 1024)
#define STEPS_PER_ROUND	256

enum { Q_ASQ, Q_ARQ, Q_BSQ, Q_SRQ, Q_USQ, Q_WSQ, Q_WRQ, Q_CQA, Q_CQB,
       NQUEUE };

struct round {
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cqa, *cqb;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b, *u, *w;
	struct ibv_ah *ah;
	struct tbrdma_queue *q[NQUEUE];	/* the provider's view of each ring */
};

struct ring_state {
	struct rng r;
	uint64_t iter;
	uint8_t *arena;
	struct round rd;
	struct conn c;
	/* The racer: scribbles while holding lock, stops when told. */
	pthread_mutex_t lock;
	atomic_bool stop;
	atomic_uint_fast64_t racer_writes;
	uint64_t racer_seed;
};

/* ---- set-up ------------------------------------------------------------- */

static struct ibv_qp *mk_qp(struct ring_state *s, enum ibv_qp_type t,
			    struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = t,
		.cap = { .max_send_wr = 8 << rnd(&s->r, 3),
			 .max_recv_wr = srq ? 0 : 8 << rnd(&s->r, 3),
			 .max_send_sge = 1 + rnd(&s->r, 4),
			 .max_recv_sge = 1 + rnd(&s->r, 4),
			 .max_inline_data = 64 * rnd(&s->r, 5) },
	};

	return ibv_create_qp(s->rd.pd, &ia);
}

static int ud_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };
	int ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					IBV_QP_PORT | IBV_QP_QKEY);

	if (!ret)
		ret = qp_to_state(qp, IBV_QPS_RTR);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (!ret)
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return ret;
}

static void teardown(struct ring_state *s)
{
	struct round *rd = &s->rd;
	struct ibv_qp **qps[] = { &rd->a, &rd->b, &rd->u, &rd->w };
	int ret;

	fuzz_drain_async(F.v.ctx);
	for (unsigned int i = 0; i < 4; i++) {
		if (!*qps[i])
			continue;
		ret = ibv_destroy_qp(*qps[i]);
		if (ret)
			fuzz_fail("ring: destroy_qp failed: %d", ret);
		*qps[i] = NULL;
	}
	if (rd->ah && (ret = ibv_destroy_ah(rd->ah)))
		fuzz_fail("ring: destroy_ah failed: %d", ret);
	if (rd->srq && (ret = ibv_destroy_srq(rd->srq)))
		fuzz_fail("ring: destroy_srq failed: %d", ret);
	if (rd->mr && (ret = ibv_dereg_mr(rd->mr)))
		fuzz_fail("ring: dereg_mr failed: %d", ret);
	if (rd->cqa && (ret = ibv_destroy_cq(rd->cqa)))
		fuzz_fail("ring: destroy_cq failed: %d", ret);
	if (rd->cqb && (ret = ibv_destroy_cq(rd->cqb)))
		fuzz_fail("ring: destroy_cq failed: %d", ret);
	if (rd->pd && (ret = ibv_dealloc_pd(rd->pd)))
		fuzz_fail("ring: dealloc_pd failed: %d", ret);
	memset(rd, 0, sizeof(*rd));
}

static void set_queues(struct round *rd)
{
	rd->q[Q_ASQ] = &to_tqp(rd->a)->sq.q;
	rd->q[Q_ARQ] = &to_tqp(rd->a)->rq.q;
	rd->q[Q_BSQ] = &to_tqp(rd->b)->sq.q;
	rd->q[Q_SRQ] = &to_tsrq(rd->srq)->rq.q;
	rd->q[Q_USQ] = &to_tqp(rd->u)->sq.q;
	rd->q[Q_WSQ] = &to_tqp(rd->w)->sq.q;
	rd->q[Q_WRQ] = &to_tqp(rd->w)->rq.q;
	rd->q[Q_CQA] = &to_tcq(rd->cqa)->q;
	rd->q[Q_CQB] = &to_tcq(rd->cqb)->q;
}

static int setup(struct ring_state *s)
{
	struct round *rd = &s->rd;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 2 } };
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = F.v.gid, .sgid_index = (uint8_t)F.v.gid_index,
			 .hop_limit = 64 },
	};

	memset(rd, 0, sizeof(*rd));
	rd->pd = ibv_alloc_pd(F.v.ctx);
	rd->cqa = ibv_create_cq(F.v.ctx, 16 << rnd(&s->r, 4), NULL, NULL, 0);
	rd->cqb = ibv_create_cq(F.v.ctx, 16 << rnd(&s->r, 4), NULL, NULL, 0);
	if (!rd->pd || !rd->cqa || !rd->cqb)
		goto fail;
	rd->mr = ibv_reg_mr(rd->pd, s->arena, ARENA, s->c.access);
	rd->srq = ibv_create_srq(rd->pd, &sa);
	rd->ah = ibv_create_ah(rd->pd, &aa);
	if (!rd->mr || !rd->srq || !rd->ah)
		goto fail;
	rd->a = mk_qp(s, IBV_QPT_RC, rd->cqa, NULL);
	rd->b = mk_qp(s, IBV_QPT_RC, rd->cqb, rd->srq);
	rd->u = mk_qp(s, IBV_QPT_UD, rd->cqa, NULL);
	rd->w = mk_qp(s, IBV_QPT_UD, rd->cqb, NULL);
	if (!rd->a || !rd->b || !rd->u || !rd->w)
		goto fail;
	if (qp_connect(rd->a, &F.v, rd->b->qp_num, &s->c) ||
	    qp_connect(rd->b, &F.v, rd->a->qp_num, &s->c) ||
	    ud_up(rd->u) || ud_up(rd->w))
		goto fail;
	set_queues(rd);
	return 0;
fail:
	fuzz_fail("ring: round set-up failed (errno %d)", errno);
	teardown(s);
	return -1;
}

/* Every ring address is a mapping of the uverbs file. */
static void check_maps(struct ring_state *s)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned int found = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (!strstr(line, "/dev/infiniband/uverbs") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		for (int i = 0; i < NQUEUE; i++) {
			uintptr_t p = (uintptr_t)s->rd.q[i]->map;

			if (p >= lo && p < hi)
				found |= 1U << i;
		}
	}
	fclose(f);
	if (found != (1U << NQUEUE) - 1)
		fuzz_fail("ring: not every ring is a uverbs mapping (%#x)",
			  found);
	else
		printf("# ring: %d rings found, all mappings of %s\n", NQUEUE,
		       F.uverbs_path);
}

/* ---- traffic ------------------------------------------------------------ */

static struct ibv_sge arena_sge(struct ring_state *s, uint32_t max)
{
	uint32_t len = rnd(&s->r, max + 1);

	return (struct ibv_sge){
		.addr = (uintptr_t)s->arena + rnd(&s->r, ARENA - len) / 8 * 8,
		.length = len,
		.lkey = s->rd.mr->lkey,
	};
}

static void post_recvs(struct ring_state *s)
{
	struct round *rd = &s->rd;
	struct ibv_recv_wr wr = { .wr_id = fuzz_wr_id(&s->r), .num_sge = 1 },
			   *bad;
	struct ibv_sge sge = arena_sge(s, 4096);
	int ret;

	wr.sg_list = &sge;
	switch (rnd(&s->r, 3)) {
	case 0:
		ret = ibv_post_srq_recv(rd->srq, &wr, &bad);
		break;
	case 1:
		ret = ibv_post_recv(rd->a, &wr, &bad);
		break;
	default:
		ret = ibv_post_recv(rd->w, &wr, &bad);
	}
	fuzz_ret("ring post_recv", ret);
}

static void post_sends(struct ring_state *s)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP,
	};
	struct round *rd = &s->rd;
	struct ibv_send_wr wr = { .wr_id = fuzz_wr_id(&s->r), .num_sge = 1 },
			   *bad;
	struct ibv_sge sge = arena_sge(s, 4096);
	struct ibv_qp *qp;
	int ret;

	wr.sg_list = &sge;
	wr.send_flags = IBV_SEND_SIGNALED;
	switch (rnd(&s->r, 4)) {
	case 0:
		qp = rd->u;
		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = rd->ah;
		wr.wr.ud.remote_qpn = rd->w->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
		if (sge.length > 1024)
			sge.length = 1024;
		break;
	case 1:
		qp = rd->b;
		wr.opcode = ops[rnd(&s->r, 5)];
		break;
	default:
		qp = rd->a;
		wr.opcode = ops[rnd(&s->r, sizeof(ops) / sizeof(ops[0]))];
	}
	if (wr.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)s->arena +
					   rnd(&s->r, ARENA / 8) * 8;
		wr.wr.atomic.rkey = rd->mr->rkey;
		wr.wr.atomic.compare_add = rnd64(&s->r);
	} else if (qp != rd->u) {
		wr.wr.rdma.remote_addr = (uintptr_t)s->arena +
					 rnd(&s->r, ARENA - sge.length);
		wr.wr.rdma.rkey = rd->mr->rkey;
	}
	ret = ibv_post_send(qp, &wr, &bad);
	fuzz_ret("ring post_send", ret);
}

static void poll_all(struct ring_state *s)
{
	struct ibv_cq *cqs[2] = { s->rd.cqa, s->rd.cqb };
	struct ibv_wc wc[16];

	for (int k = 0; k < 2; k++) {
		int n = ibv_poll_cq(cqs[k], 16, wc);

		/* -EIO: the provider refuses a producer we scribbled on. */
		fuzz_ret("ring poll_cq", n < 0 ? -n : 0);
		for (int i = 0; i < n; i++)
			fuzz_check_wc(&wc[i], false);
	}
}

/* A bare doorbell on a QP, as the provider rings it, whatever the ring
 * looks like (the provider itself may think the ring is full): every
 * other send doorbell through the provider's doorbell file, the rest as
 * a POST_SEND or POST_RECV with no work requests. */
static void doorbell(struct ibv_qp *qp, bool recv)
{
	static unsigned int turn;
	int doorbell_fd = to_tctx(qp->context)->doorbell_fd;
	struct {
		struct ib_uverbs_cmd_hdr h;
		struct ib_uverbs_post_send c;
	} cmd;
	struct ib_uverbs_post_send_resp resp;
	ssize_t n;

	if (!recv && doorbell_fd >= 0 && turn++ % 2) {
		fuzz_ret("doorbell ioctl",
			 ioctl(doorbell_fd, TBRDMA_IOCTL_SQ_DOORBELL,
			       (unsigned long)qp->qp_num) ? errno : 0);
		return;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.h.command = recv ? IB_USER_VERBS_CMD_POST_RECV :
			       IB_USER_VERBS_CMD_POST_SEND;
	cmd.h.in_words = sizeof(cmd) / 4;
	cmd.h.out_words = sizeof(resp) / 4;
	cmd.c.response = (uintptr_t)&resp;
	cmd.c.qp_handle = qp->handle;
	cmd.c.wqe_size = recv ? sizeof(struct ib_uverbs_recv_wr) :
				sizeof(struct ib_uverbs_send_wr);
	n = write(qp->context->cmd_fd, &cmd, sizeof(cmd));
	fuzz_ret("doorbell", n == (ssize_t)sizeof(cmd) ? 0 : errno);
}

/* ---- scribbling --------------------------------------------------------- */

/*
 * A random value at a random 4-byte place of a ring.  Not into CQE slots:
 * we poll those, and what the kernel wrote there must be valid (the
 * counters and flags of a CQ are fair game).
 */
static void scribble(struct rng *r, struct tbrdma_queue *q, bool cq)
{
	uint32_t *w = q->map;
	uint32_t idx, v;

	if (!w)
		return;		/* a CQ whose resize could not be mapped */
	switch (rnd(r, cq ? 4 : 8)) {
	case 0:	/* producer */
	case 1:	/* consumer */
		idx = rnd(r, 2) * 16;
		switch (rnd(r, 6)) {
		case 0: v = q->index + 1; break;
		case 1: v = q->index - 1; break;
		case 2: v = q->index + q->num_slots; break;
		case 3: v = q->index + q->num_slots + 1; break;
		case 4: v = q->index + 0x80000000U; break;
		default: v = rnd_u32(r);
		}
		break;
	case 2:	/* flags */
		idx = 32;
		v = rnd(r, 2) ? rnd(r, 4) : rnd_u32(r);
		break;
	case 3:	/* the header's reserved words */
		idx = rnd(r, 64);
		v = rnd_u32(r);
		break;
	default: /* a slot: header fields most often */
		idx = (uint32_t)(TBRDMA_QUEUE_SLOTS_OFFSET +
				 (size_t)rnd(r, q->num_slots) * q->slot_size) / 4 +
		      (rnd(r, 2) ? rnd(r, 16) : rnd(r, q->slot_size / 4));
		v = rnd_u32(r);
	}
	if ((size_t)idx * 4 + 4 <= q->map_size)
		__atomic_store_n(&w[idx], v, __ATOMIC_RELAXED);
}

/* Mutate 1-3 fields of a plausible send WQE. */
static void mutate_send(struct ring_state *s, struct tbrdma_send_wqe *wqe,
			struct tbrdma_sge *sge, uint32_t max_sge)
{
	struct rng *r = &s->r;
	int n = 1 + rnd(r, 3);

	for (int i = 0; i < n; i++) {
		switch (rnd(r, 14)) {
		case 0: wqe->opcode = rnd(r, 2) ? rnd(r, 16) : rnd_u32(r); break;
		case 1: wqe->send_flags = rnd(r, 2) ? rnd(r, 16) : rnd_u32(r); break;
		case 2: wqe->num_sge = rnd_count(r, max_sge + 2); break;
		case 3: wqe->send_flags |= TBRDMA_WQE_INLINE;
			wqe->inline_len = rnd(r, 2) ? rnd(r, 1024) : rnd_u32(r);
			break;
		case 4: sge[rnd(r, max_sge)].length = rnd_u32(r); break;
		case 5: sge[rnd(r, max_sge)].lkey = rnd_u32(r); break;
		case 6: sge[rnd(r, max_sge)].addr = rnd_u64(r); break;
		case 7: sge[rnd(r, max_sge)].addr += rnd(r, 2) ? ARENA - 8 : 4095; break;
		case 8: wqe->wr.rdma.rkey = rnd_u32(r); break;
		case 9: wqe->wr.rdma.remote_addr = rnd(r, 2) ? rnd_u64(r) :
				(uintptr_t)s->arena + ARENA - rnd(r, 16); break;
		case 10: wqe->wr.ud.ah = rnd(r, 2) ? rnd(r, 8) : rnd_u32(r); break;
		case 11: wqe->wr.ud.remote_qpn = rnd(r, 2) ? rnd(r, 64) : rnd_u32(r); break;
		case 12: wqe->wr.atomic.remote_addr |= 1 + rnd(r, 7); break;
		default: wqe->wr.atomic.rkey = rnd_u32(r);
		}
	}
}

/* Publish a mutated WQE behind the provider's back (and keep the
 * provider's counter in step, as an application that writes WQEs itself
 * would), then ring.  Returns the queue written. */
static void inject(struct ring_state *s)
{
	struct round *rd = &s->rd;
	struct rng *r = &s->r;
	struct ibv_qp *qps[] = { rd->a, rd->b, rd->u };
	uint32_t qi[] = { Q_ASQ, Q_BSQ, Q_USQ };
	int pick = (int)rnd(r, 5);

	if (pick < 3) {
		struct tbrdma_wq *wq = &to_tqp(qps[pick])->sq;
		struct tbrdma_queue *q = rd->q[qi[pick]];
		uint8_t slot[64 + 32 * sizeof(struct tbrdma_sge)];
		struct tbrdma_send_wqe *wqe = (void *)slot;
		struct tbrdma_sge *sge = (void *)(wqe + 1);
		uint32_t max_sge = (q->slot_size - sizeof(*wqe)) / sizeof(*sge);
		uint32_t cons = __atomic_load_n(&q->hdr->consumer, __ATOMIC_ACQUIRE);

		if (q->slot_size > sizeof(slot) || max_sge == 0)
			return;
		if (q->index - cons >= q->num_slots)
			return;		/* full (or scribbled): the next step */
		memset(slot, 0, q->slot_size);
		for (uint32_t i = 0; i < max_sge; i++) {
			struct ibv_sge g = arena_sge(s, 2048);

			sge[i] = (struct tbrdma_sge){ g.addr, g.length, g.lkey };
		}
		wqe->wr_id = fuzz_wr_id(r);
		wqe->opcode = pick == 2 ? IBV_WR_SEND : rnd(r, 7);
		wqe->send_flags = TBRDMA_WQE_SIGNALED;
		wqe->num_sge = 1 + rnd(r, max_sge);
		if (pick == 2) {
			wqe->wr.ud.ah = to_tah(rd->ah)->ah_handle;
			wqe->wr.ud.remote_qpn = rd->w->qp_num;
			wqe->wr.ud.remote_qkey = 0x11111111;
		} else if (wqe->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			   wqe->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wqe->wr.atomic.remote_addr = (uintptr_t)s->arena;
			wqe->wr.atomic.rkey = rd->mr->rkey;
			sge[0].length = 8;
		} else {
			wqe->wr.rdma.remote_addr = (uintptr_t)s->arena;
			wqe->wr.rdma.rkey = rd->mr->rkey;
		}
		mutate_send(s, wqe, sge, max_sge);
		pthread_spin_lock(&wq->lock);
		memcpy(tbrdma_q_slot(q, q->index), slot, q->slot_size);
		q->index++;
		__atomic_store_n(&q->hdr->producer, q->index, __ATOMIC_RELEASE);
		pthread_spin_unlock(&wq->lock);
		F.scribbles++;
		doorbell(qps[pick], false);
	} else {
		/* A receive WQE with a bad SGE list, consumed by the next
		 * message that arrives. */
		struct tbrdma_wq *wq = pick == 3 ? &to_tsrq(rd->srq)->rq :
						   &to_tqp(rd->a)->rq;
		struct tbrdma_queue *q = &wq->q;
		uint8_t slot[16 + 32 * sizeof(struct tbrdma_sge)];
		struct tbrdma_recv_wqe *wqe = (void *)slot;
		struct tbrdma_sge *sge = (void *)(wqe + 1);
		uint32_t max_sge = (q->slot_size - sizeof(*wqe)) / sizeof(*sge);
		uint32_t cons = __atomic_load_n(&q->hdr->consumer, __ATOMIC_ACQUIRE);

		if (q->slot_size > sizeof(slot) || q->index - cons >= q->num_slots)
			return;
		memset(slot, 0, q->slot_size);
		for (uint32_t i = 0; i < max_sge; i++) {
			struct ibv_sge g = arena_sge(s, 2048);

			sge[i] = (struct tbrdma_sge){ g.addr, g.length, g.lkey };
		}
		wqe->wr_id = fuzz_wr_id(r);
		wqe->num_sge = rnd(r, 2) ? rnd_count(r, max_sge + 2) : max_sge;
		if (max_sge && rnd(r, 2)) {
			uint32_t i = rnd(r, max_sge);

			switch (rnd(r, 3)) {
			case 0: sge[i].lkey = rnd_u32(r); break;
			case 1: sge[i].length = rnd_u32(r); break;
			default: sge[i].addr = rnd_u64(r);
			}
		}
		pthread_spin_lock(&wq->lock);
		memcpy(tbrdma_q_slot(q, q->index), slot, q->slot_size);
		q->index++;
		__atomic_store_n(&q->hdr->producer, q->index, __ATOMIC_RELEASE);
		pthread_spin_unlock(&wq->lock);
		F.scribbles++;
	}
}

static void state_change(struct ring_state *s)
{
	struct round *rd = &s->rd;
	struct ibv_qp *qp = rnd(&s->r, 2) ? rd->a : rd->b;
	struct ibv_qp *peer = qp == rd->a ? rd->b : rd->a;
	int ret;

	switch (rnd(&s->r, 4)) {
	case 0:
		ret = qp_to_state(qp, IBV_QPS_ERR);
		break;
	case 1:
		ret = qp_to_state(qp, IBV_QPS_SQD);
		break;
	case 2:		/* flush receives of a QP in error */
		doorbell(qp, true);
		return;
	default:	/* back from whatever state, counters and all */
		ret = qp_to_state(qp, IBV_QPS_RESET);
		if (!ret)
			ret = qp_connect(qp, &F.v, peer->qp_num, &s->c);
	}
	fuzz_ret("ring state change", ret);
}

/* ---- the racer ---------------------------------------------------------- */

static void *racer(void *arg)
{
	struct ring_state *s = arg;
	struct rng r = { s->racer_seed };
	uint64_t n = 0;

	while (!atomic_load(&s->stop)) {
		pthread_mutex_lock(&s->lock);
		if (s->rd.a) {
			for (int i = 0; i < 32; i++) {
				uint32_t k = rnd(&r, NQUEUE);

				scribble(&r, s->rd.q[k], k >= Q_CQA);
			}
			n += 32;
		}
		pthread_mutex_unlock(&s->lock);
		sched_yield();
	}
	atomic_store(&s->racer_writes, n);
	return NULL;
}

int fuzz_ring(uint64_t seed, uint64_t iters, bool with_racer)
{
	struct ring_state *s = calloc(1, sizeof(*s));
	pthread_t th;
	bool checked = false;

	if (!s)
		return -1;
	s->r.s = seed;
	s->racer_seed = rnd64(&s->r);
	conn_defaults(&s->c, &F.v);
	s->c.rnr_retry = 3;	/* an RNR loop must end */
	s->c.timeout = 10;
	s->arena = mmap(NULL, ARENA + 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->arena == MAP_FAILED ||
	    mprotect(s->arena + ARENA, 4096, PROT_NONE)) {
		free(s);
		return -1;
	}
	pthread_mutex_init(&s->lock, NULL);
	if (with_racer && pthread_create(&th, NULL, racer, s)) {
		fuzz_fail("ring: cannot start the racer");
		with_racer = false;
	}

	for (s->iter = 0; s->iter < iters; s->iter++) {
		uint32_t w;

		if (s->iter % STEPS_PER_ROUND == 0) {
			fuzz_note("ring", s->iter, "new round");
			pthread_mutex_lock(&s->lock);
			teardown(s);
			if (setup(s)) {
				pthread_mutex_unlock(&s->lock);
				break;
			}
			pthread_mutex_unlock(&s->lock);
			if (!checked) {
				check_maps(s);
				checked = true;
			}
		}
		F.iters++;
		w = rnd(&s->r, 100);
		fuzz_note("ring", s->iter, "step");
		if (w < 22) {
			post_sends(s);
		} else if (w < 34) {
			post_recvs(s);
		} else if (w < 50) {
			poll_all(s);
		} else if (w < 72) {
			uint32_t k = rnd(&s->r, NQUEUE);

			scribble(&s->r, s->rd.q[k], k >= Q_CQA);
			F.scribbles++;
			F.ok_ret++;
		} else if (w < 86) {
			inject(s);
		} else if (w < 91) {
			struct ibv_qp *qps[] = { s->rd.a, s->rd.b, s->rd.u,
						 s->rd.w };

			doorbell(qps[rnd(&s->r, 4)], false);
		} else if (w < 95) {
			state_change(s);
		} else if (w < 98) {
			fuzz_ret("ring req_notify",
				 ibv_req_notify_cq(rnd(&s->r, 2) ? s->rd.cqa :
								   s->rd.cqb,
						   rnd(&s->r, 2)));
		} else {
			/* Resize unmaps the old ring: not under the racer. */
			pthread_mutex_lock(&s->lock);
			fuzz_ret("ring resize_cq",
				 ibv_resize_cq(s->rd.cqa, 1 + rnd(&s->r, 256)));
			set_queues(&s->rd);
			pthread_mutex_unlock(&s->lock);
		}
		if ((s->iter & 15) == 0)
			fuzz_drain_async(F.v.ctx);
	}
	if (with_racer) {
		atomic_store(&s->stop, true);
		pthread_join(th, NULL);
		F.scribbles += atomic_load(&s->racer_writes);
		printf("# ring: the racer wrote %" PRIu64 " values\n",
		       (uint64_t)atomic_load(&s->racer_writes));
	}
	fuzz_note("ring", s->iter, "teardown");
	teardown(s);
	munmap(s->arena, ARENA + 4096);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return 0;
}
