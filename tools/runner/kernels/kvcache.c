// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The KV cache's rows in F32 or F16 (kvcache.h): storing a row, rounding
 * q and the softmax weights, and the attention's two products over a
 * row, the F16 ones converting 8 values at a time with F16C where the CPU
 * has it (the instruction set tp_kernels() chose, so TPRUN_ISA=generic
 * runs the portable C). The F16C paths give the bits of the portable
 * ones: F16C rounds to nearest even as tp_f32_to_f16() does (NaN quieted,
 * overflow to infinity, subnormals rounded), and the sum over V
 * multiplies and adds lane by lane as the C loop does, in no other order.
 */
#include <string.h>

#include "kernels/float16.h"
#include "kernels/kvcache.h"
#include "kernels/vector.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define F16C __attribute__((target("avx,f16c")))

F16C static void store_f16c(uint16_t *row, const float *x, int n)
{
	int i = 0;

	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(row + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(x + i),
						 _MM_FROUND_TO_NEAREST_INT |
						 _MM_FROUND_NO_EXC));
	for (; i < n; i++)
		row[i] = tp_f32_to_f16(x[i]);
}

F16C static void round_f16c(float *x, int n)
{
	int i = 0;

	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm256_cvtps_ph(
			_mm256_loadu_ps(x + i),
			_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
	for (; i < n; i++)
		x[i] = tp_f16_table[tp_f32_to_f16(x[i])];
}

F16C static void axpy_f16c(float *out, float s, const uint16_t *row, int n)
{
	__m256 vs = _mm256_set1_ps(s);
	int i = 0;

	for (; i + 8 <= n; i += 8) {
		__m256 v = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)
							   (row + i)));

		_mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i),
							_mm256_mul_ps(vs, v)));
	}
	for (; i < n; i++)
		out[i] += s * tp_f16_table[row[i]];
}
#endif

static void store_generic(uint16_t *row, const float *x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		row[i] = tp_f32_to_f16(x[i]);
}

static void round_generic(float *x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		x[i] = tp_f16_table[tp_f32_to_f16(x[i])];
}

static void axpy_generic(float *out, float s, const uint16_t *row, int n)
{
	int i;

	for (i = 0; i < n; i++)
		out[i] += s * tp_f16_table[row[i]];
}

/* F16C for ISA when the CPU has it (every x86 level above generic does). */
static int use_f16c(enum tp_isa isa)
{
#if defined(__x86_64__)
	return isa >= TP_ISA_AVX2 && tp_kernels_for(TP_ISA_AVX2);
#else
	(void)isa;
	return 0;
#endif
}

void tp_kv_f16_store_isa(enum tp_isa isa, uint16_t *row, const float *x,
			 int n)
{
#if defined(__x86_64__)
	if (use_f16c(isa)) {
		store_f16c(row, x, n);
		return;
	}
#endif
	store_generic(row, x, n);
}

void tp_kv_f16_round_isa(enum tp_isa isa, float *x, int n)
{
#if defined(__x86_64__)
	if (use_f16c(isa)) {
		round_f16c(x, n);
		return;
	}
#endif
	round_generic(x, n);
}

void tp_kv_f16_axpy_isa(enum tp_isa isa, float *out, float s,
			const uint16_t *row, int n)
{
#if defined(__x86_64__)
	if (use_f16c(isa)) {
		axpy_f16c(out, s, row, n);
		return;
	}
#endif
	axpy_generic(out, s, row, n);
}

int tp_kv_type_ok(enum tp_type t)
{
	return t == TP_F32 || t == TP_F16;
}

size_t tp_kv_elt_bytes(enum tp_type t)
{
	return t == TP_F16 ? sizeof(uint16_t) : sizeof(float);
}

void tp_kv_store(enum tp_type t, void *row, const float *x, int n)
{
	if (t == TP_F16)
		tp_kv_f16_store_isa(tp_kernels()->isa, row, x, n);
	else
		memcpy(row, x, (size_t)n * sizeof(float));
}

void tp_kv_round(enum tp_type t, float *x, int n)
{
	if (t == TP_F16)
		tp_kv_f16_round_isa(tp_kernels()->isa, x, n);
}

float tp_kv_dot(enum tp_type t, const void *row, const float *x, int n)
{
	if (t == TP_F16)	/* llama.cpp's ggml_vec_dot_f16 order */
		return tp_kernels()->dot[TP_F16](row, x, n);
	return tp_dot_f32(row, x, n);
}

void tp_kv_axpy(enum tp_type t, float *out, float s, const void *row, int n)
{
	const float *f = row;
	int i;

	if (t == TP_F16) {
		tp_kv_f16_axpy_isa(tp_kernels()->isa, out, s, row, n);
		return;
	}
	for (i = 0; i < n; i++)
		out[i] += s * f[i];
}
