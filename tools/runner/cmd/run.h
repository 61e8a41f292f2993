/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One rank's whole run, and what it measured. */
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

/* Everything a rank does; returns its exit code. */
int tp_rank_main(struct tp_opts *o);

struct tp_rdv;
struct tp_xport;
/*
 * Rendezvous with the other ranks (HASH: the configuration they must
 * share), then the transport of o->transport with buffers for all-reduces
 * of up to MAX_FLOATS floats (*RDMA, and *TCP for --transport tcp or
 * --compare), then the monitor. 0, or -1 (reported).
 */
int tp_connect_ranks(struct tp_opts *o, uint64_t hash, size_t max_floats,
		     struct tp_rdv *rdv, struct tp_xport **rdma,
		     struct tp_xport **tcp);
/* The transports (either may be NULL) and the rendezvous' connections,
 * after a run that ended well (an aborted one leaves them to exit()). */
void tp_disconnect_ranks(struct tp_rdv *rdv, struct tp_xport *rdma,
			 struct tp_xport *tcp);
/* How long an RDMA wait busy-polls before it sleeps (--spin-us, auto). */
int tp_spin_us(const struct tp_opts *o);
/* More ranks on this machine than CPUs: a spinning wait yields the CPU. */
int tp_oversubscribed(const struct tp_opts *o);

/* The local launcher (launch.c): forks N ranks, returns the exit code. */
int tp_launch_local(struct tp_opts *o);

/* Report (report.c): table or JSON on stdout. TCP/ONE may be NULL. */
void tp_report(const struct tp_opts *o, const struct tp_weights *w,
	       const int *prompt, const char *device,
	       const struct tp_result *main, const struct tp_result *tcp,
	       const struct tp_result *one);

#endif /* TPRUN_RUN_H */
