// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The 16-bit float formats, F16 (IEEE half) and BF16 (bfloat16), to and
 * from float, rounding to nearest even; and the table of every F16 value
 * that the dot products read instead of converting.
 */
#include <math.h>
#include <string.h>

#include "kernels/float16.h"

float tp_f16_table[65536];	/* filled by tp_math_init() */

static inline uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

float tp_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;

	if (exp == 0)	/* zero or subnormal: mant * 2^-24, exact */
		return u2f(f2u((float)mant * 0x1p-24f) | sign);
	if (exp == 31)	/* infinity or NaN */
		return u2f(sign | 0x7f800000u | (mant << 13));
	return u2f(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t tp_f32_to_f16(float f)
{
	uint32_t x = f2u(f), sign = (x >> 16) & 0x8000, ax = x & 0x7fffffff;
	uint32_t h, rem;

	if (ax > 0x7f800000u)		/* NaN stays NaN (quiet) */
		return (uint16_t)(sign | 0x7e00 | ((ax >> 13) & 0x3ff));
	if (ax >= 0x477ff000u)		/* >= 65520 rounds to infinity */
		return (uint16_t)(sign | 0x7c00);
	if (ax < 0x38800000u)		/* below 2^-14: subnormal or zero */
		return (uint16_t)(sign |
				  (uint32_t)nearbyintf(u2f(ax) * 0x1p24f));
	h = (((ax >> 23) - 112) << 10) | ((ax & 0x7fffff) >> 13);
	rem = ax & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;			/* a carry moves into the exponent */
	return (uint16_t)(sign | h);
}

float tp_bf16_to_f32(uint16_t h)
{
	return u2f((uint32_t)h << 16);
}

uint16_t tp_f32_to_bf16(float f)
{
	uint32_t x = f2u(f);

	if ((x & 0x7fffffff) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fff + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

void tp_math_init(void)
{
	static int done;
	uint32_t i;

	if (done)
		return;
	for (i = 0; i < 65536; i++)
		tp_f16_table[i] = tp_f16_to_f32((uint16_t)i);
	done = 1;
}

