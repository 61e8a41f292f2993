/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What avx2_iq4.c and avx512_iq4.c share: the block scales of IQ4_NL and
 * MXFP4, one at a time and four as one vector with the same bits (the F16
 * by one conversion; the E8M0 "half" as (e - 1) << 23, or 2^-128 << e
 * below 2, as tp_e8m0_half).
 */
#ifndef TPRUN_KERNELS_X86_IQ4_H
#define TPRUN_KERNELS_X86_IQ4_H

#include "kernels/qtypes.h"
#include "kernels/x86.h"

AVX2 static inline float nl_scale(const struct tp_block_iq4_nl *w)
{
	return h2f(w->d);
}

AVX2 static inline float mx_scale(const struct tp_block_mxfp4 *w)
{
	return tp_e8m0_half(w->e);
}

AVX2 static inline __m128 nl_scales4(const struct tp_block_iq4_nl *const *w)
{
	return _mm_cvtph_ps(_mm_setr_epi16((short)w[0]->d, (short)w[1]->d,
					   (short)w[2]->d, (short)w[3]->d,
					   0, 0, 0, 0));
}

AVX2 static inline __m128 mx_scales4(const struct tp_block_mxfp4 *const *w)
{
	__m128i e = _mm_setr_epi32(w[0]->e, w[1]->e, w[2]->e, w[3]->e);
	__m128i normal = _mm_slli_epi32(_mm_sub_epi32(e, _mm_set1_epi32(1)), 23);
	__m128i tiny = _mm_sllv_epi32(_mm_set1_epi32(0x00200000), e);

	return _mm_castsi128_ps(_mm_blendv_epi8(tiny, normal,
		_mm_cmpgt_epi32(e, _mm_set1_epi32(1))));
}

#endif /* TPRUN_KERNELS_X86_IQ4_H */
