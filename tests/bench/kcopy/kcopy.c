// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark helper: the bandwidth of the kernel's memcpy() for page-sized
 * copies between two buffers, which is exactly how tbrdma's loopback data
 * path moves payload.  Loaded by the benchmark in the guest, it prints its
 * figure and refuses to stay loaded.
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

#define KCOPY_SIZE	(4 << 20)
#define KCOPY_ROUNDS	16

static int __init kcopy_init(void)
{
	void *src = vmalloc(KCOPY_SIZE), *dst = vmalloc(KCOPY_SIZE);
	size_t off;
	ktime_t t0;
	s64 ns;
	int r;

	if (!src || !dst) {
		vfree(src);
		vfree(dst);
		return -ENOMEM;
	}
	memset(src, 0x5a, KCOPY_SIZE);
	memset(dst, 0, KCOPY_SIZE);	/* fault everything in before timing */

	t0 = ktime_get();
	for (r = 0; r < KCOPY_ROUNDS; r++)
		for (off = 0; off < KCOPY_SIZE; off += PAGE_SIZE)
			memcpy(dst + off, src + off, PAGE_SIZE);
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));

	pr_info("tbrdma_kcopy: memcpy %lld MB/s\n",
		(s64)KCOPY_SIZE * KCOPY_ROUNDS * 1000 / max_t(s64, ns, 1));
	vfree(src);
	vfree(dst);
	return -EAGAIN;		/* measured; nothing to keep loaded */
}
module_init(kcopy_init);

MODULE_DESCRIPTION("tbrdma benchmark: kernel memcpy bandwidth");
MODULE_LICENSE("GPL");
