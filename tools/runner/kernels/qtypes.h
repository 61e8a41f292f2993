/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The block types quant.c hands on (quant.h has their layouts): Q2_K and
 * Q3_K (kquant23.c), IQ4_NL, IQ4_XS and MXFP4 (iq4.c), the IQ1, IQ2 and
 * IQ3 codebook types (iq_decode.c, iq_quant.c). Each has a quantiser, a
 * dequantiser that gives the floats ggml's dequantize_row_* gives (bit for
 * bit: the embedding rows and F32 shards are made with it), and the
 * portable dot product against activations converted as llama.cpp's CPU
 * backend converts them (Q8_0 for IQ4_NL and MXFP4, Q8_K for the others):
 * its integer sums, and per block the float operations of ggml's scalar
 * dot, in its order, where that is one term per block; where ggml's
 * scalar code adds a float per sub-block (Q3_K, IQ4_XS), the integer sum
 * of the whole super-block times the scales, as its x86 kernels do. The
 * SIMD kernels repeat exactly these operations (kernels.h, Numerics).
 */
#ifndef TPRUN_KERNELS_QTYPES_H
#define TPRUN_KERNELS_QTYPES_H

#include <string.h>

#include "kernels/float16.h"
#include "kernels/quant.h"

struct tp_qtype {
	size_t block_bytes;
	/* N (a multiple of the block) floats to blocks */
	void (*quant)(const float *x, void *row, size_t n);
	void (*dequant)(const void *row, float *out, size_t n);
	/* NB blocks against NB blocks of converted activations */
	float (*dot)(const void *row, const void *act, int nb);
};

/* The type's functions, or NULL for quant.c's own types. */
const struct tp_qtype *tp_qtype(enum tp_type t);

extern const struct tp_qtype tp_qtype_q2_k, tp_qtype_q3_k;
extern const struct tp_qtype tp_qtype_iq4_nl, tp_qtype_iq4_xs, tp_qtype_mxfp4;
extern const struct tp_qtype tp_qtype_iq2_xxs, tp_qtype_iq2_xs,
	tp_qtype_iq2_s, tp_qtype_iq3_xxs, tp_qtype_iq3_s, tp_qtype_iq1_s,
	tp_qtype_iq1_m;

/* Round to nearest, ties to even, as ggml's nearest_int (|f| < 2^22). */
static inline int tp_nearest(float f)
{
	float v = f + 12582912.0f;
	int32_t i;

	memcpy(&i, &v, sizeof(i));
	return (i & 0x007fffff) - 0x00400000;
}

static inline int tp_clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * Scale and minimum of N values for quants 0..NMAX, weighted least
 * squares (or, MAD, least absolute deviations) over NSTEP+1 trial scales
 * around the min-max one: ggml's make_qkx2_quants (scale_fit.c). Returns the
 * scale; *NEG_MIN = -min.
 */
float tp_fit_scale_min(int n, int nmax, const float *x, const float *w,
		       uint8_t *L, float *neg_min, float rmin, float rdelta,
		       int nstep, int mad);

/* The scale of an MXFP4 block: 2^(e - 128), as ggml's E8M0 "half". */
static inline float tp_e8m0_half(uint8_t e)
{
	uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

#endif /* TPRUN_KERNELS_QTYPES_H */
