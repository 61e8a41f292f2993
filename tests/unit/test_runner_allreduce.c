// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's all-reduce (tools/runner/comm/allreduce.c) over the in-process
 * transport: N threads run many consecutive all-reduces of many sizes,
 * with random delays so ranks drift apart by up to a call (the case the
 * two-halves flow control is for). Integer-valued data must sum exactly;
 * random data must sum in rank order on every rank (mesh: the very bits
 * of a sequential sum 0..N-1) and be the same bits on every rank (ring).
 * The calls take turns between the three ways in: tp_allreduce in place;
 * tp_allreduce_add onto an accumulator, with the input built where
 * tp_ar_input says (the send buffer: no copy); and tp_allreduce after a
 * tp_ar_barrier (empty messages that must not upset the counting).
 * Also on links to the neighbours only (a cluster cabled as a ring):
 * every call, barriers included, must run as the ring.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "comm/allreduce.h"
#include "tap.h"

#define CALLS 120

static const size_t sizes[] = { 1, 2, 3, 5, 8, 31, 100, 257, 1000, 4096 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define MAXN 4096

struct ctx {
	struct tp_loop *loop;
	int N;
	enum tp_algo algo;
	size_t ring_min;
	int integers;
	int ring_links;		/* links to the neighbours only (a cabled ring) */
	float *out[8];		/* per rank: CALLS x MAXN results */
	int failed;
};

struct arg {
	struct ctx *c;
	int rank;
};

/* Rank R's input to call K, element I. */
static float input(int integers, int r, int k, size_t i)
{
	uint64_t h = tp_hash4(77, (uint64_t)r, (uint64_t)k, i);

	return integers ? (float)((int)(h % 2001) - 1000) : tp_unit_pm1(h);
}

/* Call K's way in (0 in place, 1 add to an accumulator, 2 barrier first),
 * and the accumulator's start value of element I. */
static int way(int k)
{
	return k % 3;
}

static float acc_start(int integers, int k, size_t i)
{
	return way(k) == 1 ? input(integers, 99, k, i) : 0;
}

static void *rank_main(void *p)
{
	struct arg *a = p;
	struct ctx *c = a->c;
	struct tp_ar ar;
	float *v = calloc(MAXN, sizeof(float));
	float *acc = calloc(MAXN, sizeof(float));
	int k, r;
	size_t i;

	tp_ar_init(&ar, tp_loop_xport(c->loop, a->rank), c->algo, c->ring_min,
		   MAXN);
	for (k = 0; k < CALLS; k++) {
		size_t n = sizes[k % NSIZES];
		uint64_t h = tp_hash4(5, (uint64_t)a->rank, (uint64_t)k, 0);

		float *in = way(k) == 1 ? tp_ar_input(&ar, n) : NULL;

		if (!in)
			in = v;
		for (i = 0; i < n; i++) {
			in[i] = input(c->integers, a->rank, k, i);
			acc[i] = acc_start(c->integers, k, i);
		}
		if (h % 3 == 0)	/* drift apart */
			usleep((useconds_t)(h >> 40) % 300);
		if (way(k) == 1)
			r = tp_allreduce_add(&ar, in, acc, n);
		else if (way(k) == 2)
			r = tp_ar_barrier(&ar) || tp_allreduce(&ar, in, n);
		else
			r = tp_allreduce(&ar, in, n);
		if (r) {
			c->failed = 1;
			break;
		}
		memcpy(c->out[a->rank] + (size_t)k * MAXN,
		       way(k) == 1 ? acc : in, n * sizeof(float));
	}
	tp_ar_free(&ar);
	free(acc);
	free(v);
	return NULL;
}

static void run_links(int N, enum tp_algo algo, int integers, int ring_links)
{
	struct ctx c = { .N = N, .algo = algo, .ring_min = 64,
			 .integers = integers, .ring_links = ring_links };
	struct arg args[8];
	pthread_t th[8];
	size_t sb, rb, i;
	int r, k, exact = 1, same = 1;

	tp_ar_sizes(N, algo, MAXN, &sb, &rb);
	c.loop = tp_loop_new(N, sb, rb);
	for (r = 0; ring_links && r < N; r++)	/* a put elsewhere fails */
		tp_loop_xport(c.loop, r)->link_mask =
			1ull << (r + 1) % N | 1ull << (r + N - 1) % N;
	for (r = 0; r < N; r++) {
		c.out[r] = calloc((size_t)CALLS * MAXN, sizeof(float));
		args[r] = (struct arg){ &c, r };
		pthread_create(&th[r], NULL, rank_main, &args[r]);
	}
	for (r = 0; r < N; r++)
		pthread_join(th[r], NULL);
	for (k = 0; k < CALLS && !c.failed; k++) {
		size_t n = sizes[k % NSIZES];
		enum tp_algo used = ring_links ? TP_ALGO_RING :
				    tp_ar_choose(algo, N, n * sizeof(float),
						 c.ring_min);

		for (i = 0; i < n; i++) {
			float seq = input(integers, 0, k, i);
			double sum = seq;
			float got = c.out[0][(size_t)k * MAXN + i];
			float start = acc_start(integers, k, i);

			for (r = 1; r < N; r++) {
				seq += input(integers, r, k, i);
				sum += input(integers, r, k, i);
			}
			/* the sum is added to the accumulator once, whole */
			seq = start + seq;
			sum += start;
			if (integers ? got != (float)sum :
			    used == TP_ALGO_MESH ? got != seq :
			    fabs(got - sum) > 1e-5)
				exact = 0;
			for (r = 1; r < N; r++)
				if (c.out[r][(size_t)k * MAXN + i] != got)
					same = 0;
		}
	}
	ok(!c.failed && exact && same,
	   "%d ranks, %s%s, %s data: %d calls of 1..4096 floats: %s, every rank the same bits",
	   N, tp_algo_name(algo),
	   ring_links ? " on links to the neighbours only (ring, barriers too)" : "",
	   integers ? "integer" : "random", CALLS,
	   integers ? "exact sums" : algo == TP_ALGO_MESH ?
	   "the bits of the sum in rank order" : "sums within 1e-5");
	for (r = 0; r < N; r++)
		free(c.out[r]);
	tp_loop_free(c.loop);
}

static void run(int N, enum tp_algo algo, int integers)
{
	run_links(N, algo, integers, 0);
}

/* Which algorithms the links of a cabled ring carry. */
static void test_links(void)
{
	struct tp_xport x = { .rank = 0, .nranks = 4 };
	char err[300] = "";
	int ring, mesh, gap;

	x.link_mask = 1u << 1 | 1u << 3;	/* rank 2: over IP only */
	ring = tp_ar_links_check(&x, TP_ALGO_RING, err, sizeof(err)) ||
	       tp_ar_links_check(&x, TP_ALGO_AUTO, err, sizeof(err));
	mesh = tp_ar_links_check(&x, TP_ALGO_MESH, err, sizeof(err)) &&
	       strstr(err, "rank 2");
	x.link_mask = 1u << 2 | 1u << 3;	/* no link to neighbour 1 */
	gap = tp_ar_links_check(&x, TP_ALGO_AUTO, err, sizeof(err)) &&
	      strstr(err, "neighbour");
	ok(!ring && mesh && gap,
	   "4 ranks cabled as a ring: ring and auto run, mesh is refused naming the rank without a link, a missing neighbour link too (%s)",
	   err);
}

static void test_choose(void)
{
	ok(tp_ar_choose(TP_ALGO_AUTO, 2, 1 << 20, 32768) == TP_ALGO_MESH &&
	   tp_ar_choose(TP_ALGO_AUTO, 3, 32767, 32768) == TP_ALGO_MESH &&
	   tp_ar_choose(TP_ALGO_AUTO, 3, 32768, 32768) == TP_ALGO_RING &&
	   tp_ar_choose(TP_ALGO_AUTO, 4, 1 << 20, 32768) == TP_ALGO_RING &&
	   tp_ar_choose(TP_ALGO_RING, 2, 4, 32768) == TP_ALGO_RING &&
	   tp_ar_choose(TP_ALGO_MESH, 4, 1 << 20, 32768) == TP_ALGO_MESH,
	   "auto: mesh for 2 ranks and small messages, ring from ring-min bytes; forced choices stay");
}

static void test_chunks(void)
{
	int N, bad = 0;
	size_t n;

	for (N = 1; N <= 8; N++)
		for (n = 0; n <= 50; n++) {
			size_t next = 0, off, len, lo = n, hi = 0;
			int i;

			for (i = 0; i < N; i++) {
				tp_ring_chunk(n, N, i, &off, &len);
				bad += off != next;
				next = off + len;
				lo = len < lo ? len : lo;
				hi = len > hi ? len : hi;
			}
			bad += next != n || hi - lo > 1;
		}
	ok(!bad, "ring chunks tile the vector, sizes differ by at most one");
}

static void test_sizes(void)
{
	size_t ms, mr, rs, rr, as, arr;

	tp_ar_sizes(4, TP_ALGO_MESH, 100, &ms, &mr);
	tp_ar_sizes(4, TP_ALGO_RING, 100, &rs, &rr);
	tp_ar_sizes(4, TP_ALGO_AUTO, 100, &as, &arr);
	/* a mesh slot: 400 bytes of floats + an 8-byte time, to 64 bytes */
	ok(ms == 2 * 448 && mr == 2 * 4 * 448 && rs == 2 * 6 * 25 * 4 &&
	   rr == rs && as == ms + rs && arr == mr + rr,
	   "buffers: mesh 2 x slot / 2 x N x slot, ring 2 x (2N-2) x n/N, auto both");
}

static void test_percentile(void)
{
	double v[100];
	int i;

	for (i = 0; i < 100; i++)
		v[i] = 100 - i;
	ok(tp_percentile(v, 100, 50) == 50 && tp_percentile(v, 100, 99) == 99 &&
	   tp_percentile(v, 100, 100) == 100 && tp_percentile(v, 1, 99) == 100 &&
	   tp_percentile(v, 0, 50) == 0,
	   "percentiles by nearest rank");
}

int main(void)
{
	int N;

	plan(NO_PLAN);
	test_choose();
	test_chunks();
	test_sizes();
	test_percentile();
	for (N = 2; N <= 5; N++) {
		run(N, TP_ALGO_MESH, 1);
		run(N, TP_ALGO_RING, 1);
		run(N, TP_ALGO_MESH, 0);
		run(N, TP_ALGO_RING, 0);
		run(N, TP_ALGO_AUTO, 0);
	}
	test_links();
	for (N = 4; N <= 5; N++) {	/* with 3, every rank is a neighbour */
		run_links(N, TP_ALGO_AUTO, 1, 1);
		run_links(N, TP_ALGO_AUTO, 0, 1);
	}
	return done();
}
