/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The model's matrix products: y[b][i] = W[i] . x[b] for B inputs (x is
 * B x cols floats, y is B x rows), on the compute pool (pool.h), split by
 * output rows, with the kernels dispatch chose (kernels/kernels.h). Each
 * weight row is read once for all B inputs (batched prefill). The result
 * does not depend on the number of threads or on B.
 */
#ifndef TPRUN_MATMUL_H
#define TPRUN_MATMUL_H

#include "kernels/types.h"

void tp_matmul(float *y, const float *x, const struct tp_mat *w, int batch);

/*
 * Repack W in place for decoding, when its type has 4-row kernels (the
 * K-quants with AVX2 or better), its rows are whole rows and a multiple
 * of 4: each group of 4 rows becomes block 0 of rows 0..3, block 1 of
 * rows 0..3, ..., so decoding reads one stream where it read four rows
 * side by side (Q4_K, the 56 layer matrices of the small bench model:
 * 7.1 -> 8.5 GB/s; decoding 27.7 -> 34.1 tokens/s). Prefill
 * copies a tile's rows back out once per tile. The values do not change.
 */
void tp_mat_interleave(struct tp_mat *w);

#endif /* TPRUN_MATMUL_H */
