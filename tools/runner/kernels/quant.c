// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The 4- and 5-bit block types of GGML (Q4_0, Q4_1, Q5_0, Q5_1: 32
 * elements a block), quantised as ggml's reference code does, and their
 * dot products on the blocks against activations quantised as llama.cpp
 * does: to Q8_0 for Q4_0/Q5_0, to Q8_1 (Q8_0 plus d x the sum of the
 * quants) for Q4_1/Q5_1; an exact integer sum per block, then the scales.
 *
 * The K-quants (Q4_K, Q5_K, Q6_K) likewise: quantised as ggml's reference
 * quantize_row_q*_K_ref does (without an importance matrix, as llama.cpp
 * quantizes when given none), their dot products against activations in
 * Q8_K. The quantisers repeat the reference's float operations in its
 * order (this file is built without contraction), so the blocks are the
 * same bits; tests/unit/test_runner_kquant.c checks that against ggml
 * itself when node-llama-cpp's copy of it is installed.
 */
#include <math.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/qtypes.h"
#include "kernels/quant.h"

static float h2f(uint16_t h)
{
	return tp_f16_to_f32(h);
}

/* The value of largest magnitude (signed), and the magnitude. */
static float absmax(const float *x, float *amax)
{
	float m = 0, a = 0;
	int j;

	for (j = 0; j < TP_QK; j++)
		if (fabsf(x[j]) > a) {
			a = fabsf(x[j]);
			m = x[j];
		}
	*amax = a;
	return m;
}

static void minmax(const float *x, float *mn, float *mx)
{
	int j;

	*mn = INFINITY;
	*mx = -INFINITY;
	for (j = 0; j < TP_QK; j++) {
		if (x[j] < *mn)
			*mn = x[j];
		if (x[j] > *mx)
			*mx = x[j];
	}
}

static void q4_0(const float *x, struct tp_block_q4_0 *y)
{
	float amax, max = absmax(x, &amax), d = max / -8, id = d ? 1.0f / d : 0;
	int j;

	y->d = tp_f32_to_f16(d);
	for (j = 0; j < TP_QK / 2; j++) {
		int a = (int8_t)(x[j] * id + 8.5f), b = (int8_t)(x[j + 16] * id + 8.5f);

		a = a < 15 ? a : 15;
		b = b < 15 ? b : 15;
		y->qs[j] = (uint8_t)(a | b << 4);
	}
}

static void q4_1(const float *x, struct tp_block_q4_1 *y)
{
	float mn, mx, d, id;
	int j;

	minmax(x, &mn, &mx);
	d = (mx - mn) / 15;
	id = d ? 1.0f / d : 0;
	y->d = tp_f32_to_f16(d);
	y->m = tp_f32_to_f16(mn);
	for (j = 0; j < TP_QK / 2; j++) {
		int a = (int8_t)((x[j] - mn) * id + 0.5f);
		int b = (int8_t)((x[j + 16] - mn) * id + 0.5f);

		a = a < 15 ? a : 15;
		b = b < 15 ? b : 15;
		y->qs[j] = (uint8_t)(a | b << 4);
	}
}

static void q5_0(const float *x, struct tp_block_q5_0 *y)
{
	float amax, max = absmax(x, &amax), d = max / -16, id = d ? 1.0f / d : 0;
	uint32_t qh = 0;
	int j;

	y->d = tp_f32_to_f16(d);
	for (j = 0; j < TP_QK / 2; j++) {
		int a = (int8_t)(x[j] * id + 16.5f), b = (int8_t)(x[j + 16] * id + 16.5f);

		a = a < 31 ? a : 31;
		b = b < 31 ? b : 31;
		y->qs[j] = (uint8_t)((a & 15) | (b & 15) << 4);
		qh |= (uint32_t)((a & 0x10) >> 4) << j;
		qh |= (uint32_t)((b & 0x10) >> 4) << (j + 16);
	}
	memcpy(y->qh, &qh, 4);
}

static void q5_1(const float *x, struct tp_block_q5_1 *y)
{
	float mn, mx, d, id;
	uint32_t qh = 0;
	int j;

	minmax(x, &mn, &mx);
	d = (mx - mn) / 31;
	id = d ? 1.0f / d : 0;
	y->d = tp_f32_to_f16(d);
	y->m = tp_f32_to_f16(mn);
	for (j = 0; j < TP_QK / 2; j++) {
		int a = (uint8_t)((x[j] - mn) * id + 0.5f);
		int b = (uint8_t)((x[j + 16] - mn) * id + 0.5f);

		y->qs[j] = (uint8_t)((a & 15) | (b & 15) << 4);
		qh |= (uint32_t)((a & 0x10) >> 4) << j;
		qh |= (uint32_t)((b & 0x10) >> 4) << (j + 16);
	}
	memcpy(y->qh, &qh, 4);
}

/* The 32 quants of a block (Q4: 0..15, Q5: 0..31), before offset. */
static void unpack(enum tp_type t, const void *blk, int *q)
{
	const uint8_t *qs;
	uint32_t qh = 0;
	int j;

	switch (t) {
	case TP_Q4_0: qs = ((const struct tp_block_q4_0 *)blk)->qs; break;
	case TP_Q4_1: qs = ((const struct tp_block_q4_1 *)blk)->qs; break;
	case TP_Q5_0:
		qs = ((const struct tp_block_q5_0 *)blk)->qs;
		memcpy(&qh, ((const struct tp_block_q5_0 *)blk)->qh, 4);
		break;
	default:
		qs = ((const struct tp_block_q5_1 *)blk)->qs;
		memcpy(&qh, ((const struct tp_block_q5_1 *)blk)->qh, 4);
		break;
	}
	for (j = 0; j < TP_QK / 2; j++) {
		q[j] = (qs[j] & 15) | (int)((qh >> j) << 4 & 0x10);
		q[j + 16] = (qs[j] >> 4) | (int)((qh >> (j + 12)) & 0x10);
	}
}

size_t tp_quant_block_bytes(enum tp_type t)
{
	switch (t) {
	case TP_Q4_0: return sizeof(struct tp_block_q4_0);
	case TP_Q4_1: return sizeof(struct tp_block_q4_1);
	case TP_Q5_0: return sizeof(struct tp_block_q5_0);
	case TP_Q5_1: return sizeof(struct tp_block_q5_1);
	case TP_Q4_K: return sizeof(struct tp_block_q4_k);
	case TP_Q5_K: return sizeof(struct tp_block_q5_k);
	case TP_Q6_K: return sizeof(struct tp_block_q6_k);
	default: return tp_qtype(t) ? tp_qtype(t)->block_bytes : 0;
	}
}

enum tp_type tp_type_for_cols(enum tp_type t, long cols)
{
	enum tp_type f;

	if (!tp_type_is_super(t) || cols % TP_QK_K == 0)
		return t;
	switch (t) {
	case TP_Q4_K: f = TP_Q5_0; break;
	case TP_Q5_K: f = TP_Q5_1; break;
	case TP_Q6_K: f = TP_Q8_0; break;
	case TP_Q2_K:
	case TP_Q3_K: f = TP_Q4_0; break;
	default: f = TP_IQ4_NL; break;	/* the IQ types of 256 */
	}
	return cols % TP_QK ? TP_F16 : f;	/* every fallback has blocks of 32 */
}

static void kquant_row(enum tp_type t, const float *x, void *row, size_t n);
static void kdequant_row(enum tp_type t, const void *row, float *out,
			 size_t n);

void tp_quant_row(enum tp_type t, const float *x, void *row, size_t n)
{
	char *y = row;
	size_t b, bs = tp_quant_block_bytes(t);

	if (tp_qtype(t)) {
		tp_qtype(t)->quant(x, row, n);
		return;
	}
	if (tp_type_is_k(t)) {
		kquant_row(t, x, row, n);
		return;
	}
	for (b = 0; b < n / TP_QK; b++, x += TP_QK, y += bs)
		switch (t) {
		case TP_Q4_0: q4_0(x, (void *)y); break;
		case TP_Q4_1: q4_1(x, (void *)y); break;
		case TP_Q5_0: q5_0(x, (void *)y); break;
		default: q5_1(x, (void *)y); break;
		}
}

/* Scale, and offset: Q4_0/Q5_0 centre their quants, Q4_1/Q5_1 add m. */
static void scales(enum tp_type t, const void *blk, float *d, float *m,
		   int *off)
{
	const uint16_t *h = blk;	/* d first, then m (_1 types) */

	*d = h2f(h[0]);
	*m = t == TP_Q4_1 || t == TP_Q5_1 ? h2f(h[1]) : 0;
	*off = t == TP_Q4_0 ? 8 : t == TP_Q5_0 ? 16 : 0;
}

void tp_dequant_row(enum tp_type t, const void *row, float *out, size_t n)
{
	const char *p = row;
	size_t b, bs = tp_quant_block_bytes(t);
	int q[TP_QK], j, off;
	float d, m;

	if (tp_qtype(t)) {
		tp_qtype(t)->dequant(row, out, n);
		return;
	}
	if (tp_type_is_k(t)) {
		kdequant_row(t, row, out, n);
		return;
	}
	for (b = 0; b < n / TP_QK; b++, p += bs) {
		unpack(t, p, q);
		scales(t, p, &d, &m, &off);
		for (j = 0; j < TP_QK; j++)
			*out++ = (float)(q[j] - off) * d + m;
	}
}

void tp_act_q8_1(const float *x, struct tp_block_q8_1 *y, int n)
{
	int b, j;

	for (b = 0; b < n / TP_QK; b++, x += TP_QK) {
		float amax = 0, d, id;
		int sum = 0;

		for (j = 0; j < TP_QK; j++)
			if (fabsf(x[j]) > amax)
				amax = fabsf(x[j]);
		d = amax / 127.0f;
		id = amax != 0.0f ? 127.0f / amax : 0.0f;
		y[b].d = tp_f32_to_f16(d);
		for (j = 0; j < TP_QK; j++) {
			y[b].qs[j] = (int8_t)rintf(x[j] * id);
			sum += y[b].qs[j];
		}
		y[b].s = tp_f32_to_f16(d * (float)sum);
	}
}

static float kdot(enum tp_type t, const void *row,
		  const struct tp_block_q8_k *a, int nb);

float tp_quant_dot(enum tp_type t, const void *row, const void *act, int nb)
{
	const struct tp_block_q8_0 *a0 = act;
	const struct tp_block_q8_1 *a1 = act;
	const char *p = row;
	size_t bs = tp_quant_block_bytes(t);
	int one = t == TP_Q4_1 || t == TP_Q5_1, q[TP_QK], b, j, off;
	float s = 0, d, m;

	if (tp_qtype(t))
		return tp_qtype(t)->dot(row, act, nb);
	if (tp_type_is_k(t))
		return kdot(t, row, act, nb);
	for (b = 0; b < nb; b++, p += bs) {
		const int8_t *qa = one ? a1[b].qs : a0[b].qs;
		int sumi = 0;

		unpack(t, p, q);
		scales(t, p, &d, &m, &off);
		for (j = 0; j < TP_QK; j++)
			sumi += (q[j] - off) * qa[j];
		if (one)
			s += d * h2f(a1[b].d) * (float)sumi + m * h2f(a1[b].s);
		else
			s += (float)sumi * (d * h2f(a0[b].d));
	}
	return s;
}

/* ---- K-quants ---------------------------------------------------------- */

/* The 6-bit scale and min of sub-block J of a Q4_K/Q5_K super-block. */
static void scale_min(int j, const uint8_t *q, int *sc, int *m)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

/*
 * The common part of Q4_K and Q5_K: eight sub-blocks of 32, each fitted
 * with its scale and min, which are then quantised to 6 bits against the
 * largest (d, dmin); the quants are recomputed with the quantised scales.
 */
static void q45_k(const float *x, int nmax, float rmin, int nstep,
		  uint16_t *dd, uint16_t *dmin, uint8_t *scales, uint8_t *L)
{
	float sc[8], mins[8], w[32], max_scale = 0, max_min = 0, is, im;
	int j, l;

	for (j = 0; j < 8; j++) {
		const float *xs = x + 32 * j;
		float sum_x2 = 0, av;

		for (l = 0; l < 32; l++)
			sum_x2 += xs[l] * xs[l];
		av = sqrtf(sum_x2 / 32);
		for (l = 0; l < 32; l++)
			w[l] = av + fabsf(xs[l]);
		sc[j] = tp_fit_scale_min(32, nmax, xs, w, L + 32 * j, &mins[j],
					 rmin, 0.1f, nstep, 0);
		if (sc[j] > max_scale)
			max_scale = sc[j];
		if (mins[j] > max_min)
			max_min = mins[j];
	}
	is = max_scale > 0 ? 63.0f / max_scale : 0;
	im = max_min > 0 ? 63.0f / max_min : 0;
	memset(scales, 0, 12);
	for (j = 0; j < 8; j++) {
		uint8_t ls = (uint8_t)tp_nearest(is * sc[j]);
		uint8_t lm = (uint8_t)tp_nearest(im * mins[j]);

		ls = ls < 63 ? ls : 63;
		lm = lm < 63 ? lm : 63;
		if (j < 4) {
			scales[j] = ls;
			scales[j + 4] = lm;
		} else {
			scales[j + 4] = (uint8_t)((ls & 15) | (lm & 15) << 4);
			scales[j - 4] |= (uint8_t)((ls >> 4) << 6);
			scales[j] |= (uint8_t)((lm >> 4) << 6);
		}
	}
	*dd = tp_f32_to_f16(max_scale / 63.0f);
	*dmin = tp_f32_to_f16(max_min / 63.0f);
	for (j = 0; j < 8; j++) {
		int s, m;
		float d, dm;

		scale_min(j, scales, &s, &m);
		d = h2f(*dd) * (float)s;
		if (d == 0)
			continue;
		dm = h2f(*dmin) * (float)m;
		for (l = 0; l < 32; l++)
			L[32 * j + l] = (uint8_t)tp_clampi(tp_nearest((x[32 * j + l] +
								 dm) / d),
							0, nmax);
	}
}

static void q4_k(const float *x, struct tp_block_q4_k *y)
{
	uint8_t L[TP_QK_K];
	int j, l;

	q45_k(x, 15, -1.0f, 20, &y->d, &y->dmin, y->scales, L);
	for (j = 0; j < 4; j++)
		for (l = 0; l < 32; l++)
			y->qs[32 * j + l] = (uint8_t)(L[64 * j + l] |
						      L[64 * j + 32 + l] << 4);
}

static void q5_k(const float *x, struct tp_block_q5_k *y)
{
	uint8_t L[TP_QK_K];
	int j, l;

	q45_k(x, 31, -0.5f, 15, &y->d, &y->dmin, y->scales, L);
	memset(y->qh, 0, sizeof(y->qh));
	for (j = 0; j < 4; j++)
		for (l = 0; l < 32; l++) {
			int a = L[64 * j + l], b = L[64 * j + 32 + l];

			y->qh[l] |= (uint8_t)((a >> 4) << (2 * j) |
					      (b >> 4) << (2 * j + 1));
			y->qs[32 * j + l] = (uint8_t)((a & 15) | (b & 15) << 4);
		}
}

/*
 * Signed quants -NMAX..NMAX-1 (stored + NMAX) of N values, the scale
 * chosen among 19 trials by weighted (x^2) least squares: ggml's
 * make_qx_quants with rmse_type 1 and no importance weights.
 */
static float fit_scale_sym(int n, int nmax, const float *x, int8_t *L)
{
	float mx = 0, amax = 0, iscale, sumlx = 0, suml2 = 0, scale, best;
	int i, is;

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

		L[i] = (int8_t)(l + nmax);
		sumlx += w * x[i] * (float)l;
		suml2 += w * (float)l * (float)l;
	}
	scale = suml2 != 0 ? sumlx / suml2 : 0;
	best = scale * sumlx;
	for (is = -9; is <= 9; is++) {
		if (!is)
			continue;
		iscale = -((float)nmax + 0.1f * (float)is) / mx;
		sumlx = suml2 = 0;
		for (i = 0; i < n; i++) {
			int l = tp_clampi(tp_nearest(iscale * x[i]), -nmax, nmax - 1);
			float w = x[i] * x[i];

			sumlx += w * x[i] * (float)l;
			suml2 += w * (float)l * (float)l;
		}
		if (suml2 > 0 && sumlx * sumlx > best * suml2) {
			for (i = 0; i < n; i++)
				L[i] = (int8_t)(nmax + tp_clampi(tp_nearest(iscale *
								      x[i]),
							      -nmax, nmax - 1));
			scale = sumlx / suml2;
			best = scale * sumlx;
		}
	}
	return scale;
}

static void q6_k(const float *x, struct tp_block_q6_k *y)
{
	float sc[16], max_scale = 0, max_abs = 0, iscale;
	int8_t L[TP_QK_K];
	int j, l;

	for (j = 0; j < 16; j++) {
		sc[j] = fit_scale_sym(16, 32, x + 16 * j, L + 16 * j);
		if (fabsf(sc[j]) > max_abs) {
			max_abs = fabsf(sc[j]);
			max_scale = sc[j];
		}
	}
	memset(y, 0, sizeof(*y));
	if (max_abs < 1e-15f)
		return;
	iscale = -128.0f / max_scale;
	y->d = tp_f32_to_f16(1 / iscale);
	for (j = 0; j < 16; j++) {
		int v = tp_nearest(iscale * sc[j]);

		y->scales[j] = (int8_t)(v < 127 ? v : 127);
	}
	for (j = 0; j < 16; j++) {
		float d = h2f(y->d) * (float)y->scales[j];

		if (d == 0)
			continue;
		for (l = 0; l < 16; l++)
			L[16 * j + l] = (int8_t)(tp_clampi(tp_nearest(x[16 * j + l] / d),
							-32, 31) + 32);
	}
	for (j = 0; j < 2; j++) {
		const int8_t *q = L + 128 * j;
		uint8_t *ql = y->ql + 64 * j, *qh = y->qh + 32 * j;

		for (l = 0; l < 32; l++) {
			ql[l] = (uint8_t)((q[l] & 15) | (q[l + 64] & 15) << 4);
			ql[l + 32] = (uint8_t)((q[l + 32] & 15) |
					       (q[l + 96] & 15) << 4);
			qh[l] = (uint8_t)(q[l] >> 4 | (q[l + 32] >> 4) << 2 |
					  (q[l + 64] >> 4) << 4 |
					  (q[l + 96] >> 4) << 6);
		}
	}
}

static void kquant_row(enum tp_type t, const float *x, void *row, size_t n)
{
	size_t b;

	for (b = 0; b < n / TP_QK_K; b++, x += TP_QK_K)
		switch (t) {
		case TP_Q4_K: q4_k(x, (struct tp_block_q4_k *)row + b); break;
		case TP_Q5_K: q5_k(x, (struct tp_block_q5_k *)row + b); break;
		default: q6_k(x, (struct tp_block_q6_k *)row + b); break;
		}
}

/*
 * The 256 quants of a super-block and, per sub-block of 16 (Q6_K) or 32
 * (Q4_K/Q5_K), its integer scale and min (0 for Q6_K, whose quants are
 * centred here).
 */
static void kunpack(enum tp_type t, const void *blk, int *q, int *sc, int *m,
		    float *d, float *dmin)
{
	int j, l;

	if (t == TP_Q6_K) {
		const struct tp_block_q6_k *b = blk;

		for (j = 0; j < 2; j++) {
			const uint8_t *ql = b->ql + 64 * j, *qh = b->qh + 32 * j;
			int *o = q + 128 * j;

			for (l = 0; l < 32; l++) {
				o[l] = ((ql[l] & 15) | (qh[l] & 3) << 4) - 32;
				o[l + 32] = ((ql[l + 32] & 15) |
					     ((qh[l] >> 2) & 3) << 4) - 32;
				o[l + 64] = ((ql[l] >> 4) |
					     ((qh[l] >> 4) & 3) << 4) - 32;
				o[l + 96] = ((ql[l + 32] >> 4) |
					     ((qh[l] >> 6) & 3) << 4) - 32;
			}
		}
		for (j = 0; j < 16; j++) {
			sc[j] = b->scales[j];
			m[j] = 0;
		}
		*d = h2f(b->d);
		*dmin = 0;
		return;
	}
	{
		const struct tp_block_q4_k *b4 = blk;
		const struct tp_block_q5_k *b5 = blk;
		const uint8_t *qs = t == TP_Q4_K ? b4->qs : b5->qs;
		const uint8_t *scales = t == TP_Q4_K ? b4->scales : b5->scales;

		for (j = 0; j < 4; j++)
			for (l = 0; l < 32; l++) {
				q[64 * j + l] = qs[32 * j + l] & 15;
				q[64 * j + 32 + l] = qs[32 * j + l] >> 4;
				if (t == TP_Q5_K) {
					q[64 * j + l] |= ((b5->qh[l] >> (2 * j)) & 1) << 4;
					q[64 * j + 32 + l] |=
						((b5->qh[l] >> (2 * j + 1)) & 1) << 4;
				}
			}
		for (j = 0; j < 8; j++)
			scale_min(j, scales, &sc[j], &m[j]);
		*d = h2f(b4->d);	/* d and dmin lead both layouts */
		*dmin = h2f(b4->dmin);
	}
}

static void kdequant_row(enum tp_type t, const void *row, float *out,
			 size_t n)
{
	const char *p = row;
	size_t b, bs = tp_quant_block_bytes(t);
	int q[TP_QK_K], sc[16], m[16], j, sub = t == TP_Q6_K ? 16 : 32;
	float d, dmin;

	for (b = 0; b < n / TP_QK_K; b++, p += bs) {
		kunpack(t, p, q, sc, m, &d, &dmin);
		for (j = 0; j < TP_QK_K; j++) {
			/* as ggml: (d sc) q - dmin m for Q4_K/Q5_K, d sc q */
			float ds = d * (float)sc[j / sub];

			*out++ = t == TP_Q6_K ? ds * (float)q[j] :
				 ds * (float)q[j] - dmin * (float)m[j / sub];
		}
	}
}

void tp_act_q8_k(const float *x, struct tp_block_q8_k *y, int n)
{
	int b, j;

	for (b = 0; b < n / TP_QK_K; b++, x += TP_QK_K) {
		float mx = 0, amax = 0, iscale;

		memset(&y[b], 0, sizeof(y[b]));
		for (j = 0; j < TP_QK_K; j++)
			if (fabsf(x[j]) > amax) {
				amax = fabsf(x[j]);
				mx = x[j];
			}
		if (amax == 0)
			continue;
		iscale = -127.0f / mx;
		for (j = 0; j < TP_QK_K; j++) {
			int v = tp_nearest(iscale * x[j]);

			y[b].qs[j] = (int8_t)(v < 127 ? v : 127);
			y[b].bsums[j / 16] += y[b].qs[j];
		}
		y[b].d = 1 / iscale;
	}
}

static float kdot(enum tp_type t, const void *row,
		  const struct tp_block_q8_k *a, int nb)
{
	const char *p = row;
	size_t bs = tp_quant_block_bytes(t);
	int q[TP_QK_K], sc[16], m[16], b, j, l, sub = t == TP_Q6_K ? 16 : 32;
	float s = 0, d, dmin;

	for (b = 0; b < nb; b++, p += bs) {
		int sumi = 0, summ = 0;

		kunpack(t, p, q, sc, m, &d, &dmin);
		for (j = 0; j < TP_QK_K / sub; j++) {
			int si = 0;

			for (l = 0; l < sub; l++)
				si += q[sub * j + l] * a[b].qs[sub * j + l];
			sumi += sc[j] * si;
		}
		if (t != TP_Q6_K)	/* the mins, by the sums of 16 */
			for (j = 0; j < 16; j++)
				summ += a[b].bsums[j] * m[j / 2];
		s += d * a[b].d * (float)sumi - dmin * a[b].d * (float)summ;
	}
	return s;
}
