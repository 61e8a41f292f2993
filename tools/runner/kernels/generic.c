// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The portable dot products: plain C for every weight type, the reference
 * the SIMD kernels are tested against, and what other CPUs run.
 */
#include "kernels/float16.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/vector.h"

static float dot_f32(const void *w, const void *x, int n)
{
	return tp_dot_f32(w, x, n);
}

/* F16/BF16 rows against floats already rounded to F16/BF16 */
static float dot_f16(const void *w, const void *x, int n)
{
	return tp_dot(TP_F16, w, x, n);
}

static float dot_bf16(const void *w, const void *x, int n)
{
	return tp_dot(TP_BF16, w, x, n);
}

/* Q8_0 x Q8_0: an exact integer sum per block, scaled by both scales. */
static float dot_q8_0(const void *wv, const void *xv, int n)
{
	const struct tp_block_q8_0 *w = wv, *x = xv;
	float s = 0;
	int b, j;

	for (b = 0; b < n / TP_QK8_0; b++) {
		int sumi = 0;

		for (j = 0; j < TP_QK8_0; j++)
			sumi += w[b].qs[j] * x[b].qs[j];
		s += (float)sumi * (tp_f16_table[w[b].d] *
				    tp_f16_table[x[b].d]);
	}
	return s;
}

#define QUANT_DOT(name, type, block)					\
static float name(const void *w, const void *x, int n)			\
{									\
	return tp_quant_dot(type, w, x, n / (block));			\
}
QUANT_DOT(dot_q4_0, TP_Q4_0, TP_QK)
QUANT_DOT(dot_q4_1, TP_Q4_1, TP_QK)
QUANT_DOT(dot_q5_0, TP_Q5_0, TP_QK)
QUANT_DOT(dot_q5_1, TP_Q5_1, TP_QK)
QUANT_DOT(dot_q4_k, TP_Q4_K, TP_QK_K)
QUANT_DOT(dot_q5_k, TP_Q5_K, TP_QK_K)
QUANT_DOT(dot_q6_k, TP_Q6_K, TP_QK_K)
QUANT_DOT(dot_q2_k, TP_Q2_K, TP_QK_K)
QUANT_DOT(dot_q3_k, TP_Q3_K, TP_QK_K)
QUANT_DOT(dot_iq4_nl, TP_IQ4_NL, TP_QK)
QUANT_DOT(dot_iq4_xs, TP_IQ4_XS, TP_QK_K)
QUANT_DOT(dot_mxfp4, TP_MXFP4, TP_QK)
QUANT_DOT(dot_iq2_xxs, TP_IQ2_XXS, TP_QK_K)
QUANT_DOT(dot_iq2_xs, TP_IQ2_XS, TP_QK_K)
QUANT_DOT(dot_iq2_s, TP_IQ2_S, TP_QK_K)
QUANT_DOT(dot_iq3_xxs, TP_IQ3_XXS, TP_QK_K)
QUANT_DOT(dot_iq3_s, TP_IQ3_S, TP_QK_K)
QUANT_DOT(dot_iq1_s, TP_IQ1_S, TP_QK_K)
QUANT_DOT(dot_iq1_m, TP_IQ1_M, TP_QK_K)

void tp_kernels_fill_generic(struct tp_kernels *k)
{
	int i;

	for (i = 0; i < TP_TYPE_SLOTS; i++)
		k->dot[i] = dot_f32;	/* unused slots: no type has them */
	for (i = 0; i < TP_TYPE_SLOTS; i++) {
		k->dot4[i] = NULL;	/* generic: four dot() calls */
		k->rows4[i] = NULL;
	}
	k->dot[TP_F32] = dot_f32;
	k->dot[TP_F16] = dot_f16;
	k->dot[TP_BF16] = dot_bf16;
	k->dot[TP_Q8_0] = dot_q8_0;
	k->dot[TP_Q4_0] = dot_q4_0;
	k->dot[TP_Q4_1] = dot_q4_1;
	k->dot[TP_Q5_0] = dot_q5_0;
	k->dot[TP_Q5_1] = dot_q5_1;
	k->dot[TP_Q4_K] = dot_q4_k;
	k->dot[TP_Q5_K] = dot_q5_k;
	k->dot[TP_Q6_K] = dot_q6_k;
	k->dot[TP_Q2_K] = dot_q2_k;
	k->dot[TP_Q3_K] = dot_q3_k;
	k->dot[TP_IQ4_NL] = dot_iq4_nl;
	k->dot[TP_IQ4_XS] = dot_iq4_xs;
	k->dot[TP_MXFP4] = dot_mxfp4;
	k->dot[TP_IQ2_XXS] = dot_iq2_xxs;
	k->dot[TP_IQ2_XS] = dot_iq2_xs;
	k->dot[TP_IQ2_S] = dot_iq2_s;
	k->dot[TP_IQ3_XXS] = dot_iq3_xxs;
	k->dot[TP_IQ3_S] = dot_iq3_s;
	k->dot[TP_IQ1_S] = dot_iq1_s;
	k->dot[TP_IQ1_M] = dot_iq1_m;
}
