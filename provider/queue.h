/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The shared rings (uapi/tbrdma-abi.h, "Shared queues") as user space sees
 * them: one mapping per queue, free-running 32-bit producer/consumer
 * counters, power-of-two slot counts.
 *
 * Everything here except tbrdma_queue_map/unmap (queue.c) is a pure inline
 * function of its arguments, so tests/unit/test_queue.c can check the
 * index math on the host without a kernel or libibverbs.
 */
#ifndef TBRDMA_QUEUE_H
#define TBRDMA_QUEUE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../uapi/tbrdma-abi.h"

/*
 * One mapped queue.  index is our own counter, the only copy we trust:
 * the producer of an SQ/RQ/SRQ, the consumer of a CQ.  We publish it to
 * the header but never read it back, because anything in the shared page
 * can be overwritten by a buggy application.
 */
struct tbrdma_queue {
	void *map;			/* NULL: no queue (or not mapped) */
	size_t map_size;
	struct tbrdma_queue_hdr *hdr;	/* == map */
	uint32_t num_slots;		/* power of two, >= 1 */
	uint32_t slot_size;
	uint32_t index;			/* our counter, see above */
};

/* Which counter of the header is ours. */
enum tbrdma_queue_side {
	TBRDMA_QUEUE_PRODUCER,		/* SQ, RQ, SRQ */
	TBRDMA_QUEUE_CONSUMER,		/* CQ */
};

/* ---- index math -------------------------------------------------------- */

/* Entries between consumer and producer; correct across the 2^32 wrap. */
static inline uint32_t tbrdma_q_used(uint32_t producer, uint32_t consumer)
{
	return producer - consumer;
}

/* Whether the counters describe a possible fill level at all. */
static inline bool tbrdma_q_sane(uint32_t producer, uint32_t consumer,
				 uint32_t num_slots)
{
	return tbrdma_q_used(producer, consumer) <= num_slots;
}

/*
 * Slots the producer may still fill.  A consumer value that claims more
 * than num_slots entries are in flight (a corrupted counter, e.g. a
 * consumer "ahead" of the producer) counts as full: we must never
 * overwrite a slot the other side may not have consumed.
 */
static inline uint32_t tbrdma_q_free(uint32_t producer, uint32_t consumer,
				     uint32_t num_slots)
{
	uint32_t used = tbrdma_q_used(producer, consumer);

	return used > num_slots ? 0 : num_slots - used;
}

/* Entries the consumer may read; 0 when the counters are insane (the
 * caller checks tbrdma_q_sane() to tell that apart from "empty"). */
static inline uint32_t tbrdma_q_ready(uint32_t producer, uint32_t consumer,
				      uint32_t num_slots)
{
	uint32_t used = tbrdma_q_used(producer, consumer);

	return used > num_slots ? 0 : used;
}

/* Byte offset of the slot counter 'index' lands in, from the mapping start. */
static inline size_t tbrdma_q_slot_offset(uint32_t index, uint32_t num_slots,
					  uint32_t slot_size)
{
	return TBRDMA_QUEUE_SLOTS_OFFSET +
	       (size_t)(index & (num_slots - 1)) * slot_size;
}

static inline void *tbrdma_q_slot(const struct tbrdma_queue *q, uint32_t index)
{
	return (uint8_t *)q->map +
	       tbrdma_q_slot_offset(index, q->num_slots, q->slot_size);
}

/* ---- what the kernel told us ------------------------------------------- */

/* How many SGEs / inline bytes fit in one slot after the WQE header. */
static inline uint32_t tbrdma_send_slot_max_sge(uint32_t slot_size)
{
	if (slot_size < sizeof(struct tbrdma_send_wqe))
		return 0;
	return (slot_size - sizeof(struct tbrdma_send_wqe)) /
	       sizeof(struct tbrdma_sge);
}

static inline uint32_t tbrdma_send_slot_max_inline(uint32_t slot_size)
{
	if (slot_size < sizeof(struct tbrdma_send_wqe))
		return 0;
	return slot_size - sizeof(struct tbrdma_send_wqe);
}

static inline uint32_t tbrdma_recv_slot_max_sge(uint32_t slot_size)
{
	if (slot_size < sizeof(struct tbrdma_recv_wqe))
		return 0;
	return (slot_size - sizeof(struct tbrdma_recv_wqe)) /
	       sizeof(struct tbrdma_sge);
}

/*
 * Check a struct tbrdma_queue_info before mapping it: a power-of-two slot
 * count, slots big enough for min_slot_size and 8-byte aligned (the WQE
 * and CQE structs hold 64-bit fields), and a mapping that really holds
 * header + all slots.  Returns 0 or EPROTO (the kernel broke the ABI).
 */
static inline int tbrdma_queue_info_check(const struct tbrdma_queue_info *info,
					  uint32_t min_slot_size)
{
	uint64_t need;

	if (info->num_slots == 0 ||
	    (info->num_slots & (info->num_slots - 1)) != 0)
		return EPROTO;
	if (info->slot_size < min_slot_size || info->slot_size % 8 != 0)
		return EPROTO;
	/* Both factors are 32-bit: the product cannot overflow 64 bits. */
	need = TBRDMA_QUEUE_SLOTS_OFFSET +
	       (uint64_t)info->num_slots * info->slot_size;
	if (info->mmap_size < need)
		return EPROTO;
	return 0;
}

/* ---- the shared counters ----------------------------------------------- */

/*
 * The header fields are plain __u32 in shared memory; the GCC __atomic
 * builtins give them the orderings the ABI prescribes without casting to
 * _Atomic types.  Acquire on the other side's counter before reading (CQ)
 * or reusing (WQ) slots; release on ours after writing (WQ) or reading
 * (CQ) them.
 */
static inline uint32_t tbrdma_q_load_acquire(const uint32_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_ACQUIRE);
}

static inline void tbrdma_q_store_release(uint32_t *counter, uint32_t value)
{
	__atomic_store_n(counter, value, __ATOMIC_RELEASE);
}

/* ---- queue.c ------------------------------------------------------------ */

/*
 * Validate info (min_slot_size as for tbrdma_queue_info_check) and mmap
 * the queue from the uverbs file.  index starts at the header's counter of
 * our side, so the kernel may start a ring at any counter value.
 * Returns 0 or an errno; q is left unmapped (map == NULL) on failure.
 */
int tbrdma_queue_map(struct tbrdma_queue *q, int cmd_fd,
		     const struct tbrdma_queue_info *info,
		     uint32_t min_slot_size, enum tbrdma_queue_side side);
/* Unmaps when mapped; safe on an unmapped queue. */
void tbrdma_queue_unmap(struct tbrdma_queue *q);

#endif /* TBRDMA_QUEUE_H */
