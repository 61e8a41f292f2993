// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * AVX-512 dot products of the codebook types IQ2_XXS, IQ2_XS, IQ2_S,
 * IQ3_XXS, IQ3_S, IQ1_S and IQ1_M against Q8_K, installed by
 * tp_kernels_fill_avx512 over avx2_iq.c's (which a CPU without AVX-512,
 * such as QEMU's TCG, keeps).
 *
 * avx2_iq.c builds each group of 8 from a grid index worked out and
 * looked up one at a time (perf: most of the decoding time); here a step
 * takes 64 weights (8 groups of 8, two sub-blocks of 32) at once: the 8
 * (IQ3: 16) indices are computed in one vector and the IQ2 and IQ3 grid
 * rows looked up as 16-bit codes by vpermi2w (below; a gather was
 * slower), IQ1's from its 2048-entry grid by loads at indices in general
 * registers; the signs become a 64-bit mask that negates the
 * activations in one masked subtraction (IQ2_S and IQ3_S store those
 * bits as they are; the 7-bit codes of the others get their parity bit,
 * as tp_ksigns_iq2xs has it), and maddubs pairs unsigned magnitudes with
 * the signed activations into 16 bits (at most 62 x 127 x 2) that
 * vpdpwssd multiplies by the sub-block factors 2s + 1 and adds into 32.
 * These are the exact integers iq_decode.c sums, so each super-block's
 * float term, added in its order, has generic's bits (kernels.h).
 *
 * IQ1: the value 8 x grid + shift (grid -1, 0, 1; shift +-1, as in
 * avx2_iq.c) is taken as the unsigned byte 8 x grid + shift + 9 in 0..18,
 * and 9 x the sum of (2s + 1) x the activations (from Q8_K's bsums, sums
 * of 16) is taken off at the start: again the same integer.
 */
#if defined(__x86_64__)
#include "kernels/iq_tables.h"
#include "kernels/kernels.h"
#include "kernels/x86.h"
#include "kernels/x86_iq.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,bmi2,avx2,fma,f16c")))
#define UNROLL_STEPS _Pragma("GCC unroll 4")
/* a step's code, inlined whatever its size (GCC left IQ1_S's a call) */
#define STEP AVX512 static inline __attribute__((always_inline))

/* A step of 64 weights: unsigned magnitudes, the elements whose product
 * is negated, and the factors 2s + 1 per 16-bit lane (two elements). */
struct iq_w64 {
	__m512i mag;
	__mmask64 neg;
	__m512i scl;
};

/*
 * The factors of step I (elements 64 I .. 64 I + 63) from a super-block's
 * 16 factors of 16 elements each (F, 16-bit lanes): lane j of the step's
 * pairs has factor 4 I + j / 8.
 */
AVX512 static inline __m512i step_factors(__m256i f, int i)
{
	static const uint16_t lane_sub[32] = {
		0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
		2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
	};
	__m512i idx = _mm512_add_epi16(_mm512_loadu_si512(lane_sub),
				       _mm512_set1_epi16((short)(4 * i)));

	return _mm512_permutexvar_epi16(idx, _mm512_castsi256_si512(f));
}

/* 2s + 1 of 16 codes S (16-bit lanes) */
AVX512 static inline __m256i odd(__m256i s)
{
	return _mm256_add_epi16(_mm256_add_epi16(s, s), _mm256_set1_epi16(1));
}

/* 8 codes of sub-blocks of 32 (16-bit lanes of S8) as 16 of 16 each */
AVX512 static inline __m256i per16(__m128i s8)
{
	return _mm256_set_m128i(_mm_unpackhi_epi16(s8, s8),
				_mm_unpacklo_epi16(s8, s8));
}

/* 16 nibbles of 8 bytes at P, low nibble first, as 16-bit lanes */
AVX512 static inline __m256i nibbles16(const uint8_t *p)
{
	__m128i x = _mm_loadl_epi64((const __m128i *)p);
	__m128i m = _mm_set1_epi8(15);

	return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(_mm_and_si128(x, m),
		_mm_and_si128(_mm_srli_epi16(x, 4), m)));
}

/*
 * 8 sign codes of 7 bits (C, 7 bits each from bit 0 up) as the 64 sign
 * bits of tp_ksigns_iq2xs: each byte gets bit 7 = the parity of its 7.
 * Bit 0 of each byte of p is that parity after the three folds (each
 * reads only bits of its own byte: bit 7 is 0).
 */
AVX512 static inline __mmask64 ksigns8(uint64_t c)
{
	uint64_t s = _pdep_u64(c, 0x7f7f7f7f7f7f7f7full), p = s ^ (s >> 4);

	p ^= p >> 2;
	p ^= p >> 1;
	return _cvtu64_mask64(s | (p & 0x0101010101010101ull) << 7);
}

/* The low 28 bits of two words, one after the other */
static inline uint64_t low28x2(uint32_t a, uint32_t b)
{
	return (a & 0x0fffffff) | (uint64_t)(b & 0x0fffffff) << 28;
}


/*
 * IQ2 and IQ3 grid entries as codes: the position of each value in its
 * type's list of 4 (2 bits, IQ2) or 8 (3 bits, IQ3), element 0 lowest;
 * 16 bits an entry, so 32 lookups are vpermi2w's over the table 64 entries
 * at a time, chosen by the index's higher bits (code_lookup), and a step's
 * codes become bytes by vpmultishiftqb and vpermb (VBMI) on the values.
 */
static const uint8_t iq2_values[4] = { 8, 25, 43, 62 };
static const uint8_t iq3_xxs_values[8] = { 4, 12, 20, 28, 36, 44, 52, 62 };
static const uint8_t iq3_s_values[8] = { 1, 3, 5, 7, 9, 11, 13, 15 };
static uint16_t codes_iq2xxs[256] __attribute__((aligned(64)));
static uint16_t codes_iq2xs[512] __attribute__((aligned(64)));
static uint16_t codes_iq2s[1024] __attribute__((aligned(64)));
static uint16_t codes_iq3xxs[256] __attribute__((aligned(64)));
static uint16_t codes_iq3s[512] __attribute__((aligned(64)));

/* CODES[i] for the N entries of BYTES values each at GRID; 0 if a byte
 * is not among the NV VALUES */
static int make_codes(uint16_t *codes, const void *grid, int n, int bytes,
		      const uint8_t *values, int nv)
{
	int bits = nv == 4 ? 2 : 3, i, j, v;

	for (i = 0; i < n; i++) {
		const uint8_t *g = (const uint8_t *)grid + (size_t)i * bytes;

		codes[i] = 0;
		for (j = 0; j < bytes; j++) {
			for (v = 0; v < nv && values[v] != g[j]; v++)
				;
			if (v == nv)
				return 0;
			codes[i] |= (uint16_t)(v << (bits * j));
		}
	}
	return 1;
}

/* The codes of the 32 entries IDX (16-bit lanes) of a table of 64 PAIRS */
AVX512 static inline __m512i code_lookup(__m512i idx, const uint16_t *table,
					 int pairs)
{
	__m512i r[16];
	int p, bit, n;

	_Pragma("GCC unroll 16")
	for (p = 0; p < pairs; p++)
		r[p] = _mm512_permutex2var_epi16(
			_mm512_load_si512(table + 64 * p), idx,
			_mm512_load_si512(table + 64 * p + 32));
	_Pragma("GCC unroll 4")
	for (bit = 64, n = pairs; n > 1; bit *= 2, n /= 2) {
		__mmask32 k = _mm512_test_epi16_mask(idx,
						     _mm512_set1_epi16((short)bit));

		_Pragma("GCC unroll 8")
		for (p = 0; p < n / 2; p++)
			r[p] = _mm512_mask_blend_epi16(k, r[2 * p], r[2 * p + 1]);
	}
	return r[0];
}

/* The values of each code repeated over 64 bytes (vpermb's table) */
static uint8_t bytes_iq2[64] __attribute__((aligned(64)));
static uint8_t bytes_iq3xxs[64] __attribute__((aligned(64)));
static uint8_t bytes_iq3s[64] __attribute__((aligned(64)));

/* IQ2: the 64 bytes of the 8 codes in 16-bit lanes 8 I .. 8 I + 7 of C */
/* 128-bit lane I of C (an immediate each: tests/host/runner-layers.py
 * compiles this file at -O0, where I is not folded) */
AVX512 static inline __m128i lane128(__m512i c, int i)
{
	switch (i) {
	case 0: return _mm512_extracti32x4_epi32(c, 0);
	case 1: return _mm512_extracti32x4_epi32(c, 1);
	case 2: return _mm512_extracti32x4_epi32(c, 2);
	default: return _mm512_extracti32x4_epi32(c, 3);
	}
}

AVX512 static inline __m512i iq2_bytes(__m512i c, int i, const uint8_t *values)
{
	__m512i q = _mm512_cvtepu16_epi64(lane128(c, i));

	return _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(
		_mm512_set1_epi64(0x0e0c0a0806040200ll), q), _mm512_load_si512(values));
}

/* IQ3: the 64 bytes of the 16 codes in lanes 16 (I % 2) .. of C */
AVX512 static inline __m512i iq3_bytes(__m512i c, int i, const uint8_t *values)
{
	__m512i q = _mm512_cvtepu16_epi32(i % 2 ? _mm512_extracti64x4_epi64(c, 1) :
						  _mm512_extracti64x4_epi64(c, 0));

	return _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(
		_mm512_set1_epi64(0x2926232009060300ll), q), _mm512_load_si512(values));
}

/* ---- per type: a super-block's factors (and codes), then the steps --- */

/* What a super-block's steps share */
struct iq_blk {
	__m256i f;	/* factors 2s + 1 of its 16 runs of 16 (16-bit lanes) */
	__m512i c[2];	/* IQ2: the 32 groups' codes; IQ3: 64 in two */
	uint32_t up;	/* IQ1_M: the groups shifted by +1/8 (else -1/8) */
};

AVX512 static inline void iq2_xxs_prep(const void *blk, struct iq_blk *c)
{
	const struct tp_block_iq2_xxs *x = blk;
	__m512i w = _mm512_loadu_si512(x->qs);	/* 8 x (indices, signs) */

	c->f = odd(per16(_mm512_cvtepi64_epi16(_mm512_srli_epi64(w, 60))));
	c->c[0] = code_lookup(_mm512_cvtepu8_epi16(_mm512_cvtepi64_epi32(w)),
			      codes_iq2xxs, 4);
}

STEP struct iq_w64 iq2_xxs_step(const void *blk,
						const struct iq_blk *c, int i)
{
	const struct tp_block_iq2_xxs *x = blk;
	uint32_t s[4];
	struct iq_w64 g;

	memcpy(s, x->qs + 8 * i, 16);	/* indices, signs, indices, signs */
	g.mag = iq2_bytes(c->c[0], i, bytes_iq2);
	g.neg = ksigns8(low28x2(s[1], s[3]));
	g.scl = step_factors(c->f, i);
	return g;
}

AVX512 static inline void iq2_xs_prep(const void *blk, struct iq_blk *c)
{
	const struct tp_block_iq2_xs *x = blk;

	c->f = odd(nibbles16(x->scales));
	c->c[0] = code_lookup(_mm512_and_si512(_mm512_loadu_si512(x->qs),
					       _mm512_set1_epi16(511)),
			      codes_iq2xs, 8);
}

STEP struct iq_w64 iq2_xs_step(const void *blk,
					       const struct iq_blk *c, int i)
{
	const struct tp_block_iq2_xs *x = blk;
	uint64_t a, b;
	struct iq_w64 g;

	memcpy(&a, x->qs + 8 * i, 8);
	memcpy(&b, x->qs + 8 * i + 4, 8);
	g.mag = iq2_bytes(c->c[0], i, bytes_iq2);
	g.neg = ksigns8(_pext_u64(a, 0xfe00fe00fe00fe00ull) |
			_pext_u64(b, 0xfe00fe00fe00fe00ull) << 28);
	g.scl = step_factors(c->f, i);
	return g;
}

AVX512 static inline void iq2_s_prep(const void *blk, struct iq_blk *c)
{
	const struct tp_block_iq2_s *x = blk;
	/* group g: bits 2 (g % 4) of qh[g / 4] are its index's 9th and 10th */
	static const uint16_t byte_of[32] = {
		0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
		4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,
	};
	static const uint16_t shift[32] = {
		0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6,
		0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6, 0, 2, 4, 6,
	};
	__m512i h = _mm512_permutexvar_epi16(_mm512_loadu_si512(byte_of),
		_mm512_castsi128_si512(_mm_cvtepu8_epi16(
			_mm_loadl_epi64((const __m128i *)x->qh))));

	h = _mm512_and_si512(_mm512_srlv_epi16(h, _mm512_loadu_si512(shift)),
			     _mm512_set1_epi16(3));
	c->f = odd(nibbles16(x->scales));
	c->c[0] = code_lookup(_mm512_or_si512(_mm512_cvtepu8_epi16(
			_mm256_loadu_si256((const __m256i *)x->qs)),
			_mm512_slli_epi16(h, 8)), codes_iq2s, 16);
}

STEP struct iq_w64 iq2_s_step(const void *blk,
					      const struct iq_blk *c, int i)
{
	const struct tp_block_iq2_s *x = blk;
	uint64_t signs;
	struct iq_w64 g;

	memcpy(&signs, x->qs + 32 + 8 * i, 8);
	g.mag = iq2_bytes(c->c[0], i, bytes_iq2);
	g.neg = _cvtu64_mask64(signs);
	g.scl = step_factors(c->f, i);
	return g;
}

AVX512 static inline void iq3_xxs_prep(const void *blk, struct iq_blk *c)
{
	const struct tp_block_iq3_xxs *x = blk;
	__m256i w = _mm256_loadu_si256((const __m256i *)(x->qs + 64));
	int h;

	c->f = odd(per16(_mm256_cvtepi32_epi16(_mm256_srli_epi32(w, 28))));
	for (h = 0; h < 2; h++)
		c->c[h] = code_lookup(_mm512_cvtepu8_epi16(_mm256_loadu_si256(
			(const __m256i *)(x->qs + 32 * h))), codes_iq3xxs, 4);
}

STEP struct iq_w64 iq3_xxs_step(const void *blk,
						const struct iq_blk *c, int i)
{
	const struct tp_block_iq3_xxs *x = blk;
	uint32_t s[2];
	struct iq_w64 g;

	memcpy(s, x->qs + 64 + 8 * i, 8);
	g.mag = iq3_bytes(c->c[i / 2], i, bytes_iq3xxs);
	g.neg = ksigns8(low28x2(s[0], s[1]));
	g.scl = step_factors(c->f, i);
	return g;
}

AVX512 static inline void iq3_s_prep(const void *blk, struct iq_blk *c)
{
	const struct tp_block_iq3_s *x = blk;
	uint32_t sc, qh[2];
	__m128i v, m = _mm_set1_epi8(15);
	int h;

	memcpy(&sc, x->scales, 4);
	memcpy(qh, x->qh, 8);	/* bit k: index k's ninth bit */
	v = _mm_cvtsi32_si128((int)sc);
	v = _mm_unpacklo_epi8(_mm_and_si128(v, m),
			      _mm_and_si128(_mm_srli_epi16(v, 4), m));
	c->f = odd(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v)));
	for (h = 0; h < 2; h++) {
		__m512i idx = _mm512_cvtepu8_epi16(_mm256_loadu_si256(
			(const __m256i *)(x->qs + 32 * h)));

		idx = _mm512_mask_add_epi16(idx, _cvtu32_mask32(qh[h]), idx,
					    _mm512_set1_epi16(256));
		c->c[h] = code_lookup(idx, codes_iq3s, 8);
	}
}

STEP struct iq_w64 iq3_s_step(const void *blk,
					      const struct iq_blk *c, int i)
{
	const struct tp_block_iq3_s *x = blk;
	uint64_t signs;
	struct iq_w64 g;

	memcpy(&signs, x->signs + 8 * i, 8);
	g.mag = iq3_bytes(c->c[i / 2], i, bytes_iq3s);
	g.neg = _cvtu64_mask64(signs);
	g.scl = step_factors(c->f, i);
	return g;
}

/*
 * IQ1: the grid as bytes 8 (g + 1), filled with the tables; a step's
 * bytes are those + shift + 1 (the shift +1 in the groups of c->up, else
 * -1). Its 2048 entries are too many for code_lookup (measured slower,
 * as was vpgatherqq): 8 loads a step, at indices worked out once per
 * super-block.
 */
static uint64_t grid_iq1x8[2048] __attribute__((aligned(64)));

/* The 8 entries of grid_iq1x8 at the indices K0 .. K7 */
AVX512 static inline __m512i iq1_grid8(const unsigned *k)
{
	return _mm512_setr_epi64((long long)grid_iq1x8[k[0]],
		(long long)grid_iq1x8[k[1]], (long long)grid_iq1x8[k[2]],
		(long long)grid_iq1x8[k[3]], (long long)grid_iq1x8[k[4]],
		(long long)grid_iq1x8[k[5]], (long long)grid_iq1x8[k[6]],
		(long long)grid_iq1x8[k[7]]);
}

/* with the shift of group j +1/8 where bit j of UP is set, else -1/8 */
AVX512 static inline __m512i iq1_mag(const unsigned *k, unsigned up)
{
	__m512i m = iq1_grid8(k);

	return _mm512_mask_add_epi64(m, (__mmask8)up, m, _mm512_set1_epi8(2));
}

AVX512 static inline void iq1_s_prep(const void *blk, struct iq_blk *c)
{
	const struct tp_block_iq1_s *x = blk;
	__m128i h = _mm_loadu_si128((const __m128i *)x->qh);

	c->f = odd(per16(_mm_and_si128(_mm_srli_epi16(h, 12),
				       _mm_set1_epi16(7))));
}

/*
 * The indices are worked out in general registers: stored from a vector
 * and loaded back they were slower (the loads wait for the store), and
 * extracted (vpextrw) as slow.
 */
STEP struct iq_w64 iq1_s_step(const void *blk,
					      const struct iq_blk *c, int i)
{
	const struct tp_block_iq1_s *x = blk;
	const uint8_t *q = x->qs + 8 * i;
	unsigned h0 = x->qh[2 * i], h1 = x->qh[2 * i + 1], k[8];
	struct iq_w64 g;

	k[0] = q[0] | (h0 << 8 & 0x700);
	k[1] = q[1] | (h0 << 5 & 0x700);
	k[2] = q[2] | (h0 << 2 & 0x700);
	k[3] = q[3] | (h0 >> 1 & 0x700);
	k[4] = q[4] | (h1 << 8 & 0x700);
	k[5] = q[5] | (h1 << 5 & 0x700);
	k[6] = q[6] | (h1 << 2 & 0x700);
	k[7] = q[7] | (h1 >> 1 & 0x700);
	g.mag = iq1_mag(k, (h0 & 0x8000 ? 0 : 0x0f) | (h1 & 0x8000 ? 0 : 0xf0));
	g.neg = 0;
	g.scl = step_factors(c->f, i);
	return g;
}

AVX512 static inline void iq1_m_prep(const void *blk, struct iq_blk *c)
{
	const struct tp_block_iq1_m *x = blk;
	/* lane g: 16-bit word g / 4 of the scales, shifted by 3 (g % 4) */
	const __m256i word = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1,
		2, 3, 2, 3, 2, 3, 2, 3, 4, 5, 4, 5, 4, 5, 4, 5,
		6, 7, 6, 7, 6, 7, 6, 7);
	const __m256i shift = _mm256_setr_epi16(0, 3, 6, 9, 0, 3, 6, 9,
						0, 3, 6, 9, 0, 3, 6, 9);
	__m256i sc = _mm256_broadcastsi128_si256(_mm_loadl_epi64(
		(const __m128i *)x->scales));
	__m128i qh = _mm_loadu_si128((const __m128i *)x->qh);

	c->f = odd(_mm256_and_si256(_mm256_srlv_epi16(
		_mm256_shuffle_epi8(sc, word), shift), _mm256_set1_epi16(7)));
	/* bit 3 of each nibble (group) set: shifted by -1/8 */
	c->up = ~_pext_u64(_mm_cvtsi128_si64(_mm_srli_epi64(qh, 3)) & 0x1111111111111111ull,
			   0x1111111111111111ull) & 0xffff;
	c->up |= (~_pext_u64(_mm_extract_epi64(_mm_srli_epi64(qh, 3), 1),
			     0x1111111111111111ull) & 0xffff) << 16;
}

STEP struct iq_w64 iq1_m_step(const void *blk,
					      const struct iq_blk *c, int i)
{
	const struct tp_block_iq1_m *x = blk;
	const uint8_t *q = x->qs + 8 * i, *h = x->qh + 4 * i;
	unsigned k[8];
	struct iq_w64 g;
	int j;

	UNROLL for (j = 0; j < 4; j++) {
		k[2 * j] = q[2 * j] | ((unsigned)h[j] << 8 & 0x700);
		k[2 * j + 1] = q[2 * j + 1] | ((unsigned)h[j] << 4 & 0x700);
	}
	g.mag = iq1_mag(k, (c->up >> (8 * i)) & 0xff);
	g.neg = 0;
	g.scl = step_factors(c->f, i);
	return g;
}

/* ---- the kernels ------------------------------------------------------ */

/* Where a row's sum starts: 0, or for IQ1 -9 x sum (2s + 1) x bsums */
AVX512 static inline __m512i start_zero(__m256i f, const struct tp_block_q8_k *a)
{
	(void)f;
	(void)a;
	return _mm512_setzero_si512();
}

AVX512 static inline __m512i start_iq1(__m256i f, const struct tp_block_q8_k *a)
{
	__m256i bs = _mm256_loadu_si256((const __m256i *)a->bsums);

	return _mm512_zextsi256_si512(_mm256_madd_epi16(
		_mm256_mullo_epi16(f, _mm256_set1_epi16(-9)), bs));
}

/* A step's products with the activations A's step I, added to ACC */
AVX512 static inline __m512i step_acc(__m512i acc, const struct iq_w64 *g,
				      const struct tp_block_q8_k *a, int i)
{
	__m512i q = _mm512_loadu_si512(a->qs + 64 * i);

	q = _mm512_mask_sub_epi8(q, g->neg, _mm512_setzero_si512(), q);
	return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(g->mag, q), g->scl);
}

/* 16 lanes to 8 */
AVX512 static inline __m256i fold(__m512i v)
{
	return _mm256_add_epi32(_mm512_castsi512_si256(v),
				_mm512_extracti64x4_epi64(v, 1));
}

/*
 * The three kernels of a type (as avx2_iq.c's: dot, dot4 for prefill,
 * rows4 for decoding). TERM: a super-block's integer sum times TERM is
 * what generic weighs (IQ1: 1/8; else 1, exact); FACTOR on the row's sum.
 */
#define IQ512_KERNELS(name, blk_t, D, START, TERM, FACTOR)		\
STEP __m512i sum_##name(const blk_t *w,				\
					const struct tp_block_q8_k *a)	\
{									\
	struct iq_blk c;						\
	__m512i acc;							\
	int i;								\
									\
	name##_prep(w, &c);						\
	acc = START(c.f, a);						\
	UNROLL_STEPS for (i = 0; i < 4; i++) {				\
		struct iq_w64 g = name##_step(w, &c, i);		\
									\
		acc = step_acc(acc, &g, a, i);				\
	}								\
	return acc;							\
}									\
AVX512 static float dot_##name(const void *wv, const void *xv, int n) \
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_k *a = xv;				\
	float s = 0;							\
	int b;								\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		prefetch_ahead(&w[b], 2);				\
		s += D(&w[b]) * a[b].d * ((float)hsum_i32(fold(		\
			sum_##name(&w[b], &a[b]))) * TERM);		\
	}								\
	return FACTOR * s;						\
}									\
AVX512 static void dot4_##name(const void *wv, const void *xv,	\
				   size_t stride, int n, float *out)	\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_k *a[4];				\
	__m128 s = _mm_setzero_ps();					\
	int b, i, t;							\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		struct iq_blk c;					\
		__m512i acc[4];						\
		__m128 dx;						\
									\
		k_rows(xv, stride, b, 4, a);				\
		prefetch_ahead(&w[b], 2);				\
		name##_prep(&w[b], &c);					\
		UNROLL for (t = 0; t < 4; t++)				\
			acc[t] = START(c.f, a[t]);			\
		UNROLL_STEPS for (i = 0; i < 4; i++) {			\
			struct iq_w64 g = name##_step(&w[b], &c, i);	\
									\
			UNROLL for (t = 0; t < 4; t++)			\
				acc[t] = step_acc(acc[t], &g, a[t], i);	\
		}							\
		dx = _mm_setr_ps(a[0]->d, a[1]->d, a[2]->d, a[3]->d);	\
		s = iq_terms4(s, _mm_set1_ps(D(&w[b])), dx,		\
			      hsum4_i32(fold(acc[0]), fold(acc[1]),	\
					fold(acc[2]), fold(acc[3])), TERM); \
	}								\
	_mm_storeu_ps(out, _mm_mul_ps(_mm_set1_ps(FACTOR), s));		\
}									\
AVX512 static void rows4_##name(const void *wv, size_t wstride,	\
				    size_t bstride, const void *xv, int n, \
				    float *out)				\
{									\
	const struct tp_block_q8_k *a = xv;				\
	__m128 s = _mm_setzero_ps();					\
	int b, r;							\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		const blk_t *w[4];					\
		__m256i acc[4];						\
		__m128 d;						\
									\
		UNROLL for (r = 0; r < 4; r++) {			\
			w[r] = (const void *)((const char *)wv +	\
				r * wstride + b * bstride);		\
			prefetch_ahead(w[r], 1);			\
			acc[r] = fold(sum_##name(w[r], &a[b]));		\
		}							\
		d = _mm_setr_ps(D(w[0]), D(w[1]), D(w[2]), D(w[3]));	\
		s = iq_terms4(s, d, _mm_set1_ps(a[b].d),		\
			      hsum4_i32(acc[0], acc[1], acc[2], acc[3]), TERM); \
	}								\
	_mm_storeu_ps(out, _mm_mul_ps(_mm_set1_ps(FACTOR), s));		\
}

IQ512_KERNELS(iq2_xxs, struct tp_block_iq2_xxs, d_f16, start_zero, 1.0f, 0.125f)
IQ512_KERNELS(iq2_xs, struct tp_block_iq2_xs, d_f16, start_zero, 1.0f, 0.125f)
IQ512_KERNELS(iq2_s, struct tp_block_iq2_s, d_f16, start_zero, 1.0f, 0.125f)
IQ512_KERNELS(iq3_xxs, struct tp_block_iq3_xxs, d_f16, start_zero, 1.0f, 0.25f)
IQ512_KERNELS(iq3_s, struct tp_block_iq3_s, d_f16, start_zero, 1.0f, 1.0f)
IQ512_KERNELS(iq1_s, struct tp_block_iq1_s, d_f16, start_iq1, 0.125f, 1.0f)
IQ512_KERNELS(iq1_m, struct tp_block_iq1_m, d_iq1_m, start_iq1, 0.125f, 1.0f)

/* The code tables; 0 if a grid is not what they assume */
static int make_tables(void)
{
	int i, j;

	for (i = 0; i < 2048; i++) {
		const int8_t *g = (const int8_t *)&tp_iq1s_grid[i];

		grid_iq1x8[i] = 0;
		for (j = 0; j < 8; j++) {
			if (g[j] < -1 || g[j] > 1)
				return 0;
			grid_iq1x8[i] |= (uint64_t)(8 * (g[j] + 1)) << (8 * j);
		}
	}

	for (i = 0; i < 64; i++) {
		bytes_iq2[i] = iq2_values[i % 4];
		bytes_iq3xxs[i] = iq3_xxs_values[i % 8];
		bytes_iq3s[i] = iq3_s_values[i % 8];
	}
	return make_codes(codes_iq2xxs, tp_iq2xxs_grid, 256, 8, iq2_values, 4) &&
	       make_codes(codes_iq2xs, tp_iq2xs_grid, 512, 8, iq2_values, 4) &&
	       make_codes(codes_iq2s, tp_iq2s_grid, 1024, 8, iq2_values, 4) &&
	       make_codes(codes_iq3xxs, tp_iq3xxs_grid, 256, 4, iq3_xxs_values, 8) &&
	       make_codes(codes_iq3s, tp_iq3s_grid, 512, 4, iq3_s_values, 8);
}

void tp_kernels_fill_avx512_iq(struct tp_kernels *k)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512vbmi") || !make_tables())
		return;		/* avx2_iq.c's stay */
	IQ_FILL(k);
}
#endif /* __x86_64__ */
