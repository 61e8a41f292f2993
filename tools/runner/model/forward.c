// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The forward pass of one rank's shard; see model.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/util.h"
#include "comm/allreduce.h"
#include "kernels/matmul.h"
#include "kernels/vector.h"
#include "model/model.h"

int tp_model_init(struct tp_model *m, const struct tp_weights *w, int ctx,
		  int max_batch)
{
	const struct tp_config *c = &w->cfg;
	size_t hd = (size_t)c->head_dim, b = (size_t)max_batch, kvd;

	memset(m, 0, sizeof(*m));
	m->w = w;
	m->cfg = *c;
	m->nq = w->sh.q1 - w->sh.q0;
	m->nkv = w->sh.kv1 - w->sh.kv0;
	m->nf = w->sh.f1 - w->sh.f0;
	m->ctx = ctx;
	m->max_batch = max_batch;
	kvd = (size_t)m->nkv * hd;
	m->kcache = tp_alloc_pages((size_t)c->layers * ctx * kvd * sizeof(float));
	m->vcache = tp_alloc_pages((size_t)c->layers * ctx * kvd * sizeof(float));
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
	return 0;
}

void tp_model_free(struct tp_model *m)
{
	free(m->kcache);
	free(m->vcache);
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
	memset(m, 0, sizeof(*m));
}

/* Attention of one query head of token T (at position POS). */
static void attend_head(struct tp_model *m, int l, int t, int pos, int h,
			float *scores)
{
	const struct tp_config *c = &m->cfg;
	int hd = c->head_dim, group = c->heads / c->kv_heads;
	size_t kvd = (size_t)m->nkv * hd;
	const float *kl = m->kcache + (size_t)l * m->ctx * kvd;
	const float *vl = m->vcache + (size_t)l * m->ctx * kvd;
	float scale = 1.0f / sqrtf((float)hd);
	int kvh = (m->w->sh.q0 + h) / group - m->w->sh.kv0;
	const float *qh = m->q + ((size_t)t * m->nq + h) * hd;
	float *out = m->att + ((size_t)t * m->nq + h) * hd;
	int p, i;

	for (p = 0; p <= pos; p++)
		scores[p] = tp_dot_f32(qh, kl + p * kvd + kvh * hd, hd) * scale;
	tp_softmax(scores, pos + 1);
	memset(out, 0, hd * sizeof(float));
	for (p = 0; p <= pos; p++) {
		const float *vp = vl + p * kvd + kvh * hd;
		float s = scores[p];

		for (i = 0; i < hd; i++)
			out[i] += s * vp[i];
	}
}

struct attn_job {
	struct tp_model *m;
	int l, n, pos;
};

/* The (token, head) pairs of a batch, split over the compute threads. */
static void attention_part(void *arg, int part, int nparts)
{
	const struct attn_job *j = arg;
	int nq = j->m->nq;
	float *scores = j->m->scores + (size_t)part * j->m->ctx;
	long b, e, k;

	tp_split((long)j->n * nq, nparts, part, &b, &e);
	for (k = b; k < e; k++) {
		int t = (int)(k / nq), h = (int)(k % nq);

		attend_head(j->m, j->l, t, j->pos + t, h, scores);
	}
}

static void attention(struct tp_model *m, int l, int n, int pos)
{
	struct attn_job j = { .m = m, .l = l, .n = n, .pos = pos };

	tp_pool_run(attention_part, &j);
}

/*
 * The row-parallel products (attention output, MLP down projection) are
 * built straight into the all-reduce's send buffer when it has room
 * (no copy), else into m->part.
 */
static float *part_buf(struct tp_model *m, struct tp_ar *ar, int n)
{
	float *p = ar ? tp_ar_input(ar, (size_t)n * m->cfg.dim) : NULL;

	return p ? p : m->part;
}

/* The residual: x += the sum of every rank's PART. */
static int reduce_add(struct tp_model *m, struct tp_ar *ar, float *part,
		      int n)
{
	size_t i, len = (size_t)n * m->cfg.dim;

	if (ar)
		return tp_allreduce_add(ar, part, m->x, len);
	for (i = 0; i < len; i++)
		m->x[i] += part[i];
	return 0;
}

/* Qwen2: q, k, v += their biases (this rank's rows) for N tokens. */
static void add_bias(struct tp_model *m, const struct tp_layer *L, int n)
{
	size_t qd = (size_t)m->nq * m->cfg.head_dim;
	size_t kvd = (size_t)m->nkv * m->cfg.head_dim, i;
	int t;

	for (t = 0; t < n; t++) {
		for (i = 0; i < qd; i++)
			m->q[t * qd + i] += L->bq[i];
		for (i = 0; i < kvd; i++) {
			m->k[t * kvd + i] += L->bk[i];
			m->v[t * kvd + i] += L->bv[i];
		}
	}
}

int tp_forward(struct tp_model *m, const int *tokens, int n, int pos,
	       struct tp_ar *ar)
{
	const struct tp_weights *w = m->w;
	const struct tp_config *c = &m->cfg;
	int dim = c->dim, hd = c->head_dim, l, t;
	size_t qd = (size_t)m->nq * hd, kvd = (size_t)m->nkv * hd;
	float *part;

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
	for (l = 0; l < c->layers; l++) {
		const struct tp_layer *L = &w->layer[l];
		size_t cache = (size_t)l * m->ctx * kvd;

		for (t = 0; t < n; t++)
			tp_rmsnorm(m->xb + (size_t)t * dim,
				   m->x + (size_t)t * dim, L->attn_norm, dim,
				   c->eps);
		tp_matmul(m->q, m->xb, &L->wq, n);
		tp_matmul(m->k, m->xb, &L->wk, n);
		tp_matmul(m->v, m->xb, &L->wv, n);
		if (L->bq)
			add_bias(m, L, n);
		for (t = 0; t < n; t++) {
			tp_rope_table_ext(m->rope, c->rot_dim, pos + t,
					  c->rope_base, c->rope_scale,
					  w->rope_freqs);
			if (c->rope_neox) {
				tp_rope_apply_neox(m->q + t * qd, m->nq, hd,
						   c->rot_dim, m->rope);
				tp_rope_apply_neox(m->k + t * kvd, m->nkv, hd,
						   c->rot_dim, m->rope);
			} else {
				tp_rope_apply(m->q + t * qd, m->nq, hd,
					      c->rot_dim, m->rope);
				tp_rope_apply(m->k + t * kvd, m->nkv, hd,
					      c->rot_dim, m->rope);
			}
			memcpy(m->kcache + cache + (pos + t) * kvd,
			       m->k + t * kvd, kvd * sizeof(float));
			memcpy(m->vcache + cache + (pos + t) * kvd,
			       m->v + t * kvd, kvd * sizeof(float));
		}
		attention(m, l, n, pos);
		part = part_buf(m, ar, n);
		tp_matmul(part, m->att, &L->wo, n);
		if (reduce_add(m, ar, part, n))
			return -1;

		for (t = 0; t < n; t++)
			tp_rmsnorm(m->xb + (size_t)t * dim,
				   m->x + (size_t)t * dim, L->ffn_norm, dim,
				   c->eps);
		tp_matmul(m->g, m->xb, &L->wgate, n);
		tp_matmul(m->u, m->xb, &L->wup, n);
		tp_swiglu(m->g, m->u, n * m->nf);
		part = part_buf(m, ar, n);
		tp_matmul(part, m->g, &L->wdown, n);
		if (reduce_add(m, ar, part, n))
			return -1;
	}
	tp_rmsnorm(m->xb, m->x + (size_t)(n - 1) * dim, w->out_norm, dim,
		   c->eps);
	return tp_head_logits(m, ar);
}
