// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark helper: the bandwidth of the kernel's memcpy() for page-sized
 * copies between two buffers, which is exactly how tbrdma's loopback data
 * path moves payload.  Measured twice: between vmalloc buffers, and
 * between pages reached through the kernel's direct map (as tbrdma reaches
 * user pages).  Loaded by the benchmark in the guest, it prints its figures
 * and refuses to stay loaded.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

#define KCOPY_ORDER	10			/* 4 MiB */
#define KCOPY_SIZE	(PAGE_SIZE << KCOPY_ORDER)
#define KCOPY_ROUNDS	16

/*
 * The length comes through a volatile so the compiler cannot inline the
 * copy: with a constant PAGE_SIZE gcc emits its own `rep movsl` loop, which
 * is not the kernel's memcpy() (that is `rep movsb` on CPUs with FSRM, the
 * instruction a TCG guest pays for byte by byte) and overstates the limit.
 */
static volatile size_t kcopy_len = PAGE_SIZE;

static s64 kcopy_mbs(void *dst, void *src)
{
	size_t off, len = kcopy_len;
	ktime_t t0;
	s64 ns;
	int r;

	memset(src, 0x5a, KCOPY_SIZE);
	memset(dst, 0, KCOPY_SIZE);	/* touch everything before timing */
	t0 = ktime_get();
	for (r = 0; r < KCOPY_ROUNDS; r++)
		for (off = 0; off < KCOPY_SIZE; off += len)
			memcpy(dst + off, src + off, len);
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
	return (s64)KCOPY_SIZE * KCOPY_ROUNDS * 1000 / max_t(s64, ns, 1);
}

static int __init kcopy_init(void)
{
	void *vsrc = vmalloc(KCOPY_SIZE), *vdst = vmalloc(KCOPY_SIZE);
	struct page *psrc = alloc_pages(GFP_KERNEL, KCOPY_ORDER);
	struct page *pdst = alloc_pages(GFP_KERNEL, KCOPY_ORDER);

	if (vsrc && vdst && psrc && pdst) {
		pr_info("tbrdma_kcopy: memcpy %lld MB/s\n", kcopy_mbs(vdst, vsrc));
		pr_info("tbrdma_kcopy: direct-map memcpy %lld MB/s\n",
			kcopy_mbs(page_address(pdst), page_address(psrc)));
	}
	vfree(vsrc);
	vfree(vdst);
	if (psrc)
		__free_pages(psrc, KCOPY_ORDER);
	if (pdst)
		__free_pages(pdst, KCOPY_ORDER);
	return -EAGAIN;		/* measured; nothing to keep loaded */
}
module_init(kcopy_init);

MODULE_DESCRIPTION("tbrdma benchmark: kernel memcpy bandwidth");
MODULE_LICENSE("GPL");
