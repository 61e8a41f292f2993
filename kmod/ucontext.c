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
 * The device is going away (netdev deleted, `rdma link delete`, rmmod)
 * while a process still has it open.  Offering this op lets the core
 * unregister at once instead of waiting for every such process to exit:
 * it destroys the context's objects through the usual destroy ops, reports
 * IB_EVENT_DEVICE_FATAL, calls this, and fails the process's later calls
 * with EIO.  By then its QPs have flushed their queues (removal.c).
 * Nothing is left to do here: the queue pages the process still has
 * mapped carry their own page references (tbr_mmap), so they stay valid
 * memory the device no longer touches, and no VMA needs zapping.
 */
void tbr_disassociate_ucontext(struct ib_ucontext *ibuc)
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
