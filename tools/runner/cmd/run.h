/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Generation on one rank (run.c), what it measured, and its report. */
#ifndef TPRUN_RUN_H
#define TPRUN_RUN_H

#include "cmd/opts.h"
#include "cmd/rank_memory.h"
#include "comm/allreduce.h"

struct tp_result {
	const char *transport;	/* "rdma", "tcp", "none" */
	int nranks;
	int ntok;
	int *tokens;
	char *text;		/* --prompt: the generated tokens as text */
	size_t text_len;	/* (it may hold NUL bytes) */
	float *logits;		/* of the last generated token's step */
	int vocab;
	double prefill_s, decode_s;
	struct tp_ar_stats st[2];	/* prefill, decode */
	struct tp_rank_mem *mem;	/* nranks: what each rank holds */
};

/*
 * tprun's default command on one rank (the rank is known, see rank.c):
 * load, connect, generate, report. Returns its exit code.
 */
int tp_run_rank(struct tp_opts *o);

/* Report (report.c): table or JSON on stdout. TCP/ONE may be NULL. */
void tp_report(const struct tp_opts *o, const struct tp_weights *w,
	       const int *prompt, const char *device,
	       const struct tp_result *main, const struct tp_result *tcp,
	       const struct tp_result *one);

#endif /* TPRUN_RUN_H */
