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
 *
 * Fast registration (kernel consumers: NVMe-oF, NFS/RDMA, iSER): an MR
 * allocated by alloc_mr starts FREE, with a page list that map_mr_sg
 * fills from a DMA-mapped scatterlist (our DMA addresses are kernel
 * virtual addresses: the core's virtual DMA ops).  A REG_MR work request
 * makes it VALID under the key it carries, whose low 8 bits are the
 * consumer's (ib_update_fast_reg_key) and whose index must be the MR's;
 * LOCAL_INV, or a peer's SEND_WITH_INV, makes it FREE again.  Lookups of a
 * fast-registration MR check state, key, PD, access and bounds under the
 * MR's lock, so a key stops working the moment it is invalidated.
 *
 * Memory windows (mw.c) take their rkeys from the same table: an entry of
 * type TBR_MR_MW names no memory itself (tbr_mr_get() refuses it as an
 * lkey), and tbr_mr_get_remote() follows it to the MR it is bound to.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>

#include "tbrdma.h"

static const int tbr_mr_access_mask = IB_ACCESS_LOCAL_WRITE |
	IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
	IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_MW_BIND;

/* A new key, not yet findable (tbr_mr_publish); also a window's (mw.c). */
struct tbr_mr *tbr_mr_alloc(struct tbr_dev *tdev, struct tbr_pd *pd,
			    int access)
{
	struct tbr_mr *mr;
	u32 index;
	int err;

	/* The verbs spec: remote write or atomic access needs local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return ERR_PTR(-EINVAL);
	/* The core refuses these for user MRs already; kernel users too. */
	if (access & TBR_ACCESS_NOT_OFFERED)
		return ERR_PTR(-EOPNOTSUPP);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->pdn = pd->pdn;
	mr->access = access & tbr_mr_access_mask;
	mr->state = TBR_MR_VALID;
	spin_lock_init(&mr->lock);
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
	mr->key = index << 8 | ++tdev->mr_gen[index];
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return mr;
}

/* Make the MR findable by its key; everything else must be set up. */
void tbr_mr_publish(struct tbr_dev *tdev, struct tbr_mr *mr)
{
	xa_store(&tdev->mr_xa, TBR_KEY_INDEX(mr->key), mr, GFP_KERNEL);
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
	mr->umem = ib_umem_get_va(ibpd->device, start, length, access);
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
	xa_erase(&tdev->mr_xa, TBR_KEY_INDEX(mr->key));
	if (mr->kva)
		vunmap(mr->kva);
	kvfree(mr->pages);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * The IB spec (10.6.7.2.6): an MR that memory windows are bound to cannot
 * be deregistered; the windows must be invalidated or deallocated first.
 */
int tbr_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct tbr_dev *tdev = to_tdev(ibmr->device);
	struct tbr_mr *mr = to_tmr(ibmr);
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->mw_count) {
		spin_unlock_irqrestore(&mr->lock, flags);
		return -EBUSY;
	}
	mr->dying = true;	/* no window binds to it from now on */
	spin_unlock_irqrestore(&mr->lock, flags);

	xa_erase(&tdev->mr_xa, TBR_KEY_INDEX(mr->key));
	if (!refcount_dec_and_test(&mr->users))
		wait_for_completion(&mr->released);

	if (mr->kva)
		vunmap(mr->kva);
	kvfree(mr->pages);
	kfree(mr->page_list);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kfree_rcu(mr, rcu);
	return 0;
}

/* Does @mr, found by @key, grant @access to [@addr, @addr + @len) in PD @pdn? */
static bool tbr_mr_allows(const struct tbr_mr *mr, u32 key, u32 pdn,
			  int access, u64 addr, u64 len)
{
	if (mr->state != TBR_MR_VALID || mr->key != key || mr->pdn != pdn ||
	    (mr->access & access) != access)
		return false;
	if (mr->type == TBR_MR_DMA)
		return true;
	return addr >= mr->iova && len <= mr->length &&
	       addr - mr->iova <= mr->length - len;
}

/* Whatever @key's index names (an MR or a window), referenced, or NULL. */
static struct tbr_mr *tbr_key_get(struct tbr_dev *tdev, u32 key)
{
	struct tbr_mr *mr;

	rcu_read_lock();
	mr = xa_load(&tdev->mr_xa, TBR_KEY_INDEX(key));
	if (mr && !refcount_inc_not_zero(&mr->users))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/* Does the referenced @mr, found by @key, grant it?  If not, drop it. */
static struct tbr_mr *tbr_mr_check(struct tbr_mr *mr, u32 key, u32 pdn,
				   int access, u64 addr, u64 len)
{
	unsigned long flags;
	bool ok;

	if (mr->type == TBR_MR_MW) {
		ok = false;	/* a window's key names no local memory */
	} else if (mr->type == TBR_MR_FAST) {
		spin_lock_irqsave(&mr->lock, flags);
		ok = tbr_mr_allows(mr, key, pdn, access, addr, len);
		spin_unlock_irqrestore(&mr->lock, flags);
	} else {
		ok = tbr_mr_allows(mr, key, pdn, access, addr, len);
	}
	if (ok)
		return mr;
	tbr_mr_put(mr);
	return NULL;
}

/*
 * The MR that the local key @key names, referenced, if it belongs to PD
 * @pdn, grants @access and covers [@addr, @addr + @len); NULL otherwise.
 */
struct tbr_mr *tbr_mr_get(struct tbr_dev *tdev, u32 key, u32 pdn,
			  int access, u64 addr, u64 len)
{
	struct tbr_mr *mr = tbr_key_get(tdev, key);

	return mr ? tbr_mr_check(mr, key, pdn, access, addr, len) : NULL;
}

/*
 * The same for a remote key used by QP @qpn of PD @pdn: an MR's rkey, or
 * a memory window's, which grants access to the MR it is bound to.
 */
struct tbr_mr *tbr_mr_get_remote(struct tbr_dev *tdev, u32 key, u32 pdn,
				 u32 qpn, int access, u64 addr, u64 len)
{
	struct tbr_mr *mr = tbr_key_get(tdev, key), *target;

	if (!mr)
		return NULL;
	if (mr->type != TBR_MR_MW)
		return tbr_mr_check(mr, key, pdn, access, addr, len);
	target = tbr_mw_target(mr, key, pdn, qpn, access, addr, len);
	tbr_mr_put(mr);
	return target;
}

void tbr_mr_put(struct tbr_mr *mr)
{
	if (refcount_dec_and_test(&mr->users))
		complete(&mr->released);
}

/*
 * A fast-registration MR: one page of its page list at a time.  The
 * registration may only change after an invalidation, which the consumer
 * must not race with its own use of the MR; the index is clamped so that
 * even then nothing outside the page list is read.
 */
static void *tbr_mr_fast_kaddr(const struct tbr_mr *mr, u64 addr,
			       size_t *contig)
{
	u32 shift = READ_ONCE(mr->page_shift);
	u64 off = READ_ONCE(mr->fbo) + (addr - READ_ONCE(mr->iova));
	u64 idx = min_t(u64, off >> shift, mr->max_pages - 1);
	u64 in_page = off & (BIT_ULL(shift) - 1);

	*contig = BIT_ULL(shift) - in_page;
	return (void *)(uintptr_t)(READ_ONCE(mr->page_list[idx]) + in_page);
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
	if (mr->type == TBR_MR_FAST)
		return tbr_mr_fast_kaddr(mr, addr, contig);
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

/* alloc_mr: a fast-registration MR of up to @max_num_sg pages, FREE. */
struct ib_mr *tbr_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			   u32 max_num_sg)
{
	struct tbr_dev *tdev = to_tdev(ibpd->device);
	struct tbr_mr *mr;
	u64 *list;

	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg ||
	    max_num_sg > TBR_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	list = kcalloc(max_num_sg, sizeof(*list), GFP_KERNEL);
	if (!list)
		return ERR_PTR(-ENOMEM);
	mr = tbr_mr_alloc(tdev, to_tpd(ibpd), 0);
	if (IS_ERR(mr)) {
		kfree(list);
		return ERR_CAST(mr);
	}
	mr->type = TBR_MR_FAST;
	mr->state = TBR_MR_FREE;
	mr->page_list = list;
	mr->max_pages = max_num_sg;
	mr->page_shift = PAGE_SHIFT;
	tbr_mr_publish(tdev, mr);
	return &mr->ibmr;
}

static int tbr_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct tbr_mr *mr = to_tmr(ibmr);

	if (mr->map_npages >= mr->max_pages)
		return -ENOMEM;
	WRITE_ONCE(mr->page_list[mr->map_npages++], addr);
	return 0;
}

/*
 * map_mr_sg: the core's ib_sg_to_pages() splits the scatterlist into
 * pages of ibmr->page_size and sets ibmr->iova and ibmr->length; we keep
 * the page addresses, how many, their size and where the first byte is.
 */
int tbr_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset)
{
	struct tbr_mr *mr = to_tmr(ibmr);
	int n;

	if (mr->type != TBR_MR_FAST)
		return -EINVAL;
	mr->map_npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, tbr_mr_set_page);
	if (n <= 0 || !is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SZ_4K) {
		mr->map_npages = 0;
		return n <= 0 ? n : -EINVAL;
	}
	mr->map_shift = ilog2(ibmr->page_size);
	mr->map_fbo = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/* An MR (or window) of @type in PD @pdn by the index of @key, referenced. */
struct tbr_mr *tbr_mr_get_index(struct tbr_dev *tdev, u32 key, u32 pdn,
				enum tbr_mr_type type)
{
	struct tbr_mr *mr = tbr_key_get(tdev, key);

	if (mr && (mr->type != type || mr->pdn != pdn)) {
		tbr_mr_put(mr);
		mr = NULL;
	}
	return mr;
}

/*
 * REG_MR: make the MR named by @key's index VALID under @key, for
 * [@iova, @iova + @length) of its mapped page list, with @access.
 */
enum ib_wc_status tbr_mr_fast_reg(struct tbr_dev *tdev, u32 pdn, u32 key,
				  int access, u64 iova, u64 length)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	unsigned long flags;
	struct tbr_mr *mr;
	u64 room;

	mr = tbr_mr_get_index(tdev, key, pdn, TBR_MR_FAST);
	if (!mr)
		return IB_WC_LOC_PROT_ERR;
	/* The verbs spec: remote write or atomic access needs local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE)) {
		status = IB_WC_LOC_ACCESS_ERR;
		goto out;
	}
	/* Rights the device does not offer (FLUSH): not granted silently. */
	if (access & TBR_ACCESS_NOT_OFFERED) {
		status = IB_WC_LOC_ACCESS_ERR;
		goto out;
	}
	spin_lock_irqsave(&mr->lock, flags);
	room = ((u64)mr->map_npages << mr->map_shift) - mr->map_fbo;
	if (mr->state != TBR_MR_FREE) {
		status = IB_WC_LOC_QP_OP_ERR;	/* MR in the wrong state */
	} else if (!mr->map_npages || length > room) {
		status = IB_WC_LOC_LEN_ERR;
	} else {
		mr->npages = mr->map_npages;
		mr->page_shift = mr->map_shift;
		mr->fbo = mr->map_fbo;
		mr->iova = iova;
		mr->length = length;
		mr->access = access & tbr_mr_access_mask;
		mr->key = key;
		mr->state = TBR_MR_VALID;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	if (status == IB_WC_SUCCESS)
		tbr_count(tdev, TBR_CNT_FAST_REG, 1);
out:
	tbr_mr_put(mr);
	return status;
}

/*
 * LOCAL_INV (@remote false) or a peer's SEND_WITH_INV (@remote true) on
 * QP @qpn: make the fast-registration MR that @key names FREE.  A peer may
 * only invalidate a key it was given: one with remote access.  A type 2
 * memory window's rkey goes to mw.c.
 */
enum ib_wc_status tbr_mr_invalidate(struct tbr_dev *tdev, u32 pdn, u32 qpn,
				    u32 key, bool remote)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	unsigned long flags;
	struct tbr_mr *mr;

	mr = tbr_key_get(tdev, key);
	if (mr && mr->pdn == pdn && mr->type == TBR_MR_MW) {
		status = tbr_mw_invalidate(mr, qpn, key, remote);
		tbr_mr_put(mr);
		return status;
	}
	if (mr && (mr->pdn != pdn || mr->type != TBR_MR_FAST)) {
		tbr_mr_put(mr);
		mr = NULL;
	}
	if (!mr)
		return IB_WC_LOC_PROT_ERR;
	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key ||
	    (remote && !(mr->access & (IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_ATOMIC))))
		status = IB_WC_LOC_PROT_ERR;
	else
		mr->state = TBR_MR_FREE;
	spin_unlock_irqrestore(&mr->lock, flags);
	if (status == IB_WC_SUCCESS)
		tbr_count(tdev, remote ? TBR_CNT_REMOTE_INV : TBR_CNT_LOCAL_INV,
			  1);
	tbr_mr_put(mr);
	return status;
}
