/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tensor element types as GGUF numbers them, their sizes, rows of them
 * to and from floats (types.c), and the typed matrix view the model's
 * weights are made of. The block layouts of the quantised types are in
 * quant.h, the 16-bit floats in float16.h.
 */
#ifndef TPRUN_KERNELS_TYPES_H
#define TPRUN_KERNELS_TYPES_H

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

#endif /* TPRUN_KERNELS_TYPES_H */
