// SPDX-License-Identifier: GPL-2.0-only
/* Atomic-op history checker; see atomic_model.h for the model. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "atomic_model.h"

static int changes(const struct alog *a)
{
	return a->kind == AOP_FAA || a->ret == a->arg;
}

static uint64_t new_value(const struct alog *a)
{
	if (a->kind == AOP_FAA)
		return a->ret + a->arg;
	return a->ret == a->arg ? a->swp : a->ret;
}

static int by_qp_seq(const void *x, const void *y)
{
	const struct alog *a = x, *b = y;

	if (a->qp != b->qp)
		return a->qp < b->qp ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Changing ops first, by returned value; then the failed CASes. */
static int by_change_ret(const void *x, const void *y)
{
	const struct alog *a = x, *b = y;

	if (changes(a) != changes(b))
		return changes(a) ? -1 : 1;
	return a->ret < b->ret ? -1 : a->ret > b->ret;
}

static int is_state(const struct alog *chg, long n, uint64_t final,
		    uint64_t v)
{
	long lo = 0, hi = n;

	if (v == final)
		return 1;
	while (lo < hi) {
		long mid = (lo + hi) / 2;

		if (chg[mid].ret == v)
			return 1;
		if (chg[mid].ret < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

#define WHY(...) (snprintf(r->why, sizeof(r->why), __VA_ARGS__), 1)

int model_check(struct alog *ops, long n, uint64_t init, uint64_t final,
		struct model_result *r)
{
	uint64_t v = init;
	long nchg = 0, i;

	*r = (struct model_result){ .sum_final = init };
	for (i = 0; i < n; i++) {
		if (ops[i].kind == AOP_FAA) {
			r->faa++;
			r->sum_final += ops[i].arg;
		} else {
			r->cas++;
			if (ops[i].ret == ops[i].arg) {
				r->cas_ok++;
				r->sum_final += ops[i].swp - ops[i].arg;
			}
		}
	}
	if (r->sum_final != final)
		return WHY("final value 0x%" PRIx64 " but init + all increments = 0x%" PRIx64,
			   final, r->sum_final);

	/* One QP's atomics execute in order: what they saw never goes back. */
	qsort(ops, n, sizeof(*ops), by_qp_seq);
	for (i = 1; i < n; i++) {
		const struct alog *p = &ops[i - 1], *a = &ops[i];

		if (p->qp == a->qp && a->ret < new_value(p))
			return WHY("QP %u: op %u returned 0x%" PRIx64 " after op %u left 0x%" PRIx64,
				   a->qp, a->seq, a->ret, p->seq, new_value(p));
	}

	/* The changing ops, sorted by what they saw, must form the chain. */
	qsort(ops, n, sizeof(*ops), by_change_ret);
	while (nchg < n && changes(&ops[nchg]))
		nchg++;
	for (i = 0; i < nchg; i++) {
		if (ops[i].ret != v)
			return WHY("chain broken at step %ld: expected an op to see 0x%" PRIx64 ", next saw 0x%" PRIx64 "%s",
				   i, v, ops[i].ret,
				   i && ops[i].ret == ops[i - 1].ret ?
				   " (lost update: two ops saw the same value)" : "");
		v = new_value(&ops[i]);
	}
	if (v != final)
		return WHY("chain ends at 0x%" PRIx64 ", memory holds 0x%" PRIx64,
			   v, final);

	/* A failed CAS must have seen a value the counter really held. */
	for (i = nchg; i < n; i++)
		if (!is_state(ops, nchg, final, ops[i].ret) && ops[i].ret != init)
			return WHY("failed CAS (compare 0x%" PRIx64 ") returned 0x%" PRIx64 ", never a value of the counter",
				   ops[i].arg, ops[i].ret);
	return 0;
}
