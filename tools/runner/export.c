// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --export-gguf: write the synthetic model as a GGUF file of the llama
 * architecture, tensors in the requested type (norms stay F32, as in
 * llama.cpp's files). Loading it gives the same bits as the synthetic
 * weights of that type, which the tests use. A tensor whose rows are not
 * a multiple of the type's block falls back to the type llama.cpp's
 * quantizer uses then (tp_type_for_cols), with a note on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "quant.h"
#include "gguf.h"
#include "model.h"
#include "tokenizer.h"
#include "util.h"

static void add(struct gguf_writer *gw, const struct tp_config *c,
		uint64_t seed, enum tp_type want, const char *fmt, int layer,
		int tensor, int rows, int cols)
{
	enum tp_type type = tp_type_for_cols(want, cols);
	size_t stride = tp_type_bytes(type, (size_t)cols);
	unsigned char *data = tp_calloc((size_t)rows, stride);
	float *tmp = tp_calloc((size_t)cols, sizeof(float));
	uint64_t ne[2] = { (uint64_t)cols, (uint64_t)rows };
	char name[96];
	int i, j;

	snprintf(name, sizeof(name), fmt, layer);
	if (type != want)
		fprintf(stderr,
			"%s: rows of %d are not a multiple of %d for %s: stored as %s, as llama.cpp's quantizer does\n",
			name, cols, tp_type_block(want), tp_type_name(want),
			tp_type_name(type));
	for (i = 0; i < rows; i++) {
		for (j = 0; j < cols; j++)
			tmp[j] = tp_synth_value(c, seed, tensor, layer, i, j);
		tp_row_from_f32(type, tmp, data + (size_t)i * stride,
				(size_t)cols);
	}
	free(tmp);
	gguf_writer_tensor(gw, name, type, rows == 1 ? 1 : 2, ne, data,
			   stride * (size_t)rows);
}

/* llama_ftype of a file whose matrices are all T ("MOSTLY_T") */
static uint32_t file_type(enum tp_type t)
{
	switch (t) {
	case TP_F32: return 0;
	case TP_F16: return 1;
	case TP_Q4_0: return 2;
	case TP_Q4_1: return 3;
	case TP_Q8_0: return 7;
	case TP_Q5_0: return 8;
	case TP_Q5_1: return 9;
	case TP_Q2_K: return 10;
	case TP_Q3_K: return 11;	/* Q3_K_S */
	case TP_Q4_K: return 14;	/* Q4_K_S */
	case TP_Q5_K: return 16;	/* Q5_K_S */
	case TP_Q6_K: return 18;
	case TP_IQ2_XXS: return 19;
	case TP_IQ2_XS: return 20;
	case TP_IQ3_XXS: return 23;
	case TP_IQ1_S: return 24;
	case TP_IQ4_NL: return 25;
	case TP_IQ3_S: return 26;
	case TP_IQ2_S: return 28;
	case TP_IQ4_XS: return 30;
	case TP_IQ1_M: return 31;
	case TP_BF16: return 32;
	case TP_MXFP4: return 38;	/* MXFP4_MOE */
	}
	return 0;
}

int tp_export_gguf(const char *path, const struct tp_config *c, uint64_t seed,
		   enum tp_type type, int tied, char *err, size_t errlen)
{
	struct gguf_writer *gw;
	int l, qd = c->heads * c->head_dim, kvd = c->kv_heads * c->head_dim;
	int ret;

	if (tp_config_check(c, 1, err, errlen))
		return -1;
	if (tp_type_block(type) > 1 && (c->dim % 32 || c->ffn % 32 || qd % 32)) {
		snprintf(err, errlen,
			 "%s needs dim, ffn and heads x head-dim to be multiples of 32",
			 tp_type_name(type));
		return -1;
	}
	gw = gguf_writer_new(GGUF_DEFAULT_ALIGNMENT);
	gguf_writer_str(gw, "general.architecture", "llama");
	gguf_writer_str(gw, "general.name", "tprun synthetic");
	gguf_writer_u32(gw, "general.file_type", file_type(type));
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
	gguf_writer_u32(gw, "tprun.synthetic_seed", (uint32_t)seed);
	tp_tok_synth_write(gw, c->vocab);	/* none below 259 tokens */

	add(gw, c, seed, type, "token_embd.weight", 0, TP_T_EMBD, c->vocab,
	    c->dim);
	add(gw, c, seed, TP_F32, "output_norm.weight", 0, TP_T_OUT_NORM, 1,
	    c->dim);
	if (!tied)
		add(gw, c, seed, type, "output.weight", 0, TP_T_OUTPUT,
		    c->vocab, c->dim);
	for (l = 0; l < c->layers; l++) {
		add(gw, c, seed, TP_F32, "blk.%d.attn_norm.weight", l,
		    TP_T_ATTN_NORM, 1, c->dim);
		add(gw, c, seed, type, "blk.%d.attn_q.weight", l, TP_T_Q, qd,
		    c->dim);
		add(gw, c, seed, type, "blk.%d.attn_k.weight", l, TP_T_K, kvd,
		    c->dim);
		add(gw, c, seed, type, "blk.%d.attn_v.weight", l, TP_T_V, kvd,
		    c->dim);
		add(gw, c, seed, type, "blk.%d.attn_output.weight", l, TP_T_O,
		    c->dim, qd);
		add(gw, c, seed, TP_F32, "blk.%d.ffn_norm.weight", l,
		    TP_T_FFN_NORM, 1, c->dim);
		add(gw, c, seed, type, "blk.%d.ffn_gate.weight", l, TP_T_GATE,
		    c->ffn, c->dim);
		add(gw, c, seed, type, "blk.%d.ffn_up.weight", l, TP_T_UP,
		    c->ffn, c->dim);
		add(gw, c, seed, type, "blk.%d.ffn_down.weight", l, TP_T_DOWN,
		    c->dim, c->ffn);
	}
	ret = gguf_writer_save(gw, path, err, errlen);
	gguf_writer_free(gw);
	return ret;
}
