// SPDX-License-Identifier: GPL-2.0-only
/*
 * User contexts: one per process that opens the device.  The response
 * tells the provider which ABI and mode it is talking to, and carries the
 * doorbell file it asked for (doorbell.c); mmap() on the uverbs file maps
 * the context's queues.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "tbrdma.h"

/* The request is optional; what it asks for must be known. */
static int tbr_ucontext_req(struct ib_udata *udata,
			    struct tbrdma_alloc_ucontext_req *req)
{
	size_t len = min(udata->inlen, sizeof(*req));

	memset(req, 0, sizeof(*req));
	if (len && ib_copy_from_udata(req, udata, len))
		return -EFAULT;
	if (udata->inlen > sizeof(*req) &&
	    !ib_is_udata_cleared(udata, sizeof(*req),
				 udata->inlen - sizeof(*req)))
		return -EOPNOTSUPP;
	if (req->flags & ~TBRDMA_UCTX_DOORBELL_FD || req->reserved)
		return -EOPNOTSUPP;
	return 0;
}

int tbr_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct tbr_ucontext *uctx = container_of(ibuc, struct tbr_ucontext,
						 ibuc);
	struct tbr_dev *tdev = to_tdev(ibuc->device);
	struct tbrdma_alloc_ucontext_resp resp = {
		.abi_version = TBRDMA_UVERBS_ABI_VERSION,
		.mode = tdev->mode,
		.doorbell_fd = -1,
	};
	struct tbrdma_alloc_ucontext_req req;
	struct file *doorbell = NULL;
	int err;

	err = tbr_ucontext_req(udata, &req);
	if (err)
		return err;
	/*
	 * Only for a caller that can learn the descriptor.  Without one
	 * (no descriptor left, say) the provider rings through uverbs.
	 */
	if ((req.flags & TBRDMA_UCTX_DOORBELL_FD) &&
	    udata->outlen >= offsetofend(typeof(resp), doorbell_fd)) {
		doorbell = tbr_doorbell_create(uctx, &resp.doorbell_fd);
		if (doorbell)
			resp.flags |= TBRDMA_UCTX_DOORBELL_FD;
	}

	err = tbr_respond(udata, &resp, sizeof(resp));
	if (err) {
		if (doorbell)
			tbr_doorbell_discard(uctx, doorbell, resp.doorbell_fd);
		return err;
	}
	/* Nothing fails after this: the core always keeps the context. */
	if (doorbell)
		tbr_doorbell_install(doorbell, resp.doorbell_fd);
	return 0;
}

/* Queues are freed with their objects; only the doorbell is left. */
void tbr_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	tbr_doorbell_detach(container_of(ibuc, struct tbr_ucontext, ibuc));
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
