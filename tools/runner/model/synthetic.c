// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Synthetic weights: every element is a pure function of (seed, tensor,
 * layer, row, column), so each rank generates only its shard and gets the
 * values the 1-rank run has there. Stored in TYPE (F32, F16, BF16, Q8_0)
 * the same way a GGUF file of that type would be: quantised per row over
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
#include "model/model.h"

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
		return 1.0f + 0.25f * u;
	case TP_T_O:
		fan_in = c->heads * c->head_dim;
		break;
	case TP_T_DOWN:
		fan_in = c->ffn;
		break;
	default:
		fan_in = c->dim;
		break;
	}
	/* uniform with variance 1/fan_in: activations stay near unit scale */
	return u * sqrtf(3.0f / (float)fan_in);
}

struct synth {
	struct tp_weights *w;
	const struct tp_config *c;
	uint64_t seed;
	enum tp_type type;
};

/*
 * Rows [r0,r1) x columns [c0,c1) of synthetic tensor T, stored as s->type
 * or, for a K-quant and rows of a length it cannot hold, as the type an
 * export of the same model stores that tensor in (tp_type_for_cols).
 */
static void synth_mat(struct synth *s, int t, int layer, int r0, int r1,
		      int c0, int c1, struct tp_mat *out)
{
	int full = t == TP_T_O ? s->c->heads * s->c->head_dim :
		   t == TP_T_DOWN ? s->c->ffn : s->c->dim;
	enum tp_type type = tp_type_for_cols(s->type, full);
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
	tp_mat_interleave(out);	/* for decoding, where it gains */
}

static const float *synth_vec(struct synth *s, int t, int layer, int n)
{
	float *v = tp_weights_alloc(s->w, (size_t)n * sizeof(float));
	int j;

	for (j = 0; j < n; j++)
		v[j] = tp_synth_value(s->c, s->seed, t, layer, 0, j);
	return v;
}

int tp_weights_synth(struct tp_weights *w, const struct tp_config *c,
		     uint64_t seed, enum tp_type type, int rank, int nranks,
		     char *err, size_t errlen)
{
	struct synth s = { .w = w, .c = c, .seed = seed, .type = type };
	const struct tp_shard *sh = &w->sh;
	int hd = c->head_dim, qdim = c->heads * c->head_dim, l;

	memset(w, 0, sizeof(*w));
	if (tp_config_check(c, nranks, err, errlen))
		return -1;
	if (!tp_type_name(type)) {
		snprintf(err, errlen, "unsupported weight type %d", type);
		return -1;
	}
	if (tp_type_block(type) > 1 &&
	    (c->dim % 32 || c->ffn % 32 || qdim % 32)) {
		snprintf(err, errlen,
			 "%s weights need dim, ffn and heads x head-dim to be multiples of 32",
			 tp_type_name(type));
		return -1;
	}
	w->cfg = *c;
	w->wtype = type;
	tp_shard_plan_unit(c, rank, nranks,
			   tp_type_block(tp_type_for_cols(type, c->ffn)),
			   &w->sh);
	snprintf(w->source, sizeof(w->source), "synthetic seed %llu %s",
		 (unsigned long long)seed, tp_type_name(type));
	w->layer = tp_calloc((size_t)c->layers, sizeof(*w->layer));

	/* the embedding is computed per token (vocab.c), not held */
	w->embd.type = tp_type_for_cols(type, c->dim);
	w->embd.row_bytes = tp_type_bytes(w->embd.type, (size_t)c->dim);
	w->embd.seed = seed;
	tp_split_vocab(c, rank, nranks, &w->sh);
	synth_mat(&s, TP_T_OUTPUT, 0, sh->v0, sh->v1, 0, c->dim, &w->output);
	w->out_norm = synth_vec(&s, TP_T_OUT_NORM, 0, c->dim);
	for (l = 0; l < c->layers; l++) {
		struct tp_layer *L = &w->layer[l];

		L->attn_norm = synth_vec(&s, TP_T_ATTN_NORM, l, c->dim);
		L->ffn_norm = synth_vec(&s, TP_T_FFN_NORM, l, c->dim);
		synth_mat(&s, TP_T_Q, l, sh->q0 * hd, sh->q1 * hd, 0,
			  c->dim, &L->wq);
		synth_mat(&s, TP_T_K, l, sh->kv0 * hd, sh->kv1 * hd, 0,
			  c->dim, &L->wk);
		synth_mat(&s, TP_T_V, l, sh->kv0 * hd, sh->kv1 * hd, 0,
			  c->dim, &L->wv);
		synth_mat(&s, TP_T_O, l, 0, c->dim, sh->q0 * hd,
			  sh->q1 * hd, &L->wo);
		synth_mat(&s, TP_T_GATE, l, sh->f0, sh->f1, 0, c->dim,
			  &L->wgate);
		synth_mat(&s, TP_T_UP, l, sh->f0, sh->f1, 0, c->dim,
			  &L->wup);
		synth_mat(&s, TP_T_DOWN, l, 0, c->dim, sh->f0, sh->f1,
			  &L->wdown);
	}
	return 0;
}
