/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the x86 kernels (avx2.c, avx512.c) share: reductions, the unpacking
 * of quantised blocks into bytes, and prefetching. Each helper is compiled
 * for AVX2 + FMA + F16C and inlined into kernels built for that target or
 * a wider one; include this only from files dispatch.c installs behind a
 * cpuid check.
 */
#ifndef TPRUN_KERNELS_X86_H
#define TPRUN_KERNELS_X86_H

#include <immintrin.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/quant.h"

#define AVX2 __attribute__((target("avx2,fma,f16c")))
/*
 * Loops over the 4 tokens, blocks or accumulators are unrolled, so that
 * their arrays of vectors live in registers (-O2 alone kept them on the
 * stack: perf had dot2_f16 storing and reloading its accumulators).
 */
#define UNROLL _Pragma("GCC unroll 4")

AVX2 static inline int hsum_i32(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v),
				  _mm256_extracti128_si256(v, 1));

	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
	return _mm_cvtsi128_si32(s);
}

AVX2 static inline float hsum_ps(__m256 v)
{
	__m128 t = _mm_add_ps(_mm256_castps256_ps128(v),
			      _mm256_extractf128_ps(v, 1));

	t = _mm_hadd_ps(t, t);
	return _mm_cvtss_f32(_mm_hadd_ps(t, t));
}

AVX2 static inline float h2f(uint16_t h)
{
	return _cvtsh_ss(h);	/* exact, as tp_f16_to_f32 */
}

/* 32 nibbles of 16 bytes: element j low, j + 16 high (Q4_0 .. Q5_1). */
AVX2 static inline __m256i nibbles32(const uint8_t *qs)
{
	__m128i t = _mm_loadu_si128((const __m128i *)qs);

	return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(t, 4), t),
				_mm256_set1_epi8(15));
}

/* Byte j is 0xff where bit j of the 32 bits at QH is set. */
AVX2 static inline __m256i bits32(const uint8_t *qh)
{
	uint32_t x;
	__m256i b;

	memcpy(&x, qh, 4);
	b = _mm256_shuffle_epi8(_mm256_set1_epi32((int)x),
				_mm256_set_epi64x(0x0303030303030303,
						  0x0202020202020202,
						  0x0101010101010101, 0));
	b = _mm256_or_si256(b, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
	return _mm256_cmpeq_epi8(b, _mm256_set1_epi64x(-1));
}

/*
 * How far ahead of the weights being multiplied the kernels ask for more:
 * decoding streams every weight once from memory, and the hardware
 * prefetcher alone left a core at about half its streaming bandwidth.
 */
#ifndef TP_PREFETCH
#define TP_PREFETCH 1024
#endif

AVX2 static inline void prefetch_ahead(const void *p, int lines)
{
	int i;

	if (TP_PREFETCH)
		for (i = 0; i < lines; i++)
			_mm_prefetch((const char *)p + TP_PREFETCH + 64 * i,
				     _MM_HINT_T0);
}

/* ---- 32-element blocks against Q8_0 / Q8_1 ---------------------------- */

/* The signed quants of block B of a Q8_0 / Q4_0 / Q5_0 row. */
AVX2 static inline __m256i q8_0_quants(const void *w, int b)
{
	return _mm256_loadu_si256((const __m256i *)
				  ((const struct tp_block_q8_0 *)w)[b].qs);
}

AVX2 static inline __m256i q4_0_quants(const void *w, int b)
{
	return _mm256_sub_epi8(nibbles32(((const struct tp_block_q4_0 *)w)[b].qs),
			       _mm256_set1_epi8(8));
}

AVX2 static inline __m256i q5_0_quants(const void *w, int b)
{
	const struct tp_block_q5_0 *blk = (const struct tp_block_q5_0 *)w + b;
	/* q - 16: the low nibble, minus 16 where the fifth bit is clear */
	__m256i hi = _mm256_andnot_si256(bits32(blk->qh),
					 _mm256_set1_epi8((char)0xf0));

	return _mm256_or_si256(nibbles32(blk->qs), hi);
}

/*
 * The eight 6-bit scales and mins of a Q4_K/Q5_K super-block as 16-bit
 * lanes: scales in 0..7, mins in 8..15 (ggml's 32-bit unpacking: the
 * low 6 bits of bytes 0..3 and 4..7 are scales 0..3 and mins 0..3, the
 * top 2 bits of those bytes and the nibbles of bytes 8..11 the rest).
 */
AVX2 static inline __m256i k_scales(const uint8_t *q)
{
	const uint32_t m6 = 0x3f3f3f3f, m4 = 0x0f0f0f0f, m2 = 0x03030303;
	uint32_t u[3], sc_lo, sc_hi, mn_lo, mn_hi;

	memcpy(u, q, 12);
	sc_lo = u[0] & m6;
	mn_lo = u[1] & m6;
	sc_hi = (u[2] & m4) | ((u[0] >> 6) & m2) << 4;
	mn_hi = ((u[2] >> 4) & m4) | ((u[1] >> 6) & m2) << 4;
	return _mm256_cvtepu8_epi16(_mm_setr_epi32((int)sc_lo, (int)sc_hi,
						   (int)mn_lo, (int)mn_hi));
}

/* Every 16-bit lane: lane I of each 128-bit half of V. */
AVX2 static inline __m256i bcast16(__m256i v, int i)
{
	return _mm256_shuffle_epi8(v, _mm256_set1_epi16((short)(0x0100 +
								0x0202 * i)));
}

/* The NT activation rows' super-block B (rows STRIDE bytes apart). */
static inline void k_rows(const void *act, size_t stride, int b, int nt,
			  const struct tp_block_q8_k **a)
{
	int t;

	UNROLL for (t = 0; t < nt; t++)
		a[t] = (const struct tp_block_q8_k *)((const char *)act +
						      t * stride) + b;
}

/*
 * The sum of ACC's 8 lanes (sumi) and of bsums[j] * m[j / 2] over the 16
 * sums of 16 activations (summ; the mins as eight 16-bit lanes), both
 * reduced by the same two horizontal adds.
 */
AVX2 static inline void k_sums(__m256i acc, const int16_t *bsums, __m128i m,
			       int *sumi, int *summ)
{
	__m256i bs = _mm256_loadu_si256((const __m256i *)bsums);
	__m128i pairs = _mm_hadd_epi16(_mm256_castsi256_si128(bs),
				       _mm256_extracti128_si256(bs, 1));
	__m128i h = _mm_hadd_epi32(_mm_add_epi32(_mm256_castsi256_si128(acc),
					_mm256_extracti128_si256(acc, 1)),
				   _mm_madd_epi16(pairs, m));

	h = _mm_hadd_epi32(h, h);
	*sumi = _mm_cvtsi128_si32(h);
	*summ = _mm_extract_epi32(h, 1);
}

/* The 8-lane sums of V0..V3 as 4 lanes (integer: any order is exact). */
AVX2 static inline __m128i hsum4_i32(__m256i v0, __m256i v1, __m256i v2,
				     __m256i v3)
{
	__m256i v = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1),
				      _mm256_hadd_epi32(v2, v3));

	return _mm_add_epi32(_mm256_castsi256_si128(v),
			     _mm256_extracti128_si256(v, 1));
}

/* The 4-lane sums of V0..V3 as 4 lanes. */
AVX2 static inline __m128i hsum4_i32x4(__m128i v0, __m128i v1, __m128i v2,
				       __m128i v3)
{
	return _mm_hadd_epi32(_mm_hadd_epi32(v0, v1), _mm_hadd_epi32(v2, v3));
}

/*
 * A K-quant super-block's terms for 4 activation rows at once, lane t for
 * row t: S[t] += d d_x sumi - dmin d_x summ, the float operations of
 * generic in its order (so each lane has generic's bits), with sumi the
 * sum of ACC[t]'s lanes and summ that of bsums times the mins M (as
 * k_sums). Where 4 rows are summed, this replaces 4 scalar reductions.
 */
AVX2 static inline void k_terms4(const __m256i *acc,
				 const struct tp_block_q8_k *const *a,
				 __m128i m, float d, float dmin, __m128 *s)
{
	__m128i mins[4];
	__m128 dx = _mm_setr_ps(a[0]->d, a[1]->d, a[2]->d, a[3]->d);
	__m128 sumi, summ;
	int t;

	UNROLL for (t = 0; t < 4; t++) {
		__m256i bs = _mm256_loadu_si256((const __m256i *)a[t]->bsums);

		mins[t] = _mm_madd_epi16(_mm_hadd_epi16(
			_mm256_castsi256_si128(bs),
			_mm256_extracti128_si256(bs, 1)), m);
	}
	sumi = _mm_cvtepi32_ps(hsum4_i32(acc[0], acc[1], acc[2], acc[3]));
	summ = _mm_cvtepi32_ps(hsum4_i32x4(mins[0], mins[1], mins[2], mins[3]));
	*s = _mm_add_ps(*s, _mm_sub_ps(
		_mm_mul_ps(_mm_mul_ps(_mm_set1_ps(d), dx), sumi),
		_mm_mul_ps(_mm_mul_ps(_mm_set1_ps(dmin), dx), summ)));
}

/*
 * The same for 4 weight rows against one activation row (decoding), lane
 * r for weight row r: S[r] += d[r] d_x sumi - dmin[r] d_x summ, with sumi
 * the sum of ACC[r]'s lanes and summ that of the bsums times row r's
 * mins M[r].
 */
AVX2 static inline void k_terms_rows4(const __m256i *acc, const __m128i *m,
				      const struct tp_block_q8_k *a, __m128 d,
				      __m128 dmin, __m128 *s)
{
	__m256i bs = _mm256_loadu_si256((const __m256i *)a->bsums);
	__m128i pairs = _mm_hadd_epi16(_mm256_castsi256_si128(bs),
				       _mm256_extracti128_si256(bs, 1));
	__m128 dx = _mm_set1_ps(a->d);
	__m128 sumi = _mm_cvtepi32_ps(hsum4_i32(acc[0], acc[1], acc[2], acc[3]));
	__m128 summ = _mm_cvtepi32_ps(hsum4_i32x4(_mm_madd_epi16(pairs, m[0]),
		_mm_madd_epi16(pairs, m[1]), _mm_madd_epi16(pairs, m[2]),
		_mm_madd_epi16(pairs, m[3])));

	*s = _mm_add_ps(*s, _mm_sub_ps(_mm_mul_ps(_mm_mul_ps(d, dx), sumi),
				       _mm_mul_ps(_mm_mul_ps(dmin, dx), summ)));
}

/*
 * The body of a 4-row kernel for 32-element blocks against Q8_0 rows
 * (prefill; avx2.c and avx512.c, DOT_S8 their product of a block's
 * signed bytes in 8 lanes). Block by block, the four rows' integer sums
 * are reduced together into one vector (lane t is row t), scaled, and
 * added to the vector of the four sums: each lane adds its blocks' terms
 * in the order dot() adds them, (float)sumi * (d_w * d_x).
 */
#define Q8_0_ROWS4_BODY(blk_t, quants, DOT_S8)				\
	const blk_t *w = wv;						\
	const struct tp_block_q8_0 *x[4];				\
	int nb = n / TP_QK, b, t;					\
	__m128 s = _mm_setzero_ps();					\
									\
	UNROLL for (t = 0; t < 4; t++)					\
		x[t] = (const void *)((const char *)xv + t * stride);	\
	for (b = 0; b < nb; b++) {					\
		__m256i q = quants(wv, b), v[4];			\
		__m128 dx = _mm_setr_ps(h2f(x[0][b].d), h2f(x[1][b].d),	\
					h2f(x[2][b].d), h2f(x[3][b].d)); \
									\
		if (!(b & 3))						\
			prefetch_ahead(&w[b], 2);			\
		UNROLL for (t = 0; t < 4; t++)				\
			v[t] = DOT_S8(q, _mm256_loadu_si256(		\
				(const __m256i *)x[t][b].qs));		\
		s = _mm_add_ps(s, _mm_mul_ps(_mm_cvtepi32_ps(		\
				hsum4_i32(v[0], v[1], v[2], v[3])),	\
			_mm_mul_ps(_mm_set1_ps(h2f(w[b].d)), dx)));	\
	}								\
	_mm_storeu_ps(out, s);

#endif /* TPRUN_KERNELS_X86_H */
