// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The forward pass of one rank's shard: the model's working memory (KV
 * cache, activations), and a batch of tokens from their embedding rows
 * through every layer, as its architecture runs it, to the logits. See
 * model.h.
 */
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/util.h"
#include "kernels/kvcache.h"
#include "kernels/vector.h"
#include "model/arch.h"
#include "model/attention.h"
#include "model/model.h"
#include "model/mla.h"
#include "model/moe.h"

int tp_model_init(struct tp_model *m, const struct tp_weights *w, int ctx,
		  int max_batch)
{
	return tp_model_init_kv(m, w, ctx, max_batch, 0);
}

int tp_model_init_kv(struct tp_model *m, const struct tp_weights *w, int ctx,
		     int max_batch, int swa_full)
{
	return tp_model_init_cache(m, w, ctx, max_batch, swa_full, TP_F32);
}

int tp_model_init_cache(struct tp_model *m, const struct tp_weights *w,
			int ctx, int max_batch, int swa_full,
			enum tp_type kv_type)
{
	const struct tp_config *c = &w->cfg;
	size_t hd = (size_t)c->head_dim, b = (size_t)max_batch, kvd, rows = 0;
	size_t elt = tp_kv_elt_bytes(kv_type);
	int l;

	memset(m, 0, sizeof(*m));
	if (!tp_kv_type_ok(kv_type)) {
		tp_err("a KV cache of %s: f32 or f16 only",
		       tp_type_name(kv_type));
		return -1;
	}
	m->kv_type = kv_type;
	m->w = w;
	m->cfg = *c;
	m->nq = w->sh.q1 - w->sh.q0;
	m->nkv = w->sh.kv1 - w->sh.kv0;
	m->nf = w->sh.f1 - w->sh.f0;
	m->ctx = ctx;
	m->max_batch = max_batch;
	kvd = (size_t)m->nkv * hd;
	if (c->mla.kv_lora) {
		/* the latent and the RoPE key of each token: no V cache */
		size_t lat = (size_t)c->mla.kv_lora + c->rot_dim;

		m->kv_bytes = (size_t)c->layers * ctx * lat * elt;
		m->kcache = tp_alloc_pages(m->kv_bytes);
	} else {
		m->kv_slots = tp_calloc((size_t)c->layers, sizeof(int));
		m->kv_row = tp_calloc((size_t)c->layers, sizeof(size_t));
		for (l = 0; l < c->layers; l++) {
			m->kv_slots[l] = swa_full ? ctx :
				tp_attn_cache_slots(c, l, ctx, max_batch);
			m->kv_row[l] = rows;
			rows += (size_t)m->kv_slots[l];
		}
		m->kv_bytes = 2 * rows * kvd * elt;
		m->kcache = tp_alloc_pages(rows * kvd * elt);
		m->vcache = tp_alloc_pages(rows * kvd * elt);
	}
	m->x = tp_calloc(b * c->dim, sizeof(float));
	m->xb = tp_calloc(b * c->dim, sizeof(float));
	m->part = tp_calloc(b * c->dim, sizeof(float));
	m->q = tp_calloc(b * m->nq * hd, sizeof(float));
	m->att = tp_calloc(b * m->nq * hd, sizeof(float));
	m->k = tp_calloc(b * kvd, sizeof(float));
	m->v = tp_calloc(b * kvd, sizeof(float));
	m->g = tp_calloc(b * m->nf, sizeof(float));
	m->u = tp_calloc(b * m->nf, sizeof(float));
	/* one row of scores per compute thread (attention by heads) */
	m->scores = tp_calloc((size_t)tp_pool_threads() * ctx, sizeof(float));
	m->rope = tp_calloc((size_t)c->rot_dim, sizeof(float));
	m->logits = tp_calloc((size_t)c->vocab, sizeof(float));
	tp_moe_init(m);
	tp_mla_init(m);
	return 0;
}

void tp_model_free(struct tp_model *m)
{
	free(m->kcache);
	free(m->vcache);
	free(m->kv_slots);
	free(m->kv_row);
	free(m->x);
	free(m->xb);
	free(m->part);
	free(m->q);
	free(m->att);
	free(m->k);
	free(m->v);
	free(m->g);
	free(m->u);
	free(m->scores);
	free(m->rope);
	free(m->logits);
	tp_moe_free(m);
	tp_mla_free(m);
	memset(m, 0, sizeof(*m));
}

int tp_forward(struct tp_model *m, const int *tokens, int n, int pos,
	       struct tp_ar *ar)
{
	const struct tp_weights *w = m->w;
	const struct tp_config *c = &m->cfg;
	int dim = c->dim, l, t;

	if (n < 1 || n > m->max_batch || pos < 0 || pos + n > m->ctx) {
		tp_err("forward of %d tokens at %d: outside the batch (%d) or context (%d)",
		       n, pos, m->max_batch, m->ctx);
		return -1;
	}
	for (t = 0; t < n; t++) {
		if (tokens[t] < 0 || tokens[t] >= c->vocab) {
			tp_err("token %d is outside the vocabulary (%d)",
			       tokens[t], c->vocab);
			return -1;
		}
		if (tp_embed_row(w, tokens[t], m->x + (size_t)t * dim))
			return -1;
	}
	for (l = 0; l < c->layers; l++)
		if (w->arch->forward_layer(m, &w->layer[l], l, n, pos, ar))
			return -1;
	tp_rmsnorm(m->xb, m->x + (size_t)(n - 1) * dim, w->out_norm, dim,
		   c->eps);
	return tp_head_logits(m, ar);
}
