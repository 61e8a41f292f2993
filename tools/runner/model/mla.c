// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Multi-head latent attention over this rank's heads (mla.h): its
 * weights by llama.cpp's tensor names (from GGUF, synthetic, exported)
 * and its forward pass, the latent cached rather than K and V.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/util.h"
#include "kernels/kvcache.h"
#include "kernels/matmul.h"
#include "kernels/vector.h"
#include "model/export.h"
#include "model/load_gguf.h"
#include "model/mla.h"
#include "model/residual.h"
#include "model/synthetic.h"

struct tp_mla_buf {
	float *qa;	/* batch x q_lora: q's low-rank part */
	float *ckv;	/* batch x (kv_lora + rot): latent | k_pe */
	float *qk;	/* batch x local heads x (kv_lora + rot): qa | q_pe */
	float *lat;	/* batch x local heads x kv_lora: attention's output */
	float *vo;	/* batch x local heads x v_dim: Wo's input */
	float *gin, *gout;	/* one head of a batch, gathered */
};

static int imax(int a, int b)
{
	return a > b ? a : b;
}

void tp_mla_init(struct tp_model *m)
{
	const struct tp_mla_config *c = &m->cfg.mla;
	size_t b = (size_t)m->max_batch, nq = (size_t)m->nq;
	size_t kr = (size_t)c->kv_lora + m->cfg.rot_dim;
	struct tp_mla_buf *B;

	if (!c->kv_lora)
		return;
	B = tp_calloc(1, sizeof(*B));
	B->qa = tp_calloc(b * (c->q_lora ? c->q_lora : 1), sizeof(float));
	B->ckv = tp_calloc(b * kr, sizeof(float));
	B->qk = tp_calloc(b * (nq ? nq : 1) * kr, sizeof(float));
	B->lat = tp_calloc(b * (nq ? nq : 1) * c->kv_lora, sizeof(float));
	B->vo = tp_calloc(b * (nq ? nq : 1) * c->v_dim, sizeof(float));
	B->gin = tp_calloc(b * imax(m->cfg.head_dim, c->kv_lora),
			   sizeof(float));
	B->gout = tp_calloc(b * imax(c->v_dim, c->kv_lora), sizeof(float));
	m->mla = B;
}

void tp_mla_free(struct tp_model *m)
{
	struct tp_mla_buf *B = m->mla;

	if (!B)
		return;
	free(B->qa);
	free(B->ckv);
	free(B->qk);
	free(B->lat);
	free(B->vo);
	free(B->gin);
	free(B->gout);
	free(B);
	m->mla = NULL;
}

/* OUT[t] (stride OS, at OO) = W . IN[t] (stride IS, at IO, W's columns)
 * for the N tokens of a batch: one head's rows gathered and scattered. */
static void per_head(struct tp_model *m, const struct tp_mat *w,
		     const float *in, size_t is, float *out, size_t os, int n)
{
	struct tp_mla_buf *B = m->mla;
	int t;

	for (t = 0; t < n; t++)
		memcpy(B->gin + (size_t)t * w->cols, in + t * is,
		       (size_t)w->cols * sizeof(float));
	tp_matmul(B->gout, B->gin, w, n);
	for (t = 0; t < n; t++)
		memcpy(out + t * os, B->gout + (size_t)t * w->rows,
		       (size_t)w->rows * sizeof(float));
}

struct mla_job {
	struct tp_model *m;
	int l, n, pos;
};

/*
 * deepseek2's YaRN as llama.cpp runs it. Its context's attention factor
 * is get_mscale(f, m) / get_mscale(f, m_all) (f the scaling factor, m_all
 * the file's log multiplier / 0.1, m = m_all: llama.cpp's deepseek2
 * case; get_mscale(f, 1) without a multiplier) over 1 + 0.1 ln f, which
 * GGML's YaRN multiplies back: the magnitude of cos and sin. The scores
 * are scaled by (that x (1 + 0.1 m_all ln f))^2 / sqrt(head_dim).
 */
static float get_mscale(float f, float m)
{
	return f <= 1.0f ? 1.0f : 0.1f * m * logf(f) + 1.0f;
}

static float yarn_magnitude(const struct tp_config *c)
{
	float f = 1.0f / c->rope_scale, all = c->yarn_log_mul / 0.1f;
	float factor = c->yarn_log_mul != 0 ?
		       get_mscale(f, all) / get_mscale(f, all) :
		       get_mscale(f, 1.0f);

	factor *= 1.0f / (1.0f + 0.1f * logf(f));
	return factor * (1.0f + 0.1f * logf(1.0f / c->rope_scale));
}

static float score_scale(const struct tp_config *c)
{
	float m;

	if (!c->yarn_orig_ctx)
		return 1.0f / sqrtf((float)c->head_dim);
	m = yarn_magnitude(c) * (1.0f + 0.1f * (c->yarn_log_mul / 0.1f) *
					 logf(1.0f / c->rope_scale));
	return 1.0f * m * m / sqrtf((float)c->head_dim);
}

/* Position P's row of layer L's latent cache: kv_lora + rot values. */
static void *latent_row(const struct tp_model *m, int l, int p)
{
	size_t kr = (size_t)m->cfg.mla.kv_lora + m->cfg.rot_dim;

	return (char *)m->kcache + ((size_t)l * m->ctx + p) * kr *
	       tp_kv_elt_bytes(m->kv_type);
}

/*
 * One query head of token T at POS over layer L's latent cache. An F16
 * cache's products see q and the softmax weights in F16 as well, as
 * llama.cpp's do (kvcache.h); q is this job's own, rounded in place.
 */
static void attend(struct tp_model *m, int l, int t, int pos, int h,
		   float *scores)
{
	const struct tp_config *c = &m->cfg;
	int lora = c->mla.kv_lora, kr = lora + c->rot_dim, p;
	enum tp_type kt = m->kv_type;
	float *q = m->mla->qk + ((size_t)t * m->nq + h) * kr;
	float *out = m->mla->lat + ((size_t)t * m->nq + h) * lora;
	float scale = score_scale(c);

	tp_kv_round(kt, q, kr);
	for (p = 0; p <= pos; p++)
		scores[p] = tp_kv_dot(kt, latent_row(m, l, p), q, kr) * scale;
	tp_softmax(scores, pos + 1);
	tp_kv_round(kt, scores, pos + 1);
	memset(out, 0, (size_t)lora * sizeof(float));
	for (p = 0; p <= pos; p++)	/* V: the latent part of the row */
		tp_kv_axpy(kt, out, scores[p], latent_row(m, l, p), lora);
}

static void attend_part(void *arg, int part, int nparts)
{
	const struct mla_job *j = arg;
	int nq = j->m->nq;
	float *scores = j->m->scores + (size_t)part * j->m->ctx;
	long b, e, k;

	tp_split((long)j->n * nq, nparts, part, &b, &e);
	for (k = b; k < e; k++)
		attend(j->m, j->l, (int)(k / nq), j->pos + (int)(k / nq),
		       (int)(k % nq), scores);
}

/* q of N tokens into m->q: through the low-rank pair or plain Wq. */
static void project_q(struct tp_model *m, const struct tp_mla_weights *a,
		      int n)
{
	const struct tp_config *c = &m->cfg;
	struct tp_mla_buf *B = m->mla;
	int r = c->mla.q_lora, t;

	if (!r) {
		tp_matmul(m->q, m->xb, &a->wq, n);
		return;
	}
	tp_matmul(B->qa, m->xb, &a->wq_a, n);
	for (t = 0; t < n; t++)
		tp_rmsnorm(B->qa + (size_t)t * r, B->qa + (size_t)t * r,
			   a->q_a_norm, r, c->eps);
	tp_matmul(m->q, B->qa, &a->wq_b, n);
}

int tp_mla_attention(struct tp_model *m, const struct tp_mla_weights *a,
		     int l, int n, int pos, struct tp_ar *ar)
{
	const struct tp_config *c = &m->cfg;
	struct tp_mla_buf *B = m->mla;
	int dim = c->dim, hd = c->head_dim, rot = c->rot_dim;
	int lora = c->mla.kv_lora, kr = lora + rot, nope = hd - rot;
	int vd = c->mla.v_dim, nq = m->nq, t, h;
	struct mla_job j = { .m = m, .l = l, .n = n, .pos = pos };
	float *part;

	for (t = 0; t < n; t++)
		tp_rmsnorm(m->xb + (size_t)t * dim, m->x + (size_t)t * dim,
			   a->norm, dim, c->eps);
	if (nq)
		project_q(m, a, n);
	tp_matmul(B->ckv, m->xb, &a->wkv_a, n);
	for (t = 0; t < n; t++) {
		float *ckv = B->ckv + (size_t)t * kr;
		float *q = m->q + (size_t)t * nq * hd;

		tp_rmsnorm(ckv, ckv, a->kv_a_norm, lora, c->eps);
		if (c->yarn_orig_ctx)
			tp_rope_table_yarn_m(m->rope, rot, pos + t,
					     c->rope_base, c->rope_scale,
					     c->yarn_orig_ctx, c->yarn_beta_fast,
					     c->yarn_beta_slow, m->w->rope_freqs,
					     yarn_magnitude(c));
		else
			tp_rope_table_ext(m->rope, rot, pos + t, c->rope_base,
					  c->rope_scale, m->w->rope_freqs);
		tp_rope_apply(ckv + lora, 1, rot, rot, m->rope);
		if (nq)
			tp_rope_apply(q + nope, nq, hd, rot, m->rope);
		tp_kv_store(m->kv_type, latent_row(m, l, pos + t), ckv, kr);
		for (h = 0; h < nq; h++)
			memcpy(B->qk + ((size_t)t * nq + h) * kr + lora,
			       q + (size_t)h * hd + nope,
			       (size_t)rot * sizeof(float));
	}
	/* each head's q_nope through its keys' up-projection */
	for (h = 0; h < nq; h++)
		per_head(m, &a->k_b[h], m->q + (size_t)h * hd,
			 (size_t)nq * hd, B->qk + (size_t)h * kr,
			 (size_t)nq * kr, n);
	if (nq)
		tp_pool_run(attend_part, &j);
	for (h = 0; h < nq; h++)
		per_head(m, &a->v_b[h], B->lat + (size_t)h * lora,
			 (size_t)nq * lora, B->vo + (size_t)h * vd,
			 (size_t)nq * vd, n);
	part = tp_residual_buf(m, ar, n);
	if (nq)
		tp_matmul(part, B->vo, &a->wo, n);
	else
		memset(part, 0, (size_t)n * dim * sizeof(float));
	return tp_residual_add(m, ar, part, n);
}

static struct tp_mat *mats(struct tp_weights *w, int n)
{
	return tp_weights_alloc(w, (size_t)(n ? n : 1) * sizeof(struct tp_mat));
}

int tp_mla_load(struct tp_gguf_load *L, struct tp_mla_weights *a, int l)
{
	const struct tp_config *c = &L->w->cfg;
	const struct tp_shard *sh = &L->w->sh;
	int hd = c->head_dim, H = c->heads, dim = c->dim;
	int lora = c->mla.kv_lora, r = c->mla.q_lora, vd = c->mla.v_dim;
	int nope = hd - c->rot_dim;

	a->k_b = mats(L->w, sh->q1 - sh->q0);
	a->v_b = mats(L->w, sh->q1 - sh->q0);
	if (tp_gguf_vector(L, "blk.%d.attn_norm.weight", l, dim, &a->norm))
		return -1;
	if (r ? tp_gguf_shard(L, "blk.%d.attn_q_a.weight", l, r, dim, 0, r,
			      0, dim, &a->wq_a) ||
		tp_gguf_vector(L, "blk.%d.attn_q_a_norm.weight", l, r,
			       &a->q_a_norm) ||
		tp_gguf_shard(L, "blk.%d.attn_q_b.weight", l, H * hd, r,
			      sh->q0 * hd, sh->q1 * hd, 0, r, &a->wq_b) :
		tp_gguf_shard(L, "blk.%d.attn_q.weight", l, H * hd, dim,
			      sh->q0 * hd, sh->q1 * hd, 0, dim, &a->wq))
		return -1;
	return tp_gguf_shard(L, "blk.%d.attn_kv_a_mqa.weight", l,
			     lora + c->rot_dim, dim, 0, lora + c->rot_dim, 0,
			     dim, &a->wkv_a) ||
	       tp_gguf_vector(L, "blk.%d.attn_kv_a_norm.weight", l, lora,
			      &a->kv_a_norm) ||
	       tp_gguf_slabs(L, "blk.%d.attn_k_b.weight", l, H, sh->q0,
			     sh->q1, lora, nope, a->k_b) ||
	       tp_gguf_slabs(L, "blk.%d.attn_v_b.weight", l, H, sh->q0,
			     sh->q1, vd, lora, a->v_b) ||
	       tp_gguf_shard(L, "blk.%d.attn_output.weight", l, dim, H * vd,
			     0, dim, sh->q0 * vd, sh->q1 * vd, &a->wo) ? -1 : 0;
}

void tp_mla_synth(struct tp_synth *s, struct tp_mla_weights *a, int l)
{
	const struct tp_config *c = s->c;
	const struct tp_shard *sh = &s->w->sh;
	int hd = c->head_dim, dim = c->dim, lora = c->mla.kv_lora;
	int r = c->mla.q_lora, vd = c->mla.v_dim, nope = hd - c->rot_dim, h;

	a->norm = tp_synth_vec(s, TP_T_ATTN_NORM, l, dim);
	if (r) {
		tp_synth_mat(s, TP_T_Q_A, l, 0, r, 0, dim, &a->wq_a);
		a->q_a_norm = tp_synth_vec(s, TP_T_Q_A_NORM, l, r);
		tp_synth_mat(s, TP_T_Q_B, l, sh->q0 * hd, sh->q1 * hd, 0, r,
			     &a->wq_b);
	} else {
		tp_synth_mat(s, TP_T_Q, l, sh->q0 * hd, sh->q1 * hd, 0, dim,
			     &a->wq);
	}
	tp_synth_mat(s, TP_T_KV_A, l, 0, lora + c->rot_dim, 0, dim,
		     &a->wkv_a);
	a->kv_a_norm = tp_synth_vec(s, TP_T_KV_A_NORM, l, lora);
	a->k_b = mats(s->w, sh->q1 - sh->q0);
	a->v_b = mats(s->w, sh->q1 - sh->q0);
	for (h = sh->q0; h < sh->q1; h++) {
		tp_synth_mat(s, TP_T_K_B, l, h * lora, (h + 1) * lora, 0, nope,
			     &a->k_b[h - sh->q0]);
		tp_synth_mat(s, TP_T_V_B, l, h * vd, (h + 1) * vd, 0, lora,
			     &a->v_b[h - sh->q0]);
	}
	tp_synth_mat(s, TP_T_O, l, 0, dim, sh->q0 * vd, sh->q1 * vd, &a->wo);
}

void tp_mla_export(struct tp_export *e, int l)
{
	const struct tp_config *c = e->c;
	int hd = c->head_dim, H = c->heads, dim = c->dim;
	int lora = c->mla.kv_lora, r = c->mla.q_lora, vd = c->mla.v_dim;

	tp_export_tensor(e, TP_F32, "blk.%d.attn_norm.weight", l,
			 TP_T_ATTN_NORM, 1, dim);
	if (r) {
		tp_export_tensor(e, e->type, "blk.%d.attn_q_a.weight", l,
				 TP_T_Q_A, r, dim);
		tp_export_tensor(e, TP_F32, "blk.%d.attn_q_a_norm.weight", l,
				 TP_T_Q_A_NORM, 1, r);
		tp_export_tensor(e, e->type, "blk.%d.attn_q_b.weight", l,
				 TP_T_Q_B, H * hd, r);
	} else {
		tp_export_tensor(e, e->type, "blk.%d.attn_q.weight", l, TP_T_Q,
				 H * hd, dim);
	}
	tp_export_tensor(e, e->type, "blk.%d.attn_kv_a_mqa.weight", l,
			 TP_T_KV_A, lora + c->rot_dim, dim);
	tp_export_tensor(e, TP_F32, "blk.%d.attn_kv_a_norm.weight", l,
			 TP_T_KV_A_NORM, 1, lora);
	tp_export_tensor3(e, e->type, "blk.%d.attn_k_b.weight", l, TP_T_K_B,
			  H, lora, hd - c->rot_dim);
	tp_export_tensor3(e, e->type, "blk.%d.attn_v_b.weight", l, TP_T_V_B,
			  H, vd, lora);
	tp_export_tensor(e, e->type, "blk.%d.attn_output.weight", l, TP_T_O,
			 dim, H * vd);
}
