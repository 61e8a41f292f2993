// SPDX-License-Identifier: GPL-2.0-only
/*
 * How long an RC responder holds an asked-for ACK back (kmod/ack_turn.h):
 * only where its own replies have come quickly, never past the cap.
 */
#include <stdbool.h>
#include <stdint.h>

#include "tap.h"

typedef uint32_t u32;

#include "../../kmod/ack_turn.h"

int main(void)
{
	u32 t8 = 0;
	int i;

	plan(17);

	is_int(tbr_ack_turn_delay_us(0, 1000), 0, "no turn seen yet: the ACK goes at once");

	/* A ping-pong between two emulated guests: replies after ~100 us. */
	t8 = tbr_ack_turn_fold(t8, 100);
	is_int(t8 >> 3, 100, "the first turn is the estimate");
	is_int(tbr_ack_turn_delay_us(t8, 1000), 400, "held four turns: 400 us");
	is_int(tbr_ack_turn_delay_us(t8, 0), 0, "ack_delay_us 0: never held");
	is_int(tbr_ack_turn_delay_us(t8, 300), 300, "never past the cap");

	/* Replies slower than half the cap: holding would only add a wait. */
	for (i = 0; i < 40; i++)
		t8 = tbr_ack_turn_fold(t8, 700);
	ok((t8 >> 3) > 600, "turns of 700 us move the estimate there (%u)", t8 >> 3);
	is_int(tbr_ack_turn_delay_us(t8, 1000), 0, "turns over half the cap: not held");

	/* A one-way stream: every ask is an unanswered, longest turn. */
	t8 = tbr_ack_turn_fold(0, 50);
	for (i = 0; i < 8; i++)
		t8 = tbr_ack_turn_fold(t8, TBR_ACK_TURN_MAX_US);
	is_int(tbr_ack_turn_delay_us(t8, 1000), 0,
	       "eight unanswered asks after a fast turn: no longer held (estimate %u)", t8 >> 3);

	/* Back to a ping-pong: the estimate comes down again. */
	for (i = 0; i < 40; i++)
		t8 = tbr_ack_turn_fold(t8, 80);
	ok(tbr_ack_turn_delay_us(t8, 1000) > 0 && tbr_ack_turn_delay_us(t8, 1000) < 400,
	   "after 40 quick replies it is held again (%u us)", tbr_ack_turn_delay_us(t8, 1000));

	/* Absurd turns are clamped, zero-length ones count as 1 us. */
	t8 = tbr_ack_turn_fold(0, 0xffffffffu);
	is_int(t8 >> 3, TBR_ACK_TURN_MAX_US, "a huge turn is the longest");
	t8 = tbr_ack_turn_fold(0, 0);
	is_int(t8 >> 3, 1, "a zero turn is 1 us, not 'none yet'");
	is_int(tbr_ack_turn_delay_us(t8, 1000), 0, "and is not held");

	/* A veth in one guest: turns of 10-20 us, too cheap to hold for. */
	t8 = 0;
	for (i = 0; i < 20; i++)
		t8 = tbr_ack_turn_fold(t8, i % 2 ? 10 : 20);
	is_int(tbr_ack_turn_delay_us(t8, 1000), 0, "turns of 10-20 us: not held (estimate %u)", t8 >> 3);
	is_int(tbr_ack_turn_delay_us(tbr_ack_turn_fold(0, TBR_ACK_TURN_MIN_US), 1000),
	       4 * TBR_ACK_TURN_MIN_US, "a turn of the minimum is held");

	/* Waits that ran out: ever more asks answered at once. */
	is_int(tbr_ack_turn_skip(0), 0, "no miss: every ask may be held");
	ok(tbr_ack_turn_skip(1) == 1 && tbr_ack_turn_skip(3) == 7,
	   "1 miss in a row: 1 ask unheld, 3 misses: 7");
	is_int(tbr_ack_turn_skip(100), 255, "at most 255");
	return done();
}
