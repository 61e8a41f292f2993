/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A device's counters (the RDMA core's per-port hw counters, by name) and
 * the rates between two samples of them.
 */
#ifndef TBRDMA_ADMIN_COUNTERS_H
#define TBRDMA_ADMIN_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COUNTER_NAME_MAX 64
#define COUNTER_SET_MAX 64

struct counter {
	char name[COUNTER_NAME_MAX];
	uint64_t value;
};

struct counter_set {
	size_t n;
	struct counter c[COUNTER_SET_MAX];
};

void counter_set_clear(struct counter_set *set);
/* Add or replace a counter.  -ENOSPC when full, -ENAMETOOLONG. */
int counter_set_put(struct counter_set *set, const char *name,
		    uint64_t value);
bool counter_set_get(const struct counter_set *set, const char *name,
		     uint64_t *value);

/*
 * How much a counter grew between two samples.  Counters only grow; a
 * smaller value means the device was re-created (same name, counters back
 * at zero), so the growth since then is the new value itself.
 */
uint64_t counter_growth(uint64_t before, uint64_t after);

/* The rates `tbrdma stats` shows, per second. */
enum rate_kind {
	RATE_TX_BYTES,
	RATE_RX_BYTES,
	RATE_TX_OPS,
	RATE_RX_OPS,
	RATE_TX_PACKETS,
	RATE_RX_PACKETS,
	RATE_RETRANSMITS,
	RATE_ERRORS,	/* frames dropped as bad or damaged */
	RATE_KINDS
};

struct link_rates {
	double per_second[RATE_KINDS];
	bool known[RATE_KINDS];	/* false: the device lacks the counters */
};

/* Name of a rate in --json output, e.g. "tx_bytes". */
const char *rate_name(enum rate_kind kind);

/*
 * Rates from two samples @seconds apart.  A rate is known when every
 * counter it sums is in both samples.  -EINVAL if @seconds <= 0.
 */
int link_rates_compute(const struct counter_set *before,
		       const struct counter_set *after, double seconds,
		       struct link_rates *rates);

/*
 * @value with an SI prefix and @unit, three significant digits:
 * "950 B/s", "12.3 MB/s"; a unit starting with "/" goes without a
 * space: "1.20G/s".
 */
void format_si(char *buf, size_t size, double value, const char *unit);

#endif /* TBRDMA_ADMIN_COUNTERS_H */
