// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --bench-allreduce: the all-reduce alone, measured the way osu_allreduce
 * and nccl-tests measure it. No model: per message size, every iteration
 * starts with a barrier that is not timed (an empty message to and from
 * every peer, so no rank carries another's lateness into the figure),
 * runs one all-reduce of the size, and checks every element of the sum
 * against the value it must have. Warm-up iterations are run and checked
 * but not counted.
 *
 * The latency of one iteration is the slowest rank's: the all-reduce is
 * done when every rank holds the sum. Each rank times its own calls; at
 * the end of a size the ranks sum a vector in which each has filled only
 * its own row of times (an all-gather by all-reduce), and rank 0 takes
 * the maximum per iteration. p50/p99 are over the iterations; the bus
 * bandwidth is nccl-tests' definition: bytes / p50 x 2(N-1)/N, what each
 * rank's link carries in an optimal all-reduce.
 *
 * The values are small integers (|v| < 64), so their sum over up to 64
 * ranks is exact in float whatever the order: any difference from the
 * expected sum is a transport or algorithm error, never rounding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cmd/bench_allreduce.h"
#include "cmd/connect.h"
#include "comm/liveness.h"
#include "comm/rendezvous.h"
#include "comm/transport.h"

/*
 * TPRUN_BENCH_FAULT=RANK:ITER makes RANK's sum of iteration ITER wrong
 * after the all-reduce, for the test that the check catches it.
 */
static int fault_rank = -1;
static uint64_t fault_iter;

static void fault_init(void)
{
	const char *f = getenv("TPRUN_BENCH_FAULT");
	unsigned long long it;

	if (f && sscanf(f, "%d:%llu", &fault_rank, &it) == 2)
		fault_iter = it;
	else
		fault_rank = -1;
}

struct size_result {
	size_t bytes;
	enum tp_algo algo;
	double p50_us, p99_us, busbw_MBps;
};

static float value(int rank, uint64_t iter, size_t i)
{
	return (float)((int)((i * 7 + iter * 13 + (uint64_t)rank * 31) % 64) -
		       32);
}

static void fill(float *v, size_t n, int rank, uint64_t iter)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = value(rank, iter, i);
}

/* 0, or -1 after naming the first wrong element. */
static int check(const float *v, size_t n, int nranks, uint64_t iter,
		 size_t bytes)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		float want = 0;

		for (r = 0; r < nranks; r++)
			want += value(r, iter, i);
		if (v[i] != want) {
			tp_err("all-reduce of %zu bytes, iteration %llu: element %zu is %g, the sum is %g",
			       bytes, (unsigned long long)iter, i, (double)v[i],
			       (double)want);
			return -1;
		}
	}
	return 0;
}

/*
 * One timed all-reduce of N floats, checked: the input built where the
 * model builds it (in the send buffer when the algorithm allows: no
 * copy), an untimed barrier, the sum added to a zeroed vector as the
 * model adds it to its residual stream. *US is this rank's time.
 */
static int bench_once(struct tp_ar *ar, size_t n, uint64_t *iter,
		      float *scratch, float *sum, double *us)
{
	float *in = tp_ar_input(ar, n);
	uint64_t t0;

	if (!in)
		in = scratch;
	fill(in, n, ar->rank, *iter);
	memset(sum, 0, n * sizeof(float));
	if (tp_ar_barrier(ar))
		return -1;
	t0 = tp_now_ns();
	if (tp_allreduce_add(ar, in, sum, n))
		return -1;
	*us = (double)(tp_now_ns() - t0) / 1000.0;
	if (fault_rank == ar->rank && *iter == fault_iter)
		sum[n / 2] += 1;	/* the test of the check */
	if (check(sum, n, ar->nranks, *iter, n * sizeof(float)))
		return -1;
	++*iter;
	return 0;
}

/*
 * Before the first size: CONN_WARMUP untimed 256-byte all-reduces on the
 * fresh connections (osu_allreduce skips 200 iterations of a small
 * message). In the TCG guest a TCP run's first size was often several
 * times slower than the same size later in the run (256 B: 0.9-1.2 ms
 * instead of 0.25; 256 KiB: 9.5-12 ms instead of 2.6-3.1) with the
 * per-size warm-up of 30 or 3 iterations, in nearly every one of more
 * than 20 runs that day; after 200 of these in 2 of 7; after 1000 in
 * none of 9. Every transport gets the same.
 */
#define CONN_WARMUP 1000

static int bench_warm_connections(struct tp_ar *ar, float *scratch,
				  float *sum, size_t max_n)
{
	/* numbered apart, so TPRUN_BENCH_FAULT names the sizes' iterations */
	uint64_t iter = (uint64_t)1 << 40;
	size_t n = max_n < 64 ? max_n : 64;
	double us;
	int k;

	for (k = 0; k < CONN_WARMUP; k++)
		if (bench_once(ar, n, &iter, scratch, sum, &us))
			return -1;
	return 0;
}

/*
 * One size: WARMUP + ITERS iterations. Rank 0 gets the slowest rank's
 * time of each counted iteration in MAXT.
 */
static int bench_size(struct tp_ar *ar, size_t bytes, int iters, int warmup,
		      uint64_t *iter, float *scratch, float *sum,
		      float *times, double *maxt)
{
	size_t n = bytes / sizeof(float);
	int N = ar->nranks, me = ar->rank, k, r;
	double us;

	for (k = -warmup; k < iters; k++) {
		if (bench_once(ar, n, iter, scratch, sum, &us))
			return -1;
		if (k >= 0)
			maxt[k] = us;
	}
	/* gather: row r of TIMES is rank r's, zero elsewhere */
	memset(times, 0, (size_t)N * (size_t)iters * sizeof(float));
	for (k = 0; k < iters; k++)
		times[(size_t)me * (size_t)iters + (size_t)k] = (float)maxt[k];
	if (tp_allreduce(ar, times, (size_t)N * (size_t)iters))
		return -1;
	for (k = 0; k < iters; k++)
		for (r = 0, maxt[k] = 0; r < N; r++)
			if (times[(size_t)r * (size_t)iters + (size_t)k] >
			    maxt[k])
				maxt[k] = times[(size_t)r * (size_t)iters +
						(size_t)k];
	return 0;
}

static void report(const struct tp_opts *o, const char *xname,
		   const char *device, const struct size_result *res, int n)
{
	int i;

	if (o->json) {
		printf("{\n  \"ranks\": %d,\n  \"transport\": \"%s\",\n",
		       o->nranks, xname);
		printf("  \"algorithm\": \"%s\",\n  \"device\": \"%s\",\n",
		       tp_algo_name(o->algo), device ? device : "");
		printf("  \"iters\": %d,\n  \"warmup\": %d,\n  \"spin_us\": %d,\n",
		       o->bench_iters, o->bench_warmup,
		       o->transport == TP_TR_RDMA ? tp_spin_us(o) :
		       o->tcp_spin_us);
		printf("  \"allreduce_bench\": [\n");
		for (i = 0; i < n; i++)
			printf("    {\"bytes\": %zu, \"algorithm\": \"%s\", \"p50_us\": %.3f, \"p99_us\": %.3f, \"busbw_MBps\": %.3f, \"verified\": true}%s\n",
			       res[i].bytes, tp_algo_name(res[i].algo),
			       res[i].p50_us, res[i].p99_us, res[i].busbw_MBps,
			       i + 1 < n ? "," : "");
		printf("  ]\n}\n");
		return;
	}
	printf("tprun all-reduce benchmark: %d ranks, %s%s%s, all-reduce %s, %d iterations (+%d warm-up), every sum checked\n\n",
	       o->nranks, xname, device ? " on " : "", device ? device : "",
	       tp_algo_name(o->algo), o->bench_iters, o->bench_warmup);
	printf("%12s  %-9s %12s %12s %14s\n", "bytes", "algorithm", "p50 us",
	       "p99 us", "busbw MB/s");
	for (i = 0; i < n; i++)
		printf("%12zu  %-9s %12.1f %12.1f %14.1f\n", res[i].bytes,
		       tp_algo_name(res[i].algo), res[i].p50_us, res[i].p99_us,
		       res[i].busbw_MBps);
}

static size_t max_floats(const struct tp_opts *o)
{
	size_t m = (size_t)o->nranks * (size_t)o->bench_iters;
	int i;

	for (i = 0; i < o->bench_nsizes; i++)
		if (o->bench_sizes[i] / sizeof(float) > m)
			m = o->bench_sizes[i] / sizeof(float);
	return m;
}

int tp_bench_rank(struct tp_opts *o)
{
	struct tp_xport *xr = NULL, *xt = NULL, *x;
	struct size_result *res = NULL;
	struct tp_rdv rdv;
	struct tp_ar ar;
	size_t mf = max_floats(o);
	float *scratch = NULL, *sum = NULL, *times = NULL;
	double *maxt = NULL;
	uint64_t iter = 0;
	int i, N = o->nranks, ret = TP_EXIT_FAIL;

	memset(&rdv, 0, sizeof(rdv));
	fault_init();
	if (N < 2) {
		tp_err("--bench-allreduce needs at least 2 ranks (--local N or --peers)");
		return TP_EXIT_USAGE;
	}
	if (tp_connect_ranks(o, tp_opts_hash(o, NULL), mf, &rdv, &xr, &xt))
		goto abort;
	x = o->transport == TP_TR_RDMA ? xr : xt;
	tp_ar_init(&ar, x, o->algo, (size_t)o->ring_min, mf);
	scratch = tp_calloc(mf, sizeof(float));
	sum = tp_calloc(mf, sizeof(float));
	times = tp_calloc((size_t)N * (size_t)o->bench_iters, sizeof(float));
	maxt = tp_calloc((size_t)o->bench_iters, sizeof(double));
	res = tp_calloc((size_t)o->bench_nsizes, sizeof(*res));
	if (bench_warm_connections(&ar, scratch, sum, mf))
		goto abort_ar;
	for (i = 0; i < o->bench_nsizes; i++) {
		size_t bytes = o->bench_sizes[i];
		double algbw;

		tp_info("all-reduce of %zu bytes", bytes);
		if (bench_size(&ar, bytes, o->bench_iters, o->bench_warmup,
			       &iter, scratch, sum, times, maxt))
			goto abort_ar;
		res[i].bytes = bytes;
		res[i].algo = tp_ar_algo(&ar, bytes);
		res[i].p50_us = tp_percentile(maxt, (size_t)o->bench_iters, 50);
		res[i].p99_us = tp_percentile(maxt, (size_t)o->bench_iters, 99);
		algbw = res[i].p50_us > 0 ? (double)bytes / res[i].p50_us : 0;
		res[i].busbw_MBps = algbw * 2.0 * (N - 1) / N;
	}
	tp_ar_free(&ar);
	if (tp_mon_finish(iter, o->timeout_ms + 10000))
		goto abort;
	if (o->rank == 0)
		report(o, x->name, xr ? tp_rdma_describe(xr) : NULL, res,
		       o->bench_nsizes);
	ret = 0;
	goto out;
abort_ar:
	tp_ar_free(&ar);
abort:
	/* as tp_run_rank: the monitor owns the sockets */
	tp_mon_abort(xr && xr->lost_peer >= 0 ? xr->lost_peer :
		     xt ? xt->lost_peer : -1);
	return TP_EXIT_FAIL;
out:
	tp_disconnect_ranks(&rdv, xr, xt);
	free(res);
	free(maxt);
	free(times);
	free(sum);
	free(scratch);
	return ret;
}
