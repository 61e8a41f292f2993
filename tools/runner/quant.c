// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The 4- and 5-bit block types of GGML (Q4_0, Q4_1, Q5_0, Q5_1: 32
 * elements a block), quantised as ggml's reference code does, and their
 * dot products on the blocks against activations quantised as llama.cpp
 * does: to Q8_0 for Q4_0/Q5_0, to Q8_1 (Q8_0 plus d x the sum of the
 * quants) for Q4_1/Q5_1; an exact integer sum per block, then the scales.
 */
#include <math.h>
#include <string.h>

#include "quant.h"

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
	default: return 0;
	}
}

void tp_quant_row(enum tp_type t, const float *x, void *row, size_t n)
{
	char *y = row;
	size_t b, bs = tp_quant_block_bytes(t);

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

float tp_quant_dot(enum tp_type t, const void *row, const void *act, int nb)
{
	const struct tp_block_q8_0 *a0 = act;
	const struct tp_block_q8_1 *a1 = act;
	const char *p = row;
	size_t bs = tp_quant_block_bytes(t);
	int one = t == TP_Q4_1 || t == TP_Q5_1, q[TP_QK], b, j, off;
	float s = 0, d, m;

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
