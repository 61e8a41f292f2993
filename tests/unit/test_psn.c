// SPDX-License-Identifier: GPL-2.0-only
/*
 * 24-bit PSN arithmetic (kmod/psn.h), the encoded ACK timeout and the
 * RNR wait's back-off (kmod/timers.h) of the network transport.
 */
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"

/* The kernel types the headers use. */
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;

#include "../../kmod/psn.h"
#include "../../kmod/timers.h"

int main(void)
{
	plan(29);

	is_int(tbr_psn_add(5, 3), 8, "add");
	is_int(tbr_psn_add(0xfffffe, 3), 1, "add wraps at 2^24");
	is_int(tbr_psn_add(0, -1), 0xffffff, "adding -1 to 0 wraps back");
	is_int(tbr_psn_diff(10, 3), 7, "diff forward");
	is_int(tbr_psn_diff(3, 10), -7, "diff backward");
	is_int(tbr_psn_diff(1, 0xffffff), 2, "diff across the wrap");
	is_int(tbr_psn_diff(0xffffff, 1), -2, "diff across the wrap, backward");
	is_int(tbr_psn_diff(0x7fffff, 0), 0x7fffff, "half the space ahead");
	is_int(tbr_psn_diff(0x800000, 0), -0x800000, "more than half is behind");
	ok(tbr_psn_before(0xfffff0, 0x10), "before across the wrap");
	ok(!tbr_psn_before(0x10, 0xfffff0), "not before across the wrap");
	ok(!tbr_psn_before(7, 7), "a PSN is not before itself");
	/* A 32-bit value from the wire: only its low 24 bits count. */
	is_int(tbr_psn_diff(0xff000005, 5), 0, "high byte ignored");

	is_int(tbr_psn_frames(0, 100), 1, "an empty message is one frame");
	is_int(tbr_psn_frames(1, 100), 1, "one byte");
	is_int(tbr_psn_frames(100, 100), 1, "exactly one frame");
	is_int(tbr_psn_frames(101, 100), 2, "one byte more");
	is_int(tbr_psn_frames(2147483648ULL, 65474), 32800, "2 GiB in 64 KiB frames");

	is_int(tbr_ack_timeout_us(0), 0, "timeout 0 is for ever");
	is_int(tbr_ack_timeout_us(1), 8, "timeout 1: 8.192 us");
	is_int(tbr_ack_timeout_us(14), 67108, "timeout 14: 67 ms (perftest's)");
	is_int(tbr_ack_timeout_us(31), 8796093022ULL, "timeout 31: 2.4 hours");

	is_int(tbr_rnr_backoff_us(tbr_rnr_timer_us(1), 0), 10, "RNR: first wait is min_rnr_timer (10 us)");
	is_int(tbr_rnr_backoff_us(10, 1), 20, "RNR: doubles after a second refusal");
	is_int(tbr_rnr_backoff_us(10, 6), 640, "RNR: 640 us after 7 refusals");
	is_int(tbr_rnr_backoff_us(10, 7), TBR_RNR_BACKOFF_MAX_US, "RNR: capped at 1 ms");
	is_int(tbr_rnr_backoff_us(10, 200), TBR_RNR_BACKOFF_MAX_US, "RNR: a huge shift stays capped");
	is_int(tbr_rnr_backoff_us(tbr_rnr_timer_us(0), 3), 655360,
	       "RNR: never less than the responder asked (655 ms), never more");
	is_int(tbr_rnr_backoff_us(tbr_rnr_timer_us(14), 2), 1280,
	       "RNR: a min_rnr_timer above the cap (1.28 ms) is the wait");
	return done();
}
