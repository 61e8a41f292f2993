// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qwen2 (Qwen2, Qwen2.5): llama's layer with biases on Q, K and V, and
 * RoPE that rotates the halves of each head (GGML's "neox" mode) where
 * llama rotates adjacent pairs. The same hyperparameters under "qwen2.".
 * No synthetic models.
 */
#include "model/arch.h"
#include "model/arch/registry.h"
#include "model/attention.h"
#include "model/ffn.h"
#include "model/load_gguf.h"

static int read_config(struct tp_gguf_load *L, struct tp_config *c)
{
	if (tp_gguf_read_config(L, c))
		return -1;
	c->rope_neox = 1;
	return 0;
}

/* A file without the biases is refused, naming the first missing. */
static int load_layer(struct tp_gguf_load *L, struct tp_layer *y, int i)
{
	return tp_attn_load(L, &y->attn, i) || tp_ffn_load(L, &y->ffn, i) ||
	       tp_attn_load_bias(L, &y->attn, i) ? -1 : 0;
}

/* The biases and the RoPE mode are in the weights and the configuration. */
static int forward_layer(struct tp_model *m, const struct tp_layer *y,
			 int i, int n, int pos, struct tp_ar *ar)
{
	return tp_attention(m, &y->attn, i, n, pos, ar) ||
	       tp_ffn_swiglu(m, &y->ffn, n, ar) ? -1 : 0;
}

const struct tp_arch tp_arch_qwen2 = {
	.name = "qwen2",
	.read_config = read_config,
	.load_layer = load_layer,
	.forward_layer = forward_layer,
};
