// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * AVX2 dot products of the codebook types IQ2_XXS, IQ2_XS, IQ2_S,
 * IQ3_XXS, IQ3_S, IQ1_S and IQ1_M against Q8_K (x86-64; dispatch.c
 * installs them behind the cpuid check, through tp_kernels_fill_avx2).
 *
 * Each group of 32 weights becomes three vectors: the magnitudes (grid
 * bytes looked up by index, unsigned), the sign sources (bytes whose
 * signs the activations take: the sign tables' +-1, or IQ1's values) and
 * the sub-block factors 2s + 1 (16-bit lanes, per 16 elements). Then
 * maddubs(magnitude, sign(activation)) pairs bytes into 16 bits (at most
 * 62 x 127 x 2, no saturation) and madd by the factors into 32: the exact
 * integer sum iq_decode.c forms, so each super-block's float term, added
 * in its order, has generic's bits. IQ1's values are handled as
 * 8 x grid +- 1 (a shift of +-1/8 in eighths): the integer sum is 8 times
 * the grid's plus the shifts', and (d d_x) x (sum / 8) is exactly generic's
 * (d d_x) x (grid sum + 1/8 shift sum), every term below 2^24.
 *
 * dot: one row; dot4: one row against 4 activation rows (prefill), the
 * weights unpacked once; rows4: 4 rows (interleaved or not) against one
 * activation row (decoding), each lane of the 4 sums in generic's order.
 */
#if defined(__x86_64__)
#include "kernels/iq_tables.h"
#include "kernels/kernels.h"
#include "kernels/x86.h"
#include "kernels/x86_iq.h"

/* the 8 groups of a super-block unrolled (index arithmetic constant) */
#define UNROLL8 _Pragma("GCC unroll 8")

/* A group of 32: magnitudes, sign sources, factors (see above). */
struct iq_grp {
	__m256i mag, sgn, scl;
};

/* Bytes of +-1 from 32 sign bits (bit j set: byte j is -1). */
AVX2 static inline __m256i sign_bits32(uint32_t bits)
{
	const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
		3, 3, 3, 3, 3, 3, 3, 3);
	const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
	__m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)bits), spread);

	v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
	return _mm256_or_si256(v, _mm256_set1_epi8(1));
}

/* Factors 2s + 1 for elements 0-15 (S0) and 16-31 (S1). */
AVX2 static inline __m256i factors(int s0, int s1)
{
	return _mm256_set_m128i(_mm_set1_epi16((short)(2 * s1 + 1)),
				_mm_set1_epi16((short)(2 * s0 + 1)));
}

static inline uint64_t ks64(uint32_t w, int l)
{
	return tp_ksigns64_iq2xs[w >> (7 * l) & 127];
}

AVX2 static inline struct iq_grp iq2_xxs_grp(const void *blk, int ib)
{
	const struct tp_block_iq2_xxs *x = blk;
	uint32_t w[2];
	struct iq_grp g;

	memcpy(w, x->qs + 4 * ib, 8);
	g.mag = _mm256_set_epi64x((long long)tp_iq2xxs_grid[w[0] >> 24],
				  (long long)tp_iq2xxs_grid[w[0] >> 16 & 255],
				  (long long)tp_iq2xxs_grid[w[0] >> 8 & 255],
				  (long long)tp_iq2xxs_grid[w[0] & 255]);
	g.sgn = _mm256_set_epi64x((long long)ks64(w[1], 3), (long long)ks64(w[1], 2),
				  (long long)ks64(w[1], 1), (long long)ks64(w[1], 0));
	g.scl = _mm256_set1_epi16((short)(2 * (w[1] >> 28) + 1));
	return g;
}

AVX2 static inline struct iq_grp iq2_xs_grp(const void *blk, int ib)
{
	const struct tp_block_iq2_xs *x = blk;
	const uint16_t *q = x->qs + 4 * ib;
	struct iq_grp g;

	g.mag = _mm256_set_epi64x((long long)tp_iq2xs_grid[q[3] & 511],
				  (long long)tp_iq2xs_grid[q[2] & 511],
				  (long long)tp_iq2xs_grid[q[1] & 511],
				  (long long)tp_iq2xs_grid[q[0] & 511]);
	g.sgn = _mm256_set_epi64x((long long)tp_ksigns64_iq2xs[q[3] >> 9],
				  (long long)tp_ksigns64_iq2xs[q[2] >> 9],
				  (long long)tp_ksigns64_iq2xs[q[1] >> 9],
				  (long long)tp_ksigns64_iq2xs[q[0] >> 9]);
	g.scl = factors(x->scales[ib] & 15, x->scales[ib] >> 4);
	return g;
}

AVX2 static inline struct iq_grp iq2_s_grp(const void *blk, int ib)
{
	const struct tp_block_iq2_s *x = blk;
	const uint8_t *q = x->qs + 4 * ib;
	int h = x->qh[ib];
	uint32_t signs;
	struct iq_grp g;

	memcpy(&signs, x->qs + 32 + 4 * ib, 4);
	g.mag = _mm256_set_epi64x((long long)tp_iq2s_grid[q[3] | (h << 2 & 0x300)],
				  (long long)tp_iq2s_grid[q[2] | (h << 4 & 0x300)],
				  (long long)tp_iq2s_grid[q[1] | (h << 6 & 0x300)],
				  (long long)tp_iq2s_grid[q[0] | (h << 8 & 0x300)]);
	g.sgn = sign_bits32(signs);
	g.scl = factors(x->scales[ib] & 15, x->scales[ib] >> 4);
	return g;
}

AVX2 static inline struct iq_grp iq3_xxs_grp(const void *blk, int ib)
{
	const struct tp_block_iq3_xxs *x = blk;
	const uint8_t *q = x->qs + 8 * ib;
	uint32_t w;
	struct iq_grp g;

	memcpy(&w, x->qs + 64 + 4 * ib, 4);
	g.mag = _mm256_set_epi32((int)tp_iq3xxs_grid[q[7]], (int)tp_iq3xxs_grid[q[6]],
				 (int)tp_iq3xxs_grid[q[5]], (int)tp_iq3xxs_grid[q[4]],
				 (int)tp_iq3xxs_grid[q[3]], (int)tp_iq3xxs_grid[q[2]],
				 (int)tp_iq3xxs_grid[q[1]], (int)tp_iq3xxs_grid[q[0]]);
	g.sgn = _mm256_set_epi64x((long long)ks64(w, 3), (long long)ks64(w, 2),
				  (long long)ks64(w, 1), (long long)ks64(w, 0));
	g.scl = _mm256_set1_epi16((short)(2 * (w >> 28) + 1));
	return g;
}

AVX2 static inline struct iq_grp iq3_s_grp(const void *blk, int ib)
{
	const struct tp_block_iq3_s *x = blk;
	const uint8_t *q = x->qs + 8 * ib;
	int h = x->qh[ib], s = x->scales[ib / 2] >> (4 * (ib % 2)) & 15;
	uint32_t signs;
	struct iq_grp g;

	memcpy(&signs, x->signs + 4 * ib, 4);
	g.mag = _mm256_set_epi32((int)tp_iq3s_grid[q[7] | (h << 1 & 256)],
				 (int)tp_iq3s_grid[q[6] | (h << 2 & 256)],
				 (int)tp_iq3s_grid[q[5] | (h << 3 & 256)],
				 (int)tp_iq3s_grid[q[4] | (h << 4 & 256)],
				 (int)tp_iq3s_grid[q[3] | (h << 5 & 256)],
				 (int)tp_iq3s_grid[q[2] | (h << 6 & 256)],
				 (int)tp_iq3s_grid[q[1] | (h << 7 & 256)],
				 (int)tp_iq3s_grid[q[0] | (h << 8 & 256)]);
	g.sgn = sign_bits32(signs);
	g.scl = _mm256_set1_epi16((short)(2 * s + 1));
	return g;
}

/* IQ1: 8 x grid (signed -1, 0, 1) plus the shifts' +-1 per group of 8 */
AVX2 static inline void iq1_values(struct iq_grp *g, __m256i grid, __m256i shift)
{
	__m256i v = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), grid),
				    shift);

	g->mag = _mm256_abs_epi8(v);
	g->sgn = v;
}

AVX2 static inline struct iq_grp iq1_s_grp(const void *blk, int ib)
{
	const struct tp_block_iq1_s *x = blk;
	const uint8_t *q = x->qs + 4 * ib;
	int h = x->qh[ib];
	struct iq_grp g;

	iq1_values(&g, _mm256_set_epi64x((long long)tp_iq1s_grid[q[3] | (h >> 9 & 7) << 8],
					 (long long)tp_iq1s_grid[q[2] | (h >> 6 & 7) << 8],
					 (long long)tp_iq1s_grid[q[1] | (h >> 3 & 7) << 8],
					 (long long)tp_iq1s_grid[q[0] | (h & 7) << 8]),
		   _mm256_set1_epi8((char)(1 - 2 * (h >> 15))));
	g.scl = _mm256_set1_epi16((short)(2 * (h >> 12 & 7) + 1));
	return g;
}

/* Bytes of -1 in group k of 8 where bit 3 + 4k of H is set, else 1 */
AVX2 static inline __m256i iq1_m_shifts(uint16_t h)
{
	const __m256i bit = _mm256_setr_epi64x(0x8, 0x80, 0x800, 0x8000);
	__m256i m = _mm256_and_si256(_mm256_set1_epi64x(h), bit);

	return _mm256_or_si256(_mm256_cmpeq_epi64(m, bit), _mm256_set1_epi8(1));
}

AVX2 static inline struct iq_grp iq1_m_grp(const void *blk, int ib)
{
	const struct tp_block_iq1_m *x = blk;
	const uint8_t *q = x->qs + 4 * ib, *h = x->qh + 2 * ib;
	uint16_t sc, hh;
	struct iq_grp g;

	memcpy(&sc, x->scales + 2 * (ib / 2), 2);
	memcpy(&hh, h, 2);
	sc >>= 6 * (ib % 2);
	iq1_values(&g, _mm256_set_epi64x((long long)tp_iq1s_grid[q[3] | (h[1] << 4 & 0x700)],
					 (long long)tp_iq1s_grid[q[2] | (h[1] << 8 & 0x700)],
					 (long long)tp_iq1s_grid[q[1] | (h[0] << 4 & 0x700)],
					 (long long)tp_iq1s_grid[q[0] | (h[0] << 8 & 0x700)]),
		   iq1_m_shifts(hh));
	g.scl = factors(sc & 7, sc >> 3 & 7);
	return g;
}

/* A group's products with activation bytes Q, added to ACC */
AVX2 static inline __m256i grp_acc(__m256i acc, const struct iq_grp *g, __m256i q)
{
	return _mm256_add_epi32(acc, _mm256_madd_epi16(
		_mm256_maddubs_epi16(g->mag, _mm256_sign_epi8(q, g->sgn)), g->scl));
}

AVX2 static inline __m256i q8_load(const struct tp_block_q8_k *a, int ib)
{
	return _mm256_loadu_si256((const __m256i *)(a->qs + 32 * ib));
}

/*
 * The three kernels of a type. TERM: a super-block's integer sum times
 * TERM is what generic weighs (IQ1: 1/8, see above; else 1, exact);
 * FACTOR on the row's sum.
 */
#define IQ_KERNELS(name, blk_t, GRP, D, TERM, FACTOR)			\
AVX2 static float dot_##name(const void *wv, const void *xv, int n)	\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_k *a = xv;				\
	float s = 0;							\
	int b, ib;							\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		__m256i acc = _mm256_setzero_si256();			\
									\
		prefetch_ahead(&w[b], 2);				\
		UNROLL8 for (ib = 0; ib < 8; ib++) {				\
			struct iq_grp g = GRP(&w[b], ib);		\
									\
			acc = grp_acc(acc, &g, q8_load(&a[b], ib));	\
		}							\
		s += D(&w[b]) * a[b].d * ((float)hsum_i32(acc) * TERM);	\
	}								\
	return FACTOR * s;						\
}									\
AVX2 static void dot4_##name(const void *wv, const void *xv,		\
			     size_t stride, int n, float *out)		\
{									\
	const blk_t *w = wv;						\
	const struct tp_block_q8_k *a[4];				\
	__m128 s = _mm_setzero_ps();					\
	int b, ib, t;							\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		__m256i acc[4];						\
		__m128 dx;						\
									\
		k_rows(xv, stride, b, 4, a);				\
		UNROLL for (t = 0; t < 4; t++)				\
			acc[t] = _mm256_setzero_si256();		\
		UNROLL8 for (ib = 0; ib < 8; ib++) {				\
			struct iq_grp g = GRP(&w[b], ib);		\
									\
			UNROLL for (t = 0; t < 4; t++)			\
				acc[t] = grp_acc(acc[t], &g,		\
						 q8_load(a[t], ib));	\
		}							\
		dx = _mm_setr_ps(a[0]->d, a[1]->d, a[2]->d, a[3]->d);	\
		s = iq_terms4(s, _mm_set1_ps(D(&w[b])), dx,		\
			      hsum4_i32(acc[0], acc[1], acc[2], acc[3]), TERM); \
	}								\
	_mm_storeu_ps(out, _mm_mul_ps(_mm_set1_ps(FACTOR), s));		\
}									\
AVX2 static void rows4_##name(const void *wv, size_t wstride,		\
			      size_t bstride, const void *xv, int n,	\
			      float *out)				\
{									\
	const struct tp_block_q8_k *a = xv;				\
	__m128 s = _mm_setzero_ps();					\
	int b, ib, r;							\
									\
	for (b = 0; b < n / TP_QK_K; b++) {				\
		const blk_t *w[4];					\
		__m256i acc[4];						\
		__m128 d;						\
									\
		UNROLL for (r = 0; r < 4; r++) {			\
			w[r] = (const void *)((const char *)wv +	\
				r * wstride + b * bstride);		\
			acc[r] = _mm256_setzero_si256();		\
		}							\
		UNROLL for (r = 0; r < 4; r++)				\
			prefetch_ahead(w[r], 1);			\
		UNROLL8 for (ib = 0; ib < 8; ib++) {				\
			__m256i q = q8_load(&a[b], ib);			\
									\
			UNROLL for (r = 0; r < 4; r++) {		\
				struct iq_grp g = GRP(w[r], ib);	\
									\
				acc[r] = grp_acc(acc[r], &g, q);	\
			}						\
		}							\
		d = _mm_setr_ps(D(w[0]), D(w[1]), D(w[2]), D(w[3]));	\
		s = iq_terms4(s, d, _mm_set1_ps(a[b].d),		\
			      hsum4_i32(acc[0], acc[1], acc[2], acc[3]), TERM); \
	}								\
	_mm_storeu_ps(out, _mm_mul_ps(_mm_set1_ps(FACTOR), s));		\
}

IQ_KERNELS(iq2_xxs, struct tp_block_iq2_xxs, iq2_xxs_grp, d_f16, 1.0f, 0.125f)
IQ_KERNELS(iq2_xs, struct tp_block_iq2_xs, iq2_xs_grp, d_f16, 1.0f, 0.125f)
IQ_KERNELS(iq2_s, struct tp_block_iq2_s, iq2_s_grp, d_f16, 1.0f, 0.125f)
IQ_KERNELS(iq3_xxs, struct tp_block_iq3_xxs, iq3_xxs_grp, d_f16, 1.0f, 0.25f)
IQ_KERNELS(iq3_s, struct tp_block_iq3_s, iq3_s_grp, d_f16, 1.0f, 1.0f)
IQ_KERNELS(iq1_s, struct tp_block_iq1_s, iq1_s_grp, d_f16, 0.125f, 1.0f)
IQ_KERNELS(iq1_m, struct tp_block_iq1_m, iq1_m_grp, d_iq1_m, 0.125f, 1.0f)

void tp_kernels_fill_avx2_iq(struct tp_kernels *k)
{
	IQ_FILL(k);
}
#endif /* __x86_64__ */
