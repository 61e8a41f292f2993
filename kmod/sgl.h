/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Scatter/gather lists resolved against memory regions: what the send
 * engine and the responder move bytes between.  A segment either lies in a
 * referenced MR or, for inline data, in a kernel buffer.
 */
#ifndef TBRDMA_SGL_H
#define TBRDMA_SGL_H

#include <linux/skbuff.h>

#include "tbrdma.h"

struct tbr_seg {
	struct tbr_mr *mr;	/* NULL: kernel buffer at (void *)addr */
	u64 addr;
	u32 len;
};

struct tbr_sgl {
	u32 nseg;
	u64 total;
	struct tbr_seg seg[TBR_MAX_SGE];
};

/*
 * Resolve @num SGEs against local MRs of PD @pdn needing @access, up to
 * their first @need bytes (TBR_SGL_ALL: all of them).  A receive resolves
 * only what the message fills: the verbs spec checks the memory a message
 * is placed in, and rxe, siw and hardware accept a receive buffer that
 * runs past its MR as long as the message ends inside it (perftest posts
 * MTU-sized SRQ receives at every message-size step of its buffer).  Then
 * sgl->total < @need says the buffers are too short.  Returns
 * IB_WC_SUCCESS, or the completion status to report (nothing held then).
 */
#define TBR_SGL_ALL	U64_MAX
enum ib_wc_status tbr_sgl_resolve(struct tbr_sgl *sgl, struct tbr_dev *tdev,
				  u32 pdn, const struct tbrdma_sge *sge,
				  u32 num, int access, u64 need);

/* One segment in the MR named by a remote key (or a window's), for QP @qpn. */
enum ib_wc_status tbr_sgl_resolve_remote(struct tbr_sgl *sgl,
					 struct tbr_dev *tdev, u32 pdn,
					 u32 qpn, u32 rkey, u64 addr, u64 len,
					 int access);

/* One segment in a kernel buffer (inline data, atomic results). */
void tbr_sgl_kernel(struct tbr_sgl *sgl, void *buf, u32 len);

void tbr_sgl_put(struct tbr_sgl *sgl);

/* Copy @len bytes from @src to @dst; both are at least @len long. */
void tbr_sgl_copy(struct tbr_sgl *dst, u64 dst_off, const struct tbr_sgl *src,
		  u64 len);

/* Copy @len bytes of @skb from @skb_off to @dst at @dst_off. */
void tbr_sgl_copy_from_skb(struct tbr_sgl *dst, u64 dst_off,
			   const struct sk_buff *skb, u32 skb_off, u32 len);

/*
 * Walking a list in pieces that are contiguous in kernel memory and, for
 * pinned user pages, never cross a page: what frames are built from.
 */
struct tbr_sgl_iter {
	const struct tbr_sgl *sgl;
	u32 seg;
	u64 off;
};

struct tbr_sgl_piece {
	void *kaddr;
	struct page *page;	/* NULL unless the piece is in a user MR */
	unsigned int page_off;
	size_t len;
};

void tbr_sgl_iter_init(struct tbr_sgl_iter *it, const struct tbr_sgl *sgl,
		       u64 skip);
/* The next piece of at most @max bytes; false at the end of the list. */
bool tbr_sgl_iter_next(struct tbr_sgl_iter *it, size_t max,
		       struct tbr_sgl_piece *piece);

/* The kernel address of the 8 bytes at the start of a one-segment list. */
u64 *tbr_sgl_u64(const struct tbr_sgl *sgl);

#endif /* TBRDMA_SGL_H */
