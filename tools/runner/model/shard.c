// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each rank owns of the model: the configuration checked for N
 * ranks, then balanced ranges of query heads (with the K/V heads they
 * read), MLP columns and output-head rows. See model.h.
 */
#include <stdio.h>

#include "model/model.h"

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
