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
#include <time.h>

#include "wqe.h"

/*
 * Busy pollers (ggml's RPC transport, MPI, UCX) call ibv_poll_cq in a loop
 * on an empty CQ, and taking the spin lock for each look cost as much as
 * the look itself (an atomic read-modify-write and a store; far more than
 * that under QEMU's TCG).  So an empty CQ is recognised without the lock:
 * the producer counter the kernel publishes equals the consumer index we
 * last published.  Why that is safe:
 *  - The kernel stores the producer with release semantics after writing
 *    the CQEs below it, and we load it with acquire; but we read no CQE
 *    here: an answer of "not empty" always goes on under the lock, which
 *    reads the producer again.  The only answer given without the lock
 *    is "empty", and it returns nothing.
 *  - peek_index is a copy of q.index stored under the lock after each
 *    batch; another poller may have moved on since, so the copy can only
 *    lag.  The consumer never passes the producer, so a lagging copy
 *    equal to the producer means the real index equals it too: empty.
 *    (A lagging copy that is not equal sends us to the lock: correct,
 *    just slower.)
 *  - A resize replaces the ring: it clears peek_hdr first and publishes
 *    the new header, after the new index, with release semantics at the
 *    end.  The header pointer is read again after the producer: if it
 *    changed, the index may belong to the other ring, and we take the
 *    lock.  The old ring stays mapped until destroy_cq (retired), so a
 *    poller still reading it never faults, and the new mapping has
 *    another address, so "unchanged" means the same ring.
 */
static bool cq_peek_empty(struct tbrdma_cq *cq)
{
	struct tbrdma_queue_hdr *hdr = __atomic_load_n(&cq->peek_hdr,
						       __ATOMIC_ACQUIRE);
	uint32_t index, producer;

	if (!hdr)
		return false;
	index = __atomic_load_n(&cq->peek_index, __ATOMIC_ACQUIRE);
	producer = tbrdma_q_load_acquire(&hdr->producer);
	return producer == index &&
	       __atomic_load_n(&cq->peek_hdr, __ATOMIC_RELAXED) == hdr;
}

/* Under the lock, after q.index moved or the ring changed. */
static void cq_peek_publish(struct tbrdma_cq *cq)
{
	__atomic_store_n(&cq->peek_index, cq->q.index, __ATOMIC_RELAXED);
	__atomic_store_n(&cq->peek_hdr, cq->q.map ? cq->q.hdr : NULL,
			 __ATOMIC_RELEASE);
}

static struct tbrdma_cq *create_cq_common(struct ibv_context *context,
					  int cqe,
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
	cq_peek_publish(cq);
	return cq;

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

struct ibv_cq *tbrdma_create_cq(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel,
				int comp_vector)
{
	struct tbrdma_cq *cq = create_cq_common(context, cqe, channel,
						comp_vector);

	return cq ? &cq->ibv_cq : NULL;
}

/* ---- extended CQs (ibv_create_cq_ex, ibv_start_poll/next_poll/end_poll) */

/*
 * The same ring as ibv_poll_cq.  start_poll takes the lock and leaves the
 * first CQE in cq->cur without consuming its slot; next_poll consumes it
 * and moves to the next; end_poll consumes the last one, publishes the
 * consumer and drops the lock.  (An error or ENOENT from start_poll
 * returns with the lock dropped: the caller must not call end_poll.)
 */
#define TBRDMA_CQ_EX_WC_FLAGS                                                 \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |                       \
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |                      \
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |                             \
	 IBV_WC_EX_WITH_DLID_PATH_BITS |                                     \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |                               \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

#define TBRDMA_CQ_EX_TIMESTAMPS                                               \
	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |                                \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

static inline struct tbrdma_cq *to_tcq_ex(struct ibv_cq_ex *x)
{
	return tbrdma_container_of(x, struct tbrdma_cq, ibv_cq_ex);
}

/* Load the CQE at q->index into cq->cur: 0, ENOENT when there is none. */
static int cq_ex_load(struct tbrdma_cq *cq)
{
	struct tbrdma_queue *q = &cq->q;
	const struct tbrdma_cqe *cqe;
	uint32_t producer;

	cq->cur_valid = false;
	if (!q->map)
		return EIO;
	/* Acquire: the CQEs below the producer are completely written. */
	producer = tbrdma_q_load_acquire(&q->hdr->producer);
	if (!tbrdma_q_sane(producer, q->index, q->num_slots))
		return EIO;	/* a kernel bug: never return stale slots */
	if (!tbrdma_q_ready(producer, q->index, q->num_slots))
		return ENOENT;
	cqe = tbrdma_q_slot(q, q->index);
	tbrdma_cqe_to_wc(cqe, &cq->cur);
	cq->cur_ns = cqe->completion_ns;
	cq->cur_valid = true;
	cq->ibv_cq_ex.wr_id = cq->cur.wr_id;
	cq->ibv_cq_ex.status = cq->cur.status;
	return 0;
}

static void cq_ex_publish(struct tbrdma_cq *cq)
{
	/* Release: we are done reading these slots; the kernel may reuse
	 * them. */
	if (cq->q.map) {
		tbrdma_q_store_release(&cq->q.hdr->consumer, cq->q.index);
		__atomic_store_n(&cq->peek_index, cq->q.index,
				 __ATOMIC_RELAXED);
	}
}

static uint64_t timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/*
 * The kernel stamps CQEs with CLOCK_MONOTONIC, which never jumps; the wall
 * clock is that plus the current distance between the two clocks.
 */
static int64_t wallclock_offset_ns(void)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return (int64_t)(timespec_ns(&real) - timespec_ns(&mono));
}

static int cq_ex_start_poll(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
	struct tbrdma_cq *cq = to_tcq_ex(x);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	if (cq_peek_empty(cq))
		return ENOENT;	/* without the lock: see cq_peek_empty() */
	if (cq->wants_wallclock)
		cq->wallclock_offset_ns = wallclock_offset_ns();
	pthread_spin_lock(&cq->lock);
	ret = cq_ex_load(cq);
	if (ret)
		pthread_spin_unlock(&cq->lock);
	return ret;
}

static int cq_ex_next_poll(struct ibv_cq_ex *x)
{
	struct tbrdma_cq *cq = to_tcq_ex(x);

	if (cq->cur_valid)
		cq->q.index++;
	return cq_ex_load(cq);
}

static void cq_ex_end_poll(struct ibv_cq_ex *x)
{
	struct tbrdma_cq *cq = to_tcq_ex(x);

	if (cq->cur_valid)
		cq->q.index++;
	cq->cur_valid = false;
	cq_ex_publish(cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode cq_ex_read_opcode(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.opcode;
}

static uint32_t cq_ex_read_vendor_err(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.vendor_err;
}

static unsigned int cq_ex_read_wc_flags(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.wc_flags;
}

static uint32_t cq_ex_read_byte_len(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.byte_len;
}

static __be32 cq_ex_read_imm_data(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.imm_data;
}

static uint32_t cq_ex_read_qp_num(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.qp_num;
}

static uint32_t cq_ex_read_src_qp(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.src_qp;
}

static uint32_t cq_ex_read_slid(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.slid;
}

static uint8_t cq_ex_read_sl(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.sl;
}

/* In "core clock" ticks: 1 GHz (hca_core_clock), so nanoseconds. */
static uint64_t cq_ex_read_completion_ts(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur_ns;
}

static uint64_t cq_ex_read_completion_wallclock_ns(struct ibv_cq_ex *x)
{
	struct tbrdma_cq *cq = to_tcq_ex(x);

	return cq->cur_ns + (uint64_t)cq->wallclock_offset_ns;
}

static uint8_t cq_ex_read_dlid_path_bits(struct ibv_cq_ex *x)
{
	return to_tcq_ex(x)->cur.dlid_path_bits;
}

/*
 * Completion timestamps need a module that writes them (it says so with a
 * completion_timestamp_mask); older ones left the field zero.
 */
static bool device_stamps_completions(struct ibv_context *context)
{
	struct tbrdma_context *ctx = to_tctx(context);
	struct ibv_device_attr_ex attr = {};
	int known = __atomic_load_n(&ctx->completion_stamps, __ATOMIC_RELAXED);

	if (!known) {
		/* A failed query is not an answer: ask again next time. */
		if (ibv_query_device_ex(context, NULL, &attr))
			return false;
		known = attr.completion_timestamp_mask ? 2 : 1;
		__atomic_store_n(&ctx->completion_stamps, known,
				 __ATOMIC_RELAXED);
	}
	return known == 2;
}

/* ibv_query_rt_values_ex: the clock completions are stamped with, in ns
 * (in tv_nsec, tv_sec 0: raw ticks, as other providers report them). */
int tbrdma_query_rt_values(struct ibv_context *context,
			   struct ibv_values_ex *values)
{
	struct timespec now;

	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (!device_stamps_completions(context))
		return EOPNOTSUPP;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)timespec_ns(&now);
	}
	return 0;
}

/*
 * wc_flags beyond these (CVLAN, flow tag, tag matching), a parent domain (IBV_CQ_INIT_ATTR_MASK_PD) and
 * IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN are not offered: EOPNOTSUPP, as
 * rdma-core's tests and man page expect.  SINGLE_THREADED is a hint we may
 * ignore (the CQ keeps its lock).
 */
struct ibv_cq_ex *tbrdma_create_cq_ex(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr)
{
	struct tbrdma_cq *cq;

	if ((attr->wc_flags & ~(uint64_t)TBRDMA_CQ_EX_WC_FLAGS) ||
	    (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->wc_flags & TBRDMA_CQ_EX_TIMESTAMPS) &&
	    !device_stamps_completions(context)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = create_cq_common(context, (int)attr->cqe, attr->channel,
			      (int)attr->comp_vector);
	if (!cq)
		return NULL;
	tbrdma_cq_ex_init(cq, attr->wc_flags);
	return &cq->ibv_cq_ex;
}

/* The poll and read functions of an extended CQ, for @wc_flags. */
void tbrdma_cq_ex_init(struct tbrdma_cq *cq, uint64_t wc_flags)
{
	struct ibv_cq_ex *x = &cq->ibv_cq_ex;

	cq->cur_valid = false;
	x->comp_mask = 0;
	x->start_poll = cq_ex_start_poll;
	x->next_poll = cq_ex_next_poll;
	x->end_poll = cq_ex_end_poll;
	x->read_opcode = cq_ex_read_opcode;
	x->read_vendor_err = cq_ex_read_vendor_err;
	x->read_wc_flags = cq_ex_read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		x->read_byte_len = cq_ex_read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		x->read_imm_data = cq_ex_read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		x->read_qp_num = cq_ex_read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		x->read_src_qp = cq_ex_read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		x->read_slid = cq_ex_read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		x->read_sl = cq_ex_read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x->read_dlid_path_bits = cq_ex_read_dlid_path_bits;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		x->read_completion_ts = cq_ex_read_completion_ts;
	if (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		x->read_completion_wallclock_ns =
			cq_ex_read_completion_wallclock_ns;
	cq->wants_wallclock =
		wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
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
	struct tbrdma_cq_retired *retired;
	struct ibv_resize_cq cmd = {};
	int ret;

	/* Where the old ring goes: it stays mapped (cq_peek_empty()). */
	retired = calloc(1, sizeof(*retired));
	if (!retired)
		return ENOMEM;
	pthread_spin_lock(&cq->lock);
	/* poll_cq already publishes after every batch; repeat it so the
	 * kernel's copy provably starts after what we consumed. */
	if (cq->q.map)
		tbrdma_q_store_release(&cq->q.hdr->consumer, cq->q.index);

	/* Lock-free pollers: to the lock until the new ring is in place. */
	__atomic_store_n(&cq->peek_hdr, NULL, __ATOMIC_RELAXED);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto out;

	/* The kernel now writes only to the new ring: the old one is out
	 * of use whatever happens (retired, unmapped at destroy_cq).  If
	 * the new one cannot be mapped the CQ stays unusable (poll fails)
	 * until a resize succeeds. */
	if (cq->q.map) {
		retired->q = cq->q;
		retired->next = cq->retired;
		cq->retired = retired;
		retired = NULL;
	}
	ret = tbrdma_queue_map(&cq->q, ibcq->context->cmd_fd, &resp.drv.cq,
			       sizeof(struct tbrdma_cqe), TBRDMA_QUEUE_CONSUMER);
out:
	cq_peek_publish(cq);
	pthread_spin_unlock(&cq->lock);
	free(retired);
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
	while (cq->retired) {
		struct tbrdma_cq_retired *r = cq->retired;

		cq->retired = r->next;
		tbrdma_queue_unmap(&r->q);
		free(r);
	}
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
	if (cq_peek_empty(cq))
		return 0;	/* without the lock: see cq_peek_empty() */

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
		__atomic_store_n(&cq->peek_index, q->index, __ATOMIC_RELAXED);
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
