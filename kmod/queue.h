/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared queues: the rings of WQEs and CQEs laid out as uapi/tbrdma-abi.h
 * describes.  User queues live in vmalloc memory that user space maps; the
 * queues of kernel consumers have the same layout in kernel memory, so the
 * send engine and the CQ code never care who is on the other side.
 *
 * The kernel keeps its own counter (kidx) privately and only publishes it;
 * it never trusts the other side's counter beyond checking it.
 */
#ifndef TBRDMA_QUEUE_H
#define TBRDMA_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "../uapi/tbrdma-abi.h"

struct tbr_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;		/* freed by tbr_mmap_free() once unmapped */
};

struct tbr_queue {
	void *buf;		/* header, then the slots */
	struct tbrdma_queue_hdr *hdr;
	u32 num_slots;		/* a power of two */
	u32 slot_size;
	u32 kidx;		/* the kernel's counter: consumer of WQEs, producer of CQEs */
	struct tbr_mmap_entry *mmap;	/* user queues only */
};

int tbr_queue_alloc(struct tbr_queue *q, struct ib_device *ibdev,
		    struct ib_udata *udata, u32 min_slots, u32 slot_size);
void tbr_queue_free(struct tbr_queue *q);
void tbr_queue_info(const struct tbr_queue *q, struct tbrdma_queue_info *info);

static inline void *tbr_queue_slot(const struct tbr_queue *q, u32 idx)
{
	return q->buf + TBRDMA_QUEUE_SLOTS_OFFSET +
	       (size_t)(idx & (q->num_slots - 1)) * q->slot_size;
}

/*
 * Kernel as consumer (SQ, RQ, SRQ): how many entries the producer published
 * that we have not taken, or -EIO when its counter is impossible.  Acquire:
 * the slots it filled are visible once we see the counter.
 */
static inline int tbr_queue_ready(const struct tbr_queue *q)
{
	/* Pairs with the producer's release of its counter. */
	u32 n = smp_load_acquire(&q->hdr->producer) - q->kidx;

	return n > q->num_slots ? -EIO : n;
}

/* Release: we are done reading the slot before the producer may reuse it. */
static inline void tbr_queue_consume(struct tbr_queue *q)
{
	q->kidx++;
	/* Pairs with the producer's acquire before it reuses the slot. */
	smp_store_release(&q->hdr->consumer, q->kidx);
}

/* RESET: drop every published entry without looking at it. */
static inline void tbr_queue_discard(struct tbr_queue *q)
{
	int ready = tbr_queue_ready(q);

	if (ready > 0)
		q->kidx += ready;
	/* As in tbr_queue_consume(). */
	smp_store_release(&q->hdr->consumer, q->kidx);
}

/* Kernel as producer (CQ): free slots, or -EIO when the consumer's counter is impossible. */
static inline int tbr_queue_space(const struct tbr_queue *q)
{
	/* Pairs with the consumer's release: it is done with those slots. */
	u32 used = q->kidx - smp_load_acquire(&q->hdr->consumer);

	return used > q->num_slots ? -EIO : q->num_slots - used;
}

static inline void tbr_queue_produce(struct tbr_queue *q)
{
	q->kidx++;
	/* The CQE is written before the consumer can see the counter. */
	smp_store_release(&q->hdr->producer, q->kidx);
}

/*
 * The other side of a kernel consumer's queue, played by our own post and
 * poll code: the same counters, but here both sides are trusted.
 */
static inline bool tbr_kqueue_full(const struct tbr_queue *q)
{
	return q->hdr->producer - READ_ONCE(q->hdr->consumer) >= q->num_slots;
}

static inline void *tbr_kqueue_next_slot(const struct tbr_queue *q)
{
	return tbr_queue_slot(q, q->hdr->producer);
}

static inline void tbr_kqueue_publish(struct tbr_queue *q)
{
	/* The WQE is written before the kernel consumer sees the counter. */
	smp_store_release(&q->hdr->producer, q->hdr->producer + 1);
}

#endif /* TBRDMA_QUEUE_H */
