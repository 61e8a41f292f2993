/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tprun's math kernels: number formats (F16, BF16, Q8_0), the
 * matrix-vector product on typed weight rows, RMSNorm, rotary position
 * embedding, softmax and SwiGLU.
 *
 * Every kernel is deterministic: a given input produces the same bits
 * every time, whatever the batch size, because each output element is
 * computed by one fixed sequence of float operations (see tp_dot()).
 */
#ifndef TPRUN_TPMATH_H
#define TPRUN_TPMATH_H

#include <stddef.h>
#include <stdint.h>

/* Tensor element types, numbered as in GGML / GGUF. */
enum tp_type {
	TP_F32 = 0,
	TP_F16 = 1,
	TP_Q4_0 = 2,
	TP_Q4_1 = 3,
	TP_Q5_0 = 6,
	TP_Q5_1 = 7,
	TP_Q8_0 = 8,
	TP_Q2_K = 10,
	TP_Q3_K = 11,
	TP_Q4_K = 12,
	TP_Q5_K = 13,
	TP_Q6_K = 14,
	TP_IQ2_XXS = 16,
	TP_IQ2_XS = 17,
	TP_IQ3_XXS = 18,
	TP_IQ1_S = 19,
	TP_IQ4_NL = 20,
	TP_IQ3_S = 21,
	TP_IQ2_S = 22,
	TP_IQ4_XS = 23,
	TP_IQ1_M = 29,
	TP_BF16 = 30,
	TP_MXFP4 = 39,
};

#define TP_QK8_0 32	/* elements per Q8_0 block */

/* A Q8_0 block: 32 signed bytes and their F16 scale (34 bytes). */
struct tp_block_q8_0 {
	uint16_t d;
	int8_t qs[TP_QK8_0];
};

_Static_assert(sizeof(struct tp_block_q8_0) == 34, "Q8_0 block is 34 bytes");

/* Call once before the other functions (fills the F16 table). */
void tp_math_init(void);

float tp_f16_to_f32(uint16_t h);
/* Every F16 value as float, by its bits: the fast tp_f16_to_f32. */
extern float tp_f16_table[65536];
uint16_t tp_f32_to_f16(float f);	/* round to nearest even */
float tp_bf16_to_f32(uint16_t h);
uint16_t tp_f32_to_bf16(float f);	/* round to nearest even */

/* N must be a multiple of 32. Quantisation is GGML's (scale max|x|/127). */
void tp_quantize_q8_0(const float *x, struct tp_block_q8_0 *y, size_t n);
void tp_dequantize_q8_0(const struct tp_block_q8_0 *x, float *y, size_t n);

/* The names of the supported types, for messages */
#define TP_TYPE_NAMES "f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, " \
	"q4_k, q5_k, q6_k, q2_k, q3_k, iq4_nl, iq4_xs, mxfp4, iq1_s, " \
	"iq1_m, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s"

/* The element type's name ("f32", "q8_0"), or NULL if unsupported. */
const char *tp_type_name(enum tp_type t);
/* Bytes of N elements of T; N must be a multiple of T's block size. */
size_t tp_type_bytes(enum tp_type t, size_t n);
int tp_type_block(enum tp_type t);	/* 1, 32, or 256 (K-quants, IQ) */

/* N elements of a typed row to floats. */
void tp_row_to_f32(enum tp_type t, const void *row, float *out, size_t n);
/* N floats to a typed row (quantising). */
void tp_row_from_f32(enum tp_type t, const float *in, void *row, size_t n);

/*
 * A weight matrix of ROWS x COLS, row-major: row i starts STRIDE bytes
 * after row i-1 and holds COLS elements of TYPE. A view can point into a
 * memory-mapped file, or at a shard of a larger matrix (a column range
 * starts inside each row).
 */
struct tp_mat {
	enum tp_type type;
	int rows, cols;
	size_t stride;
	const void *data;
	/* rows in groups of 4, their blocks interleaved (tp_mat_interleave,
	 * kernels/matmul.h): then only tp_matmul reads it, not tp_mat_row */
	int interleaved;
};

static inline const void *tp_mat_row(const struct tp_mat *m, int i)
{
	return (const char *)m->data + (size_t)i * m->stride;
}

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
/* GGML's "neox" mode (Qwen2): v[i] pairs with v[i + rot_dim/2]. */
void tp_rope_apply_neox(float *v, int nheads, int head_dim, int rot_dim,
			const float *cs);

/* In place, numerically stable (subtracts the maximum). */
void tp_softmax(float *x, int n);

float tp_silu(float x);
/* g[i] = silu(g[i]) * u[i] */
void tp_swiglu(float *g, const float *u, int n);

#endif /* TPRUN_TPMATH_H */
