// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ring index math of provider/queue.h: free-running 32-bit counters
 * across the 2^32 wrap, full/empty, slot addressing, a corrupted counter
 * from the other side, and the checks of a kernel queue description.
 */
#include <stdint.h>

#include "tap.h"
#include "../../provider/queue.h"

static void test_counters(void)
{
	/* Empty and full, at 0 and across the wrap. */
	is_int(tbrdma_q_used(0, 0), 0, "empty at 0");
	is_int(tbrdma_q_free(0, 0, 8), 8, "empty ring: all 8 slots free");
	is_int(tbrdma_q_free(8, 0, 8), 0, "8 posted, none consumed: full");
	is_int(tbrdma_q_free(7, 0, 8), 1, "7 posted: one slot left");
	is_int(tbrdma_q_used(2, 0xfffffffe), 4, "used across the wrap");
	is_int(tbrdma_q_free(2, 0xfffffffe, 8), 4, "free across the wrap");
	is_int(tbrdma_q_free(4, 0xfffffffc, 8), 0, "full across the wrap");
	is_int(tbrdma_q_free(0xffffffff, 0xffffffff, 8), 8,
	       "empty just below the wrap");
	is_int(tbrdma_q_free(0, 0xffffffff, 1), 0,
	       "1-slot ring full across the wrap");
	is_int(tbrdma_q_free(0x80000000u, 0x80000000u - 16384, 16384), 0,
	       "largest SQ full at 2^31");

	/* Readable CQEs. */
	is_int(tbrdma_q_ready(5, 5, 8), 0, "CQ empty");
	is_int(tbrdma_q_ready(3, 0xffffffff, 8), 4, "CQ entries across wrap");
	is_int(tbrdma_q_ready(8, 0, 8), 8, "CQ full: all readable");

	/* A corrupted counter must never open room or yield entries. */
	ok(!tbrdma_q_sane(9, 0, 8), "producer - consumer > slots is insane");
	is_int(tbrdma_q_free(9, 0, 8), 0, "insane fill level counts as full");
	is_int(tbrdma_q_free(5, 6, 8), 0,
	       "consumer ahead of producer counts as full");
	is_int(tbrdma_q_free(0, 0x80000000u, 8), 0,
	       "consumer half the space away counts as full");
	is_int(tbrdma_q_ready(5, 6, 8), 0, "consumer ahead: nothing to read");
	ok(!tbrdma_q_sane(5, 6, 8), "consumer ahead of producer is insane");
	ok(tbrdma_q_sane(8, 0, 8), "exactly full is sane");
	ok(tbrdma_q_sane(0, 0xfffffff8, 8), "exactly full across wrap is sane");
}

static void test_slots(void)
{
	uint8_t map[TBRDMA_QUEUE_SLOTS_OFFSET + 8 * 128];
	struct tbrdma_queue q = {
		.map = map, .hdr = (void *)map,
		.num_slots = 8, .slot_size = 128,
	};

	is_int(tbrdma_q_slot_offset(0, 8, 128), TBRDMA_QUEUE_SLOTS_OFFSET,
	       "slot 0 right after the header");
	is_int(tbrdma_q_slot_offset(7, 8, 128), TBRDMA_QUEUE_SLOTS_OFFSET + 7 * 128,
	       "slot 7");
	is_int(tbrdma_q_slot_offset(8, 8, 128), TBRDMA_QUEUE_SLOTS_OFFSET,
	       "index 8 wraps to slot 0");
	is_int(tbrdma_q_slot_offset(0xffffffff, 8, 128),
	       TBRDMA_QUEUE_SLOTS_OFFSET + 7 * 128,
	       "index 2^32-1 is the last slot");
	is_int(tbrdma_q_slot_offset(0xffffffff, 65536, 64),
	       TBRDMA_QUEUE_SLOTS_OFFSET + (size_t)65535 * 64,
	       "largest CQ: last slot");
	is_int(tbrdma_q_slot_offset(0x12345, 1, 64), TBRDMA_QUEUE_SLOTS_OFFSET,
	       "1-slot ring: always slot 0");
	ok(tbrdma_q_slot(&q, 3) == map + TBRDMA_QUEUE_SLOTS_OFFSET + 3 * 128,
	   "slot address from the mapping");
	ok(tbrdma_q_slot(&q, 0xfffffffb) == map + TBRDMA_QUEUE_SLOTS_OFFSET + 3 * 128,
	   "slot address across the wrap");
	ok(tbrdma_q_slot(&q, 0xffffffff) + 128 == map + sizeof(map),
	   "last slot ends at the end of the mapping");

	/* The shared counters, single-threaded: just the plumbing. */
	tbrdma_q_store_release(&q.hdr->producer, 0xfffffffe);
	is_int(tbrdma_q_load_acquire(&q.hdr->producer), 0xfffffffe,
	       "release store / acquire load round trip");
}

static void test_capacity(void)
{
	is_int(tbrdma_send_slot_max_sge(64), 0, "64-byte send slot: no SGE");
	is_int(tbrdma_send_slot_max_sge(64 + 16), 1, "one SGE");
	is_int(tbrdma_send_slot_max_sge(64 + 32 * 16), 32, "32 SGEs");
	is_int(tbrdma_send_slot_max_sge(64 + 32 * 16 + 15), 32,
	       "partial SGE does not count");
	is_int(tbrdma_send_slot_max_sge(32), 0, "too small a slot: nothing");
	is_int(tbrdma_send_slot_max_inline(64 + 512), 512, "inline bytes");
	is_int(tbrdma_send_slot_max_inline(8), 0, "inline: too small a slot");
	is_int(tbrdma_recv_slot_max_sge(16 + 4 * 16), 4, "recv SGEs");
	is_int(tbrdma_recv_slot_max_sge(8), 0, "recv: too small a slot");
}

static void test_info_check(void)
{
	struct tbrdma_queue_info good = {
		.mmap_offset = 0x10000, .num_slots = 8, .slot_size = 128,
		.mmap_size = TBRDMA_QUEUE_SLOTS_OFFSET + 8 * 128,
	};
	struct tbrdma_queue_info i;

	is_int(tbrdma_queue_info_check(&good, 64), 0, "valid queue");
	i = good;
	i.num_slots = 0;
	is_int(tbrdma_queue_info_check(&i, 64), EPROTO, "0 slots");
	i = good;
	i.num_slots = 6;
	is_int(tbrdma_queue_info_check(&i, 64), EPROTO, "6 slots: not 2^n");
	i = good;
	i.num_slots = 1;
	is_int(tbrdma_queue_info_check(&i, 64), 0, "1 slot is 2^0");
	i = good;
	i.slot_size = 32;
	is_int(tbrdma_queue_info_check(&i, 64), EPROTO,
	       "slot smaller than a WQE/CQE");
	i = good;
	i.slot_size = 100;
	i.mmap_size = 1 << 20;
	is_int(tbrdma_queue_info_check(&i, 64), EPROTO,
	       "slot size not 8-byte aligned");
	i = good;
	i.mmap_size -= 1;
	is_int(tbrdma_queue_info_check(&i, 64), EPROTO,
	       "mapping one byte short of the last slot");
	i = good;
	i.num_slots = 0x80000000u;
	i.slot_size = 0x80000000u;
	i.mmap_size = 0xffffffffu;
	is_int(tbrdma_queue_info_check(&i, 64), EPROTO,
	       "slots * size beyond 32 bits is caught, not wrapped");
	i = good;
	i.mmap_size = 0xffffffffu;
	is_int(tbrdma_queue_info_check(&i, 64), 0, "a larger mapping is fine");
}

int main(void)
{
	plan(NO_PLAN);
	test_counters();
	test_slots();
	test_capacity();
	test_info_check();
	return done();
}
