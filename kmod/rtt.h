/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The round trip an RC requester measures, and how long it waits for an
 * answer before it probes.  Pure arithmetic, unit-tested on the host.
 *
 * The early probe (net_req.c) resends the first unacknowledged frame when
 * nothing has been acknowledged for a while: a lost last frame of a burst,
 * or its lost ACK, has nothing after it to tell.  Waiting a fixed eighth
 * of the QP's timeout (8 ms at perftest's 67 ms, one or two 4 ms ticks)
 * was far longer than a round trip on a cable in one host, but two guests
 * under emulation answer in 1-10 ms: there every late ACK became a probe
 * and a frame sent twice (issue 40).  A late ACK is not a lost one, so
 * the probe waits at least as long as an answer takes on this connection:
 * twice the smoothed round trip, or the round trip plus four times its
 * mean deviation when it varies more (RFC 6298's estimator, the one TCP
 * keeps, in microseconds).
 */
#ifndef TBRDMA_RTT_H
#define TBRDMA_RTT_H

struct tbr_rtt {
	u32 srtt8;	/* smoothed round trip, us << 3; 0: no sample yet */
	u32 rttvar4;	/* its mean deviation, us << 2 */
};

/* Longer samples are clamped: a peer that answers after this is lost. */
#define TBR_RTT_MAX_US	(60U * 1000 * 1000)

/* Fold one round trip of @us microseconds in (RFC 6298, 2.2 and 2.3). */
static inline void tbr_rtt_sample(struct tbr_rtt *r, u32 us)
{
	u32 srtt;

	if (us > TBR_RTT_MAX_US)
		us = TBR_RTT_MAX_US;
	if (!us)
		us = 1;
	if (!r->srtt8) {
		r->srtt8 = us << 3;
		r->rttvar4 = us << 1;	/* us / 2, << 2 */
		return;
	}
	srtt = r->srtt8 >> 3;
	/* rttvar = 3/4 rttvar + 1/4 |srtt - sample| */
	r->rttvar4 += (srtt > us ? srtt - us : us - srtt) - (r->rttvar4 >> 2);
	/* srtt = 7/8 srtt + 1/8 sample */
	r->srtt8 += us - srtt;
}

/*
 * How long after the last progress the early probe may go out, in
 * microseconds, for a QP whose ACK timeout is @timeout_us (not 0): an
 * eighth of it, but never sooner than an answer is due on this connection
 * (max(2 srtt, srtt + 4 rttvar)).  Before the first sample, a quarter of
 * the timeout.  A result at or past @timeout_us means no early probe: the
 * timeout itself probes.
 */
static inline unsigned long long tbr_rtt_probe_us(const struct tbr_rtt *r,
						  unsigned long long timeout_us)
{
	unsigned long long wait = timeout_us / 8, due, srtt, var4;

	if (!r->srtt8)
		return timeout_us / 4;
	srtt = r->srtt8 >> 3;
	var4 = r->rttvar4;	/* 4 rttvar */
	due = srtt + (var4 > srtt ? var4 : srtt);
	return due > wait ? due : wait;
}

#endif /* TBRDMA_RTT_H */
