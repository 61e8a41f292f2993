// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "counters.h"

void counter_set_clear(struct counter_set *set)
{
	set->n = 0;
}

int counter_set_put(struct counter_set *set, const char *name,
		    uint64_t value)
{
	size_t i;

	if (strlen(name) >= COUNTER_NAME_MAX)
		return -ENAMETOOLONG;
	for (i = 0; i < set->n; i++) {
		if (!strcmp(set->c[i].name, name)) {
			set->c[i].value = value;
			return 0;
		}
	}
	if (set->n == COUNTER_SET_MAX)
		return -ENOSPC;
	strcpy(set->c[set->n].name, name);
	set->c[set->n].value = value;
	set->n++;
	return 0;
}

bool counter_set_get(const struct counter_set *set, const char *name,
		     uint64_t *value)
{
	size_t i;

	for (i = 0; i < set->n; i++) {
		if (!strcmp(set->c[i].name, name)) {
			*value = set->c[i].value;
			return true;
		}
	}
	return false;
}

uint64_t counter_growth(uint64_t before, uint64_t after)
{
	return after >= before ? after - before : after;
}

/* Each rate sums up to two of the kernel's counters (see kmod/counters.c). */
static const struct {
	const char *name;
	const char *counters[2];
} rate_defs[RATE_KINDS] = {
	[RATE_TX_BYTES] = { "tx_bytes", { "tx_bytes" } },
	[RATE_RX_BYTES] = { "rx_bytes", { "rx_bytes" } },
	[RATE_TX_OPS] = { "tx_ops", { "tx_ops" } },
	[RATE_RX_OPS] = { "rx_ops", { "rx_ops" } },
	[RATE_TX_PACKETS] = { "tx_packets", { "tx_packets" } },
	[RATE_RX_PACKETS] = { "rx_packets", { "rx_packets" } },
	[RATE_RETRANSMITS] = { "retransmits", { "retransmits" } },
	[RATE_ERRORS] = { "rx_errors",
			  { "rx_bad_frames", "rx_checksum_errors" } },
};

const char *rate_name(enum rate_kind kind)
{
	return rate_defs[kind].name;
}

int link_rates_compute(const struct counter_set *before,
		       const struct counter_set *after, double seconds,
		       struct link_rates *rates)
{
	uint64_t b, a, sum;
	int k, i;

	if (!(seconds > 0))
		return -EINVAL;
	for (k = 0; k < RATE_KINDS; k++) {
		rates->known[k] = true;
		sum = 0;
		for (i = 0; i < 2 && rate_defs[k].counters[i]; i++) {
			const char *name = rate_defs[k].counters[i];

			if (!counter_set_get(before, name, &b) ||
			    !counter_set_get(after, name, &a)) {
				rates->known[k] = false;
				break;
			}
			sum += counter_growth(b, a);
		}
		rates->per_second[k] = rates->known[k] ? sum / seconds : 0;
	}
	return 0;
}

void format_si(char *buf, size_t size, double value, const char *unit)
{
	static const char prefixes[] = { ' ', 'k', 'M', 'G', 'T', 'P' };
	/* "12.3 MB/s" but "12.3k/s": a bare "/s" hugs its number. */
	const char *space = unit[0] == '/' ? "" : " ";
	char prefix[2] = "";
	size_t p = 0;

	while (value >= 999.5 && p < sizeof(prefixes) - 1) {
		value /= 1000;
		p++;
	}
	prefix[0] = prefixes[p];

	if (p == 0) {
		/* Whole units below 1000: "950 B/s", not "950.0 B/s". */
		snprintf(buf, size, "%.0f%s%s", value, space, unit);
		return;
	}
	snprintf(buf, size, value >= 99.95 ? "%.0f%s%s%s" :
			    value >= 9.995 ? "%.1f%s%s%s" : "%.2f%s%s%s",
		 value, space, prefix, unit);
}
