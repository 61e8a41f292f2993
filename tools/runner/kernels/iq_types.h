/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What iq_decode.c and iq_quant.c share about the codebook types: a
 * super-block unpacked to signed values and scale codes, and per type
 * what its dot product and dequantisation make of them.
 */
#ifndef TPRUN_KERNELS_IQ_TYPES_H
#define TPRUN_KERNELS_IQ_TYPES_H

#include "kernels/qtypes.h"

struct iq_unpacked {
	float d;		/* the super-block scale */
	int8_t v[TP_QK_K];	/* grid values, signs applied (IQ1: -1, 0, 1) */
	int s[16];		/* scale code per sub-block: factor 2s + 1 */
	int8_t delta[32];	/* IQ1: the shift's sign per group of 8 */
};

struct iq_info {
	size_t block_bytes;
	int sub;		/* elements per scale: 32 or 16 */
	int iq1;		/* values shifted by +-1/8 (IQ1_S, IQ1_M) */
	float factor;		/* on the row's sum: 1/8 (IQ2), 1/4 (IQ3_XXS) */
	void (*unpack)(const void *blk, struct iq_unpacked *u);
};

const struct iq_info *iq_info(enum tp_type t);
/* A sub-block's multiplier of grid values in ggml's dequantisation: d
 * (2s + 1) / 8 (IQ2), / 4 (IQ3_XXS), d (2s + 1) (IQ3_S, IQ1) */
static inline float iq_sub_factor(enum tp_type t, float d, int s)
{
	switch (t) {
	case TP_IQ3_XXS: return d * (0.5f + (float)s) * 0.5f;
	case TP_IQ3_S:
	case TP_IQ1_S:
	case TP_IQ1_M: return d * (float)(2 * s + 1);
	default: return d * (0.5f + (float)s) * 0.25f;	/* IQ2 */
	}
}
/* The portable dot product of NB super-blocks of T against Q8_K. */
float tp_iq_dot(enum tp_type t, const void *row, const void *act, int nb);

/* iq_quant.c */
void iq2_xxs_quant(const float *x, void *row, size_t n);
void iq2_xs_quant(const float *x, void *row, size_t n);
void iq2_s_quant(const float *x, void *row, size_t n);
void iq3_xxs_quant(const float *x, void *row, size_t n);
void iq3_s_quant(const float *x, void *row, size_t n);
void iq1_s_quant(const float *x, void *row, size_t n);
void iq1_m_quant(const float *x, void *row, size_t n);

#endif /* TPRUN_KERNELS_IQ_TYPES_H */
