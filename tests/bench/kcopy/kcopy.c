// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark helper: the bandwidth of the kernel's memcpy() at the message
 * sizes the loopback benchmark writes, which is exactly how tbrdma's
 * loopback data path moves an RDMA WRITE: one memcpy() from the source
 * region to the destination region, both mapped contiguously with vmap()
 * (see tbr_mr_collect_pages()).  perftest writes one buffer over and over,
 * so each size copies between two buffers of that size, again and again.
 * Loaded by the benchmark in the guest, it prints its figures and refuses
 * to stay loaded.
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>

#define KCOPY_BYTES	(256UL << 20)	/* copied per size */

static s64 kcopy_mbs(size_t size)
{
	void *src = vmalloc(size), *dst = vmalloc(size);
	unsigned long r, rounds = KCOPY_BYTES / size;
	void *(*copy)(void *, const void *, size_t) = memcpy;
	ktime_t t0;
	s64 ns = -1;

	/*
	 * Called through a pointer the compiler cannot see through, so the
	 * copy is the kernel's memcpy() that the data path calls: given the
	 * length, gcc expands a memcpy() of its own here as an inline
	 * `rep movsb`, which a TCG guest executes a byte at a time (about a
	 * seventh of the kernel's routine; the reference until 2026-11-27
	 * measured that).
	 */
	OPTIMIZER_HIDE_VAR(copy);

	if (!src || !dst)
		goto out;
	memset(src, 0x5a, size);
	memset(dst, 0, size);	/* touch everything before timing */
	t0 = ktime_get();
	for (r = 0; r < rounds; r++)
		copy(dst, src, size);
	ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
out:
	vfree(src);
	vfree(dst);
	return ns < 0 ? -1 : (s64)(rounds * size) * 1000 / max_t(s64, ns, 1);
}

static int __init kcopy_init(void)
{
	static const size_t sizes[] = { SZ_64K, SZ_1M };
	int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		pr_info("tbrdma_kcopy: memcpy %zu bytes %lld MB/s\n", sizes[i],
			kcopy_mbs(sizes[i]));
	return -EAGAIN;		/* measured; nothing to keep loaded */
}
module_init(kcopy_init);

MODULE_DESCRIPTION("tbrdma benchmark: kernel memcpy bandwidth");
MODULE_LICENSE("GPL");
