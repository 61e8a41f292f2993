// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tools/tbrdma's counter sets and `tbrdma stats` rates: growth across a
 * counter reset, rates over the measured interval, rates the device lacks
 * counters for, and the human-readable units.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "counters.h"
#include "tap.h"

static int near(double got, double want)
{
	if (fabs(got - want) <= 1e-9 * (fabs(want) + 1))
		return 1;
	diag("  got %.9g, expected %.9g", got, want);
	return 0;
}

static void fill(struct counter_set *s, uint64_t tx_bytes, uint64_t rx_bytes,
		 uint64_t tx_ops, uint64_t retrans, uint64_t bad,
		 uint64_t csum)
{
	counter_set_clear(s);
	counter_set_put(s, "tx_packets", tx_bytes / 1000);
	counter_set_put(s, "tx_bytes", tx_bytes);
	counter_set_put(s, "rx_packets", rx_bytes / 1000);
	counter_set_put(s, "rx_bytes", rx_bytes);
	counter_set_put(s, "tx_ops", tx_ops);
	counter_set_put(s, "rx_ops", tx_ops);
	counter_set_put(s, "retransmits", retrans);
	counter_set_put(s, "rx_bad_frames", bad);
	counter_set_put(s, "rx_checksum_errors", csum);
}

static void test_set(void)
{
	struct counter_set s;
	uint64_t v = 0;
	char name[80];
	int i, err = 0;

	counter_set_clear(&s);
	is_int(counter_set_put(&s, "tx_bytes", 5), 0, "put a counter");
	counter_set_put(&s, "tx_bytes", 7);
	ok(counter_set_get(&s, "tx_bytes", &v) && v == 7 && s.n == 1,
	   "putting a name again replaces its value");
	ok(!counter_set_get(&s, "rx_bytes", &v), "absent counter not found");
	for (i = 1; i < COUNTER_SET_MAX && !err; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		err = counter_set_put(&s, name, i);
	}
	is_int(err, 0, "the set holds %d counters", COUNTER_SET_MAX);
	is_int(counter_set_put(&s, "one_more", 1), -ENOSPC,
	       "one more is refused, not written past the end");
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	is_int(counter_set_put(&s, name, 1), -ENAMETOOLONG,
	       "a name longer than the slot is refused");
}

static void test_growth(void)
{
	is_int(counter_growth(100, 250), 150, "growth between two samples");
	is_int(counter_growth(100, 100), 0, "no traffic, no growth");
	is_int(counter_growth(1000, 30), 30,
	       "a smaller value is a re-created device: growth since zero");
	is_int(counter_growth(UINT64_MAX - 5, UINT64_MAX), 5,
	       "growth near the top of the range");
}

static void test_rates(void)
{
	struct counter_set before, after;
	struct link_rates r;

	fill(&before, 1000000, 2000000, 10, 0, 1, 2);
	fill(&after, 3000000, 2500000, 30, 4, 2, 5);
	is_int(link_rates_compute(&before, &after, 2.0, &r), 0,
	       "rates over 2 s");
	ok(near(r.per_second[RATE_TX_BYTES], 1e6) &&
		   near(r.per_second[RATE_RX_BYTES], 250000),
	   "bytes per second from the byte counters");
	ok(near(r.per_second[RATE_TX_OPS], 10) &&
		   near(r.per_second[RATE_RX_OPS], 10),
	   "operations per second");
	ok(near(r.per_second[RATE_TX_PACKETS], 1000) &&
		   near(r.per_second[RATE_RX_PACKETS], 250),
	   "packets per second");
	ok(near(r.per_second[RATE_RETRANSMITS], 2),
	   "retransmissions per second");
	ok(near(r.per_second[RATE_ERRORS], 2),
	   "bad frames and checksum errors summed: (1 + 3) / 2 s");

	/* An actual interval a little longer than asked for is what counts. */
	link_rates_compute(&before, &after, 2.5, &r);
	ok(near(r.per_second[RATE_TX_BYTES], 800000),
	   "the measured interval divides, not the requested one");

	/* A module without the ops counters: those rates unknown, not 0. */
	counter_set_clear(&before);
	counter_set_clear(&after);
	counter_set_put(&before, "tx_bytes", 0);
	counter_set_put(&after, "tx_bytes", 100);
	counter_set_put(&after, "tx_ops", 100);
	link_rates_compute(&before, &after, 1.0, &r);
	ok(r.known[RATE_TX_BYTES] && !r.known[RATE_TX_OPS] &&
		   !r.known[RATE_ERRORS],
	   "a rate is unknown unless both samples have its counters");
	ok(link_rates_compute(&before, &after, 0, &r) == -EINVAL &&
		   link_rates_compute(&before, &after, -1, &r) == -EINVAL &&
		   link_rates_compute(&before, &after, NAN, &r) == -EINVAL,
	   "no rates over a zero, negative or NaN interval");
	is_str(rate_name(RATE_ERRORS), "rx_errors", "JSON name of a rate");
}

static void check_si(double v, const char *unit, const char *want)
{
	char buf[32];

	format_si(buf, sizeof(buf), v, unit);
	is_str(buf, want, "format_si(%g, \"%s\")", v, unit);
}

int main(void)
{
	plan(30);
	test_set();
	test_growth();
	test_rates();
	check_si(0, "B/s", "0 B/s");
	check_si(950, "B/s", "950 B/s");
	check_si(999.4, "B/s", "999 B/s");
	check_si(999.6, "B/s", "1.00 kB/s");
	check_si(12345, "B/s", "12.3 kB/s");
	check_si(123456789, "B/s", "123 MB/s");
	check_si(6.3e9, "B/s", "6.30 GB/s");
	check_si(1200, "/s", "1.20k/s");
	check_si(7, "/s", "7/s");
	check_si(3e18, "B/s", "3000 PB/s");
	return done();
}
