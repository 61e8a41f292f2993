// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * AVX2 + FMA + F16C dot products (x86-64), each function compiled for
 * that target alone so the build needs no global -m flags; dispatch.c
 * installs them only when cpuid reports all three.
 *
 * The quantised types follow generic.c exactly: the integer sum of each
 * block is computed 32 lanes at a time (maddubs: unsigned x signed bytes
 * to 16-bit pairs, never saturating for these ranges; madd to 32 bits),
 * and the blocks' float terms are added in the generic order (the 4-row
 * kernels add four rows' terms as one vector, each lane in that order),
 * so the result has the same bits. F32/F16/BF16 use four FMA accumulators
 * (llama.cpp's order for F16), within rounding of the generic sum.
 */
#if defined(__x86_64__)
#include "kernels/kernels.h"
#include "kernels/x86.h"

/* Signed bytes W times signed bytes X, summed in 8 lanes of 32 bits. */
AVX2 static inline __m256i dot_s8(__m256i w, __m256i x)
{
	__m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w),
					 _mm256_sign_epi8(x, w));

	return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

/* Unsigned bytes Q times signed bytes X, summed in 8 lanes of 32 bits. */
AVX2 static inline __m256i dot_u8(__m256i q, __m256i x)
{
	return _mm256_madd_epi16(_mm256_maddubs_epi16(q, x),
				 _mm256_set1_epi16(1));
}

/*
 * Generic: s += (float)sumi * (d_w * d_x), block by block. Four blocks'
 * sums are formed at once and their terms then added in order.
 */
#define DOT_X_Q8_0(name, blk_t, quants)					\
AVX2 static float name(const void *wv, const void *xv, int n)		\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_0 *x = xv;				\
	int nb = n / TP_QK, b = 0, k;					\
	float s = 0;							\
									\
	for (; b + 4 <= nb; b += 4) {					\
		__m256i v[4];						\
		__m128i sum4;						\
		float t[4];						\
									\
		prefetch_ahead(&w[b], 2);				\
		UNROLL for (k = 0; k < 4; k++)					\
			v[k] = dot_s8(quants(wv, b + k),		\
				      _mm256_loadu_si256((const __m256i *)x[b + k].qs)); \
		v[0] = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]),	\
					 _mm256_hadd_epi32(v[2], v[3]));	\
		sum4 = _mm_add_epi32(_mm256_castsi256_si128(v[0]),	\
				     _mm256_extracti128_si256(v[0], 1));	\
		_mm_storeu_ps(t, _mm_mul_ps(_mm_cvtepi32_ps(sum4),	\
			_mm_mul_ps(_mm_setr_ps(h2f(w[b].d), h2f(w[b + 1].d), \
					       h2f(w[b + 2].d), h2f(w[b + 3].d)), \
				   _mm_setr_ps(h2f(x[b].d), h2f(x[b + 1].d), \
					       h2f(x[b + 2].d), h2f(x[b + 3].d))))); \
		UNROLL for (k = 0; k < 4; k++)					\
			s += t[k];					\
	}								\
	for (; b < nb; b++) {						\
		int sumi = hsum_i32(dot_s8(quants(wv, b),		\
			_mm256_loadu_si256((const __m256i *)x[b].qs)));	\
									\
		s += (float)sumi * (h2f(w[b].d) * h2f(x[b].d));		\
	}								\
	return s;							\
}
DOT_X_Q8_0(dot_q8_0, struct tp_block_q8_0, q8_0_quants)
DOT_X_Q8_0(dot_q4_0, struct tp_block_q4_0, q4_0_quants)
DOT_X_Q8_0(dot_q5_0, struct tp_block_q5_0, q5_0_quants)

/*
 * The same against 4 activation rows (prefill). Block by block: the four
 * rows' integer sums are reduced together into one vector (lane t is row
 * t), scaled, and added to the vector of the four sums, so each lane adds
 * its blocks' terms in the order dot() adds them (DOT_S8: how a block's
 * bytes are multiplied, which avx512.c does in one instruction).
 */
#define DOT4_X_Q8_0(name, blk_t, quants)				\
AVX2 static void name(const void *wv, const void *xv, size_t stride,	\
		      int n, float *out)				\
{									\
	Q8_0_ROWS4_BODY(blk_t, quants, dot_s8)				\
}
DOT4_X_Q8_0(dot4_q8_0, struct tp_block_q8_0, q8_0_quants)
DOT4_X_Q8_0(dot4_q4_0, struct tp_block_q4_0, q4_0_quants)
DOT4_X_Q8_0(dot4_q5_0, struct tp_block_q5_0, q5_0_quants)


/* Generic: s += d_w d_x (float)sumi + m_w s_x, block by block. */
AVX2 static float dot_q4_1(const void *wv, const void *xv, int n)
{
	const struct tp_block_q4_1 *w = wv;
	const struct tp_block_q8_1 *x = xv;
	float s = 0;
	int b;

	for (b = 0; b < n / TP_QK; b++) {
		int sumi = hsum_i32(dot_u8(nibbles32(w[b].qs),
			_mm256_loadu_si256((const __m256i *)x[b].qs)));

		s += h2f(w[b].d) * h2f(x[b].d) * (float)sumi +
		     h2f(w[b].m) * h2f(x[b].s);
	}
	return s;
}

AVX2 static float dot_q5_1(const void *wv, const void *xv, int n)
{
	const struct tp_block_q5_1 *w = wv;
	const struct tp_block_q8_1 *x = xv;
	float s = 0;
	int b;

	for (b = 0; b < n / TP_QK; b++) {
		__m256i q = _mm256_or_si256(nibbles32(w[b].qs),
			_mm256_and_si256(bits32(w[b].qh),
					 _mm256_set1_epi8(0x10)));
		int sumi = hsum_i32(dot_u8(q,
			_mm256_loadu_si256((const __m256i *)x[b].qs)));

		s += h2f(w[b].d) * h2f(x[b].d) * (float)sumi +
		     h2f(w[b].m) * h2f(x[b].s);
	}
	return s;
}

/* ---- K-quants against Q8_K ---------------------------------------------- */

/*
 * The integer sums of a Q4_K/Q5_K super-block against NT (1 or 4)
 * activation rows, into the 8 lanes of ACC[t], the weights unpacked once
 * for all: per 64 elements, 32 bytes of nibbles (the low nibbles are
 * sub-block 2j, the high 2j+1), for Q5_K a fifth bit from qh. Returns the
 * block's 8 mins as 16-bit lanes (for summ, see k_sums).
 */
AVX2 static inline __attribute__((always_inline)) __m128i
q45_k_sums(const uint8_t *qs, const uint8_t *qh, const uint8_t *scales,
	   const struct tp_block_q8_k *const *a, int nt, __m256i *acc)
{
	const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1);
	__m256i hb = _mm256_setzero_si256();
	__m256i sm = k_scales(scales);
	__m256i sc = _mm256_permute2x128_si256(sm, sm, 0x00);
	int j, t;

	prefetch_ahead(qs, 3);
	UNROLL for (t = 0; t < nt; t++)
		acc[t] = _mm256_setzero_si256();
	if (qh)
		hb = _mm256_loadu_si256((const __m256i *)qh);
	UNROLL for (j = 0; j < 4; j++) {
		__m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * j));
		__m256i lo = _mm256_and_si256(q, m4);
		__m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
		__m256i slo = bcast16(sc, 2 * j), shi = bcast16(sc, 2 * j + 1);

		if (qh) {
			lo = _mm256_or_si256(lo, _mm256_slli_epi16(
				_mm256_and_si256(hb, one), 4));
			hi = _mm256_or_si256(hi, _mm256_slli_epi16(
				_mm256_and_si256(_mm256_srli_epi16(hb, 1),
						 one), 4));
			hb = _mm256_srli_epi16(hb, 2);
		}
		UNROLL for (t = 0; t < nt; t++) {
			__m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(
				(const __m256i *)(a[t]->qs + 64 * j)));
			__m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256(
				(const __m256i *)(a[t]->qs + 64 * j + 32)));

			acc[t] = _mm256_add_epi32(acc[t],
				_mm256_add_epi32(_mm256_madd_epi16(plo, slo),
						 _mm256_madd_epi16(phi, shi)));
		}
	}
	return _mm256_extracti128_si256(sm, 1);
}

/*
 * Generic adds d d_x sumi - dmin d_x summ per super-block: dot for one
 * row and one input; dot4 for one row and 4 inputs, rows4 for 4 rows and
 * one input (decoding), both adding the terms of the 4 as one vector.
 */
#define DOT_Q45_K(name, name4, name_rows4, blk_t, QH)			\
AVX2 static float name(const void *wv, const void *xv, int n)		\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_k *a[1];				\
	float s = 0;							\
	int b, sumi, summ;						\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		__m256i acc;						\
		__m128i m;						\
									\
		a[0] = (const struct tp_block_q8_k *)xv + b;		\
		m = q45_k_sums(w[b].qs, QH(&w[b]), w[b].scales, a, 1,	\
			       &acc);					\
		k_sums(acc, a[0]->bsums, m, &sumi, &summ);		\
		s += h2f(w[b].d) * a[0]->d * (float)sumi -		\
		     h2f(w[b].dmin) * a[0]->d * (float)summ;		\
	}								\
	return s;							\
}									\
AVX2 static void name4(const void *wv, const void *xv, size_t stride,	\
		       int n, float *out)				\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_k *a[4];				\
	__m128 s = _mm_setzero_ps();					\
	int b;								\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		__m256i acc[4];						\
		__m128i m;						\
									\
		k_rows(xv, stride, b, 4, a);				\
		m = q45_k_sums(w[b].qs, QH(&w[b]), w[b].scales, a, 4,	\
			       acc);					\
		k_terms4(acc, a, m, h2f(w[b].d), h2f(w[b].dmin), &s);	\
	}								\
	_mm_storeu_ps(out, s);						\
}									\
AVX2 static void name_rows4(const void *wv, size_t wstride,		\
			    size_t bstride, const void *xv, int n,	\
			    float *out)					\
{									\
	__m128 s = _mm_setzero_ps();					\
	int b, r;							\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		const struct tp_block_q8_k *a[1] = {			\
			(const struct tp_block_q8_k *)xv + b };		\
		const blk_t *w[4];					\
		__m256i acc[4];						\
		__m128i m[4];						\
									\
		UNROLL for (r = 0; r < 4; r++) {			\
			w[r] = (const void *)((const char *)wv +	\
				r * wstride + b * bstride);		\
			m[r] = q45_k_sums(w[r]->qs, QH(w[r]), w[r]->scales, \
					  a, 1, &acc[r]);		\
		}							\
		k_terms_rows4(acc, m, a[0],				\
			_mm_setr_ps(h2f(w[0]->d), h2f(w[1]->d),		\
				    h2f(w[2]->d), h2f(w[3]->d)),	\
			_mm_setr_ps(h2f(w[0]->dmin), h2f(w[1]->dmin),	\
				    h2f(w[2]->dmin), h2f(w[3]->dmin)),	\
			&s);						\
	}								\
	_mm_storeu_ps(out, s);						\
}
/* Q4_K has no fifth bits; Q5_K's are in the block's qh */
#define NO_QH(blk) NULL
#define Q5_QH(blk) ((blk)->qh)
DOT_Q45_K(dot_q4_k, dot4_q4_k, rows4_q4_k, struct tp_block_q4_k, NO_QH)
DOT_Q45_K(dot_q5_k, dot4_q5_k, rows4_q5_k, struct tp_block_q5_k, Q5_QH)

/*
 * The integer sums of a Q6_K super-block against NT activation rows, into
 * the 8 lanes of ACC[t]: per 128 elements, 64
 * bytes of low nibbles and 32 of 2-bit pairs make four runs of 32 quants
 * 0..63; sixteen signed scales, one per 16 elements. The quants are
 * stored + 32: sum sc (q - 32) x = sum sc q x - 32 sum sc bsum, the sums
 * of 16 activations Q8_K carries (all exact in 32 bits).
 */
AVX2 static inline __attribute__((always_inline)) void
q6_k_sums(const struct tp_block_q6_k *w, const struct tp_block_q8_k *const *a,
	  int nt, __m256i *acc)
{
	const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(3);
	__m128i sc16 = _mm_loadu_si128((const __m128i *)w->scales);
	int j, k, t;

	prefetch_ahead(w, 4);
	UNROLL for (t = 0; t < nt; t++) {
		__m256i bs = _mm256_loadu_si256((const __m256i *)a[t]->bsums);

		/* - 32 sum sc bsum, to start from */
		acc[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
			_mm256_slli_epi32(_mm256_madd_epi16(bs,
				_mm256_cvtepi8_epi16(sc16)), 5));
	}
	UNROLL for (j = 0; j < 2; j++) {
		const uint8_t *ql = w->ql + 64 * j;
		__m256i l1 = _mm256_loadu_si256((const __m256i *)ql);
		__m256i l2 = _mm256_loadu_si256((const __m256i *)(ql + 32));
		__m256i h = _mm256_loadu_si256((const __m256i *)(w->qh + 32 * j));
		__m256i q[4];

		q[0] = _mm256_or_si256(_mm256_and_si256(l1, m4),
			_mm256_slli_epi16(_mm256_and_si256(h, m2), 4));
		q[1] = _mm256_or_si256(_mm256_and_si256(l2, m4),
			_mm256_slli_epi16(_mm256_and_si256(
				_mm256_srli_epi16(h, 2), m2), 4));
		q[2] = _mm256_or_si256(_mm256_and_si256(
				_mm256_srli_epi16(l1, 4), m4),
			_mm256_slli_epi16(_mm256_and_si256(
				_mm256_srli_epi16(h, 4), m2), 4));
		q[3] = _mm256_or_si256(_mm256_and_si256(
				_mm256_srli_epi16(l2, 4), m4),
			_mm256_slli_epi16(_mm256_and_si256(
				_mm256_srli_epi16(h, 6), m2), 4));
		UNROLL for (k = 0; k < 4; k++) {
			/* sc[8j+2k] in the low 8 lanes, sc[8j+2k+1] high */
			__m256i scv = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc16,
				_mm_set_epi64x(0x0101010101010101 *
					       (8 * j + 2 * k + 1),
					       0x0101010101010101 *
					       (8 * j + 2 * k))));

			UNROLL for (t = 0; t < nt; t++) {
				__m256i x = _mm256_loadu_si256((const __m256i *)
					(a[t]->qs + 128 * j + 32 * k));

				acc[t] = _mm256_add_epi32(acc[t],
					_mm256_madd_epi16(
						_mm256_maddubs_epi16(q[k], x),
						scv));
			}
		}
	}
}

/* Generic adds the K-quant terms with no mins: d d_x sumi - 0 d_x 0. */
AVX2 static float dot_q6_k(const void *wv, const void *xv, int n)
{
	const struct tp_block_q6_k *w = wv;
	const struct tp_block_q8_k *a[1];
	float s = 0;
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		__m256i acc;

		a[0] = (const struct tp_block_q8_k *)xv + b;
		q6_k_sums(&w[b], a, 1, &acc);
		s += h2f(w[b].d) * a[0]->d * (float)hsum_i32(acc) -
		     0.0f * a[0]->d * 0.0f;
	}
	return s;
}

AVX2 static void dot4_q6_k(const void *wv, const void *xv, size_t stride,
			   int n, float *out)
{
	const struct tp_block_q6_k *w = wv;
	const struct tp_block_q8_k *a[4];
	__m128 s = _mm_setzero_ps();
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		__m256i acc[4];

		k_rows(xv, stride, b, 4, a);
		q6_k_sums(&w[b], a, 4, acc);
		k_terms4(acc, a, _mm_setzero_si128(), h2f(w[b].d), 0.0f, &s);
	}
	_mm_storeu_ps(out, s);
}

AVX2 static void rows4_q6_k(const void *wv, size_t wstride, size_t bstride,
			    const void *xv, int n, float *out)
{
	__m128i none[4] = { _mm_setzero_si128(), _mm_setzero_si128(),
			    _mm_setzero_si128(), _mm_setzero_si128() };
	__m128 s = _mm_setzero_ps();
	int b, r;

	for (b = 0; b < n / TP_QK_K; b++) {
		const struct tp_block_q8_k *a[1] = {
			(const struct tp_block_q8_k *)xv + b };
		const struct tp_block_q6_k *w[4];
		__m256i acc[4];

		UNROLL for (r = 0; r < 4; r++) {
			w[r] = (const void *)((const char *)wv + r * wstride +
					      b * bstride);
			q6_k_sums(w[r], a, 1, &acc[r]);
		}
		k_terms_rows4(acc, none, a[0],
			      _mm_setr_ps(h2f(w[0]->d), h2f(w[1]->d),
					  h2f(w[2]->d), h2f(w[3]->d)),
			      _mm_setzero_ps(), &s);
	}
	_mm_storeu_ps(out, s);
}

/* ---- floats ------------------------------------------------------------ */

/* Four accumulators of 8, combined (0+2)+(1+3), then the lanes; a tail
 * one by one (as llama.cpp's ggml_vec_dot_f16). */
#define DOT_FLOAT(name, elem_t, load8, scalar)				\
AVX2 static float name(const void *wv, const void *xv, int n)		\
{									\
	const elem_t *w = wv;						\
	const float *x = xv;						\
	__m256 acc[4] = { _mm256_setzero_ps(), _mm256_setzero_ps(),	\
			  _mm256_setzero_ps(), _mm256_setzero_ps() };	\
	int i = 0, k;							\
	float s;							\
									\
	for (; i + 32 <= n; i += 32) {					\
		prefetch_ahead(w + i, (int)sizeof(elem_t) / 2);		\
		UNROLL for (k = 0; k < 4; k++)					\
			acc[k] = _mm256_fmadd_ps(load8(w + i + 8 * k),	\
				_mm256_loadu_ps(x + i + 8 * k), acc[k]); \
	}								\
	for (; i + 8 <= n; i += 8)					\
		acc[0] = _mm256_fmadd_ps(load8(w + i),			\
					 _mm256_loadu_ps(x + i), acc[0]); \
	acc[0] = _mm256_add_ps(acc[0], acc[2]);				\
	acc[1] = _mm256_add_ps(acc[1], acc[3]);				\
	s = hsum_ps(_mm256_add_ps(acc[0], acc[1]));			\
	for (; i < n; i++)						\
		s += scalar(w[i]) * x[i];				\
	return s;							\
}

AVX2 static inline __m256 load8_f32(const float *p)
{
	return _mm256_loadu_ps(p);
}

AVX2 static inline __m256 load8_f16(const uint16_t *p)
{
	return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

AVX2 static inline __m256 load8_bf16(const uint16_t *p)
{
	__m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));

	return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

static inline float f32_id(float f)
{
	return f;
}

DOT_FLOAT(dot_f32, float, load8_f32, f32_id)
DOT_FLOAT(dot_f16, uint16_t, load8_f16, h2f)
DOT_FLOAT(dot_bf16, uint16_t, load8_bf16, tp_bf16_to_f32)

/*
 * F16 against 2 activation rows, each weight converted once for both;
 * each row summed exactly as dot_f16 sums it (8 accumulators in all fit
 * the 16 registers, 4 rows would not). dot4 is two of these.
 */
AVX2 static void dot2_f16(const uint16_t *w, const float *x0, const float *x1,
			  int n, float *out)
{
	__m256 a0[4], a1[4];
	int i = 0, k;

	UNROLL for (k = 0; k < 4; k++)
		a0[k] = a1[k] = _mm256_setzero_ps();
	for (; i + 32 <= n; i += 32) {
		prefetch_ahead(w + i, 1);
		UNROLL for (k = 0; k < 4; k++) {
			__m256 wk = load8_f16(w + i + 8 * k);

			a0[k] = _mm256_fmadd_ps(wk, _mm256_loadu_ps(x0 + i + 8 * k),
						a0[k]);
			a1[k] = _mm256_fmadd_ps(wk, _mm256_loadu_ps(x1 + i + 8 * k),
						a1[k]);
		}
	}
	for (; i + 8 <= n; i += 8) {
		__m256 wk = load8_f16(w + i);

		a0[0] = _mm256_fmadd_ps(wk, _mm256_loadu_ps(x0 + i), a0[0]);
		a1[0] = _mm256_fmadd_ps(wk, _mm256_loadu_ps(x1 + i), a1[0]);
	}
	out[0] = hsum_ps(_mm256_add_ps(_mm256_add_ps(a0[0], a0[2]),
				       _mm256_add_ps(a0[1], a0[3])));
	out[1] = hsum_ps(_mm256_add_ps(_mm256_add_ps(a1[0], a1[2]),
				       _mm256_add_ps(a1[1], a1[3])));
	for (; i < n; i++) {
		out[0] += h2f(w[i]) * x0[i];
		out[1] += h2f(w[i]) * x1[i];
	}
}

AVX2 static void dot4_f16(const void *w, const void *xv, size_t stride, int n,
			  float *out)
{
	const char *x = xv;

	dot2_f16(w, (const float *)x, (const float *)(x + stride), n, out);
	dot2_f16(w, (const float *)(x + 2 * stride),
		 (const float *)(x + 3 * stride), n, out + 2);
}

void tp_kernels_fill_avx2(struct tp_kernels *k)
{
	k->dot[TP_F32] = dot_f32;
	k->dot[TP_F16] = dot_f16;
	k->dot[TP_BF16] = dot_bf16;
	k->dot[TP_Q8_0] = dot_q8_0;
	k->dot[TP_Q4_0] = dot_q4_0;
	k->dot[TP_Q4_1] = dot_q4_1;
	k->dot[TP_Q5_0] = dot_q5_0;
	k->dot[TP_Q5_1] = dot_q5_1;
	k->dot[TP_Q4_K] = dot_q4_k;
	k->dot[TP_Q5_K] = dot_q5_k;
	k->dot[TP_Q6_K] = dot_q6_k;
	k->dot4[TP_F16] = dot4_f16;
	k->dot4[TP_Q8_0] = dot4_q8_0;
	k->dot4[TP_Q4_0] = dot4_q4_0;
	k->dot4[TP_Q5_0] = dot4_q5_0;
	k->dot4[TP_Q4_K] = dot4_q4_k;
	k->dot4[TP_Q5_K] = dot4_q5_k;
	k->dot4[TP_Q6_K] = dot4_q6_k;
	k->rows4[TP_Q4_K] = rows4_q4_k;
	k->rows4[TP_Q5_K] = rows4_q5_k;
	k->rows4[TP_Q6_K] = rows4_q6_k;
	tp_kernels_fill_avx2_kq23(k);
	tp_kernels_fill_avx2_iq4(k);
	tp_kernels_fill_avx2_iq(k);
}
#endif /* __x86_64__ */
