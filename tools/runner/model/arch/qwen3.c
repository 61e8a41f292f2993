// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qwen3 (Qwen3 0.6B-32B): Qwen2's layer without the biases on Q, K and V
 * (taken when a file has them, as llama.cpp does), with each head of q
 * and k RMS-normed (blk.N.attn_q_norm, attn_k_norm: head_dim weights,
 * required) before RoPE, which rotates the halves of each head (neox).
 */
#include <stddef.h>

#include "model/arch.h"
#include "model/arch/registry.h"
#include "model/attention.h"
#include "model/export.h"
#include "model/ffn.h"
#include "model/load_gguf.h"

static const char *synth_config(struct tp_config *c)
{
	c->rope_neox = 1;
	return NULL;
}

static int read_config(struct tp_gguf_load *L, struct tp_config *c)
{
	if (tp_gguf_read_config(L, c))
		return -1;
	synth_config(c);
	return 0;
}

static int load_layer(struct tp_gguf_load *L, struct tp_layer *y, int i)
{
	return tp_attn_load(L, &y->attn, i) ||
	       tp_attn_load_bias_opt(L, &y->attn, i) ||
	       tp_attn_load_qk_norm(L, &y->attn, i, 1) ||
	       tp_ffn_load(L, &y->ffn, i) ? -1 : 0;
}

/* The norms of q and k, the biases and RoPE's mode are in the weights
 * and the configuration: the blocks as llama's. */
static int forward_layer(struct tp_model *m, const struct tp_layer *y,
			 int i, int n, int pos, struct tp_ar *ar)
{
	return tp_attention(m, &y->attn, i, n, pos, ar) ||
	       tp_ffn_swiglu(m, &y->ffn, n, ar) ? -1 : 0;
}

static void synth_layer(struct tp_synth *s, struct tp_layer *y, int i)
{
	tp_attn_synth(s, &y->attn, i);
	tp_attn_synth_extras(s, &y->attn, i, 0, 1);
	tp_ffn_synth(s, &y->ffn, i);
}

static void export_config(struct gguf_writer *gw, const struct tp_config *c)
{
	tp_export_config(gw, "qwen3", c);
}

static void export_layer(struct tp_export *e, int i)
{
	tp_attn_export(e, i);
	tp_attn_export_extras(e, i, 0, 1);
	tp_ffn_export(e, i);
}

const struct tp_arch tp_arch_qwen3 = {
	.name = "qwen3",
	.read_config = read_config,
	.load_layer = load_layer,
	.forward_layer = forward_layer,
	.synth_layer = synth_layer,
	.synth_config = synth_config,
	.export_config = export_config,
	.export_layer = export_layer,
};
