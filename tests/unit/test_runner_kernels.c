// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's dot-product kernels: each instruction set's table, when this CPU
 * has it, against the generic one on the same weights and activations.
 * Integer arithmetic (the quantised types): the same bits. Float (F32,
 * F16, BF16, summed in another order, with FMA): within 2^-20 of the sum
 * of |w x|. Each table's kernels for 4 inputs (prefill) and for 4 weight
 * rows (decoding): the bits of its dot(), row by row. Then tp_matmul on a pool of 3 threads, with the 4-row
 * kernels of prefill, against the same dot products one row at a time
 * (neither the split nor the batch may change a bit).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/float16.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "runner_blocks.h"
#include "tap.h"

static const enum tp_type types[] = {
	TP_F32, TP_F16, TP_BF16, TP_Q8_0, TP_Q4_0, TP_Q4_1, TP_Q5_0,
	TP_Q5_1, TP_Q4_K, TP_Q5_K, TP_Q6_K, TP_Q2_K, TP_Q3_K, TP_IQ4_NL,
	TP_IQ4_XS, TP_MXFP4, TP_IQ1_S, TP_IQ1_M, TP_IQ2_XXS, TP_IQ2_XS,
	TP_IQ2_S, TP_IQ3_XXS, TP_IQ3_S,
};
#define NTYPES (int)(sizeof(types) / sizeof(types[0]))

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float frand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 11) * 0x1p-53 * 2 - 1);
}

static uint32_t rand32(void)
{
	frand();
	return (uint32_t)(rng >> 32);
}

/* The newer block types, whose tests also take random valid blocks */
static int newer(enum tp_type t)
{
	return t == TP_Q2_K || t == TP_Q3_K || t == TP_IQ4_NL ||
	       t == TP_IQ4_XS || t == TP_MXFP4 || t == TP_IQ1_S ||
	       t == TP_IQ1_M || t == TP_IQ2_XXS || t == TP_IQ2_XS ||
	       t == TP_IQ2_S || t == TP_IQ3_XXS || t == TP_IQ3_S;
}

static int is_float(enum tp_type t)
{
	return t == TP_F32 || t == TP_F16 || t == TP_BF16;
}

/* Lengths: whole blocks, and for floats also tails of 1..31. */
static const int lengths_q[] = { 256, 512, 2048, 5632 };
/* 32-element blocks: also counts that leave 1..3 after groups of four */
static const int lengths_32[] = { 96, 2080, 2048, 5664 };
static const int lengths_f[] = { 8, 37, 256, 1000, 2048, 5641 };

/* W (row of N of T from floats with a spread of magnitudes; for the
 * newer types every other call random valid blocks), X converted */
static void make_inputs(enum tp_type t, int n, void *w, void *act, float *wf,
			float *xf)
{
	static int calls;
	int i;

	for (i = 0; i < n; i++) {
		/* a few large values, as real activations have */
		xf[i] = frand() * (i % 97 == 0 ? 20.0f : 1.0f);
		wf[i] = frand() * 0.1f;
	}
	if (newer(t) && calls++ % 2)
		random_blocks(t, w, n / tp_type_block(t), rand32);
	else
		tp_row_from_f32(t, wf, w, (size_t)n);
	tp_act_convert(tp_act_for(t), xf, act, n);
}

static double abs_sum(enum tp_type t, const void *w, const float *xf, int n)
{
	float *wd = malloc((size_t)n * sizeof(float));
	double s = 0;
	int i;

	tp_row_to_f32(t, w, wd, (size_t)n);
	for (i = 0; i < n; i++)
		s += fabs((double)wd[i] * xf[i]);
	free(wd);
	return s;
}

static void compare_isa(const struct tp_kernels *k, const struct tp_kernels *g)
{
	int ti, li, trial;

	for (ti = 0; ti < NTYPES; ti++) {
		enum tp_type t = types[ti];
		const int *lens = is_float(t) ? lengths_f :
				  tp_type_block(t) == 32 ? lengths_32 : lengths_q;
		int nl = is_float(t) ? 6 : 4, bad = 0, runs = 0;
		double worst = 0;

		for (li = 0; li < nl; li++) {
			int n = lens[li];
			void *w = calloc(tp_type_bytes(t, (size_t)n) + 64, 1);
			void *act = calloc(tp_act_bytes(tp_act_for(t), n) + 64, 1);
			float *wf = malloc((size_t)n * sizeof(float));
			float *xf = malloc((size_t)n * sizeof(float));

			for (trial = 0; trial < 20; trial++) {
				float a, b;

				make_inputs(t, n, w, act, wf, xf);
				a = g->dot[t](w, act, n);
				b = k->dot[t](w, act, n);
				runs++;
				if (is_float(t)) {
					double err = fabs((double)a - b) /
						     (abs_sum(t, w, xf, n) + 1e-30);

					if (err > worst)
						worst = err;
					bad += err > 0x1p-20;
				} else {
					bad += memcmp(&a, &b, sizeof(a)) != 0;
				}
				if (bad == 1 && !is_float(t) &&
				    memcmp(&a, &b, sizeof(a)))
					diag("%s n %d: generic %.9g, %s %.9g",
					     tp_type_name(t), n, (double)a,
					     k->name, (double)b);
			}
			free(w);
			free(act);
			free(wf);
			free(xf);
		}
		if (is_float(t))
			ok(!bad, "%s %s: %d dot products within 2^-20 of sum|wx| of generic (worst %.2g)",
			   k->name, tp_type_name(t), runs, worst);
		else
			ok(!bad, "%s %s: %d dot products, the same bits as generic (%d differ)",
			   k->name, tp_type_name(t), runs, bad);
	}
}

/* Each table's 4-row kernel against its own dot() and generic's, row by
 * row: the bits of a row's product may not depend on the batch it is in
 * (nor on the table). */
static void dot4_rows(const struct tp_kernels *k, const struct tp_kernels *g)
{
	int ti, li, r, trial;

	for (ti = 0; ti < NTYPES; ti++) {
		enum tp_type t = types[ti];
		const int *lens = is_float(t) ? lengths_f :
				  tp_type_block(t) == 32 ? lengths_32 : lengths_q;
		int nl = is_float(t) ? 6 : 4, bad = 0, runs = 0;

		if (!k->dot4[t])
			continue;
		for (li = 0; li < nl; li++) {
			int n = lens[li];
			size_t ab = tp_act_bytes(tp_act_for(t), n);
			void *w = calloc(tp_type_bytes(t, (size_t)n) + 64, 1);
			char *act = calloc(4 * ab + 64, 1);
			float *wf = malloc((size_t)n * sizeof(float));
			float *xf = malloc((size_t)n * sizeof(float));

			for (trial = 0; trial < 5; trial++) {
				float out[4];

				for (r = 0; r < 4; r++)
					make_inputs(t, n, w, act + r * ab, wf, xf);
				k->dot4[t](w, act, ab, n, out);
				for (r = 0; r < 4; r++) {
					float d = k->dot[t](w, act + r * ab, n);
					float e = g->dot[t](w, act + r * ab, n);

					runs++;
					bad += memcmp(&d, &out[r], sizeof(d)) != 0 ||
					       (!is_float(t) &&
						memcmp(&e, &out[r], sizeof(e)) != 0);
				}
			}
			free(w);
			free(act);
			free(wf);
			free(xf);
		}
		ok(!bad, "%s %s: 4-row kernel, %d rows with the bits of dot()%s (%d differ)",
		   k->name, tp_type_name(t), runs,
		   is_float(t) ? "" : " and generic's", bad);
	}
}

/* Each table's 4-weight-row kernel (decoding) against its own dot() and
 * (quantised types) generic's. */
static void rows4_rows(const struct tp_kernels *k, const struct tp_kernels *g)
{
	int ti, li, r, trial;

	for (ti = 0; ti < NTYPES; ti++) {
		enum tp_type t = types[ti];
		const int *lens = tp_type_block(t) == 32 ? lengths_32 : lengths_q;
		int bad = 0, runs = 0;

		if (!k->rows4[t])
			continue;
		for (li = 0; li < 4; li++) {
			int n = lens[li];
			size_t rb = tp_type_bytes(t, (size_t)n) + 8; /* a gap */
			char *w = calloc(4 * rb + 64, 1);
			void *act = calloc(tp_act_bytes(tp_act_for(t), n) + 64, 1);
			float *wf = malloc((size_t)n * sizeof(float));
			float *xf = malloc((size_t)n * sizeof(float));

			for (trial = 0; trial < 5; trial++) {
				float out[4];

				for (r = 0; r < 4; r++)
					make_inputs(t, n, w + r * rb, act, wf, xf);
				k->rows4[t](w, rb, tp_quant_block_bytes(t), act, n,
					    out);
				for (r = 0; r < 4; r++) {
					float d = k->dot[t](w + r * rb, act, n);
					float e = g->dot[t](w + r * rb, act, n);

					runs++;
					bad += memcmp(&d, &out[r], sizeof(d)) != 0 ||
					       (!is_float(t) &&
						memcmp(&e, &out[r], sizeof(e)) != 0);
				}
			}
			free(w);
			free(act);
			free(wf);
			free(xf);
		}
		ok(!bad, "%s %s: 4-weight-row kernel, %d rows with the bits of dot()%s (%d differ)",
		   k->name, tp_type_name(t), runs,
		   is_float(t) ? "" : " and generic's", bad);
	}
}

/* A quantised row whose block scales are zero, and all-zero activations */
static void zeros(const struct tp_kernels *k, const struct tp_kernels *g)
{
	static char w[8192], act[16384];
	float x[512] = { 0 };
	int ti, same = 1;

	for (ti = 0; ti < NTYPES; ti++) {
		enum tp_type t = types[ti];
		float a, b;

		memset(w, 0, sizeof(w));
		tp_act_convert(tp_act_for(t), x, act, 512);
		a = g->dot[t](w, act, 512);
		b = k->dot[t](w, act, 512);
		same &= memcmp(&a, &b, sizeof(a)) == 0;
	}
	ok(same, "%s: zero rows and activations give generic's bits", k->name);
}

/* tp_matmul on 3 threads, batch 9 (the 4-row kernels twice, then one
 * row), against one dot per (row, input). */
static void matmul_split(void)
{
	const struct tp_kernels *k = tp_kernels();
	int rows = 37, batch = 9, ti, r, b;

	for (ti = 0; ti < NTYPES; ti++) {
		enum tp_type t = types[ti];
		/* 17 blocks of 32: one after the 4-block groups; floats: a tail */
		int cols = tp_type_block(t) == TP_QK_K ? 512 :
			   tp_type_block(t) == TP_QK ? 544 : 517;
		size_t rb = tp_type_bytes(t, (size_t)cols);
		size_t ab = tp_act_bytes(tp_act_for(t), cols);
		char *wd = calloc((size_t)rows, rb), *act = calloc(batch, ab);
		float *wf = malloc(sizeof(float) * cols);
		float *x = malloc(sizeof(float) * cols * batch);
		float *y = malloc(sizeof(float) * rows * batch);
		float *want = malloc(sizeof(float) * rows * batch);
		struct tp_mat m = { .type = t, .rows = rows, .cols = cols,
				    .stride = rb, .data = wd };
		int same = 1;

		for (r = 0; r < rows; r++) {
			for (b = 0; b < cols; b++)
				wf[b] = frand();
			tp_row_from_f32(t, wf, wd + r * rb, (size_t)cols);
		}
		for (b = 0; b < cols * batch; b++)
			x[b] = frand();
		for (b = 0; b < batch; b++)
			tp_act_convert(tp_act_for(t), x + b * cols,
				       act + b * ab, cols);
		tp_matmul(y, x, &m, batch);
		memcpy(want, y, sizeof(float) * rows * batch);
		for (b = 0; b < batch; b++)
			for (r = 0; r < rows; r++) {
				float d = k->dot[t](wd + r * rb, act + b * ab,
						    cols);

				same &= memcmp(&d, &y[b * rows + r],
					       sizeof(d)) == 0;
			}
		ok(same, "tp_matmul %s on %d threads, batch %d, %d columns: each output the bits of its dot product",
		   tp_type_name(t), tp_pool_threads(), batch, cols);
		/* the same rows interleaved for decoding (36 of them: groups
		 * of 4), at batch 9 (prefill gathers them back) and batch 1 */
		m.rows = 36;
		tp_mat_interleave(&m);
		if (m.interleaved) {
			float *y1 = malloc(sizeof(float) * 36);

			same = 1;
			tp_matmul(y, x, &m, batch);
			tp_matmul(y1, x, &m, 1);
			for (b = 0; b < batch; b++)
				for (r = 0; r < 36; r++)
					same &= memcmp(&y[b * 36 + r],
						&want[b * rows + r], 4) == 0;
			for (r = 0; r < 36; r++)
				same &= memcmp(&y1[r], &want[r], 4) == 0;
			ok(same, "tp_matmul %s interleaved by 4 rows, batch %d and 1: the same bits",
			   tp_type_name(t), batch);
			free(y1);
		}
		free(wd);
		free(act);
		free(wf);
		free(x);
		free(y);
		free(want);
	}
}

int main(void)
{
	const struct tp_kernels *g;
	int isa;

	tp_math_init();
	tp_pool_set_threads(3);
	plan(NO_PLAN);
	g = tp_kernels_for(TP_ISA_GENERIC);
	ok(g && !strcmp(g->name, "generic"), "the generic table is always there");
	diag("kernels in use: %s", tp_kernels()->name);
	for (isa = TP_ISA_GENERIC + 1; isa < TP_ISA_COUNT; isa++) {
		const struct tp_kernels *k = tp_kernels_for((enum tp_isa)isa);

		if (!k) {
			skip(1, "%s: no kernels, or this CPU lacks it",
			     tp_isa_name((enum tp_isa)isa));
			continue;
		}
		compare_isa(k, g);
		zeros(k, g);
		dot4_rows(k, g);
		rows4_rows(k, g);
	}
	matmul_split();
	return done();
}
