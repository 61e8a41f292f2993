/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The residual stream x of a forward pass and the blocks that add to it
 * (residual.c): a block's row-parallel product is each rank's part of
 * the block's output, which the ranks sum.
 */
#ifndef TPRUN_MODEL_RESIDUAL_H
#define TPRUN_MODEL_RESIDUAL_H

#include "model/model.h"

/*
 * Where to build the part of N tokens: the all-reduce's send buffer
 * when it has room (it then goes out without a copy), else m->part.
 */
float *tp_residual_buf(struct tp_model *m, struct tp_ar *ar, int n);
/* x += the sum of every rank's PART (AR NULL: one rank). 0, or -1. */
int tp_residual_add(struct tp_model *m, struct tp_ar *ar, float *part,
		    int n);

#endif /* TPRUN_MODEL_RESIDUAL_H */
