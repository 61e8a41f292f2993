/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The attention block (attention.c), over this rank's heads:
 *
 *   h = rmsnorm(x) ; q, k, v = Wq h, Wk h, Wv h (+ biases)     project
 *   (each head of q and k RMS-normed, when there are q_norm and k_norm)
 *   rotary embedding on q, k ; k, v into the layer's KV cache   rope_cache
 *   a = softmax(q k^T / sqrt(head_dim)) v, grouped-query ;
 *   x += allreduce(Wo a)                                        output
 *
 * tp_attention() runs the three steps; an architecture that needs more
 * (a norm of q and k per head, another score) calls them one by one with
 * its own code between. RoPE's mode is the configuration's (rope_neox),
 * and so is the part of each head it rotates (rot_dim).
 */
#ifndef TPRUN_MODEL_ATTENTION_H
#define TPRUN_MODEL_ATTENTION_H

#include "model/model.h"

struct tp_export;
struct tp_gguf_load;
struct tp_synth;

/* Layer L's block on N tokens at positions POS..: 0, or -1 (reported). */
int tp_attention(struct tp_model *m, const struct tp_attn_weights *a, int l,
		 int n, int pos, struct tp_ar *ar);
/* m->q, m->k, m->v of N tokens from m->x (m->xb: the normed x). */
void tp_attn_project(struct tp_model *m, const struct tp_attn_weights *a,
		     int n);
/* RoPE on m->q and m->k of N tokens at POS.., and k, v into layer L's
 * cache. */
void tp_attn_rope_cache(struct tp_model *m, int l, int n, int pos);
/* The attention over the cache, the output projection, x += its sum. */
int tp_attn_output(struct tp_model *m, const struct tp_attn_weights *a,
		   int l, int n, int pos, struct tp_ar *ar);

/*
 * The positions layer L's K/V cache keeps for a context of CTX in
 * batches of MAX_BATCH: CTX, or in a sliding-window layer only the
 * window plus a batch (a ring: positions run forward, from 0 again for
 * each new sequence, never back into a ring's overwritten past).
 */
int tp_attn_cache_slots(const struct tp_config *c, int l, int ctx,
			int max_batch);

/*
 * The block's weights of layer L by llama.cpp's names (blk.L.attn_norm,
 * attn_q, attn_k, attn_v, attn_output; _bias: attn_q/k/v.bias): this
 * rank's shard from GGUF (0, or -1 reported through L), synthetic, and
 * whole for --export-gguf.
 */
int tp_attn_load(struct tp_gguf_load *L, struct tp_attn_weights *a, int l);
int tp_attn_load_bias(struct tp_gguf_load *L, struct tp_attn_weights *a,
		      int l);
void tp_attn_synth(struct tp_synth *s, struct tp_attn_weights *a, int l);
void tp_attn_export(struct tp_export *e, int l);
/*
 * The biases of q, k and v when the file has them (all three or none,
 * as llama.cpp takes them: optional for Qwen3 and GLM), and the per-head
 * norms attn_q_norm and attn_k_norm (REQUIRED: Qwen3; else both or
 * none). Synthetic and exported: BIAS and QK_NORM say which there are.
 */
int tp_attn_load_bias_opt(struct tp_gguf_load *L, struct tp_attn_weights *a,
			  int l);
int tp_attn_load_qk_norm(struct tp_gguf_load *L, struct tp_attn_weights *a,
			 int l, int required);
void tp_attn_synth_extras(struct tp_synth *s, struct tp_attn_weights *a,
			  int l, int bias, int qk_norm);
void tp_attn_export_extras(struct tp_export *e, int l, int bias, int qk_norm);

#endif /* TPRUN_MODEL_ATTENTION_H */
