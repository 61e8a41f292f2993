// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Quantisers for the codebook types (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS,
 * IQ2_S, IQ3_XXS, IQ3_S): weights mapped to the grid, so that a model
 * exported in these types computes about what it computes in F32, not
 * random valid blocks (Documentation/runner.md says why). Not ggml's
 * quantisers (those of IQ1 and IQ2_XXS/XS need an importance matrix, and
 * llama.cpp refuses them without one); simpler, deterministic, and a pure
 * function of each super-block's 256 values, as synthetic shards need:
 *
 *  - a group of 8 (two grid entries of 4 for IQ3) goes to the grid entry
 *    nearest the per-coordinate nearest levels of its magnitudes (or, for
 *    IQ1, of its values less the shift), looked up in a table built once
 *    per grid (every combination of levels -> the entry nearest it);
 *    signs apart; where only 7 sign bits are stored, an odd count of
 *    minus signs flips the smallest magnitude;
 *  - each sub-block's scale is the least-squares one of the best of 16
 *    trial scales (and, for IQ1, of both shifts);
 *  - the super-block scale d makes the largest sub-block scale the
 *    largest code, each sub-block takes the nearest code, and its groups
 *    are mapped again at the scale the file will hold.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/util.h"
#include "kernels/iq_tables.h"
#include "kernels/iq_types.h"

/* A grid: entries of GS values (bytes; IQ1 signed), each one of NLEV levels */
struct grid {
	int gs, nlev, nentries;
	int lev[8];		/* the level values, ascending */
	const void *entries;	/* uint64_t (GS 8) or uint32_t (GS 4) */
	uint16_t *near;		/* level combination (base NLEV) -> entry */
};

static struct grid g_iq2xxs = { 8, 3, 256, { 8, 25, 43 }, tp_iq2xxs_grid, NULL };
static struct grid g_iq2xs = { 8, 3, 512, { 8, 25, 43 }, tp_iq2xs_grid, NULL };
static struct grid g_iq2s = { 8, 4, 1024, { 8, 25, 43, 62 }, tp_iq2s_grid, NULL };
static struct grid g_iq1s = { 8, 3, 2048, { -1, 0, 1 }, tp_iq1s_grid, NULL };
static struct grid g_iq3xxs = { 4, 8, 256, { 4, 12, 20, 28, 36, 44, 52, 62 },
				tp_iq3xxs_grid, NULL };
static struct grid g_iq3s = { 4, 8, 512, { 1, 3, 5, 7, 9, 11, 13, 15 },
			      tp_iq3s_grid, NULL };

/* Value J of entry I */
static int entry_value(const struct grid *g, int i, int j)
{
	if (g->gs == 4)
		return ((const uint8_t *)&((const uint32_t *)g->entries)[i])[j];
	if (g->lev[0] < 0)
		return ((const int8_t *)&((const uint64_t *)g->entries)[i])[j];
	return ((const uint8_t *)&((const uint64_t *)g->entries)[i])[j];
}

/* For every combination of levels, the entry nearest it (once per grid:
 * at most 65536 x 1024 x 8 steps, for IQ2_S). */
static void build(struct grid *g)
{
	int nkeys = 1, key, i, j;

	for (j = 0; j < g->gs; j++)
		nkeys *= g->nlev;
	g->near = tp_calloc((size_t)nkeys, sizeof(uint16_t));
	for (key = 0; key < nkeys; key++) {
		int want[8], k = key, best = 0;
		long bd = -1;

		for (j = 0; j < g->gs; j++, k /= g->nlev)
			want[j] = g->lev[k % g->nlev];
		for (i = 0; i < g->nentries; i++) {
			long d = 0;

			for (j = 0; j < g->gs; j++) {
				long e = entry_value(g, i, j) - want[j];

				d += e * e;
			}
			if (bd < 0 || d < bd) {
				bd = d;
				best = i;
			}
		}
		g->near[key] = (uint16_t)best;
	}
}

static pthread_mutex_t build_lock = PTHREAD_MUTEX_INITIALIZER;

static void grid_ready(struct grid *g)
{
	pthread_mutex_lock(&build_lock);
	if (!g->near)
		build(g);
	pthread_mutex_unlock(&build_lock);
}

/* The entry nearest V (GS values in level units), its values in Q. */
static int nearest_entry(const struct grid *g, const float *v, int *q)
{
	int key = 0, mul = 1, j, l, idx;

	for (j = 0; j < g->gs; j++, mul *= g->nlev) {
		for (l = 0; l + 1 < g->nlev &&
		     v[j] > 0.5f * (float)(g->lev[l] + g->lev[l + 1]); l++)
			;
		key += l * mul;
	}
	idx = g->near[key];
	for (j = 0; j < g->gs; j++)
		q[j] = entry_value(g, idx, j);
	return idx;
}

/* How a type stores a group of 8: one entry of 8 or two of 4; its signs
 * in 8 bits or 7 and a parity; IQ1: signed entries and a shift. */
struct iq_kind {
	struct grid *g;
	int sub;		/* elements per sub-block scale */
	int parity;		/* only 7 sign bits kept */
	int iq1;		/* entries signed, plus a shift of +-1/8 */
	int shift_per_sub;	/* IQ1_S: one shift per sub-block of 32 */
	int smax;		/* largest scale code */
};

/* One group of 8 at scale S (value per grid unit) and shift DELTA. */
struct group {
	int idx[2];		/* entry indices (two for entries of 4) */
	unsigned signs;		/* bit j: element j negative */
	int q[8];		/* the signed grid values chosen */
};

static void map_group(const struct iq_kind *k, const float *x, float s,
		      float delta, struct group *out)
{
	float v[8];
	int j, h, minj = 0;

	out->signs = 0;
	for (j = 0; j < 8; j++) {
		if (k->iq1) {
			v[j] = s > 0 ? x[j] / s - delta : 0;
			continue;
		}
		v[j] = s > 0 ? fabsf(x[j]) / s : 0;
		if (x[j] < 0)
			out->signs |= 1u << j;
		if (fabsf(x[j]) < fabsf(x[minj]))
			minj = j;
	}
	/* 7 sign bits: an even count of minus signs, the cheapest flip */
	if (k->parity && __builtin_popcount(out->signs) % 2) {
		out->signs ^= 1u << minj;
		v[minj] = -v[minj];
	}
	for (h = 0; h < 8 / k->g->gs; h++)
		out->idx[h] = nearest_entry(k->g, v + h * k->g->gs,
					    out->q + h * k->g->gs);
	for (j = 0; j < 8; j++)
		if (out->signs >> j & 1)
			out->q[j] = -out->q[j];
}

/*
 * The groups of a sub-block of N at scale S; returns the least-squares
 * scale for them and, in *ERR, the squared error at that scale.
 */
static float map_sub(const struct iq_kind *k, const float *x, int n, float s,
		     const float *delta, struct group *gr, float *err)
{
	double sxq = 0, sqq = 0, sxx = 0;
	int g, j;

	for (g = 0; g < n / 8; g++) {
		map_group(k, x + 8 * g, s, delta[g], &gr[g]);
		for (j = 0; j < 8; j++) {
			double q = gr[g].q[j] + (double)delta[g];

			sxq += x[8 * g + j] * q;
			sqq += q * q;
			sxx += (double)x[8 * g + j] * x[8 * g + j];
		}
	}
	if (sqq <= 0 || sxq <= 0) {
		*err = (float)sxx;
		return 0;
	}
	*err = (float)(sxx - sxq * sxq / sqq);
	return (float)(sxq / sqq);
}

/*
 * The best scale (grid unit -> value) for a sub-block of N, and its
 * shifts (IQ1: one for the sub-block, or one per group of 8: every
 * combination is tried).
 */
static float fit_sub(const struct iq_kind *k, const float *x, int n,
		     float *delta)
{
	struct group gr[4];
	float amax = 0, best = INFINITY, bs = 0, top, d[4], bd[4] = { 0 };
	int j, t, sh, nsh = !k->iq1 ? 1 : k->shift_per_sub ? 2 : 1 << (n / 8);

	for (j = 0; j < n; j++)
		if (fabsf(x[j]) > amax)
			amax = fabsf(x[j]);
	memset(delta, 0, sizeof(float) * (size_t)(n / 8));
	if (amax < 1e-12f)
		return 0;
	top = k->iq1 ? 1.125f : (float)k->g->lev[k->g->nlev - 1];
	for (t = 0; t < 16; t++) {
		float s = amax / top * (0.55f + 0.05f * (float)t), e, fit;

		for (sh = 0; sh < nsh; sh++) {
			for (j = 0; j < n / 8; j++)
				d[j] = !k->iq1 ? 0 : (k->shift_per_sub ? sh :
						      sh >> j) & 1 ?
				       -0.125f : 0.125f;
			fit = map_sub(k, x, n, s, d, gr, &e);
			if (e < best) {
				best = e;
				bs = fit;
				memcpy(bd, d, sizeof(d));
			}
		}
	}
	memcpy(delta, bd, sizeof(float) * (size_t)(n / 8));
	return bs;
}

/* A super-block mapped: its d (F16), scale codes, groups and shifts. */
struct iq_out {
	uint16_t d;
	int s[16];
	struct group gr[32];
	int neg[32];		/* IQ1: shift -1/8 */
};

static void quant_block(enum tp_type t, const struct iq_kind *k,
			const float *x, struct iq_out *o)
{
	float sc[16], delta[32], maxs = 0, d, id;
	int nsub = TP_QK_K / k->sub, j, g;

	for (j = 0; j < nsub; j++) {
		sc[j] = fit_sub(k, x + k->sub * j, k->sub, delta + j * k->sub / 8);
		if (sc[j] > maxs)
			maxs = sc[j];
	}
	d = maxs / iq_sub_factor(t, 1.0f, k->smax);
	o->d = tp_f32_to_f16(d);
	d = tp_f16_to_f32(o->d);
	id = d > 0 ? 1 / iq_sub_factor(t, d, 0) : 0;
	for (j = 0; j < nsub; j++) {
		/* the factor is (2s + 1) times that of code 0 */
		float err, s;

		o->s[j] = tp_clampi(tp_nearest((sc[j] * id - 1) / 2), 0,
				    k->smax);
		s = iq_sub_factor(t, d, o->s[j]);
		map_sub(k, x + k->sub * j, k->sub, d > 0 ? s : 0,
			delta + j * k->sub / 8, o->gr + j * k->sub / 8, &err);
	}
	for (g = 0; g < 32; g++)
		o->neg[g] = delta[g] < 0;
}

/* Each super-block of N values mapped, then stored by PACK. */
static void quant_rows(enum tp_type t, const struct iq_kind *k, const float *x,
		       void *row, size_t n, size_t bytes,
		       void (*pack)(const struct iq_out *o, void *blk))
{
	struct iq_out o;
	char *y = row;
	size_t b;

	grid_ready(k->g);
	for (b = 0; b < n / TP_QK_K; b++, y += bytes, x += TP_QK_K) {
		quant_block(t, k, x, &o);
		memset(y, 0, bytes);
		pack(&o, y);
	}
}

static void pack_iq2_xxs(const struct iq_out *o, void *blk)
{
	struct tp_block_iq2_xxs *y = blk;
	int ib, l;

	y->d = o->d;
	for (ib = 0; ib < 8; ib++) {
		uint32_t w[2] = { 0, (uint32_t)o->s[ib] << 28 };

		for (l = 0; l < 4; l++) {
			const struct group *g = &o->gr[4 * ib + l];

			w[0] |= (uint32_t)g->idx[0] << (8 * l);
			w[1] |= (g->signs & 127u) << (7 * l);
		}
		memcpy(y->qs + 4 * ib, w, 8);
	}
}

static void pack_iq2_xs(const struct iq_out *o, void *blk)
{
	struct tp_block_iq2_xs *y = blk;
	int g;

	y->d = o->d;
	for (g = 0; g < 32; g++)
		y->qs[g] = (uint16_t)(o->gr[g].idx[0] | (o->gr[g].signs & 127u) << 9);
	for (g = 0; g < 16; g++)
		y->scales[g / 2] |= (uint8_t)(o->s[g] << (4 * (g % 2)));
}

static void pack_iq2_s(const struct iq_out *o, void *blk)
{
	struct tp_block_iq2_s *y = blk;
	int g;

	y->d = o->d;
	for (g = 0; g < 32; g++) {
		y->qs[g] = (uint8_t)o->gr[g].idx[0];
		y->qh[g / 4] |= (uint8_t)((o->gr[g].idx[0] >> 8) << (2 * (g % 4)));
		y->qs[32 + g] = (uint8_t)o->gr[g].signs;
	}
	for (g = 0; g < 16; g++)
		y->scales[g / 2] |= (uint8_t)(o->s[g] << (4 * (g % 2)));
}

static void pack_iq3_xxs(const struct iq_out *o, void *blk)
{
	struct tp_block_iq3_xxs *y = blk;
	int ib, l;

	y->d = o->d;
	for (ib = 0; ib < 8; ib++) {
		uint32_t w = (uint32_t)o->s[ib] << 28;

		for (l = 0; l < 4; l++) {
			const struct group *g = &o->gr[4 * ib + l];

			y->qs[8 * ib + 2 * l] = (uint8_t)g->idx[0];
			y->qs[8 * ib + 2 * l + 1] = (uint8_t)g->idx[1];
			w |= (g->signs & 127u) << (7 * l);
		}
		memcpy(y->qs + 64 + 4 * ib, &w, 4);
	}
}

static void pack_iq3_s(const struct iq_out *o, void *blk)
{
	struct tp_block_iq3_s *y = blk;
	int ib, l, h;

	y->d = o->d;
	for (ib = 0; ib < 8; ib++) {
		y->scales[ib / 2] |= (uint8_t)(o->s[ib] << (4 * (ib % 2)));
		for (l = 0; l < 4; l++) {
			const struct group *g = &o->gr[4 * ib + l];

			for (h = 0; h < 2; h++) {
				y->qs[8 * ib + 2 * l + h] = (uint8_t)g->idx[h];
				y->qh[ib] |= (uint8_t)((g->idx[h] >> 8) << (2 * l + h));
			}
			y->signs[4 * ib + l] = (uint8_t)g->signs;
		}
	}
}

static void pack_iq1_s(const struct iq_out *o, void *blk)
{
	struct tp_block_iq1_s *y = blk;
	int ib, l;

	y->d = o->d;
	for (ib = 0; ib < 8; ib++) {
		unsigned h = (unsigned)o->s[ib] << 12 | (unsigned)o->neg[4 * ib] << 15;

		for (l = 0; l < 4; l++) {
			int idx = o->gr[4 * ib + l].idx[0];

			y->qs[4 * ib + l] = (uint8_t)idx;
			h |= (unsigned)(idx >> 8) << (3 * l);
		}
		y->qh[ib] = (uint16_t)h;
	}
}

static void pack_iq1_m(const struct iq_out *o, void *blk)
{
	struct tp_block_iq1_m *y = blk;
	uint16_t sc[4] = { 0 };
	int g;

	for (g = 0; g < 32; g++) {
		int idx = o->gr[g].idx[0];

		y->qs[g] = (uint8_t)idx;
		y->qh[g / 2] |= (uint8_t)(((idx >> 8) | o->neg[g] << 3) << (4 * (g % 2)));
	}
	for (g = 0; g < 16; g++)
		sc[g / 4] |= (uint16_t)(o->s[g] << (3 * (g % 4)));
	/* d's F16 bits, a nibble in the top of each word */
	for (g = 0; g < 4; g++)
		sc[g] |= (uint16_t)((o->d >> (4 * g) & 15) << 12);
	memcpy(y->scales, sc, 8);
}

/* the type, how it stores a group, its sub-block, sign parity, IQ1 */
#define IQ_QUANT(name, T, grid, sub, parity, iq1, per_sub, smax)		\
void name##_quant(const float *x, void *row, size_t n)			\
{									\
	static const struct iq_kind k = { &grid, sub, parity, iq1,	\
					  per_sub, smax };		\
									\
	quant_rows(T, &k, x, row, n, sizeof(struct tp_block_##name),	\
		   pack_##name);					\
}
IQ_QUANT(iq2_xxs, TP_IQ2_XXS, g_iq2xxs, 32, 1, 0, 0, 15)
IQ_QUANT(iq2_xs, TP_IQ2_XS, g_iq2xs, 16, 1, 0, 0, 15)
IQ_QUANT(iq2_s, TP_IQ2_S, g_iq2s, 16, 0, 0, 0, 15)
IQ_QUANT(iq3_xxs, TP_IQ3_XXS, g_iq3xxs, 32, 1, 0, 0, 15)
IQ_QUANT(iq3_s, TP_IQ3_S, g_iq3s, 32, 0, 0, 0, 15)
IQ_QUANT(iq1_s, TP_IQ1_S, g_iq1s, 32, 0, 1, 1, 7)
IQ_QUANT(iq1_m, TP_IQ1_M, g_iq1s, 16, 0, 1, 0, 7)
