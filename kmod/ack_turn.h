/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * How long an RC responder holds back the ACK a requester asked for, so
 * that a request of our own carries it (net_resp.c).  Pure arithmetic,
 * unit-tested on the host.
 *
 * The responder watches its turns: from executing a request that asked
 * for an ACK to our requester sending its next request to the same peer.
 * In a ping-pong (perftest's latency tests, ibv_rc_pingpong, an RPC whose
 * server answers at once) that is the application's reply, and the ACK
 * can ride on it: one frame instead of two each way, and under emulation
 * each frame costs 100-200 us of CPU on both ends.  A turn that never
 * comes (a one-way stream) or comes late (a server that thinks, a CPU
 * shared with a busy loop) must not hold the ACK: the requester would
 * wait for its completion, and a long wait looks like a loss to its early
 * probe.  So the ACK waits only where replies have come quickly: four
 * times the smoothed turn, at most the cap, and not at all when the turn
 * is typically over half the cap.  Held back on a turn that then takes
 * longer, it goes out alone when the wait ends; in a ping-pong that costs
 * nothing, the requester waiting for the reply anyway.
 *
 * Nor where turns are very short: the wait is a timer started and
 * stopped for every message, which on a veth in one guest (turns of
 * 10-20 us) cost more than the frame it saved (ib_write_lat 10.1 -> 13.3
 * us, tprun's 256-byte all-reduce 31 -> 55 us, 2026-11-29).  A turn of
 * TBR_ACK_TURN_MIN_US or more means frames that cost that much.
 *
 * And a wait that ran out (no reply came to carry the ACK: perhaps the
 * peer waits for this very ACK before it goes on) is not tried again on
 * the next asks: after n such misses in a row, the next 2^n - 1 asks
 * are answered at once (tbr_ack_turn_skip()), up to 255.
 */
#ifndef TBRDMA_ACK_TURN_H
#define TBRDMA_ACK_TURN_H

/* A turn longer than this is folded in as this: a pause, not a reply. */
#define TBR_ACK_TURN_MAX_US	4000U
/* Shorter turns: frames too cheap for a timer per message to pay. */
#define TBR_ACK_TURN_MIN_US	50U
/* Misses in a row counted at most: 2^8 - 1 asks answered at once. */
#define TBR_ACK_TURN_MISSES_MAX	8U

/* Fold a turn of @us microseconds into @turn8 (us << 3; 0: none yet). */
static inline u32 tbr_ack_turn_fold(u32 turn8, u32 us)
{
	if (us > TBR_ACK_TURN_MAX_US)
		us = TBR_ACK_TURN_MAX_US;
	if (!us)
		us = 1;
	if (!turn8)
		return us << 3;
	/* turn = 7/8 turn + 1/8 sample, as TCP smooths its round trip */
	return turn8 + us - (turn8 >> 3);
}

/*
 * How long to hold an asked-for ACK back, in microseconds, after turns
 * smoothed to @turn8, with @cap_us the administrator's limit (0: never).
 * 0 means send it now.
 */
static inline u32 tbr_ack_turn_delay_us(u32 turn8, u32 cap_us)
{
	u32 turn = turn8 >> 3;

	if (!cap_us || !turn8 || turn > cap_us / 2 ||
	    turn < TBR_ACK_TURN_MIN_US)
		return 0;
	return turn * 4 < cap_us ? turn * 4 : cap_us;
}

/* After @misses waits in a row ran out: how many asks go unheld. */
static inline u32 tbr_ack_turn_skip(u32 misses)
{
	if (misses > TBR_ACK_TURN_MISSES_MAX)
		misses = TBR_ACK_TURN_MISSES_MAX;
	return (1U << misses) - 1;
}

#endif /* TBRDMA_ACK_TURN_H */
