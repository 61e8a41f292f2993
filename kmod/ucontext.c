// SPDX-License-Identifier: GPL-2.0-only
/*
 * User contexts: one per process that opens the device.  The response
 * tells the provider which ABI and mode it is talking to; mmap() on the
 * uverbs file maps the context's queues.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "tbrdma.h"

int tbr_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibuc->device);
	struct tbrdma_alloc_ucontext_resp resp = {
		.abi_version = TBRDMA_UVERBS_ABI_VERSION,
		.mode = tdev->mode,
	};

	return tbr_respond(udata, &resp, sizeof(resp));
}

/* Required by uverbs to offer contexts at all; queues are freed with their objects. */
void tbr_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Map one queue.  The offset names an mmap entry of this context, and the
 * core has checked that the length is the entry's; mapping inserts the
 * pages with their own references, so they outlive a destroyed object
 * until the process unmaps them.
 */
int tbr_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rentry;
	struct tbr_mmap_entry *entry;
	int err;

	rentry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rentry)
		return -EINVAL;
	entry = container_of(rentry, struct tbr_mmap_entry, rdma);
	err = remap_vmalloc_range(vma, entry->buf, 0);
	rdma_user_mmap_entry_put(rentry);
	return err;
}

void tbr_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	struct tbr_mmap_entry *entry = container_of(rentry,
						    struct tbr_mmap_entry, rdma);

	vfree(entry->buf);
	kfree(entry);
}
