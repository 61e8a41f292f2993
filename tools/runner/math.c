// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tprun's math kernels; see tpmath.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"
#include "tpmath.h"

float tp_f16_table[65536];	/* filled by tp_math_init() */

static inline uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

float tp_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;

	if (exp == 0)	/* zero or subnormal: mant * 2^-24, exact */
		return u2f(f2u((float)mant * 0x1p-24f) | sign);
	if (exp == 31)	/* infinity or NaN */
		return u2f(sign | 0x7f800000u | (mant << 13));
	return u2f(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t tp_f32_to_f16(float f)
{
	uint32_t x = f2u(f), sign = (x >> 16) & 0x8000, ax = x & 0x7fffffff;
	uint32_t h, rem;

	if (ax > 0x7f800000u)		/* NaN stays NaN (quiet) */
		return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
	if (ax >= 0x477ff000u)		/* >= 65520 rounds to infinity */
		return (uint16_t)(sign | 0x7c00);
	if (ax < 0x38800000u)		/* below 2^-14: subnormal or zero */
		return (uint16_t)(sign |
				  (uint32_t)nearbyintf(u2f(ax) * 0x1p24f));
	h = (((ax >> 23) - 112) << 10) | ((ax & 0x7fffff) >> 13);
	rem = ax & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;			/* a carry moves into the exponent */
	return (uint16_t)(sign | h);
}

float tp_bf16_to_f32(uint16_t h)
{
	return u2f((uint32_t)h << 16);
}

uint16_t tp_f32_to_bf16(float f)
{
	uint32_t x = f2u(f);

	if ((x & 0x7fffffff) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

void tp_math_init(void)
{
	static int done;
	uint32_t i;

	if (done)
		return;
	for (i = 0; i < 65536; i++)
		tp_f16_table[i] = tp_f16_to_f32((uint16_t)i);
	done = 1;
}

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

/*
 * The dot products keep eight partial sums (element i goes to sum i % 8),
 * add them pairwise and then the tail: one fixed order of operations per
 * length, so a value never depends on how the caller batched its work,
 * and the F16/BF16 rows give exactly the bits of their F32 conversion.
 */
#define COMBINE8(a) (((a[0] + a[1]) + (a[2] + a[3])) + \
		     ((a[4] + a[5]) + (a[6] + a[7])))

float tp_dot_f32(const float *w, const float *x, int n)
{
	float a[8] = { 0 }, s;
	int i = 0, k;

	for (; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++)
			a[k] += w[i + k] * x[i + k];
	s = COMBINE8(a);
	for (; i < n; i++)
		s += w[i] * x[i];
	return s;
}

static float dot_f16(const uint16_t *w, const float *x, int n)
{
	float a[8] = { 0 }, s;
	int i = 0, k;

	for (; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++)
			a[k] += tp_f16_table[w[i + k]] * x[i + k];
	s = COMBINE8(a);
	for (; i < n; i++)
		s += tp_f16_table[w[i]] * x[i];
	return s;
}

static float dot_bf16(const uint16_t *w, const float *x, int n)
{
	float a[8] = { 0 }, s;
	int i = 0, k;

	for (; i + 8 <= n; i += 8)
		for (k = 0; k < 8; k++)
			a[k] += tp_bf16_to_f32(w[i + k]) * x[i + k];
	s = COMBINE8(a);
	for (; i < n; i++)
		s += tp_bf16_to_f32(w[i]) * x[i];
	return s;
}

/* Per block: sum q*x in eight partial sums, then scale once. */
static float dot_q8_0(const struct tp_block_q8_0 *w, const float *x, int n)
{
	float s = 0;
	int b, i, k;

	for (b = 0; b < n / TP_QK8_0; b++, x += TP_QK8_0) {
		float a[8] = { 0 }, q[TP_QK8_0];

		/* converted first: both loops vectorise, same bits */
		for (i = 0; i < TP_QK8_0; i++)
			q[i] = (float)w[b].qs[i];
		for (i = 0; i < TP_QK8_0; i += 8)
			for (k = 0; k < 8; k++)
				a[k] += q[i + k] * x[i + k];
		s += tp_f16_table[w[b].d] * COMBINE8(a);
	}
	return s;
}

float tp_dot(enum tp_type t, const void *row, const float *x, int n)
{
	switch (t) {
	case TP_F32: return tp_dot_f32(row, x, n);
	case TP_F16: return dot_f16(row, x, n);
	case TP_BF16: return dot_bf16(row, x, n);
	case TP_Q8_0: return dot_q8_0(row, x, n);
	default: {
		float tmp[TP_QK_K], s = 0;
		int b, bk = tp_type_block(t);

		/* unquantised activations: the blocks as floats */
		for (b = 0; b < n / bk; b++) {
			tp_dequant_row(t, (const char *)row + (size_t)b *
				       tp_quant_block_bytes(t), tmp,
				       (size_t)bk);
			s += tp_dot_f32(tmp, x + b * bk, bk);
		}
		return s;
	}
	}
}

void tp_rmsnorm(float *out, const float *x, const float *w, int n, float eps)
{
	double ss = 0;
	float scale;
	int i;

	for (i = 0; i < n; i++)
		ss += (double)x[i] * x[i];
	scale = (float)(1.0 / sqrt(ss / n + eps));
	for (i = 0; i < n; i++)
		out[i] = x[i] * scale * w[i];
}

void tp_rope_table(float *cs, int rot_dim, int pos, float base)
{
	tp_rope_table_ext(cs, rot_dim, pos, base, 0, NULL);
}

void tp_rope_table_ext(float *cs, int rot_dim, int pos, float base,
		       float scale, const float *freqs)
{
	int i;

	for (i = 0; i < rot_dim / 2; i++) {
		double theta = pos * pow(base, -2.0 * i / rot_dim);

		if (freqs)
			theta /= freqs[i];
		if (scale != 0)
			theta *= scale;
		cs[2 * i] = (float)cos(theta);
		cs[2 * i + 1] = (float)sin(theta);
	}
}

void tp_rope_apply_neox(float *v, int nheads, int head_dim, int rot_dim,
			const float *cs)
{
	int h, i, half = rot_dim / 2;

	for (h = 0; h < nheads; h++, v += head_dim)
		for (i = 0; i < half; i++) {
			float c = cs[2 * i], s = cs[2 * i + 1];
			float v0 = v[i], v1 = v[i + half];

			v[i] = v0 * c - v1 * s;
			v[i + half] = v0 * s + v1 * c;
		}
}

void tp_rope_apply(float *v, int nheads, int head_dim, int rot_dim,
		   const float *cs)
{
	int h, i;

	for (h = 0; h < nheads; h++, v += head_dim)
		for (i = 0; i < rot_dim / 2; i++) {
			float c = cs[2 * i], s = cs[2 * i + 1];
			float v0 = v[2 * i], v1 = v[2 * i + 1];

			v[2 * i] = v0 * c - v1 * s;
			v[2 * i + 1] = v0 * s + v1 * c;
		}
}

void tp_softmax(float *x, int n)
{
	float max = -INFINITY, inv;
	double sum = 0;
	int i;

	for (i = 0; i < n; i++)
		if (x[i] > max)
			max = x[i];
	for (i = 0; i < n; i++) {
		x[i] = expf(x[i] - max);
		sum += x[i];
	}
	inv = (float)(1.0 / sum);
	for (i = 0; i < n; i++)
		x[i] *= inv;
}

float tp_silu(float x)
{
	return x / (1.0f + expf(-x));
}

void tp_swiglu(float *g, const float *u, int n)
{
	int i;

	for (i = 0; i < n; i++)
		g[i] = tp_silu(g[i]) * u[i];
}
