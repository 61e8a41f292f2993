// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tp_matmul: convert the activations once, then rows in parallel. */
#include <stdlib.h>
#include <string.h>

#include "base/pool.h"
#include "base/util.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"

struct mm_job {
	float *y;
	const char *act;	/* B rows of converted activations */
	size_t act_stride;
	const struct tp_mat *w;
	int batch;
	tp_dot_fn *dot;
	tp_dot4_fn *dot4;
	tp_rows4_fn *rows4;
	size_t block_bytes;	/* of W's type, for rows4 */
};

/*
 * Rows of W against every input, in tiles of TILE_ROWS rows: the tile's
 * rows stay in L1 or L2 while four inputs at a time pass by them, and each
 * group of four inputs is read from L2 once per tile, not once per row.
 * The inputs left over (decoding: the only one) meet four rows at a time
 * where the kernels have that.
 */
#define TILE_ROWS 16

/* Per thread (pool workers, and ranks as threads in the unit tests). */
static void *thread_buffer(void **buf, size_t *cap, size_t bytes)
{
	if (bytes > *cap) {
		free(*buf);
		*cap = bytes + bytes / 2;
		*buf = tp_calloc(*cap, 1);
	}
	return *buf;
}

/* Rows [r0, r1) of an interleaved W (4-aligned) as rows one after another. */
static const char *gather_rows(const struct mm_job *j, long r0, long r1)
{
	static __thread void *buf;
	static __thread size_t cap;
	const struct tp_mat *w = j->w;
	size_t bb = j->block_bytes, nb = w->stride / bb, b;
	char *out = thread_buffer(&buf, &cap, (size_t)(r1 - r0) * w->stride);
	const char *grp;
	long i;

	for (i = r0; i < r1; i++) {
		grp = (const char *)w->data + (size_t)(i & ~3L) * w->stride;
		for (b = 0; b < nb; b++)
			memcpy(out + (size_t)(i - r0) * w->stride + b * bb,
			       grp + (b * 4 + (size_t)(i & 3)) * bb, bb);
	}
	return out;
}

static void mm_rows(const struct mm_job *j, long r0, long r1)
{
	const struct tp_mat *w = j->w;
	const char *rows = (const char *)tp_mat_row(w, (int)r0);
	size_t wstride = w->stride, bstride = j->block_bytes;
	float out[4];
	long i;
	int b = 0, t;

	if (w->interleaved) {
		/* an interleaved group: row r's block b at (4 b + r) blocks */
		wstride = j->block_bytes;
		bstride = 4 * j->block_bytes;
		if (j->batch >= 4)
			rows = gather_rows(j, r0, r1);
	}
	if (j->dot4)
		for (; b + 4 <= j->batch; b += 4)
			for (i = r0; i < r1; i++) {
				j->dot4(rows + (size_t)(i - r0) * w->stride,
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
				j->rows4(tp_mat_row(w, (int)i), wstride, bstride,
					 act, w->cols, out);
				for (t = 0; t < 4; t++)
					y[i + t] = out[t];
			}
		/* never reached for an interleaved W: 4-aligned, and rows4 */
		for (; i < r1; i++)
			y[i] = j->dot(rows + (size_t)(i - r0) * w->stride, act,
				      w->cols);
	}
}

/* Rows [r0, r1) of W, this thread's share, tile by tile. */
static void mm_part(void *arg, int part, int nparts)
{
	const struct mm_job *j = arg;
	long unit = j->w->interleaved ? 4 : 1;	/* whole groups each */
	long units = j->w->rows / unit;
	long r0 = units * part / nparts * unit;
	long r1 = units * (part + 1) / nparts * unit;
	long i;

	for (i = r0; i < r1; i += TILE_ROWS)
		mm_rows(j, i, i + TILE_ROWS < r1 ? i + TILE_ROWS : r1);
}

/* The converted activations, reused between calls. */
static void *act_buffer(size_t bytes)
{
	static __thread void *buf;
	static __thread size_t cap;

	return thread_buffer(&buf, &cap, bytes);
}

void tp_matmul(float *y, const float *x, const struct tp_mat *w, int batch)
{
	const struct tp_kernels *k = tp_kernels();
	enum tp_act a = tp_act_for(w->type);
	struct mm_job j = {
		.y = y, .w = w, .batch = batch, .dot = k->dot[w->type],
		.dot4 = k->dot4[w->type], .rows4 = k->rows4[w->type],
		.block_bytes = tp_quant_block_bytes(w->type),
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

void tp_mat_interleave(struct tp_mat *w)
{
	size_t bb = tp_quant_block_bytes(w->type), nb, b;
	char *data = (char *)w->data, *grp, *tmp;
	int g, r;

	if (w->interleaved || !bb || !tp_kernels()->rows4[w->type] ||
	    w->rows % 4 || w->stride != tp_type_bytes(w->type, (size_t)w->cols))
		return;
	nb = w->stride / bb;
	tmp = tp_calloc(4, w->stride);
	for (g = 0; g < w->rows / 4; g++) {
		grp = data + (size_t)g * 4 * w->stride;
		memcpy(tmp, grp, 4 * w->stride);
		for (b = 0; b < nb; b++)
			for (r = 0; r < 4; r++)
				memcpy(grp + (b * 4 + r) * bb,
				       tmp + r * w->stride + b * bb, bb);
	}
	free(tmp);
	w->interleaved = 1;
}
