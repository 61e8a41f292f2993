/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GGML's 4- and 5-bit block types, as GGUF stores them (32 elements a
 * block, the F16 scale d first):
 *   Q4_0: d, 16 bytes of nibbles (element j low, j+16 high); x = d(q-8)
 *   Q4_1: d, m, nibbles; x = d q + m
 *   Q5_0: d, 32 high bits (qh), nibbles; x = d(q-16)
 *   Q5_1: d, m, qh, nibbles; x = d q + m
 * and Q8_1, the activations' partner of Q4_1/Q5_1 (s = d x sum of qs).
 */
#ifndef TPRUN_QUANT_H
#define TPRUN_QUANT_H

#include "tpmath.h"

#define TP_QK 32

struct tp_block_q4_0 { uint16_t d; uint8_t qs[16]; };
struct tp_block_q4_1 { uint16_t d, m; uint8_t qs[16]; };
struct tp_block_q5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; };
struct tp_block_q5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; };
struct tp_block_q8_1 { uint16_t d, s; int8_t qs[32]; };

_Static_assert(sizeof(struct tp_block_q4_0) == 18, "Q4_0 block is 18 bytes");
_Static_assert(sizeof(struct tp_block_q4_1) == 20, "Q4_1 block is 20 bytes");
_Static_assert(sizeof(struct tp_block_q5_0) == 22, "Q5_0 block is 22 bytes");
_Static_assert(sizeof(struct tp_block_q5_1) == 24, "Q5_1 block is 24 bytes");
_Static_assert(sizeof(struct tp_block_q8_1) == 36, "Q8_1 block is 36 bytes");

/* Bytes of one block of T (Q4_0..Q5_1), or 0. */
size_t tp_quant_block_bytes(enum tp_type t);
/* N (a multiple of 32) floats to blocks of T, as ggml's reference. */
void tp_quant_row(enum tp_type t, const float *x, void *row, size_t n);
void tp_dequant_row(enum tp_type t, const void *row, float *out, size_t n);
/* Activations to Q8_1 as llama.cpp's x86 quantize_row_q8_1. */
void tp_act_q8_1(const float *x, struct tp_block_q8_1 *y, int n);
/* NB blocks of T against activations in Q8_0 (Q4_0, Q5_0) or Q8_1. */
float tp_quant_dot(enum tp_type t, const void *row, const void *act, int nb);

#endif /* TPRUN_QUANT_H */
