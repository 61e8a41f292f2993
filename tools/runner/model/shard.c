// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each rank owns of the model: the configuration checked for N
 * ranks, then ranges of query heads (with the K/V heads they read) and
 * MLP columns cut on whole blocks of the row-parallel matrices' types
 * and balanced by the bytes they weigh, the experts of MoE layers (whole
 * experts, or columns of each on whole blocks) and balanced ranges of
 * output head rows. See model.h.
 */
#include <stdio.h>
#include <string.h>

#include "model/model.h"

/* What is wrong with the experts of C, or NULL. */
static const char *moe_check(const struct tp_config *c)
{
	const struct tp_moe_config *e = &c->moe;

	if (!e->experts)
		return e->used || e->shared || e->dense_layers ?
		       "expert counts given for a model without experts" : NULL;
	if (e->experts < 1 || e->experts > 1024)
		return "the expert count must be 1..1024";
	if (e->used < 1 || e->used > e->experts)
		return "the experts used per token must be 1..the expert count";
	if (e->ffn < 1 || e->ffn > (1 << 20))
		return "the experts' FFN width must be 1..2^20";
	if (e->shared < 0 || e->shared > 64)
		return "the shared experts must be 0..64";
	if (e->dense_layers < 0 || e->dense_layers > c->layers)
		return "the leading dense layers must be 0..the layer count";
	if (e->gating != TP_GATE_SOFTMAX && e->gating != TP_GATE_SIGMOID &&
	    e->gating != TP_GATE_SOFTMAX_WEIGHT)
		return "the gating function must be softmax, sigmoid or softmax over the chosen";
	if (!(e->scale >= 0 && e->scale < 1e6))
		return "the expert weights' scale is out of range";
	if (e->groups > 1 &&
	    (e->experts % e->groups || e->groups_used < 1 ||
	     e->groups_used > e->groups ||
	     e->used > e->groups_used * (e->experts / e->groups)))
		return "the expert groups must divide the experts and hold the experts used";
	return NULL;
}

int tp_config_check(const struct tp_config *c, int nranks, char *err,
		    size_t errlen)
{
	const char *why = NULL;

	if (c->dim <= 0 || c->layers <= 0 || c->heads <= 0 ||
	    c->kv_heads <= 0 || c->ffn <= 0 || c->vocab <= 0 ||
	    c->head_dim <= 0)
		why = "every dimension must be positive";
	else if (c->dim > (1 << 20) || c->ffn > (1 << 22) ||
		 c->vocab > (1 << 24) || c->layers > 4096 ||
		 c->heads > 4096 || c->head_dim > 4096)
		why = "a dimension is implausibly large";
	else if (c->heads % c->kv_heads)
		why = "heads must be a multiple of kv-heads";
	else if (c->head_dim % 2 || c->rot_dim % 2 || c->rot_dim <= 0 ||
		 c->rot_dim > c->head_dim)
		why = "head and rotary dimensions must be even, rotary <= head";
	else if (!(c->eps > 0) || !(c->rope_base > 0))
		why = "eps and rope base must be positive";
	else if (nranks < 1 || nranks > TP_MAX_RANKS)
		why = "ranks must be 1..64";
	else if (c->nextn_layers < 0 || c->nextn_layers > 16)
		why = "the skipped (NextN) layers must be 0..16";
	else
		why = moe_check(c);
	if (!why)
		return 0;
	snprintf(err, errlen,
		 "model dim %d layers %d heads %d kv-heads %d head-dim %d ffn %d vocab %d on %d ranks: %s",
		 c->dim, c->layers, c->heads, c->kv_heads, c->head_dim, c->ffn,
		 c->vocab, nranks, why);
	return -1;
}

void tp_split(long total, int parts, int i, long *begin, long *end)
{
	*begin = total * i / parts;
	*end = total * (i + 1) / parts;
}

static long gcd(long a, long b)
{
	while (b) {
		long t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int tp_block_items(int width, int block)
{
	if (width < 1 || block < 1)
		return 1;
	return (int)(block / gcd(width, block));
}

void tp_shard_cost_add(uint64_t *bytes, int *block, enum tp_type type,
		       long rows, long cols)
{
	int b = tp_type_block(type);

	*bytes += (uint64_t)rows * tp_type_bytes(type, (size_t)cols);
	if (block)
		*block = (int)(*block / gcd(*block, b) * b);
}

void tp_split_fill(long units, int nparts, const uint64_t *base,
		   uint64_t per_unit, long *counts)
{
	uint64_t lo = 0, hi = 0, top = 0;
	long given = 0;
	int p;

	if (!per_unit)
		per_unit = 1;
	for (p = 0; p < nparts; p++)
		if (base[p] > top)
			top = base[p];
	/*
	 * The highest level L up to which filling every part takes no more
	 * than UNITS: a part below L gets (L - base) / per_unit units.
	 */
	hi = top + (uint64_t)units * per_unit + 1;
	while (lo + 1 < hi) {
		uint64_t mid = lo + (hi - lo) / 2, n = 0;

		for (p = 0; p < nparts; p++)
			if (mid > base[p])
				n += (mid - base[p]) / per_unit;
		if (n <= (uint64_t)units)
			lo = mid;
		else
			hi = mid;
	}
	for (p = 0; p < nparts; p++) {
		counts[p] = lo > base[p] ? (long)((lo - base[p]) / per_unit) : 0;
		given += counts[p];
	}
	/* fewer than NPARTS remain: one each to the lightest parts */
	while (given < units) {
		int best = 0;

		for (p = 1; p < nparts; p++)
			if (base[p] + (uint64_t)counts[p] * per_unit <
			    base[best] + (uint64_t)counts[best] * per_unit)
				best = p;
		counts[best]++;
		given++;
	}
}

/* Part I's range of COUNTS[0..N-1] laid end to end, times UNIT. */
static void prefix(const long *counts, int i, int unit, int *b, int *e)
{
	long s = 0;
	int p;

	for (p = 0; p < i; p++)
		s += counts[p];
	*b = (int)(s * unit);
	*e = (int)((s + counts[i]) * unit);
}

int tp_shard_plan(const struct tp_config *c, const struct tp_shard_cost *k,
		  int rank, int nranks, struct tp_shard *s, char *err,
		  size_t errlen)
{
	/* a head's columns of the attention output: its value's width */
	int group = c->heads / c->kv_heads, p;
	int hd = c->mla.kv_lora ? c->mla.v_dim : c->head_dim;
	int hu = tp_block_items(hd, k->o_block), fu = k->down_block;
	long heads[TP_MAX_RANKS] = { 0 }, cols[TP_MAX_RANKS] = { 0 }, H, F, b, e;
	uint64_t base[TP_MAX_RANKS] = { 0 }, per_col;

	if (nranks < 1 || nranks > TP_MAX_RANKS || rank < 0 || rank >= nranks) {
		snprintf(err, errlen, "rank %d of %d: ranks must be 1..%d",
			 rank, nranks, TP_MAX_RANKS);
		return -1;
	}
	if (c->heads % hu || c->ffn % fu) {
		snprintf(err, errlen,
			 "the attention output (%d heads of %d) or ffn_down (%d columns) is not whole blocks of its type (%d, %d)",
			 c->heads, hd, c->ffn, k->o_block, k->down_block);
		return -1;
	}
	/* MLP columns by 32 where the blocks allow: whole cache lines */
	if (fu < 32 && 32 % fu == 0 && c->ffn % 32 == 0 &&
	    c->ffn / 32 >= nranks)
		fu = 32;
	H = c->heads / hu;
	F = c->ffn / fu;
	if (H + F < nranks) {
		snprintf(err, errlen,
			 "%d ranks cannot share it on whole blocks: its %d heads of %d make %ld group%s of %d heads (blocks of %d), its MLP %ld of %d columns; at most %ld ranks",
			 nranks, c->heads, hd, H, H == 1 ? "" : "s", hu,
			 k->o_block, F, fu, H + F);
		return -1;
	}
	for (p = 0; p < nranks; p++) {
		int q0, q1, nkv;

		tp_split(H, nranks, p, &b, &e);
		heads[p] = (e - b) * hu;
		q0 = (int)b * hu;
		q1 = (int)e * hu;
		nkv = q1 > q0 ? (q1 - 1) / group + 1 - q0 / group : 0;
		base[p] = (k->q + k->o) / (uint64_t)c->heads *
			  (uint64_t)(q1 - q0) +
			  k->kv / (uint64_t)c->kv_heads * (uint64_t)nkv;
	}
	per_col = (k->gate_up + k->down) / (uint64_t)c->ffn * (uint64_t)fu;
	tp_split_fill(F, nranks, base, per_col, cols);
	for (p = 0; p < nranks; p++)
		if (!heads[p] && !cols[p]) {
			snprintf(err, errlen,
				 "%d ranks cannot share it on whole blocks: rank %d would hold no heads and no MLP columns",
				 nranks, p);
			return -1;
		}
	s->rank = rank;
	s->nranks = nranks;
	prefix(heads, rank, 1, &s->q0, &s->q1);
	if (s->q1 > s->q0) {
		s->kv0 = s->q0 / group;
		s->kv1 = (s->q1 - 1) / group + 1;
	} else {
		s->kv0 = s->kv1 = s->q0 / group < c->kv_heads ?
				  s->q0 / group : c->kv_heads;
	}
	prefix(cols, rank, fu, &s->f0, &s->f1);
	return 0;
}

void tp_split_vocab(const struct tp_config *c, int rank, int nranks,
		    struct tp_shard *s)
{
	long b, e;

	tp_split(c->vocab, nranks, rank, &b, &e);
	s->v0 = (int)b;
	s->v1 = (int)e;
}

/*
 * The columns of a SwiGLU FFN of WIDTH: whole blocks of UNIT, balanced,
 * some ranks none when there are fewer blocks than ranks (a slice inside
 * a block would be held in F32 and compute other bits, see tp_mat_shard);
 * columns one by one only when WIDTH is no multiple of UNIT.
 */
static void split_columns(int width, int unit, int rank, int nranks, int *c0,
			  int *c1)
{
	long b, e;

	if (unit < 1 || width % unit)
		unit = 1;
	tp_split(width / unit, nranks, rank, &b, &e);
	*c0 = (int)b * unit;
	*c1 = (int)e * unit;
}

int tp_shard_experts(const struct tp_config *c, int rank, int nranks,
		     int unit, int shared_unit, struct tp_shard *s, char *err,
		     size_t errlen)
{
	const struct tp_moe_config *e = &c->moe;
	int blocks = unit > 0 && e->ffn % unit == 0 ? e->ffn / unit : 0;
	int split = e->split;
	long b, en;

	s->e0 = 0;
	s->e1 = e->experts;
	s->x0 = 0;
	s->x1 = e->ffn;
	s->s0 = s->s1 = 0;
	if (!e->experts)
		return 0;
	/*
	 * By width when every rank gets as many whole blocks of every
	 * expert: each rank then reads 1/N of each chosen expert, whatever
	 * the router chose. Else whole experts, which any N can share, but
	 * where a token's experts fall unevenly on the ranks (runner.md,
	 * "Mixture of experts").
	 */
	if (split == TP_SPLIT_AUTO)
		split = blocks && blocks % nranks == 0 ? TP_SPLIT_WIDTH :
			TP_SPLIT_EXPERTS;
	if (split == TP_SPLIT_EXPERTS) {
		if (e->experts < nranks) {
			snprintf(err, errlen, "%d experts cannot be split over %d ranks",
				 e->experts, nranks);
			return -1;
		}
		tp_split(e->experts, nranks, rank, &b, &en);
		s->e0 = (int)b;
		s->e1 = (int)en;
	} else {
		if (blocks < nranks) {
			snprintf(err, errlen,
				 "the experts' FFN of %d columns has %d blocks of %d: too few for %d ranks to split it by width",
				 e->ffn, blocks, unit, nranks);
			return -1;
		}
		tp_split(blocks, nranks, rank, &b, &en);
		s->x0 = (int)b * unit;
		s->x1 = (int)en * unit;
	}
	if (e->shared)
		split_columns(e->ffn * e->shared, shared_unit, rank, nranks,
			      &s->s0, &s->s1);
	return 0;
}
