/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The verbs spec's encoded timer values.  Pure arithmetic, shared with the
 * host unit tests.
 */
#ifndef TBRDMA_TIMERS_H
#define TBRDMA_TIMERS_H

/*
 * min_rnr_timer (5 bits): how long a requester waits after an RNR NAK, in
 * microseconds.  Code 0 is the longest wait (655.36 ms), codes 1..31 grow
 * from 10 us to 491.52 ms.
 */
static inline unsigned int tbr_rnr_timer_us(unsigned int code)
{
	static const unsigned short tens_of_us[32] = {
		0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768, 49152,
	};

	code &= 31;
	return code ? tens_of_us[code] * 10U : 655360U;
}

/*
 * timeout (5 bits): how long a requester waits for an ACK before it
 * retransmits, 4.096 us * 2^timeout, in microseconds; 0 means for ever
 * (returned as 0).
 */
static inline unsigned long long tbr_ack_timeout_us(unsigned int code)
{
	code &= 31;
	return code ? (4096ULL << code) / 1000 : 0;
}

/* rnr_retry 7 means "retry for ever". */
#define TBR_RNR_RETRY_INFINITE	7

/*
 * After RNR NAKs in a row the requester waits longer each time: the
 * responder's min_rnr_timer the first time, twice that the next, and so
 * on up to TBR_RNR_BACKOFF_MAX_US (never less than the responder asked
 * for).  A receiver that is descheduled for milliseconds then costs a
 * few NAKs, not one every 10 us.  @shift is the number of RNR NAKs since
 * the responder last accepted something.
 */
#define TBR_RNR_BACKOFF_MAX_US	1000U
#define TBR_RNR_BACKOFF_SHIFT_MAX	16	/* 10 us << 16 is far above the cap */

static inline unsigned int tbr_rnr_backoff_us(unsigned int base_us,
					      unsigned int shift)
{
	unsigned int cap = base_us > TBR_RNR_BACKOFF_MAX_US ?
			   base_us : TBR_RNR_BACKOFF_MAX_US;
	unsigned long long us;

	if (shift > TBR_RNR_BACKOFF_SHIFT_MAX)
		shift = TBR_RNR_BACKOFF_SHIFT_MAX;
	us = (unsigned long long)base_us << shift;
	return us < cap ? (unsigned int)us : cap;
}

#endif /* TBRDMA_TIMERS_H */
