/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Random valid blocks of tprun's newer block types (Q2_K .. IQ1_M), for
 * the runner's unit tests: any bits are valid quants, grid indices, signs
 * and sub-block scales, so the bytes are random but the super-block scales
 * (F16, MXFP4's exponent), which are kept small and finite. RND gives 32
 * random bits.
 */
#ifndef TPRUN_TEST_RUNNER_BLOCKS_H
#define TPRUN_TEST_RUNNER_BLOCKS_H

#include <stdint.h>
#include <string.h>

#include "kernels/quant.h"

/* An F16 of magnitude 2^-12 .. 2^-4, either sign */
static inline uint16_t random_small_f16(uint32_t (*rnd)(void))
{
	return (uint16_t)((rnd() & 0x8000) | (0x0c00 + rnd() % 0x2000));
}

/* NB random valid blocks of T (one of the newer types) at P */
static inline void random_blocks(enum tp_type t, unsigned char *p, int nb,
				 uint32_t (*rnd)(void))
{
	size_t bs = tp_quant_block_bytes(t), i;
	int b, j;

	for (b = 0; b < nb; b++, p += bs) {
		uint16_t h = random_small_f16(rnd), sc[4];

		for (i = 0; i < bs; i++)
			p[i] = (unsigned char)rnd();
		switch (t) {
		case TP_Q2_K:	/* d, dmin last */
			memcpy(p + 80, &h, 2);
			h = random_small_f16(rnd) & 0x7fff;
			memcpy(p + 82, &h, 2);
			break;
		case TP_Q3_K:
			memcpy(p + 108, &h, 2);
			break;
		case TP_MXFP4:
			p[0] = (unsigned char)(110 + rnd() % 24);
			break;
		case TP_IQ1_M:	/* d in the top nibbles of the scales */
			memcpy(sc, p + 48, 8);
			for (j = 0; j < 4; j++)
				sc[j] = (uint16_t)((sc[j] & 0x0fff) |
						   ((h >> (4 * j)) & 15) << 12);
			memcpy(p + 48, sc, 8);
			break;
		default:	/* d first */
			memcpy(p, &h, 2);
		}
	}
}

#endif /* TPRUN_TEST_RUNNER_BLOCKS_H */
