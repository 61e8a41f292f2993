// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * IQ4_NL and MXFP4 with AVX-512 VNNI (at 256 bits, AVX512VL), installed
 * by tp_kernels_fill_avx512 over avx2_iq4.c's. The AVX2 kernels multiply
 * a block's signed table values with the activations by the sign trick
 * (abs, sign, maddubs, madd: four instructions per row); here the table
 * holds the values + 128, unsigned, and vpdpbusd multiplies and sums four
 * bytes into 32 bits in one instruction without saturating, the 128 x
 * sum of the activations (computed once per block for every row) taken
 * off: the same exact integer sums, so the same bits as generic, and one
 * instruction per row where there were four. Measured below (runner.md).
 */
#if defined(__x86_64__)
#include "kernels/iq_tables.h"
#include "kernels/kernels.h"
#include "kernels/qtypes.h"
#include "kernels/x86.h"
#include "kernels/x86_iq4.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

/* The 16 values + 128 of TABLE, in both halves */
AVX512 static inline __m256i table_u8(const int8_t *t)
{
	__m128i v = _mm_add_epi8(_mm_loadu_si128((const __m128i *)t),
				 _mm_set1_epi8((char)0x80));

	return _mm256_broadcastsi128_si256(v);
}

/* A block's 32 values + 128 as unsigned bytes */
AVX512 static inline __m256i values_u8(const uint8_t *qs, __m256i tab)
{
	return _mm256_shuffle_epi8(tab, nibbles32(qs));
}

/* - 128 x the activations' sum, as 8 lanes to start a row's sum from */
AVX512 static inline __m256i minus128_sum(__m256i q)
{
	__m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(),
					_mm256_set1_epi8(1), q);

	return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(s, 7));
}

AVX512 static inline __m256i q8_0_bytes(const struct tp_block_q8_0 *x)
{
	return _mm256_loadu_si256((const __m256i *)x->qs);
}

/*
 * Decoding two blocks at a time at 512 bits: the activations of blocks
 * b and b + 1 as [b 0-15 | b+1 0-15 | b 16-31 | b+1 16-31], which is how
 * the weights' low and high nibbles of the two blocks line up; a row's
 * 16 lanes of sums then fold to 8 (block b's 4, block b + 1's 4) and
 * two hadds give each block's 4 row sums: the same integers as one block
 * at a time, each block's float term added in block order.
 */
AVX512 static inline __m512i pair_q8_0(const struct tp_block_q8_0 *x0,
				       const struct tp_block_q8_0 *x1)
{
	__m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(q8_0_bytes(x0)),
				       q8_0_bytes(x1), 1);

	return _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0));
}

/* two blocks' values + 128 in pair_q8_0's order */
AVX512 static inline __m512i values2_u8(const uint8_t *qs0,
					const uint8_t *qs1, __m512i tab)
{
	__m256i t = _mm256_inserti128_si256(
		_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)qs0)),
		_mm_loadu_si128((const __m128i *)qs1), 1);
	__m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(t),
				       _mm256_srli_epi16(t, 4), 1);

	return _mm512_shuffle_epi8(tab, _mm512_and_si512(z,
					_mm512_set1_epi8(15)));
}

AVX512 static inline __m512i minus128_sum512(__m512i q)
{
	__m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(),
					_mm512_set1_epi8(1), q);

	return _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(s, 7));
}

/* lanes 0-7 (block b, b + 1) + lanes 8-15 (the same blocks) */
AVX512 static inline __m256i fold512(__m512i v)
{
	return _mm256_add_epi32(_mm512_castsi512_si256(v),
				_mm512_extracti64x4_epi64(v, 1));
}

/* rows 0-3's sums of block b (low 128 bits) and of block b + 1 (high) */
AVX512 static inline __m256i hsum2x4_i32(__m256i v0, __m256i v1, __m256i v2,
					 __m256i v3)
{
	return _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1),
				 _mm256_hadd_epi32(v2, v3));
}

/* generic: s += d_x d_w (float)sumi per block, in block order */
#define NL_VNNI(name, blk_t, TABLE, SCALE, SCALES4)			\
AVX512 static float dot_##name(const void *wv, const void *xv, int n)	\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_0 *x = xv;				\
	const __m256i tab = table_u8(TABLE);				\
	int nb = n / TP_QK, b = 0, k;					\
	float s = 0;							\
									\
	for (; b + 4 <= nb; b += 4) {					\
		const blk_t *w4[4] = { &w[b], &w[b + 1], &w[b + 2],	\
				       &w[b + 3] };			\
		__m256i v[4];						\
		float t[4];						\
									\
		prefetch_ahead(&w[b], 2);				\
		UNROLL for (k = 0; k < 4; k++) {			\
			__m256i q = q8_0_bytes(&x[b + k]);		\
									\
			v[k] = _mm256_dpbusd_epi32(minus128_sum(q),	\
				values_u8(w[b + k].qs, tab), q);	\
		}							\
		_mm_storeu_ps(t, _mm_mul_ps(_mm_cvtepi32_ps(		\
			hsum4_i32(v[0], v[1], v[2], v[3])),		\
			_mm_mul_ps(_mm_setr_ps(h2f(x[b].d), h2f(x[b + 1].d), \
					       h2f(x[b + 2].d), h2f(x[b + 3].d)), \
				   SCALES4(w4))));			\
		UNROLL for (k = 0; k < 4; k++)				\
			s += t[k];					\
	}								\
	for (; b < nb; b++) {						\
		__m256i q = q8_0_bytes(&x[b]);				\
									\
		s += h2f(x[b].d) * SCALE(&w[b]) * (float)hsum_i32(	\
			_mm256_dpbusd_epi32(minus128_sum(q),		\
					    values_u8(w[b].qs, tab), q)); \
	}								\
	return s;							\
}									\
AVX512 static void dot4_##name(const void *wv, const void *xv,		\
			       size_t stride, int n, float *out)	\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_0 *x[4];				\
	const __m256i tab = table_u8(TABLE);				\
	__m128 s = _mm_setzero_ps();					\
	int b, t;							\
									\
	UNROLL for (t = 0; t < 4; t++)					\
		x[t] = (const void *)((const char *)xv + t * stride);	\
	for (b = 0; b < n / TP_QK; b++) {				\
		__m256i u = values_u8(w[b].qs, tab), v[4];		\
									\
		if (!(b & 3))						\
			prefetch_ahead(&w[b], 2);			\
		UNROLL for (t = 0; t < 4; t++) {			\
			__m256i q = q8_0_bytes(&x[t][b]);		\
									\
			v[t] = _mm256_dpbusd_epi32(minus128_sum(q), u, q); \
		}							\
		s = _mm_add_ps(s, _mm_mul_ps(_mm_cvtepi32_ps(		\
				hsum4_i32(v[0], v[1], v[2], v[3])),	\
			_mm_mul_ps(_mm_setr_ps(h2f(x[0][b].d), h2f(x[1][b].d), \
					       h2f(x[2][b].d), h2f(x[3][b].d)), \
				   _mm_set1_ps(SCALE(&w[b])))));	\
	}								\
	_mm_storeu_ps(out, s);						\
}									\
AVX512 static void rows4_##name(const void *wv, size_t wstride,	\
				size_t bstride, const void *xv, int n,	\
				float *out)				\
{									\
	const struct tp_block_q8_0 *x = xv;				\
	const __m256i tab = table_u8(TABLE);				\
	const __m512i tab2 = _mm512_broadcast_i64x4(tab);		\
	__m128 s = _mm_setzero_ps();					\
	int nb = n / TP_QK, b = 0, r;					\
									\
	for (; b + 2 <= nb; b += 2) {					\
		__m512i q = pair_q8_0(&x[b], &x[b + 1]);		\
		__m512i c = minus128_sum512(q);				\
		__m256i v[4], h;					\
		const blk_t *w[4], *w1[4];				\
									\
		UNROLL for (r = 0; r < 4; r++) {			\
			w[r] = (const void *)((const char *)wv +	\
				r * wstride + b * bstride);		\
			w1[r] = (const void *)((const char *)w[r] +	\
					       bstride);		\
			v[r] = fold512(_mm512_dpbusd_epi32(c,		\
				values2_u8(w[r]->qs, w1[r]->qs, tab2), q)); \
		}							\
		prefetch_ahead(w[0], 4);				\
		h = hsum2x4_i32(v[0], v[1], v[2], v[3]);		\
		s = _mm_add_ps(s, _mm_mul_ps(_mm_cvtepi32_ps(		\
				_mm256_castsi256_si128(h)),		\
			_mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), SCALES4(w)))); \
		s = _mm_add_ps(s, _mm_mul_ps(_mm_cvtepi32_ps(		\
				_mm256_extracti128_si256(h, 1)),	\
			_mm_mul_ps(_mm_set1_ps(h2f(x[b + 1].d)),	\
				   SCALES4(w1))));			\
	}								\
	for (; b < nb; b++) {						\
		__m256i q = q8_0_bytes(&x[b]), c = minus128_sum(q), v[4]; \
		const blk_t *w[4];					\
									\
		UNROLL for (r = 0; r < 4; r++) {			\
			w[r] = (const void *)((const char *)wv +	\
				r * wstride + b * bstride);		\
			v[r] = _mm256_dpbusd_epi32(c, values_u8(w[r]->qs, \
							       tab), q); \
		}							\
		s = _mm_add_ps(s, _mm_mul_ps(_mm_cvtepi32_ps(		\
				hsum4_i32(v[0], v[1], v[2], v[3])),	\
			_mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), SCALES4(w))));	\
	}								\
	_mm_storeu_ps(out, s);						\
}
NL_VNNI(iq4_nl, struct tp_block_iq4_nl, tp_kvalues_iq4nl, nl_scale, nl_scales4)
NL_VNNI(mxfp4, struct tp_block_mxfp4, tp_kvalues_mxfp4, mx_scale, mx_scales4)

void tp_kernels_fill_avx512_iq4(struct tp_kernels *k)
{
	k->dot[TP_IQ4_NL] = dot_iq4_nl;
	k->dot4[TP_IQ4_NL] = dot4_iq4_nl;
	k->rows4[TP_IQ4_NL] = rows4_iq4_nl;
	k->dot[TP_MXFP4] = dot_mxfp4;
	k->dot4[TP_MXFP4] = dot4_mxfp4;
	k->rows4[TP_MXFP4] = rows4_mxfp4;
}
#endif /* __x86_64__ */
