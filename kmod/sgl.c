// SPDX-License-Identifier: GPL-2.0-only
/*
 * Moving bytes between scatter/gather lists.  The copy goes straight from
 * the source pages to the destination pages, in pieces as long as both
 * sides are contiguous in kernel memory (a whole segment, for user MRs):
 * the one copy of the loopback data path.
 */
#include "sgl.h"

enum ib_wc_status tbr_sgl_resolve(struct tbr_sgl *sgl, struct tbr_dev *tdev,
				  u32 pdn, const struct tbrdma_sge *sge,
				  u32 num, int access, u64 need)
{
	u32 i;

	sgl->nseg = 0;
	sgl->total = 0;
	for (i = 0; i < num && need; i++) {
		struct tbr_seg *seg = &sgl->seg[sgl->nseg];
		u32 len = min_t(u64, sge[i].length, need);

		if (!len)	/* a zero-length SGE names no memory */
			continue;
		seg->mr = tbr_mr_get(tdev, sge[i].lkey, pdn, access,
				     sge[i].addr, len);
		if (!seg->mr) {
			tbr_sgl_put(sgl);
			return IB_WC_LOC_PROT_ERR;
		}
		seg->addr = sge[i].addr;
		seg->len = len;
		sgl->total += len;
		need -= len;
		sgl->nseg++;
	}
	if (sgl->total > TBR_MAX_MSG_SIZE) {
		tbr_sgl_put(sgl);
		return IB_WC_LOC_LEN_ERR;
	}
	return IB_WC_SUCCESS;
}

enum ib_wc_status tbr_sgl_resolve_remote(struct tbr_sgl *sgl,
					 struct tbr_dev *tdev, u32 pdn,
					 u32 qpn, u32 rkey, u64 addr, u64 len,
					 int access)
{
	sgl->nseg = 0;
	sgl->total = 0;
	/* The verbs spec: a zero-length RDMA operation checks no key. */
	if (!len)
		return IB_WC_SUCCESS;
	sgl->seg[0].mr = tbr_mr_get_remote(tdev, rkey, pdn, qpn, access,
					   addr, len);
	if (!sgl->seg[0].mr)
		return IB_WC_REM_ACCESS_ERR;
	sgl->seg[0].addr = addr;
	sgl->seg[0].len = len;
	sgl->nseg = 1;
	sgl->total = len;
	return IB_WC_SUCCESS;
}

void tbr_sgl_kernel(struct tbr_sgl *sgl, void *buf, u32 len)
{
	sgl->seg[0].mr = NULL;
	sgl->seg[0].addr = (uintptr_t)buf;
	sgl->seg[0].len = len;
	sgl->nseg = len ? 1 : 0;
	sgl->total = len;
}

void tbr_sgl_put(struct tbr_sgl *sgl)
{
	u32 i;

	for (i = 0; i < sgl->nseg; i++)
		if (sgl->seg[i].mr)
			tbr_mr_put(sgl->seg[i].mr);
	sgl->nseg = 0;
	sgl->total = 0;
}

/* Where a list position is in kernel memory, and how far it runs on. */
static void *tbr_seg_kaddr(const struct tbr_seg *seg, u64 off, size_t *contig)
{
	size_t left = seg->len - off;
	void *p;

	if (!seg->mr) {
		*contig = left;
		return (void *)(uintptr_t)(seg->addr + off);
	}
	p = tbr_mr_kaddr(seg->mr, seg->addr + off, contig);
	*contig = min(*contig, left);
	return p;
}

struct tbr_sgl_pos {
	u32 seg;
	u64 off;
};

/* Step over @skip bytes from the start of @sgl. */
static struct tbr_sgl_pos tbr_sgl_seek(const struct tbr_sgl *sgl, u64 skip)
{
	struct tbr_sgl_pos pos = { 0, 0 };

	while (pos.seg < sgl->nseg && skip >= sgl->seg[pos.seg].len) {
		skip -= sgl->seg[pos.seg].len;
		pos.seg++;
	}
	pos.off = skip;
	return pos;
}

static void tbr_sgl_advance(const struct tbr_sgl *sgl, struct tbr_sgl_pos *pos,
			    size_t n)
{
	pos->off += n;
	if (pos->off == sgl->seg[pos->seg].len) {
		pos->seg++;
		pos->off = 0;
	}
}

void tbr_sgl_copy(struct tbr_sgl *dst, u64 dst_off, const struct tbr_sgl *src,
		  u64 len)
{
	struct tbr_sgl_pos d = tbr_sgl_seek(dst, dst_off);
	struct tbr_sgl_pos s = { 0, 0 };

	while (len) {
		size_t dn, sn, n;
		void *dp, *sp;

		if (WARN_ON_ONCE(d.seg >= dst->nseg || s.seg >= src->nseg))
			return;
		dp = tbr_seg_kaddr(&dst->seg[d.seg], d.off, &dn);
		sp = tbr_seg_kaddr(&src->seg[s.seg], s.off, &sn);
		n = min3(dn, sn, (size_t)min_t(u64, len, SIZE_MAX));
		memcpy(dp, sp, n);
		tbr_sgl_advance(dst, &d, n);
		tbr_sgl_advance(src, &s, n);
		len -= n;
	}
}

void tbr_sgl_copy_from_skb(struct tbr_sgl *dst, u64 dst_off,
			   const struct sk_buff *skb, u32 skb_off, u32 len)
{
	struct tbr_sgl_pos d = tbr_sgl_seek(dst, dst_off);

	while (len) {
		size_t dn, n;
		void *dp;

		if (WARN_ON_ONCE(d.seg >= dst->nseg))
			return;
		dp = tbr_seg_kaddr(&dst->seg[d.seg], d.off, &dn);
		n = min_t(size_t, dn, len);
		/* Cannot fail: the caller checked skb->len. */
		if (WARN_ON_ONCE(skb_copy_bits(skb, skb_off, dp, n)))
			return;
		tbr_sgl_advance(dst, &d, n);
		skb_off += n;
		len -= n;
	}
}

void tbr_sgl_iter_init(struct tbr_sgl_iter *it, const struct tbr_sgl *sgl,
		       u64 skip)
{
	struct tbr_sgl_pos pos = tbr_sgl_seek(sgl, skip);

	it->sgl = sgl;
	it->seg = pos.seg;
	it->off = pos.off;
}

bool tbr_sgl_iter_next(struct tbr_sgl_iter *it, size_t max,
		       struct tbr_sgl_piece *piece)
{
	const struct tbr_seg *seg;
	size_t contig;

	if (it->seg >= it->sgl->nseg || !max)
		return false;
	seg = &it->sgl->seg[it->seg];
	piece->kaddr = tbr_seg_kaddr(seg, it->off, &contig);
	piece->page = NULL;
	piece->len = min(contig, max);
	if (seg->mr && seg->mr->type == TBR_MR_USER) {
		piece->page = tbr_mr_page(seg->mr, seg->addr + it->off,
					  &piece->page_off);
		piece->len = min_t(size_t, piece->len,
				   PAGE_SIZE - piece->page_off);
	}
	it->off += piece->len;
	if (it->off == seg->len) {
		it->seg++;
		it->off = 0;
	}
	return true;
}

u64 *tbr_sgl_u64(const struct tbr_sgl *sgl)
{
	size_t contig;

	return tbr_seg_kaddr(&sgl->seg[0], 0, &contig);
}
