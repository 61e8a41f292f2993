// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tprun's math kernels (tools/runner/kernels/) against double references. */
#include <math.h>
#include <stdint.h>

#include "kernels/float16.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "kernels/types.h"
#include "kernels/vector.h"
#include "tap.h"

static uint64_t rs = 12345;

static double urand(void)	/* [-1, 1) */
{
	rs = rs * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rs >> 11) / 4503599627370496.0 - 1.0;
}

static void test_f16(void)
{
	static const struct { float f; uint16_t h; } known[] = {
		{ 0.0f, 0x0000 }, { -0.0f, 0x8000 }, { 1.0f, 0x3c00 },
		{ -2.0f, 0xc000 }, { 0.5f, 0x3800 }, { 65504.0f, 0x7bff },
		{ 65519.0f, 0x7bff }, { 65520.0f, 0x7c00 }, { 1e9f, 0x7c00 },
		{ -1e9f, 0xfc00 }, { 0x1p-24f, 0x0001 }, { 0x1p-25f, 0x0000 },
		{ 0x1.8p-25f, 0x0001 }, { 0x1p-14f, 0x0400 },
		{ 0x1.ff8p-15f, 0x03ff },	/* largest subnormal */
		{ 0x1.ffcp-15f, 0x0400 },	/* tie: up to the smallest normal */
		{ 1.0f + 0x1p-11f, 0x3c00 },	/* tie: to even */
		{ 1.0f + 0x3p-11f, 0x3c02 },	/* tie: to even (up) */
		{ 1.0f + 0x1p-10f, 0x3c01 }, { INFINITY, 0x7c00 },
	};
	unsigned i, bad = 0;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (tp_f32_to_f16(known[i].f) != known[i].h) {
			diag("f16(%a) = %04x, expected %04x", (double)known[i].f,
			     tp_f32_to_f16(known[i].f), known[i].h);
			bad++;
		}
	ok(!bad, "f32 -> f16: %u known values, rounding to nearest even",
	   (unsigned)(sizeof(known) / sizeof(known[0])));
	for (i = 0, bad = 0; i < 65536; i++) {
		float f = tp_f16_to_f32((uint16_t)i);

		if (isnan(f)) {
			if (!isnan(tp_f16_to_f32(tp_f32_to_f16(f))))
				bad++;
		} else if (tp_f32_to_f16(f) != i) {
			bad++;
		}
	}
	ok(!bad, "every f16 value survives f16 -> f32 -> f16 (%u wrong)", bad);
	ok(tp_f16_to_f32(0x3555) > 0.333f && tp_f16_to_f32(0x3555) < 0.3334f &&
	   tp_f16_to_f32(0x0001) == 0x1p-24f && tp_f16_to_f32(0x7bff) == 65504.0f,
	   "f16 -> f32: 1/3, smallest subnormal, largest normal");
	ok(tp_f32_to_bf16(1.0f) == 0x3f80 && tp_bf16_to_f32(0xc000) == -2.0f &&
	   tp_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80 &&
	   tp_f32_to_bf16(1.0f + 0x3p-8f) == 0x3f82 &&
	   isnan(tp_bf16_to_f32(tp_f32_to_bf16(NAN))),
	   "bf16: values, ties to even, NaN");
}

static void test_q8_0(void)
{
	float x[64], y[64], err = 0, d;
	struct tp_block_q8_0 b[2];
	int i;

	for (i = 0; i < 32; i++)
		x[i] = (float)(i - 16);
	for (i = 32; i < 64; i++)
		x[i] = 0;
	tp_quantize_q8_0(x, b, 64);
	ok(b[0].d == tp_f32_to_f16(16.0f / 127) && b[0].qs[0] == -127 &&
	   b[0].qs[16] == 0 && b[0].qs[24] == 64 && b[0].qs[31] == 119,
	   "q8_0: scale max|x|/127, q = round(x/d) half away from zero");
	ok(b[1].d == 0 && b[1].qs[5] == 0, "q8_0: a zero block has scale 0");
	for (i = 0; i < 64; i++)
		x[i] = (float)(urand() * 3);
	tp_quantize_q8_0(x, b, 64);
	tp_dequantize_q8_0(b, y, 64);
	for (i = 0; i < 64; i++) {
		d = tp_f16_to_f32(b[i / 32].d);
		if (fabsf(y[i] - x[i]) / d > err)
			err = fabsf(y[i] - x[i]) / d;
	}
	ok(err <= 0.5f + 1e-3f, "q8_0 round trip error <= scale/2 (worst %.3f)",
	   (double)err);
	ok(tp_type_bytes(TP_Q8_0, 64) == 68 && tp_type_bytes(TP_F16, 3) == 6 &&
	   tp_type_bytes(TP_F32, 3) == 12 && tp_type_block(TP_Q8_0) == 32 &&
	   tp_type_block(TP_F32) == 1 && !tp_type_name((enum tp_type)34),
	   "type sizes, blocks, names");
}

/* The dot product of every type against a double reference. */
static void test_dot(void)
{
	enum { N = 96 + 5 };
	float w[N], x[N], wr[N], ref32;
	uint16_t h[N];
	struct tp_block_q8_0 q[3];
	double ref = 0;
	int i;

	for (i = 0; i < N; i++) {
		w[i] = (float)urand();
		x[i] = (float)urand();
		ref += (double)w[i] * x[i];
	}
	ok(fabs(tp_dot(TP_F32, w, x, N) - ref) < 1e-5,
	   "dot f32 (101 elements, tail) matches double (%g vs %g)",
	   (double)tp_dot(TP_F32, w, x, N), ref);
	tp_row_from_f32(TP_F16, w, h, N);
	tp_row_to_f32(TP_F16, h, wr, N);
	ref32 = tp_dot_f32(wr, x, N);
	ok(tp_dot(TP_F16, h, x, N) == ref32,
	   "dot f16 gives exactly the bits of f32 on the converted row");
	tp_row_from_f32(TP_BF16, w, h, N);
	tp_row_to_f32(TP_BF16, h, wr, N);
	ok(tp_dot(TP_BF16, h, x, N) == tp_dot_f32(wr, x, N),
	   "dot bf16 gives exactly the bits of f32 on the converted row");
	tp_quantize_q8_0(w, q, 96);
	tp_dequantize_q8_0(q, wr, 96);
	for (i = 0, ref = 0; i < 96; i++)
		ref += (double)wr[i] * x[i];
	ok(fabs(tp_dot(TP_Q8_0, q, x, 96) - ref) < 1e-5,
	   "dot q8_0 matches double on the dequantised row (%g vs %g)",
	   (double)tp_dot(TP_Q8_0, q, x, 96), ref);
}

static void test_matmul(void)
{
	enum { R = 7, C = 37, B = 3 };
	float w[R * C], x[B * C], y[B * R], y1[R];
	struct tp_mat m = { .type = TP_F32, .rows = R, .cols = C,
			    .stride = C * sizeof(float), .data = w };
	struct tp_mat sub = { .type = TP_F32, .rows = R - 2, .cols = C - 5,
			      .stride = C * sizeof(float),
			      .data = w + 2 * C + 5 };
	double worst = 0;
	int i, j, b, same = 1;

	for (i = 0; i < R * C; i++)
		w[i] = (float)urand();
	for (i = 0; i < B * C; i++)
		x[i] = (float)urand();
	tp_matmul(y, x, &m, B);
	for (b = 0; b < B; b++)
		for (i = 0; i < R; i++) {
			double s = 0;

			for (j = 0; j < C; j++)
				s += (double)w[i * C + j] * x[b * C + j];
			if (fabs(s - y[b * R + i]) > worst)
				worst = fabs(s - y[b * R + i]);
		}
	ok(worst < 1e-5, "matmul 7x37 x 3 inputs matches double (worst %g)",
	   worst);
	for (b = 0; b < B; b++) {
		tp_matmul(y1, x + b * C, &m, 1);
		for (i = 0; i < R; i++)
			same &= y1[i] == y[b * R + i];
	}
	ok(same, "matmul of a batch gives the bits of one input at a time");
	tp_matmul(y1, x, &sub, 1);
	for (i = 0, same = 1; i < R - 2; i++)
		same &= y1[i] == tp_kernels()->dot[TP_F32](w + (i + 2) * C + 5,
							   x, C - 5);
	ok(same, "matmul on a strided view (a shard of rows and columns)");
}

static void test_rmsnorm(void)
{
	enum { N = 19 };
	float x[N], w[N], y[N], z[N];
	double ss = 0, worst = 0;
	int i;

	for (i = 0; i < N; i++) {
		x[i] = (float)(urand() * 4);
		w[i] = (float)(1 + urand() / 4);
		ss += (double)x[i] * x[i];
	}
	tp_rmsnorm(y, x, w, N, 1e-5f);
	for (i = 0; i < N; i++) {
		double r = x[i] / sqrt(ss / N + 1e-5) * w[i];

		if (fabs(r - y[i]) > worst)
			worst = fabs(r - y[i]);
	}
	ok(worst < 1e-5, "rmsnorm matches x / sqrt(mean(x^2) + eps) * w (worst %g)",
	   worst);
	for (i = 0; i < N; i++)
		z[i] = x[i] * 1000;
	tp_rmsnorm(z, z, w, N, 0);
	for (i = 0, worst = 0; i < N; i++)
		if (fabs(z[i] - y[i]) > worst)
			worst = fabs(z[i] - y[i]);
	ok(worst < 1e-4, "rmsnorm is scale invariant and works in place");
}

static void test_rope(void)
{
	float cs[16], v[16], v0[16], q[16], k[16], a, b;
	int i, same = 1;

	tp_rope_table(cs, 16, 0, 10000);
	for (i = 0; i < 16; i++)
		v[i] = v0[i] = (float)urand();
	tp_rope_apply(v, 1, 16, 16, cs);
	for (i = 0; i < 16; i++)
		same &= v[i] == v0[i];
	ok(same, "rope at position 0 is the identity");

	tp_rope_table(cs, 4, 1, 10000);
	v[0] = 1, v[1] = 0, v[2] = 0, v[3] = 1, v[4] = 7;
	tp_rope_apply(v, 1, 6, 4, cs);
	ok(fabsf(v[0] - cosf(1)) < 1e-6f && fabsf(v[1] - sinf(1)) < 1e-6f &&
	   fabsf(v[2] + sinf(0.01f)) < 1e-6f && fabsf(v[3] - cosf(0.01f)) < 1e-6f &&
	   v[4] == 7,
	   "rope rotates adjacent pairs by pos * base^(-2i/rot), leaves the rest");

	/* q.k after rotation depends only on the distance of the positions */
	for (i = 0; i < 16; i++) {
		q[i] = (float)urand();
		k[i] = (float)urand();
	}
	memcpy(v, q, sizeof(v));
	memcpy(v0, k, sizeof(v0));
	tp_rope_table(cs, 16, 9, 10000);
	tp_rope_apply(v, 1, 16, 16, cs);
	tp_rope_table(cs, 16, 4, 10000);
	tp_rope_apply(v0, 1, 16, 16, cs);
	a = tp_dot_f32(v, v0, 16);
	memcpy(v, q, sizeof(v));
	memcpy(v0, k, sizeof(v0));
	tp_rope_table(cs, 16, 105, 10000);
	tp_rope_apply(v, 1, 16, 16, cs);
	tp_rope_table(cs, 16, 100, 10000);
	tp_rope_apply(v0, 1, 16, 16, cs);
	b = tp_dot_f32(v, v0, 16);
	ok(fabsf(a - b) < 1e-4f, "rope: q.k depends on the relative position (%g, %g)",
	   (double)a, (double)b);
	for (i = 0, same = 1; i < 8; i++)
		same &= fabsf(hypotf(v[2 * i], v[2 * i + 1]) -
			      hypotf(q[2 * i], q[2 * i + 1])) < 1e-5f;
	ok(same, "rope keeps the length of every pair");
}

/* llama.cpp's RoPE variants: linear scaling, frequency factors, neox. */
static void test_rope_ext(void)
{
	float a[16], b[16], f[8], v[16], w[16];
	int i, same = 1;

	tp_rope_table(a, 16, 3, 10000);
	tp_rope_table_ext(b, 16, 12, 10000, 0.25f, NULL);
	ok(!memcmp(a, b, sizeof(a)),
	   "linear scaling 1/4: position 12 rotates as position 3");
	for (i = 0; i < 8; i++)
		f[i] = i < 4 ? 1 : 2;
	tp_rope_table_ext(b, 16, 6, 10000, 0, f);
	tp_rope_table(a, 16, 6, 10000);
	for (i = 0; i < 4; i++)
		same &= a[2 * i] == b[2 * i] && a[2 * i + 1] == b[2 * i + 1];
	tp_rope_table(a, 16, 3, 10000);
	for (i = 4; i < 8; i++)
		same &= fabsf(a[2 * i] - b[2 * i]) < 1e-6f &&
			fabsf(a[2 * i + 1] - b[2 * i + 1]) < 1e-6f;
	ok(same, "frequency factor 2 halves those pairs' angle, 1 keeps it");
	for (i = 0; i < 16; i++)
		v[i] = w[i] = (float)(i + 1);
	tp_rope_table(a, 8, 5, 10000);
	tp_rope_apply_neox(v, 2, 8, 8, a);	/* two heads of 8 */
	same = 1;
	for (i = 0; i < 4; i++) {
		float c = a[2 * i], sn = a[2 * i + 1];

		same &= v[i] == w[i] * c - w[i + 4] * sn &&
			v[i + 4] == w[i] * sn + w[i + 4] * c &&
			v[8 + i] == w[8 + i] * c - w[12 + i] * sn;
	}
	ok(same, "neox: element i pairs with i + rot/2, in each head");
}

static void test_softmax(void)
{
	float x[5] = { 1, 2, 3, 4, 5 }, big[3] = { 1000, 1001, 1000 }, u[4] = { 0 };
	double e = 0, worst = 0, sum = 0;
	int i;

	for (i = 0; i < 5; i++)
		e += exp(i + 1);
	tp_softmax(x, 5);
	for (i = 0; i < 5; i++) {
		if (fabs(x[i] - exp(i + 1) / e) > worst)
			worst = fabs(x[i] - exp(i + 1) / e);
		sum += x[i];
	}
	ok(worst < 1e-6 && fabs(sum - 1) < 1e-6, "softmax matches exp/sum");
	tp_softmax(big, 3);
	ok(isfinite(big[0]) && fabsf(big[1] - 1 / (1 + 2 / expf(1))) < 1e-6f,
	   "softmax of large values: no overflow");
	tp_softmax(u, 4);
	ok(u[0] == 0.25f && u[3] == 0.25f, "softmax of equal values is uniform");
}

static void test_silu(void)
{
	float g[3] = { 0, 30, -30 }, up[3] = { 5, 2, 2 };

	ok(tp_silu(0) == 0 && fabsf(tp_silu(1) - 1 / (1 + expf(-1))) < 1e-7f,
	   "silu(0) = 0, silu(1) = 1/(1+e^-1)");
	tp_swiglu(g, up, 3);
	ok(g[0] == 0 && fabsf(g[1] - 60) < 1e-4f && fabsf(g[2]) < 1e-10f,
	   "swiglu = silu(gate) * up");
}

int main(void)
{
	plan(NO_PLAN);
	tp_math_init();
	test_f16();
	test_q8_0();
	test_dot();
	test_matmul();
	test_rmsnorm();
	test_rope();
	test_rope_ext();
	test_softmax();
	test_silu();
	return done();
}
