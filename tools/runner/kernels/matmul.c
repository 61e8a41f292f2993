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
static void mm_range(const struct mm_job *j, long r0, long r1)
{
	long i;

	for (i = r0; i < r1; i += TILE_ROWS)
		mm_rows(j, i, i + TILE_ROWS < r1 ? i + TILE_ROWS : r1);
}

static void mm_part(void *arg, int part, int nparts)
{
	const struct mm_job *j = arg;
	long unit = j->w->interleaved ? 4 : 1;	/* whole groups each */
	long units = j->w->rows / unit;

	mm_range(j, units * part / nparts * unit,
		 units * (part + 1) / nparts * unit);
}

/* The converted activations, reused between calls. */
static void *act_buffer(size_t bytes)
{
	static __thread void *buf;
	static __thread size_t cap;

	return thread_buffer(&buf, &cap, bytes);
}

/* J for Y = W . X with the kernels of K, its activations converted into
 * BUF (or X itself, for F32 weights). */
static void mm_setup(struct mm_job *j, const struct tp_kernels *k, float *y,
		     const float *x, const struct tp_mat *w, int batch,
		     char *buf)
{
	enum tp_act a = tp_act_for(w->type);
	int b;

	*j = (struct mm_job){
		.y = y, .w = w, .batch = batch, .dot = k->dot[w->type],
		.dot4 = k->dot4[w->type], .rows4 = k->rows4[w->type],
		.block_bytes = tp_quant_block_bytes(w->type),
		.act_stride = tp_act_bytes(a, w->cols),
	};
	if (a == TP_ACT_F32) {
		j->act = (const char *)x;
		return;
	}
	for (b = 0; b < batch; b++)
		tp_act_convert(a, x + (size_t)b * w->cols,
			       buf + (size_t)b * j->act_stride, w->cols);
	j->act = buf;
}

static void matmul_with(const struct tp_kernels *k, float *y, const float *x,
			const struct tp_mat *w, int batch)
{
	size_t stride = tp_act_bytes(tp_act_for(w->type), w->cols);
	struct mm_job j;

	mm_setup(&j, k, y, x, w, batch, act_buffer(stride * (size_t)batch));
	tp_pool_run(mm_part, &j);
}

void tp_matmul(float *y, const float *x, const struct tp_mat *w, int batch)
{
	matmul_with(tp_kernels(), y, x, w, batch);
}

void tp_matmul_portable(float *y, const float *x, const struct tp_mat *w,
			int batch)
{
	struct tp_mat plain = *w;

	/* the generic kernels have no 4-row ones: rows one after another */
	if (w->interleaved)
		tp_die("tp_matmul_portable: an interleaved matrix");
	plain.interleaved = 0;
	matmul_with(tp_kernels_for(TP_ISA_GENERIC), y, x, &plain, batch);
}

/* The jobs of tp_matmul_many: each thread takes the rows whose cost (the
 * columns of their matrix, per input) falls in its share of the total. */
struct many_job {
	struct mm_job *jobs;
	long *cost0;		/* the cost before each job's first row */
	long total;
	int n;
};

static void many_part(void *arg, int part, int nparts)
{
	const struct many_job *m = arg;
	long lo = (m->total * part + nparts - 1) / nparts;
	long hi = (m->total * (part + 1) + nparts - 1) / nparts;
	int i;

	/* row unit u of job i goes to the part whose share holds its start */
	for (i = 0; i < m->n; i++) {
		const struct mm_job *j = &m->jobs[i];
		long unit = j->w->interleaved ? 4 : 1;
		long uc = (long)j->w->cols * j->batch * unit;
		long units = j->w->rows / unit, u0, u1;

		if (!units || m->cost0[i] + units * uc <= lo ||
		    m->cost0[i] >= hi)
			continue;
		u0 = lo <= m->cost0[i] ? 0 : (lo - m->cost0[i] + uc - 1) / uc;
		u1 = hi >= m->cost0[i] + units * uc ? units :
		     (hi - m->cost0[i] + uc - 1) / uc;
		if (u0 < u1)
			mm_range(j, u0 * unit, u1 * unit);
	}
}

void tp_matmul_many(const struct tp_mm *mm, int n)
{
	static __thread void *jbuf;
	static __thread size_t jcap;
	const struct tp_kernels *k = tp_kernels();
	struct mm_job *jobs;
	struct many_job m = { .n = n };
	size_t bytes = 0, off = 0;
	char *buf;
	int i, s;

	if (n <= 0)
		return;
	jobs = thread_buffer(&jbuf, &jcap, (size_t)n * (sizeof(*jobs) +
						       sizeof(long)));
	m.jobs = jobs;
	m.cost0 = (long *)(jobs + n);
	for (i = 0; i < n; i++)
		bytes += tp_act_bytes(tp_act_for(mm[i].w->type),
				      mm[i].w->cols) * (size_t)mm[i].batch;
	buf = act_buffer(bytes);
	for (i = 0; i < n; i++) {
		enum tp_act a = tp_act_for(mm[i].w->type);

		/* the same input as an earlier job: its conversion */
		for (s = 0; s < i; s++)
			if (mm[s].x == mm[i].x && mm[s].batch == mm[i].batch &&
			    mm[s].w->cols == mm[i].w->cols &&
			    tp_act_for(mm[s].w->type) == a)
				break;
		if (s < i) {
			mm_setup(&jobs[i], k, mm[i].y, mm[i].x, mm[i].w, 0,
				 NULL);
			jobs[i].batch = mm[i].batch;
			jobs[i].act = jobs[s].act;
		} else {
			mm_setup(&jobs[i], k, mm[i].y, mm[i].x, mm[i].w,
				 mm[i].batch, buf + off);
			if (a != TP_ACT_F32)
				off += jobs[i].act_stride * (size_t)mm[i].batch;
		}
		m.cost0[i] = m.total;
		m.total += (long)mm[i].w->cols * mm[i].batch * mm[i].w->rows;
	}
	tp_pool_run(many_part, &m);
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
