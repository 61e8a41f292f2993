// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SwiGLU MLP block over this rank's columns: its weights by
 * llama.cpp's tensor names (from GGUF, synthetic, exported) and its
 * forward pass (ffn.h).
 */
#include "kernels/matmul.h"
#include "kernels/vector.h"
#include "model/export.h"
#include "model/ffn.h"
#include "model/load_gguf.h"
#include "model/residual.h"
#include "model/synthetic.h"

int tp_ffn_swiglu(struct tp_model *m, const struct tp_ffn_weights *f, int n,
		  struct tp_ar *ar)
{
	const struct tp_config *c = &m->cfg;
	int dim = c->dim, t;
	float *part;

	for (t = 0; t < n; t++)
		tp_rmsnorm(m->xb + (size_t)t * dim, m->x + (size_t)t * dim,
			   f->norm, dim, c->eps);
	tp_matmul(m->g, m->xb, &f->wgate, n);
	tp_matmul(m->u, m->xb, &f->wup, n);
	tp_swiglu(m->g, m->u, n * m->nf);
	part = tp_residual_buf(m, ar, n);
	tp_matmul(part, m->g, &f->wdown, n);
	return tp_residual_add(m, ar, part, n);
}

int tp_ffn_load(struct tp_gguf_load *L, struct tp_ffn_weights *f, int l)
{
	const struct tp_config *c = &L->w->cfg;
	const struct tp_shard *sh = &L->w->sh;

	return tp_gguf_vector(L, "blk.%d.ffn_norm.weight", l, c->dim,
			      &f->norm) ||
	       tp_gguf_shard(L, "blk.%d.ffn_gate.weight", l, c->ffn, c->dim,
			     sh->f0, sh->f1, 0, c->dim, &f->wgate) ||
	       tp_gguf_shard(L, "blk.%d.ffn_up.weight", l, c->ffn, c->dim,
			     sh->f0, sh->f1, 0, c->dim, &f->wup) ||
	       tp_gguf_shard(L, "blk.%d.ffn_down.weight", l, c->dim, c->ffn,
			     0, c->dim, sh->f0, sh->f1, &f->wdown) ? -1 : 0;
}

void tp_ffn_synth(struct tp_synth *s, struct tp_ffn_weights *f, int l)
{
	const struct tp_config *c = s->c;
	const struct tp_shard *sh = &s->w->sh;

	f->norm = tp_synth_vec(s, TP_T_FFN_NORM, l, c->dim);
	tp_synth_mat(s, TP_T_GATE, l, sh->f0, sh->f1, 0, c->dim, &f->wgate);
	tp_synth_mat(s, TP_T_UP, l, sh->f0, sh->f1, 0, c->dim, &f->wup);
	tp_synth_mat(s, TP_T_DOWN, l, 0, c->dim, sh->f0, sh->f1, &f->wdown);
}

void tp_ffn_export(struct tp_export *e, int l)
{
	const struct tp_config *c = e->c;

	tp_export_tensor(e, TP_F32, "blk.%d.ffn_norm.weight", l,
			 TP_T_FFN_NORM, 1, c->dim);
	tp_export_tensor(e, e->type, "blk.%d.ffn_gate.weight", l, TP_T_GATE,
			 c->ffn, c->dim);
	tp_export_tensor(e, e->type, "blk.%d.ffn_up.weight", l, TP_T_UP,
			 c->ffn, c->dim);
	tp_export_tensor(e, e->type, "blk.%d.ffn_down.weight", l, TP_T_DOWN,
			 c->dim, c->ffn);
}
