// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The codebook types IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and
 * IQ1_M (layouts in quant.h, grids in iq_tables.h): each super-block is
 * unpacked to its 256 signed grid values, a 3- or 4-bit scale code per
 * sub-block of 32 or 16 and, for IQ1, a shift sign per group of 8. From
 * that, the dequantisation repeats ggml's dequantize_row_* float for float
 * (the sub-block factor, then times the value), and the portable dot
 * product ggml's scalar one (qtypes.h): per super-block the exact sum over
 * sub-blocks of (2s + 1) x (values . activations), times d d_x, and the
 * type's constant factor (1/8 for IQ2, 1/4 for IQ3_XXS) on the row's sum.
 * Quantisers: iq_quant.c.
 */
#include "kernels/iq_tables.h"
#include "kernels/iq_types.h"

static const uint8_t *grid8(const uint64_t *grid, int i)
{
	return (const uint8_t *)&grid[i];
}

/* Group G's 8 values of GRID entry I with the sign bits SIGNS. */
static void put8(int8_t *v, const uint8_t *g, unsigned signs)
{
	int j;

	for (j = 0; j < 8; j++)
		v[j] = (int8_t)(signs >> j & 1 ? -g[j] : g[j]);
}

static void iq2_xxs_unpack(const void *blk, struct iq_unpacked *u)
{
	const struct tp_block_iq2_xxs *x = blk;
	uint32_t w[2];
	int ib, l;

	u->d = tp_f16_to_f32(x->d);
	for (ib = 0; ib < 8; ib++) {
		memcpy(w, x->qs + 4 * ib, 8);
		u->s[ib] = (int)(w[1] >> 28);
		for (l = 0; l < 4; l++)
			put8(u->v + 32 * ib + 8 * l,
			     grid8(tp_iq2xxs_grid, (int)(w[0] >> (8 * l) & 255)),
			     tp_ksigns_iq2xs[w[1] >> (7 * l) & 127]);
	}
}

static void iq2_xs_unpack(const void *blk, struct iq_unpacked *u)
{
	const struct tp_block_iq2_xs *x = blk;
	int g;

	u->d = tp_f16_to_f32(x->d);
	for (g = 0; g < 16; g++)
		u->s[g] = x->scales[g / 2] >> (4 * (g % 2)) & 15;
	for (g = 0; g < 32; g++)
		put8(u->v + 8 * g, grid8(tp_iq2xs_grid, x->qs[g] & 511),
		     tp_ksigns_iq2xs[x->qs[g] >> 9]);
}

static void iq2_s_unpack(const void *blk, struct iq_unpacked *u)
{
	const struct tp_block_iq2_s *x = blk;
	int g;

	u->d = tp_f16_to_f32(x->d);
	for (g = 0; g < 16; g++)
		u->s[g] = x->scales[g / 2] >> (4 * (g % 2)) & 15;
	for (g = 0; g < 32; g++)
		put8(u->v + 8 * g, grid8(tp_iq2s_grid, x->qs[g] |
					 ((x->qh[g / 4] >> (2 * (g % 4))) & 3) << 8),
		     x->qs[32 + g]);
}

/* Two grid entries of 4 values as one group of 8 */
static void put4x2(int8_t *v, uint32_t g1, uint32_t g2, unsigned signs)
{
	uint8_t g[8];

	memcpy(g, &g1, 4);
	memcpy(g + 4, &g2, 4);
	put8(v, g, signs);
}

static void iq3_xxs_unpack(const void *blk, struct iq_unpacked *u)
{
	const struct tp_block_iq3_xxs *x = blk;
	uint32_t w;
	int ib, l;

	u->d = tp_f16_to_f32(x->d);
	for (ib = 0; ib < 8; ib++) {
		const uint8_t *q = x->qs + 8 * ib;

		memcpy(&w, x->qs + 64 + 4 * ib, 4);
		u->s[ib] = (int)(w >> 28);
		for (l = 0; l < 4; l++)
			put4x2(u->v + 32 * ib + 8 * l, tp_iq3xxs_grid[q[2 * l]],
			       tp_iq3xxs_grid[q[2 * l + 1]],
			       tp_ksigns_iq2xs[w >> (7 * l) & 127]);
	}
}

static void iq3_s_unpack(const void *blk, struct iq_unpacked *u)
{
	const struct tp_block_iq3_s *x = blk;
	int ib, l;

	u->d = tp_f16_to_f32(x->d);
	for (ib = 0; ib < 8; ib++) {
		const uint8_t *q = x->qs + 8 * ib;
		int h = x->qh[ib];

		u->s[ib] = x->scales[ib / 2] >> (4 * (ib % 2)) & 15;
		for (l = 0; l < 4; l++)
			put4x2(u->v + 32 * ib + 8 * l,
			       tp_iq3s_grid[q[2 * l] | (h >> (2 * l) & 1) << 8],
			       tp_iq3s_grid[q[2 * l + 1] |
					    (h >> (2 * l + 1) & 1) << 8],
			       x->signs[4 * ib + l]);
	}
}

static void iq1_group(int8_t *v, int idx)
{
	memcpy(v, &tp_iq1s_grid[idx], 8);
}

static void iq1_s_unpack(const void *blk, struct iq_unpacked *u)
{
	const struct tp_block_iq1_s *x = blk;
	int ib, l;

	u->d = tp_f16_to_f32(x->d);
	for (ib = 0; ib < 8; ib++) {
		int h = x->qh[ib];

		u->s[ib] = h >> 12 & 7;
		for (l = 0; l < 4; l++) {
			iq1_group(u->v + 32 * ib + 8 * l,
				  x->qs[4 * ib + l] | (h >> (3 * l) & 7) << 8);
			u->delta[4 * ib + l] = h & 0x8000 ? -1 : 1;
		}
	}
}

static void iq1_m_unpack(const void *blk, struct iq_unpacked *u)
{
	const struct tp_block_iq1_m *x = blk;
	uint16_t sc[4], f16;
	int g;

	memcpy(sc, x->scales, 8);
	f16 = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
			 ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
	u->d = tp_f16_to_f32(f16);
	for (g = 0; g < 16; g++)	/* sub-block of 16 g: 3 bits at 3 g % 12 */
		u->s[g] = sc[g / 4] >> (3 * (g % 4)) & 7;
	for (g = 0; g < 32; g++) {
		int h = x->qh[g / 2] >> (4 * (g % 2));

		iq1_group(u->v + 8 * g, x->qs[g] | (h & 7) << 8);
		u->delta[g] = h & 8 ? -1 : 1;
	}
}

static void iq_dequant(enum tp_type t, const void *row, float *out, size_t n)
{
	const struct iq_info *info = iq_info(t);
	const char *p = row;
	struct iq_unpacked u;
	size_t b;
	int e;

	for (b = 0; b < n / TP_QK_K; b++, p += info->block_bytes) {
		info->unpack(p, &u);
		for (e = 0; e < TP_QK_K; e++) {
			float dl = iq_sub_factor(t, u.d, u.s[e / info->sub]);

			if (info->iq1)
				*out++ = dl * ((float)u.v[e] +
					       (u.delta[e / 8] < 0 ? -0.125f : 0.125f));
			else
				*out++ = dl * (float)u.v[e];
		}
	}
}

float tp_iq_dot(enum tp_type t, const void *row, const void *act, int nb)
{
	const struct iq_info *info = iq_info(t);
	const struct tp_block_q8_k *a = act;
	const char *p = row;
	struct iq_unpacked u;
	float sumf = 0;
	int b, e, j;

	for (b = 0; b < nb; b++, p += info->block_bytes) {
		int bsum = 0, dsum = 0;

		info->unpack(p, &u);
		for (j = 0; j < TP_QK_K / info->sub; j++) {
			int sumi = 0, sumd = 0, ls = 2 * u.s[j] + 1;

			for (e = j * info->sub; e < (j + 1) * info->sub; e++) {
				sumi += u.v[e] * a[b].qs[e];
				if (info->iq1)
					sumd += u.delta[e / 8] * a[b].qs[e];
			}
			bsum += ls * sumi;
			dsum += ls * sumd;
		}
		if (info->iq1)	/* the shifts: 1/8 of sum ls delta x */
			sumf += u.d * a[b].d * ((float)bsum + 0.125f * (float)dsum);
		else
			sumf += u.d * a[b].d * (float)bsum;
	}
	return info->factor * sumf;
}

#define IQ_TYPE(name, T, blk_t, SUB, IQ1, FACTOR)			\
static void name##_dequant(const void *row, float *out, size_t n)	\
{									\
	iq_dequant(T, row, out, n);					\
}									\
static float name##_dot(const void *row, const void *act, int nb)	\
{									\
	return tp_iq_dot(T, row, act, nb);				\
}									\
static const struct iq_info name##_info = {				\
	sizeof(blk_t), SUB, IQ1, FACTOR, name##_unpack,			\
};									\
const struct tp_qtype tp_qtype_##name = {				\
	sizeof(blk_t), name##_quant, name##_dequant, name##_dot,	\
};
IQ_TYPE(iq2_xxs, TP_IQ2_XXS, struct tp_block_iq2_xxs, 32, 0, 0.125f)
IQ_TYPE(iq2_xs, TP_IQ2_XS, struct tp_block_iq2_xs, 16, 0, 0.125f)
IQ_TYPE(iq2_s, TP_IQ2_S, struct tp_block_iq2_s, 16, 0, 0.125f)
IQ_TYPE(iq3_xxs, TP_IQ3_XXS, struct tp_block_iq3_xxs, 32, 0, 0.25f)
IQ_TYPE(iq3_s, TP_IQ3_S, struct tp_block_iq3_s, 32, 0, 1.0f)
IQ_TYPE(iq1_s, TP_IQ1_S, struct tp_block_iq1_s, 32, 1, 1.0f)
IQ_TYPE(iq1_m, TP_IQ1_M, struct tp_block_iq1_m, 16, 1, 1.0f)

const struct iq_info *iq_info(enum tp_type t)
{
	switch (t) {
	case TP_IQ2_XXS: return &iq2_xxs_info;
	case TP_IQ2_XS: return &iq2_xs_info;
	case TP_IQ2_S: return &iq2_s_info;
	case TP_IQ3_XXS: return &iq3_xxs_info;
	case TP_IQ3_S: return &iq3_s_info;
	case TP_IQ1_S: return &iq1_s_info;
	default: return &iq1_m_info;
	}
}
