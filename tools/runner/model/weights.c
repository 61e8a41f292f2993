// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A rank's weights in memory: what it allocates for them (freed
 * together), and the view of a shard of a matrix, or its copy in F32
 * when the shard does not start on a block of the matrix's type.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "model/model.h"

void *tp_weights_alloc(struct tp_weights *w, size_t bytes)
{
	void *p;

	if (w->nowned == w->capowned) {
		w->capowned = w->capowned ? 2 * w->capowned : 64;
		w->owned = realloc(w->owned, sizeof(*w->owned) * w->capowned);
		if (!w->owned)
			tp_die("out of memory");
	}
	p = tp_alloc_pages(bytes);
	w->owned[w->nowned++] = p;
	w->owned_bytes += bytes;
	return p;
}

void tp_weights_free(struct tp_weights *w)
{
	int i;

	for (i = 0; i < w->nowned; i++)
		free(w->owned[i]);
	free(w->owned);
	free(w->layer);
	if (w->embd.fd > 0)
		close(w->embd.fd);
	memset(w, 0, sizeof(*w));
}

void tp_mat_shard(struct tp_weights *w, const struct tp_mat *full, int r0,
		  int r1, int c0, int c1, struct tp_mat *out)
{
	int blk = tp_type_block(full->type), i;
	float *tmp, *dst;

	out->rows = r1 - r0;
	out->cols = c1 - c0;
	if (c0 % blk == 0 && (c1 - c0) % blk == 0) {
		out->type = full->type;
		out->stride = full->stride;
		out->data = (const char *)tp_mat_row(full, r0) +
			    tp_type_bytes(full->type, (size_t)c0);
		return;
	}
	/* Not on a block boundary: this shard becomes F32. */
	tmp = tp_calloc((size_t)full->cols, sizeof(float));
	dst = tp_weights_alloc(w, (size_t)out->rows * out->cols * sizeof(float));
	for (i = r0; i < r1; i++) {
		tp_row_to_f32(full->type, tp_mat_row(full, i), tmp,
			      (size_t)full->cols);
		memcpy(dst + (size_t)(i - r0) * out->cols, tmp + c0,
		       (size_t)out->cols * sizeof(float));
	}
	free(tmp);
	out->type = TP_F32;
	out->stride = (size_t)out->cols * sizeof(float);
	out->data = dst;
}
