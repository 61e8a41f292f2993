/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The float vector operations of the forward pass (vector.c): the dot
 * product of a typed weight row and floats, RMSNorm, rotary position
 * embedding, softmax and SwiGLU.
 *
 * Every one is deterministic: a given input produces the same bits every
 * time, whatever the batch size, because each output element is computed
 * by one fixed sequence of float operations (see tp_dot()).
 */
#ifndef TPRUN_KERNELS_VECTOR_H
#define TPRUN_KERNELS_VECTOR_H

#include "kernels/types.h"

/* The dot product of a typed row and N floats. */
float tp_dot(enum tp_type t, const void *row, const float *x, int n);
float tp_dot_f32(const float *a, const float *b, int n);

/* The matrix product the model uses is tp_matmul() (kernels/matmul.h). */

/* out = x / sqrt(mean(x^2) + eps) * w (out may be x). */
void tp_rmsnorm(float *out, const float *x, const float *w, int n, float eps);

/*
 * Rotary position embedding, GGML's "normal" mode used by the llama
 * architecture: adjacent pairs (v[2i], v[2i+1]) of the first ROT_DIM
 * elements of each head rotate by pos * base^(-2i/rot_dim).
 * tp_rope_table() fills cs[2i] = cos, cs[2i+1] = sin for one position.
 */
void tp_rope_table(float *cs, int rot_dim, int pos, float base);
void tp_rope_apply(float *v, int nheads, int head_dim, int rot_dim,
		   const float *cs);
/*
 * The same with llama.cpp's linear scaling and frequency factors: pair i
 * rotates by pos * SCALE * base^(-2i/rot_dim) / FREQS[i] (SCALE 0 means
 * 1; FREQS may be NULL).
 */
void tp_rope_table_ext(float *cs, int rot_dim, int pos, float base,
		       float scale, const float *freqs);
/*
 * YaRN as GGML computes it (ext_factor 1): pair i's angle a blend of the
 * scaled (SCALE = 1 / factor) and the unscaled one, by where its
 * wavelength falls between the BETA_FAST and BETA_SLOW rotations over
 * ORIG_CTX; cos and sin both times 1 + 0.1 ln(factor).
 */
void tp_rope_table_yarn(float *cs, int rot_dim, int pos, float base,
			float scale, int orig_ctx, float beta_fast,
			float beta_slow, const float *freqs);
/* The same with cos and sin times MSCALE (deepseek2's YaRN). */
void tp_rope_table_yarn_m(float *cs, int rot_dim, int pos, float base,
			  float scale, int orig_ctx, float beta_fast,
			  float beta_slow, const float *freqs, float mscale);
/* GGML's "neox" mode (Qwen2): v[i] pairs with v[i + rot_dim/2]. */
void tp_rope_apply_neox(float *v, int nheads, int head_dim, int rot_dim,
			const float *cs);

/* In place, numerically stable (subtracts the maximum). */
void tp_softmax(float *x, int n);
/* The same with one more logit SINK in the sum (attention sinks): the
 * entries add up to less than 1. SINK -INFINITY: tp_softmax. */
void tp_softmax_sink(float *x, int n, float sink);

float tp_silu(float x);
/* g[i] = silu(g[i]) * u[i] */
void tp_swiglu(float *g, const float *u, int n);
/* gpt-oss's (GGML's swiglu_oai, alpha 1.702, limit 7): with x = min(g,
 * 7) and y = u clamped to [-7, 7], g = x sigmoid(1.702 x) (y + 1) */
void tp_swiglu_oai(float *g, const float *u, int n);

#endif /* TPRUN_KERNELS_VECTOR_H */
