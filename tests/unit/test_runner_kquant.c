// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's K-quants (tools/runner/kernels/quant.c: Q4_K, Q5_K, Q6_K and the Q8_K
 * activations): the block layouts GGUF defines, and then bit for bit
 * against ggml itself. The ggml is node-llama-cpp's prebuilt CPU build
 * that tests/llama-ref compares tprun with; when it is installed
 * (tests/llama-ref/setup.sh) this test dlopens libggml-base.so and a
 * libggml-cpu-*.so from it (TPRUN_GGML_DIR overrides the directory):
 *   - tprun's quantisers give the same bytes as quantize_row_q*_K_ref
 *     (what llama.cpp's quantizer uses without an importance matrix), and
 *     its Q4_0..Q8_0 ones as quantize_row_q*_ref;
 *   - tprun's dequantisation gives the same floats as dequantize_row_*;
 *   - tprun's Q8_K activations are quantize_row_q8_K's bytes;
 *   - tprun's dot product on the blocks equals ggml_vec_dot_q*_K_q8_K's
 *     up to float summation order (relative 1e-5 of the sum of |terms|).
 * Without it those points are skipped; the rest needs nothing.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/quant.h"
#include "tap.h"

#ifndef GGML_DIR
#define GGML_DIR "."
#endif

static uint64_t rs = 4242;

static double urand(void)	/* [-1, 1) */
{
	rs = rs * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rs >> 11) / 4503599627370496.0 - 1.0;
}

static const enum tp_type ktypes[] = { TP_Q4_K, TP_Q5_K, TP_Q6_K };

enum { N = 1024, ROWS = 6 };	/* 4 super-blocks a row */

/* Rows of different character: plain, offset, wide range, sparse with
 * zero sub-blocks, all zero, constant. */
static void fill(float *x, int kind)
{
	int i;

	for (i = 0; i < N; i++) {
		double u = urand();

		switch (kind) {
		case 0: x[i] = (float)u; break;
		case 1: x[i] = (float)(0.3 + 0.05 * u); break;
		case 2: x[i] = (float)(u * u * u * 40); break;
		case 3: x[i] = (i / 32) % 3 ? 0 : (float)(u * 1e-3); break;
		case 4: x[i] = 0; break;
		default: x[i] = -0.125f; break;
		}
	}
}

static void test_layout(void)
{
	struct tp_block_q4_k a;
	struct tp_block_q5_k b;
	struct tp_block_q6_k c;
	float y[256];

	memset(&a, 0, sizeof(a));
	a.d = 0x3c00;		/* 1 */
	a.dmin = 0x4000;	/* 2 */
	a.scales[0] = 3;	/* sub-block 0: scale 3, min 1 */
	a.scales[4] = 1;
	a.scales[11] = 0x52;	/* sub-block 7: scale 2 | 1 << 4 ... */
	a.scales[3] = 0x40;	/* ... + high bits 1: scale 18 */
	a.scales[7] = 0xc0;	/* min 5 | 3 << 4 = 53 */
	a.qs[0] = 0x72;		/* element 0: 2, element 32: 7 */
	a.qs[127] = 0xf0;	/* element 255: 15 (sub-block 7) */
	tp_row_to_f32(TP_Q4_K, &a, y, 256);
	ok(y[0] == 3 * 2 - 2 && y[32] == 0 && y[1] == -2 &&
	   y[255] == 18 * 15 - 2 * 53,
	   "q4_k: d sc q - dmin m, nibbles j/j+32, 6-bit scales (%g %g %g %g)",
	   y[0], y[32], y[1], y[255]);
	memset(&b, 0, sizeof(b));
	b.d = 0x3c00;
	b.scales[1] = 1;	/* sub-block 1 (elements 32..63): scale 1 */
	b.scales[2] = 1;	/* sub-block 2 (64..95) */
	b.qs[0] = 0x30;		/* element 32: 3 */
	b.qh[0] = 0x02 | 0x04;	/* element 32's and 64's fifth bits */
	tp_row_to_f32(TP_Q5_K, &b, y, 256);
	ok(y[32] == 19 && y[64] == 16 && y[0] == 0,
	   "q5_k: qh bit 2i/2i+1 is the fifth bit of 64i+j / 64i+32+j");
	memset(&c, 0, sizeof(c));
	c.d = 0x3c00;
	c.scales[0] = 1;
	c.scales[4] = -2;	/* elements 64..79 */
	c.ql[0] = 0x1f;		/* element 0: low 15; element 64: low 1 */
	c.qh[0] = 0x30;		/* element 64: high 3 -> 49 */
	tp_row_to_f32(TP_Q6_K, &c, y, 256);
	ok(y[0] == 15 - 32 && y[64] == -2 * (49 - 32) && y[1] == -32,
	   "q6_k: d sc (q - 32), ql/qh layout (%g %g)", y[0], y[64]);
	is_int((long long)tp_type_bytes(TP_Q4_K, 512), 288, "q4_k: 144 bytes a block");
	is_int((long long)tp_type_bytes(TP_Q5_K, 256), 176, "q5_k: 176 bytes a block");
	is_int((long long)tp_type_bytes(TP_Q6_K, 256), 210, "q6_k: 210 bytes a block");
	is_int(tp_type_block(TP_Q6_K), 256, "k-quants: blocks of 256");
}

static void test_fallback(void)
{
	ok(tp_type_for_cols(TP_Q4_K, 512) == TP_Q4_K &&
	   tp_type_for_cols(TP_Q4_K, 128) == TP_Q5_0 &&
	   tp_type_for_cols(TP_Q5_K, 96) == TP_Q5_1 &&
	   tp_type_for_cols(TP_Q6_K, 320) == TP_Q8_0 &&
	   tp_type_for_cols(TP_Q6_K, 100) == TP_F16 &&
	   tp_type_for_cols(TP_Q8_0, 100) == TP_Q8_0,
	   "fallback types for rows the K-quants cannot hold, as llama.cpp's quantizer");
}

/* Round trip error and the dot product against a double reference. */
static void test_self(void)
{
	static float x[N], y[N], a[N], ad[N];
	static unsigned char row[N * 2];
	static struct tp_block_q8_k q8[N / 256];
	size_t k;
	int i;

	fill(x, 0);
	for (i = 0; i < N; i++)
		a[i] = (float)(urand() * 5);
	tp_act_q8_k(a, q8, N);
	for (i = 0; i < N; i++)
		ad[i] = q8[i / 256].d * q8[i / 256].qs[i % 256];
	{
		double worst = 0;
		int sums = 1, j;

		for (i = 0; i < N; i++)
			if (fabs((double)ad[i] - a[i]) > worst)
				worst = fabs((double)ad[i] - a[i]);
		for (i = 0; i < N / 16; i++) {
			int s = 0;

			for (j = 0; j < 16; j++)
				s += q8[i / 16].qs[(i % 16) * 16 + j];
			sums &= s == q8[i / 16].bsums[i % 16];
		}
		ok(worst <= 5.0 / 127 / 2 * 1.0001 && sums,
		   "q8_k: error %.4f <= amax/254, bsums are the sums of 16", worst);
	}
	for (k = 0; k < 3; k++) {
		enum tp_type t = ktypes[k];
		double worst = 0, ref = 0, mag = 0;
		float dot;

		tp_row_from_f32(t, x, row, N);
		tp_row_to_f32(t, row, y, N);
		for (i = 0; i < N; i++) {
			if (fabs((double)x[i] - y[i]) > worst)
				worst = fabs((double)x[i] - y[i]);
			ref += (double)y[i] * ad[i];
			mag += fabs((double)y[i] * ad[i]);
		}
		/* 4 bits over a range of 2: 1/15 steps; 5 and 6 bits finer */
		ok(worst < (t == TP_Q4_K ? 0.08 : t == TP_Q5_K ? 0.04 : 0.02),
		   "%s: round trip error %.4f", tp_type_name(t), worst);
		dot = tp_quant_dot(t, row, q8, N / 256);
		ok(fabs(dot - ref) <= 1e-5 * mag,
		   "%s: dot on the blocks = double on the dequantised blocks (%g vs %g)",
		   tp_type_name(t), dot, ref);
	}
}

/* ---- against ggml ---------------------------------------------------- */

typedef void (*quant_fn)(const float *x, void *y, int64_t k);
typedef void (*dequant_fn)(const void *x, float *y, int64_t k);
typedef void (*dot_fn)(int n, float *s, size_t bs, const void *vx,
		       size_t bx, const void *vy, size_t by, int nrc);

static void *base, *cpu;

static void *sym(void *h, const char *name)
{
	return h ? dlsym(h, name) : NULL;
}

static int open_ggml(char *why, size_t len)
{
	static const char *const variants[] = { "haswell", "x64", "sse42" };
	const char *dir = getenv("TPRUN_GGML_DIR");
	char path[1024];
	size_t i;

	if (!dir)
		dir = GGML_DIR;
	snprintf(path, sizeof(path), "%s/libggml-base.so", dir);
	base = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!base) {
		snprintf(why, len, "no ggml (%s): tests/llama-ref/setup.sh installs it",
			 dlerror());
		return -1;
	}
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]) && !cpu; i++) {
		snprintf(path, sizeof(path), "%s/libggml-cpu-%s.so", dir,
			 variants[i]);
		if (i == 0 && !__builtin_cpu_supports("avx2"))
			continue;
		cpu = dlopen(path, RTLD_NOW);
	}
	if (sym(cpu, "ggml_cpu_init"))	/* fills its F16 table */
		((void (*)(void))sym(cpu, "ggml_cpu_init"))();
	return 0;
}

static const char *const kname[] = { "q4_K", "q5_K", "q6_K" };

static void test_ggml_kquant(void)
{
	static float x[N], y1[N], y2[N];
	static unsigned char r1[N * 2], r2[N * 2];
	size_t k;
	int kind;

	for (k = 0; k < 3; k++) {
		enum tp_type t = ktypes[k];
		char name[64];
		quant_fn q;
		dequant_fn dq;
		int same_q = 1, same_d = 1;

		snprintf(name, sizeof(name), "quantize_row_%s_ref", kname[k]);
		q = (quant_fn)sym(base, name);
		snprintf(name, sizeof(name), "dequantize_row_%s", kname[k]);
		dq = (dequant_fn)sym(base, name);
		if (!q || !dq) {
			skip(2, "%s: no %s in libggml-base", tp_type_name(t), name);
			continue;
		}
		for (kind = 0; kind < ROWS; kind++) {
			size_t bytes = tp_type_bytes(t, N);

			fill(x, kind);
			memset(r1, 0xa5, sizeof(r1));
			memset(r2, 0xa5, sizeof(r2));
			tp_row_from_f32(t, x, r1, N);
			q(x, r2, N);
			if (memcmp(r1, r2, bytes)) {
				if (same_q)
					diag("%s: row kind %d differs", tp_type_name(t), kind);
				same_q = 0;
			}
			tp_row_to_f32(t, r2, y1, N);
			dq(r2, y2, N);
			same_d &= !memcmp(y1, y2, sizeof(y1));
		}
		ok(same_q, "%s: quantised blocks = ggml's quantize_row_%s_ref, bit for bit (%d rows)",
		   tp_type_name(t), kname[k], ROWS);
		ok(same_d, "%s: dequantised floats = ggml's dequantize_row_%s, bit for bit",
		   tp_type_name(t), kname[k]);
	}
}

static void test_ggml_legacy(void)
{
	static const enum tp_type t[] = { TP_Q4_0, TP_Q4_1, TP_Q5_0, TP_Q5_1,
					  TP_Q8_0 };
	static const char *const nm[] = { "q4_0", "q4_1", "q5_0", "q5_1",
					  "q8_0" };
	static float x[N];
	static unsigned char r1[N * 2], r2[N * 2];
	size_t k;
	int kind, same = 1;

	for (k = 0; k < 5; k++) {
		char name[64];
		quant_fn q;

		snprintf(name, sizeof(name), "quantize_row_%s_ref", nm[k]);
		q = (quant_fn)sym(base, name);
		if (!q) {
			same = 0;
			diag("no %s", name);
			continue;
		}
		for (kind = 0; kind < ROWS; kind++) {
			fill(x, kind);
			tp_row_from_f32(t[k], x, r1, N);
			q(x, r2, N);
			if (memcmp(r1, r2, tp_type_bytes(t[k], N))) {
				diag("%s: row kind %d differs", nm[k], kind);
				same = 0;
			}
		}
	}
	ok(same, "q4_0, q4_1, q5_0, q5_1, q8_0: blocks = ggml's quantize_row_*_ref, bit for bit");
}

static void test_ggml_q8k_dot(void)
{
	static float x[N], a[N];
	static unsigned char row[N * 2];
	static struct tp_block_q8_k m1[N / 256], m2[N / 256];
	quant_fn q8 = (quant_fn)sym(cpu, "quantize_row_q8_K");
	int kind, same = 1, b;
	size_t k;

	if (!q8) {
		skip(4, "no libggml-cpu with quantize_row_q8_K");
		return;
	}
	for (kind = 0; kind < ROWS; kind++) {
		fill(a, kind);
		for (b = 0; b < N; b++)
			a[b] *= 3;
		memset(m1, 0, sizeof(m1));
		memset(m2, 0, sizeof(m2));
		tp_act_q8_k(a, m1, N);
		q8(a, m2, N);
		for (b = 0; b < N / 256; b++)	/* ggml leaves an all-zero block's sums */
			same &= m1[b].d == m2[b].d &&
				!memcmp(m1[b].qs, m2[b].qs, 256) &&
				(m2[b].d == 0 ||
				 !memcmp(m1[b].bsums, m2[b].bsums, 32));
	}
	ok(same, "q8_k activations = ggml-cpu's quantize_row_q8_K, bit for bit");
	for (k = 0; k < 3; k++) {
		enum tp_type t = ktypes[k];
		char name[64];
		dot_fn dot;
		double worst = 0;

		snprintf(name, sizeof(name), "ggml_vec_dot_%s_q8_K", kname[k]);
		dot = (dot_fn)sym(cpu, name);
		if (!dot) {
			skip(1, "no %s", name);
			continue;
		}
		for (kind = 0; kind < ROWS; kind++) {
			static float y[N], ad[N];
			double mag = 0;
			float s1, s2 = 0;
			int i;

			fill(x, kind);
			fill(a, (kind + 2) % ROWS);
			tp_row_from_f32(t, x, row, N);
			tp_act_q8_k(a, m1, N);
			tp_row_to_f32(t, row, y, N);
			for (i = 0; i < N; i++) {
				ad[i] = m1[i / 256].d * m1[i / 256].qs[i % 256];
				mag += fabs((double)y[i] * ad[i]);
			}
			s1 = tp_quant_dot(t, row, m1, N / 256);
			dot(N, &s2, 0, row, 0, m1, 0, 1);
			if (fabs((double)s1 - s2) > 1e-5 * mag + 1e-30 &&
			    fabs((double)s1 - s2) > worst)
				worst = fabs((double)s1 - s2);
			if (fabs((double)s1 - s2) > 1e-5 * mag + 1e-30)
				diag("%s kind %d: %g vs ggml %g (mag %g)",
				     tp_type_name(t), kind, s1, s2, mag);
		}
		ok(worst == 0, "%s: dot on the blocks = ggml's %s (1e-5 of the sum of |terms|)",
		   tp_type_name(t), name);
	}
}

int main(void)
{
	char why[1200];

	plan(7 + 1 + 7 + 6 + 1 + 4);
	tp_math_init();
	test_layout();
	test_fallback();
	test_self();
	if (open_ggml(why, sizeof(why))) {
		skip(6 + 1 + 4, "%s", why);
		return done();
	}
	test_ggml_kquant();
	test_ggml_legacy();
	test_ggml_q8k_dot();
	return done();
}
