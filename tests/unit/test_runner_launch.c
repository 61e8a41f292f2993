// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun's launcher environments (tools/runner/cmd/launcher_env.c): rank, world
 * size and local rank from Open MPI, Slurm, PMI and RANK/WORLD_SIZE, which
 * wins, what is refused; -d's device for each peer (opts.c: one device,
 * one per local rank, a per-peer map); and memstat.c's peak resident set.
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

/* What -d SPEC says of RANK's link to PEER: "dev", "=auto", "=bad". */
static const char *dev_for(const char *spec, int rank, int local, int peer)
{
	static char out[64];
	struct tp_opts o;
	int r;

	memset(&o, 0, sizeof(o));
	o.devices = (char *)spec;
	o.local_rank = local;
	r = tp_opts_peer_device(&o, rank, peer, out, sizeof(out));
	return r < 0 ? "=bad" : r ? out : "=auto";
}

static void test_devices(void)
{
	ok(!strcmp(dev_for(NULL, 0, -1, 1), "=auto"),
	   "-d absent: every peer's device from the route");
	ok(!strcmp(dev_for("tbr0", 2, -1, 1), "tbr0") &&
	   !strcmp(dev_for("tbr0", 2, -1, 0), "tbr0"),
	   "-d tbr0: that device for every peer");
	ok(!strcmp(dev_for("a,b,c", 1, -1, 0), "b") &&
	   !strcmp(dev_for("a,b,c", 5, 2, 0), "c") &&
	   !strcmp(dev_for("a,b", 2, -1, 0), "=bad"),
	   "-d a,b,c: rank (or local rank) i takes the i-th; none for rank 2 of -d a,b");
	ok(!strcmp(dev_for("1=tbrm12,2=tbrm13", 0, -1, 1), "tbrm12") &&
	   !strcmp(dev_for("1=tbrm12,2=tbrm13", 0, -1, 2), "tbrm13") &&
	   !strcmp(dev_for("1=tbrm12,2=tbrm13", 0, -1, 3), "=auto"),
	   "-d 1=tbrm12,2=tbrm13: per peer, a peer left out from the route");
	ok(!strcmp(dev_for("0:1=x,1:0=y,2=none", 0, -1, 1), "x") &&
	   !strcmp(dev_for("0:1=x,1:0=y,2=none", 1, -1, 0), "y") &&
	   !strcmp(dev_for("0:1=x,1:0=y,2=none", 1, -1, 1), "=auto") &&
	   !strcmp(dev_for("0:1=x,1:0=y,2=none", 3, -1, 2), "none"),
	   "-d 0:1=x,1:0=y,2=none: entries for one rank, and none (IP only)");
	ok(!strcmp(dev_for("1=", 0, -1, 1), "=bad") &&
	   !strcmp(dev_for("x=tbr0", 0, -1, 1), "=bad") &&
	   !strcmp(dev_for("1=a,b", 0, -1, 1), "=bad") &&
	   !strcmp(dev_for("64=a", 0, -1, 1), "=bad") &&
	   !strcmp(dev_for("1:=a", 0, -1, 1), "=bad") &&
	   !strcmp(dev_for("-1:1=a", 0, -1, 1), "=bad"),
	   "malformed maps refused: no device, no rank, a bare name, rank 64, no peer, a sign");
}

int main(void)
{
	struct tp_opts o;

	plan(NO_PLAN);
	clear_env();
	test_devices();

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
