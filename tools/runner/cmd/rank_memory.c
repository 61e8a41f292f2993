// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each rank holds: its weight bytes, its peak resident set (VmHWM),
 * its load time and its KV cache's bytes, and the bytes it sent each peer
 * (before this gather), gathered to every rank for the report. The values
 * travel as 16-bit pieces in floats, each non-zero on its owner only, so
 * the all-reduce's sum carries them exactly.
 */
#include <stdlib.h>
#include <string.h>

#include "base/memstat.h"
#include "base/util.h"
#include "cmd/rank_memory.h"

#define PIECES 4	/* 16-bit pieces of a 64-bit value */
/* weight bytes, peak RSS, load time, KV cache bytes, then bytes to each
 * of N peers */
#define NVAL(N) (4 + (N))

static void put(float *v, uint64_t x)
{
	int i;

	for (i = 0; i < PIECES; i++, x >>= 16)
		v[i] = (float)(x & 0xffff);
}

static uint64_t get(const float *v)
{
	uint64_t x = 0;
	int i;

	for (i = PIECES - 1; i >= 0; i--)
		x = x << 16 | (uint64_t)v[i];
	return x;
}

int tp_gather_memory(struct tp_ar *ar, const struct tp_weights *w,
		     uint64_t kv_bytes, struct tp_rank_mem *out)
{
	int N = ar ? ar->nranks : 1, me = ar ? ar->rank : 0, r, phase;
	size_t n = (size_t)N * NVAL(N) * PIECES, chunk, a;
	float *mine = tp_calloc(n, sizeof(float));
	float *sum = tp_calloc(n, sizeof(float));
	float *v = mine + (size_t)me * NVAL(N) * PIECES;
	int ret = 0, p;

	put(v, w->owned_bytes);
	put(v + PIECES, tp_peak_rss());
	put(v + 2 * PIECES, (uint64_t)(w->load_s * 1e6));
	put(v + 3 * PIECES, kv_bytes);
	for (p = 0; ar && p < N; p++)
		put(v + (4 + p) * PIECES, ar->x->peer_bytes[p]);
	if (!ar) {
		memcpy(sum, mine, n * sizeof(float));
	} else {
		phase = ar->phase;
		ar->phase = TP_PHASE_AUX;
		chunk = ar->max_floats;
		for (a = 0; a < n && !ret; a += chunk)
			ret = tp_allreduce_add(ar, mine + a, sum + a,
					       n - a < chunk ? n - a : chunk);
		ar->phase = phase;
	}
	for (r = 0; !ret && r < N; r++) {
		const float *s = sum + (size_t)r * NVAL(N) * PIECES;

		out[r].weight_bytes = get(s);
		out[r].peak_rss = get(s + PIECES);
		out[r].load_s = (double)get(s + 2 * PIECES) / 1e6;
		out[r].kv_bytes = get(s + 3 * PIECES);
		for (p = 0; p < N; p++)
			out[r].peer_bytes[p] = get(s + (4 + p) * PIECES);
	}
	free(mine);
	free(sum);
	return ret;
}
