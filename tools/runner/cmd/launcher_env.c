// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rank and world size from a launcher's environment. mpirun and srun start
 * every rank with the same command line; only the environment tells the
 * ranks apart. It is read when the ranks meet at a rendezvous address
 * (--rendezvous, or MASTER_ADDR and MASTER_PORT) and --rank is not given:
 * Slurm sets SLURM_PROCID in a batch script too, where a plain tprun must
 * stay a single rank.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "cmd/opts.h"

struct env_launcher {
	const char *name;
	const char *rank, *size, *local_rank, *local_size;
};

/* First match wins; Open MPI before Slurm (mpirun inside an allocation). */
static const struct env_launcher launchers[] = {
	{ "mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	  "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE" },
	{ "srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL },
	{ "PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS" },
	{ "RANK/WORLD_SIZE", "RANK", "WORLD_SIZE", "LOCAL_RANK",
	  "LOCAL_WORLD_SIZE" },
};

/* VAR as an integer in [LO, HI]; DEF when unset; -2 (reported) if bad. */
static int env_int(const char *var, int lo, int hi, int def)
{
	const char *s = var ? getenv(var) : NULL;
	char *end;
	long v;

	if (!s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi) {
		tp_err("%s=%s: expected an integer in %d..%d", var, s, lo, hi);
		return -2;
	}
	return (int)v;
}

static const struct env_launcher *detect(void)
{
	size_t i;

	for (i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		if (getenv(launchers[i].rank) && getenv(launchers[i].size))
			return &launchers[i];
	return NULL;
}

int tp_opts_launcher_env(struct tp_opts *o)
{
	const struct env_launcher *l = detect();
	int rank, size;

	o->local_rank = -1;
	o->local_size = 0;
	if (!l)
		return 0;
	/* mpirun -np 2 without a rendezvous would run two 1-rank jobs */
	if (!o->rendezvous && !o->peers && !o->local && l == &launchers[0]) {
		size = env_int(l->size, 1, 1 << 20, 1);
		if (size > 1) {
			tp_err("started by mpirun as one of %d ranks: give --rendezvous HOST:PORT (or MASTER_ADDR and MASTER_PORT) so that they find each other",
			       size);
			return -1;
		}
		return 0;
	}
	if (!o->rendezvous || o->rank >= 0)
		return 0;
	size = env_int(l->size, 1, TP_MAX_RANKS, -1);
	rank = env_int(l->rank, 0, TP_MAX_RANKS - 1, -1);
	if (size < 0 || rank < 0)
		return -1;
	if (rank >= size) {
		tp_err("%s=%d is not below %s=%d", l->rank, rank, l->size, size);
		return -1;
	}
	if (o->world && o->world != size) {
		tp_err("--world %d, but %s=%d", o->world, l->size, size);
		return -1;
	}
	o->rank = rank;
	o->world = size;
	o->local_rank = env_int(l->local_rank, 0, TP_MAX_RANKS - 1, -1);
	o->local_size = env_int(l->local_size, 1, TP_MAX_RANKS, 0);
	if (o->local_rank < -1 || o->local_size < 0)
		return -1;
	o->launcher = l->name;
	return 0;
}
