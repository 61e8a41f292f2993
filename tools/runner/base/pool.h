/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One rank's compute threads: a pool created once (on first use, so a
 * forked rank creates its own) that runs a function split in parts, the
 * caller taking part 0. Idle workers spin briefly, then sleep on a futex:
 * two ranks on two cores must not burn each other's core while one waits
 * for the all-reduce.
 */
#ifndef TPRUN_POOL_H
#define TPRUN_POOL_H

typedef void tp_part_fn(void *arg, int part, int nparts);

/* Threads of the pool (the caller included), before its first use. */
void tp_pool_set_threads(int n);
int tp_pool_threads(void);
/* FN(ARG, i, n) for i = 0..n-1 on the pool's n threads; returns when all
 * have. Not reentrant: one caller thread at a time. */
void tp_pool_run(tp_part_fn *fn, void *arg);
/* The default: this machine's online CPUs over the ranks started on it
 * (LOCAL_RANKS, or Open MPI's / Slurm's count when 0), at least 1. */
int tp_pool_default_threads(int local_ranks);

#endif /* TPRUN_POOL_H */
