/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What avx2_iq.c and avx512_iq.c share: the super-block scale d of the
 * codebook types, read as iq_decode.c reads it (an F16 first; IQ1_M's in
 * the top 4 bits of its four 16-bit scale words).
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

#endif /* TPRUN_KERNELS_X86_IQ_H */
