/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What each rank holds in memory, and what it sent to each peer,
 * gathered for the report (rank_memory.c).
 */
#ifndef TPRUN_RANK_MEMORY_H
#define TPRUN_RANK_MEMORY_H

#include <stdint.h>

#include "comm/allreduce.h"
#include "model/model.h"

struct tp_rank_mem {
	uint64_t weight_bytes;	/* the model's bytes the rank holds */
	uint64_t peak_rss;	/* its peak resident set (VmHWM) */
	double load_s;		/* how long it took to load them */
	uint64_t kv_bytes;	/* its KV cache (for the run's context) */
	/* bytes it sent to each peer over the transport (its links) */
	uint64_t peer_bytes[TP_MAX_RANKS];
};

/*
 * Every rank's figures (KV_BYTES: this rank's cache) into OUT[nranks], on
 * every rank (AR NULL: one rank). A collective: all ranks call it at the
 * same point. 0, or -1.
 */
int tp_gather_memory(struct tp_ar *ar, const struct tp_weights *w,
		     uint64_t kv_bytes, struct tp_rank_mem *out);

#endif /* TPRUN_RANK_MEMORY_H */
