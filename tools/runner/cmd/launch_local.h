/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --local N: N ranks on this machine (launch_local.c). */
#ifndef TPRUN_LAUNCH_LOCAL_H
#define TPRUN_LAUNCH_LOCAL_H

#include "cmd/opts.h"

/* Forks N ranks, each tp_rank_main(); returns the exit code. */
int tp_launch_local(struct tp_opts *o);

#endif /* TPRUN_LAUNCH_LOCAL_H */
