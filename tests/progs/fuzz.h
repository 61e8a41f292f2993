/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * fuzz_uverbs: shared state of the three layers (fuzz_verbs.c, fuzz_raw.c,
 * fuzz_ring.c) and the seeded random source.  See fuzz_uverbs.c.
 */
#ifndef TBR_FUZZ_H
#define TBR_FUZZ_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "vutil.h"

/* splitmix64: tiny, fast, and the whole state is one number. */
struct rng {
	uint64_t s;
};

static inline uint64_t rnd64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n == 0 gives 0. */
static inline uint32_t rnd(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(((rnd64(r) >> 32) * (uint64_t)n) >> 32) : 0;
}

/* True with probability pct percent. */
static inline bool chance(struct rng *r, unsigned int pct)
{
	return rnd(r, 100) < pct;
}

/* A 32-bit value a fuzzer likes: 0, 1, -1, powers of two and their
 * neighbours, limits of the device, or anything. */
uint32_t rnd_u32(struct rng *r);
uint64_t rnd_u64(struct rng *r);
/* A count: mostly small and sane, sometimes at or beyond LIMIT, sometimes
 * absurd. */
uint32_t rnd_count(struct rng *r, uint32_t limit);

/* The layers' common state. */
struct fuzz {
	struct vctx v;			/* the device, opened through libibverbs */
	const char *dev;
	uint64_t seed;
	bool verbose;
	bool is_tbrdma;			/* our provider: the ring layer can run */
	char uverbs_path[96];		/* /dev/infiniband/uverbsN of the device */

	/* Counters over the whole run. */
	uint64_t iters;			/* random calls made */
	uint64_t ok_ret;		/* calls that succeeded */
	uint64_t err_ret;		/* calls that returned an error */
	uint64_t completions;		/* work completions polled */
	uint64_t err_completions;	/* of which with an error status */
	uint64_t async_events;		/* async events received */
	uint64_t fatal_events;		/* of which QP_FATAL / CQ_ERR */
	uint64_t scribbles;		/* writes into shared rings */
	uint64_t failures;		/* contract violations: the test fails */
};

extern struct fuzz F;

/* What the program is doing now (shown when a watchdog fires). */
void fuzz_note(const char *layer, uint64_t iter, const char *what);

/* A contract violation: print it, count it. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Account for one call's result: 0 = success, else an error code. A
 * positive errno is an error return; anything else is a failure. */
void fuzz_ret(const char *what, int ret);
/* Same for calls that return an object or NULL with errno. */
void fuzz_ptr(const char *what, const void *p);

/* Check a work completion: a known status and opcode. With own_wr_ids the
 * wr_id must be one fuzz_wr_id() made. */
void fuzz_check_wc(const struct ibv_wc *wc, bool own_wr_ids);
static inline uint64_t fuzz_wr_id(struct rng *r)
{
	return 0xf022000000000000ULL | (rnd64(r) & 0xffffffffffffULL);
}
static inline bool fuzz_is_wr_id(uint64_t id)
{
	return (id >> 48) == 0xf022;
}

/* Read and acknowledge every pending async event of CTX (non-blocking). */
void fuzz_drain_async(struct ibv_context *ctx);

/* A fresh RC pair on the device moves and checks data; 0 if it works. */
int fuzz_health(const char *when);

/* The layers: each runs ITERS random calls from its own random stream. */
int fuzz_verbs(uint64_t seed, uint64_t iters);
int fuzz_raw(uint64_t seed, uint64_t iters);
int fuzz_ring(uint64_t seed, uint64_t iters, bool racer);

#endif /* TBR_FUZZ_H */
