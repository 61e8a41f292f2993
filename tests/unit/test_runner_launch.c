// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's launcher environments (tools/runner/cmd/launcher_env.c): rank, world
 * size and local rank from Open MPI, Slurm, PMI and RANK/WORLD_SIZE, which
 * wins, what is refused; and memstat.c's peak resident set.
 */
#include <stdlib.h>
#include <string.h>

#include "base/memstat.h"
#include "cmd/opts.h"
#include "tap.h"

static const char *const vars[] = {
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
	"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "PMI_RANK",
	"PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "RANK",
	"WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
};

static void clear_env(void)
{
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

/* Options as the parser leaves them before the environment is read. */
static void fresh(struct tp_opts *o, const char *rendezvous)
{
	memset(o, 0, sizeof(*o));
	o->rank = -1;
	o->rendezvous = (char *)rendezvous;
}

int main(void)
{
	struct tp_opts o;

	plan(NO_PLAN);
	clear_env();

	fresh(&o, "h:1");
	ok(!tp_opts_launcher_env(&o) && o.rank == -1 && o.local_rank == -1,
	   "no launcher: nothing set");

	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
	setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
	setenv("SLURM_PROCID", "3", 1);
	setenv("SLURM_NTASKS", "8", 1);
	fresh(&o, "h:1");
	ok(!tp_opts_launcher_env(&o) && o.rank == 1 && o.world == 4 &&
	   o.local_rank == 1 && o.local_size == 2 &&
	   !strcmp(o.launcher, "mpirun"),
	   "mpirun: rank 1 of 4, local rank 1 of 2 (before Slurm's variables)");

	fresh(&o, NULL);
	ok(tp_opts_launcher_env(&o) == -1,
	   "mpirun -np 4 without a rendezvous: refused");
	fresh(&o, NULL);
	o.local = 2;
	ok(!tp_opts_launcher_env(&o) && o.rank == -1,
	   "mpirun and --local: the environment is not read");

	fresh(&o, "h:1");
	o.rank = 0;
	o.world = 2;
	ok(!tp_opts_launcher_env(&o) && o.rank == 0 && o.world == 2,
	   "--rank/--world win over the environment");

	fresh(&o, "h:1");
	o.world = 3;
	ok(tp_opts_launcher_env(&o) == -1, "--world 3 against a world of 4: refused");

	clear_env();
	setenv("SLURM_PROCID", "3", 1);
	setenv("SLURM_NTASKS", "8", 1);
	setenv("SLURM_LOCALID", "1", 1);
	fresh(&o, "h:1");
	ok(!tp_opts_launcher_env(&o) && o.rank == 3 && o.world == 8 &&
	   o.local_rank == 1 && o.local_size == 0 && !strcmp(o.launcher, "srun"),
	   "srun: rank 3 of 8, local rank 1");
	fresh(&o, NULL);
	ok(!tp_opts_launcher_env(&o) && o.rank == -1,
	   "Slurm's variables without a rendezvous (a batch script): one rank");

	setenv("SLURM_PROCID", "8", 1);
	fresh(&o, "h:1");
	ok(tp_opts_launcher_env(&o) == -1, "SLURM_PROCID=8 of 8: refused");
	setenv("SLURM_PROCID", "x1", 1);
	fresh(&o, "h:1");
	ok(tp_opts_launcher_env(&o) == -1, "SLURM_PROCID=x1: refused");
	setenv("SLURM_PROCID", "0", 1);
	setenv("SLURM_NTASKS", "65", 1);
	fresh(&o, "h:1");
	ok(tp_opts_launcher_env(&o) == -1, "SLURM_NTASKS=65 (more than 64 ranks): refused");

	clear_env();
	setenv("PMI_RANK", "2", 1);
	setenv("PMI_SIZE", "3", 1);
	fresh(&o, "h:1");
	ok(!tp_opts_launcher_env(&o) && o.rank == 2 && o.world == 3 &&
	   o.local_rank == -1, "PMI: rank 2 of 3, local rank unknown");

	clear_env();
	setenv("RANK", "1", 1);
	setenv("WORLD_SIZE", "2", 1);
	setenv("LOCAL_RANK", "0", 1);
	fresh(&o, "h:1");
	ok(!tp_opts_launcher_env(&o) && o.rank == 1 && o.world == 2 &&
	   o.local_rank == 0, "RANK/WORLD_SIZE/LOCAL_RANK: rank 1 of 2");
	clear_env();

	ok(tp_peak_rss() > 100000, "peak RSS read from /proc/self/status (%llu bytes)",
	   (unsigned long long)tp_peak_rss());
	return done();
}
