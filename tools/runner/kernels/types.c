// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tensor element types: their names, block sizes and bytes, and rows of
 * any type to and from floats (Q8_0 here, the other quantised types in
 * quant.c, F16 and BF16 in float16.c).
 */
#include <math.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/quant.h"
#include "kernels/types.h"

void tp_quantize_q8_0(const float *x, struct tp_block_q8_0 *y, size_t n)
{
	size_t b, j;

	for (b = 0; b < n / TP_QK8_0; b++, x += TP_QK8_0) {
		float amax = 0, d, id;

		for (j = 0; j < TP_QK8_0; j++)
			if (fabsf(x[j]) > amax)
				amax = fabsf(x[j]);
		d = amax / 127.0f;
		id = d != 0.0f ? 1.0f / d : 0.0f;
		y[b].d = tp_f32_to_f16(d);
		for (j = 0; j < TP_QK8_0; j++)
			y[b].qs[j] = (int8_t)roundf(x[j] * id);
	}
}

void tp_dequantize_q8_0(const struct tp_block_q8_0 *x, float *y, size_t n)
{
	size_t b, j;

	for (b = 0; b < n / TP_QK8_0; b++) {
		float d = tp_f16_to_f32(x[b].d);

		for (j = 0; j < TP_QK8_0; j++)
			*y++ = d * (float)x[b].qs[j];
	}
}

const char *tp_type_name(enum tp_type t)
{
	switch (t) {
	case TP_F32: return "f32";
	case TP_F16: return "f16";
	case TP_Q8_0: return "q8_0";
	case TP_BF16: return "bf16";
	case TP_Q4_0: return "q4_0";
	case TP_Q4_1: return "q4_1";
	case TP_Q5_0: return "q5_0";
	case TP_Q5_1: return "q5_1";
	case TP_Q4_K: return "q4_k";
	case TP_Q5_K: return "q5_k";
	case TP_Q6_K: return "q6_k";
	case TP_Q2_K: return "q2_k";
	case TP_Q3_K: return "q3_k";
	case TP_IQ4_NL: return "iq4_nl";
	case TP_IQ4_XS: return "iq4_xs";
	case TP_MXFP4: return "mxfp4";
	case TP_IQ1_S: return "iq1_s";
	case TP_IQ1_M: return "iq1_m";
	case TP_IQ2_XXS: return "iq2_xxs";
	case TP_IQ2_XS: return "iq2_xs";
	case TP_IQ2_S: return "iq2_s";
	case TP_IQ3_XXS: return "iq3_xxs";
	case TP_IQ3_S: return "iq3_s";
	}
	return NULL;
}

int tp_type_block(enum tp_type t)
{
	if (tp_type_is_super(t))
		return TP_QK_K;
	return t == TP_Q8_0 || t == TP_Q4_0 || t == TP_Q4_1 || t == TP_Q5_0 ||
	       t == TP_Q5_1 || t == TP_IQ4_NL || t == TP_MXFP4 ? TP_QK8_0 : 1;
}

size_t tp_type_bytes(enum tp_type t, size_t n)
{
	switch (t) {
	case TP_F32: return n * 4;
	case TP_F16:
	case TP_BF16: return n * 2;
	case TP_Q8_0: return n / TP_QK8_0 * sizeof(struct tp_block_q8_0);
	default: return n / (size_t)tp_type_block(t) * tp_quant_block_bytes(t);
	}
}

void tp_row_to_f32(enum tp_type t, const void *row, float *out, size_t n)
{
	const uint16_t *h = row;
	size_t i;

	switch (t) {
	case TP_F32:
		memcpy(out, row, n * sizeof(float));
		break;
	case TP_F16:
		for (i = 0; i < n; i++)
			out[i] = tp_f16_table[h[i]];
		break;
	case TP_BF16:
		for (i = 0; i < n; i++)
			out[i] = tp_bf16_to_f32(h[i]);
		break;
	case TP_Q8_0:
		tp_dequantize_q8_0(row, out, n);
		break;
	default:
		tp_dequant_row(t, row, out, n);
	}
}

void tp_row_from_f32(enum tp_type t, const float *in, void *row, size_t n)
{
	uint16_t *h = row;
	size_t i;

	switch (t) {
	case TP_F32:
		memcpy(row, in, n * sizeof(float));
		break;
	case TP_F16:
		for (i = 0; i < n; i++)
			h[i] = tp_f32_to_f16(in[i]);
		break;
	case TP_BF16:
		for (i = 0; i < n; i++)
			h[i] = tp_f32_to_bf16(in[i]);
		break;
	case TP_Q8_0:
		tp_quantize_q8_0(in, row, n);
		break;
	default:
		tp_quant_row(t, in, row, n);
	}
}

