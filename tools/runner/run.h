/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One rank's whole run, and what it measured. */
#ifndef TPRUN_RUN_H
#define TPRUN_RUN_H

#include "allreduce.h"
#include "opts.h"

struct tp_result {
	const char *transport;	/* "rdma", "tcp", "none" */
	int nranks;
	int ntok;
	int *tokens;
	float *logits;		/* of the last generated token's step */
	int vocab;
	double prefill_s, decode_s;
	struct tp_ar_stats st[2];	/* prefill, decode */
};

/* Everything a rank does; returns its exit code. */
int tp_rank_main(struct tp_opts *o);

/* The local launcher (launch.c): forks N ranks, returns the exit code. */
int tp_launch_local(struct tp_opts *o);

/* Report (report.c): table or JSON on stdout. TCP/ONE may be NULL. */
void tp_report(const struct tp_opts *o, const struct tp_weights *w,
	       const int *prompt, const char *device,
	       const struct tp_result *main, const struct tp_result *tcp,
	       const struct tp_result *one);

#endif /* TPRUN_RUN_H */
