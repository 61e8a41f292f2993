/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rows of the KV cache in its element type (kvcache.c): F32, or F16
 * (IEEE half) as llama.cpp's default cache, half the bytes. The attention
 * reads the cache through these, converting F16 on the fly.
 *
 * F16 numerics are llama.cpp's CPU backend's (no flash attention): its
 * products with an F16 cache convert the other operand to F16 too, the
 * query for Q.K and the softmax weights for the sum over V, and sum the
 * products in F32. tp_kv_round() is that conversion.
 */
#ifndef TPRUN_KERNELS_KVCACHE_H
#define TPRUN_KERNELS_KVCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "kernels/types.h"

/* TP_F32 or TP_F16: the types a cache can have. */
int tp_kv_type_ok(enum tp_type t);
/* Bytes of one cached value. */
size_t tp_kv_elt_bytes(enum tp_type t);

/* N floats into a cache row (F16: rounded to nearest even). */
void tp_kv_store(enum tp_type t, void *row, const float *x, int n);
/* X as the product with a cache of type T sees it: F16 values for an
 * F16 cache (in place), unchanged for F32. */
void tp_kv_round(enum tp_type t, float *x, int n);
/* A cache row . X (X from tp_kv_round for F16). */
float tp_kv_dot(enum tp_type t, const void *row, const float *x, int n);
/* OUT[i] += S * ROW[i], every element a product then a sum (no fused
 * multiply-add), so each instruction set gives the same bits. */
void tp_kv_axpy(enum tp_type t, float *out, float s, const void *row, int n);

/*
 * The F16 paths of one instruction set (TP_ISA_GENERIC: the portable C;
 * AVX2 and up: F16C), for the tests; every one gives the bits of the
 * generic one. An ISA the CPU lacks runs the portable C.
 */
void tp_kv_f16_store_isa(enum tp_isa isa, uint16_t *row, const float *x,
			 int n);
void tp_kv_f16_round_isa(enum tp_isa isa, float *x, int n);
void tp_kv_f16_axpy_isa(enum tp_isa isa, float *out, float s,
			const uint16_t *row, int n);

#endif /* TPRUN_KERNELS_KVCACHE_H */
