// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tp_matmul: convert the activations once, then rows in parallel. */
#include <stdlib.h>

#include "../pool.h"
#include "../util.h"
#include "kernels.h"
#include "matmul.h"

struct mm_job {
	float *y;
	const char *act;	/* B rows of converted activations */
	size_t act_stride;
	const struct tp_mat *w;
	int batch;
	tp_dot_fn *dot;
	tp_dot4_fn *dot4;
};

/* Rows [r0, r1) of W against every input: the row stays in L1 while the
 * inputs pass by it. */
static void mm_part(void *arg, int part, int nparts)
{
	const struct mm_job *j = arg;
	const struct tp_mat *w = j->w;
	long r0 = (long)w->rows * part / nparts;
	long r1 = (long)w->rows * (part + 1) / nparts;
	long i;
	int b;

	for (i = r0; i < r1; i++) {
		const void *row = tp_mat_row(w, (int)i);
		float out[4];
		int t;

		b = 0;
		if (j->dot4)
			for (; b + 4 <= j->batch; b += 4) {
				j->dot4(row, j->act + (size_t)b * j->act_stride,
					j->act_stride, w->cols, out);
				for (t = 0; t < 4; t++)
					j->y[(size_t)(b + t) * w->rows + i] =
						out[t];
			}
		for (; b < j->batch; b++)
			j->y[(size_t)b * w->rows + i] =
				j->dot(row, j->act + (size_t)b * j->act_stride,
				       w->cols);
	}
}

/*
 * The converted activations, reused between calls; per thread, as the
 * unit tests run ranks as threads of one process (each with a pool of 1).
 */
static void *act_buffer(size_t bytes)
{
	static __thread void *buf;
	static __thread size_t cap;

	if (bytes > cap) {
		free(buf);
		cap = bytes + bytes / 2;
		buf = tp_calloc(cap, 1);
	}
	return buf;
}

void tp_matmul(float *y, const float *x, const struct tp_mat *w, int batch)
{
	const struct tp_kernels *k = tp_kernels();
	enum tp_act a = tp_act_for(w->type);
	struct mm_job j = {
		.y = y, .w = w, .batch = batch, .dot = k->dot[w->type],
		.dot4 = k->dot4[w->type],
		.act_stride = tp_act_bytes(a, w->cols),
	};
	char *buf;
	int b;

	if (a == TP_ACT_F32) {
		j.act = (const char *)x;
	} else {
		buf = act_buffer(j.act_stride * (size_t)batch);
		for (b = 0; b < batch; b++)
			tp_act_convert(a, x + (size_t)b * w->cols,
				       buf + (size_t)b * j.act_stride, w->cols);
		j.act = buf;
	}
	tp_pool_run(mm_part, &j);
}
