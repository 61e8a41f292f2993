// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * glm4moe (GLM-4.5, GLM-4.5-Air, GLM-4.6): attention with biases on Q,
 * K and V (a norm of each head of q and k where the file has one),
 * RoPE on the halves of the first rope.dimension_count dimensions of
 * each head (partial rotary, neox); the norm before the FFN is
 * post_attention_norm. The first leading_dense_block_count layers have a
 * dense SwiGLU MLP; the others a mixture of experts: sigmoid scores, the
 * top experts chosen by score + exp_probs_b, weighted by their scores
 * (renormalised when expert_weights_norm, times expert_weights_scale),
 * plus expert_shared_count shared experts. The last
 * nextn_predict_layers blocks are GLM's multi-token prediction layer,
 * which llama.cpp checks but never runs: so does tprun, and never reads
 * them into memory.
 */
#include "gguf/gguf.h"
#include "model/arch.h"
#include "model/arch/registry.h"
#include "model/attention.h"
#include "model/export.h"
#include "model/ffn.h"
#include "model/load_gguf.h"
#include "model/moe.h"
#include "model/synthetic.h"

#define NORM "blk.%d.post_attention_norm.weight"

static const char *synth_config(struct tp_config *c)
{
	c->rope_neox = 1;
	c->moe.gating = TP_GATE_SIGMOID;
	c->moe.norm = 1;
	c->moe.scale = 2.5f;	/* GLM-4.5's routed_scaling_factor */
	c->moe.groups = c->moe.groups_used = 0;
	/* llama.cpp's graph adds the shared experts' FFN whatever the count:
	 * without them, silu(x) in their place */
	return c->moe.shared < 1 ?
	       "glm4moe has shared experts (--shared-experts 1 or more)" :
	       NULL;
}

/* Keys llama.cpp requires of a glm4moe file, beyond the llama family's. */
static int require(struct tp_gguf_load *L, const char *suffix)
{
	if (!gguf_find_kv(&L->g, tp_gguf_key(L, suffix)))
		return tp_gguf_bad(L, "metadata %s is missing", L->key);
	return 0;
}

static int read_config(struct tp_gguf_load *L, struct tp_config *c)
{
	const struct gguf_kv *sec;
	int nextn = 0;
	uint64_t i;

	if (tp_gguf_read_config(L, c) ||
	    require(L, "expert_feed_forward_length") ||
	    require(L, "expert_count") || require(L, "expert_used_count") ||
	    require(L, "expert_shared_count") || tp_gguf_read_moe(L, c) ||
	    tp_gguf_int(L, tp_gguf_key(L, "nextn_predict_layers"), 0, &nextn))
		return -1;
	if (nextn >= c->layers)
		return tp_gguf_bad(L, "%s is %d: the file has %d blocks in all",
				   tp_gguf_key(L, "nextn_predict_layers"), nextn,
				   c->layers);
	c->nextn_layers = nextn;
	c->layers -= nextn;
	if (c->moe.shared < 1)
		return tp_gguf_bad(L, "%s is %d: llama.cpp's glm4moe always adds shared experts (silu(x) where there are none); tprun needs them",
				   tp_gguf_key(L, "expert_shared_count"),
				   c->moe.shared);
	/* sections make llama.cpp rotate by several positions (GLM-4.5V) */
	sec = gguf_find_kv(&L->g, tp_gguf_key(L, "rope.dimension_sections"));
	for (i = 0; sec && sec->type == GGUF_ARRAY && i < sec->arr_n; i++)
		if (sec->arr_type == GGUF_I32 &&
		    ((const int32_t *)sec->arr_data)[i])
			return tp_gguf_bad(L, "multimodal RoPE (%s) is not supported",
					   L->key);
	c->rope_neox = 1;
	if (!c->moe.gating)
		c->moe.gating = TP_GATE_SIGMOID;
	return 0;
}

/*
 * The NextN layer I's tensors as llama.cpp requires them (they must be
 * there, of their shapes); not read.
 */
static int check_nextn(struct tp_gguf_load *L, int i)
{
	const struct tp_config *c = &L->w->cfg;
	int D = c->dim, qd = c->heads * c->head_dim;
	int kvd = c->kv_heads * c->head_dim, E = c->moe.experts;
	int F = c->moe.ffn, S = c->moe.shared * c->moe.ffn;

	return tp_gguf_expect(L, "blk.%d.attn_norm.weight", i, 1, D, 0, 0) ||
	       tp_gguf_expect(L, "blk.%d.attn_q.weight", i, 2, D, qd, 0) ||
	       tp_gguf_expect(L, "blk.%d.attn_k.weight", i, 2, D, kvd, 0) ||
	       tp_gguf_expect(L, "blk.%d.attn_v.weight", i, 2, D, kvd, 0) ||
	       tp_gguf_expect(L, "blk.%d.attn_output.weight", i, 2, qd, D, 0) ||
	       tp_gguf_expect(L, NORM, i, 1, D, 0, 0) ||
	       tp_gguf_expect(L, "blk.%d.ffn_gate_inp.weight", i, 2, D, E, 0) ||
	       tp_gguf_expect(L, "blk.%d.exp_probs_b.bias", i, 1, E, 0, 0) ||
	       tp_gguf_expect(L, "blk.%d.ffn_gate_exps.weight", i, 3, D, F, E) ||
	       tp_gguf_expect(L, "blk.%d.ffn_up_exps.weight", i, 3, D, F, E) ||
	       tp_gguf_expect(L, "blk.%d.ffn_down_exps.weight", i, 3, F, D, E) ||
	       (S && (tp_gguf_expect(L, "blk.%d.ffn_gate_shexp.weight", i, 2,
				     D, S, 0) ||
		      tp_gguf_expect(L, "blk.%d.ffn_up_shexp.weight", i, 2, D,
				     S, 0) ||
		      tp_gguf_expect(L, "blk.%d.ffn_down_shexp.weight", i, 2,
				     S, D, 0))) ||
	       tp_gguf_expect(L, "blk.%d.nextn.eh_proj.weight", i, 2, 2 * D, D,
			      0) ||
	       tp_gguf_expect(L, "blk.%d.nextn.enorm.weight", i, 1, D, 0, 0) ||
	       tp_gguf_expect(L, "blk.%d.nextn.hnorm.weight", i, 1, D, 0, 0) ?
	       -1 : 0;
}

static int load_layer(struct tp_gguf_load *L, struct tp_layer *y, int i)
{
	const struct tp_config *c = &L->w->cfg;
	int k;

	if (tp_attn_load(L, &y->attn, i) ||
	    tp_attn_load_bias_opt(L, &y->attn, i) ||
	    tp_attn_load_qk_norm(L, &y->attn, i, 0) ||
	    (i < c->moe.dense_layers ?
	     tp_ffn_load_norm(L, &y->ffn, i, NORM) :
	     tp_moe_load(L, &y->moe, i, NORM, 1)))
		return -1;
	for (k = 0; i == c->layers - 1 && k < c->nextn_layers; k++)
		if (check_nextn(L, c->layers + k))
			return -1;
	return 0;
}

static int forward_layer(struct tp_model *m, const struct tp_layer *y,
			 int i, int n, int pos, struct tp_ar *ar)
{
	return tp_attention(m, &y->attn, i, n, pos, ar) ||
	       (i < m->cfg.moe.dense_layers ? tp_ffn_swiglu(m, &y->ffn, n, ar) :
		tp_moe_ffn(m, &y->moe, n, ar)) ? -1 : 0;
}

static void synth_layer(struct tp_synth *s, struct tp_layer *y, int i)
{
	tp_attn_synth(s, &y->attn, i);
	tp_attn_synth_extras(s, &y->attn, i, 1, 0);
	if (i < s->c->moe.dense_layers)
		tp_ffn_synth(s, &y->ffn, i);
	else
		tp_moe_synth(s, &y->moe, i, TP_T_FFN_NORM, 1);
}

static void export_config(struct gguf_writer *gw, const struct tp_config *c)
{
	tp_export_config(gw, "glm4moe", c);
	gguf_writer_u32(gw, "glm4moe.expert_shared_count",
			(uint32_t)c->moe.shared);
	gguf_writer_u32(gw, "glm4moe.leading_dense_block_count",
			(uint32_t)c->moe.dense_layers);
	gguf_writer_f32(gw, "glm4moe.expert_weights_scale", c->moe.scale);
	gguf_writer_bool(gw, "glm4moe.expert_weights_norm", c->moe.norm);
	gguf_writer_u32(gw, "glm4moe.expert_gating_func",
			(uint32_t)c->moe.gating);
	gguf_writer_u32(gw, "glm4moe.nextn_predict_layers",
			(uint32_t)c->nextn_layers);
}

/* Layers from c->layers on are the NextN layer's: a MoE layer and the
 * tensors of its own (its embedding and head left out, as they may be). */
static void export_layer(struct tp_export *e, int i)
{
	const struct tp_config *c = e->c;

	tp_attn_export(e, i);
	tp_attn_export_extras(e, i, 1, 0);
	if (i < c->moe.dense_layers) {
		tp_ffn_export_norm(e, i, NORM);
		return;
	}
	tp_moe_export(e, i, NORM, TP_T_FFN_NORM, 1);
	if (i < c->layers)
		return;
	tp_export_tensor(e, e->type, "blk.%d.nextn.eh_proj.weight", i,
			 TP_T_NEXTN_EH_PROJ, c->dim, 2 * c->dim);
	tp_export_tensor(e, TP_F32, "blk.%d.nextn.enorm.weight", i,
			 TP_T_ATTN_NORM, 1, c->dim);
	tp_export_tensor(e, TP_F32, "blk.%d.nextn.hnorm.weight", i,
			 TP_T_FFN_NORM, 1, c->dim);
	tp_export_tensor(e, TP_F32, "blk.%d.nextn.shared_head_norm.weight", i,
			 TP_T_OUT_NORM, 1, c->dim);
}

const struct tp_arch tp_arch_glm4moe = {
	.name = "glm4moe",
	.moe = 1,
	.read_config = read_config,
	.load_layer = load_layer,
	.forward_layer = forward_layer,
	.synth_layer = synth_layer,
	.synth_config = synth_config,
	.export_config = export_config,
	.export_layer = export_layer,
};
