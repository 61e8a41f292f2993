// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Synthetic weights: every element is a pure function of (seed, tensor,
 * layer, row, column), so each rank generates only its shard and gets the
 * values the 1-rank run has there. Which tensors a layer has is its
 * architecture's (arch.h: synth_layer). Stored in TYPE the same way a
 * GGUF file of that type would be: quantised per row over
 * 32-element blocks, and the shard cut with the same rules (tp_mat_shard),
 * so a synthetic model and its GGUF export compute the same bits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "base/util.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "model/arch.h"
#include "model/model.h"
#include "model/synthetic.h"

float tp_synth_value(const struct tp_config *c, uint64_t seed, int tensor,
		     int layer, long row, long col)
{
	uint64_t key = (uint64_t)tensor << 32 | (uint32_t)layer;
	float u = tp_unit_pm1(tp_hash4(seed, key, (uint64_t)row,
				       (uint64_t)col));
	int fan_in;

	switch (tensor) {
	case TP_T_EMBD:
		return u;
	case TP_T_OUT_NORM:
	case TP_T_ATTN_NORM:
	case TP_T_FFN_NORM:
	case TP_T_Q_NORM:
	case TP_T_K_NORM:
	case TP_T_Q_A_NORM:
	case TP_T_KV_A_NORM:
		return 1.0f + 0.25f * u;
	case TP_T_Q_BIAS:
	case TP_T_K_BIAS:
	case TP_T_V_BIAS:
	case TP_T_O_BIAS:
	case TP_T_DOWN_EXPS_BIAS:
		return 0.2f * u;
	case TP_T_SINKS:	/* some heads lean on their sink */
		return 2.0f * u;
	case TP_T_ROUTER_BIAS:
		return 0.5f * u;
	case TP_T_GATE_EXPS_BIAS:	/* past the clamp at 7 now and then */
	case TP_T_UP_EXPS_BIAS:
		return 5.0f * u;
	case TP_T_PROBS_BIAS:	/* shifts sigmoid scores near 0.5 */
		return 0.05f * u;
	default:
		fan_in = tp_synth_cols(c, tensor);
		break;
	}
	/* uniform with variance 1/fan_in: activations stay near unit scale */
	return u * sqrtf(3.0f / (float)fan_in);
}

int tp_synth_cols(const struct tp_config *c, int t)
{
	switch (t) {
	case TP_T_O:
		return c->heads * (c->mla.kv_lora ? c->mla.v_dim :
				   c->head_dim);
	case TP_T_Q_B:
		return c->mla.q_lora;
	case TP_T_K_B:
		return c->head_dim - c->rot_dim;
	case TP_T_V_B:
		return c->mla.kv_lora;
	case TP_T_DOWN:
		return c->ffn;
	case TP_T_DOWN_EXPS:
		return c->moe.ffn;
	case TP_T_DOWN_SHEXP:
		return c->moe.ffn * c->moe.shared;
	case TP_T_NEXTN_EH_PROJ:
		return 2 * c->dim;
	default:
		return c->dim;
	}
}

/* Whole blocks of the type of a row of the full tensor, then the cut. */
void tp_synth_mat(struct tp_synth *s, int t, int layer, int r0, int r1,
		  int c0, int c1, struct tp_mat *out)
{
	tp_synth_mat_as(s, s->type, t, layer, r0, r1, c0, c1, out);
	tp_mat_interleave(out);	/* for decoding, where it gains */
}

void tp_synth_mat_as(struct tp_synth *s, enum tp_type want, int t, int layer,
		     int r0, int r1, int c0, int c1, struct tp_mat *out)
{
	int full = tp_synth_cols(s->c, t);
	enum tp_type type = tp_type_for_cols(want, full);
	int blk = tp_type_block(type), i, j;
	int cb0 = c0 / blk * blk, cb1 = (c1 + blk - 1) / blk * blk;
	size_t stride = tp_type_bytes(type, (size_t)(cb1 - cb0));
	char *data = tp_weights_alloc(s->w, stride * (size_t)(r1 - r0));
	float *tmp = tp_calloc((size_t)(cb1 - cb0), sizeof(float));
	struct tp_mat part = {
		.type = type, .rows = r1 - r0, .cols = cb1 - cb0,
		.stride = stride, .data = data,
	};

	for (i = r0; i < r1; i++) {
		for (j = cb0; j < cb1; j++)
			tmp[j - cb0] = tp_synth_value(s->c, s->seed, t, layer,
						      i, j);
		tp_row_from_f32(type, tmp, data + (size_t)(i - r0) * stride,
				(size_t)(cb1 - cb0));
	}
	free(tmp);
	tp_mat_shard(s->w, &part, 0, r1 - r0, c0 - cb0, c1 - cb0, out);
}

const float *tp_synth_rows(struct tp_synth *s, int t, int layer, int rows,
			  int n)
{
	float *v = tp_weights_alloc(s->w, (size_t)rows * n * sizeof(float));
	int i, j;

	for (i = 0; i < rows; i++)
		for (j = 0; j < n; j++)
			v[(size_t)i * n + j] = tp_synth_value(s->c, s->seed, t,
							      layer, i, j);
	return v;
}

const float *tp_synth_vec(struct tp_synth *s, int t, int layer, int n)
{
	return tp_synth_rows(s, t, layer, 1, n);
}

void tp_synth_cost(const struct tp_config *c, enum tp_type type,
		       struct tp_shard_cost *k)
{
	long hd = c->head_dim, qd = c->heads * hd, kvd = c->kv_heads * hd;
	enum tp_type in = tp_type_for_cols(type, c->dim);
	int l;

	memset(k, 0, sizeof(*k));
	k->o_block = k->down_block = 1;
	for (l = 0; l < c->layers; l++) {
		tp_shard_cost_add(&k->q, NULL, in, qd, c->dim);
		tp_shard_cost_add(&k->kv, NULL, in, 2 * kvd, c->dim);
		tp_shard_cost_add(&k->o, &k->o_block,
				  tp_type_for_cols(type, (int)qd), c->dim, qd);
		if (c->moe.experts && l >= c->moe.dense_layers)
			continue;	/* MoE: no dense MLP (shard_cost) */
		tp_shard_cost_add(&k->gate_up, NULL, in, 2L * c->ffn, c->dim);
		tp_shard_cost_add(&k->down, &k->down_block,
				  tp_type_for_cols(type, c->ffn), c->dim,
				  c->ffn);
	}
}

int tp_synth_check(const struct tp_config *c, enum tp_type type, int rank,
		   int nranks, struct tp_shard *sh, char *err, size_t errlen)
{
	struct tp_shard_cost cost;

	if (tp_config_check(c, nranks, err, errlen))
		return -1;
	if (!tp_type_name(type)) {
		snprintf(err, errlen, "unsupported weight type %d", type);
		return -1;
	}
	if (tp_type_block(type) > 1 &&
	    (c->dim % 32 || c->ffn % 32 || c->heads * c->head_dim % 32 ||
	     c->moe.ffn % 32)) {
		snprintf(err, errlen,
			 "%s weights need dim, ffn, expert-ffn and heads x head-dim to be multiples of 32",
			 tp_type_name(type));
		return -1;
	}
	tp_synth_cost(c, type, &cost);
	return tp_shard_plan(c, &cost, rank, nranks, sh, err, errlen);
}

int tp_synth_weights(struct tp_weights *w, const struct tp_arch *arch,
		     const struct tp_config *c, uint64_t seed,
		     enum tp_type type, int rank, int nranks, char *err,
		     size_t errlen)
{
	struct tp_synth s = { .w = w, .c = c, .seed = seed, .type = type };
	const struct tp_shard *sh = &w->sh;
	int l;

	memset(w, 0, sizeof(*w));
	if (!arch->synth_layer) {
		snprintf(err, errlen, "architecture %s has no synthetic weights",
			 arch->name);
		return -1;
	}
	if (tp_synth_check(c, type, rank, nranks, &w->sh, err, errlen))
		return -1;
	w->arch = arch;
	w->cfg = *c;
	w->wtype = type;
	if (tp_shard_experts(c, rank, nranks,
			     tp_type_block(tp_type_for_cols(type, c->moe.ffn)),
			     tp_type_block(tp_type_for_cols(type, c->moe.ffn *
							    c->moe.shared)),
			     &w->sh, err, errlen))
		return -1;
	snprintf(w->source, sizeof(w->source), "synthetic seed %llu %s",
		 (unsigned long long)seed, tp_type_name(type));
	w->layer = tp_calloc((size_t)c->layers, sizeof(*w->layer));

	/* the embedding is computed per token (vocab_ends.c), not held */
	w->embd.type = tp_type_for_cols(type, c->dim);
	w->embd.row_bytes = tp_type_bytes(w->embd.type, (size_t)c->dim);
	w->embd.seed = seed;
	tp_split_vocab(c, rank, nranks, &w->sh);
	tp_synth_mat(&s, TP_T_OUTPUT, 0, sh->v0, sh->v1, 0, c->dim,
		     &w->output);
	w->out_norm = tp_synth_vec(&s, TP_T_OUT_NORM, 0, c->dim);
	for (l = 0; l < c->layers; l++)
		arch->synth_layer(&s, &w->layer[l], l);
	return 0;
}
