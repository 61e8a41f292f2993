// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The residual stream: a block's row-parallel product (attention output,
 * MLP down projection), built straight into the all-reduce's send buffer
 * when it has room (no copy), else into m->part, then summed over the
 * ranks into x. See residual.h.
 */
#include "comm/allreduce.h"
#include "model/model.h"
#include "model/residual.h"

float *tp_residual_buf(struct tp_model *m, struct tp_ar *ar, int n)
{
	float *p = ar ? tp_ar_input(ar, (size_t)n * m->cfg.dim) : NULL;

	return p ? p : m->part;
}

int tp_residual_add(struct tp_model *m, struct tp_ar *ar, float *part, int n)
{
	size_t i, len = (size_t)n * m->cfg.dim;

	if (ar)
		return tp_allreduce_add(ar, part, m->x, len);
	for (i = 0; i < len; i++)
		m->x[i] += part[i];
	return 0;
}
