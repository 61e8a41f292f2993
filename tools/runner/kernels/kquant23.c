// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The 2- and 3-bit K-quants, Q2_K and Q3_K (layouts in quant.h): sixteen
 * sub-blocks of 16 per super-block of 256. Quantised as ggml's reference
 * quantize_row_q2_K_ref / quantize_row_q3_K_ref (what llama.cpp's
 * quantizer uses without an importance matrix), repeating their float
 * operations in order (built without contraction), so the blocks are
 * ggml's bits; dequantised as dequantize_row_q2_K / _q3_K; the portable
 * dot products against Q8_K (qtypes.h).
 */
#include <math.h>

#include "kernels/qtypes.h"

static float h2f(uint16_t h)
{
	return tp_f16_to_f32(h);
}

/* The 2-bit field of element E (0..255) of a Q2_K/Q3_K qs array. */
static inline int low2(const uint8_t *qs, int e)
{
	return qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3;
}

/* Elements L (0..3 each) into qs: byte l of each 128 holds l, l+32, ... */
static void pack2(const uint8_t *L, uint8_t *qs)
{
	int j, l;

	for (j = 0; j < TP_QK_K; j += 128)
		for (l = 0; l < 32; l++)
			qs[j / 4 + l] = (uint8_t)(L[j + l] | L[j + l + 32] << 2 |
						  L[j + l + 64] << 4 |
						  L[j + l + 96] << 6);
}

/* ---- Q2_K ------------------------------------------------------------ */

static void q2_k_block(const float *x, struct tp_block_q2_k *y)
{
	float w[16], sc[16], mins[16], max_scale = 0, max_min = 0, iscale;
	uint8_t L[TP_QK_K];
	int j, l;

	for (j = 0; j < 16; j++) {
		for (l = 0; l < 16; l++)
			w[l] = fabsf(x[16 * j + l]);
		sc[j] = tp_fit_scale_min(16, 3, x + 16 * j, w, L + 16 * j,
					 &mins[j], -0.5f, 0.1f, 15, 1);
		if (sc[j] > max_scale)
			max_scale = sc[j];
		if (mins[j] > max_min)
			max_min = mins[j];
	}
	memset(y->scales, 0, sizeof(y->scales));
	y->d = tp_f32_to_f16(0.0f);
	y->dmin = tp_f32_to_f16(0.0f);
	if (max_scale > 0) {
		iscale = 15.0f / max_scale;
		for (j = 0; j < 16; j++)
			y->scales[j] = (uint8_t)tp_nearest(iscale * sc[j]);
		y->d = tp_f32_to_f16(max_scale / 15.0f);
	}
	if (max_min > 0) {
		iscale = 15.0f / max_min;
		for (j = 0; j < 16; j++)
			y->scales[j] |= (uint8_t)(tp_nearest(iscale * mins[j]) << 4);
		y->dmin = tp_f32_to_f16(max_min / 15.0f);
	}
	for (j = 0; j < 16; j++) {
		float d = h2f(y->d) * (float)(y->scales[j] & 15), dm;

		if (d == 0)
			continue;
		dm = h2f(y->dmin) * (float)(y->scales[j] >> 4);
		for (l = 0; l < 16; l++)
			L[16 * j + l] = (uint8_t)tp_clampi(
				tp_nearest((x[16 * j + l] + dm) / d), 0, 3);
	}
	pack2(L, y->qs);
}

static void q2_k_quant(const float *x, void *row, size_t n)
{
	size_t b;

	for (b = 0; b < n / TP_QK_K; b++)
		q2_k_block(x + b * TP_QK_K, (struct tp_block_q2_k *)row + b);
}

static void q2_k_dequant(const void *row, float *out, size_t n)
{
	const struct tp_block_q2_k *x = row;
	size_t b;
	int e;

	for (b = 0; b < n / TP_QK_K; b++, x++) {
		float d = h2f(x->d), mn = h2f(x->dmin);

		for (e = 0; e < TP_QK_K; e++) {
			uint8_t sc = x->scales[e / 16];
			float dl = d * (float)(sc & 15), ml = mn * (float)(sc >> 4);

			*out++ = dl * (float)low2(x->qs, e) - ml;
		}
	}
}

/* sum over sub-blocks of sc x (its quants . activations), and of the
 * mins x the activations' sums of 16: d d_x sumi - dmin d_x summ */
static float q2_k_dot(const void *row, const void *act, int nb)
{
	const struct tp_block_q2_k *x = row;
	const struct tp_block_q8_k *a = act;
	float s = 0;
	int b, j, l;

	for (b = 0; b < nb; b++) {
		int sumi = 0, summ = 0;

		for (j = 0; j < 16; j++) {
			int si = 0;

			for (l = 0; l < 16; l++)
				si += low2(x[b].qs, 16 * j + l) * a[b].qs[16 * j + l];
			sumi += (x[b].scales[j] & 15) * si;
			summ += a[b].bsums[j] * (x[b].scales[j] >> 4);
		}
		s += a[b].d * h2f(x[b].d) * (float)sumi -
		     a[b].d * h2f(x[b].dmin) * (float)summ;
	}
	return s;
}

const struct tp_qtype tp_qtype_q2_k = {
	sizeof(struct tp_block_q2_k), q2_k_quant, q2_k_dequant, q2_k_dot,
};

/* ---- Q3_K ------------------------------------------------------------ */

/*
 * Signed quants -NMAX..NMAX-1 of N values (stored + NMAX), the scale
 * refined by moving single quants while the weighted (x^2) fit improves:
 * ggml's make_q3_quants with do_rmse.
 */
static float fit_q3(int n, int nmax, const float *x, int8_t *L)
{
	float mx = 0, amax = 0, iscale, sumlx = 0, suml2 = 0;
	int i, itry;

	for (i = 0; i < n; i++)
		if (fabsf(x[i]) > amax) {
			amax = fabsf(x[i]);
			mx = x[i];
		}
	if (amax < 1e-15f) {
		memset(L, 0, (size_t)n);
		return 0;
	}
	iscale = (float)-nmax / mx;
	for (i = 0; i < n; i++) {
		int l = tp_clampi(tp_nearest(iscale * x[i]), -nmax, nmax - 1);
		float w = x[i] * x[i];

		L[i] = (int8_t)l;
		sumlx += w * x[i] * (float)l;
		suml2 += w * (float)l * (float)l;
	}
	for (itry = 0; itry < 5; itry++) {
		int changed = 0;

		for (i = 0; i < n; i++) {
			float w = x[i] * x[i];
			float slx = sumlx - w * x[i] * (float)L[i], sl2;
			int nl;

			if (slx <= 0)
				continue;
			sl2 = suml2 - w * (float)L[i] * (float)L[i];
			nl = tp_clampi(tp_nearest(x[i] * sl2 / slx), -nmax, nmax - 1);
			if (nl == L[i])
				continue;
			slx += w * x[i] * (float)nl;
			sl2 += w * (float)nl * (float)nl;
			if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
				L[i] = (int8_t)nl;
				sumlx = slx;
				suml2 = sl2;
				changed++;
			}
		}
		if (!changed)
			break;
	}
	for (i = 0; i < n; i++)
		L[i] = (int8_t)(L[i] + nmax);
	return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* The sixteen 6-bit scales (stored + 32) of a Q3_K super-block. */
static void q3_k_scales(const uint8_t *s, int *sc)
{
	int j;

	for (j = 0; j < 16; j++)
		sc[j] = ((j < 8 ? s[j] & 15 : s[j - 8] >> 4) |
			 ((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) - 32;
}

static void q3_k_block(const float *x, struct tp_block_q3_k *y)
{
	float sc[16], max_scale = 0, amax = 0, iscale;
	int8_t L[TP_QK_K];
	int isc[16], j, l;

	for (j = 0; j < 16; j++) {
		sc[j] = fit_q3(16, 4, x + 16 * j, L + 16 * j);
		if (fabsf(sc[j]) > amax) {
			amax = fabsf(sc[j]);
			max_scale = sc[j];
		}
	}
	memset(y->scales, 0, sizeof(y->scales));
	y->d = tp_f32_to_f16(0.0f);
	if (max_scale != 0) {
		iscale = -32.0f / max_scale;
		for (j = 0; j < 16; j++) {
			int v = tp_clampi((int8_t)tp_nearest(iscale * sc[j]),
					  -32, 31) + 32;

			if (j < 8)
				y->scales[j] = (uint8_t)(v & 15);
			else
				y->scales[j - 8] |= (uint8_t)((v & 15) << 4);
			y->scales[j % 4 + 8] |= (uint8_t)((v >> 4) << (2 * (j / 4)));
		}
		y->d = tp_f32_to_f16(1 / iscale);
	}
	q3_k_scales(y->scales, isc);
	for (j = 0; j < 16; j++) {
		float d = h2f(y->d) * (float)isc[j];

		if (d == 0)
			continue;
		for (l = 0; l < 16; l++)
			L[16 * j + l] = (int8_t)(tp_clampi(
				tp_nearest(x[16 * j + l] / d), -4, 3) + 4);
	}
	/* the third bit of element j: bit j / 32 of hmask[j % 32] */
	memset(y->hmask, 0, sizeof(y->hmask));
	for (j = 0; j < TP_QK_K; j++)
		if (L[j] > 3) {
			y->hmask[j % 32] |= (uint8_t)(1 << (j / 32));
			L[j] = (int8_t)(L[j] - 4);
		}
	pack2((const uint8_t *)L, y->qs);
}

static void q3_k_quant(const float *x, void *row, size_t n)
{
	size_t b;

	for (b = 0; b < n / TP_QK_K; b++)
		q3_k_block(x + b * TP_QK_K, (struct tp_block_q3_k *)row + b);
}

/* Element E's quant, -4..3. */
static inline int q3_k_value(const struct tp_block_q3_k *x, int e)
{
	return low2(x->qs, e) - (x->hmask[e % 32] >> (e / 32) & 1 ? 0 : 4);
}

static void q3_k_dequant(const void *row, float *out, size_t n)
{
	const struct tp_block_q3_k *x = row;
	size_t b;
	int sc[16], e;

	for (b = 0; b < n / TP_QK_K; b++, x++) {
		float d = h2f(x->d);

		q3_k_scales(x->scales, sc);
		for (e = 0; e < TP_QK_K; e++)
			*out++ = d * (float)sc[e / 16] * (float)q3_k_value(x, e);
	}
}

static float q3_k_dot(const void *row, const void *act, int nb)
{
	const struct tp_block_q3_k *x = row;
	const struct tp_block_q8_k *a = act;
	float s = 0;
	int sc[16], b, j, l;

	for (b = 0; b < nb; b++) {
		int sumi = 0;

		q3_k_scales(x[b].scales, sc);
		for (j = 0; j < 16; j++) {
			int si = 0;

			for (l = 0; l < 16; l++)
				si += q3_k_value(&x[b], 16 * j + l) *
				      a[b].qs[16 * j + l];
			sumi += sc[j] * si;
		}
		s += h2f(x[b].d) * a[b].d * (float)sumi;
	}
	return s;
}

const struct tp_qtype tp_qtype_q3_k = {
	sizeof(struct tp_block_q3_k), q3_k_quant, q3_k_dequant, q3_k_dot,
};
