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

#include "../tpmath.h"

void tp_matmul(float *y, const float *x, const struct tp_mat *w, int batch);

#endif /* TPRUN_MATMUL_H */
