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
	tp_rows4_fn *rows4;
};

/*
 * Rows of W against every input, in tiles of TILE_ROWS rows: the tile's
 * rows stay in L1 or L2 while four inputs at a time pass by them, and each
 * group of four inputs is read from L2 once per tile, not once per row.
 * The inputs left over (decoding: the only one) meet four rows at a time
 * where the kernels have that.
 */
#define TILE_ROWS 16

static void mm_rows(const struct mm_job *j, long r0, long r1)
{
	const struct tp_mat *w = j->w;
	float out[4];
	long i;
	int b = 0, t;

	if (j->dot4)
		for (; b + 4 <= j->batch; b += 4)
			for (i = r0; i < r1; i++) {
				j->dot4(tp_mat_row(w, (int)i),
					j->act + (size_t)b * j->act_stride,
					j->act_stride, w->cols, out);
				for (t = 0; t < 4; t++)
					j->y[(size_t)(b + t) * w->rows + i] =
						out[t];
			}
	for (; b < j->batch; b++) {
		const char *act = j->act + (size_t)b * j->act_stride;
		float *y = j->y + (size_t)b * w->rows;

		i = r0;
		if (j->rows4)
			for (; i + 4 <= r1; i += 4) {
				j->rows4(tp_mat_row(w, (int)i), w->stride, act,
					 w->cols, out);
				for (t = 0; t < 4; t++)
					y[i + t] = out[t];
			}
		for (; i < r1; i++)
			y[i] = j->dot(tp_mat_row(w, (int)i), act, w->cols);
	}
}

/* Rows [r0, r1) of W, this thread's share, tile by tile. */
static void mm_part(void *arg, int part, int nparts)
{
	const struct mm_job *j = arg;
	long rows = j->w->rows;
	long r0 = rows * part / nparts, r1 = rows * (part + 1) / nparts;
	long i;

	for (i = r0; i < r1; i += TILE_ROWS)
		mm_rows(j, i, i + TILE_ROWS < r1 ? i + TILE_ROWS : r1);
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
		.dot4 = k->dot4[w->type], .rows4 = k->rows4[w->type],
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
