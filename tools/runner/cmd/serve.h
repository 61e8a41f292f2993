/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tprun serve: one rank's server loop (serve.c). */
#ifndef TPRUN_SERVE_H
#define TPRUN_SERVE_H

#include "cmd/opts.h"

/* Runs until the process is stopped or a rank fails; the exit code. */
int tp_serve_rank(struct tp_opts *o);

#endif /* TPRUN_SERVE_H */
