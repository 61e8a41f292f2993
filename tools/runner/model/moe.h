/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The mixture-of-experts FFN block (moe.c), as llama.cpp's
 * build_moe_ffn computes it:
 *
 *   h = rmsnorm(x)
 *   p = gate(router h)               softmax, or sigmoid (c->moe.gating)
 *   the top k experts by p + bias    (bias: DeepSeek V3 / GLM's
 *                                     exp_probs_b; optionally within the
 *                                     best expert groups)
 *   w_j = p[e_j] (/ sum, * scale)    (c->moe.norm, c->moe.scale)
 *   y = sum_j w_j SwiGLU_e_j(h)      in the order of the choice, best first
 *   y += SwiGLU_shared(h)            (shared experts, when there are)
 *   x += allreduce(y)
 *
 * Every rank holds the router whole and routes every token itself, with
 * the portable kernels, so all ranks choose alike; each computes only the
 * experts (or the columns of them) it holds (tp_shard_experts), and one
 * all-reduce adds the parts. A batch of tokens (prefill) is gathered
 * expert by expert, so each expert's matrices are read once for all the
 * tokens that chose it; decoding reads only the chosen experts.
 *
 * gpt-oss's variant: the router's bias on its logits, the top k by
 * logit weighted by a softmax over those k (TP_GATE_SOFTMAX_WEIGHT), the
 * experts' gate and up biases before its clamped SwiGLU (c->moe.act)
 * and the down biases after (f->gate_b, up_b, down_b: experts_act()).
 */
#ifndef TPRUN_MODEL_MOE_H
#define TPRUN_MODEL_MOE_H

#include "model/model.h"

struct tp_export;
struct tp_gguf_load;
struct tp_synth;

/* The block on N tokens: 0, or -1 (reported: the all-reduce failed). */
int tp_moe_ffn(struct tp_model *m, const struct tp_moe_weights *f, int n,
	       struct tp_ar *ar);

/*
 * One token's routing: LOGITS (the router's, c->experts, overwritten by
 * the probabilities) and the selection BIAS (or NULL) to the chosen
 * experts SEL[c->used], best first, and their weights WT[c->used].
 */
void tp_moe_route(const struct tp_moe_config *c, float *logits,
		  const float *bias, int *sel, float *wt);

/* The working memory of the MoE layers, with tp_model_init's (or none
 * when the model has no experts). */
void tp_moe_init(struct tp_model *m);
void tp_moe_free(struct tp_model *m);

/*
 * The block's weights of layer L by llama.cpp's names: NORM (a format
 * with %d, "blk.%d.ffn_norm.weight"), blk.L.ffn_gate_inp.weight (the
 * router), blk.L.exp_probs_b.bias (with PROBS_BIAS), blk.L.ffn_{gate,up,
 * down}_exps.weight (3-D: the experts one after another) and, with
 * c->moe.shared, blk.L.ffn_{gate,up,down}_shexp.weight: this rank's shard
 * from GGUF (0, or -1 reported through L), synthetic (the norm's values
 * those of tensor NORM_ID), and whole for --export-gguf.
 */
int tp_moe_load(struct tp_gguf_load *L, struct tp_moe_weights *f, int l,
		const char *norm, int probs_bias);
void tp_moe_synth(struct tp_synth *s, struct tp_moe_weights *f, int l,
		  int norm_id, int probs_bias);
void tp_moe_export(struct tp_export *e, int l, const char *norm, int norm_id,
		   int probs_bias);

#endif /* TPRUN_MODEL_MOE_H */
