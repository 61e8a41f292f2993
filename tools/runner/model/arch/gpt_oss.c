// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gpt-oss (OpenAI's gpt-oss-20b and -120b; llama.cpp's LLM_ARCH_OPENAI_MOE):
 *
 *   attention: biases on q, k, v and the output; a learned logit per
 *     head (attn_sinks) in every softmax's sum; RoPE neox over the whole
 *     head, YaRN-scaled (rope.scaling.*); scores by 1/sqrt(head_dim);
 *     layers L with L % sliding_window_pattern (2) below pattern - 1
 *     see only the last attention.sliding_window positions;
 *   then post_attention_norm and a mixture of experts: the router with
 *     its bias, the top expert_used_count experts by logit, weighted by a
 *     softmax over those logits; each expert a SwiGLU with biases on
 *     gate, up and down, clamped as tp_swiglu_oai (alpha 1.702, limit 7).
 *
 * The output bias and the experts' down biases are added by one rank
 * (the one holding the first columns), so the all-reduce adds them once.
 */
#include <math.h>

#include "gguf/gguf.h"
#include "model/arch.h"
#include "model/arch/registry.h"
#include "model/attention.h"
#include "model/export.h"
#include "model/load_gguf.h"
#include "model/moe.h"
#include "model/synthetic.h"

#define ARCH "gpt-oss"
#define POST_NORM "blk.%d.post_attention_norm.weight"

static const char *synth_config(struct tp_config *c)
{
	c->rope_neox = 1;
	c->moe.gating = TP_GATE_SOFTMAX_WEIGHT;
	c->moe.act = TP_ACT_SWIGLU_OAI;
	c->moe.norm = 0;
	c->moe.scale = 0;
	c->moe.shared = 0;
	c->moe.dense_layers = 0;
	c->moe.groups = c->moe.groups_used = 0;
	c->swa_period = 2;
	if (!c->swa_window)
		c->swa_window = 128;
	/* the published files' YaRN: factor 32 over 4096 positions */
	if (!c->yarn_orig_ctx) {
		c->yarn_orig_ctx = 4096;
		c->yarn_beta_fast = 32;
		c->yarn_beta_slow = 1;
		if (c->rope_scale == 0)
			c->rope_scale = 1.0f / 32;
	}
	return c->rot_dim != c->head_dim ?
	       "gpt-oss rotates the whole head (--rope-dim = --head-dim)" :
	       NULL;
}

static int read_config(struct tp_gguf_load *L, struct tp_config *c)
{
	float base = 0, swa_base;

	if (tp_gguf_read_config(L, c) || tp_gguf_read_moe(L, c))
		return -1;
	if (!gguf_find_kv(&L->g, tp_gguf_key(L, "expert_feed_forward_length")) ||
	    !gguf_find_kv(&L->g, tp_gguf_key(L, "attention.sliding_window")))
		return tp_gguf_bad(L, "metadata %s is missing", L->key);
	if (tp_gguf_int(L, L->key, 0, &c->swa_window) ||
	    tp_gguf_int(L, tp_gguf_key(L, "attention.sliding_window_pattern"),
			2, &c->swa_period) ||
	    tp_gguf_float(L, tp_gguf_key(L, "rope.freq_base"), 10000, &base) ||
	    tp_gguf_float(L, tp_gguf_key(L, "rope.freq_base_swa"), base,
			  &swa_base))
		return -1;
	if (c->swa_window < 1 || c->swa_window > (1 << 24))
		return tp_gguf_bad(L, "%s is %d: it must be 1..%d",
				   tp_gguf_key(L, "attention.sliding_window"),
				   c->swa_window, 1 << 24);
	if (c->swa_period < 1 || c->swa_period > 4096)
		return tp_gguf_bad(L, "%s is %d: it must be 1..4096",
				   tp_gguf_key(L, "attention.sliding_window_pattern"),
				   c->swa_period);
	if (swa_base != base)
		return tp_gguf_bad(L, "%s %g differs from rope.freq_base %g: a RoPE base per layer kind is not supported",
				   tp_gguf_key(L, "rope.freq_base_swa"),
				   swa_base, base);
	if (c->rot_dim != c->head_dim)
		return tp_gguf_bad(L, "%s is %d where the head is %d wide: gpt-oss rotates the whole head",
				   tp_gguf_key(L, "rope.dimension_count"),
				   c->rot_dim, c->head_dim);
	c->rope_neox = 1;
	c->moe.gating = TP_GATE_SOFTMAX_WEIGHT;
	c->moe.act = TP_ACT_SWIGLU_OAI;
	c->moe.norm = 0;
	if (c->moe.shared || c->moe.dense_layers || c->moe.groups > 1)
		return tp_gguf_bad(L, "gpt-oss has no shared experts, dense layers or expert groups");
	c->moe.groups = c->moe.groups_used = 0;
	return 0;
}

/* Whether this rank adds the biases of the row-parallel products. */
static int adds_bias(const struct tp_shard *sh, int experts)
{
	return experts ? sh->x0 == 0 && sh->x1 > 0 && sh->e1 > sh->e0 :
			 sh->rank == 0;
}

static int load_layer(struct tp_gguf_load *L, struct tp_layer *y, int i)
{
	const struct tp_config *c = &L->w->cfg;
	const struct tp_shard *sh = &L->w->sh;
	struct tp_moe_weights *f = &y->moe;
	int E = c->moe.experts, F = c->moe.ffn;
	const float *bo, *down_b;

	if (tp_attn_load(L, &y->attn, i) || tp_attn_load_bias(L, &y->attn, i) ||
	    tp_gguf_vector_rows(L, "blk.%d.attn_sinks.weight", i, c->heads,
				sh->q0, &y->attn.sinks) ||
	    tp_gguf_vector(L, "blk.%d.attn_output.bias", i, c->dim, &bo) ||
	    tp_moe_load(L, f, i, POST_NORM, 0) ||
	    tp_gguf_vector(L, "blk.%d.ffn_gate_inp.bias", i, E, &f->router_b) ||
	    tp_gguf_floats(L, "blk.%d.ffn_gate_exps.bias", i, E, F,
			   &f->gate_b) ||
	    tp_gguf_floats(L, "blk.%d.ffn_up_exps.bias", i, E, F, &f->up_b) ||
	    tp_gguf_floats(L, "blk.%d.ffn_down_exps.bias", i, E, c->dim,
			   &down_b))
		return -1;
	y->attn.bo = adds_bias(sh, 0) ? bo : NULL;
	f->down_b = adds_bias(sh, 1) ? down_b : NULL;
	return 0;
}

static int forward_layer(struct tp_model *m, const struct tp_layer *y,
			 int i, int n, int pos, struct tp_ar *ar)
{
	return tp_attention(m, &y->attn, i, n, pos, ar) ||
	       tp_moe_ffn(m, &y->moe, n, ar) ? -1 : 0;
}

static void synth_layer(struct tp_synth *s, struct tp_layer *y, int i)
{
	const struct tp_config *c = s->c;
	const struct tp_shard *sh = &s->w->sh;
	struct tp_moe_weights *f = &y->moe;
	int E = c->moe.experts, F = c->moe.ffn;

	tp_attn_synth(s, &y->attn, i);
	tp_attn_synth_extras(s, &y->attn, i, 1, 0);
	y->attn.sinks = tp_synth_vec(s, TP_T_SINKS, i, c->heads) + sh->q0;
	if (adds_bias(sh, 0))
		y->attn.bo = tp_synth_vec(s, TP_T_O_BIAS, i, c->dim);
	tp_moe_synth(s, f, i, TP_T_FFN_NORM, 0);
	f->router_b = tp_synth_vec(s, TP_T_ROUTER_BIAS, i, E);
	f->gate_b = tp_synth_rows(s, TP_T_GATE_EXPS_BIAS, i, E, F);
	f->up_b = tp_synth_rows(s, TP_T_UP_EXPS_BIAS, i, E, F);
	if (adds_bias(sh, 1))
		f->down_b = tp_synth_rows(s, TP_T_DOWN_EXPS_BIAS, i, E, c->dim);
}

static void export_config(struct gguf_writer *gw, const struct tp_config *c)
{
	tp_export_config(gw, ARCH, c);
	gguf_writer_u32(gw, ARCH ".attention.sliding_window",
			(uint32_t)c->swa_window);
	gguf_writer_str(gw, ARCH ".rope.scaling.type", "yarn");
	gguf_writer_f32(gw, ARCH ".rope.scaling.factor", 1.0f / c->rope_scale);
	gguf_writer_u32(gw, ARCH ".rope.scaling.original_context_length",
			(uint32_t)c->yarn_orig_ctx);
}

static void export_layer(struct tp_export *e, int i)
{
	const struct tp_config *c = e->c;
	int E = c->moe.experts, F = c->moe.ffn;

	tp_attn_export(e, i);
	tp_attn_export_extras(e, i, 1, 0);
	tp_export_tensor(e, TP_F32, "blk.%d.attn_output.bias", i, TP_T_O_BIAS,
			 1, c->dim);
	tp_export_tensor(e, TP_F32, "blk.%d.attn_sinks.weight", i, TP_T_SINKS,
			 1, c->heads);
	tp_moe_export(e, i, POST_NORM, TP_T_FFN_NORM, 0);
	tp_export_tensor(e, TP_F32, "blk.%d.ffn_gate_inp.bias", i,
			 TP_T_ROUTER_BIAS, 1, E);
	tp_export_tensor(e, TP_F32, "blk.%d.ffn_gate_exps.bias", i,
			 TP_T_GATE_EXPS_BIAS, E, F);
	tp_export_tensor(e, TP_F32, "blk.%d.ffn_up_exps.bias", i,
			 TP_T_UP_EXPS_BIAS, E, F);
	tp_export_tensor(e, TP_F32, "blk.%d.ffn_down_exps.bias", i,
			 TP_T_DOWN_EXPS_BIAS, E, c->dim);
}

const struct tp_arch tp_arch_gpt_oss = {
	.name = ARCH,
	.moe = 1,
	.read_config = read_config,
	.load_layer = load_layer,
	.forward_layer = forward_layer,
	.synth_layer = synth_layer,
	.synth_config = synth_config,
	.export_config = export_config,
	.export_layer = export_layer,
};
