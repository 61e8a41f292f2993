// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * AVX2 dot products of Q2_K and Q3_K against Q8_K (x86-64), installed by
 * tp_kernels_fill_avx2. Per 32 elements (group g of a super-block, in
 * byte l of the 32 qs bytes of its half at bits 2(g % 4)), the quants as
 * unsigned bytes times the activations (maddubs: at most 7 x 127 x 2 in
 * 16 bits), times the sub-block scales of elements 0-15 and 16-31 (madd):
 * exact 32-bit sums. Q2_K's mins come from the activations' sums of 16
 * (Q8_K's bsums), as generic's; Q3_K's quants are taken + 4 (0..7, the
 * third bit from hmask) and 4 sum sc bsum subtracted. The float terms per
 * super-block are generic's (kquant23.c), in its order; dot4 and rows4
 * add four rows' terms as one vector, each lane in that order.
 */
#if defined(__x86_64__)
#include "kernels/kernels.h"
#include "kernels/x86.h"

/* the 8 groups of a super-block unrolled: their shifts and shuffles are
 * constants (unrolled by 4, perf had them computed in the loop) */
#define UNROLL8 _Pragma("GCC unroll 8")

/* Scale lanes of group G: sub-block 2g in the low half, 2g + 1 in the
 * high half, from the 16 scales as 16-bit lanes SC16. */
AVX2 static inline __m256i group_scales(__m256i sc16, int g)
{
	__m256i half = g < 4 ? _mm256_permute2x128_si256(sc16, sc16, 0x00) :
			       _mm256_permute2x128_si256(sc16, sc16, 0x11);
	int i = 2 * (g % 4);

	return _mm256_shuffle_epi8(half, _mm256_set_m128i(
		_mm_set1_epi16((short)(0x0100 + 0x0202 * (i + 1))),
		_mm_set1_epi16((short)(0x0100 + 0x0202 * i))));
}

/* The 2-bit fields of group G (unsigned bytes) of the qs of a super-block */
AVX2 static inline __m256i group_low2(const uint8_t *qs, int g)
{
	__m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32 * (g / 4)));

	return _mm256_and_si256(_mm256_srli_epi16(q, 2 * (g % 4)),
				_mm256_set1_epi8(3));
}

AVX2 static inline __m256i act32(const struct tp_block_q8_k *a, int g)
{
	return _mm256_loadu_si256((const __m256i *)(a->qs + 32 * g));
}

AVX2 static inline __m256i bsums16(const struct tp_block_q8_k *a)
{
	return _mm256_loadu_si256((const __m256i *)a->bsums);
}

/* ---- Q2_K ------------------------------------------------------------ */

/*
 * Super-block W against NT activation rows: ACC[t] the scaled quant sums
 * (8 lanes), MINS[t] the min terms sum bsums[j] (sc[j] >> 4) (8 lanes).
 */
AVX2 static inline __attribute__((always_inline)) void
q2_k_sums(const struct tp_block_q2_k *w, const struct tp_block_q8_k *const *a,
	  int nt, __m256i *acc, __m256i *mins)
{
	__m128i sc = _mm_loadu_si128((const __m128i *)w->scales);
	__m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(sc, _mm_set1_epi8(15)));
	__m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4),
							  _mm_set1_epi8(15)));
	int g, t;

	prefetch_ahead(w, 2);
	UNROLL for (t = 0; t < nt; t++) {
		acc[t] = _mm256_setzero_si256();
		mins[t] = _mm256_madd_epi16(bsums16(a[t]), mn16);
	}
	UNROLL8 for (g = 0; g < 8; g++) {
		__m256i q = group_low2(w->qs, g), s = group_scales(sc16, g);

		UNROLL for (t = 0; t < nt; t++)
			acc[t] = _mm256_add_epi32(acc[t], _mm256_madd_epi16(
				_mm256_maddubs_epi16(q, act32(a[t], g)), s));
	}
}

/* generic: s += d_x d sumi - d_x dmin summ */
AVX2 static float dot_q2_k(const void *wv, const void *xv, int n)
{
	const struct tp_block_q2_k *w = wv;
	const struct tp_block_q8_k *a[1];
	float s = 0;
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		__m256i acc, mins;

		a[0] = (const struct tp_block_q8_k *)xv + b;
		q2_k_sums(&w[b], a, 1, &acc, &mins);
		s += a[0]->d * h2f(w[b].d) * (float)hsum_i32(acc) -
		     a[0]->d * h2f(w[b].dmin) * (float)hsum_i32(mins);
	}
	return s;
}

/* The 4 lanes' terms: S += dx d sumi - dx dmin summ */
AVX2 static inline __m128 q2_k_terms(__m128 s, __m128 dx, __m128 d, __m128 dmin,
				     const __m256i *acc, const __m256i *mins)
{
	__m128 sumi = _mm_cvtepi32_ps(hsum4_i32(acc[0], acc[1], acc[2], acc[3]));
	__m128 summ = _mm_cvtepi32_ps(hsum4_i32(mins[0], mins[1], mins[2], mins[3]));

	return _mm_add_ps(s, _mm_sub_ps(_mm_mul_ps(_mm_mul_ps(dx, d), sumi),
					_mm_mul_ps(_mm_mul_ps(dx, dmin), summ)));
}

AVX2 static void dot4_q2_k(const void *wv, const void *xv, size_t stride,
			   int n, float *out)
{
	const struct tp_block_q2_k *w = wv;
	const struct tp_block_q8_k *a[4];
	__m128 s = _mm_setzero_ps();
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		__m256i acc[4], mins[4];

		k_rows(xv, stride, b, 4, a);
		q2_k_sums(&w[b], a, 4, acc, mins);
		s = q2_k_terms(s, _mm_setr_ps(a[0]->d, a[1]->d, a[2]->d, a[3]->d),
			       _mm_set1_ps(h2f(w[b].d)), _mm_set1_ps(h2f(w[b].dmin)),
			       acc, mins);
	}
	_mm_storeu_ps(out, s);
}

AVX2 static void rows4_q2_k(const void *wv, size_t wstride, size_t bstride,
			    const void *xv, int n, float *out)
{
	__m128 s = _mm_setzero_ps();
	int b, r;

	for (b = 0; b < n / TP_QK_K; b++) {
		const struct tp_block_q8_k *a[1] = {
			(const struct tp_block_q8_k *)xv + b };
		const struct tp_block_q2_k *w[4];
		__m256i acc[4], mins[4];

		UNROLL for (r = 0; r < 4; r++) {
			w[r] = (const void *)((const char *)wv + r * wstride +
					      b * bstride);
			q2_k_sums(w[r], a, 1, &acc[r], &mins[r]);
		}
		s = q2_k_terms(s, _mm_set1_ps(a[0]->d),
			       _mm_setr_ps(h2f(w[0]->d), h2f(w[1]->d),
					   h2f(w[2]->d), h2f(w[3]->d)),
			       _mm_setr_ps(h2f(w[0]->dmin), h2f(w[1]->dmin),
					   h2f(w[2]->dmin), h2f(w[3]->dmin)),
			       acc, mins);
	}
	_mm_storeu_ps(out, s);
}

/* ---- Q3_K ------------------------------------------------------------ */

/* The sixteen scales (sc - 32) as 16-bit lanes (ggml's 32-bit unpacking) */
AVX2 static inline __m256i q3_k_scales16(const uint8_t *s)
{
	const uint32_t m4 = 0x0f0f0f0f, m2 = 0x03030303;
	uint32_t a[3], u[4];

	memcpy(a, s, 12);
	u[0] = (a[0] & m4) | (a[2] & m2) << 4;
	u[1] = (a[1] & m4) | (a[2] >> 2 & m2) << 4;
	u[2] = (a[0] >> 4 & m4) | (a[2] >> 4 & m2) << 4;
	u[3] = (a[1] >> 4 & m4) | (a[2] >> 6 & m2) << 4;
	/* in registers: four stores and a 16-byte load stalled (perf) */
	return _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_setr_epi32((int)u[0],
			(int)u[1], (int)u[2], (int)u[3])), _mm256_set1_epi16(32));
}

/* Super-block W against NT rows: ACC[t] = sum sc (q + 4) x - 4 sum sc bsum */
AVX2 static inline __attribute__((always_inline)) void
q3_k_sums(const struct tp_block_q3_k *w, const struct tp_block_q8_k *const *a,
	  int nt, __m256i *acc)
{
	__m256i sc16 = q3_k_scales16(w->scales);
	__m256i hm = _mm256_loadu_si256((const __m256i *)w->hmask);
	int g, t;

	prefetch_ahead(w, 2);
	UNROLL for (t = 0; t < nt; t++)	/* - 4 sum sc bsum, to start from */
		acc[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(
			_mm256_madd_epi16(bsums16(a[t]), sc16), 2));
	UNROLL8 for (g = 0; g < 8; g++) {
		__m256i hb = _mm256_and_si256(_mm256_srli_epi16(hm, g),
					      _mm256_set1_epi8(1));
		__m256i q = _mm256_or_si256(group_low2(w->qs, g),
					    _mm256_slli_epi16(hb, 2));
		__m256i s = group_scales(sc16, g);

		UNROLL for (t = 0; t < nt; t++)
			acc[t] = _mm256_add_epi32(acc[t], _mm256_madd_epi16(
				_mm256_maddubs_epi16(q, act32(a[t], g)), s));
	}
}

/* generic: s += d d_x sumi */
AVX2 static float dot_q3_k(const void *wv, const void *xv, int n)
{
	const struct tp_block_q3_k *w = wv;
	const struct tp_block_q8_k *a[1];
	float s = 0;
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		__m256i acc;

		a[0] = (const struct tp_block_q8_k *)xv + b;
		q3_k_sums(&w[b], a, 1, &acc);
		s += h2f(w[b].d) * a[0]->d * (float)hsum_i32(acc);
	}
	return s;
}

AVX2 static inline __m128 q3_k_terms(__m128 s, __m128 d, __m128 dx,
				     const __m256i *acc)
{
	return _mm_add_ps(s, _mm_mul_ps(_mm_mul_ps(d, dx), _mm_cvtepi32_ps(
		hsum4_i32(acc[0], acc[1], acc[2], acc[3]))));
}

AVX2 static void dot4_q3_k(const void *wv, const void *xv, size_t stride,
			   int n, float *out)
{
	const struct tp_block_q3_k *w = wv;
	const struct tp_block_q8_k *a[4];
	__m128 s = _mm_setzero_ps();
	int b;

	for (b = 0; b < n / TP_QK_K; b++) {
		__m256i acc[4];

		k_rows(xv, stride, b, 4, a);
		q3_k_sums(&w[b], a, 4, acc);
		s = q3_k_terms(s, _mm_set1_ps(h2f(w[b].d)),
			       _mm_setr_ps(a[0]->d, a[1]->d, a[2]->d, a[3]->d), acc);
	}
	_mm_storeu_ps(out, s);
}

AVX2 static void rows4_q3_k(const void *wv, size_t wstride, size_t bstride,
			    const void *xv, int n, float *out)
{
	__m128 s = _mm_setzero_ps();
	int b, r;

	for (b = 0; b < n / TP_QK_K; b++) {
		const struct tp_block_q8_k *a[1] = {
			(const struct tp_block_q8_k *)xv + b };
		const struct tp_block_q3_k *w[4];
		__m256i acc[4];

		/* one row after the other: the four unrolled together spilled */
		_Pragma("GCC unroll 1") for (r = 0; r < 4; r++) {
			w[r] = (const void *)((const char *)wv + r * wstride +
					      b * bstride);
			q3_k_sums(w[r], a, 1, &acc[r]);
		}
		s = q3_k_terms(s, _mm_setr_ps(h2f(w[0]->d), h2f(w[1]->d),
					      h2f(w[2]->d), h2f(w[3]->d)),
			       _mm_set1_ps(a[0]->d), acc);
	}
	_mm_storeu_ps(out, s);
}

void tp_kernels_fill_avx2_kq23(struct tp_kernels *k)
{
	k->dot[TP_Q2_K] = dot_q2_k;
	k->dot4[TP_Q2_K] = dot4_q2_k;
	k->rows4[TP_Q2_K] = rows4_q2_k;
	k->dot[TP_Q3_K] = dot_q3_k;
	k->dot4[TP_Q3_K] = dot4_q3_k;
	k->rows4[TP_Q3_K] = rows4_q3_k;
}
#endif /* __x86_64__ */
