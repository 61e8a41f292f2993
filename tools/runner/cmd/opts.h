/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tprun's command line. */
#ifndef TPRUN_OPTS_H
#define TPRUN_OPTS_H

#include <stdint.h>

#include "comm/allreduce.h"
#include "model/model.h"

enum tp_transport { TP_TR_RDMA, TP_TR_TCP };

struct tp_opts {
	/* launch */
	int local;		/* --local N: N ranks on this machine */
	int rank, nranks;	/* --rank, and the length of --peers */
	char *peers;
	char *rendezvous;	/* HOST:PORT where the ranks meet (rank 0's) */
	int world;		/* --world, or the launcher's world size */
	int local_rank;		/* the launcher's, or -1: picks the device */
	int local_size;		/* ranks on this host per the launcher, or 0 */
	const char *launcher;	/* "mpirun", "srun", ...: rank came from env */
	char *listen_host;
	int listen_fd;		/* set by the local launcher */
	char *devices;		/* comma-separated; rank i takes the i-th,
				   or a per-peer map [R:]P=DEV,... */
	char device[64];	/* this rank's */
	int ib_port, gid_index;
	enum tp_transport transport;
	/* model */
	int synthetic;
	char *model;
	uint64_t seed;
	struct tp_config cfg;
	const char *arch;	/* --arch: the synthetic model's (NULL: llama) */
	enum tp_type wtype;
	char *export_path;
	int export_tied;
	/* generation */
	int tokens, prompt_len, batch;
	int threads;		/* --threads: compute threads per rank (0: auto) */
	enum tp_type kv_type;	/* --cache-type: the KV cache's values */
	int *prompt;		/* --prompt-ids, else generated */
	char *prompt_text;	/* --prompt: tokenized by the model's tokenizer */
	int chat;		/* --chat: the prompt in the chat template */
	char *system_text;	/* --system: the chat's system message */
	int reasoning_budget;	/* --reasoning-budget: -1, or 0 (no thinking) */
	int reasoning_split;	/* serve: thinking to reasoning_content */
	/* tprun serve (serve.c) */
	int serve;
	char *http;		/* --http ADDR:PORT */
	int ctx;		/* --ctx: prompt + answer tokens per request */
	float temperature, top_p;
	uint64_t sample_seed;
	/* all-reduce */
	enum tp_algo algo;
	long ring_min;
	int spin_us;		/* -1: automatic */
	int tcp_spin_us;	/* TCP: spin on non-blocking sockets first */
	int timeout_ms, peer_timeout_ms, connect_timeout_ms;
	/* output */
	int json, logits, compare;
	int slow_ms;		/* testing: sleep per decode step */
	/* --bench-allreduce */
	int bench_ar;
	size_t *bench_sizes;	/* bytes, multiples of 4 */
	int bench_nsizes, bench_iters, bench_warmup;
};

/* Parse argv; exits with 2 and a message on bad usage. */
void tp_opts_parse(struct tp_opts *o, int argc, char **argv);
/*
 * Rank, world size and local rank from a launcher's environment (Open
 * MPI's mpirun, Slurm's srun, PMI, RANK/WORLD_SIZE) when o->rendezvous is
 * set and --rank is not (launcher_env.c). 0, or -1 (reported).
 */
int tp_opts_launcher_env(struct tp_opts *o);
/* Rank I's device (the I-th of --devices, or the only one); "" for
 * none or a per-peer map. */
int tp_opts_device(const struct tp_opts *o, int i, char *out, int len);
/*
 * What -d says of RANK's link to PEER: 1 and its device in OUT ("none":
 * over IP only; OUT may be NULL), 0 when it leaves it to the route, -1
 * when -d is malformed or has no device for this rank.
 */
int tp_opts_peer_device(const struct tp_opts *o, int rank, int peer,
			char *out, int len);
/* The hash every rank must agree on (model, shape, flags; W is NULL for
 * --bench-allreduce, which has no model). */
uint64_t tp_opts_hash(const struct tp_opts *o, const struct tp_weights *w);

#endif /* TPRUN_OPTS_H */
