// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --export-gguf: write a synthetic model as a GGUF file of its
 * architecture (llama's: model/arch/llama.c), tensors in the requested
 * type (norms stay F32, as in llama.cpp's files), with the synthetic
 * tokenizer. Loading it gives the same bits as the synthetic
 * weights of that type, which the tests use. A tensor whose rows are not
 * a multiple of the type's block falls back to the type llama.cpp's
 * quantizer uses then (tp_type_for_cols), with a note on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "gguf/gguf.h"
#include "kernels/quant.h"
#include "model/arch.h"
#include "model/export.h"
#include "model/model.h"
#include "model/synthetic.h"
#include "text/tokenizer.h"

void tp_export_tensor(struct tp_export *e, enum tp_type want,
		      const char *fmt, int layer, int tensor, int rows,
		      int cols)
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
			tmp[j] = tp_synth_value(e->c, e->seed, tensor, layer,
						i, j);
		tp_row_from_f32(type, tmp, data + (size_t)i * stride,
				(size_t)cols);
	}
	free(tmp);
	gguf_writer_tensor(e->gw, name, type, rows == 1 ? 1 : 2, ne, data,
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

int tp_export_synthetic(const char *path, const struct tp_arch *arch,
			const struct tp_config *c, uint64_t seed,
			enum tp_type type, int tied, char *err, size_t errlen)
{
	struct tp_export e = { .c = c, .seed = seed, .type = type };
	int l, qd = c->heads * c->head_dim;
	int ret;

	if (!arch->export_layer) {
		snprintf(err, errlen, "architecture %s has no synthetic weights",
			 arch->name);
		return -1;
	}
	if (tp_config_check(c, 1, err, errlen))
		return -1;
	if (tp_type_block(type) > 1 && (c->dim % 32 || c->ffn % 32 || qd % 32)) {
		snprintf(err, errlen,
			 "%s needs dim, ffn and heads x head-dim to be multiples of 32",
			 tp_type_name(type));
		return -1;
	}
	e.gw = gguf_writer_new(GGUF_DEFAULT_ALIGNMENT);
	gguf_writer_str(e.gw, "general.architecture", arch->name);
	gguf_writer_str(e.gw, "general.name", "tprun synthetic");
	gguf_writer_u32(e.gw, "general.file_type", file_type(type));
	arch->export_config(e.gw, c);
	gguf_writer_u32(e.gw, "tprun.synthetic_seed", (uint32_t)seed);
	tp_tok_synth_write(e.gw, c->vocab);	/* none below 259 tokens */

	tp_export_tensor(&e, type, "token_embd.weight", 0, TP_T_EMBD,
			 c->vocab, c->dim);
	tp_export_tensor(&e, TP_F32, "output_norm.weight", 0, TP_T_OUT_NORM,
			 1, c->dim);
	if (!tied)
		tp_export_tensor(&e, type, "output.weight", 0, TP_T_OUTPUT,
				 c->vocab, c->dim);
	for (l = 0; l < c->layers; l++)
		arch->export_layer(&e, l);
	ret = gguf_writer_save(e.gw, path, err, errlen);
	gguf_writer_free(e.gw);
	return ret;
}
