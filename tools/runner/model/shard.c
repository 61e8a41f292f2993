// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each rank owns of the model: the configuration checked for N
 * ranks, then balanced ranges of query heads (with the K/V heads they
 * read), MLP columns, the experts of MoE layers and output-head rows.
 * See model.h.
 */
#include <stdio.h>

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
	if (e->gating != TP_GATE_SOFTMAX && e->gating != TP_GATE_SIGMOID)
		return "the gating function must be softmax or sigmoid";
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
	else if (nranks > c->heads)
		why = "more ranks than attention heads";
	else if (nranks > c->ffn)
		why = "more ranks than MLP columns";
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

void tp_shard_plan(const struct tp_config *c, int rank, int nranks,
		   struct tp_shard *s)
{
	tp_shard_plan_unit(c, rank, nranks, 32, s);
}

void tp_shard_plan_unit(const struct tp_config *c, int rank, int nranks,
			int unit, struct tp_shard *s)
{
	int group = c->heads / c->kv_heads;
	long b, e;

	if (unit < 32 || c->ffn % unit || c->ffn / unit < nranks)
		unit = c->ffn % 32 == 0 && c->ffn / 32 >= nranks ? 32 : 1;

	s->rank = rank;
	s->nranks = nranks;
	tp_split(c->heads, nranks, rank, &b, &e);
	s->q0 = (int)b;
	s->q1 = (int)e;
	s->kv0 = s->q0 / group;
	s->kv1 = (s->q1 - 1) / group + 1;
	tp_split(c->ffn / unit, nranks, rank, &b, &e);
	s->f0 = (int)b * unit;
	s->f1 = (int)e * unit;
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
