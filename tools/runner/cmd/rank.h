/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One rank, whatever its command (rank.c). */
#ifndef TPRUN_RANK_H
#define TPRUN_RANK_H

#include "cmd/opts.h"

/* Everything a rank does; returns its exit code. */
int tp_rank_main(struct tp_opts *o);

#endif /* TPRUN_RANK_H */
