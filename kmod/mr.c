// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory regions.  A key (lkey == rkey) is the MR's index in the device's
 * table shifted left by 8 plus that index's generation byte, bumped each
 * time the index is handed out: a key of a freed MR does not name whatever
 * reuses its index until the index has been reused 256 times (and indices
 * are handed out cyclically, so that is 256 * TBR_MAX_MR registrations).
 * Lookups take a reference; deregistration removes the key first (no new
 * lookup can succeed from then on) and then waits for the lookups in
 * flight, so a key is dead the moment dereg returns and pages are never
 * unpinned under a copy.
 */
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>

#include "tbrdma.h"

#define TBR_KEY_INDEX(key)	((key) >> 8)

static const int tbr_mr_access_mask = IB_ACCESS_LOCAL_WRITE |
	IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC;

static struct tbr_mr *tbr_mr_alloc(struct tbr_dev *tdev, struct tbr_pd *pd,
				   int access)
{
	struct tbr_mr *mr;
	u32 index;
	int err;

	/* The verbs spec: remote write or atomic access needs local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pdn = pd->pdn;
	mr->access = access & tbr_mr_access_mask;
	refcount_set(&mr->users, 1);
	init_completion(&mr->released);

	/* Index 0 is never used, so key 0 is always invalid. */
	err = xa_alloc_cyclic(&tdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, TBR_MAX_MR), &tdev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		kfree(mr);
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}
	/* The index is ours alone until erased: no other writer of its byte. */
	mr->ibmr.lkey = index << 8 | ++tdev->mr_gen[index];
	mr->ibmr.rkey = mr->ibmr.lkey;
	return mr;
}

/* Make the MR findable by its key; everything else must be set up. */
static void tbr_mr_publish(struct tbr_dev *tdev, struct tbr_mr *mr)
{
	xa_store(&tdev->mr_xa, TBR_KEY_INDEX(mr->ibmr.lkey), mr, GFP_KERNEL);
}

struct ib_mr *tbr_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct tbr_dev *tdev = to_tdev(ibpd->device);
	struct tbr_mr *mr;

	mr = tbr_mr_alloc(tdev, to_tpd(ibpd), access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = TBR_MR_DMA;
	mr->length = U64_MAX;
	tbr_mr_publish(tdev, mr);
	return &mr->ibmr;
}

/*
 * Collect the pinned pages and map them once, contiguously, into kernel
 * virtual memory: a copy then runs over a whole segment in one memcpy()
 * instead of page by page.  (It also avoids the direct map, whose huge
 * pages an emulated guest's MMU handles slowly.)  The price is kernel
 * page tables for the region (about 2 MiB per GiB registered) and virtual
 * address space, of which x86-64 has tens of TiB for vmalloc.
 */
static int tbr_mr_collect_pages(struct tbr_mr *mr)
{
	struct sg_page_iter iter;
	size_t n = 0, npages = ib_umem_num_pages(mr->umem);

	mr->pages = kvmalloc_array(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(n >= npages))
			return -EFAULT;
		mr->pages[n++] = sg_page_iter_page(&iter);
	}
	if (n != npages)
		return -EFAULT;
	mr->kva = vmap(mr->pages, npages, VM_MAP, PAGE_KERNEL);
	return mr->kva ? 0 : -ENOMEM;
}

struct ib_mr *tbr_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 iova, int access, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibpd->device);
	struct tbr_mr *mr;
	int err;

	if (!length || length > TBR_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);

	mr = tbr_mr_alloc(tdev, to_tpd(ibpd), access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->type = TBR_MR_USER;
	mr->iova = iova;
	mr->length = length;
	mr->page_offset = offset_in_page(start);

	/* Pins the pages, charging RLIMIT_MEMLOCK. */
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err;
	}
	err = tbr_mr_collect_pages(mr);
	if (err)
		goto err;
	tbr_mr_publish(tdev, mr);
	return &mr->ibmr;

err:
	xa_erase(&tdev->mr_xa, TBR_KEY_INDEX(mr->ibmr.lkey));
	if (mr->kva)
		vunmap(mr->kva);
	kvfree(mr->pages);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree(mr);
	return ERR_PTR(err);
}

int tbr_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibmr->device);
	struct tbr_mr *mr = to_tmr(ibmr);

	xa_erase(&tdev->mr_xa, TBR_KEY_INDEX(mr->ibmr.lkey));
	if (!refcount_dec_and_test(&mr->users))
		wait_for_completion(&mr->released);

	if (mr->kva)
		vunmap(mr->kva);
	kvfree(mr->pages);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree_rcu(mr, rcu);
	return 0;
}

/*
 * The MR that @key names, referenced, if it belongs to PD @pdn, grants
 * @access and covers [@addr, @addr + @len); NULL otherwise.
 */
struct tbr_mr *tbr_mr_get(struct tbr_dev *tdev, u32 key, u32 pdn,
			  int access, u64 addr, u64 len)
{
	struct tbr_mr *mr;

	rcu_read_lock();
	mr = xa_load(&tdev->mr_xa, TBR_KEY_INDEX(key));
	if (!mr || mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->users)) {
		rcu_read_unlock();
		return NULL;
	}
	rcu_read_unlock();

	if (mr->pdn != pdn || (mr->access & access) != access)
		goto reject;
	if (mr->type == TBR_MR_USER &&
	    (addr < mr->iova || len > mr->length ||
	     addr - mr->iova > mr->length - len))
		goto reject;
	return mr;

reject:
	tbr_mr_put(mr);
	return NULL;
}

void tbr_mr_put(struct tbr_mr *mr)
{
	if (refcount_dec_and_test(&mr->users))
		complete(&mr->released);
}

/*
 * The kernel address of @addr, which the caller checked lies in @mr, and
 * how many bytes from there are contiguous in kernel memory.
 */
void *tbr_mr_kaddr(const struct tbr_mr *mr, u64 addr, size_t *contig)
{
	u64 off;

	if (mr->type == TBR_MR_DMA) {
		*contig = SIZE_MAX;
		return (void *)(uintptr_t)addr;
	}
	off = addr - mr->iova;
	*contig = mr->length - off;
	return mr->kva + mr->page_offset + off;
}

/* The pinned page holding @addr of a user MR, and the offset in it. */
struct page *tbr_mr_page(const struct tbr_mr *mr, u64 addr,
			 unsigned int *page_off)
{
	u64 off = mr->page_offset + (addr - mr->iova);

	*page_off = off & ~PAGE_MASK;
	return mr->pages[off >> PAGE_SHIFT];
}
