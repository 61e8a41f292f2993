/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What avx2_iq.c and avx512_iq.c share: the super-block scale d of the
 * codebook types, read as iq_decode.c reads it (an F16 first; IQ1_M's in
 * the top 4 bits of its four 16-bit scale words), and the float terms of
 * four sums.
 */
#ifndef TPRUN_KERNELS_X86_IQ_H
#define TPRUN_KERNELS_X86_IQ_H

#include "kernels/qtypes.h"
#include "kernels/x86.h"

AVX2 static inline float d_f16(const void *blk)
{
	uint16_t h;

	memcpy(&h, blk, 2);
	return h2f(h);
}

AVX2 static inline float d_iq1_m(const void *blk)
{
	const struct tp_block_iq1_m *x = blk;
	uint16_t sc[4];

	memcpy(sc, x->scales, 8);
	return h2f((uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
			      ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
}

/*
 * S + a super-block's float terms, lane t: (d[t] x d_x[t]) x (sum[t] x
 * TERM), generic's operations in its order (TERM: 1/8 for IQ1's sums of
 * 8 x its values, else 1). Four rows against one token (decoding: D per
 * row, DX one value) or one row against four tokens (prefill: the other
 * way round).
 */
AVX2 static inline __m128 iq_terms4(__m128 s, __m128 d, __m128 dx,
				    __m128i sum, float term)
{
	return _mm_add_ps(s, _mm_mul_ps(_mm_mul_ps(d, dx),
		_mm_mul_ps(_mm_cvtepi32_ps(sum), _mm_set1_ps(term))));
}

/* Install a file's dot_T, dot4_T and rows4_T of the seven types in K */
#define IQ_FILL(k)							\
	do {								\
		IQ_SET(k, TP_IQ2_XXS, iq2_xxs);				\
		IQ_SET(k, TP_IQ2_XS, iq2_xs);				\
		IQ_SET(k, TP_IQ2_S, iq2_s);				\
		IQ_SET(k, TP_IQ3_XXS, iq3_xxs);				\
		IQ_SET(k, TP_IQ3_S, iq3_s);				\
		IQ_SET(k, TP_IQ1_S, iq1_s);				\
		IQ_SET(k, TP_IQ1_M, iq1_m);				\
	} while (0)
#define IQ_SET(k, T, name)						\
	do {								\
		(k)->dot[T] = dot_##name;				\
		(k)->dot4[T] = dot4_##name;				\
		(k)->rows4[T] = rows4_##name;				\
	} while (0)

#endif /* TPRUN_KERNELS_X86_IQ_H */
