// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Activations converted for a weight type's dot product, as llama.cpp's
 * CPU backend feeds them: F16 and BF16 weights multiply activations
 * rounded to F16 and BF16; Q8_0, Q4_0, Q5_0, IQ4_NL and MXFP4 weights,
 * activations quantised to Q8_0; Q4_1 and Q5_1, to Q8_1; the K-quants
 * and the other IQ types (all of 256-element super-blocks), to Q8_K.
 */
#include <math.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"

enum tp_act tp_act_for(enum tp_type t)
{
	switch (t) {
	case TP_F16: return TP_ACT_F16;
	case TP_BF16: return TP_ACT_BF16;
	case TP_Q8_0:
	case TP_Q4_0:
	case TP_Q5_0:
	case TP_IQ4_NL:
	case TP_MXFP4: return TP_ACT_Q8_0;
	case TP_Q4_1:
	case TP_Q5_1: return TP_ACT_Q8_1;
	default:
		return tp_type_is_super(t) ? TP_ACT_Q8_K : TP_ACT_F32;
	}
}

size_t tp_act_bytes(enum tp_act a, int n)
{
	switch (a) {
	case TP_ACT_Q8_0: return (size_t)n / TP_QK8_0 * sizeof(struct tp_block_q8_0);
	case TP_ACT_Q8_1: return (size_t)n / TP_QK * sizeof(struct tp_block_q8_1);
	case TP_ACT_Q8_K: return (size_t)n / TP_QK_K * sizeof(struct tp_block_q8_k);
	default: return (size_t)n * sizeof(float);
	}
}

/* To Q8_0 as llama.cpp's x86 quantize_row_q8_0 (scale 127/amax, rounding
 * to nearest even). */
static void act_q8_0(const float *x, struct tp_block_q8_0 *y, int n)
{
	int b, j;

	for (b = 0; b < n / TP_QK8_0; b++, x += TP_QK8_0) {
		float amax = 0, id;

		for (j = 0; j < TP_QK8_0; j++)
			if (fabsf(x[j]) > amax)
				amax = fabsf(x[j]);
		y[b].d = tp_f32_to_f16(amax / 127.0f);
		id = amax != 0.0f ? 127.0f / amax : 0.0f;
		for (j = 0; j < TP_QK8_0; j++)
			y[b].qs[j] = (int8_t)rintf(x[j] * id);
	}
}

void tp_act_convert(enum tp_act a, const float *x, void *out, int n)
{
	float *f = out;
	int i;

	switch (a) {
	case TP_ACT_F32:
		memcpy(out, x, (size_t)n * sizeof(float));
		break;
	case TP_ACT_F16:
		for (i = 0; i < n; i++)
			f[i] = tp_f16_to_f32(tp_f32_to_f16(x[i]));
		break;
	case TP_ACT_BF16:
		for (i = 0; i < n; i++)
			f[i] = tp_bf16_to_f32(tp_f32_to_bf16(x[i]));
		break;
	case TP_ACT_Q8_0:
		act_q8_0(x, out, n);
		break;
	case TP_ACT_Q8_1:
		tp_act_q8_1(x, out, n);
		break;
	case TP_ACT_Q8_K:
		tp_act_q8_k(x, out, n);
		break;
	}
}
