// SPDX-License-Identifier: GPL-2.0-only
/*
 * Allocation of shared queues and their mmap entries.  The memory of a user
 * queue belongs to its mmap entry: it is freed only when the object is gone
 * AND user space has unmapped it (tbr_mmap_free), so a process can never
 * see a ring that the kernel reuses.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "tbrdma.h"

static int tbr_queue_map(struct tbr_queue *q, struct ib_udata *udata,
			 size_t size)
{
	struct tbr_ucontext *uctx = rdma_udata_to_drv_context(udata,
					struct tbr_ucontext, ibuc);
	struct tbr_mmap_entry *entry;
	int err;

	if (!uctx)
		return -EINVAL;
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->buf = q->buf;
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &entry->rdma, size);
	if (err) {
		kfree(entry);
		return err;
	}
	q->mmap = entry;
	return 0;
}

/*
 * A queue of at least @min_slots slots of @slot_size bytes.  With @udata it
 * is a user queue: zeroed, page-aligned memory with an mmap entry.
 */
int tbr_queue_alloc(struct tbr_queue *q, struct ib_device *ibdev,
		    struct ib_udata *udata, u32 min_slots, u32 slot_size)
{
	size_t size;
	int err;

	memset(q, 0, sizeof(*q));
	q->num_slots = roundup_pow_of_two(max(min_slots, 1U));
	q->slot_size = slot_size;
	size = TBRDMA_QUEUE_SLOTS_OFFSET + (size_t)q->num_slots * slot_size;

	if (udata) {
		size = PAGE_ALIGN(size);
		q->buf = vmalloc_user(size);
	} else {
		q->buf = vzalloc(size);
	}
	if (!q->buf)
		return -ENOMEM;
	q->hdr = q->buf;

	if (udata) {
		err = tbr_queue_map(q, udata, size);
		if (err) {
			vfree(q->buf);
			q->buf = NULL;
			return err;
		}
	}
	return 0;
}

/* The caller has made sure nothing in the kernel touches the queue any more. */
void tbr_queue_free(struct tbr_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(&q->mmap->rdma);	/* frees buf later */
	else
		vfree(q->buf);
	q->buf = NULL;
	q->hdr = NULL;
	q->mmap = NULL;
}

void tbr_queue_info(const struct tbr_queue *q, struct tbrdma_queue_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!q->buf)
		return;
	info->mmap_offset = q->mmap ? rdma_user_mmap_get_offset(&q->mmap->rdma) : 0;
	info->mmap_size = q->mmap ? q->mmap->rdma.npages << PAGE_SHIFT : 0;
	info->num_slots = q->num_slots;
	info->slot_size = q->slot_size;
}
