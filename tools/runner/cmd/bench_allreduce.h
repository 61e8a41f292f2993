/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --bench-allreduce: the all-reduce alone, per message size. */
#ifndef TPRUN_BENCH_H
#define TPRUN_BENCH_H

#include "cmd/opts.h"

/* One rank of the benchmark; returns its exit code. Rank 0 reports. */
int tp_bench_rank(struct tp_opts *o);

#endif /* TPRUN_BENCH_H */
