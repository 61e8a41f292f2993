// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tprun: tensor-parallel inference of a Llama-family transformer over RDMA
 * verbs (Documentation/runner.md).
 */
#include <signal.h>
#include <stdio.h>

#include "base/pool.h"
#include "base/util.h"
#include "cmd/launch_local.h"
#include "cmd/opts.h"
#include "cmd/rank.h"
#include "kernels/float16.h"
#include "model/arch/registry.h"

int main(int argc, char **argv)
{
	struct tp_opts o;
	char err[400];

	signal(SIGPIPE, SIG_IGN);
	tp_math_init();
	tp_opts_parse(&o, argc, argv);
	/* the pool starts on first use: in each forked rank, not here */
	tp_pool_set_threads(o.threads ? o.threads :
			    tp_pool_default_threads(o.local ? o.nranks : 0));
	if (o.export_path) {
		if (tp_export_gguf(o.export_path, &o.cfg, o.seed, o.wtype,
				   o.export_tied, err, sizeof(err))) {
			tp_err("%s", err);
			return TP_EXIT_FAIL;
		}
		tp_info("wrote %s", o.export_path);
		return 0;
	}
	if (o.local)
		return tp_launch_local(&o);
	return tp_rank_main(&o);
}
