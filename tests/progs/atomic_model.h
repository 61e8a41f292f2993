/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Model check of the remote atomics the integrity test issued against one
 * 8-byte counter from many QPs and processes.
 *
 * The test keeps every counter strictly increasing: FETCH_AND_ADD adds
 * 1..1000, a CMP_AND_SWP swaps COMPARE for COMPARE + 1..1000.  Then the
 * counter's history is a chain init = v0 < v1 < ... < vn = final, each
 * step made by exactly one op that returned the step's start value.
 * Whatever order the device executed them in, the ops must fit that chain;
 * a lost update (two ops returning the same value and both changing it),
 * a torn or invented value, or a failed CAS that wrote anyway breaks it.
 */
#ifndef TBR_ATOMIC_MODEL_H
#define TBR_ATOMIC_MODEL_H

#include <stdint.h>

enum { AOP_FAA = 0, AOP_CAS = 1 };

/* One completed atomic, as the requester saw it. */
struct alog {
	uint8_t counter;
	uint8_t kind;		/* AOP_* */
	uint16_t qp;		/* global requester QP index: per-QP order */
	uint32_t seq;		/* order of completion on that QP */
	uint64_t arg;		/* FAA: value added; CAS: compare */
	uint64_t swp;		/* CAS: swap */
	uint64_t ret;		/* original value returned */
};

struct model_result {
	long faa, cas, cas_ok;
	uint64_t sum_final;	/* init + all increments that happened */
	char why[256];		/* first inconsistency, "" if none */
};

/* Check the N ops (all on one counter; the array is reordered) against
 * INIT and the FINAL value read from memory. 0 = consistent. */
int model_check(struct alog *ops, long n, uint64_t init, uint64_t final,
		struct model_result *r);

#endif /* TBR_ATOMIC_MODEL_H */
