// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The attention block, grouped-query, over this rank's heads (with
 * biases on q, k and v and a norm of each head of q and k where the
 * weights have them): its
 * weights by llama.cpp's tensor names (from GGUF, synthetic, exported)
 * and its forward pass in three steps an architecture can put its own
 * code between (attention.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/pool.h"
#include "kernels/kvcache.h"
#include "kernels/matmul.h"
#include "kernels/vector.h"
#include "model/attention.h"
#include "model/export.h"
#include "model/load_gguf.h"
#include "model/residual.h"
#include "model/synthetic.h"

/*
 * The first position a query at POS sees in layer L: 0, or in a layer
 * of sliding-window attention the last swa_window positions (llama.cpp
 * masks p when pos - p >= n_swa).
 */
static int window_layer(const struct tp_config *c, int l)
{
	return c->swa_window && l % c->swa_period < c->swa_period - 1;
}

static int first_seen(const struct tp_config *c, int l, int pos)
{
	if (!window_layer(c, l))
		return 0;
	return pos >= c->swa_window ? pos - c->swa_window + 1 : 0;
}

/*
 * A window layer's ring: a batch of N tokens at POS.. first writes all
 * N into the ring, then its first token reads back to POS - W + 1, so
 * the ring holds W + N - 1 positions (llama.cpp keeps n_swa + n_ubatch).
 */
int tp_attn_cache_slots(const struct tp_config *c, int l, int ctx,
			int max_batch)
{
	long ring = (long)c->swa_window + max_batch - 1;

	if (!window_layer(c, l) || ring >= ctx)
		return ctx;
	return (int)ring;
}

/* Position P's K (or V) row of layer L in CACHE. */
static void *cache_row(const struct tp_model *m, void *cache, int l, int p)
{
	size_t kvd = (size_t)m->nkv * m->cfg.head_dim;

	return (char *)cache + (m->kv_row[l] + (size_t)(p % m->kv_slots[l])) *
	       kvd * tp_kv_elt_bytes(m->kv_type);
}

/* Head KVH's part of position P's K (or V) row. */
static const void *cache_head(const struct tp_model *m, void *cache, int l,
			      int p, int kvh)
{
	return (const char *)cache_row(m, cache, l, p) + (size_t)kvh *
	       m->cfg.head_dim * tp_kv_elt_bytes(m->kv_type);
}

/*
 * Attention of one query head of token T (at position POS). An F16
 * cache's products see q and the softmax weights in F16 as well, as
 * llama.cpp's do (kvcache.h); q is this job's own, rounded in place.
 */
static void attend_head(struct tp_model *m, int l, int t, int pos, int h,
			const float *sinks, float *scores)
{
	const struct tp_config *c = &m->cfg;
	int hd = c->head_dim, group = c->heads / c->kv_heads;
	float scale = 1.0f / sqrtf((float)hd);
	int kvh = (m->w->sh.q0 + h) / group - m->w->sh.kv0;
	enum tp_type kt = m->kv_type;
	float *qh = m->q + ((size_t)t * m->nq + h) * hd;
	float *out = m->att + ((size_t)t * m->nq + h) * hd;
	int p0 = first_seen(c, l, pos), p;

	tp_kv_round(kt, qh, hd);
	for (p = p0; p <= pos; p++)
		scores[p - p0] = tp_kv_dot(kt, cache_head(m, m->kcache, l, p,
							  kvh), qh, hd) * scale;
	tp_softmax_sink(scores, pos + 1 - p0, sinks ? sinks[h] : -INFINITY);
	tp_kv_round(kt, scores, pos + 1 - p0);
	memset(out, 0, hd * sizeof(float));
	for (p = p0; p <= pos; p++)
		tp_kv_axpy(kt, out, scores[p - p0],
			   cache_head(m, m->vcache, l, p, kvh), hd);
}

struct attn_job {
	struct tp_model *m;
	const float *sinks;
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

		attend_head(j->m, j->l, t, j->pos + t, h, j->sinks, scores);
	}
}

static void attention(struct tp_model *m, const float *sinks, int l, int n,
		      int pos)
{
	struct attn_job j = { .m = m, .sinks = sinks, .l = l, .n = n,
			      .pos = pos };

	tp_pool_run(attention_part, &j);
}

/* q, k, v += their biases (this rank's rows) for N tokens. */
static void add_bias(struct tp_model *m, const struct tp_attn_weights *a,
		     int n)
{
	size_t qd = (size_t)m->nq * m->cfg.head_dim;
	size_t kvd = (size_t)m->nkv * m->cfg.head_dim, i;
	int t;

	for (t = 0; t < n; t++) {
		for (i = 0; i < qd; i++)
			m->q[t * qd + i] += a->bq[i];
		for (i = 0; i < kvd; i++) {
			m->k[t * kvd + i] += a->bk[i];
			m->v[t * kvd + i] += a->bv[i];
		}
	}
}

/* Each head of q and of k RMS-normed over its head_dim (Qwen3). */
static void qk_norm(struct tp_model *m, const struct tp_attn_weights *a,
		    int n)
{
	const struct tp_config *c = &m->cfg;
	int hd = c->head_dim, h;

	for (h = 0; h < n * m->nq; h++)
		tp_rmsnorm(m->q + (size_t)h * hd, m->q + (size_t)h * hd,
			   a->q_norm, hd, c->eps);
	for (h = 0; h < n * m->nkv; h++)
		tp_rmsnorm(m->k + (size_t)h * hd, m->k + (size_t)h * hd,
			   a->k_norm, hd, c->eps);
}

void tp_attn_project(struct tp_model *m, const struct tp_attn_weights *a,
		     int n)
{
	const struct tp_config *c = &m->cfg;
	int dim = c->dim, t;

	for (t = 0; t < n; t++)
		tp_rmsnorm(m->xb + (size_t)t * dim, m->x + (size_t)t * dim,
			   a->norm, dim, c->eps);
	tp_matmul(m->q, m->xb, &a->wq, n);
	tp_matmul(m->k, m->xb, &a->wk, n);
	tp_matmul(m->v, m->xb, &a->wv, n);
	if (a->bq)
		add_bias(m, a, n);
	if (a->q_norm)
		qk_norm(m, a, n);
}

void tp_attn_rope_cache(struct tp_model *m, int l, int n, int pos)
{
	const struct tp_config *c = &m->cfg;
	int hd = c->head_dim, t;
	size_t qd = (size_t)m->nq * hd, kvd = (size_t)m->nkv * hd;

	for (t = 0; t < n; t++) {
		if (c->yarn_orig_ctx)
			tp_rope_table_yarn(m->rope, c->rot_dim, pos + t,
					   c->rope_base, c->rope_scale,
					   c->yarn_orig_ctx, c->yarn_beta_fast,
					   c->yarn_beta_slow, m->w->rope_freqs);
		else
			tp_rope_table_ext(m->rope, c->rot_dim, pos + t,
					  c->rope_base, c->rope_scale,
					  m->w->rope_freqs);
		if (c->rope_neox) {
			tp_rope_apply_neox(m->q + t * qd, m->nq, hd,
					   c->rot_dim, m->rope);
			tp_rope_apply_neox(m->k + t * kvd, m->nkv, hd,
					   c->rot_dim, m->rope);
		} else {
			tp_rope_apply(m->q + t * qd, m->nq, hd, c->rot_dim,
				      m->rope);
			tp_rope_apply(m->k + t * kvd, m->nkv, hd, c->rot_dim,
				      m->rope);
		}
		tp_kv_store(m->kv_type, cache_row(m, m->kcache, l, pos + t),
			    m->k + t * kvd, (int)kvd);
		tp_kv_store(m->kv_type, cache_row(m, m->vcache, l, pos + t),
			    m->v + t * kvd, (int)kvd);
	}
}

int tp_attn_output(struct tp_model *m, const struct tp_attn_weights *a,
		   int l, int n, int pos, struct tp_ar *ar)
{
	float *part;
	int t, i;

	attention(m, a->sinks, l, n, pos);
	part = tp_residual_buf(m, ar, n);
	tp_matmul(part, m->att, &a->wo, n);
	if (a->bo)
		for (t = 0; t < n; t++)
			for (i = 0; i < m->cfg.dim; i++)
				part[(size_t)t * m->cfg.dim + i] += a->bo[i];
	return tp_residual_add(m, ar, part, n);
}

int tp_attention(struct tp_model *m, const struct tp_attn_weights *a, int l,
		 int n, int pos, struct tp_ar *ar)
{
	tp_attn_project(m, a, n);
	tp_attn_rope_cache(m, l, n, pos);
	return tp_attn_output(m, a, l, n, pos, ar);
}

int tp_attn_load(struct tp_gguf_load *L, struct tp_attn_weights *a, int l)
{
	const struct tp_config *c = &L->w->cfg;
	const struct tp_shard *sh = &L->w->sh;
	int hd = c->head_dim, qd = c->heads * hd, kvd = c->kv_heads * hd;

	return tp_gguf_vector(L, "blk.%d.attn_norm.weight", l, c->dim,
			      &a->norm) ||
	       tp_gguf_shard(L, "blk.%d.attn_q.weight", l, qd, c->dim,
			     sh->q0 * hd, sh->q1 * hd, 0, c->dim, &a->wq) ||
	       tp_gguf_shard(L, "blk.%d.attn_k.weight", l, kvd, c->dim,
			     sh->kv0 * hd, sh->kv1 * hd, 0, c->dim, &a->wk) ||
	       tp_gguf_shard(L, "blk.%d.attn_v.weight", l, kvd, c->dim,
			     sh->kv0 * hd, sh->kv1 * hd, 0, c->dim, &a->wv) ||
	       tp_gguf_shard(L, "blk.%d.attn_output.weight", l, c->dim, qd,
			     0, c->dim, sh->q0 * hd, sh->q1 * hd, &a->wo) ?
	       -1 : 0;
}

int tp_attn_load_bias(struct tp_gguf_load *L, struct tp_attn_weights *a,
		      int l)
{
	const struct tp_config *c = &L->w->cfg;
	const struct tp_shard *sh = &L->w->sh;
	int hd = c->head_dim, kvd = c->kv_heads * hd;

	return tp_gguf_vector_rows(L, "blk.%d.attn_q.bias", l, c->heads * hd,
				   sh->q0 * hd, &a->bq) ||
	       tp_gguf_vector_rows(L, "blk.%d.attn_k.bias", l, kvd,
				   sh->kv0 * hd, &a->bk) ||
	       tp_gguf_vector_rows(L, "blk.%d.attn_v.bias", l, kvd,
				   sh->kv0 * hd, &a->bv) ? -1 : 0;
}

int tp_attn_load_bias_opt(struct tp_gguf_load *L, struct tp_attn_weights *a,
			  int l)
{
	char name[96];
	int present = 0, i;

	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "blk.%d.attn_%c.bias", l, "qkv"[i]);
		present += gguf_find_tensor(&L->g, name) != NULL;
	}
	if (present == 3)
		return tp_attn_load_bias(L, a, l);
	if (present)
		return tp_gguf_bad(L, "layer %d has %d of the biases of Q, K and V (blk.%d.attn_{q,k,v}.bias): all three or none",
				   l, present, l);
	return 0;
}

int tp_attn_load_qk_norm(struct tp_gguf_load *L, struct tp_attn_weights *a,
			 int l, int required)
{
	const struct tp_config *c = &L->w->cfg;
	char name[96];

	snprintf(name, sizeof(name), "blk.%d.attn_q_norm.weight", l);
	if (!required && !gguf_find_tensor(&L->g, name)) {
		snprintf(name, sizeof(name), "blk.%d.attn_k_norm.weight", l);
		if (gguf_find_tensor(&L->g, name))
			return tp_gguf_bad(L, "layer %d has attn_k_norm without attn_q_norm", l);
		return 0;
	}
	return tp_gguf_vector(L, "blk.%d.attn_q_norm.weight", l, c->head_dim,
			      &a->q_norm) ||
	       tp_gguf_vector(L, "blk.%d.attn_k_norm.weight", l, c->head_dim,
			      &a->k_norm) ? -1 : 0;
}

void tp_attn_synth_extras(struct tp_synth *s, struct tp_attn_weights *a,
			  int l, int bias, int qk_norm)
{
	const struct tp_config *c = s->c;
	const struct tp_shard *sh = &s->w->sh;
	int hd = c->head_dim;
	const float *bq, *bk, *bv;

	if (bias) {
		bq = tp_synth_vec(s, TP_T_Q_BIAS, l, c->heads * hd);
		bk = tp_synth_vec(s, TP_T_K_BIAS, l, c->kv_heads * hd);
		bv = tp_synth_vec(s, TP_T_V_BIAS, l, c->kv_heads * hd);
		a->bq = bq + sh->q0 * hd;
		a->bk = bk + sh->kv0 * hd;
		a->bv = bv + sh->kv0 * hd;
	}
	if (qk_norm) {
		a->q_norm = tp_synth_vec(s, TP_T_Q_NORM, l, hd);
		a->k_norm = tp_synth_vec(s, TP_T_K_NORM, l, hd);
	}
}

void tp_attn_export_extras(struct tp_export *e, int l, int bias, int qk_norm)
{
	const struct tp_config *c = e->c;
	int qd = c->heads * c->head_dim, kvd = c->kv_heads * c->head_dim;

	if (bias) {
		tp_export_tensor(e, TP_F32, "blk.%d.attn_q.bias", l,
				 TP_T_Q_BIAS, 1, qd);
		tp_export_tensor(e, TP_F32, "blk.%d.attn_k.bias", l,
				 TP_T_K_BIAS, 1, kvd);
		tp_export_tensor(e, TP_F32, "blk.%d.attn_v.bias", l,
				 TP_T_V_BIAS, 1, kvd);
	}
	if (qk_norm) {
		tp_export_tensor(e, TP_F32, "blk.%d.attn_q_norm.weight", l,
				 TP_T_Q_NORM, 1, c->head_dim);
		tp_export_tensor(e, TP_F32, "blk.%d.attn_k_norm.weight", l,
				 TP_T_K_NORM, 1, c->head_dim);
	}
}

void tp_attn_synth(struct tp_synth *s, struct tp_attn_weights *a, int l)
{
	const struct tp_config *c = s->c;
	const struct tp_shard *sh = &s->w->sh;
	int hd = c->head_dim;

	a->norm = tp_synth_vec(s, TP_T_ATTN_NORM, l, c->dim);
	tp_synth_mat(s, TP_T_Q, l, sh->q0 * hd, sh->q1 * hd, 0, c->dim,
		     &a->wq);
	tp_synth_mat(s, TP_T_K, l, sh->kv0 * hd, sh->kv1 * hd, 0, c->dim,
		     &a->wk);
	tp_synth_mat(s, TP_T_V, l, sh->kv0 * hd, sh->kv1 * hd, 0, c->dim,
		     &a->wv);
	tp_synth_mat(s, TP_T_O, l, 0, c->dim, sh->q0 * hd, sh->q1 * hd,
		     &a->wo);
}

void tp_attn_export(struct tp_export *e, int l)
{
	const struct tp_config *c = e->c;
	int qd = c->heads * c->head_dim, kvd = c->kv_heads * c->head_dim;

	tp_export_tensor(e, TP_F32, "blk.%d.attn_norm.weight", l,
			 TP_T_ATTN_NORM, 1, c->dim);
	tp_export_tensor(e, e->type, "blk.%d.attn_q.weight", l, TP_T_Q, qd,
			 c->dim);
	tp_export_tensor(e, e->type, "blk.%d.attn_k.weight", l, TP_T_K, kvd,
			 c->dim);
	tp_export_tensor(e, e->type, "blk.%d.attn_v.weight", l, TP_T_V, kvd,
			 c->dim);
	tp_export_tensor(e, e->type, "blk.%d.attn_output.weight", l, TP_T_O,
			 c->dim, qd);
}
