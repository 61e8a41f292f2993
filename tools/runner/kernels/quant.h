/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GGML's 4- and 5-bit block types, as GGUF stores them (32 elements a
 * block, the F16 scale d first):
 *   Q4_0: d, 16 bytes of nibbles (element j low, j+16 high); x = d(q-8)
 *   Q4_1: d, m, nibbles; x = d q + m
 *   Q5_0: d, 32 high bits (qh), nibbles; x = d(q-16)
 *   Q5_1: d, m, qh, nibbles; x = d q + m
 * and Q8_1, the activations' partner of Q4_1/Q5_1 (s = d x sum of qs).
 *
 * The K-quants (super-blocks of 256 elements, eight sub-blocks of 32 or
 * sixteen of 16, each with its own quantised scale):
 *   Q4_K: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of
 *         nibbles (in each 64 elements: element j low, j+32 high);
 *         x = d sc q - dmin m
 *   Q5_K: as Q4_K plus qh[32]: bit 2i of qh[j] is the fifth bit of
 *         element 64i+j, bit 2i+1 that of element 64i+32+j
 *   Q6_K: ql[128] (low nibbles), qh[64] (2-bit pairs), 16 signed 8-bit
 *         scales, d last; x = d sc (q - 32)
 * and Q8_K, their activations' partner: a float scale, 256 signed bytes
 * and the sums of each 16 of them.
 */
#ifndef TPRUN_QUANT_H
#define TPRUN_QUANT_H

#include "kernels/types.h"

#define TP_QK 32

struct tp_block_q4_0 { uint16_t d; uint8_t qs[16]; };
struct tp_block_q4_1 { uint16_t d, m; uint8_t qs[16]; };
struct tp_block_q5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; };
struct tp_block_q5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; };
struct tp_block_q8_1 { uint16_t d, s; int8_t qs[32]; };

#define TP_QK_K 256

struct tp_block_q4_k { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; };
struct tp_block_q5_k {
	uint16_t d, dmin;
	uint8_t scales[12];
	uint8_t qh[32];
	uint8_t qs[128];
};
struct tp_block_q6_k {
	uint8_t ql[128];
	uint8_t qh[64];
	int8_t scales[16];
	uint16_t d;
};
struct tp_block_q8_k { float d; int8_t qs[256]; int16_t bsums[16]; };

_Static_assert(sizeof(struct tp_block_q4_k) == 144, "Q4_K block is 144 bytes");
_Static_assert(sizeof(struct tp_block_q5_k) == 176, "Q5_K block is 176 bytes");
_Static_assert(sizeof(struct tp_block_q6_k) == 210, "Q6_K block is 210 bytes");
_Static_assert(sizeof(struct tp_block_q8_k) == 292, "Q8_K block is 292 bytes");
_Static_assert(sizeof(struct tp_block_q4_0) == 18, "Q4_0 block is 18 bytes");
_Static_assert(sizeof(struct tp_block_q4_1) == 20, "Q4_1 block is 20 bytes");
_Static_assert(sizeof(struct tp_block_q5_0) == 22, "Q5_0 block is 22 bytes");
_Static_assert(sizeof(struct tp_block_q5_1) == 24, "Q5_1 block is 24 bytes");
_Static_assert(sizeof(struct tp_block_q8_1) == 36, "Q8_1 block is 36 bytes");

/* Bytes of one block of T (Q4_0..Q5_1, Q4_K..Q6_K), or 0. */
size_t tp_quant_block_bytes(enum tp_type t);
static inline int tp_type_is_k(enum tp_type t)
{
	return t == TP_Q4_K || t == TP_Q5_K || t == TP_Q6_K;
}
/*
 * The type llama.cpp's quantizer stores a tensor of rows of COLS elements
 * in when asked for T: T if COLS is a multiple of T's block, else for the
 * K-quants Q5_0 (for Q4_K), Q5_1 (Q5_K) or Q8_0 (Q6_K), and F16 if COLS
 * is not a multiple of 32 either. Other types: T.
 */
enum tp_type tp_type_for_cols(enum tp_type t, long cols);
/* N (a multiple of the block) floats to blocks of T, as ggml's reference. */
void tp_quant_row(enum tp_type t, const float *x, void *row, size_t n);
void tp_dequant_row(enum tp_type t, const void *row, float *out, size_t n);
/* Activations to Q8_1 as llama.cpp's x86 quantize_row_q8_1. */
void tp_act_q8_1(const float *x, struct tp_block_q8_1 *y, int n);
/* Activations to Q8_K as llama.cpp's quantize_row_q8_K (N % 256 == 0). */
void tp_act_q8_k(const float *x, struct tp_block_q8_k *y, int n);
/*
 * NB blocks of T against activations in Q8_0 (Q4_0, Q5_0), Q8_1 (Q4_1,
 * Q5_1) or Q8_K (the K-quants): an exact integer sum per block, then
 * the scales.
 */
float tp_quant_dot(enum tp_type t, const void *row, const void *act, int nb);

#endif /* TPRUN_QUANT_H */
