// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * provider/wqe.c: work requests to ring WQEs (every opcode on every QP
 * type, inline data, SGE limits, UD addressing, flags), CQEs to work
 * completions, and the exact bytes of the SQ doorbell command.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "../../provider/wqe.h"

#define SLOT_SIZE (64 + 32 * 16)
#define GUARD 64
#define POISON 0xa5

/* One slot plus a guard zone, 8-byte aligned like a real ring slot. */
static union {
	uint64_t align;
	uint8_t bytes[SLOT_SIZE + GUARD];
} buf;

static const struct tbrdma_wq_caps caps = { .max_sge = 32, .max_inline = 512 };

static struct tbrdma_send_wqe *wqe(void)
{
	return (struct tbrdma_send_wqe *)buf.bytes;
}

static struct tbrdma_sge *wqe_sges(void)
{
	return (struct tbrdma_sge *)(buf.bytes + sizeof(struct tbrdma_send_wqe));
}

static int guard_intact(size_t from)
{
	size_t i;

	for (i = from; i < sizeof(buf.bytes); i++)
		if (buf.bytes[i] != POISON)
			return 0;
	return 1;
}

static int build(const struct ibv_send_wr *wr, enum ibv_qp_type type,
		 const struct tbrdma_wq_caps *c, size_t slot_size)
{
	memset(buf.bytes, POISON, sizeof(buf.bytes));
	return tbrdma_build_send_wqe(wr, type, c, buf.bytes, slot_size);
}

static struct ibv_sge sges[33];

static struct ibv_send_wr make_wr(enum ibv_wr_opcode opcode, int num_sge)
{
	struct ibv_send_wr wr;
	int i;

	for (i = 0; i < 33; i++)
		sges[i] = (struct ibv_sge){ .addr = 0x1000 * (i + 1),
					    .length = 100 + i,
					    .lkey = 0x50 + i };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1122334455667788ull;
	wr.opcode = opcode;
	wr.sg_list = sges;
	wr.num_sge = num_sge;
	return wr;
}

static const char *opname(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC_CMP_AND_SWP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
	case IBV_WR_LOCAL_INV: return "LOCAL_INV";
	case IBV_WR_BIND_MW: return "BIND_MW";
	case IBV_WR_SEND_WITH_INV: return "SEND_WITH_INV";
	case IBV_WR_TSO: return "TSO";
	case IBV_WR_DRIVER1: return "DRIVER1";
	case IBV_WR_ATOMIC_WRITE: return "ATOMIC_WRITE";
#if RDMA_CORE_VERSION >= 45
	case IBV_WR_FLUSH: return "FLUSH";	/* rdma-core 45+ */
#endif
	}
	return "?";
}

static const enum ibv_wr_opcode all_ops[] = {
	IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
	IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
	IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW,
	IBV_WR_SEND_WITH_INV, IBV_WR_TSO, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE,
#if RDMA_CORE_VERSION >= 45
	IBV_WR_FLUSH,		/* not offered: EINVAL on every QP type */
#endif
};
#define N_OPS (sizeof(all_ops) / sizeof(all_ops[0]))

/* IBTA: what each transport carries; everything else the device lacks. */
static int expect_ok(enum ibv_wr_opcode op, enum ibv_qp_type type)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return 1;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_SEND_WITH_INV:
		return type != IBV_QPT_UD;
	case IBV_WR_BIND_MW:	/* make_wr() names no window: EINVAL */
	case IBV_WR_ATOMIC_WRITE:	/* its SGE is not 8 bytes (test_atomic_write) */
		return 0;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND;
	default:
		return 0;
	}
}

static void test_opcode_matrix(void)
{
	static const struct { enum ibv_qp_type type; const char *name; } types[] = {
		{ IBV_QPT_RC, "RC" }, { IBV_QPT_UC, "UC" }, { IBV_QPT_UD, "UD" },
		{ IBV_QPT_XRC_SEND, "XRC_SEND" },
	};
	struct tbrdma_ah ah = { .ah_handle = 7 };
	size_t t, o;

	for (t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (o = 0; o < N_OPS; o++) {
			struct ibv_send_wr wr = make_wr(all_ops[o], 1);
			int want = expect_ok(all_ops[o], types[t].type);

			wr.wr.ud.ah = &ah.ibv_ah;	/* harmless for RC/UC */
			if (types[t].type != IBV_QPT_UD)
				wr.wr.rdma.remote_addr = 0x1000;
			is_int(build(&wr, types[t].type, &caps, SLOT_SIZE),
			       want ? 0 : EINVAL, "%s %s: %s", types[t].name,
			       opname(all_ops[o]),
			       want ? "accepted" : "EINVAL");
		}

	{
		struct ibv_send_wr wr = make_wr((enum ibv_wr_opcode)99, 1);

		is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), EINVAL,
		       "unknown opcode 99: EINVAL");
		wr = make_wr(IBV_WR_SEND, 1);
		is_int(build(&wr, IBV_QPT_RAW_PACKET, &caps, SLOT_SIZE), EINVAL,
		       "RAW_PACKET QP: EINVAL");
		is_int(build(&wr, IBV_QPT_XRC_RECV, &caps, SLOT_SIZE), EINVAL,
		       "XRC_RECV QP: EINVAL");
		wr.qp_type.xrc.remote_srqn = 0x123456;
		is_int(build(&wr, IBV_QPT_XRC_SEND, &caps, SLOT_SIZE), 0,
		       "XRC_SEND SEND: accepted");
		is_int(wqe()->xrc_remote_srqn, 0x123456,
		       "XRC_SEND: the remote SRQ number in the WQE");
		is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "RC SEND");
		is_int(wqe()->xrc_remote_srqn, 0,
		       "RC: no SRQ number, whatever the work request holds");
	}
}

static void check_common(const struct ibv_send_wr *wr, const char *what)
{
	int i, sges_ok = 1;

	ok(wqe()->wr_id == wr->wr_id, "%s: wr_id", what);
	is_int(wqe()->opcode, wr->opcode, "%s: opcode is the IBV_WR value", what);
	is_int(wqe()->num_sge, wr->num_sge, "%s: num_sge", what);
	is_int(wqe()->inline_len, 0, "%s: no inline_len", what);
	is_int(wqe()->xrc_remote_srqn, 0, "%s: xrc_remote_srqn zeroed", what);
	for (i = 0; i < wr->num_sge; i++)
		if (wqe_sges()[i].addr != wr->sg_list[i].addr ||
		    wqe_sges()[i].length != wr->sg_list[i].length ||
		    wqe_sges()[i].lkey != wr->sg_list[i].lkey)
			sges_ok = 0;
	ok(sges_ok, "%s: SGE list copied after the 64-byte header", what);
	ok(guard_intact(sizeof(struct tbrdma_send_wqe) +
			wr->num_sge * sizeof(struct tbrdma_sge)),
	   "%s: nothing written past the last SGE", what);
}

static void test_rc_fields(void)
{
	struct ibv_send_wr wr;

	wr = make_wr(IBV_WR_SEND, 2);
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "RC SEND");
	check_common(&wr, "RC SEND");
	is_int(wqe()->send_flags,
	       TBRDMA_WQE_SIGNALED | TBRDMA_WQE_SOLICITED | TBRDMA_WQE_FENCE,
	       "SEND: flags map 1:1");
	is_int(wqe()->imm_data, 0, "SEND: no immediate");
	ok(wqe()->wr.atomic.remote_addr == 0 && wqe()->wr.atomic.compare_add == 0 &&
	   wqe()->wr.atomic.swap == 0 && wqe()->wr.atomic.rkey == 0,
	   "SEND: union zeroed");

	wr = make_wr(IBV_WR_SEND_WITH_IMM, 1);
	wr.imm_data = htonl(0xdeadbeef);
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "RC SEND_WITH_IMM");
	check_common(&wr, "RC SEND_WITH_IMM");
	ok(wqe()->imm_data == htonl(0xdeadbeef),
	   "SEND_WITH_IMM: imm_data copied as is (big endian)");
	is_int(wqe()->send_flags, 0, "unsignaled stays unsignaled");

	wr = make_wr(IBV_WR_RDMA_WRITE, 3);
	wr.wr.rdma.remote_addr = 0xabcdef0123456789ull;
	wr.wr.rdma.rkey = 0x4242;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "RC RDMA_WRITE");
	check_common(&wr, "RC RDMA_WRITE");
	ok(wqe()->wr.rdma.remote_addr == 0xabcdef0123456789ull,
	   "RDMA_WRITE: remote_addr");
	is_int(wqe()->wr.rdma.rkey, 0x4242, "RDMA_WRITE: rkey");
	is_int(wqe()->wr.rdma.reserved, 0, "RDMA_WRITE: reserved zeroed");

	wr = make_wr(IBV_WR_RDMA_WRITE_WITH_IMM, 1);
	wr.wr.rdma.remote_addr = 0x2000;
	wr.wr.rdma.rkey = 9;
	wr.imm_data = htonl(0x01020304);
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0,
	       "RC RDMA_WRITE_WITH_IMM");
	check_common(&wr, "RC RDMA_WRITE_WITH_IMM");
	ok(wqe()->imm_data == htonl(0x01020304) &&
	   wqe()->wr.rdma.remote_addr == 0x2000 && wqe()->wr.rdma.rkey == 9,
	   "RDMA_WRITE_WITH_IMM: imm, remote_addr, rkey");

	wr = make_wr(IBV_WR_RDMA_READ, 4);
	wr.wr.rdma.remote_addr = 0x3000;
	wr.wr.rdma.rkey = 0x77;
	wr.imm_data = htonl(5);		/* not an _IMM opcode: ignored */
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "RC RDMA_READ");
	check_common(&wr, "RC RDMA_READ");
	ok(wqe()->wr.rdma.remote_addr == 0x3000 && wqe()->wr.rdma.rkey == 0x77,
	   "RDMA_READ: remote_addr, rkey");
	is_int(wqe()->imm_data, 0, "RDMA_READ: stray imm_data not copied");

	wr = make_wr(IBV_WR_ATOMIC_CMP_AND_SWP, 1);
	wr.wr.atomic.remote_addr = 0x4000;
	wr.wr.atomic.compare_add = 0x1111111111111111ull;
	wr.wr.atomic.swap = 0x2222222222222222ull;
	wr.wr.atomic.rkey = 0x88;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "RC CMP_AND_SWP");
	check_common(&wr, "RC CMP_AND_SWP");
	ok(wqe()->wr.atomic.remote_addr == 0x4000 &&
	   wqe()->wr.atomic.compare_add == 0x1111111111111111ull &&
	   wqe()->wr.atomic.swap == 0x2222222222222222ull &&
	   wqe()->wr.atomic.rkey == 0x88 && wqe()->wr.atomic.reserved == 0,
	   "CMP_AND_SWP: remote_addr, compare, swap, rkey");

	wr = make_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, 1);
	wr.wr.atomic.remote_addr = 0x5000;
	wr.wr.atomic.compare_add = 3;
	wr.wr.atomic.rkey = 0x99;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "RC FETCH_AND_ADD");
	check_common(&wr, "RC FETCH_AND_ADD");
	ok(wqe()->wr.atomic.remote_addr == 0x5000 &&
	   wqe()->wr.atomic.compare_add == 3 && wqe()->wr.atomic.swap == 0 &&
	   wqe()->wr.atomic.rkey == 0x99, "FETCH_AND_ADD: remote_addr, add, rkey");
}

static void test_ud(void)
{
	struct tbrdma_ah ah = { .ah_handle = 0xa0b0c0d0 };
	struct ibv_send_wr wr = make_wr(IBV_WR_SEND_WITH_IMM, 1);

	wr.wr.ud.ah = &ah.ibv_ah;
	wr.wr.ud.remote_qpn = 0x123456;
	wr.wr.ud.remote_qkey = 0x80010000;
	wr.imm_data = htonl(77);
	is_int(build(&wr, IBV_QPT_UD, &caps, SLOT_SIZE), 0, "UD SEND_WITH_IMM");
	check_common(&wr, "UD SEND_WITH_IMM");
	is_int(wqe()->wr.ud.ah, 0xa0b0c0d0, "UD: the AH's kernel handle");
	is_int(wqe()->wr.ud.remote_qpn, 0x123456, "UD: remote_qpn");
	ok(wqe()->wr.ud.remote_qkey == 0x80010000, "UD: remote_qkey");
	is_int(wqe()->wr.ud.reserved, 0, "UD: reserved zeroed");
	ok(wqe()->imm_data == htonl(77), "UD: imm_data");
	ok(wqe()->wr.atomic.swap == 0 && wqe()->wr.atomic.rkey == 0,
	   "UD: rest of the union zeroed");

	wr.wr.ud.ah = NULL;
	is_int(build(&wr, IBV_QPT_UD, &caps, SLOT_SIZE), EINVAL,
	       "UD without an AH: EINVAL");
}

static void test_inline(void)
{
	uint8_t a[7], b[300], c[5];
	struct ibv_sge isg[3];
	struct ibv_send_wr wr = make_wr(IBV_WR_SEND, 3);
	struct tbrdma_wq_caps small = caps;
	uint8_t *payload = buf.bytes + sizeof(struct tbrdma_send_wqe);
	uint8_t big[600];

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	memset(c, 'c', sizeof(c));
	isg[0] = (struct ibv_sge){ (uintptr_t)a, sizeof(a), 1 };
	isg[1] = (struct ibv_sge){ (uintptr_t)b, sizeof(b), 2 };
	isg[2] = (struct ibv_sge){ (uintptr_t)c, sizeof(c), 3 };
	wr.sg_list = isg;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "inline SEND");
	is_int(wqe()->inline_len, 312, "inline_len is the sum of the SGEs");
	is_int(wqe()->num_sge, 0, "inline: num_sge 0");
	is_int(wqe()->send_flags, TBRDMA_WQE_INLINE | TBRDMA_WQE_SIGNALED,
	       "inline: INLINE flag kept");
	ok(!memcmp(payload, a, 7) && !memcmp(payload + 7, b, 300) &&
	   !memcmp(payload + 307, c, 5), "inline: bytes gathered in order");
	ok(guard_intact(sizeof(struct tbrdma_send_wqe) + 312),
	   "inline: nothing written past the data");

	/* Exactly at the limit, and one byte over. */
	memset(big, 'x', sizeof(big));
	isg[0] = (struct ibv_sge){ (uintptr_t)big, 512, 1 };
	wr.num_sge = 1;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0,
	       "inline of max_inline_data bytes");
	isg[0].length = 513;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE + GUARD), EINVAL,
	       "inline of max_inline_data + 1: EINVAL");
	isg[0].length = 300;
	isg[1] = (struct ibv_sge){ (uintptr_t)big, 213, 1 };
	wr.num_sge = 2;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE + GUARD), EINVAL,
	       "inline over the limit in the second SGE: EINVAL");
	isg[1].length = 0xffffffffu;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE + GUARD), EINVAL,
	       "huge SGE length does not wrap the sum");

	/* The slot limits too, whatever the caps say. */
	small.max_inline = 4096;
	isg[0].length = 129;
	wr.num_sge = 1;
	is_int(build(&wr, IBV_QPT_RC, &small, 64 + 128), EINVAL,
	       "inline larger than the slot: EINVAL");
	ok(guard_intact(64 + 128), "inline refused: slot bound respected");
	isg[0].length = 128;
	is_int(build(&wr, IBV_QPT_RC, &small, 64 + 128), 0,
	       "inline filling the slot exactly");

	wr.num_sge = 0;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "empty inline SEND");
	is_int(wqe()->inline_len, 0, "empty inline: inline_len 0");

	/* RDMA_WRITE inline is common; READ/atomics inline make no sense. */
	isg[0].length = 16;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = 0x9000;
	wr.wr.rdma.rkey = 5;
	is_int(build(&wr, IBV_QPT_UC, &caps, SLOT_SIZE), 0, "UC inline RDMA_WRITE");
	ok(wqe()->inline_len == 16 && wqe()->wr.rdma.remote_addr == 0x9000,
	   "inline RDMA_WRITE keeps its remote address");
	wr.opcode = IBV_WR_RDMA_READ;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), EINVAL,
	       "inline RDMA_READ: EINVAL");
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), EINVAL,
	       "inline atomic: EINVAL");

	/* UD inline. */
	{
		struct tbrdma_ah ah = { .ah_handle = 3 };

		wr.opcode = IBV_WR_SEND;
		wr.wr.ud.ah = &ah.ibv_ah;
		wr.wr.ud.remote_qpn = 1;
		is_int(build(&wr, IBV_QPT_UD, &caps, SLOT_SIZE), 0,
		       "UD inline SEND");
		ok(wqe()->inline_len == 16 && wqe()->wr.ud.ah == 3,
		   "UD inline: length and AH");
	}
}

/* ATOMIC_WRITE: 8 bytes, gathered inline from the SGEs whatever
 * max_inline says; RC and XRC only. */
static void test_atomic_write(void)
{
	uint8_t value[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, nine[9] = { 0 };
	uint8_t *payload = buf.bytes + sizeof(struct tbrdma_send_wqe);
	struct ibv_send_wr wr = make_wr(IBV_WR_ATOMIC_WRITE, 1);
	struct tbrdma_wq_caps no_inline = caps;
	struct ibv_sge isg[2];

	no_inline.max_inline = 0;
	isg[0] = (struct ibv_sge){ (uintptr_t)value, 8, 0x51 };
	wr.sg_list = isg;
	wr.wr.rdma.remote_addr = 0x2000;
	wr.wr.rdma.rkey = 0xabcd;
	is_int(build(&wr, IBV_QPT_RC, &no_inline, SLOT_SIZE), 0,
	       "ATOMIC_WRITE of 8 bytes on RC, max_inline 0: accepted");
	is_int(wqe()->opcode, IBV_WR_ATOMIC_WRITE, "ATOMIC_WRITE: opcode 15");
	is_int(wqe()->inline_len, 8, "ATOMIC_WRITE: 8 bytes inline");
	is_int(wqe()->num_sge, 0, "ATOMIC_WRITE: no SGEs left in the WQE");
	ok(wqe()->send_flags & TBRDMA_WQE_INLINE, "ATOMIC_WRITE: INLINE flag");
	ok(wqe()->wr.rdma.remote_addr == 0x2000 && wqe()->wr.rdma.rkey == 0xabcd,
	   "ATOMIC_WRITE: remote address and rkey in wr.rdma");
	ok(!memcmp(payload, value, 8), "ATOMIC_WRITE: the 8 bytes copied");
	ok(guard_intact(sizeof(struct tbrdma_send_wqe) + 8),
	   "ATOMIC_WRITE: nothing written past the 8 bytes");

	isg[0] = (struct ibv_sge){ (uintptr_t)value, 3, 0x51 };
	isg[1] = (struct ibv_sge){ (uintptr_t)(value + 3), 5, 0x52 };
	wr.num_sge = 2;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0,
	       "ATOMIC_WRITE from SGEs of 3 and 5 bytes: accepted");
	ok(!memcmp(payload, value, 8), "ATOMIC_WRITE: 3 + 5 bytes gathered in order");
	is_int(build(&wr, IBV_QPT_XRC_SEND, &caps, SLOT_SIZE), 0,
	       "ATOMIC_WRITE on XRC_SEND: accepted");
	is_int(build(&wr, IBV_QPT_UC, &caps, SLOT_SIZE), EINVAL,
	       "ATOMIC_WRITE on UC: EINVAL");

	isg[0] = (struct ibv_sge){ (uintptr_t)value, 7, 0x51 };
	wr.num_sge = 1;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), EINVAL,
	       "ATOMIC_WRITE of 7 bytes: EINVAL");
	isg[0] = (struct ibv_sge){ (uintptr_t)nine, 9, 0x51 };
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), EINVAL,
	       "ATOMIC_WRITE of 9 bytes: EINVAL");
	wr.num_sge = 0;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), EINVAL,
	       "ATOMIC_WRITE without data: EINVAL");
	is_int(build(&wr, IBV_QPT_RC, &caps, sizeof(struct tbrdma_send_wqe) + 4),
	       EINVAL, "ATOMIC_WRITE in a slot without room for 8 bytes: EINVAL");
}

static void test_sge_limits(void)
{
	struct tbrdma_wq_caps c = caps;
	struct ibv_send_wr wr;

	c.max_sge = 4;
	wr = make_wr(IBV_WR_SEND, 4);
	is_int(build(&wr, IBV_QPT_RC, &c, SLOT_SIZE), 0, "max_send_sge SGEs");
	wr.num_sge = 5;
	is_int(build(&wr, IBV_QPT_RC, &c, SLOT_SIZE), EINVAL,
	       "max_send_sge + 1 SGEs: EINVAL");
	wr.num_sge = -1;
	is_int(build(&wr, IBV_QPT_RC, &c, SLOT_SIZE), EINVAL,
	       "negative num_sge: EINVAL");
	wr.num_sge = 0;
	is_int(build(&wr, IBV_QPT_RC, &c, SLOT_SIZE), 0, "zero-length SEND");

	/* Caps larger than the slot: the slot wins. */
	wr = make_wr(IBV_WR_SEND, 3);
	is_int(build(&wr, IBV_QPT_RC, &caps, 64 + 2 * 16), EINVAL,
	       "more SGEs than the slot holds: EINVAL");
	ok(guard_intact(64 + 2 * 16), "refused WR wrote nothing past the slot");
	wr.num_sge = 2;
	is_int(build(&wr, IBV_QPT_RC, &caps, 64 + 2 * 16), 0,
	       "SGEs filling the slot exactly");
	ok(guard_intact(64 + 2 * 16), "full slot: nothing written past it");

	wr = make_wr(IBV_WR_SEND, 32);
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0, "32 SGEs");
	check_common(&wr, "32 SGEs");
	is_int(build(&wr, IBV_QPT_RC, &caps, 63), EINVAL,
	       "slot smaller than the header: EINVAL");
}

static void test_flags(void)
{
	struct tbrdma_wq_caps sig = caps;
	struct ibv_send_wr wr = make_wr(IBV_WR_SEND, 1);

	wr.send_flags = IBV_SEND_IP_CSUM;
	is_int(build(&wr, IBV_QPT_UD, &caps, SLOT_SIZE), EINVAL,
	       "IBV_SEND_IP_CSUM: EINVAL");
	wr.send_flags = 1u << 20;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), EINVAL,
	       "unknown send flag: EINVAL");

	sig.sig_all = true;
	wr.send_flags = IBV_SEND_FENCE;
	is_int(build(&wr, IBV_QPT_RC, &sig, SLOT_SIZE), 0, "sq_sig_all QP");
	is_int(wqe()->send_flags, TBRDMA_WQE_FENCE | TBRDMA_WQE_SIGNALED,
	       "sq_sig_all: every WQE signaled");
}

static void test_recv(void)
{
	struct tbrdma_wq_caps c = { .max_sge = 4 };
	struct tbrdma_recv_wqe *r = (struct tbrdma_recv_wqe *)buf.bytes;
	struct tbrdma_sge *s = (struct tbrdma_sge *)(buf.bytes + sizeof(*r));
	struct ibv_recv_wr wr;
	int ret;

	make_wr(IBV_WR_SEND, 0);	/* fills sges[] */
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xfeedull;
	wr.sg_list = sges;
	wr.num_sge = 4;
	memset(buf.bytes, POISON, sizeof(buf.bytes));
	ret = tbrdma_build_recv_wqe(&wr, &c, buf.bytes, SLOT_SIZE);
	is_int(ret, 0, "recv WQE with max_recv_sge SGEs");
	ok(r->wr_id == 0xfeedull, "recv: wr_id");
	is_int(r->num_sge, 4, "recv: num_sge");
	is_int(r->reserved, 0, "recv: reserved zeroed");
	ok(s[3].addr == sges[3].addr && s[3].length == sges[3].length &&
	   s[3].lkey == sges[3].lkey, "recv: SGEs after the 16-byte header");
	ok(guard_intact(16 + 4 * 16), "recv: nothing past the last SGE");

	wr.num_sge = 5;
	is_int(tbrdma_build_recv_wqe(&wr, &c, buf.bytes, SLOT_SIZE), EINVAL,
	       "recv: max_recv_sge + 1: EINVAL");
	wr.num_sge = -2;
	is_int(tbrdma_build_recv_wqe(&wr, &c, buf.bytes, SLOT_SIZE), EINVAL,
	       "recv: negative num_sge: EINVAL");
	wr.num_sge = 2;
	memset(buf.bytes, POISON, sizeof(buf.bytes));
	is_int(tbrdma_build_recv_wqe(&wr, &c, buf.bytes, 16 + 16), EINVAL,
	       "recv: more SGEs than the slot holds: EINVAL");
	ok(guard_intact(16 + 16), "recv refused: nothing past the slot");
	wr.num_sge = 0;
	is_int(tbrdma_build_recv_wqe(&wr, &c, buf.bytes, 16), 0,
	       "recv: zero SGEs in a header-only slot");
}

static void test_cqe(void)
{
	struct tbrdma_cqe cqe;
	struct ibv_wc wc;

	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = 0x0102030405060708ull;
	cqe.status = IBV_WC_REM_ACCESS_ERR;
	cqe.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	cqe.vendor_err = 0x33;
	cqe.byte_len = 4096;
	cqe.imm_data = htonl(0xcafef00d);
	cqe.qp_num = 0x11;
	cqe.src_qp = 0x22;
	cqe.wc_flags = TBRDMA_CQE_WITH_IMM;
	cqe.pkey_index = 0;
	memset(&wc, 0xff, sizeof(wc));
	tbrdma_cqe_to_wc(&cqe, &wc);
	ok(wc.wr_id == 0x0102030405060708ull, "wc: wr_id");
	is_int(wc.status, IBV_WC_REM_ACCESS_ERR, "wc: status passed through");
	is_int(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM, "wc: opcode passed through");
	is_int(wc.vendor_err, 0x33, "wc: vendor_err");
	is_int(wc.byte_len, 4096, "wc: byte_len");
	ok(wc.imm_data == htonl(0xcafef00d), "wc: imm_data copied as is");
	ok(wc.qp_num == 0x11 && wc.src_qp == 0x22, "wc: qp_num, src_qp");
	is_int(wc.wc_flags, IBV_WC_WITH_IMM, "TBRDMA_CQE_WITH_IMM -> IBV_WC_WITH_IMM");
	ok(wc.pkey_index == 0 && wc.slid == 0 && wc.sl == 0 &&
	   wc.dlid_path_bits == 0, "wc: pkey_index, no LID/SL on Ethernet");

	cqe.wc_flags = TBRDMA_CQE_GRH;
	tbrdma_cqe_to_wc(&cqe, &wc);
	is_int(wc.wc_flags, IBV_WC_GRH, "TBRDMA_CQE_GRH -> IBV_WC_GRH");
	is_int(wc.sl, 0, "GRH of no known network type: sl 0");
	cqe.network_hdr_type = TBRDMA_NETWORK_IPV4;
	tbrdma_cqe_to_wc(&cqe, &wc);
	is_int(wc.sl, 2, "GRH with an IPv4 header: sl 2 (the L3 type, as mlx5)");
	cqe.network_hdr_type = TBRDMA_NETWORK_IPV6;
	tbrdma_cqe_to_wc(&cqe, &wc);
	is_int(wc.sl, 1, "GRH with an IPv6 header: sl 1 (the L3 type, as mlx5)");
	cqe.wc_flags = TBRDMA_CQE_GRH | TBRDMA_CQE_WITH_IMM;
	tbrdma_cqe_to_wc(&cqe, &wc);
	is_int(wc.wc_flags, IBV_WC_GRH | IBV_WC_WITH_IMM, "both flags");
	cqe.wc_flags = TBRDMA_CQE_WITH_IMM;
	tbrdma_cqe_to_wc(&cqe, &wc);
	is_int(wc.sl, 0, "no GRH: sl 0 whatever network_hdr_type says");
	cqe.wc_flags = TBRDMA_CQE_WITH_INV;
	cqe.invalidate_rkey = 0x1234;
	tbrdma_cqe_to_wc(&cqe, &wc);
	ok(wc.wc_flags == IBV_WC_WITH_INV && wc.invalidated_rkey == 0x1234,
	   "TBRDMA_CQE_WITH_INV -> IBV_WC_WITH_INV, invalidated_rkey");
	cqe.network_hdr_type = 0;
	cqe.wc_flags = 0xfffffff8;
	tbrdma_cqe_to_wc(&cqe, &wc);
	is_int(wc.wc_flags, 0, "unknown CQE flags are not passed on");
	cqe.status = IBV_WC_SUCCESS;
	cqe.opcode = IBV_WC_SEND;
	tbrdma_cqe_to_wc(&cqe, &wc);
	ok(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND,
	   "wc: SUCCESS / SEND");
}

static void test_doorbell(void)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd;
	const uint8_t *b = (const uint8_t *)&cmd;
	uint32_t u32;
	uint64_t u64;
	char hex[3 * sizeof(cmd) + 1];
	size_t i;

	memset(&cmd, 0xee, sizeof(cmd));
	tbrdma_build_doorbell(&cmd, 0x2a, &resp);
	is_int(sizeof(cmd), 32, "doorbell: one 32-byte write");
	memcpy(&u32, b + 0, 4);
	is_int(u32, IB_USER_VERBS_CMD_POST_SEND, "hdr.command POST_SEND");
	is_int(cmd.hdr.in_words, 8, "hdr.in_words 8 (32 bytes, header included)");
	is_int(cmd.hdr.out_words, 1, "hdr.out_words 1 (post_send_resp)");
	memcpy(&u64, b + 8, 8);
	ok(u64 == (uintptr_t)&resp, "response pointer at byte 8");
	memcpy(&u32, b + 16, 4);
	is_int(u32, 0x2a, "qp_handle at byte 16");
	memcpy(&u32, b + 20, 4);
	is_int(u32, 0, "wr_count 0 at byte 20");
	memcpy(&u32, b + 24, 4);
	is_int(u32, 0, "sge_count 0 at byte 24");
	memcpy(&u32, b + 28, 4);
	is_int(u32, sizeof(struct ib_uverbs_send_wr),
	       "wqe_size = sizeof(ib_uverbs_send_wr) at byte 28");
	is_int(u32, 56, "wqe_size is 56");

	for (i = 0; i < sizeof(cmd); i++)
		snprintf(hex + 3 * i, 4, "%02x ", b[i]);
	diag("doorbell bytes (qp_handle 0x2a): %s", hex);
}

/* Memory windows: BIND_MW and LOCAL_INV carry their keys, no payload. */
static void test_mw(void)
{
	const struct tbrdma_send_wqe *w = (const void *)buf.bytes;
	struct ibv_mr mr = { .lkey = 0x4242 };
	struct ibv_mw mw = { .rkey = 0x1200, .type = IBV_MW_TYPE_2 };
	struct ibv_send_wr wr = make_wr(IBV_WR_BIND_MW, 33);

	wr.bind_mw.mw = &mw;
	wr.bind_mw.rkey = 0x1201;
	wr.bind_mw.bind_info.mr = &mr;
	wr.bind_mw.bind_info.addr = 0x10000;
	wr.bind_mw.bind_info.length = 0x2000;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0,
	       "BIND_MW: accepted, its (too many) SGEs ignored");
	ok(w->opcode == IBV_WR_BIND_MW && w->num_sge == 0 &&
	   w->inline_len == 0 && !(w->send_flags & TBRDMA_WQE_INLINE),
	   "BIND_MW: no payload");
	ok(w->wr.bind.mw_rkey == 0x1200 && w->wr.bind.rkey == 0x1201 &&
	   w->wr.bind.mr_lkey == 0x4242 && w->wr.bind.addr == 0x10000 &&
	   w->wr.bind.length == 0x2000 &&
	   w->wr.bind.access == IBV_ACCESS_REMOTE_WRITE,
	   "BIND_MW: window, new rkey, MR, range, access");
	ok(guard_intact(sizeof(*w)), "BIND_MW: nothing past the header");
	wr.bind_mw.bind_info.mr = NULL;
	wr.bind_mw.bind_info.length = 0;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0,
	       "BIND_MW without an MR (a type 1 unbind): accepted");
	is_int(w->wr.bind.mr_lkey, 0, "BIND_MW without an MR: lkey 0");
	is_int(build(&wr, IBV_QPT_UD, &caps, SLOT_SIZE), EINVAL,
	       "BIND_MW on UD: EINVAL");

	wr = make_wr(IBV_WR_LOCAL_INV, 2);
	wr.invalidate_rkey = 0xabcd01;
	is_int(build(&wr, IBV_QPT_UC, &caps, SLOT_SIZE), 0, "LOCAL_INV on UC");
	ok(w->wr.inv.rkey == 0xabcd01 && w->num_sge == 0,
	   "LOCAL_INV: the rkey, no SGEs");
	wr = make_wr(IBV_WR_SEND_WITH_INV, 2);
	wr.invalidate_rkey = 0xabcd02;
	is_int(build(&wr, IBV_QPT_RC, &caps, SLOT_SIZE), 0,
	       "SEND_WITH_INV on RC");
	ok(w->wr.inv.rkey == 0xabcd02 && w->num_sge == 2 &&
	   w->imm_data == 0, "SEND_WITH_INV: the rkey, its SGEs, no imm");
}

int main(void)
{
	plan(NO_PLAN);
	test_opcode_matrix();
	test_rc_fields();
	test_ud();
	test_inline();
	test_atomic_write();
	test_sge_limits();
	test_flags();
	test_recv();
	test_cqe();
	test_doorbell();
	test_mw();
	return done();
}
