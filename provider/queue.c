// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mapping the shared rings.  The index math lives in queue.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "queue.h"

int tbrdma_queue_map(struct tbrdma_queue *q, int cmd_fd,
		     const struct tbrdma_queue_info *info,
		     uint32_t min_slot_size, enum tbrdma_queue_side side)
{
	void *map;
	int ret;

	memset(q, 0, sizeof(*q));
	ret = tbrdma_queue_info_check(info, min_slot_size);
	if (ret)
		return ret;

	/* mmap() takes off_t; an offset that does not fit is not ours. */
	if (info->mmap_offset > (uint64_t)INT64_MAX)
		return EPROTO;
	map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   cmd_fd, (off_t)info->mmap_offset);
	if (map == MAP_FAILED)
		return errno;

	q->map = map;
	q->map_size = info->mmap_size;
	q->hdr = map;
	q->num_slots = info->num_slots;
	q->slot_size = info->slot_size;
	/* The kernel set up the header before answering the command. */
	q->index = tbrdma_q_load_acquire(side == TBRDMA_QUEUE_PRODUCER ?
						 &q->hdr->producer :
						 &q->hdr->consumer);
	return 0;
}

void tbrdma_queue_unmap(struct tbrdma_queue *q)
{
	if (q->map)
		munmap(q->map, q->map_size);
	memset(q, 0, sizeof(*q));
}
