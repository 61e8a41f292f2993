// SPDX-License-Identifier: GPL-2.0-only
/*
 * The requester's round-trip estimate and early-probe wait (kmod/rtt.h).
 */
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"

typedef uint32_t u32;

#include "../../kmod/rtt.h"

int main(void)
{
	struct tbr_rtt r = { 0 };
	int i;

	plan(11);

	/* perftest's timeout 14: 67108 us, an eighth 8388 us. */
	is_int(tbr_rtt_probe_us(&r, 67108), 16777, "no sample yet: a quarter of the timeout");

	tbr_rtt_sample(&r, 20);
	is_int(r.srtt8 >> 3, 20, "first sample is the round trip");
	is_int(r.rttvar4 >> 2, 10, "and half of it the deviation");
	is_int(tbr_rtt_probe_us(&r, 67108), 8388,
	       "a fast link (20 us): an eighth of the timeout, as before");

	for (i = 0; i < 50; i++)
		tbr_rtt_sample(&r, 20);
	is_int(r.srtt8 >> 3, 20, "a steady round trip stays");
	ok(r.rttvar4 >> 2 <= 1, "and its deviation decays (%u)", r.rttvar4 >> 2);

	/* Two emulated guests: 3-6 ms round trips. */
	r = (struct tbr_rtt){ 0 };
	for (i = 0; i < 40; i++)
		tbr_rtt_sample(&r, i % 2 ? 3000 : 6000);
	ok((r.srtt8 >> 3) > 4000 && (r.srtt8 >> 3) < 5000, "srtt between the samples (%u)", r.srtt8 >> 3);
	ok(tbr_rtt_probe_us(&r, 67108) > 6000,
	   "the probe waits past the slowest round trip seen (%llu us)", tbr_rtt_probe_us(&r, 67108));

	/* One slow answer (a descheduled guest) widens the wait at once. */
	tbr_rtt_sample(&r, 40000);
	ok(tbr_rtt_probe_us(&r, 67108) > 40000, "after a 40 ms answer the wait is above 40 ms (%llu)",
	   tbr_rtt_probe_us(&r, 67108));
	ok(tbr_rtt_probe_us(&r, 16777) >= 16777,
	   "a timeout shorter than that (16.8 ms): no early probe at all");

	tbr_rtt_sample(&r, 0xffffffffu);
	ok((r.srtt8 >> 3) <= TBR_RTT_MAX_US, "an absurd sample is clamped (%u)", r.srtt8 >> 3);
	return done();
}
