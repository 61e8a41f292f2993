/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Multi-head latent attention (mla.c), DeepSeek V2/V3's and Kimi K2's,
 * as llama.cpp's deepseek2 graph computes it with the absorbed
 * matrices attn_k_b and attn_v_b:
 *
 *   h = rmsnorm(x)
 *   q = Wq h, or Wq_b rmsnorm(Wq_a h)          per head: nope | rope part
 *   c = Wkv_a h = latent (kv_lora) | k_pe (rot_dim), one for all heads
 *   latent = rmsnorm(latent) ; RoPE on q's rope part and on k_pe
 *   cache[pos] = latent | k_pe                  (the only KV cache)
 *   per head: qa = Wk_b[h] q_nope  (kv_lora)    the keys' up-projection
 *             a = softmax((qa|q_pe) . cache[p] / sqrt(head_dim)) over p
 *             o[h] = Wv_b[h] sum_p a_p latent_p (v_dim)
 *   x += allreduce(Wo o)
 *
 * So the cache holds kv_lora + rot_dim floats per token and layer, as
 * llama.cpp's. Ranks split the heads: each computes the latent itself
 * (Wkv_a and Wq_a are small and held whole), its heads' q, attention and
 * their columns of Wo; one all-reduce adds the parts.
 */
#ifndef TPRUN_MODEL_MLA_H
#define TPRUN_MODEL_MLA_H

#include "model/model.h"

struct tp_export;
struct tp_gguf_load;
struct tp_synth;

/* Layer L's block on N tokens at POS..: 0, or -1 (reported). */
int tp_mla_attention(struct tp_model *m, const struct tp_mla_weights *a,
		     int l, int n, int pos, struct tp_ar *ar);

/* The block's working memory, with tp_model_init's (none without MLA). */
void tp_mla_init(struct tp_model *m);
void tp_mla_free(struct tp_model *m);

/*
 * Layer L's weights by llama.cpp's names (blk.L.attn_norm, attn_q or
 * attn_q_a/attn_q_a_norm/attn_q_b, attn_kv_a_mqa, attn_kv_a_norm,
 * attn_k_b, attn_v_b, attn_output): this rank's shard from GGUF (0, or -1
 * reported through L, naming the tensor), synthetic, and whole for
 * --export-gguf.
 */
int tp_mla_load(struct tp_gguf_load *L, struct tp_mla_weights *a, int l);
void tp_mla_synth(struct tp_synth *s, struct tp_mla_weights *a, int l);
void tp_mla_export(struct tp_export *e, int l);

#endif /* TPRUN_MODEL_MLA_H */
