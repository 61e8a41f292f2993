// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The vocabulary ends of the model, which no rank holds whole: the token
 * embedding is read a row per token (from the file, or computed for
 * synthetic weights), and the output head is split by vocabulary rows,
 * the logits gathered so that every rank samples the same token from the
 * same full vector, as before.
 *
 * The gather is an all-reduce in which every entry is non-zero on one
 * rank only: adding zeros is exact, so each rank gets the very bits the
 * owner computed, whatever the algorithm's summation order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "comm/allreduce.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"
#include "model/model.h"
#include "model/synthetic.h"

/* A synthetic embedding row: as synthetic.c would have stored it. */
static void synth_row(const struct tp_weights *w, int token, void *row,
		      float *out)
{
	const struct tp_config *c = &w->cfg;
	int j;

	for (j = 0; j < c->dim; j++)
		out[j] = tp_synth_value(c, w->embd.seed, TP_T_EMBD, 0, token, j);
	tp_row_from_f32(w->embd.type, out, row, (size_t)c->dim);
}

int tp_embed_row(const struct tp_weights *w, int token, float *out)
{
	const struct tp_embed *e = &w->embd;
	void *row = malloc(e->row_bytes);
	size_t got = 0;

	if (!row)
		tp_die("out of memory");
	if (!e->fd)
		synth_row(w, token, row, out);
	while (e->fd && got < e->row_bytes) {
		ssize_t n = pread(e->fd, (char *)row + got, e->row_bytes - got,
				  e->off + (long long)token * (long long)e->row_bytes +
				  (long long)got);

		if (n <= 0 && !(n < 0 && errno == EINTR)) {
			tp_err("reading the embedding of token %d: %s", token,
			       n ? strerror(errno) : "the file got shorter");
			free(row);
			return -1;
		}
		if (n > 0)
			got += (size_t)n;
	}
	tp_row_to_f32(e->type, row, out, (size_t)w->cfg.dim);
	free(row);
	return 0;
}

int tp_head_logits(struct tp_model *m, struct tp_ar *ar)
{
	const struct tp_weights *w = m->w;
	size_t V = (size_t)m->cfg.vocab, v0 = (size_t)w->sh.v0;
	size_t v1 = (size_t)w->sh.v1, chunk, a;
	int phase, r = 0;

	tp_matmul(m->logits + v0, m->xb, &w->output, 1);
	if (!ar || ar->nranks == 1)
		return 0;
	/* the send buffer, or m->part, holds this many floats */
	chunk = (size_t)m->max_batch * (size_t)m->cfg.dim;
	if (chunk > ar->max_floats)
		chunk = ar->max_floats;
	phase = ar->phase;
	ar->phase = TP_PHASE_AUX;
	for (a = 0; a < V && !r; a += chunk) {
		size_t n = V - a < chunk ? V - a : chunk;
		size_t lo = v0 > a ? v0 : a, hi = v1 < a + n ? v1 : a + n;
		float *in = tp_ar_input(ar, n);

		if (!in)
			in = m->part;
		memset(in, 0, n * sizeof(float));
		if (lo < hi)
			memcpy(in + (lo - a), m->logits + lo,
			       (hi - lo) * sizeof(float));
		memset(m->logits + a, 0, n * sizeof(float));
		r = tp_allreduce_add(ar, in, m->logits + a, n);
	}
	ar->phase = phase;
	return r;
}
