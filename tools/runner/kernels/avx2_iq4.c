// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * AVX2 dot products of the non-linear 4-bit types (x86-64), installed by
 * tp_kernels_fill_avx2: IQ4_NL and MXFP4 against Q8_0, IQ4_XS against
 * Q8_K. A block's 32 nibbles become their table values (iq_tables.h) by
 * one byte shuffle, signed bytes, multiplied with the activations by the
 * sign trick (|v| x sign(x, v): at most 127 x 127 x 2 in 16 bits) and
 * summed to 32 bits: the exact integer sums of iq4.c. The float terms
 * are generic's, in its order: per block of 32 (dx dw) sumi, added one
 * after another; per IQ4_XS super-block (d dx) sum (sc - 32) sumi.
 */
#if defined(__x86_64__)
#include "kernels/iq_tables.h"
#include "kernels/kernels.h"
#include "kernels/qtypes.h"
#include "kernels/x86.h"
#include "kernels/x86_iq4.h"

/* the 8 groups of a super-block unrolled (index arithmetic constant) */
#define UNROLL8 _Pragma("GCC unroll 8")

/* The 32 values of a block's nibbles through the 16-entry TABLE */
AVX2 static inline __m256i nl_values(const uint8_t *qs, __m256i table)
{
	return _mm256_shuffle_epi8(table, nibbles32(qs));
}

AVX2 static inline __m256i table16(const int8_t *t)
{
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)t));
}

/* Signed bytes V times signed bytes X, in 16-bit pairs */
AVX2 static inline __m256i mul_pairs(__m256i v, __m256i x)
{
	return _mm256_maddubs_epi16(_mm256_abs_epi8(v), _mm256_sign_epi8(x, v));
}

AVX2 static inline __m256i sum32(__m256i v, __m256i x)
{
	return _mm256_madd_epi16(mul_pairs(v, x), _mm256_set1_epi16(1));
}

/* ---- IQ4_NL and MXFP4 against Q8_0 ------------------------------------ */

AVX2 static inline __m256i q8_0_bytes(const struct tp_block_q8_0 *x)
{
	return _mm256_loadu_si256((const __m256i *)x->qs);
}

/*
 * generic: s += d_x d_w (float)sumi per block. Four blocks' sums at once,
 * their terms (sumi x (d_x d_w), the same product) then added in order.
 */
#define NL_KERNELS(name, blk_t, TABLE, SCALE, SCALES4)			\
AVX2 static float dot_##name(const void *wv, const void *xv, int n)	\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_0 *x = xv;				\
	const __m256i tab = table16(TABLE);				\
	int nb = n / TP_QK, b = 0, k;					\
	float s = 0;							\
									\
	for (; b + 4 <= nb; b += 4) {					\
		__m256i v[4];						\
		float t[4];						\
									\
		prefetch_ahead(&w[b], 2);				\
		UNROLL for (k = 0; k < 4; k++)				\
			v[k] = sum32(nl_values(w[b + k].qs, tab),	\
				     q8_0_bytes(&x[b + k]));		\
		const blk_t *w4[4] = { &w[b], &w[b + 1], &w[b + 2],	\
				       &w[b + 3] };			\
									\
		_mm_storeu_ps(t, _mm_mul_ps(_mm_cvtepi32_ps(		\
			hsum4_i32(v[0], v[1], v[2], v[3])),		\
			_mm_mul_ps(_mm_setr_ps(h2f(x[b].d), h2f(x[b + 1].d), \
					       h2f(x[b + 2].d), h2f(x[b + 3].d)), \
				   SCALES4(w4))));			\
		UNROLL for (k = 0; k < 4; k++)				\
			s += t[k];					\
	}								\
	for (; b < nb; b++)						\
		s += h2f(x[b].d) * SCALE(&w[b]) * (float)hsum_i32(	\
			sum32(nl_values(w[b].qs, tab), q8_0_bytes(&x[b]))); \
	return s;							\
}									\
AVX2 static void dot4_##name(const void *wv, const void *xv,		\
			     size_t stride, int n, float *out)		\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_0 *x[4];				\
	const __m256i tab = table16(TABLE);				\
	__m128 s = _mm_setzero_ps();					\
	int b, t;							\
									\
	UNROLL for (t = 0; t < 4; t++)					\
		x[t] = (const void *)((const char *)xv + t * stride);	\
	for (b = 0; b < n / TP_QK; b++) {				\
		__m256i q = nl_values(w[b].qs, tab), v[4];		\
									\
		if (!(b & 3))						\
			prefetch_ahead(&w[b], 2);			\
		UNROLL for (t = 0; t < 4; t++)				\
			v[t] = sum32(q, q8_0_bytes(&x[t][b]));		\
		s = _mm_add_ps(s, _mm_mul_ps(_mm_cvtepi32_ps(		\
				hsum4_i32(v[0], v[1], v[2], v[3])),	\
			_mm_mul_ps(_mm_setr_ps(h2f(x[0][b].d), h2f(x[1][b].d), \
					       h2f(x[2][b].d), h2f(x[3][b].d)), \
				   _mm_set1_ps(SCALE(&w[b])))));	\
	}								\
	_mm_storeu_ps(out, s);						\
}									\
AVX2 static void rows4_##name(const void *wv, size_t wstride,		\
			      size_t bstride, const void *xv, int n,	\
			      float *out)				\
{									\
	const struct tp_block_q8_0 *x = xv;				\
	const __m256i tab = table16(TABLE);				\
	__m128 s = _mm_setzero_ps();					\
	int b, r;							\
									\
	for (b = 0; b < n / TP_QK; b++) {				\
		__m256i q = q8_0_bytes(&x[b]), v[4];			\
		const blk_t *w[4];					\
									\
		UNROLL for (r = 0; r < 4; r++) {			\
			w[r] = (const void *)((const char *)wv +	\
				r * wstride + b * bstride);		\
			v[r] = sum32(nl_values(w[r]->qs, tab), q);	\
		}							\
		if (!(b & 3))						\
			prefetch_ahead(w[0], 4);			\
		s = _mm_add_ps(s, _mm_mul_ps(_mm_cvtepi32_ps(		\
				hsum4_i32(v[0], v[1], v[2], v[3])),	\
			_mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), SCALES4(w))));	\
	}								\
	_mm_storeu_ps(out, s);						\
}
NL_KERNELS(iq4_nl, struct tp_block_iq4_nl, tp_kvalues_iq4nl, nl_scale, nl_scales4)
NL_KERNELS(mxfp4, struct tp_block_mxfp4, tp_kvalues_mxfp4, mx_scale, mx_scales4)

/* ---- IQ4_XS against Q8_K --------------------------------------------- */

/* Super-block W against NT activation rows: ACC[t] = sum (sc - 32) sumi */
AVX2 static inline __attribute__((always_inline)) void
iq4_xs_sums(const struct tp_block_iq4_xs *w,
	    const struct tp_block_q8_k *const *a, int nt, __m256i *acc)
{
	const __m256i tab = table16(tp_kvalues_iq4nl);
	int ib, t;

	prefetch_ahead(w, 2);
	UNROLL for (t = 0; t < nt; t++)
		acc[t] = _mm256_setzero_si256();
	UNROLL8 for (ib = 0; ib < 8; ib++) {
		int ls = ((w->scales_l[ib / 2] >> (4 * (ib % 2))) & 15) |
			 ((w->scales_h >> (2 * ib)) & 3) << 4;
		__m256i v = nl_values(w->qs + 16 * ib, tab);
		__m256i sc = _mm256_set1_epi16((short)(ls - 32));

		UNROLL for (t = 0; t < nt; t++)
			acc[t] = _mm256_add_epi32(acc[t], _mm256_madd_epi16(
				mul_pairs(v, _mm256_loadu_si256((const __m256i *)
					(a[t]->qs + 32 * ib))), sc));
	}
}

/* generic: s += d d_x sumi */
AVX2 static float dot_iq4_xs(const void *wv, const void *xv, int n)
{
	const struct tp_block_iq4_xs *w = wv;
	const struct tp_block_q8_k *a[1];
	float s = 0;
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		__m256i acc;

		a[0] = (const struct tp_block_q8_k *)xv + b;
		iq4_xs_sums(&w[b], a, 1, &acc);
		s += h2f(w[b].d) * a[0]->d * (float)hsum_i32(acc);
	}
	return s;
}

AVX2 static void dot4_iq4_xs(const void *wv, const void *xv, size_t stride,
			     int n, float *out)
{
	const struct tp_block_iq4_xs *w = wv;
	const struct tp_block_q8_k *a[4];
	__m128 s = _mm_setzero_ps();
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		__m256i acc[4];

		k_rows(xv, stride, b, 4, a);
		iq4_xs_sums(&w[b], a, 4, acc);
		s = _mm_add_ps(s, _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(h2f(w[b].d)),
			_mm_setr_ps(a[0]->d, a[1]->d, a[2]->d, a[3]->d)),
			_mm_cvtepi32_ps(hsum4_i32(acc[0], acc[1], acc[2], acc[3]))));
	}
	_mm_storeu_ps(out, s);
}

AVX2 static void rows4_iq4_xs(const void *wv, size_t wstride, size_t bstride,
			      const void *xv, int n, float *out)
{
	__m128 s = _mm_setzero_ps();
	int b, r;

	for (b = 0; b < n / TP_QK_K; b++) {
		const struct tp_block_q8_k *a[1] = {
			(const struct tp_block_q8_k *)xv + b };
		const struct tp_block_iq4_xs *w[4];
		__m256i acc[4];

		UNROLL for (r = 0; r < 4; r++) {
			w[r] = (const void *)((const char *)wv + r * wstride +
					      b * bstride);
			iq4_xs_sums(w[r], a, 1, &acc[r]);
		}
		s = _mm_add_ps(s, _mm_mul_ps(_mm_mul_ps(
			_mm_setr_ps(h2f(w[0]->d), h2f(w[1]->d), h2f(w[2]->d),
				    h2f(w[3]->d)), _mm_set1_ps(a[0]->d)),
			_mm_cvtepi32_ps(hsum4_i32(acc[0], acc[1], acc[2], acc[3]))));
	}
	_mm_storeu_ps(out, s);
}

void tp_kernels_fill_avx2_iq4(struct tp_kernels *k)
{
	k->dot[TP_IQ4_NL] = dot_iq4_nl;
	k->dot4[TP_IQ4_NL] = dot4_iq4_nl;
	k->rows4[TP_IQ4_NL] = rows4_iq4_nl;
	k->dot[TP_MXFP4] = dot_mxfp4;
	k->dot4[TP_MXFP4] = dot4_mxfp4;
	k->rows4[TP_MXFP4] = rows4_mxfp4;
	k->dot[TP_IQ4_XS] = dot_iq4_xs;
	k->dot4[TP_IQ4_XS] = dot4_iq4_xs;
	k->rows4[TP_IQ4_XS] = rows4_iq4_xs;
}
#endif /* __x86_64__ */
