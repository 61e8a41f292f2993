// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One rank's start: its name in messages, its device, the other ranks'
 * endpoints when they meet at a rendezvous address; then the command it
 * runs (generation, tprun serve or --bench-allreduce).
 */
#include "base/util.h"
#include "cmd/bench_allreduce.h"
#include "cmd/rank.h"
#include "cmd/run.h"
#include "cmd/serve.h"
#include "comm/rendezvous.h"
#include "gguf/gguf.h"

/*
 * --rendezvous: learn the other ranks' endpoints (o->peers) and get our
 * listening socket, checking world size and model file on the way.
 */
static int meet_at_rendezvous(struct tp_opts *o)
{
	struct tp_rdv_reg q = {
		.addr = o->rendezvous, .listen_host = o->listen_host,
		.rank = o->rank, .nranks = o->nranks,
		.timeout_ms = o->connect_timeout_ms,
	};
	char err[600];

	if (o->model && gguf_fingerprint(o->model, &q.model_size,
					 &q.model_hash, err, sizeof(err))) {
		tp_err("%s", err);
		return -1;
	}
	return tp_rdv_register(&q, &o->peers, &o->listen_fd);
}

int tp_rank_main(struct tp_opts *o)
{
	int me = o->rank < 0 ? 0 : o->rank, multi = o->nranks > 1;

	o->rank = me;
	if (multi)
		tp_log_rank = me;
	/* under a launcher the ranks of one host share its device list */
	if (tp_opts_device(o, o->local_rank >= 0 ? o->local_rank : me,
			   o->device, sizeof(o->device))) {
		tp_err("--devices %s has no device for %srank %d", o->devices,
		       o->local_rank >= 0 ? "local " : "",
		       o->local_rank >= 0 ? o->local_rank : me);
		return TP_EXIT_USAGE;
	}
	if (multi && o->rendezvous && meet_at_rendezvous(o))
		return TP_EXIT_FAIL;
	if (o->bench_ar)
		return tp_bench_rank(o);
	if (o->serve)
		return tp_serve_rank(o);
	return tp_run_rank(o);
}
