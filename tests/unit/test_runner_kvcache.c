// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The KV cache's F16 rows (tools/runner/kernels/kvcache.c): every F16
 * value survives a store exactly; infinities, NaN, overflow and
 * subnormals convert as IEEE round-to-nearest-even says (values worked
 * out by hand here, not by the code under test); the F16C paths give the
 * bits of the portable C on random and special inputs; and the cache's
 * products are the plain sums over the converted values. The model's
 * logits with an F16 cache are test_runner_model's.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/kernels.h"
#include "kernels/kvcache.h"
#include "kernels/vector.h"
#include "tap.h"

static uint64_t rs = 777;

static uint32_t rnd32(void)
{
	rs = rs * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rs >> 32);
}

static float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint16_t store1(enum tp_isa isa, float f)
{
	/* 9 copies: the F16C loop's 8 and the tail's one */
	float x[9];
	uint16_t h[9];
	int i;

	for (i = 0; i < 9; i++)
		x[i] = f;
	tp_kv_f16_store_isa(isa, h, x, 9);
	for (i = 1; i < 9; i++)
		if (h[i] != h[0])
			return 0xdead;	/* lanes disagree: no F16 is that */
	return h[0];
}

/* The ISAs to check: generic, and F16C where the CPU has it. */
static int isas(enum tp_isa *out)
{
	int n = 0;

	out[n++] = TP_ISA_GENERIC;
	if (tp_kernels_for(TP_ISA_AVX2))
		out[n++] = TP_ISA_AVX2;
	return n;
}

static void test_round_trip(void)
{
	enum tp_isa is[2];
	int k, n = isas(is);

	for (k = 0; k < n; k++) {
		unsigned bad = 0, nan_bad = 0;
		uint32_t h;

		for (h = 0; h < 65536; h++) {
			uint16_t got = store1(is[k], tp_f16_to_f32((uint16_t)h));

			if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
				/* NaN: stays NaN of the same sign, quieted */
				nan_bad += (got & 0xfe00) != ((h & 0x8000) | 0x7e00);
			} else {
				bad += got != h;
			}
		}
		ok(!bad && !nan_bad,
		   "%s: every F16 value (subnormals, +-0, +-inf) survives f16 -> f32 -> cache row exactly (%u wrong), every NaN stays a quiet NaN of its sign (%u wrong)",
		   tp_isa_name(is[k]), bad, nan_bad);
	}
}

static void test_specials(void)
{
	static const struct { uint32_t f; uint16_t h; const char *what; } v[] = {
		{ 0x7f800000, 0x7c00, "+inf" },
		{ 0xff800000, 0xfc00, "-inf" },
		{ 0x477fe000, 0x7bff, "65504, the largest F16" },
		{ 0x477fefff, 0x7bff, "just below 65520" },
		{ 0x477ff000, 0x7c00, "65520 rounds to inf" },
		{ 0x7f7fffff, 0x7c00, "FLT_MAX overflows to inf" },
		{ 0x33800000, 0x0001, "2^-24, the smallest subnormal" },
		{ 0x33000000, 0x0000, "2^-25: tie, to even 0" },
		{ 0x33000001, 0x0001, "just above 2^-25" },
		{ 0x33c00000, 0x0002, "3 x 2^-25: tie, to even 2" },
		{ 0x387fc000, 0x03ff, "the largest subnormal" },
		{ 0x387fe000, 0x0400, "rounds up to the smallest normal" },
		{ 0x80000001, 0x8000, "a float subnormal: -0" },
		{ 0x3f801000, 0x3c00, "1 + 2^-11: tie, to even 1" },
		{ 0x3f803000, 0x3c02, "1 + 3 x 2^-11: tie, to even" },
		{ 0x3f801001, 0x3c01, "just above the tie" },
		{ 0xc0490fdb, 0xc248, "-pi" },
	};
	enum tp_isa is[2];
	int k, i, n = isas(is);

	for (k = 0; k < n; k++) {
		int bad = 0;

		for (i = 0; i < (int)(sizeof(v) / sizeof(v[0])); i++) {
			uint16_t got = store1(is[k], u2f(v[i].f));

			if (got != v[i].h) {
				diag("%s: %s (%08x): %04x, expected %04x",
				     tp_isa_name(is[k]), v[i].what, v[i].f, got,
				     v[i].h);
				bad++;
			}
		}
		ok(!bad, "%s: %d hand-worked values: infinities, overflow, subnormal ties, ties to even",
		   tp_isa_name(is[k]), (int)(sizeof(v) / sizeof(v[0])));
		ok((store1(is[k], u2f(0x7fc00000)) & 0x7e00) == 0x7e00 &&
		   (store1(is[k], u2f(0xff800001)) & 0xfe00) == 0xfe00 &&
		   isnan(tp_f16_to_f32(store1(is[k], u2f(0x7f800001)))),
		   "%s: NaN in, NaN out (a signalling one with its payload below F16's precision too)",
		   tp_isa_name(is[k]));
	}
}

/* F16C against the portable C on random bit patterns: every exponent,
 * NaN and infinity among them; rows of lengths that leave a tail. */
static void test_f16c_same_bits(void)
{
	enum { N = 4099 };
	static float x[N], out_g[N], out_v[N];
	static uint16_t hg[N], hv[N];
	int i, len, bad = 0, abad = 0;

	if (!tp_kernels_for(TP_ISA_AVX2)) {
		skip(3, "no F16C on this CPU");
		return;
	}
	for (i = 0; i < N; i++)
		x[i] = u2f(rnd32());
	for (len = N; len >= 1; len = len / 3) {
		tp_kv_f16_store_isa(TP_ISA_GENERIC, hg, x, len);
		tp_kv_f16_store_isa(TP_ISA_AVX2, hv, x, len);
		bad += memcmp(hg, hv, (size_t)len * sizeof(uint16_t)) != 0;
	}
	ok(!bad, "F16C stores the portable C's bits for %d random float bit patterns (rows of 4099, 1366, ..., 1)",
	   N);
	bad = 0;
	for (len = N; len >= 1; len = len / 3) {
		memcpy(out_g, x, (size_t)len * sizeof(float));
		memcpy(out_v, x, (size_t)len * sizeof(float));
		tp_kv_f16_round_isa(TP_ISA_GENERIC, out_g, len);
		tp_kv_f16_round_isa(TP_ISA_AVX2, out_v, len);
		bad += memcmp(out_g, out_v, (size_t)len * sizeof(float)) != 0;
		for (i = 0; i < len && !bad; i++)
			bad += !isnan(x[i]) && memcmp(&out_g[i],
					&tp_f16_table[hg[i]], sizeof(float));
	}
	ok(!bad, "F16C rounds floats to F16 values with the portable C's bits, the values of the stored row");
	/* the sum over V: finite rows, accumulated over 50 rows */
	for (i = 0; i < N; i++)
		hg[i] = tp_f32_to_f16(u2f((rnd32() & 0x8fffffff) | 0x30000000));
	memset(out_g, 0, sizeof(out_g));
	memset(out_v, 0, sizeof(out_v));
	for (len = 0; len < 50; len++) {
		float s = u2f((rnd32() & 0x007fffff) | 0x3e000000);

		tp_kv_f16_axpy_isa(TP_ISA_GENERIC, out_g, s, hg + len, N - 50);
		tp_kv_f16_axpy_isa(TP_ISA_AVX2, out_v, s, hg + len, N - 50);
	}
	abad = memcmp(out_g, out_v, (N - 50) * sizeof(float)) != 0;
	ok(!abad, "F16C's sum over V (50 rows of 4049) has the portable C's bits");
}

/* The cache's products: the dot and the sum over V of an F16 row are
 * those of the converted floats; F32 rows are stored as they are. */
static void test_products(void)
{
	enum { N = 576 };
	float x[N], q[N], conv[N], out[N], ref[N], back[N];
	uint16_t h[N];
	double dref = 0;
	int i, bad = 0;

	for (i = 0; i < N; i++) {
		x[i] = (float)((int)(rnd32() % 20001) - 10000) / 997.0f;
		q[i] = (float)((int)(rnd32() % 20001) - 10000) / 1009.0f;
	}
	tp_kv_store(TP_F16, h, x, N);
	for (i = 0; i < N; i++) {
		conv[i] = tp_f16_to_f32(h[i]);
		bad += fabsf(conv[i] - x[i]) > fabsf(x[i]) * 0x1p-11f;
	}
	ok(!bad, "an F16 row is within half an F16 ulp of its floats");
	tp_kv_round(TP_F16, q, N);
	for (i = 0; i < N; i++)
		dref += (double)conv[i] * q[i];
	ok(fabs(tp_kv_dot(TP_F16, h, q, N) - dref) < 1e-3 * fabs(dref) + 1e-3,
	   "F16 row . q (q in F16) = the double sum over the F16 values (%g vs %g)",
	   (double)tp_kv_dot(TP_F16, h, q, N), dref);
	memset(out, 0, sizeof(out));
	tp_kv_axpy(TP_F16, out, 0.375f, h, N);
	for (i = 0; i < N; i++)
		ref[i] = 0.375f * conv[i];
	ok(!memcmp(out, ref, sizeof(out)),
	   "the sum over V adds S x the F16 values, exactly");
	tp_kv_store(TP_F32, back, x, N);
	ok(!memcmp(back, x, sizeof(x)) && tp_kv_elt_bytes(TP_F32) == 4 &&
	   tp_kv_elt_bytes(TP_F16) == 2 && tp_kv_type_ok(TP_F16) &&
	   !tp_kv_type_ok(TP_Q8_0),
	   "F32 rows as they are; 4 and 2 bytes a value; no other cache types");
}

int main(void)
{
	plan(NO_PLAN);
	tp_math_init();
	test_round_trip();
	test_specials();
	test_f16c_same_bits();
	test_products();
	return done();
}
