// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * AVX-512 (F, BW, VL and VNNI) dot products, where they beat avx2.c's
 * (x86-64); dispatch.c fills this table on top of AVX2's, so every other
 * kernel is the AVX2 one.
 *
 * The quantised types keep the generic bits (kernels.h, Numerics): their
 * integer sums are exact whatever the width, and each block's float term
 * is added in generic's order, so a table may mix widths. What AVX-512
 * buys, measured on an Ice Lake Xeon (GMAC/s of one core, 4-row kernel
 * over 16-row tiles, AVX2 -> AVX-512):
 * - Q8_0, Q4_0, Q5_0 prefill: vpdpbusd (bytes to 32 bits in one step):
 *   23 -> 26 (decoding one row is bound by memory: AVX2's kernel);
 * - Q6_K prefill: two runs of 32 quants per 512-bit vector, the scale
 *   products added by vpdpwssd: 42 -> 47. Not Q4_K/Q5_K: the same gave
 *   nothing over avx2.c's (41 against 42), and decoding one row at a time
 *   was faster at 256 bits for the K-quants;
 * - F16: sixteen lanes, and all four rows of prefill against each weight
 *   converted once (32 registers hold their 16 accumulators): 25 -> 28.
 */
#if defined(__x86_64__)
#include "kernels/kernels.h"
#include "kernels/x86.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

/* Signed bytes W times signed bytes X, summed in 8 lanes of 32 bits
 * (avx2.c's dot_s8 in one instruction where it takes two). */
AVX512 static inline __m256i dot_s8_vnni(__m256i w, __m256i x)
{
	return _mm256_dpbusd_epi32(_mm256_setzero_si256(),
				   _mm256_sign_epi8(w, w),
				   _mm256_sign_epi8(x, w));
}

/* ---- 32-element blocks against Q8_0 ------------------------------------ */

/* Against 4 activation rows (prefill): x86.h's body, with vpdpbusd. */
#define DOT4_X_Q8_0(name, blk_t, quants)				\
AVX512 static void name(const void *wv, const void *xv, size_t stride,	\
			int n, float *out)				\
{									\
	Q8_0_ROWS4_BODY(blk_t, quants, dot_s8_vnni)			\
}
DOT4_X_Q8_0(dot4_q8_0, struct tp_block_q8_0, q8_0_quants)
DOT4_X_Q8_0(dot4_q4_0, struct tp_block_q4_0, q4_0_quants)
DOT4_X_Q8_0(dot4_q5_0, struct tp_block_q5_0, q5_0_quants)

/* ---- K-quants against Q8_K ---------------------------------------------- */

/* The low 256 bits from LO, the high from HI. */
AVX512 static inline __m512i join(__m256i lo, __m256i hi)
{
	return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

/* ACC's 16 lanes summed to 8 (integer: exact). */
AVX512 static inline __m256i fold(__m512i acc)
{
	return _mm256_add_epi32(_mm512_castsi512_si256(acc),
				_mm512_extracti64x4_epi64(acc, 1));
}

/*
 * A Q6_K super-block against 4 activation rows (prefill): as avx2.c's,
 * but two runs of 32 quants (64 elements, four scales of 16) per 512-bit
 * vector; the quants are stored + 32, taken off through the activations'
 * bsums. Adds generic's terms to the lanes of S.
 */
AVX512 static inline __attribute__((always_inline)) void
q6_k_block4(const struct tp_block_q6_k *w, const struct tp_block_q8_k *const *a,
	    __m128 *s)
{
	const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(3);
	__m128i sc16 = _mm_loadu_si128((const __m128i *)w->scales);
	__m256i sc2 = _mm256_broadcastsi128_si256(sc16);
	__m512i acc[4];
	__m256i sums[4];
	int j, k, t;

	prefetch_ahead(w, 4);
	UNROLL for (t = 0; t < 4; t++) {
		__m256i bs = _mm256_loadu_si256((const __m256i *)a[t]->bsums);

		/* - 32 sum sc bsum, to start from */
		acc[t] = _mm512_castsi256_si512(_mm256_sub_epi32(
			_mm256_setzero_si256(),
			_mm256_slli_epi32(_mm256_madd_epi16(bs,
				_mm256_cvtepi8_epi16(sc16)), 5)));
		acc[t] = _mm512_inserti64x4(acc[t], _mm256_setzero_si256(), 1);
	}
	UNROLL for (j = 0; j < 2; j++) {
		const uint8_t *ql = w->ql + 64 * j;
		__m256i l1 = _mm256_loadu_si256((const __m256i *)ql);
		__m256i l2 = _mm256_loadu_si256((const __m256i *)(ql + 32));
		__m256i h = _mm256_loadu_si256((const __m256i *)(w->qh + 32 * j));
		__m512i q[2];

		q[0] = join(_mm256_or_si256(_mm256_and_si256(l1, m4),
				_mm256_slli_epi16(_mm256_and_si256(h, m2), 4)),
			    _mm256_or_si256(_mm256_and_si256(l2, m4),
				_mm256_slli_epi16(_mm256_and_si256(
					_mm256_srli_epi16(h, 2), m2), 4)));
		q[1] = join(_mm256_or_si256(_mm256_and_si256(
					_mm256_srli_epi16(l1, 4), m4),
				_mm256_slli_epi16(_mm256_and_si256(
					_mm256_srli_epi16(h, 4), m2), 4)),
			    _mm256_or_si256(_mm256_and_si256(
					_mm256_srli_epi16(l2, 4), m4),
				_mm256_slli_epi16(_mm256_and_si256(
					_mm256_srli_epi16(h, 6), m2), 4)));
		UNROLL for (k = 0; k < 2; k++) {
			/* scales 8j+4k .. 8j+4k+3, each over 8 16-bit lanes */
			int i0 = 8 * j + 4 * k;
			__m512i scv = _mm512_cvtepi8_epi16(_mm256_shuffle_epi8(sc2,
				_mm256_set_epi64x(0x0101010101010101 * (i0 + 3),
						  0x0101010101010101 * (i0 + 2),
						  0x0101010101010101 * (i0 + 1),
						  0x0101010101010101 * i0)));

			UNROLL for (t = 0; t < 4; t++)
				acc[t] = _mm512_dpwssd_epi32(acc[t],
					_mm512_maddubs_epi16(q[k], _mm512_loadu_si512(
						a[t]->qs + 128 * j + 64 * k)), scv);
		}
	}
	/* generic's K-quant terms with no mins: dmin 0, summ 0 */
	UNROLL for (t = 0; t < 4; t++)
		sums[t] = fold(acc[t]);
	k_terms4(sums, a, _mm_setzero_si128(), h2f(w->d), 0.0f, s);
}

AVX512 static void dot4_q6_k(const void *wv, const void *xv, size_t stride,
			     int n, float *out)
{
	const struct tp_block_q6_k *w = wv;
	const struct tp_block_q8_k *a[4];
	__m128 s = _mm_setzero_ps();
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		k_rows(xv, stride, b, 4, a);
		q6_k_block4(&w[b], a, &s);
	}
	_mm_storeu_ps(out, s);
}

/* ---- F16 ----------------------------------------------------------------- */

AVX512 static inline __m512 load16_f16(const uint16_t *p)
{
	return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

/*
 * F16 rows against NT (1 or 4) activation rows: four accumulators of 16
 * per row, combined (0+2)+(1+3), then the lanes, then a tail one by one;
 * each weight converted once for all rows. One order for dot and dot4,
 * so a row's result does not depend on the batch.
 */
AVX512 static inline __attribute__((always_inline)) void
dotn_f16(const uint16_t *w, const float *const *x, int nt, int n, float *out)
{
	__m512 acc[4][4];
	int i = 0, k, t;

	UNROLL for (t = 0; t < nt; t++)
		UNROLL for (k = 0; k < 4; k++)
			acc[t][k] = _mm512_setzero_ps();
	for (; i + 64 <= n; i += 64) {
		prefetch_ahead(w + i, 2);
		UNROLL for (k = 0; k < 4; k++) {
			__m512 wk = load16_f16(w + i + 16 * k);

			UNROLL for (t = 0; t < nt; t++)
				acc[t][k] = _mm512_fmadd_ps(wk,
					_mm512_loadu_ps(x[t] + i + 16 * k),
					acc[t][k]);
		}
	}
	for (; i + 16 <= n; i += 16) {
		__m512 wk = load16_f16(w + i);

		UNROLL for (t = 0; t < nt; t++)
			acc[t][0] = _mm512_fmadd_ps(wk, _mm512_loadu_ps(x[t] + i),
						    acc[t][0]);
	}
	UNROLL for (t = 0; t < nt; t++) {
		__m512 a = _mm512_add_ps(_mm512_add_ps(acc[t][0], acc[t][2]),
					 _mm512_add_ps(acc[t][1], acc[t][3]));
		__m256 h = _mm256_add_ps(_mm512_castps512_ps256(a),
			_mm256_castpd_ps(_mm512_extractf64x4_pd(
				_mm512_castps_pd(a), 1)));
		int r;

		out[t] = hsum_ps(h);
		for (r = i; r < n; r++)
			out[t] += h2f(w[r]) * x[t][r];
	}
}

AVX512 static float dot_f16(const void *w, const void *x, int n)
{
	const float *xs[1] = { x };
	float out;

	dotn_f16(w, xs, 1, n, &out);
	return out;
}

AVX512 static void dot4_f16(const void *w, const void *xv, size_t stride,
			    int n, float *out)
{
	const float *xs[4];
	int t;

	for (t = 0; t < 4; t++)
		xs[t] = (const float *)((const char *)xv + t * stride);
	dotn_f16(w, xs, 4, n, out);
}

void tp_kernels_fill_avx512(struct tp_kernels *k)
{
	k->dot[TP_F16] = dot_f16;
	k->dot4[TP_F16] = dot4_f16;
	k->dot4[TP_Q8_0] = dot4_q8_0;
	k->dot4[TP_Q4_0] = dot4_q4_0;
	k->dot4[TP_Q5_0] = dot4_q5_0;
	k->dot4[TP_Q6_K] = dot4_q6_k;
	tp_kernels_fill_avx512_iq4(k);
	tp_kernels_fill_avx512_iq(k);
}
#endif /* __x86_64__ */
