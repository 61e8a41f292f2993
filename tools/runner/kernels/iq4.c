// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The non-linear 4-bit types (layouts in quant.h): IQ4_NL and IQ4_XS,
 * whose quants index the 16 values of tp_kvalues_iq4nl, and MXFP4, whose
 * quants are E2M1 floats (tp_kvalues_mxfp4, doubled) under a power-of-two
 * block scale. Quantised as llama.cpp's quantizer does without an
 * importance matrix (ggml's quantize_iq4_nl / quantize_iq4_xs, and
 * quantize_row_mxfp4_ref), float operation for float operation;
 * dequantised as dequantize_row_*; the portable dot products against Q8_0
 * (IQ4_NL, MXFP4) and Q8_K (IQ4_XS), see qtypes.h.
 */
#include <math.h>

#include "kernels/iq_tables.h"
#include "kernels/qtypes.h"

static float h2f(uint16_t h)
{
	return tp_f16_to_f32(h);
}

/* The index of the value of VAL (16, ascending) nearest X; ties low. */
static int best_index(const int8_t *val, float x)
{
	int lo = 0, hi = 15;

	if (x <= val[0])
		return 0;
	if (x >= val[15])
		return 15;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;

		if (x < val[mid])
			hi = mid;
		else
			lo = mid;
	}
	return x - val[hi - 1] < val[hi] - x ? hi - 1 : hi;
}

/* The weighted fit of x ~ d v[L] for a block of 32 (weights x^2). */
static void fit_sums(const float *x, const float *w, float id, float *sumqx,
		     float *sumq2, uint8_t *L)
{
	int j;

	*sumqx = *sumq2 = 0;
	for (j = 0; j < 32; j++) {
		int l = best_index(tp_kvalues_iq4nl, id * x[j]);
		float q = tp_kvalues_iq4nl[l];

		if (L)
			L[j] = (uint8_t)l;
		*sumqx += w[j] * q * x[j];
		*sumq2 += w[j] * q * q;
	}
}

/*
 * The scale of a block of 32 (0 if it is all but zero): the least
 * squares one of the values' indices at d = max/-127, then 15 more trial
 * scales (ggml's quantize_row_iq4_nl_impl, ntry 7, no importance).
 */
static float fit_block(const float *x, uint8_t *L)
{
	const int8_t *v = tp_kvalues_iq4nl;
	float w[32], amax = 0, mx = 0, d, sumqx, sumq2, best;
	int j, itry;

	for (j = 0; j < 32; j++) {
		w[j] = x[j] * x[j];
		if (fabsf(x[j]) > amax) {
			amax = fabsf(x[j]);
			mx = x[j];
		}
	}
	if (amax < 1e-15f)
		return 0;
	d = -mx / v[0];
	fit_sums(x, w, 1 / d, &sumqx, &sumq2, L);
	d = sumq2 > 0 ? sumqx / sumq2 : 0.0f;
	best = d * sumqx;
	for (itry = -7; itry <= 7; itry++) {
		fit_sums(x, w, (float)(itry + v[0]) / mx, &sumqx, &sumq2, NULL);
		if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
			d = sumqx / sumq2;
			best = d * sumqx;
		}
	}
	return d;
}

/* 32 indices to 16 bytes: element j low, j + 16 high */
static void pack4(const uint8_t *L, uint8_t *qs)
{
	int j;

	for (j = 0; j < 16; j++)
		qs[j] = (uint8_t)(L[j] | L[j + 16] << 4);
}

static void requant(const float *x, float id, uint8_t *L)
{
	int j;

	for (j = 0; j < 32; j++)
		L[j] = (uint8_t)best_index(tp_kvalues_iq4nl, id * x[j]);
}

/* ---- IQ4_NL ------------------------------------------------------------ */

static void iq4_nl_quant(const float *x, void *row, size_t n)
{
	struct tp_block_iq4_nl *y = row;
	size_t b;

	for (b = 0; b < n / 32; b++, x += 32, y++) {
		uint8_t L[32];
		float d = fit_block(x, L);

		y->d = tp_f32_to_f16(d);
		requant(x, d != 0 ? 1 / d : 0, L);
		pack4(L, y->qs);
	}
}

/* 32 values of TABLE under scale D, from nibbles as Q4_0 */
static void dequant_nibbles(const uint8_t *qs, const int8_t *table, float d,
			    float *out)
{
	int j;

	for (j = 0; j < 16; j++) {
		out[j] = d * (float)table[qs[j] & 15];
		out[j + 16] = d * (float)table[qs[j] >> 4];
	}
}

static void iq4_nl_dequant(const void *row, float *out, size_t n)
{
	const struct tp_block_iq4_nl *x = row;
	size_t b;

	for (b = 0; b < n / 32; b++)
		dequant_nibbles(x[b].qs, tp_kvalues_iq4nl, h2f(x[b].d),
				out + 32 * b);
}

/* The integer dot of 32 nibble-coded values of TABLE with 32 bytes. */
static int dot_nibbles(const uint8_t *qs, const int8_t *table,
		       const int8_t *a)
{
	int s1 = 0, s2 = 0, j;

	for (j = 0; j < 16; j++) {
		s1 += a[j] * table[qs[j] & 15];
		s2 += a[j + 16] * table[qs[j] >> 4];
	}
	return s1 + s2;
}

static float iq4_nl_dot(const void *row, const void *act, int nb)
{
	const struct tp_block_iq4_nl *x = row;
	const struct tp_block_q8_0 *a = act;
	float s = 0;
	int b;

	for (b = 0; b < nb; b++)
		s += h2f(a[b].d) * h2f(x[b].d) *
		     (float)dot_nibbles(x[b].qs, tp_kvalues_iq4nl, a[b].qs);
	return s;
}

const struct tp_qtype tp_qtype_iq4_nl = {
	sizeof(struct tp_block_iq4_nl), iq4_nl_quant, iq4_nl_dequant,
	iq4_nl_dot,
};

/* ---- IQ4_XS ------------------------------------------------------------ */

/* Sub-block IB's 6-bit scale, stored + 32 */
static inline int iq4_xs_scale(const struct tp_block_iq4_xs *x, int ib)
{
	return ((x->scales_l[ib / 2] >> (4 * (ib % 2))) & 15) |
	       ((x->scales_h >> (2 * ib)) & 3) << 4;
}

static void iq4_xs_block(const float *x, struct tp_block_iq4_xs *y)
{
	float sc[8], max_scale = 0, amax = 0, d, id;
	uint8_t L[32];
	int ib;

	for (ib = 0; ib < 8; ib++) {
		sc[ib] = fit_block(x + 32 * ib, L);
		if (fabsf(sc[ib]) > amax) {
			amax = fabsf(sc[ib]);
			max_scale = sc[ib];
		}
	}
	d = -max_scale / 32;
	id = d != 0 ? 1 / d : 0.0f;
	y->d = tp_f32_to_f16(d);
	y->scales_h = 0;
	memset(y->scales_l, 0, sizeof(y->scales_l));
	for (ib = 0; ib < 8; ib++) {
		int l = tp_clampi(tp_nearest(id * sc[ib]), -32, 31);
		float dl = d * (float)l;

		requant(x + 32 * ib, dl != 0 ? 1 / dl : 0.0f, L);
		pack4(L, y->qs + 16 * ib);
		l += 32;
		y->scales_l[ib / 2] |= (uint8_t)((l & 15) << (4 * (ib % 2)));
		y->scales_h |= (uint16_t)((l >> 4) << (2 * ib));
	}
}

static void iq4_xs_quant(const float *x, void *row, size_t n)
{
	size_t b;

	for (b = 0; b < n / TP_QK_K; b++)
		iq4_xs_block(x + b * TP_QK_K, (struct tp_block_iq4_xs *)row + b);
}

static void iq4_xs_dequant(const void *row, float *out, size_t n)
{
	const struct tp_block_iq4_xs *x = row;
	size_t b;
	int ib;

	for (b = 0; b < n / TP_QK_K; b++, x++)
		for (ib = 0; ib < 8; ib++)
			dequant_nibbles(x->qs + 16 * ib, tp_kvalues_iq4nl,
					h2f(x->d) * (float)(iq4_xs_scale(x, ib) - 32),
					out + b * TP_QK_K + 32 * ib);
}

static float iq4_xs_dot(const void *row, const void *act, int nb)
{
	const struct tp_block_iq4_xs *x = row;
	const struct tp_block_q8_k *a = act;
	float s = 0;
	int b, ib;

	for (b = 0; b < nb; b++) {
		int sumi = 0;

		for (ib = 0; ib < 8; ib++)
			sumi += (iq4_xs_scale(&x[b], ib) - 32) *
				dot_nibbles(x[b].qs + 16 * ib, tp_kvalues_iq4nl,
					    a[b].qs + 32 * ib);
		s += h2f(x[b].d) * a[b].d * (float)sumi;
	}
	return s;
}

const struct tp_qtype tp_qtype_iq4_xs = {
	sizeof(struct tp_block_iq4_xs), iq4_xs_quant, iq4_xs_dequant,
	iq4_xs_dot,
};

/* ---- MXFP4 ------------------------------------------------------------- */

/* The index of the value of kvalues_mxfp4 x E nearest X (first wins). */
static int best_mxfp4(float x, float e)
{
	float best = fabsf((float)tp_kvalues_mxfp4[0] * e - x);
	int i, bi = 0;

	for (i = 1; i < 16; i++) {
		float err = fabsf((float)tp_kvalues_mxfp4[i] * e - x);

		if (err < best) {
			best = err;
			bi = i;
		}
	}
	return bi;
}

static void mxfp4_quant(const float *x, void *row, size_t n)
{
	struct tp_block_mxfp4 *y = row;
	size_t b;
	int j;

	for (b = 0; b < n / 32; b++, x += 32, y++) {
		float amax = 0, d;

		for (j = 0; j < 32; j++)
			if (amax < fabsf(x[j]))
				amax = fabsf(x[j]);
		/* the largest value lands on 4..8 of the doubled E2M1 12 */
		y->e = amax > 0.0f ?
		       (uint8_t)(floorf(log2f(amax)) - 2 + 127) : 0;
		d = tp_e8m0_half(y->e);
		for (j = 0; j < 16; j++)
			y->qs[j] = (uint8_t)(best_mxfp4(x[j], d) |
					     best_mxfp4(x[j + 16], d) << 4);
	}
}

static void mxfp4_dequant(const void *row, float *out, size_t n)
{
	const struct tp_block_mxfp4 *x = row;
	size_t b;
	int j;

	for (b = 0; b < n / 32; b++)
		for (j = 0; j < 16; j++) {
			float d = tp_e8m0_half(x[b].e);

			out[32 * b + j] = (float)tp_kvalues_mxfp4[x[b].qs[j] & 15] * d;
			out[32 * b + j + 16] =
				(float)tp_kvalues_mxfp4[x[b].qs[j] >> 4] * d;
		}
}

static float mxfp4_dot(const void *row, const void *act, int nb)
{
	const struct tp_block_mxfp4 *x = row;
	const struct tp_block_q8_0 *a = act;
	float s = 0;
	int b;

	for (b = 0; b < nb; b++)
		s += h2f(a[b].d) * tp_e8m0_half(x[b].e) *
		     (float)dot_nibbles(x[b].qs, tp_kvalues_mxfp4, a[b].qs);
	return s;
}

const struct tp_qtype tp_qtype_mxfp4 = {
	sizeof(struct tp_block_mxfp4), mxfp4_quant, mxfp4_dequant, mxfp4_dot,
};
