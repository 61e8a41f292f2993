// SPDX-License-Identifier: GPL-2.0-only
/*
 * A ggml RPC client on ggml's public API: connects to HOST:PORT, allocates
 * a tensor of SIZE MiB in the server's buffer, uploads it
 * (ggml_backend_tensor_set) and downloads it (ggml_backend_tensor_get)
 * REPS times each, checks every byte that came back, runs a small matmul
 * remotely and compares it with the local CPU's result, and prints
 *   ggml-rpc SIZE MiB upload X MB/s download Y MB/s (medians of REPS) matmul ok
 * MB/s are 10^6 bytes per second.  Usage:
 *   ggml_rpc_client HOST:PORT [SIZE_MIB [REPS]]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(n - 1) / 2];
}

/* A remote 64x64 by 64x32 matmul against the local CPU's. */
static int matmul_check(ggml_backend_t rpc)
{
	struct ggml_init_params ip = { 8 * ggml_tensor_overhead() +
				       ggml_graph_overhead(), NULL, true };
	struct ggml_context *ctx = ggml_init(ip);
	struct ggml_tensor *a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 64);
	struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 32);
	struct ggml_tensor *c = ggml_mul_mat(ctx, a, b);
	struct ggml_cgraph *gf = ggml_new_graph(ctx);
	ggml_backend_buffer_t buf;
	float av[64 * 64], bv[64 * 32], cv[64 * 32];
	int i, j, k, bad = 0;

	ggml_build_forward_expand(gf, c);
	buf = ggml_backend_alloc_ctx_tensors(ctx, rpc);
	if (!buf) {
		fprintf(stderr, "matmul: no buffer\n");
		return 1;
	}
	for (i = 0; i < 64 * 64; i++)
		av[i] = (float)((i * 7) % 13) - 6;
	for (i = 0; i < 64 * 32; i++)
		bv[i] = (float)((i * 5) % 11) - 5;
	ggml_backend_tensor_set(a, av, 0, sizeof(av));
	ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
	if (ggml_backend_graph_compute(rpc, gf) != GGML_STATUS_SUCCESS) {
		fprintf(stderr, "matmul: compute failed\n");
		return 1;
	}
	ggml_backend_tensor_get(c, cv, 0, sizeof(cv));
	/* c[j][i] = sum_k a[i][k] * b[j][k] (ggml: rows of a times rows of b) */
	for (j = 0; j < 32; j++)
		for (i = 0; i < 64; i++) {
			float s = 0;

			for (k = 0; k < 64; k++)
				s += av[i * 64 + k] * bv[j * 64 + k];
			if (cv[j * 64 + i] != s)
				bad++;
		}
	ggml_backend_buffer_free(buf);
	ggml_free(ctx);
	if (bad)
		fprintf(stderr, "matmul: %d of %d values wrong\n", bad, 64 * 32);
	return bad != 0;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 2 ? strtoul(argv[2], NULL, 0) : 32;
	int reps = argc > 3 ? atoi(argv[3]) : 3;
	size_t size = mib << 20, i;
	struct ggml_init_params ip = { 2 * ggml_tensor_overhead(), NULL, true };
	struct ggml_context *ctx;
	struct ggml_tensor *t;
	ggml_backend_buffer_t buf;
	ggml_backend_t rpc;
	uint8_t *src, *dst;
	double up[64], down[64];
	int r, err = 0;

	if (argc < 2 || reps < 1 || reps > 64 || !mib || mib > 1024) {
		fprintf(stderr, "usage: %s HOST:PORT [SIZE_MIB [REPS<=64]]\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	rpc = ggml_backend_rpc_init(argv[1], 0);
	if (!rpc) {
		fprintf(stderr, "cannot connect to %s\n", argv[1]);
		return 1;
	}
	ctx = ggml_init(ip);
	t = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, (int64_t)size);
	buf = ggml_backend_alloc_ctx_tensors(ctx, rpc);
	src = malloc(size);
	dst = malloc(size);
	if (!buf || !src || !dst) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (r = 0; r < reps; r++) {
		double t0;

		/* Different bytes every round: a stale copy cannot pass. */
		for (i = 0; i < size; i += 8) {
			uint64_t v = (i * 0x9E3779B97F4A7C15ull) ^ (uint64_t)r << 56;

			memcpy(src + i, &v, 8);
		}
		memset(dst, 0, size);
		t0 = now();
		ggml_backend_tensor_set(t, src, 0, size);
		up[r] = size / (now() - t0) / 1e6;
		t0 = now();
		ggml_backend_tensor_get(t, dst, 0, size);
		down[r] = size / (now() - t0) / 1e6;
		if (memcmp(src, dst, size)) {
			for (i = 0; i < size && src[i] == dst[i]; i++)
				;
			fprintf(stderr, "round %d: data differs from byte %zu\n",
				r, i);
			err = 1;
		}
		printf("round %d: upload %.1f MB/s download %.1f MB/s\n", r,
		       up[r], down[r]);
	}
	if (matmul_check(rpc))
		err = 1;
	printf("ggml-rpc %zu MiB upload %.1f MB/s download %.1f MB/s (medians of %d) data %s matmul %s\n",
	       mib, median(up, reps), median(down, reps), reps,
	       err ? "BAD" : "ok", err ? "?" : "ok");
	ggml_backend_buffer_free(buf);
	ggml_free(ctx);
	ggml_backend_free(rpc);
	free(src);
	free(dst);
	return err;
}
