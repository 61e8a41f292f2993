// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qwen3moe (Qwen3-30B-A3B, Qwen3-235B-A22B, Qwen3-Coder-480B-A35B):
 * Qwen3's attention, and in every layer a mixture of experts in place of
 * the MLP: a softmax router (ffn_gate_inp) over expert_count experts, the
 * top expert_used_count, their weights always renormalised to sum to 1
 * (llama.cpp does so for every qwen3moe file: Qwen3's norm_topk_prob),
 * expert_feed_forward_length wide (feed_forward_length / experts used
 * when the file does not say). No shared experts.
 */
#include "model/arch.h"
#include "model/arch/registry.h"
#include "model/attention.h"
#include "model/export.h"
#include "model/load_gguf.h"
#include "model/moe.h"
#include "model/synthetic.h"

static const char *synth_config(struct tp_config *c)
{
	c->rope_neox = 1;
	c->moe.gating = TP_GATE_SOFTMAX;
	c->moe.norm = 1;
	c->moe.scale = 0;
	c->moe.shared = 0;
	c->moe.dense_layers = 0;
	c->moe.groups = c->moe.groups_used = 0;
	return NULL;
}

static int read_config(struct tp_gguf_load *L, struct tp_config *c)
{
	if (tp_gguf_read_config(L, c) || tp_gguf_read_moe(L, c))
		return -1;
	if (!c->moe.ffn)
		c->moe.ffn = c->ffn / c->moe.used;
	synth_config(c);
	return 0;
}

static int load_layer(struct tp_gguf_load *L, struct tp_layer *y, int i)
{
	return tp_attn_load(L, &y->attn, i) ||
	       tp_attn_load_bias_opt(L, &y->attn, i) ||
	       tp_attn_load_qk_norm(L, &y->attn, i, 1) ||
	       tp_moe_load(L, &y->moe, i, "blk.%d.ffn_norm.weight", 0) ? -1 : 0;
}

static int forward_layer(struct tp_model *m, const struct tp_layer *y,
			 int i, int n, int pos, struct tp_ar *ar)
{
	return tp_attention(m, &y->attn, i, n, pos, ar) ||
	       tp_moe_ffn(m, &y->moe, n, ar) ? -1 : 0;
}

static void synth_layer(struct tp_synth *s, struct tp_layer *y, int i)
{
	tp_attn_synth(s, &y->attn, i);
	tp_attn_synth_extras(s, &y->attn, i, 0, 1);
	tp_moe_synth(s, &y->moe, i, TP_T_FFN_NORM, 0);
}

static void export_config(struct gguf_writer *gw, const struct tp_config *c)
{
	tp_export_config(gw, "qwen3moe", c);
}

static void export_layer(struct tp_export *e, int i)
{
	tp_attn_export(e, i);
	tp_attn_export_extras(e, i, 0, 1);
	tp_moe_export(e, i, "blk.%d.ffn_norm.weight", TP_T_FFN_NORM, 0);
}

const struct tp_arch tp_arch_qwen3moe = {
	.name = "qwen3moe",
	.moe = 1,
	.read_config = read_config,
	.load_layer = load_layer,
	.forward_layer = forward_layer,
	.synth_layer = synth_layer,
	.synth_config = synth_config,
	.export_config = export_config,
	.export_layer = export_layer,
};
