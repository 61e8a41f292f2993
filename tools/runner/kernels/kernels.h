/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The dot products of typed weight rows with activations, behind one
 * interface: a table of functions per instruction set (generic.c, the
 * portable C every CPU runs; avx2.c, ...), filled by dispatch.c from what
 * the CPU reports. Only matmul.c and the tests use this header; the model
 * calls tp_matmul() (matmul.h) and knows no instruction set.
 *
 * Activations reach a product converted the way llama.cpp's CPU backend
 * converts them for that weight type (its vec_dot_type), see enum tp_act.
 *
 * Numerics: a kernel whose arithmetic is integer (the quantised types)
 * gives exactly the bits of the generic one (same integer sums, the same
 * float operations on them in the same order), so every rank computes the
 * same values whatever its CPU. The float kernels (F32, F16, BF16) sum in
 * another order and agree within rounding (tests/unit/test_runner_kernels).
 */
#ifndef TPRUN_KERNELS_H
#define TPRUN_KERNELS_H

#include <stddef.h>

#include "kernels/types.h"

enum tp_isa { TP_ISA_GENERIC, TP_ISA_AVX2, TP_ISA_AVX512, TP_ISA_COUNT };

/* What a weight type's activations are converted to. */
enum tp_act {
	TP_ACT_F32,	/* floats as they are (F32 weights) */
	TP_ACT_F16,	/* floats rounded to F16 values (F16 weights) */
	TP_ACT_BF16,	/* floats rounded to BF16 values (BF16 weights) */
	TP_ACT_Q8_0,	/* Q8_0 blocks (Q8_0, Q4_0, Q5_0, IQ4_NL, MXFP4) */
	TP_ACT_Q8_1,	/* Q8_1 blocks (Q4_1, Q5_1) */
	TP_ACT_Q8_K,	/* Q8_K super-blocks (the K-quants, other IQ types) */
};

/* The dot product of a row of N weights and N activations (converted). */
typedef float tp_dot_fn(const void *w, const void *act, int n);

/*
 * The same row against 4 activation rows (ACT, ACT + STRIDE, ...) at
 * once, the weights unpacked once for all four (prefill): OUT[t] has the
 * bits dot() gives for row t.
 */
typedef void tp_dot4_fn(const void *w, const void *act, size_t stride, int n,
			float *out);

/*
 * 4 weight rows against one activation row at once (decoding), the block
 * terms of the 4 added as one vector: block b of row r at
 * W + r WSTRIDE + b BSTRIDE (rows one after another: WSTRIDE the row's
 * bytes, BSTRIDE the block's; interleaved, matmul.h: the other way
 * round, times 4). OUT[r] has the bits dot() gives for row r.
 */
typedef void tp_rows4_fn(const void *w, size_t wstride, size_t bstride,
			 const void *act, int n, float *out);

#define TP_TYPE_SLOTS 40	/* enum tp_type's values are below this */

struct tp_kernels {
	enum tp_isa isa;
	const char *name;		/* "generic", "avx2", ... */
	tp_dot_fn *dot[TP_TYPE_SLOTS];	/* by weight type; never NULL */
	tp_dot4_fn *dot4[TP_TYPE_SLOTS];	/* NULL: four dot() calls */
	tp_rows4_fn *rows4[TP_TYPE_SLOTS];	/* NULL: four dot() calls */
};

enum tp_act tp_act_for(enum tp_type t);
/* Bytes of one row of N activations converted to A. */
size_t tp_act_bytes(enum tp_act a, int n);
/* N floats converted to A (N a multiple of A's block). */
void tp_act_convert(enum tp_act a, const float *x, void *out, int n);

/* The table in use: the best the CPU has, or lower if TPRUN_ISA says so
 * (generic, avx2, avx512). Chosen once, on the first call. */
const struct tp_kernels *tp_kernels(void);
/* The table of ISA, or NULL when this CPU lacks it. */
const struct tp_kernels *tp_kernels_for(enum tp_isa isa);
const char *tp_isa_name(enum tp_isa isa);

/* Fill K: generic fills every type; the others override what they have. */
void tp_kernels_fill_generic(struct tp_kernels *k);
void tp_kernels_fill_avx2(struct tp_kernels *k);
void tp_kernels_fill_avx512(struct tp_kernels *k);
/* ... the newer block types' AVX2 kernels, called by fill_avx2 */
void tp_kernels_fill_avx2_iq(struct tp_kernels *k);
void tp_kernels_fill_avx2_kq23(struct tp_kernels *k);
void tp_kernels_fill_avx2_iq4(struct tp_kernels *k);
void tp_kernels_fill_avx512_iq4(struct tp_kernels *k);	/* by fill_avx512 */
void tp_kernels_fill_avx512_iq(struct tp_kernels *k);	/* by fill_avx512 */

#endif /* TPRUN_KERNELS_H */
