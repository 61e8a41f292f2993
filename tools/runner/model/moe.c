// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The mixture-of-experts FFN block over this rank's experts: routing,
 * the experts of a batch gathered expert by expert, the weighted sum, the
 * shared experts; its weights by llama.cpp's tensor names (from GGUF,
 * synthetic, exported). See moe.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kernels/matmul.h"
#include "kernels/vector.h"
#include "model/export.h"
#include "model/load_gguf.h"
#include "model/moe.h"
#include "model/residual.h"
#include "model/synthetic.h"

struct tp_moe_buf {
	float *logits;		/* max_batch x experts */
	int *sel;		/* max_batch x used: experts chosen, best first */
	float *wt;		/* max_batch x used: their weights */
	int *row;		/* max_batch x used: (t, j)'s row below, or -1 */
	int *start;		/* local experts + 1: first row of each */
	float *xg;		/* max_batch x used x dim: inputs by expert */
	float *g, *u;		/* max_batch x used x local columns */
	float *y;		/* max_batch x used x dim: the experts' outputs */
	float *sg, *su, *sy;	/* the shared experts': max_batch x ... */
	struct tp_mm *jobs;	/* 2 per local expert, and the shared's */
};

void tp_moe_init(struct tp_model *m)
{
	const struct tp_config *c = &m->cfg;
	const struct tp_shard *sh = &m->w->sh;
	size_t b = (size_t)m->max_batch, k = (size_t)c->moe.used;
	size_t xw = (size_t)(sh->x1 - sh->x0), sw = (size_t)(sh->s1 - sh->s0);
	size_t ne = (size_t)(sh->e1 - sh->e0);
	struct tp_moe_buf *B;

	if (!c->moe.experts)
		return;
	B = tp_calloc(1, sizeof(*B));
	B->logits = tp_calloc(b * c->moe.experts, sizeof(float));
	B->sel = tp_calloc(b * k, sizeof(int));
	B->wt = tp_calloc(b * k, sizeof(float));
	B->row = tp_calloc(b * k, sizeof(int));
	B->start = tp_calloc(ne + 1, sizeof(int));
	B->xg = tp_calloc(b * k * c->dim, sizeof(float));
	B->g = tp_calloc(b * k * xw, sizeof(float));
	B->u = tp_calloc(b * k * xw, sizeof(float));
	B->y = tp_calloc(b * k * c->dim, sizeof(float));
	B->sg = tp_calloc(b * sw + 1, sizeof(float));
	B->su = tp_calloc(b * sw + 1, sizeof(float));
	B->sy = tp_calloc(b * c->dim, sizeof(float));
	B->jobs = tp_calloc(2 * ne + 2, sizeof(*B->jobs));
	m->moe = B;
}

void tp_moe_free(struct tp_model *m)
{
	struct tp_moe_buf *B = m->moe;

	if (!B)
		return;
	free(B->logits);
	free(B->sel);
	free(B->wt);
	free(B->row);
	free(B->start);
	free(B->xg);
	free(B->g);
	free(B->u);
	free(B->y);
	free(B->sg);
	free(B->su);
	free(B->sy);
	free(B->jobs);
	free(B);
	m->moe = NULL;
}

/* The index of the largest of V[0..N-1] not yet TAKEN (the first of
 * equals), or -1 when every one is taken or -inf. */
static int best_of(const float *v, const unsigned char *taken, int n)
{
	int i, best = -1;

	for (i = 0; i < n; i++)
		if (!taken[i] && v[i] != -INFINITY &&
		    (best < 0 || v[i] > v[best]))
			best = i;
	return best;
}

/*
 * Group-limited routing (DeepSeek V3): the experts in GROUPS groups of
 * equal size, each group scored by its two best; all but the best
 * GROUPS_USED groups left out (their scores -inf).
 */
static void limit_groups(const struct tp_moe_config *c, float *score)
{
	int per = c->experts / c->groups, g, i, a, b;
	float gs[1024];
	unsigned char taken[1024] = { 0 }, keep[1024] = { 0 };

	for (g = 0; g < c->groups; g++) {
		const float *sg = score + g * per;
		unsigned char two[1024] = { 0 };

		a = best_of(sg, two, per);
		if (a >= 0)
			two[a] = 1;
		b = best_of(sg, two, per);
		gs[g] = (a >= 0 ? sg[a] : -INFINITY) + (b >= 0 ? sg[b] : 0);
	}
	for (i = 0; i < c->groups_used; i++) {
		g = best_of(gs, taken, c->groups);
		if (g < 0)
			break;
		taken[g] = keep[g] = 1;
	}
	for (g = 0; g < c->groups; g++)
		if (!keep[g])
			for (i = 0; i < per; i++)
				score[g * per + i] = -INFINITY;
}

void tp_moe_route(const struct tp_moe_config *c, float *p, const float *bias,
		  int *sel, float *wt)
{
	float score[1024];
	unsigned char taken[1024] = { 0 };
	double sum = 0;
	int E = c->experts, k = c->used, i, j;

	if (c->gating == TP_GATE_SIGMOID)
		for (i = 0; i < E; i++)
			p[i] = 1.0f / (1.0f + expf(-p[i]));
	else if (c->gating != TP_GATE_SOFTMAX_WEIGHT)
		tp_softmax(p, E);
	/* the bias chooses, the probabilities weigh */
	for (i = 0; i < E; i++)
		score[i] = bias ? p[i] + bias[i] : p[i];
	if (c->groups > 1)
		limit_groups(c, score);
	for (j = 0; j < k; j++) {
		i = best_of(score, taken, E);
		if (i < 0)	/* NaN scores: any expert, never out of range */
			for (i = 0; taken[i]; i++)
				;
		taken[i] = 1;
		sel[j] = i;
		wt[j] = p[i];
		sum += wt[j];
	}
	if (c->gating == TP_GATE_SOFTMAX_WEIGHT)
		tp_softmax(wt, k);
	if (c->norm) {
		/* llama.cpp clamps the sum to F16's smallest normal */
		float s = (float)sum < 6.103515625e-5f ? 6.103515625e-5f :
			  (float)sum;

		for (j = 0; j < k; j++)
			wt[j] /= s;
	}
	if (c->scale != 0 && c->scale != 1)
		for (j = 0; j < k; j++)
			wt[j] *= c->scale;
}

/*
 * The rows of the batch's (token, choice) pairs that go to this rank's
 * experts, expert by expert: B->start[e] the first row of local expert e,
 * B->row[t k + j] the row of token t's j-th choice (-1: another rank's),
 * the inputs copied to B->xg. The number of rows.
 */
static int gather(struct tp_model *m, int n)
{
	struct tp_moe_buf *B = m->moe;
	const struct tp_shard *sh = &m->w->sh;
	int k = m->cfg.moe.used, ne = sh->e1 - sh->e0, dim = m->cfg.dim;
	int i, e, r;

	memset(B->start, 0, (size_t)(ne + 1) * sizeof(int));
	for (i = 0; i < n * k; i++) {
		e = B->sel[i] - sh->e0;
		if (e >= 0 && e < ne)
			B->start[e + 1]++;
	}
	for (e = 0; e < ne; e++)
		B->start[e + 1] += B->start[e];
	/* fill each expert's rows in token order, then restore start[] */
	for (i = 0; i < n * k; i++) {
		e = B->sel[i] - sh->e0;
		if (e < 0 || e >= ne) {
			B->row[i] = -1;
			continue;
		}
		r = B->start[e]++;
		B->row[i] = r;
		memcpy(B->xg + (size_t)r * dim, m->xb + (size_t)(i / k) * dim,
		       (size_t)dim * sizeof(float));
	}
	for (e = ne; e > 0; e--)
		B->start[e] = B->start[e - 1];
	B->start[0] = 0;
	return B->start[ne];
}

/* ROWS rows of WIDTH += BIAS (NULL: none). */
static void add_rows(float *y, const float *bias, int rows, int width)
{
	int r, i;

	if (!bias)
		return;
	for (r = 0; r < rows; r++, y += width)
		for (i = 0; i < width; i++)
			y[i] += bias[i];
}

/*
 * The activation between the experts' products: SwiGLU, or gpt-oss's
 * clamped one after the biases of gate and up (this rank's columns of
 * each expert).
 */
static void experts_act(struct tp_model *m, const struct tp_moe_weights *f,
			int rows)
{
	struct tp_moe_buf *B = m->moe;
	const struct tp_shard *sh = &m->w->sh;
	int xw = sh->x1 - sh->x0, F = m->cfg.moe.ffn, e;

	for (e = 0; f->gate_b && e < sh->e1 - sh->e0; e++) {
		size_t at = (size_t)B->start[e] * xw;
		size_t col = (size_t)(sh->e0 + e) * F + sh->x0;
		int cnt = B->start[e + 1] - B->start[e];

		add_rows(B->g + at, f->gate_b + col, cnt, xw);
		add_rows(B->u + at, f->up_b + col, cnt, xw);
	}
	if (m->cfg.moe.act == TP_ACT_SWIGLU_OAI)
		tp_swiglu_oai(B->g, B->u, rows * xw);
	else
		tp_swiglu(B->g, B->u, rows * xw);
}

/* This rank's experts (and shared experts) on the gathered rows. */
static void experts(struct tp_model *m, const struct tp_moe_weights *f,
		    int n, int rows)
{
	struct tp_moe_buf *B = m->moe;
	const struct tp_shard *sh = &m->w->sh;
	int xw = sh->x1 - sh->x0, sw = sh->s1 - sh->s0, dim = m->cfg.dim;
	int e, nj = 0, cnt;

	for (e = 0; e < sh->e1 - sh->e0; e++) {
		cnt = B->start[e + 1] - B->start[e];
		if (!cnt)
			continue;
		B->jobs[nj++] = (struct tp_mm){
			B->g + (size_t)B->start[e] * xw,
			B->xg + (size_t)B->start[e] * dim, &f->gate[e], cnt };
		B->jobs[nj++] = (struct tp_mm){
			B->u + (size_t)B->start[e] * xw,
			B->xg + (size_t)B->start[e] * dim, &f->up[e], cnt };
	}
	if (f->shared.wgate.data) {
		B->jobs[nj++] = (struct tp_mm){ B->sg, m->xb, &f->shared.wgate,
						n };
		B->jobs[nj++] = (struct tp_mm){ B->su, m->xb, &f->shared.wup,
						n };
	}
	tp_matmul_many(B->jobs, nj);
	experts_act(m, f, rows);
	if (f->shared.wgate.data)
		tp_swiglu(B->sg, B->su, n * sw);
	nj = 0;
	for (e = 0; e < sh->e1 - sh->e0; e++) {
		cnt = B->start[e + 1] - B->start[e];
		if (!cnt)
			continue;
		B->jobs[nj++] = (struct tp_mm){
			B->y + (size_t)B->start[e] * dim,
			B->g + (size_t)B->start[e] * xw, &f->down[e], cnt };
	}
	if (f->shared.wgate.data)
		B->jobs[nj++] = (struct tp_mm){ B->sy, B->sg, &f->shared.wdown,
						n };
	tp_matmul_many(B->jobs, nj);
	for (e = 0; f->down_b && e < sh->e1 - sh->e0; e++)
		add_rows(B->y + (size_t)B->start[e] * dim,
			 f->down_b + (size_t)(sh->e0 + e) * dim,
			 B->start[e + 1] - B->start[e], dim);
}

int tp_moe_ffn(struct tp_model *m, const struct tp_moe_weights *f, int n,
	       struct tp_ar *ar)
{
	const struct tp_config *c = &m->cfg;
	struct tp_moe_buf *B = m->moe;
	int dim = c->dim, k = c->moe.used, t, j, i, rows;
	float *part;

	for (t = 0; t < n; t++)
		tp_rmsnorm(m->xb + (size_t)t * dim, m->x + (size_t)t * dim,
			   f->norm, dim, c->eps);
	tp_matmul_portable(B->logits, m->xb, &f->router, n);
	add_rows(B->logits, f->router_b, n, c->moe.experts);
	for (t = 0; t < n; t++)
		tp_moe_route(&c->moe, B->logits + (size_t)t * c->moe.experts,
			     f->probs_bias, B->sel + t * k, B->wt + t * k);
	rows = gather(m, n);
	experts(m, f, n, rows);
	/* each token's experts weighted and added in the order chosen, then
	 * the shared experts: llama.cpp's order of additions */
	part = tp_residual_buf(m, ar, n);
	for (t = 0; t < n; t++) {
		float *p = part + (size_t)t * dim;

		memset(p, 0, (size_t)dim * sizeof(float));
		for (j = 0; j < k; j++) {
			int r = B->row[t * k + j];
			const float *y;
			float w = B->wt[t * k + j];

			if (r < 0)
				continue;
			y = B->y + (size_t)r * dim;
			for (i = 0; i < dim; i++)
				p[i] += w * y[i];
		}
		if (f->shared.wgate.data)
			for (i = 0; i < dim; i++)
				p[i] += B->sy[(size_t)t * dim + i];
	}
	return tp_residual_add(m, ar, part, n);
}

/* --- weights --- */

static struct tp_mat *mats(struct tp_weights *w, int n)
{
	struct tp_mat *v = tp_weights_alloc(w, (size_t)n * sizeof(*v));

	memset(v, 0, (size_t)n * sizeof(*v));
	return v;
}

int tp_moe_load(struct tp_gguf_load *L, struct tp_moe_weights *f, int l,
		const char *norm, int probs_bias)
{
	const struct tp_config *c = &L->w->cfg;
	const struct tp_shard *sh = &L->w->sh;
	int E = c->moe.experts, F = c->moe.ffn, dim = c->dim;
	int ne = sh->e1 - sh->e0;

	f->gate = mats(L->w, ne);
	f->up = mats(L->w, ne);
	f->down = mats(L->w, ne);
	if (tp_gguf_vector(L, norm, l, dim, &f->norm) ||
	    tp_gguf_matrix(L, "blk.%d.ffn_gate_inp.weight", l, E, dim,
			   &f->router) ||
	    (probs_bias &&
	     tp_gguf_vector(L, "blk.%d.exp_probs_b.bias", l, E,
			    &f->probs_bias)) ||
	    tp_gguf_experts(L, "blk.%d.ffn_gate_exps.weight", l, F, dim,
			    sh->x0, sh->x1, 0, dim, f->gate) ||
	    tp_gguf_experts(L, "blk.%d.ffn_up_exps.weight", l, F, dim,
			    sh->x0, sh->x1, 0, dim, f->up) ||
	    tp_gguf_experts(L, "blk.%d.ffn_down_exps.weight", l, dim, F, 0,
			    dim, sh->x0, sh->x1, f->down))
		return -1;
	if (!c->moe.shared)
		return 0;
	F *= c->moe.shared;
	return tp_gguf_shard(L, "blk.%d.ffn_gate_shexp.weight", l, F, dim,
			     sh->s0, sh->s1, 0, dim, &f->shared.wgate) ||
	       tp_gguf_shard(L, "blk.%d.ffn_up_shexp.weight", l, F, dim,
			     sh->s0, sh->s1, 0, dim, &f->shared.wup) ||
	       tp_gguf_shard(L, "blk.%d.ffn_down_shexp.weight", l, dim, F,
			     0, dim, sh->s0, sh->s1, &f->shared.wdown) ? -1 : 0;
}

void tp_moe_synth(struct tp_synth *s, struct tp_moe_weights *f, int l,
		  int norm_id, int probs_bias)
{
	const struct tp_config *c = s->c;
	const struct tp_shard *sh = &s->w->sh;
	int E = c->moe.experts, F = c->moe.ffn, dim = c->dim, e, i;

	f->norm = tp_synth_vec(s, norm_id, l, dim);
	tp_synth_mat_as(s, TP_F32, TP_T_ROUTER, l, 0, E, 0, dim, &f->router);
	if (probs_bias)
		f->probs_bias = tp_synth_vec(s, TP_T_PROBS_BIAS, l, E);
	f->gate = mats(s->w, sh->e1 - sh->e0);
	f->up = mats(s->w, sh->e1 - sh->e0);
	f->down = mats(s->w, sh->e1 - sh->e0);
	for (e = sh->e0, i = 0; e < sh->e1; e++, i++) {
		tp_synth_mat(s, TP_T_GATE_EXPS, l, e * F + sh->x0,
			     e * F + sh->x1, 0, dim, &f->gate[i]);
		tp_synth_mat(s, TP_T_UP_EXPS, l, e * F + sh->x0,
			     e * F + sh->x1, 0, dim, &f->up[i]);
		tp_synth_mat(s, TP_T_DOWN_EXPS, l, e * dim, (e + 1) * dim,
			     sh->x0, sh->x1, &f->down[i]);
	}
	if (!c->moe.shared)
		return;
	tp_synth_mat(s, TP_T_GATE_SHEXP, l, sh->s0, sh->s1, 0, dim,
		     &f->shared.wgate);
	tp_synth_mat(s, TP_T_UP_SHEXP, l, sh->s0, sh->s1, 0, dim,
		     &f->shared.wup);
	tp_synth_mat(s, TP_T_DOWN_SHEXP, l, 0, dim, sh->s0, sh->s1,
		     &f->shared.wdown);
}

void tp_moe_export(struct tp_export *e, int l, const char *norm, int norm_id,
		   int probs_bias)
{
	const struct tp_config *c = e->c;
	int E = c->moe.experts, F = c->moe.ffn, S = c->moe.shared;

	tp_export_tensor(e, TP_F32, norm, l, norm_id, 1, c->dim);
	/* the router stays F32, as llama.cpp's quantizer leaves it */
	tp_export_tensor(e, TP_F32, "blk.%d.ffn_gate_inp.weight", l,
			 TP_T_ROUTER, E, c->dim);
	if (probs_bias)
		tp_export_tensor(e, TP_F32, "blk.%d.exp_probs_b.bias", l,
				 TP_T_PROBS_BIAS, 1, E);
	tp_export_tensor3(e, e->type, "blk.%d.ffn_gate_exps.weight", l,
			  TP_T_GATE_EXPS, E, F, c->dim);
	tp_export_tensor3(e, e->type, "blk.%d.ffn_up_exps.weight", l,
			  TP_T_UP_EXPS, E, F, c->dim);
	tp_export_tensor3(e, e->type, "blk.%d.ffn_down_exps.weight", l,
			  TP_T_DOWN_EXPS, E, c->dim, F);
	if (!S)
		return;
	tp_export_tensor(e, e->type, "blk.%d.ffn_gate_shexp.weight", l,
			 TP_T_GATE_SHEXP, F * S, c->dim);
	tp_export_tensor(e, e->type, "blk.%d.ffn_up_shexp.weight", l,
			 TP_T_UP_SHEXP, F * S, c->dim);
	tp_export_tensor(e, e->type, "blk.%d.ffn_down_shexp.weight", l,
			 TP_T_DOWN_SHEXP, c->dim, F * S);
}
