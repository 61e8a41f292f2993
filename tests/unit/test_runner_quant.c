// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's 4- and 5-bit block types (tools/runner/kernels/quant.c): the block
 * layouts GGUF defines, quantisation error, and the dot products on the
 * blocks against Q8_0/Q8_1 activations, and tp_matmul's use of them,
 * against double references.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/float16.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "tap.h"

static uint64_t rs = 777;

static double urand(void)	/* [-1, 1) */
{
	rs = rs * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(rs >> 11) / 4503599627370496.0 - 1.0;
}

static const enum tp_type types[] = { TP_Q4_0, TP_Q4_1, TP_Q5_0, TP_Q5_1 };

static void test_layout(void)
{
	struct tp_block_q4_0 a = { 0x3c00, { 0 } };	/* d = 1 */
	struct tp_block_q4_1 b = { 0x4000, 0x3c00, { 0 } };	/* d 2, m 1 */
	struct tp_block_q5_0 c = { 0x3c00, { 0 }, { 0 } };
	struct tp_block_q5_1 e = { 0x3c00, 0xbc00, { 0 }, { 0 } }; /* m -1 */
	float y[32];

	a.qs[0] = 0x9f;		/* element 0: 15 - 8, element 16: 9 - 8 */
	tp_row_to_f32(TP_Q4_0, &a, y, 32);
	ok(y[0] == 7 && y[16] == 1 && y[1] == -8,
	   "q4_0: low nibble is element j, high nibble j+16, minus 8");
	b.qs[3] = 0x52;
	tp_row_to_f32(TP_Q4_1, &b, y, 32);
	ok(y[3] == 5 && y[19] == 11 && y[0] == 1, "q4_1: d q + m");
	c.qs[2] = 0x31;
	c.qh[0] = 0x04;		/* bit 2: element 2's fifth bit */
	c.qh[2] = 0x04;		/* bit 18: element 18's */
	tp_row_to_f32(TP_Q5_0, &c, y, 32);
	ok(y[2] == 1 && y[18] == 3 && y[0] == -16,
	   "q5_0: qh bit j is element j's fifth bit, bit j+16 element j+16's");
	e.qs[0] = 0xff;
	e.qh[3] = 0x80;		/* bit 31: element 31 */
	tp_row_to_f32(TP_Q5_1, &e, y, 32);
	ok(y[0] == 14 && y[16] == 14 && y[31] == 15 && y[1] == -1,
	   "q5_1: d q + m with the fifth bit");
	is_int((long long)tp_type_bytes(TP_Q4_0, 64), 36, "q4_0: 18 bytes a block");
	is_int((long long)tp_type_bytes(TP_Q5_1, 64), 48, "q5_1: 24 bytes a block");
}

static void test_error(void)
{
	float x[256], y[256];
	unsigned char row[256 * 4];
	size_t i, k;

	for (i = 0; i < 256; i++)
		x[i] = (float)urand();
	for (k = 0; k < 4; k++) {
		double worst = 0, bound = types[k] == TP_Q4_0 ? 1.0 / 8 :
				types[k] == TP_Q4_1 ? 2.0 / 15 / 2 + 1e-3 :
				types[k] == TP_Q5_0 ? 1.0 / 16 : 2.0 / 31 / 2 + 1e-3;

		tp_row_from_f32(types[k], x, row, 256);
		tp_row_to_f32(types[k], row, y, 256);
		for (i = 0; i < 256; i++)
			if (fabs((double)x[i] - y[i]) > worst)
				worst = fabs((double)x[i] - y[i]);
		ok(worst <= bound, "%s: round trip error %.4f <= %.4f",
		   tp_type_name(types[k]), worst, bound);
	}
}

/* tp_matmul on blocks: the dequantised weights against the activations
 * quantised as llama.cpp, summed in double. */
static void test_matmul(void)
{
	enum { R = 3, C = 96 };
	float w[R * C], x[C], y[R], wd[C], xd[C];
	unsigned char row[R * C];
	struct tp_block_q8_0 q8[C / 32];
	struct tp_block_q8_1 q81[C / 32];
	size_t k;
	int i, j;

	for (i = 0; i < R * C; i++)
		w[i] = (float)urand();
	for (i = 0; i < C; i++)
		x[i] = (float)(urand() * 3);
	tp_act_q8_1(x, q81, C);
	for (i = 0; i < C / 32; i++) {
		memcpy(&q8[i].d, &q81[i].d, 2);
		memcpy(q8[i].qs, q81[i].qs, 32);
	}
	tp_row_to_f32(TP_Q8_0, q8, xd, C);
	for (k = 0; k < 4; k++) {
		struct tp_mat m = { .type = types[k], .rows = R, .cols = C,
				    .stride = tp_type_bytes(types[k], C),
				    .data = row };
		double worst = 0;

		for (i = 0; i < R; i++)
			tp_row_from_f32(types[k], w + i * C,
					row + (size_t)i * m.stride, C);
		tp_matmul(y, x, &m, 1);
		for (i = 0; i < R; i++) {
			double ref = 0;

			tp_row_to_f32(types[k], row + (size_t)i * m.stride, wd, C);
			for (j = 0; j < C; j++)
				ref += (double)wd[j] * xd[j];
			if (fabs(ref - y[i]) > worst)
				worst = fabs(ref - y[i]);
		}
		/* Q8_1's s is d x sum rounded to F16: 1e-3 relative */
		ok(worst < (k % 2 ? 2e-2 : 1e-4),
		   "%s: matmul on blocks = double on the dequantised blocks (%.2g)",
		   tp_type_name(types[k]), worst);
	}
}

int main(void)
{
	plan(14);
	tp_math_init();
	test_layout();
	test_error();
	test_matmul();
	return done();
}
