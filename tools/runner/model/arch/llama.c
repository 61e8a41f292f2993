// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * llama (Llama 1-3, TinyLlama, and the other files llama.cpp runs as
 * llama): per layer, x += attention(rmsnorm(x)) with RoPE on adjacent
 * pairs of each head, then x += SwiGLU MLP(rmsnorm(x)). Linear RoPE
 * scaling and Llama 3.1's frequency factors come with the shared
 * hyperparameters. tprun's synthetic models are llama models.
 */
#include "gguf/gguf.h"
#include "model/arch.h"
#include "model/arch/registry.h"
#include "model/attention.h"
#include "model/ffn.h"
#include "model/load_gguf.h"

static int load_layer(struct tp_gguf_load *L, struct tp_layer *y, int i)
{
	return tp_attn_load(L, &y->attn, i) || tp_ffn_load(L, &y->ffn, i) ?
	       -1 : 0;
}

static int forward_layer(struct tp_model *m, const struct tp_layer *y,
			 int i, int n, int pos, struct tp_ar *ar)
{
	return tp_attention(m, &y->attn, i, n, pos, ar) ||
	       tp_ffn_swiglu(m, &y->ffn, n, ar) ? -1 : 0;
}

static void synth_layer(struct tp_synth *s, struct tp_layer *y, int i)
{
	tp_attn_synth(s, &y->attn, i);
	tp_ffn_synth(s, &y->ffn, i);
}

/* What tp_gguf_read_config() reads back (key_length only when it is not
 * dim / heads, as llama.cpp's converter writes it). */
static void export_config(struct gguf_writer *gw, const struct tp_config *c)
{
	gguf_writer_u32(gw, "llama.context_length", 4096);
	gguf_writer_u32(gw, "llama.embedding_length", (uint32_t)c->dim);
	gguf_writer_u32(gw, "llama.block_count", (uint32_t)c->layers);
	gguf_writer_u32(gw, "llama.feed_forward_length", (uint32_t)c->ffn);
	gguf_writer_u32(gw, "llama.attention.head_count", (uint32_t)c->heads);
	gguf_writer_u32(gw, "llama.attention.head_count_kv",
			(uint32_t)c->kv_heads);
	if (c->head_dim != c->dim / c->heads)
		gguf_writer_u32(gw, "llama.attention.key_length",
				(uint32_t)c->head_dim);
	gguf_writer_u32(gw, "llama.rope.dimension_count", (uint32_t)c->rot_dim);
	gguf_writer_f32(gw, "llama.attention.layer_norm_rms_epsilon", c->eps);
	gguf_writer_f32(gw, "llama.rope.freq_base", c->rope_base);
}

static void export_layer(struct tp_export *e, int i)
{
	tp_attn_export(e, i);
	tp_ffn_export(e, i);
}

const struct tp_arch tp_arch_llama = {
	.name = "llama",
	.read_config = tp_gguf_read_config,
	.load_layer = load_layer,
	.forward_layer = forward_layer,
	.synth_layer = synth_layer,
	.export_config = export_config,
	.export_layer = export_layer,
};
