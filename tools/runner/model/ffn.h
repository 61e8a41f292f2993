/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The SwiGLU MLP block (ffn.c), over this rank's columns:
 *
 *   h = rmsnorm(x) ; m = silu(Wgate h) * (Wup h) ; x += allreduce(Wdown m)
 */
#ifndef TPRUN_MODEL_FFN_H
#define TPRUN_MODEL_FFN_H

#include "model/model.h"

struct tp_export;
struct tp_gguf_load;
struct tp_synth;

/* The block on N tokens: 0, or -1 (reported: the all-reduce failed). */
int tp_ffn_swiglu(struct tp_model *m, const struct tp_ffn_weights *f, int n,
		  struct tp_ar *ar);

/*
 * The block's weights of layer L by llama.cpp's names (blk.L.ffn_norm,
 * ffn_gate, ffn_up, ffn_down): this rank's shard from GGUF (0, or -1
 * reported through L), synthetic, and whole for --export-gguf.
 */
int tp_ffn_load(struct tp_gguf_load *L, struct tp_ffn_weights *f, int l);
void tp_ffn_synth(struct tp_synth *s, struct tp_ffn_weights *f, int l);
void tp_ffn_export(struct tp_export *e, int l);

#endif /* TPRUN_MODEL_FFN_H */
