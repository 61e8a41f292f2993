// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * deepseek2 (DeepSeek V2/V2.5/V3/V3.1/R1, Kimi K2): multi-head latent
 * attention (model/mla.h) in files with the absorbed matrices attn_k_b
 * and attn_v_b (attention.key_length_mla and value_length_mla set, as
 * llama.cpp's converter writes them since 2025); RoPE on pairs (not
 * neox) over the rope.dimension_count dimensions each query and the
 * shared key carry. The first leading_dense_block_count layers have a
 * dense SwiGLU MLP; the others a mixture of experts: softmax (V2) or
 * sigmoid (V3) scores, the top experts by score + exp_probs_b within the
 * best expert_group_used_count of expert_group_count groups, weighted
 * (renormalised when expert_weights_norm, times expert_weights_scale),
 * plus expert_shared_count shared experts. The norm before the FFN is
 * ffn_norm.
 */
#include <stdio.h>

#include "gguf/gguf.h"
#include "model/arch.h"
#include "model/arch/registry.h"
#include "model/export.h"
#include "model/ffn.h"
#include "model/load_gguf.h"
#include "model/mla.h"
#include "model/moe.h"
#include "model/synthetic.h"

#define NORM "blk.%d.ffn_norm.weight"

static const char *synth_config(struct tp_config *c)
{
	c->rope_neox = 0;
	c->kv_heads = 1;
	c->moe.gating = TP_GATE_SIGMOID;	/* V3's */
	c->moe.norm = 1;
	c->moe.scale = 2.5f;	/* V3's routed_scaling_factor */
	if (c->mla.kv_lora < 1 || c->rot_dim >= c->head_dim ||
	    c->mla.v_dim < 1)
		return "deepseek2 needs --kv-lora R, and --rope-dim below --head-dim";
	return c->moe.shared < 1 ?
	       "deepseek2 has shared experts (--shared-experts 1 or more)" :
	       NULL;
}

static int key_int(struct tp_gguf_load *L, const char *suffix, int64_t def,
		   int *out)
{
	return tp_gguf_int(L, tp_gguf_key(L, suffix), def, out);
}

/* llama.cpp's DeepSeek-V2-Lite and its kin have no q_lora_rank */
static int is_lite(const struct tp_config *c)
{
	return c->layers == 26 || c->layers == 27 ||
	       (c->layers == 48 && c->vocab == 128256);
}

static int read_config(struct tp_gguf_load *L, struct tp_config *c)
{
	struct tp_mla_config *a = &c->mla;
	int klen, vlen, kmla, vmla, nextn;
	float temp;

	if (key_int(L, "attention.kv_lora_rank", -1, &a->kv_lora))
		return -1;
	if (a->kv_lora < 1)
		return tp_gguf_bad(L, "%s is %d: the latent needs a width",
				   L->key, a->kv_lora);
	if (tp_gguf_read_config(L, c))
		return -1;
	klen = c->head_dim;
	if (key_int(L, "attention.value_length", klen, &vlen) ||
	    key_int(L, "attention.key_length_mla", 0, &kmla) ||
	    key_int(L, "attention.value_length_mla", 0, &vmla))
		return -1;
	if (!kmla || !vmla)
		return tp_gguf_bad(L, "%s.attention.key_length_mla or value_length_mla is missing: a file of the older conversion (attn_kv_b, K and V cached whole), which tprun does not run; convert it again with a llama.cpp of 2025 or later",
				   L->arch);
	if (c->kv_heads != 1)
		return tp_gguf_bad(L, "%s is %d: latent attention has one K/V head",
				   tp_gguf_key(L, "attention.head_count_kv"),
				   c->kv_heads);
	if (klen != a->kv_lora + c->rot_dim || vlen != a->kv_lora)
		return tp_gguf_bad(L, "%s.attention.key_length %d and value_length %d: expected kv_lora_rank + rope.dimension_count (%d) and kv_lora_rank (%d)",
				   L->arch, klen, vlen, a->kv_lora + c->rot_dim,
				   a->kv_lora);
	if (kmla <= c->rot_dim || kmla % 2 || kmla > 4096)
		return tp_gguf_bad(L, "%s is %d: it must be even, above rope.dimension_count (%d) and at most 4096",
				   tp_gguf_key(L, "attention.key_length_mla"),
				   kmla, c->rot_dim);
	if (vmla > 4096)
		return tp_gguf_bad(L, "%s is %d: at most 4096",
				   tp_gguf_key(L, "attention.value_length_mla"),
				   vmla);
	c->head_dim = kmla;
	a->v_dim = vmla;
	a->q_lora = 0;
	if (!is_lite(c) && key_int(L, "attention.q_lora_rank", -1, &a->q_lora))
		return -1;
	if (tp_gguf_float(L, tp_gguf_key(L, "attention.temperature_scale"), 0,
			  &temp) ||
	    key_int(L, "nextn_predict_layers", 0, &nextn))
		return -1;
	if (temp != 0)
		return tp_gguf_bad(L, "%s (attention temperature tuning) is not supported",
				   tp_gguf_key(L, "attention.temperature_scale"));
	if (nextn)
		return tp_gguf_bad(L, "%s is %d: multi-token prediction layers are not supported",
				   tp_gguf_key(L, "nextn_predict_layers"),
				   nextn);
	if (!gguf_find_kv(&L->g, tp_gguf_key(L, "expert_feed_forward_length")))
		return tp_gguf_bad(L, "metadata %s is missing", L->key);
	if (!gguf_find_kv(&L->g, tp_gguf_key(L, "expert_shared_count")))
		return tp_gguf_bad(L, "metadata %s is missing", L->key);
	if (tp_gguf_read_moe(L, c))
		return -1;
	if (c->moe.shared < 1)
		return tp_gguf_bad(L, "%s is %d: tprun needs the shared experts llama.cpp's deepseek2 graph adds",
				   tp_gguf_key(L, "expert_shared_count"),
				   c->moe.shared);
	if (c->moe.groups == 1)	/* one group: no limit */
		c->moe.groups = c->moe.groups_used = 0;
	if (!c->moe.gating)	/* DeepSeek V2's files say none */
		c->moe.gating = TP_GATE_SOFTMAX;
	c->rope_neox = 0;
	return 0;
}

static int load_layer(struct tp_gguf_load *L, struct tp_layer *y, int i)
{
	const struct tp_config *c = &L->w->cfg;
	char name[64];

	if (tp_mla_load(L, &y->mla, i))
		return -1;
	if (i < c->moe.dense_layers)
		return tp_ffn_load_norm(L, &y->ffn, i, NORM);
	/* exp_probs_b is optional: V2's files have none */
	snprintf(name, sizeof(name), "blk.%d.exp_probs_b.bias", i);
	return tp_moe_load(L, &y->moe, i, NORM,
			   gguf_find_tensor(&L->g, name) != NULL);
}

static int forward_layer(struct tp_model *m, const struct tp_layer *y,
			 int i, int n, int pos, struct tp_ar *ar)
{
	return tp_mla_attention(m, &y->mla, i, n, pos, ar) ||
	       (i < m->cfg.moe.dense_layers ? tp_ffn_swiglu(m, &y->ffn, n, ar) :
		tp_moe_ffn(m, &y->moe, n, ar)) ? -1 : 0;
}

static void synth_layer(struct tp_synth *s, struct tp_layer *y, int i)
{
	tp_mla_synth(s, &y->mla, i);
	if (i < s->c->moe.dense_layers)
		tp_ffn_synth(s, &y->ffn, i);
	else
		tp_moe_synth(s, &y->moe, i, TP_T_FFN_NORM,
			     s->c->moe.gating == TP_GATE_SIGMOID);
}

static void export_config(struct gguf_writer *gw, const struct tp_config *c)
{
	const struct tp_mla_config *a = &c->mla;

	tp_export_config(gw, "deepseek2", c);
	/* the cache's widths (one K/V head: latent | RoPE key, latent) */
	gguf_writer_u32(gw, "deepseek2.attention.key_length",
			(uint32_t)(a->kv_lora + c->rot_dim));
	gguf_writer_u32(gw, "deepseek2.attention.value_length",
			(uint32_t)a->kv_lora);
	gguf_writer_u32(gw, "deepseek2.attention.key_length_mla",
			(uint32_t)c->head_dim);
	gguf_writer_u32(gw, "deepseek2.attention.value_length_mla",
			(uint32_t)a->v_dim);
	gguf_writer_u32(gw, "deepseek2.attention.kv_lora_rank",
			(uint32_t)a->kv_lora);
	gguf_writer_u32(gw, "deepseek2.attention.q_lora_rank",
			(uint32_t)a->q_lora);
	gguf_writer_u32(gw, "deepseek2.expert_shared_count",
			(uint32_t)c->moe.shared);
	gguf_writer_u32(gw, "deepseek2.leading_dense_block_count",
			(uint32_t)c->moe.dense_layers);
	gguf_writer_f32(gw, "deepseek2.expert_weights_scale", c->moe.scale);
	gguf_writer_bool(gw, "deepseek2.expert_weights_norm", c->moe.norm);
	gguf_writer_u32(gw, "deepseek2.expert_gating_func",
			(uint32_t)c->moe.gating);
	if (c->moe.groups > 1) {
		gguf_writer_u32(gw, "deepseek2.expert_group_count",
				(uint32_t)c->moe.groups);
		gguf_writer_u32(gw, "deepseek2.expert_group_used_count",
				(uint32_t)c->moe.groups_used);
	}
}

static void export_layer(struct tp_export *e, int i)
{
	tp_mla_export(e, i);
	if (i < e->c->moe.dense_layers)
		tp_ffn_export_norm(e, i, NORM);
	else
		tp_moe_export(e, i, NORM, TP_T_FFN_NORM,
			      e->c->moe.gating == TP_GATE_SIGMOID);
}

const struct tp_arch tp_arch_deepseek2 = {
	.name = "deepseek2",
	.moe = 1,
	.read_config = read_config,
	.load_layer = load_layer,
	.forward_layer = forward_layer,
	.synth_layer = synth_layer,
	.synth_config = synth_config,
	.export_config = export_config,
	.export_layer = export_layer,
};
