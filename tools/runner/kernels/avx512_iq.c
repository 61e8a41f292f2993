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
 * (IQ3: 16) indices are computed in one vector and the grid rows fetched
 * by one gather, the signs become a 64-bit mask that negates the
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

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,bmi2,avx2,fma,f16c")))
#define UNROLL_STEPS _Pragma("GCC unroll 4")

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


/* Grid rows of TABLE at the 8 (16) indices IDX */
#ifndef TP_GATHER
AVX512 static inline __m512i grid64(__m512i idx, const uint64_t *table)
{
	uint64_t i[8];

	_mm512_storeu_si512(i, idx);
	return _mm512_setr_epi64((long long)table[i[0]], (long long)table[i[1]],
				 (long long)table[i[2]], (long long)table[i[3]],
				 (long long)table[i[4]], (long long)table[i[5]],
				 (long long)table[i[6]], (long long)table[i[7]]);
}

AVX512 static inline __m512i grid32(__m512i idx, const uint32_t *table)
{
	uint32_t i[16];

	_mm512_storeu_si512(i, idx);
	return _mm512_setr_epi32((int)table[i[0]], (int)table[i[1]],
				 (int)table[i[2]], (int)table[i[3]],
				 (int)table[i[4]], (int)table[i[5]],
				 (int)table[i[6]], (int)table[i[7]],
				 (int)table[i[8]], (int)table[i[9]],
				 (int)table[i[10]], (int)table[i[11]],
				 (int)table[i[12]], (int)table[i[13]],
				 (int)table[i[14]], (int)table[i[15]]);
}
#else
#define grid64(idx, t) _mm512_i64gather_epi64(idx, t, 8)
#define grid32(idx, t) _mm512_i32gather_epi32(idx, t, 4)
#endif

/* ---- per type: the super-block's 16 factors, then the steps --------- */

AVX512 static inline __m256i iq2_xxs_factors(const void *blk)
{
	const struct tp_block_iq2_xxs *x = blk;
	__m512i w = _mm512_loadu_si512(x->qs);	/* 8 x (indices, signs) */

	return odd(per16(_mm512_cvtepi64_epi16(_mm512_srli_epi64(w, 60))));
}

AVX512 static inline struct iq_w64 iq2_xxs_step(const void *blk, __m256i f,
						int i)
{
	const struct tp_block_iq2_xxs *x = blk;
	const uint8_t *p = (const uint8_t *)x->qs + 16 * i;
	__m128i v = _mm_loadu_si128((const __m128i *)p);
	__m512i idx = _mm512_cvtepu8_epi64(_mm_shuffle_epi32(v, 0x08));
	uint32_t s0, s1;
	struct iq_w64 g;

	memcpy(&s0, p + 4, 4);
	memcpy(&s1, p + 12, 4);
	g.mag = grid64(idx, tp_iq2xxs_grid);
	g.neg = ksigns8(low28x2(s0, s1));
	g.scl = step_factors(f, i);
	return g;
}

AVX512 static inline __m256i iq2_xs_factors(const void *blk)
{
	return odd(nibbles16(((const struct tp_block_iq2_xs *)blk)->scales));
}

AVX512 static inline struct iq_w64 iq2_xs_step(const void *blk, __m256i f,
					       int i)
{
	const struct tp_block_iq2_xs *x = blk;
	const uint16_t *q = x->qs + 8 * i;
	__m512i idx = _mm512_and_si512(_mm512_cvtepu16_epi64(
		_mm_loadu_si128((const __m128i *)q)), _mm512_set1_epi64(511));
	uint64_t a, b;
	struct iq_w64 g;

	memcpy(&a, q, 8);
	memcpy(&b, q + 4, 8);
	g.mag = grid64(idx, tp_iq2xs_grid);
	g.neg = ksigns8(_pext_u64(a, 0xfe00fe00fe00fe00ull) |
			_pext_u64(b, 0xfe00fe00fe00fe00ull) << 28);
	g.scl = step_factors(f, i);
	return g;
}

AVX512 static inline __m256i iq2_s_factors(const void *blk)
{
	return odd(nibbles16(((const struct tp_block_iq2_s *)blk)->scales));
}

AVX512 static inline struct iq_w64 iq2_s_step(const void *blk, __m256i f,
					      int i)
{
	const struct tp_block_iq2_s *x = blk;
	const __m512i shift = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
	uint16_t h;
	uint64_t signs;
	__m512i hi, idx;
	struct iq_w64 g;

	memcpy(&h, x->qh + 2 * i, 2);	/* 2 bits per group */
	memcpy(&signs, x->qs + 32 + 8 * i, 8);
	hi = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64(h), shift),
			      _mm512_set1_epi64(3));
	idx = _mm512_or_si512(_mm512_cvtepu8_epi64(_mm_loadl_epi64(
			(const __m128i *)(x->qs + 8 * i))),
			      _mm512_slli_epi64(hi, 8));
	g.mag = grid64(idx, tp_iq2s_grid);
	g.neg = _cvtu64_mask64(signs);
	g.scl = step_factors(f, i);
	return g;
}

AVX512 static inline __m256i iq3_xxs_factors(const void *blk)
{
	const struct tp_block_iq3_xxs *x = blk;
	__m256i w = _mm256_loadu_si256((const __m256i *)(x->qs + 64));

	return odd(per16(_mm256_cvtepi32_epi16(_mm256_srli_epi32(w, 28))));
}

AVX512 static inline struct iq_w64 iq3_xxs_step(const void *blk, __m256i f,
						int i)
{
	const struct tp_block_iq3_xxs *x = blk;
	__m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128(
		(const __m128i *)(x->qs + 16 * i)));
	uint32_t s[2];
	struct iq_w64 g;

	memcpy(s, x->qs + 64 + 8 * i, 8);
	g.mag = grid32(idx, tp_iq3xxs_grid);
	g.neg = ksigns8(low28x2(s[0], s[1]));
	g.scl = step_factors(f, i);
	return g;
}

AVX512 static inline __m256i iq3_s_factors(const void *blk)
{
	const struct tp_block_iq3_s *x = blk;
	uint32_t sc;
	__m128i v, m = _mm_set1_epi8(15);

	memcpy(&sc, x->scales, 4);
	v = _mm_cvtsi32_si128((int)sc);
	v = _mm_unpacklo_epi8(_mm_and_si128(v, m),
			      _mm_and_si128(_mm_srli_epi16(v, 4), m));
	return odd(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v)));
}

AVX512 static inline struct iq_w64 iq3_s_step(const void *blk, __m256i f,
					      int i)
{
	const struct tp_block_iq3_s *x = blk;
	__m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128(
		(const __m128i *)(x->qs + 16 * i)));
	uint16_t h;
	uint64_t signs;
	struct iq_w64 g;

	memcpy(&h, x->qh + 2 * i, 2);	/* bit k: index k's ninth bit */
	memcpy(&signs, x->signs + 8 * i, 8);
	idx = _mm512_mask_or_epi32(idx, _cvtu32_mask16(h), idx,
				   _mm512_set1_epi32(256));
	g.mag = grid32(idx, tp_iq3s_grid);
	g.neg = _cvtu64_mask64(signs);
	g.scl = step_factors(f, i);
	return g;
}

/* IQ1: grid bytes G (-1, 0, 1) as 8 (G + 1) + shift + 1, the shift +1
 * in the groups of 8 that UP has (else -1) */
AVX512 static inline __m512i iq1_mag(__m512i g, __mmask8 up)
{
	__m512i m = _mm512_slli_epi16(_mm512_add_epi8(g, _mm512_set1_epi8(1)), 3);

	return _mm512_mask_add_epi64(m, up, m, _mm512_set1_epi8(2));
}

AVX512 static inline __m256i iq1_s_factors(const void *blk)
{
	const struct tp_block_iq1_s *x = blk;
	__m128i h = _mm_loadu_si128((const __m128i *)x->qh);

	return odd(per16(_mm_and_si128(_mm_srli_epi16(h, 12),
				       _mm_set1_epi16(7))));
}

AVX512 static inline struct iq_w64 iq1_s_step(const void *blk, __m256i f,
					      int i)
{
	const struct tp_block_iq1_s *x = blk;
	const __m512i shift = _mm512_setr_epi64(0, 3, 6, 9, 16, 19, 22, 25);
	uint32_t h;
	__m512i hi, idx;
	struct iq_w64 g;

	memcpy(&h, x->qh + 2 * i, 4);	/* 3 bits per group, shift sign */
	hi = _mm512_and_si512(_mm512_srlv_epi64(_mm512_set1_epi64(h), shift),
			      _mm512_set1_epi64(7));
	idx = _mm512_or_si512(_mm512_cvtepu8_epi64(_mm_loadl_epi64(
			(const __m128i *)(x->qs + 8 * i))),
			      _mm512_slli_epi64(hi, 8));
	g.mag = iq1_mag(grid64(idx, tp_iq1s_grid),
			(__mmask8)((h & 0x8000 ? 0 : 0x0f) |
				      (h & 0x80000000u ? 0 : 0xf0)));
	g.neg = 0;
	g.scl = step_factors(f, i);
	return g;
}

AVX512 static inline __m256i iq1_m_factors(const void *blk)
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

	return odd(_mm256_and_si256(_mm256_srlv_epi16(
		_mm256_shuffle_epi8(sc, word), shift), _mm256_set1_epi16(7)));
}

AVX512 static inline struct iq_w64 iq1_m_step(const void *blk, __m256i f,
					      int i)
{
	const struct tp_block_iq1_m *x = blk;
	const __m512i shift = _mm512_setr_epi64(0, 4, 8, 12, 16, 20, 24, 28);
	uint32_t h;
	__m512i nib, idx;
	struct iq_w64 g;

	memcpy(&h, x->qh + 4 * i, 4);	/* a nibble per group */
	nib = _mm512_srlv_epi64(_mm512_set1_epi64(h), shift);
	idx = _mm512_or_si512(_mm512_cvtepu8_epi64(_mm_loadl_epi64(
			(const __m128i *)(x->qs + 8 * i))),
			      _mm512_slli_epi64(_mm512_and_si512(nib,
					_mm512_set1_epi64(7)), 8));
	g.mag = iq1_mag(grid64(idx, tp_iq1s_grid),
			_mm512_testn_epi64_mask(nib, _mm512_set1_epi64(8)));
	g.neg = 0;
	g.scl = step_factors(f, i);
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
AVX512 static inline __m512i sum_##name(const blk_t *w,			\
					const struct tp_block_q8_k *a)	\
{									\
	__m256i f = name##_factors(w);					\
	__m512i acc = START(f, a);					\
	int i;								\
									\
	UNROLL_STEPS for (i = 0; i < 4; i++) {				\
		struct iq_w64 g = name##_step(w, f, i);			\
									\
		acc = step_acc(acc, &g, a, i);				\
	}								\
	return acc;							\
}									\
AVX512 static float dot512_##name(const void *wv, const void *xv, int n) \
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
AVX512 static void dot4_512_##name(const void *wv, const void *xv,	\
				   size_t stride, int n, float *out)	\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_k *a[4];				\
	__m128 s = _mm_setzero_ps();					\
	int b, i, t;							\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		__m256i f = name##_factors(&w[b]);			\
		__m512i acc[4];						\
		__m128 dx;						\
									\
		k_rows(xv, stride, b, 4, a);				\
		prefetch_ahead(&w[b], 2);				\
		UNROLL for (t = 0; t < 4; t++)				\
			acc[t] = START(f, a[t]);			\
		UNROLL_STEPS for (i = 0; i < 4; i++) {			\
			struct iq_w64 g = name##_step(&w[b], f, i);	\
									\
			UNROLL for (t = 0; t < 4; t++)			\
				acc[t] = step_acc(acc[t], &g, a[t], i);	\
		}							\
		dx = _mm_setr_ps(a[0]->d, a[1]->d, a[2]->d, a[3]->d);	\
		s = _mm_add_ps(s, _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(D(&w[b])), \
							dx),		\
			_mm_mul_ps(_mm_cvtepi32_ps(hsum4_i32(fold(acc[0]), \
				fold(acc[1]), fold(acc[2]), fold(acc[3]))), \
				_mm_set1_ps(TERM))));			\
	}								\
	_mm_storeu_ps(out, _mm_mul_ps(_mm_set1_ps(FACTOR), s));		\
}									\
AVX512 static void rows4_512_##name(const void *wv, size_t wstride,	\
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
		s = _mm_add_ps(s, _mm_mul_ps(_mm_mul_ps(d,		\
						_mm_set1_ps(a[b].d)),	\
			_mm_mul_ps(_mm_cvtepi32_ps(hsum4_i32(acc[0], acc[1], \
				acc[2], acc[3])), _mm_set1_ps(TERM))));	\
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

void tp_kernels_fill_avx512_iq(struct tp_kernels *k)
{
#define SET(T, name)							\
	do {								\
		k->dot[T] = dot512_##name;				\
		k->dot4[T] = dot4_512_##name;				\
		k->rows4[T] = rows4_512_##name;				\
	} while (0)
	SET(TP_IQ2_XXS, iq2_xxs);
	SET(TP_IQ2_XS, iq2_xs);
	SET(TP_IQ2_S, iq2_s);
	SET(TP_IQ3_XXS, iq3_xxs);
	SET(TP_IQ3_S, iq3_s);
	SET(TP_IQ1_S, iq1_s);
	SET(TP_IQ1_M, iq1_m);
#undef SET
}
#endif /* __x86_64__ */
