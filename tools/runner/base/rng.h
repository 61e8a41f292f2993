/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Counter-based random numbers: every value is a pure function of a key
 * and a counter, so a rank can generate exactly its shard of a tensor and
 * get the same numbers the 1-rank run generates for those elements.
 */
#ifndef TPRUN_RNG_H
#define TPRUN_RNG_H

#include <stdint.h>

/* splitmix64's finaliser: a bijective 64-bit mix. */
static inline uint64_t tp_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The value at (a, b, c) of the stream KEY. */
static inline uint64_t tp_hash4(uint64_t key, uint64_t a, uint64_t b,
				uint64_t c)
{
	uint64_t h = tp_mix64(key + 0x9e3779b97f4a7c15ull);

	h = tp_mix64(h ^ (a + 0x632be59bd9b4e019ull));
	h = tp_mix64(h ^ (b + 0x85157af5a1c2b3d7ull));
	return tp_mix64(h ^ (c + 0xd6e8feb86659fd93ull));
}

/* Uniform in [-1, 1), 24 random bits: exact in a float. */
static inline float tp_unit_pm1(uint64_t h)
{
	return (float)((int32_t)(h >> 40) - (1 << 23)) / (float)(1 << 23);
}

/* Uniform in [0, 1), 53 random bits. */
static inline double tp_unit01(uint64_t h)
{
	return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* TPRUN_RNG_H */
