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

/*
 * The 2- and 3-bit K-quants (sixteen sub-blocks of 16):
 *   Q2_K: a 4-bit scale and 4-bit min per sub-block, 2-bit quants (in
 *         each 128 elements: byte l holds elements l, l+32, l+64, l+96
 *         of its half, bits 0-1 first), d and dmin last; x = d sc q - dmin m
 *   Q3_K: hmask[32] (bit k of byte l: element 32k + l is >= 0), 2-bit
 *         low quants as Q2_K, twelve bytes of 6-bit scales (stored + 32),
 *         d; x = d (sc - 32) (q - 4 if its hmask bit is clear)
 */
struct tp_block_q2_k {
	uint8_t scales[16];
	uint8_t qs[64];
	uint16_t d, dmin;
};
struct tp_block_q3_k {
	uint8_t hmask[32];
	uint8_t qs[64];
	uint8_t scales[12];
	uint16_t d;
};

/*
 * The non-linear 4-bit types: a quant q stands for a value of a table of
 * 16 (iq_tables.h), nibbles as Q4_0 (element j low, j + 16 high):
 *   IQ4_NL: d, 16 bytes; x = d kvalues_iq4nl[q] (blocks of 32)
 *   IQ4_XS: d, the high 2 bits of eight 6-bit scales, their low nibbles,
 *           128 bytes; x = d (sc - 32) kvalues_iq4nl[q] (256)
 *   MXFP4:  an E8M0 exponent e, 16 bytes; x = 2^(e - 128) kvalues_mxfp4[q]
 *           (the E2M1 values doubled; blocks of 32)
 */
struct tp_block_iq4_nl { uint16_t d; uint8_t qs[16]; };
struct tp_block_iq4_xs {
	uint16_t d;
	uint16_t scales_h;
	uint8_t scales_l[4];
	uint8_t qs[128];
};
struct tp_block_mxfp4 { uint8_t e; uint8_t qs[16]; };

/*
 * The codebook ("IQ") types, super-blocks of 256: each group of 8 (4 for
 * IQ3) elements is an index into a grid of magnitudes (iq_tables.h), with
 * signs and a scale per 32 or 16 elements apart:
 *   IQ2_XXS: d, per 32 two words: four 8-bit indices, then four 7-bit
 *            sign indices and a 4-bit scale s; x = d (2s+1)/8 g (signs)
 *   IQ2_XS:  d, per group a word of a 9-bit index and 7-bit sign index,
 *            4-bit scales per 16
 *   IQ2_S:   d, 10-bit indices (8 bits in qs, 2 in qh), 8 sign bits per
 *            group, 4-bit scales per 16
 *   IQ3_XXS: d, 8-bit indices of 4 values, per 32 a word of sign indices
 *            and scale; x = d (2s+1)/4 g (signs)
 *   IQ3_S:   d, 9-bit indices, 8 sign bits per 8, 4-bit scales per 32;
 *            x = d (2s+1) g (signs)
 *   IQ1_S:   d, 11-bit indices into signed values -1, 0, 1, per 32 a
 *            3-bit scale and a shift of +-1/8; x = d (2s+1) (g +- 1/8)
 *   IQ1_M:   as IQ1_S with a shift per 8 and 3-bit scales per 16; d (F16)
 *            lies in the top nibbles of the four scale words
 */
struct tp_block_iq2_xxs { uint16_t d; uint16_t qs[32]; };
struct tp_block_iq2_xs { uint16_t d; uint16_t qs[32]; uint8_t scales[8]; };
struct tp_block_iq2_s {
	uint16_t d;
	uint8_t qs[64];	/* 32 index bytes, then 32 sign bytes */
	uint8_t qh[8];
	uint8_t scales[8];
};
struct tp_block_iq3_xxs { uint16_t d; uint8_t qs[96]; };	/* 64 + 32 */
struct tp_block_iq3_s {
	uint16_t d;
	uint8_t qs[64];
	uint8_t qh[8];
	uint8_t signs[32];
	uint8_t scales[4];
};
struct tp_block_iq1_s { uint16_t d; uint8_t qs[32]; uint16_t qh[8]; };
struct tp_block_iq1_m { uint8_t qs[32]; uint8_t qh[16]; uint8_t scales[8]; };

_Static_assert(sizeof(struct tp_block_q2_k) == 84, "Q2_K block is 84 bytes");
_Static_assert(sizeof(struct tp_block_q3_k) == 110, "Q3_K block is 110 bytes");
_Static_assert(sizeof(struct tp_block_iq4_nl) == 18, "IQ4_NL block is 18 bytes");
_Static_assert(sizeof(struct tp_block_iq4_xs) == 136, "IQ4_XS block is 136 bytes");
_Static_assert(sizeof(struct tp_block_mxfp4) == 17, "MXFP4 block is 17 bytes");
_Static_assert(sizeof(struct tp_block_iq2_xxs) == 66, "IQ2_XXS block is 66 bytes");
_Static_assert(sizeof(struct tp_block_iq2_xs) == 74, "IQ2_XS block is 74 bytes");
_Static_assert(sizeof(struct tp_block_iq2_s) == 82, "IQ2_S block is 82 bytes");
_Static_assert(sizeof(struct tp_block_iq3_xxs) == 98, "IQ3_XXS block is 98 bytes");
_Static_assert(sizeof(struct tp_block_iq3_s) == 110, "IQ3_S block is 110 bytes");
_Static_assert(sizeof(struct tp_block_iq1_s) == 50, "IQ1_S block is 50 bytes");
_Static_assert(sizeof(struct tp_block_iq1_m) == 56, "IQ1_M block is 56 bytes");
_Static_assert(sizeof(struct tp_block_q4_k) == 144, "Q4_K block is 144 bytes");
_Static_assert(sizeof(struct tp_block_q5_k) == 176, "Q5_K block is 176 bytes");
_Static_assert(sizeof(struct tp_block_q6_k) == 210, "Q6_K block is 210 bytes");
_Static_assert(sizeof(struct tp_block_q8_k) == 292, "Q8_K block is 292 bytes");
_Static_assert(sizeof(struct tp_block_q4_0) == 18, "Q4_0 block is 18 bytes");
_Static_assert(sizeof(struct tp_block_q4_1) == 20, "Q4_1 block is 20 bytes");
_Static_assert(sizeof(struct tp_block_q5_0) == 22, "Q5_0 block is 22 bytes");
_Static_assert(sizeof(struct tp_block_q5_1) == 24, "Q5_1 block is 24 bytes");
_Static_assert(sizeof(struct tp_block_q8_1) == 36, "Q8_1 block is 36 bytes");

/* Bytes of one block of T (any block type but Q8_0), or 0. */
size_t tp_quant_block_bytes(enum tp_type t);
static inline int tp_type_is_k(enum tp_type t)
{
	return t == TP_Q4_K || t == TP_Q5_K || t == TP_Q6_K;
}
/* Types of 256-element super-blocks (all but IQ4_NL and MXFP4 of the
 * new ones) */
static inline int tp_type_is_super(enum tp_type t)
{
	switch (t) {
	case TP_Q2_K: case TP_Q3_K: case TP_Q4_K: case TP_Q5_K: case TP_Q6_K:
	case TP_IQ4_XS: case TP_IQ2_XXS: case TP_IQ2_XS: case TP_IQ2_S:
	case TP_IQ3_XXS: case TP_IQ3_S: case TP_IQ1_S: case TP_IQ1_M:
		return 1;
	default:
		return 0;
	}
}
/*
 * The type llama.cpp's quantizer stores a tensor of rows of COLS elements
 * in when asked for T: T if COLS is a multiple of T's block, else Q5_0
 * (for Q4_K), Q5_1 (Q5_K), Q8_0 (Q6_K), Q4_0 (Q2_K, Q3_K) or IQ4_NL (the
 * IQ types of 256), and F16 if COLS is not a multiple of 32 either. Types
 * of 32-element blocks: T (the exporter and loader require 32 columns).
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
 * NB blocks of T against activations in Q8_0 (Q4_0, Q5_0, IQ4_NL, MXFP4),
 * Q8_1 (Q4_1, Q5_1) or Q8_K (the K-quants and other IQ types): an exact
 * integer sum per block, then the scales.
 */
float tp_quant_dot(enum tp_type t, const void *row, const void *act, int nb);

#endif /* TPRUN_QUANT_H */
