// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's newer block types (tools/runner/kernels/qtypes.h): Q2_K, Q3_K,
 * IQ4_NL, IQ4_XS, MXFP4 and the codebook types IQ1_S, IQ1_M, IQ2_XXS,
 * IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S.
 *
 * Always: the lookup tables by their structure (levels, distinct entries,
 * sign parity), the block sizes and fallback types, each quantiser's round
 * trip error, the dot product on the blocks against a double-precision
 * one on the dequantised values.
 *
 * Against ggml itself, when tests/llama-ref installed node-llama-cpp's
 * (TPRUN_GGML_DIR overrides where; else those points are skipped):
 *   - dequantisation of random valid blocks (enough to use every grid
 *     entry): ggml's dequantize_row_* floats, bit for bit, so the tables
 *     and the layouts are ggml's;
 *   - the quantisers of Q2_K, Q3_K (quantize_row_q*_K_ref), IQ4_NL,
 *     IQ4_XS (quantize_iq4_*, what llama.cpp's quantizer calls without an
 *     importance matrix) and MXFP4 (quantize_row_mxfp4_ref): ggml's bytes;
 *   - the portable dot products: the bits of ggml's scalar ones
 *     (ggml_vec_dot_*_generic of its baseline x86-64 build, no FMA) where
 *     tprun adds the same float terms (all but Q3_K and IQ4_XS, which add
 *     one term per super-block where ggml's scalar code adds eight), and
 *     within 1e-5 of the sum of |terms| of ggml's AVX2 kernels.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/iq_tables.h"
#include "kernels/kernels.h"
#include "kernels/qtypes.h"
#include "kernels/quant.h"
#include "runner_blocks.h"
#include "tap.h"

#ifndef GGML_DIR
#define GGML_DIR "."
#endif

struct ty {
	enum tp_type t;
	const char *ggml;	/* ggml's name in its function names */
	int dot_order_same;	/* tprun adds ggml's scalar float terms */
	double rt_err;		/* round trip: largest RMS error / RMS */
};

static const struct ty types[] = {
	{ TP_Q2_K, "q2_K", 1, 0.40 },
	{ TP_Q3_K, "q3_K", 0, 0.22 },
	{ TP_IQ4_NL, "iq4_nl", 1, 0.10 },
	{ TP_IQ4_XS, "iq4_xs", 0, 0.10 },
	{ TP_MXFP4, "mxfp4", 1, 0.25 },
	{ TP_IQ2_XXS, "iq2_xxs", 1, 0.45 },
	{ TP_IQ2_XS, "iq2_xs", 1, 0.40 },
	{ TP_IQ2_S, "iq2_s", 1, 0.38 },
	{ TP_IQ3_XXS, "iq3_xxs", 1, 0.25 },
	{ TP_IQ3_S, "iq3_s", 1, 0.22 },
	{ TP_IQ1_S, "iq1_s", 1, 0.65 },
	{ TP_IQ1_M, "iq1_m", 1, 0.60 },
};
#define NT (int)(sizeof(types) / sizeof(types[0]))

enum { N = 2048 };	/* 8 super-blocks, 64 blocks of 32 */

static uint64_t rs = 777;

static uint32_t urand32(void)
{
	rs = rs * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rs >> 32);
}

static double urand(void)	/* [-1, 1) */
{
	return urand32() / 2147483648.0 - 1.0;
}

/* ---- tables ------------------------------------------------------------- */

/* Every byte of every entry one of LEVELS, and no entry twice. */
static int grid_ok(const uint8_t *bytes, int entries, int width,
		   const int *levels, int nlev)
{
	int i, j, k;

	for (i = 0; i < entries * width; i++) {
		for (k = 0; k < nlev; k++)
			if ((int)(int8_t)bytes[i] == levels[k] ||
			    bytes[i] == levels[k])
				break;
		if (k == nlev)
			return 0;
	}
	for (i = 0; i < entries; i++)
		for (j = 0; j < i; j++)
			if (!memcmp(bytes + i * width, bytes + j * width,
				    (size_t)width))
				return 0;
	return 1;
}

static void test_tables(void)
{
	static const int l2[] = { 8, 25, 43 }, l2s[] = { 8, 25, 43, 62 };
	static const int l1[] = { -1, 0, 1 };
	int l3xxs[8], l3s[8], i, j, signs_ok = 1, asc = 1;

	for (i = 0; i < 8; i++) {
		l3xxs[i] = i < 7 ? 4 + 8 * i : 62;
		l3s[i] = 1 + 2 * i;
	}
	ok(grid_ok((const uint8_t *)tp_iq2xxs_grid, 256, 8, l2, 3) &&
	   grid_ok((const uint8_t *)tp_iq2xs_grid, 512, 8, l2, 3) &&
	   grid_ok((const uint8_t *)tp_iq2s_grid, 1024, 8, l2s, 4),
	   "IQ2 grids: 256, 512, 1024 distinct entries of 8 bytes of 8, 25, 43 (IQ2_S also 62)");
	ok(grid_ok((const uint8_t *)tp_iq3xxs_grid, 256, 4, l3xxs, 8) &&
	   grid_ok((const uint8_t *)tp_iq3s_grid, 512, 4, l3s, 8),
	   "IQ3 grids: 256 entries of 4 bytes of 4, 12, ..., 52, 62, 512 of 1 + 2l, distinct");
	ok(grid_ok((const uint8_t *)tp_iq1s_grid, 2048, 8, l1, 3),
	   "IQ1 grid: 2048 distinct entries of 8 signed bytes -1, 0, 1");
	for (i = 0; i < 128; i++) {
		uint64_t w = tp_ksigns64_iq2xs[i];

		signs_ok &= (tp_ksigns_iq2xs[i] & 127) == i &&
			    __builtin_popcount(tp_ksigns_iq2xs[i]) % 2 == 0;
		for (j = 0; j < 8; j++)
			signs_ok &= (int8_t)(w >> (8 * j)) ==
				    (tp_ksigns_iq2xs[i] >> j & 1 ? -1 : 1);
	}
	ok(signs_ok, "sign patterns: 7 bits and an even count of minus signs, as bytes of +-1");
	for (i = 1; i < 16; i++)
		asc &= tp_kvalues_iq4nl[i] > tp_kvalues_iq4nl[i - 1];
	ok(asc && tp_kvalues_iq4nl[0] == -127 && tp_kvalues_iq4nl[15] == 113 &&
	   tp_kvalues_mxfp4[7] == 12 && tp_kvalues_mxfp4[15] == -12 &&
	   tp_kvalues_mxfp4[1] == 1 && tp_kvalues_mxfp4[8] == 0,
	   "IQ4 values ascending -127..113; MXFP4 the E2M1 values doubled (0..12, then negated)");
}

static void test_layout(void)
{
	static const struct { enum tp_type t; int block, bytes; } want[] = {
		{ TP_Q2_K, 256, 84 }, { TP_Q3_K, 256, 110 },
		{ TP_IQ4_NL, 32, 18 }, { TP_IQ4_XS, 256, 136 },
		{ TP_MXFP4, 32, 17 }, { TP_IQ2_XXS, 256, 66 },
		{ TP_IQ2_XS, 256, 74 }, { TP_IQ2_S, 256, 82 },
		{ TP_IQ3_XXS, 256, 98 }, { TP_IQ3_S, 256, 110 },
		{ TP_IQ1_S, 256, 50 }, { TP_IQ1_M, 256, 56 },
	};
	size_t i;
	int good = 1;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		good &= tp_type_block(want[i].t) == want[i].block &&
			tp_type_bytes(want[i].t, 512) ==
			(size_t)(512 / want[i].block * want[i].bytes);
		if (!good) {
			diag("%s: block %d", tp_type_name(want[i].t),
			     tp_type_block(want[i].t));
			break;
		}
	}
	ok(good, "12 types: GGML's block sizes and bytes");
	ok(tp_type_for_cols(TP_Q2_K, 128) == TP_Q4_0 &&
	   tp_type_for_cols(TP_Q3_K, 96) == TP_Q4_0 &&
	   tp_type_for_cols(TP_IQ2_XXS, 128) == TP_IQ4_NL &&
	   tp_type_for_cols(TP_IQ4_XS, 320) == TP_IQ4_NL &&
	   tp_type_for_cols(TP_IQ1_M, 100) == TP_F16 &&
	   tp_type_for_cols(TP_MXFP4, 64) == TP_MXFP4 &&
	   tp_type_for_cols(TP_IQ3_S, 512) == TP_IQ3_S,
	   "fallbacks as llama.cpp's quantizer: Q2_K/Q3_K -> Q4_0, IQ of 256 -> IQ4_NL, F16 below 32");
	ok(tp_act_for(TP_IQ4_NL) == TP_ACT_Q8_0 && tp_act_for(TP_MXFP4) == TP_ACT_Q8_0 &&
	   tp_act_for(TP_Q2_K) == TP_ACT_Q8_K && tp_act_for(TP_IQ1_M) == TP_ACT_Q8_K &&
	   tp_act_for(TP_IQ2_XXS) == TP_ACT_Q8_K && tp_act_for(TP_IQ4_XS) == TP_ACT_Q8_K,
	   "activations as ggml-cpu's vec_dot_type: Q8_0 for IQ4_NL and MXFP4, Q8_K for the rest");
}

/* ---- quantisers and dot products on their own ------------------------- */

static void act_of(enum tp_type t, const float *a, void *out)
{
	tp_act_convert(tp_act_for(t), a, out, N);
}

/* The activations as the floats the integer sums see */
static void act_values(enum tp_type t, const void *act, double *ad)
{
	int i;

	for (i = 0; i < N; i++)
		if (tp_act_for(t) == TP_ACT_Q8_0) {
			const struct tp_block_q8_0 *q = act;

			ad[i] = (double)tp_f16_to_f32(q[i / 32].d) * q[i / 32].qs[i % 32];
		} else {
			const struct tp_block_q8_k *q = act;

			ad[i] = (double)q[i / 256].d * q[i / 256].qs[i % 256];
		}
}

static void test_self(void)
{
	static float x[N], y[N], a[N];
	static double ad[N];
	static unsigned char row[N * 2], act[N * 2];
	int k, i;

	for (i = 0; i < N; i++) {
		x[i] = (float)(urand() * 0.05);
		a[i] = (float)(urand() * (i % 61 ? 2 : 20));
	}
	for (k = 0; k < NT; k++) {
		enum tp_type t = types[k].t;
		double e2 = 0, x2 = 0, ref = 0, mag = 0;
		float dot;

		tp_row_from_f32(t, x, row, N);
		tp_row_to_f32(t, row, y, N);
		for (i = 0; i < N; i++) {
			e2 += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
			x2 += (double)x[i] * x[i];
		}
		ok(sqrt(e2 / x2) < types[k].rt_err,
		   "%s: round trip RMS error %.3f of RMS (< %.2f)",
		   tp_type_name(t), sqrt(e2 / x2), types[k].rt_err);
		act_of(t, a, act);
		act_values(t, act, ad);
		for (i = 0; i < N; i++) {
			ref += y[i] * ad[i];
			mag += fabs(y[i] * ad[i]);
		}
		dot = tp_quant_dot(t, row, act, N / tp_type_block(t));
		ok(fabs(dot - ref) <= 1e-5 * mag,
		   "%s: dot on the blocks = double on the dequantised blocks (%.6g vs %.6g)",
		   tp_type_name(t), dot, ref);
	}
}

/* ---- against ggml -------------------------------------------------------- */

typedef void (*dequant_fn)(const void *x, float *y, int64_t k);
typedef void (*quant_fn)(const float *x, void *y, int64_t k);
typedef size_t (*quant_rows_fn)(const float *x, void *y, int64_t nrow,
				int64_t n, const float *w);
typedef void (*dot_fn)(int n, float *s, size_t bs, const void *vx,
		       size_t bx, const void *vy, size_t by, int nrc);

static void *base, *cpu_x64, *cpu_avx2;

static void *sym(void *h, const char *fmt, const char *name)
{
	char buf[96];

	snprintf(buf, sizeof(buf), fmt, name);
	return h ? dlsym(h, buf) : NULL;
}

static int open_ggml(char *why, size_t len)
{
	const char *dir = getenv("TPRUN_GGML_DIR");
	char path[1024];

	if (!dir)
		dir = GGML_DIR;
	snprintf(path, sizeof(path), "%s/libggml-base.so", dir);
	base = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!base) {
		snprintf(why, len, "no ggml (%s): tests/llama-ref/setup.sh installs it",
			 dlerror());
		return -1;
	}
	snprintf(path, sizeof(path), "%s/libggml-cpu-x64.so", dir);
	cpu_x64 = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (__builtin_cpu_supports("avx2")) {
		snprintf(path, sizeof(path), "%s/libggml-cpu-haswell.so", dir);
		cpu_avx2 = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	/* their F16 tables */
	if (sym(cpu_x64, "%s", "ggml_cpu_init"))
		((void (*)(void))sym(cpu_x64, "%s", "ggml_cpu_init"))();
	if (sym(cpu_avx2, "%s", "ggml_cpu_init"))
		((void (*)(void))sym(cpu_avx2, "%s", "ggml_cpu_init"))();
	return 0;
}

static void test_ggml_dequant(void)
{
	enum { NB = 4096 };	/* IQ1_S: 131072 groups, 2048 grid entries */
	static unsigned char blk[NB * 136];
	static float y1[NB * 256], y2[NB * 256];
	int k;

	for (k = 0; k < NT; k++) {
		enum tp_type t = types[k].t;
		dequant_fn dq = (dequant_fn)sym(base, "dequantize_row_%s", types[k].ggml);
		int n = NB * tp_type_block(t), bad = 0, i;

		if (!dq) {
			skip(1, "no dequantize_row_%s", types[k].ggml);
			continue;
		}
		random_blocks(t, blk, NB, urand32);
		tp_row_to_f32(t, blk, y1, (size_t)n);
		dq(blk, y2, n);
		for (i = 0; i < n; i++)
			bad += memcmp(&y1[i], &y2[i], 4) != 0;
		ok(!bad, "%s: %d random blocks dequantised = ggml's dequantize_row_%s, bit for bit (%d differ)",
		   tp_type_name(t), NB, types[k].ggml, bad);
	}
}

/* Rows of different character: plain, offset, wide range, sparse with
 * zero blocks, all zero, constant. */
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

static void test_ggml_quant(void)
{
	static const struct { enum tp_type t; const char *fn; int rows; } q[] = {
		{ TP_Q2_K, "quantize_row_q2_K_ref", 0 },
		{ TP_Q3_K, "quantize_row_q3_K_ref", 0 },
		{ TP_IQ4_NL, "quantize_iq4_nl", 1 },
		{ TP_IQ4_XS, "quantize_iq4_xs", 1 },
		{ TP_MXFP4, "quantize_row_mxfp4_ref", 0 },
	};
	static float x[N];
	static unsigned char r1[N * 2], r2[N * 2];
	size_t k;
	int kind;

	for (k = 0; k < sizeof(q) / sizeof(q[0]); k++) {
		void *fn = sym(base, "%s", q[k].fn);
		int same = 1;

		if (!fn) {
			skip(1, "no %s", q[k].fn);
			continue;
		}
		for (kind = 0; kind < 6; kind++) {
			fill(x, kind);
			memset(r1, 0xa5, sizeof(r1));
			memset(r2, 0x5a, sizeof(r2));
			tp_row_from_f32(q[k].t, x, r1, N);
			if (q[k].rows)
				((quant_rows_fn)fn)(x, r2, 1, N, NULL);
			else
				((quant_fn)fn)(x, r2, N);
			if (memcmp(r1, r2, tp_type_bytes(q[k].t, N))) {
				if (same)
					diag("%s: row kind %d differs",
					     tp_type_name(q[k].t), kind);
				same = 0;
			}
		}
		ok(same, "%s: blocks = ggml's %s, bit for bit (6 kinds of rows)",
		   tp_type_name(q[k].t), q[k].fn);
	}
}

static void test_ggml_dot(void)
{
	static float a[N], x[N];
	static unsigned char row[N * 2], act[N * 2];
	int k, r;

	for (k = 0; k < NT; k++) {
		enum tp_type t = types[k].t;
		const char *an = tp_act_for(t) == TP_ACT_Q8_0 ? "0" : "K";
		char fmt[64];
		dot_fn gen, simd;
		int same = 1, close = 1, nb = N / tp_type_block(t);

		snprintf(fmt, sizeof(fmt), "ggml_vec_dot_%%s_q8_%s_generic", an);
		gen = (dot_fn)sym(cpu_x64, fmt, types[k].ggml);
		snprintf(fmt, sizeof(fmt), "ggml_vec_dot_%%s_q8_%s", an);
		simd = (dot_fn)sym(cpu_avx2, fmt, types[k].ggml);
		if (!gen) {
			skip(2, "no ggml_vec_dot_%s generic", types[k].ggml);
			continue;
		}
		for (r = 0; r < 40; r++) {
			static float y[N];
			static double ad[N];
			double mag = 0;
			float s1, s2 = 0, s3 = 0;
			int i;

			/* half quantised rows, half random blocks */
			if (r % 2) {
				fill(x, r / 2 % 4);
				tp_row_from_f32(t, x, row, N);
			} else {
				random_blocks(t, row, nb, urand32);
			}
			fill(a, r % 3 ? 0 : 2);
			act_of(t, a, act);
			tp_row_to_f32(t, row, y, N);
			act_values(t, act, ad);
			for (i = 0; i < N; i++)
				mag += fabs(y[i] * ad[i]);
			s1 = tp_quant_dot(t, row, act, nb);
			gen(N, &s2, 0, row, 0, act, 0, 1);
			if (types[k].dot_order_same)
				same &= !memcmp(&s1, &s2, 4);
			else
				same &= fabs((double)s1 - s2) <= 1e-5 * mag;
			if (!same && r == 0)
				diag("%s: %.9g, ggml %.9g", tp_type_name(t), s1, s2);
			if (simd) {
				simd(N, &s3, 0, row, 0, act, 0, 1);
				close &= fabs((double)s1 - s3) <= 1e-5 * mag;
			}
		}
		if (types[k].dot_order_same)
			ok(same, "%s: 40 dot products = ggml's scalar ggml_vec_dot_%s_q8_%s_generic, bit for bit",
			   tp_type_name(t), types[k].ggml, an);
		else
			ok(same, "%s: 40 dot products within 1e-5 of the sum of |terms| of ggml's scalar one (one float term per super-block where it adds eight)",
			   tp_type_name(t));
		if (simd)
			ok(close, "%s: within 1e-5 of the sum of |terms| of ggml's AVX2 ggml_vec_dot_%s_q8_%s",
			   tp_type_name(t), types[k].ggml, an);
		else
			skip(1, "no AVX2 ggml");
	}
}

int main(void)
{
	char why[1200];

	tp_math_init();
	plan(NO_PLAN);
	test_tables();
	test_layout();
	test_self();
	if (open_ggml(why, sizeof(why))) {
		skip(NT * 3 + 5, "%s", why);
		return done();
	}
	test_ggml_dequant();
	test_ggml_quant();
	test_ggml_dot();
	return done();
}
