// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Extended QPs and the ibv_wr_* posting API (provider/wr.c) on rings in
 * plain memory (fastpath_harness.h: a pipe as cmd_fd counts doorbells).
 * The application side is libibverbs' own inline ibv_wr_*() wrappers and
 * its real ibv_qp_to_qp_ex(), so the ops table and VERBS_QP_EX are
 * checked the way perftest reaches them.
 *
 * The reference for every WQE is post_send: a twin QP gets the equivalent
 * ibv_send_wr through tbrdma_post_send(), and the slots must match byte
 * for byte (header and payload).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>

#include "fastpath_harness.h"

#define HANDLE 0x77
#define ALL_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |     \
		    IBV_QP_EX_WITH_RDMA_WRITE |                              \
		    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |                     \
		    IBV_QP_EX_WITH_RDMA_READ |                               \
		    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |                      \
		    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
/* Not in v44's enum; upstream's IBV_QP_EX_WITH_FLUSH (rdma-core 45+). */
#define QP_EX_WITH_FLUSH (1ULL << 11)

static struct tbrdma_ah ah = { .ah_handle = 0x55 };
static uint8_t data[256];

static struct ibv_qp_ex *make_qpx(struct tbrdma_qp *qp, enum ibv_qp_type type,
				  uint32_t n, uint32_t start, uint64_t ops)
{
	make_qp(qp, type, n, start);
	qp->vqp.qp.handle = HANDLE;
	tbrdma_wr_init_qp(qp, ops);
	return ibv_qp_to_qp_ex(&qp->vqp.qp);
}

static struct tbrdma_send_wqe *slot_hdr(struct tbrdma_qp *qp, uint32_t index)
{
	return tbrdma_q_slot(&qp->sq.q, index);
}

/* The bytes of a WQE that mean something: header + SGEs or inline data. */
static size_t wqe_bytes(const struct tbrdma_send_wqe *w)
{
	return sizeof(*w) + (w->send_flags & TBRDMA_WQE_INLINE ?
				     w->inline_len :
				     w->num_sge * sizeof(struct tbrdma_sge));
}

/* Slots [from, from + n) of a and b hold the same WQEs. */
static int same_wqes(struct tbrdma_qp *a, struct tbrdma_qp *b, uint32_t from,
		     uint32_t n)
{
	uint32_t i;

	for (i = from; i != from + n; i++) {
		struct tbrdma_send_wqe *wa = slot_hdr(a, i), *wb = slot_hdr(b, i);

		if (wqe_bytes(wa) != wqe_bytes(wb) || wqe_bytes(wa) > 128 ||
		    memcmp(wa, wb, wqe_bytes(wa))) {
			diag("slot %u differs", i);
			return 0;
		}
	}
	return 1;
}

static int lock_free(struct tbrdma_qp *qp)
{
	if (pthread_spin_trylock(&qp->sq.lock))
		return 0;
	pthread_spin_unlock(&qp->sq.lock);
	return 1;
}

/* ---- creation-time checks ----------------------------------------------- */

static void test_send_ops_check(void)
{
	static const struct {
		uint64_t flag;
		const char *name;
		int rc, uc, ud;
	} ops[] = {
		{ IBV_QP_EX_WITH_SEND, "SEND", 0, 0, 0 },
		{ IBV_QP_EX_WITH_SEND_WITH_IMM, "SEND_WITH_IMM", 0, 0, 0 },
		{ IBV_QP_EX_WITH_RDMA_WRITE, "RDMA_WRITE", 0, 0, EOPNOTSUPP },
		{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM", 0,
		  0, EOPNOTSUPP },
		{ IBV_QP_EX_WITH_RDMA_READ, "RDMA_READ", 0, EOPNOTSUPP,
		  EOPNOTSUPP },
		{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP", 0,
		  EOPNOTSUPP, EOPNOTSUPP },
		{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD", 0,
		  EOPNOTSUPP, EOPNOTSUPP },
		{ IBV_QP_EX_WITH_LOCAL_INV, "LOCAL_INV", 0, 0, EOPNOTSUPP },
		{ IBV_QP_EX_WITH_BIND_MW, "BIND_MW", 0, 0, EOPNOTSUPP },
		{ IBV_QP_EX_WITH_SEND_WITH_INV, "SEND_WITH_INV", 0, 0,
		  EOPNOTSUPP },
		{ IBV_QP_EX_WITH_TSO, "TSO", EOPNOTSUPP, EOPNOTSUPP,
		  EOPNOTSUPP },
		{ IBV_QP_EX_WITH_ATOMIC_WRITE, "ATOMIC_WRITE", 0,
		  EOPNOTSUPP, EOPNOTSUPP },
		{ QP_EX_WITH_FLUSH, "FLUSH", EOPNOTSUPP, EOPNOTSUPP,
		  EOPNOTSUPP },
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		is_int(tbrdma_wr_check_send_ops(IBV_QPT_RC, ops[i].flag),
		       ops[i].rc, "RC %s", ops[i].name);
		is_int(tbrdma_wr_check_send_ops(IBV_QPT_UC, ops[i].flag),
		       ops[i].uc, "UC %s", ops[i].name);
		is_int(tbrdma_wr_check_send_ops(IBV_QPT_UD, ops[i].flag),
		       ops[i].ud, "UD %s", ops[i].name);
	}
	is_int(tbrdma_wr_check_send_ops(IBV_QPT_RC, ALL_RC_OPS), 0,
	       "RC: all seven together");
	is_int(tbrdma_wr_check_send_ops(IBV_QPT_RC,
					ALL_RC_OPS | IBV_QP_EX_WITH_TSO),
	       EOPNOTSUPP, "RC: one unsupported op spoils the lot");
	is_int(tbrdma_wr_check_send_ops(IBV_QPT_RC, 0), 0, "no ops: fine");
	is_int(tbrdma_wr_check_send_ops(IBV_QPT_XRC_SEND, ALL_RC_OPS), 0,
	       "XRC_SEND QP: RC's seven");
	is_int(tbrdma_wr_check_send_ops(IBV_QPT_XRC_RECV, IBV_QP_EX_WITH_SEND),
	       EOPNOTSUPP, "XRC_RECV QP: EOPNOTSUPP");
}

static void test_qp_ex_setup(void)
{
	struct tbrdma_qp qp;
	struct ibv_qp_ex *x;

	make_qp(&qp, IBV_QPT_RC, 4, 0);
	ok(ibv_qp_to_qp_ex(&qp.vqp.qp) == NULL,
	   "plain QP (old create_qp): ibv_qp_to_qp_ex() is NULL");
	free_qp(&qp);

	x = make_qpx(&qp, IBV_QPT_RC, 4, 0,
		     IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
	ok(x == &qp.vqp.qp_ex, "extended QP: libibverbs' ibv_qp_to_qp_ex() "
	   "finds VERBS_QP_EX and returns our qp_ex");
	ok(x && x->wr_send && x->wr_rdma_write, "requested builders set");
	ok(x && !x->wr_send_imm && !x->wr_rdma_write_imm && !x->wr_rdma_read &&
	   !x->wr_atomic_cmp_swp && !x->wr_atomic_fetch_add,
	   "builders not requested stay NULL");
	ok(x && !x->wr_bind_mw && !x->wr_local_inv && !x->wr_send_inv &&
	   !x->wr_send_tso && !x->wr_atomic_write,
	   "unsupported ops stay NULL");
	ok(x && x->wr_start && x->wr_complete && x->wr_abort &&
	   x->wr_set_sge && x->wr_set_sge_list && x->wr_set_inline_data &&
	   x->wr_set_inline_data_list && x->wr_set_ud_addr &&
	   x->wr_set_xrc_srqn,
	   "start/complete/abort and all setters set");
	ok(x && ibv_qp_to_qp_ex(&x->qp_base) == x, "qp_ex->qp_base is the QP");
	free_qp(&qp);

	/* A batch in RESET, INIT or RTR is dropped whole: EINVAL. */
	x = make_qpx(&qp, IBV_QPT_RC, 4, 0, IBV_QP_EX_WITH_SEND);
	qp.vqp.qp.state = IBV_QPS_RESET;
	ibv_wr_start(x);
	x->wr_id = 1;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	is_int(ibv_wr_complete(x), EINVAL, "QP in RESET: wr_complete EINVAL");
	ok(qp.sq.q.hdr->producer == 0 && qp.sq.q.index == 0 &&
	   doorbells(HANDLE) == 0, "QP in RESET: nothing published, no doorbell");
	ok(lock_free(&qp), "QP in RESET: SQ lock released");
	qp.vqp.qp.state = IBV_QPS_RTR;
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	is_int(ibv_wr_complete(x), EINVAL, "QP in RTR: wr_complete EINVAL");
	qp.vqp.qp.state = IBV_QPS_RTS;
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	is_int(ibv_wr_complete(x), 0, "QP in RTS: wr_complete 0");
	ok(qp.sq.q.hdr->producer == 1 && doorbells(HANDLE) == 1,
	   "QP in RTS: posted, one doorbell");
	/* ibv_wr_set_xrc_srqn is for XRC send QPs only. */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, 77);
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	is_int(ibv_wr_complete(x), EINVAL, "RC: wr_set_xrc_srqn fails the batch");
	free_qp(&qp);

	x = make_qpx(&qp, IBV_QPT_XRC_SEND, 4, 0, IBV_QP_EX_WITH_SEND);
	qp.vqp.qp.state = IBV_QPS_RTS;
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_xrc_srqn(x, 0xabcdef);
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	is_int(ibv_wr_complete(x), 0, "XRC_SEND: wr_complete 0");
	is_int(slot_hdr(&qp, 0)->xrc_remote_srqn, 0xabcdef,
	       "XRC_SEND: the WQE names the remote SRQ");
	free_qp(&qp);
}

/* ---- every builder, compared with post_send ----------------------------- */

static void test_rc_builders(uint32_t start)
{
	struct tbrdma_qp qp, ref;
	struct ibv_qp_ex *x;
	struct ibv_sge sgl[3] = {
		{ .addr = 0x1000, .length = 10, .lkey = 1 },
		{ .addr = 0x2000, .length = 20, .lkey = 2 },
		{ .addr = 0x3000, .length = 30, .lkey = 3 },
	};
	struct ibv_sge isg[2] = {
		{ .addr = (uintptr_t)data, .length = 5 },
		{ .addr = (uintptr_t)(data + 100), .length = 7 },
	};
	struct ibv_data_buf ibuf[2] = {
		{ .addr = data, .length = 5 },
		{ .addr = data + 100, .length = 7 },
	};
	struct ibv_send_wr wr[7], *bad;
	int i;

	x = make_qpx(&qp, IBV_QPT_RC, 8, start, ALL_RC_OPS);
	make_qp(&ref, IBV_QPT_RC, 8, start);
	ref.vqp.qp.handle = HANDLE;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 7; i++) {
		wr[i].wr_id = 1000 + i;
		wr[i].next = i < 6 ? &wr[i + 1] : NULL;
		wr[i].sg_list = sgl;
		wr[i].num_sge = 1;
	}
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[1].opcode = IBV_WR_SEND_WITH_IMM;
	wr[1].imm_data = htonl(0x12345678);
	wr[1].num_sge = 3;
	wr[1].send_flags = IBV_SEND_SOLICITED;
	wr[2].opcode = IBV_WR_RDMA_WRITE;
	wr[2].wr.rdma.remote_addr = 0xabc000;
	wr[2].wr.rdma.rkey = 0x99;
	wr[2].sg_list = isg;
	wr[2].num_sge = 1;
	wr[2].send_flags = IBV_SEND_INLINE | IBV_SEND_FENCE;
	wr[3].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[3].imm_data = htonl(7);
	wr[3].wr.rdma.remote_addr = 0xdef000;
	wr[3].wr.rdma.rkey = 0x98;
	wr[3].sg_list = isg;
	wr[3].num_sge = 2;
	wr[3].send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	wr[4].opcode = IBV_WR_RDMA_READ;
	wr[4].wr.rdma.remote_addr = 0x5000;
	wr[4].wr.rdma.rkey = 0x97;
	wr[4].num_sge = 2;
	wr[5].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr[5].wr.atomic.remote_addr = 0x6000;
	wr[5].wr.atomic.compare_add = 11;
	wr[5].wr.atomic.swap = 22;
	wr[5].wr.atomic.rkey = 0x96;
	wr[5].send_flags = IBV_SEND_SIGNALED;
	wr[6].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr[6].wr.atomic.remote_addr = 0x7000;
	wr[6].wr.atomic.compare_add = 33;
	wr[6].wr.atomic.rkey = 0x95;
	is_int(tbrdma_post_send(&ref.vqp.qp, wr, &bad), 0,
	       "reference: post_send of the 7 RC opcodes");
	doorbells(HANDLE);

	ibv_wr_start(x);
	x->wr_id = 1000;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 0x1000, 10);
	x->wr_id = 1001;
	x->wr_flags = IBV_SEND_SOLICITED;
	ibv_wr_send_imm(x, htonl(0x12345678));
	ibv_wr_set_sge_list(x, 3, sgl);
	x->wr_id = 1002;
	x->wr_flags = IBV_SEND_INLINE | IBV_SEND_FENCE;
	ibv_wr_rdma_write(x, 0x99, 0xabc000);
	ibv_wr_set_inline_data(x, data, 5);
	x->wr_id = 1003;
	x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(x, 0x98, 0xdef000, htonl(7));
	ibv_wr_set_inline_data_list(x, 2, ibuf);
	x->wr_id = 1004;
	x->wr_flags = 0;
	ibv_wr_rdma_read(x, 0x97, 0x5000);
	ibv_wr_set_sge_list(x, 2, sgl);
	x->wr_id = 1005;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_cmp_swp(x, 0x96, 0x6000, 11, 22);
	ibv_wr_set_sge(x, 1, 0x1000, 10);
	x->wr_id = 1006;
	x->wr_flags = 0;
	ibv_wr_atomic_fetch_add(x, 0x95, 0x7000, 33);
	ibv_wr_set_sge(x, 1, 0x1000, 10);
	ok(qp.sq.q.hdr->producer == start, "nothing published before "
	   "wr_complete (producer %#x)", start);
	is_int(doorbells(HANDLE), 0, "no doorbell before wr_complete");
	is_int(ibv_wr_complete(x), 0, "RC: 7 builders, wr_complete 0");
	ok(qp.sq.q.hdr->producer == start + 7 && qp.sq.q.index == start + 7,
	   "producer published: +7");
	is_int(doorbells(HANDLE), 1, "exactly one doorbell for the batch");
	ok(same_wqes(&qp, &ref, start, 7),
	   "all 7 WQEs byte-identical to post_send's");
	ok(slot_hdr(&qp, start + 2)->send_flags ==
		   (TBRDMA_WQE_INLINE | TBRDMA_WQE_FENCE) &&
	   slot_hdr(&qp, start + 2)->inline_len == 5 &&
	   !memcmp(slot_hdr(&qp, start + 2) + 1, data, 5),
	   "inline WRITE: flag, length and bytes");
	ok(slot_hdr(&qp, start + 3)->inline_len == 12 &&
	   !memcmp((uint8_t *)(slot_hdr(&qp, start + 3) + 1) + 5, data + 100, 7),
	   "inline list: buffers concatenated");
	ok(slot_hdr(&qp, start + 5)->wr.atomic.swap == 22 &&
	   slot_hdr(&qp, start + 6)->wr.atomic.compare_add == 33,
	   "atomic operands");
	ok(lock_free(&qp), "SQ lock released by wr_complete");
	free_qp(&qp);
	free_qp(&ref);
}

/* wr_atomic_write: the WQE post_send builds from an 8-byte SGE. */
static void test_atomic_write_builder(void)
{
	struct tbrdma_qp qp, ref;
	struct ibv_qp_ex *x;
	uint64_t value = 0x1122334455667788ull;
	struct ibv_sge sge = { .addr = (uintptr_t)&value, .length = 8 };
	struct ibv_send_wr wr = {
		.wr_id = 77, .opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge,
		.num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	x = make_qpx(&qp, IBV_QPT_RC, 4, 0, IBV_QP_EX_WITH_ATOMIC_WRITE);
	ok(x && x->wr_atomic_write && !x->wr_rdma_write,
	   "ATOMIC_WRITE asked for: its builder, and only it");
	make_qp(&ref, IBV_QPT_RC, 4, 0);
	ref.vqp.qp.handle = HANDLE;
	wr.wr.rdma.remote_addr = 0x8008;
	wr.wr.rdma.rkey = 0x94;
	is_int(tbrdma_post_send(&ref.vqp.qp, &wr, &bad), 0,
	       "reference: post_send ATOMIC_WRITE of an 8-byte SGE");
	doorbells(HANDLE);
	ibv_wr_start(x);
	x->wr_id = 77;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, 0x94, 0x8008, &value);
	value = 0;	/* copied at the builder: the caller may reuse it */
	is_int(ibv_wr_complete(x), 0, "wr_atomic_write: wr_complete 0");
	ok(same_wqes(&qp, &ref, 0, 1), "the WQE is byte-identical to post_send's");
	ok(slot_hdr(&qp, 0)->inline_len == 8 &&
	   *(uint64_t *)(slot_hdr(&qp, 0) + 1) == 0x1122334455667788ull,
	   "the 8 bytes inline, as they were at the builder");
	free_qp(&qp);
	free_qp(&ref);
}

static void test_uc_builders(void)
{
	struct tbrdma_qp qp, ref;
	struct ibv_qp_ex *x;
	struct ibv_sge sg = { .addr = 0x4000, .length = 64, .lkey = 9 };
	struct ibv_send_wr wr[4], *bad;
	int i;

	x = make_qpx(&qp, IBV_QPT_UC, 4, 0,
		     IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			     IBV_QP_EX_WITH_RDMA_WRITE |
			     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	make_qp(&ref, IBV_QPT_UC, 4, 0);
	ref.vqp.qp.handle = HANDLE;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		wr[i].wr_id = 2000 + i;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
		wr[i].sg_list = &sg;
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = 0x8000 + i;
		wr[i].wr.rdma.rkey = 0x40 + i;
	}
	wr[0].opcode = IBV_WR_SEND;
	wr[0].wr.rdma.remote_addr = 0;	/* not carried by a SEND */
	wr[0].wr.rdma.rkey = 0;
	wr[1].opcode = IBV_WR_SEND_WITH_IMM;
	wr[1].imm_data = htonl(1);
	wr[1].wr.rdma.remote_addr = 0;
	wr[1].wr.rdma.rkey = 0;
	wr[2].opcode = IBV_WR_RDMA_WRITE;
	wr[3].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[3].imm_data = htonl(3);
	is_int(tbrdma_post_send(&ref.vqp.qp, wr, &bad), 0,
	       "reference: post_send of the 4 UC opcodes");
	doorbells(HANDLE);

	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 2000;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 9, 0x4000, 64);
	x->wr_id = 2001;
	ibv_wr_send_imm(x, htonl(1));
	ibv_wr_set_sge(x, 9, 0x4000, 64);
	x->wr_id = 2002;
	ibv_wr_rdma_write(x, 0x42, 0x8002);
	ibv_wr_set_sge(x, 9, 0x4000, 64);
	x->wr_id = 2003;
	ibv_wr_rdma_write_imm(x, 0x43, 0x8003, htonl(3));
	ibv_wr_set_sge(x, 9, 0x4000, 64);
	is_int(ibv_wr_complete(x), 0, "UC: 4 builders, wr_complete 0");
	is_int(doorbells(HANDLE), 1, "UC: one doorbell");
	ok(same_wqes(&qp, &ref, 0, 4), "UC WQEs identical to post_send's");
	free_qp(&qp);
	free_qp(&ref);
}

static void test_ud_builders(void)
{
	struct tbrdma_qp qp, ref;
	struct ibv_qp_ex *x;
	struct ibv_sge sg = { .addr = 0x4000, .length = 64, .lkey = 9 };
	struct ibv_sge isg = { .addr = (uintptr_t)data, .length = 40 };
	struct ibv_send_wr wr[2], *bad;

	x = make_qpx(&qp, IBV_QPT_UD, 4, 2,
		     IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
	make_qp(&ref, IBV_QPT_UD, 4, 2);
	ref.vqp.qp.handle = HANDLE;
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 3000;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].sg_list = &sg;
	wr[0].num_sge = 1;
	wr[0].wr.ud.ah = &ah.ibv_ah;
	wr[0].wr.ud.remote_qpn = 0x123;
	wr[0].wr.ud.remote_qkey = 0x11111111;
	wr[0].next = &wr[1];
	wr[1].wr_id = 3001;
	wr[1].opcode = IBV_WR_SEND_WITH_IMM;
	wr[1].imm_data = htonl(0xfeed);
	wr[1].sg_list = &isg;
	wr[1].num_sge = 1;
	wr[1].send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	wr[1].wr.ud.ah = &ah.ibv_ah;
	wr[1].wr.ud.remote_qpn = 0x456;
	wr[1].wr.ud.remote_qkey = 0x22222222;
	is_int(tbrdma_post_send(&ref.vqp.qp, wr, &bad), 0,
	       "reference: post_send of 2 UD sends");
	doorbells(HANDLE);

	ibv_wr_start(x);
	x->wr_id = 3000;
	x->wr_flags = 0;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, &ah.ibv_ah, 0x123, 0x11111111);	/* before data */
	ibv_wr_set_sge(x, 9, 0x4000, 64);
	x->wr_id = 3001;
	x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htonl(0xfeed));
	ibv_wr_set_inline_data(x, data, 40);
	ibv_wr_set_ud_addr(x, &ah.ibv_ah, 0x456, 0x22222222);	/* after data */
	is_int(ibv_wr_complete(x), 0, "UD: 2 builders, wr_complete 0");
	is_int(doorbells(HANDLE), 1, "UD: one doorbell");
	ok(same_wqes(&qp, &ref, 2, 2), "UD WQEs identical to post_send's");
	ok(slot_hdr(&qp, 2)->wr.ud.ah == 0x55 &&
	   slot_hdr(&qp, 3)->wr.ud.remote_qpn == 0x456,
	   "UD address in either order");

	/* UD errors: each fails the batch and publishes nothing. */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 9, 0x4000, 64);
	is_int(ibv_wr_complete(x), EINVAL, "UD without set_ud_addr: EINVAL");
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, NULL, 1, 1);
	ibv_wr_set_sge(x, 9, 0x4000, 64);
	is_int(ibv_wr_complete(x), EINVAL, "UD with a NULL AH: EINVAL");
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, &ah.ibv_ah, 1, 1);
	ibv_wr_send(x);		/* second one never gets an address */
	ibv_wr_set_ud_addr(x, NULL, 1, 1);
	is_int(ibv_wr_complete(x), EINVAL, "bad 2nd WQE: EINVAL");
	is_int(qp.sq.q.hdr->producer, 4, "failed batches publish nothing");
	is_int(doorbells(HANDLE), 0, "and ring no doorbell");
	ok(lock_free(&qp), "SQ lock released after a failed wr_complete");
	free_qp(&qp);
	free_qp(&ref);
}

/* ---- batches: ENOMEM, abort, doorbells ---------------------------------- */

static void send_n(struct ibv_qp_ex *x, int n, uint64_t first_id)
{
	int i;

	for (i = 0; i < n; i++) {
		x->wr_id = first_id + i;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(x);
		ibv_wr_set_sge(x, 1, 0x1000, 8);
	}
}

static void test_batches(void)
{
	struct tbrdma_qp qp;
	struct tbrdma_queue *q = &qp.sq.q;
	struct ibv_qp_ex *x;

	x = make_qpx(&qp, IBV_QPT_RC, 4, 0xfffffffe, ALL_RC_OPS);

	ibv_wr_start(x);
	is_int(ibv_wr_complete(x), 0, "empty batch: 0");
	is_int(doorbells(HANDLE), 0, "empty batch: no doorbell");

	ibv_wr_start(x);
	send_n(x, 5, 10);
	is_int(ibv_wr_complete(x), ENOMEM,
	       "5 WQEs on a 4-slot SQ: wr_complete ENOMEM");
	ok(q->hdr->producer == 0xfffffffe && q->index == 0xfffffffe,
	   "ENOMEM: the whole batch dropped, producer unchanged");
	is_int(doorbells(HANDLE), 0, "ENOMEM: no doorbell");
	ok(lock_free(&qp), "SQ lock released");

	ibv_wr_start(x);
	send_n(x, 4, 20);
	is_int(ibv_wr_complete(x), 0, "exactly 4 fit");
	is_int(q->hdr->producer, 2, "producer across the 2^32 wrap");
	is_int(doorbells(HANDLE), 1, "one doorbell per wr_complete");
	ok(slot_hdr(&qp, 0xfffffffe)->wr_id == 20 &&
	   slot_hdr(&qp, 1)->wr_id == 23, "WQEs in their counters' slots");

	ibv_wr_start(x);
	send_n(x, 1, 30);
	is_int(ibv_wr_complete(x), ENOMEM, "ring full: ENOMEM");
	/* The "kernel" consumes 3: the cached consumer is refreshed. */
	__atomic_store_n(&q->hdr->consumer, q->hdr->consumer + 3,
			 __ATOMIC_RELEASE);
	ibv_wr_start(x);
	send_n(x, 3, 40);
	is_int(ibv_wr_complete(x), 0, "room again after the kernel consumed");
	is_int(doorbells(HANDLE), 1, "one doorbell");

	/* Abort: nothing published, nothing rung, lock released. */
	__atomic_store_n(&q->hdr->consumer, q->hdr->producer, __ATOMIC_RELEASE);
	ibv_wr_start(x);
	send_n(x, 2, 50);
	ibv_wr_abort(x);
	ok(q->hdr->producer == 5 && q->index == 5, "abort: producer unchanged");
	is_int(doorbells(HANDLE), 0, "abort: no doorbell");
	ok(lock_free(&qp), "abort releases the SQ lock");
	ibv_wr_start(x);
	send_n(x, 1, 60);
	is_int(ibv_wr_complete(x), 0, "a batch after an abort");
	ok(slot_hdr(&qp, 5)->wr_id == 60, "reuses the aborted slot");
	is_int(doorbells(HANDLE), 1, "one doorbell");

	/* Kernel active: published, no doorbell. */
	q->hdr->flags = TBRDMA_SQ_FLAG_KERNEL_ACTIVE;
	ibv_wr_start(x);
	send_n(x, 2, 70);
	is_int(ibv_wr_complete(x), 0, "post while KERNEL_ACTIVE");
	is_int(q->hdr->producer, 8, "published");
	is_int(doorbells(HANDLE), 0, "KERNEL_ACTIVE: no doorbell");
	q->hdr->flags = 0;

	/* post_send and the wr API share the ring and the counter. */
	__atomic_store_n(&q->hdr->consumer, q->hdr->producer, __ATOMIC_RELEASE);
	{
		struct ibv_sge sge = { .addr = 0x1000, .length = 8, .lkey = 1 };
		struct ibv_send_wr wr = { .wr_id = 80, .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_SEND }, *bad;

		is_int(tbrdma_post_send(&qp.vqp.qp, &wr, &bad), 0,
		       "post_send on an extended QP");
		ibv_wr_start(x);
		send_n(x, 1, 81);
		is_int(ibv_wr_complete(x), 0, "then a wr batch");
		ok(slot_hdr(&qp, 8)->wr_id == 80 && slot_hdr(&qp, 9)->wr_id == 81,
		   "one ring, one producer");
		is_int(doorbells(HANDLE), 2, "one doorbell each");
	}
	free_qp(&qp);
}

/* ---- what the WQE gets from wr_flags and the setters -------------------- */

static void test_flags_and_setters(void)
{
	struct tbrdma_qp qp;
	struct tbrdma_queue *q = &qp.sq.q;
	struct ibv_qp_ex *x;
	struct ibv_sge five[5] = { { 0 } };
	uint8_t buf[8] = "abcdefg";
	struct tbrdma_send_wqe *w;

	x = make_qpx(&qp, IBV_QPT_RC, 64, 0, ALL_RC_OPS);

	/* IBV_SEND_INLINE in wr_flags does not make an SGE WQE inline. */
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_INLINE;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	is_int(ibv_wr_complete(x), 0, "INLINE in wr_flags with set_sge");
	w = slot_hdr(&qp, q->index - 1);
	ok(w->send_flags == 0 && w->num_sge == 1 && w->inline_len == 0,
	   "the setter decides: an SGE WQE");

	/* Inline data is copied by the setter, not at wr_complete. */
	ibv_wr_start(x);
	x->wr_flags = 0;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, buf, 8);
	memset(buf, 'X', sizeof(buf));
	is_int(ibv_wr_complete(x), 0, "inline send");
	w = slot_hdr(&qp, q->index - 1);
	ok(w->send_flags == TBRDMA_WQE_INLINE && w->inline_len == 8 &&
	   !memcmp(w + 1, "abcdefg", 8), "inline bytes copied by the setter");

	/* wr_id and wr_flags are read by each builder. */
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	x->wr_id = 2;		/* changed after the builder: no effect */
	x->wr_flags = 0;
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	is_int(ibv_wr_complete(x), 0, "two sends");
	ok(slot_hdr(&qp, q->index - 2)->wr_id == 1 &&
	   slot_hdr(&qp, q->index - 2)->send_flags == TBRDMA_WQE_SIGNALED &&
	   slot_hdr(&qp, q->index - 1)->wr_id == 2 &&
	   slot_hdr(&qp, q->index - 1)->send_flags == 0,
	   "wr_id/wr_flags taken at each builder");

	/* No data setter: a zero-length WQE. */
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, 5, 0x9000);
	is_int(ibv_wr_complete(x), 0, "zero-length WRITE, no data setter");
	w = slot_hdr(&qp, q->index - 1);
	ok(w->num_sge == 0 && w->inline_len == 0 && w->wr.rdma.rkey == 5,
	   "no payload");

	/* A later data setter replaces an earlier one. */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, data, 16);
	ibv_wr_set_sge(x, 1, 0x1000, 8);
	is_int(ibv_wr_complete(x), 0, "inline then sge");
	w = slot_hdr(&qp, q->index - 1);
	ok(!(w->send_flags & TBRDMA_WQE_INLINE) && w->num_sge == 1 &&
	   w->inline_len == 0, "the last setter wins");

	/* sq_sig_all */
	qp.sq.caps.sig_all = true;
	ibv_wr_start(x);
	x->wr_flags = 0;
	ibv_wr_send(x);
	is_int(ibv_wr_complete(x), 0, "sq_sig_all QP");
	ok(slot_hdr(&qp, q->index - 1)->send_flags == TBRDMA_WQE_SIGNALED,
	   "sq_sig_all: every WQE signaled");
	qp.sq.caps.sig_all = false;
	doorbells(HANDLE);

	/* Errors: each drops the batch, publishes nothing, rings nothing. */
	{
		uint32_t before = q->index;

		ibv_wr_start(x);
		x->wr_flags = IBV_SEND_IP_CSUM;
		ibv_wr_send(x);
		ibv_wr_set_sge(x, 1, 0x1000, 8);
		is_int(ibv_wr_complete(x), EINVAL, "unknown wr_flags: EINVAL");
		x->wr_flags = 0;

		ibv_wr_start(x);
		ibv_wr_send(x);
		ibv_wr_set_inline_data(x, data, 65);
		is_int(ibv_wr_complete(x), EINVAL,
		       "inline > max_inline_data (64): EINVAL");

		ibv_wr_start(x);
		ibv_wr_send(x);
		ibv_wr_set_inline_data(x, data, 64);
		is_int(ibv_wr_complete(x), 0, "inline == max_inline_data: ok");
		before++;
		doorbells(HANDLE);

		ibv_wr_start(x);
		ibv_wr_rdma_read(x, 1, 0x1000);
		ibv_wr_set_inline_data(x, data, 8);
		is_int(ibv_wr_complete(x), EINVAL, "inline READ: EINVAL");

		ibv_wr_start(x);
		ibv_wr_atomic_fetch_add(x, 1, 0x1000, 1);
		ibv_wr_set_inline_data(x, data, 8);
		is_int(ibv_wr_complete(x), EINVAL, "inline atomic: EINVAL");

		ibv_wr_start(x);
		ibv_wr_send(x);
		ibv_wr_set_sge_list(x, 5, five);
		is_int(ibv_wr_complete(x), EINVAL,
		       "5 SGEs > max_send_sge (4): EINVAL");

		ibv_wr_start(x);
		ibv_wr_set_sge(x, 1, 0x1000, 8);
		is_int(ibv_wr_complete(x), EINVAL, "setter before any builder");

		ibv_wr_start(x);
		ibv_wr_send(x);
		ibv_wr_set_ud_addr(x, &ah.ibv_ah, 1, 1);
		is_int(ibv_wr_complete(x), EINVAL, "set_ud_addr on RC: EINVAL");

		ibv_wr_start(x);
		send_n(x, 2, 90);
		ibv_wr_send(x);
		ibv_wr_set_sge_list(x, 5, five);
		send_n(x, 1, 93);
		is_int(ibv_wr_complete(x), EINVAL,
		       "bad 3rd of 4 WQEs: EINVAL");
		ok(q->index == before && q->hdr->producer == before,
		   "errors publish nothing, not even the good WQEs before");
		is_int(doorbells(HANDLE), 0, "errors ring no doorbell");

		ibv_wr_start(x);
		send_n(x, 1, 95);
		is_int(ibv_wr_complete(x), 0, "wr_start clears the error");
		is_int(doorbells(HANDLE), 1, "one doorbell");
	}
	free_qp(&qp);

	/* Builders exist only for the ops asked for at creation. */
	x = make_qpx(&qp, IBV_QPT_UC, 4, 0, IBV_QP_EX_WITH_SEND);
	ok(x->wr_rdma_read == NULL, "UC: no READ builder");
	free_qp(&qp);
}

/* ---- threads: wr API and post_send posters against one "kernel" ---------- */

#define POSTERS 3
#define PER_POSTER 20000

static struct tbrdma_qp sqp;

static void *wr_poster(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	struct ibv_qp_ex *x = &sqp.vqp.qp_ex;
	uint32_t i = 0;

	while (i < PER_POSTER) {
		if (id == 0) {	/* one thread on the old API */
			struct ibv_sge sge = { .addr = 1, .length = 1 };
			struct ibv_send_wr wr = {
				.wr_id = (id << 32) | i, .sg_list = &sge,
				.num_sge = 1, .opcode = IBV_WR_SEND,
			}, *bad;

			if (tbrdma_post_send(&sqp.vqp.qp, &wr, &bad) == 0)
				i++;
			continue;
		}
		/* Batches of 2: all or nothing. */
		ibv_wr_start(x);
		x->wr_id = (id << 32) | i;
		ibv_wr_send(x);
		ibv_wr_set_sge(x, 1, 1, 1);
		x->wr_id = (id << 32) | (i + 1);
		ibv_wr_send(x);
		ibv_wr_set_sge(x, 1, 1, 1);
		if (ibv_wr_complete(x) == 0)
			i += 2;
	}
	return NULL;
}

static void test_concurrent(void)
{
	pthread_t t[POSTERS];
	uint32_t cons, next[POSTERS] = { 0 };
	int seen = 0, bad_order = 0;
	uintptr_t i;

	make_qpx(&sqp, IBV_QPT_RC, 64, 0xffffff00, IBV_QP_EX_WITH_SEND);
	sqp.sq.q.hdr->flags = TBRDMA_SQ_FLAG_KERNEL_ACTIVE;
	for (i = 0; i < POSTERS; i++)
		pthread_create(&t[i], NULL, wr_poster, (void *)i);

	cons = sqp.sq.q.hdr->consumer;
	while (seen < POSTERS * PER_POSTER) {
		uint32_t prod = __atomic_load_n(&sqp.sq.q.hdr->producer,
						__ATOMIC_ACQUIRE);

		for (; cons != prod; cons++) {
			uint64_t id = slot_hdr(&sqp, cons)->wr_id;
			uint32_t who = id >> 32;

			if (who >= POSTERS || (uint32_t)id != next[who])
				bad_order++;
			else
				next[who]++;
			seen++;
		}
		__atomic_store_n(&sqp.sq.q.hdr->consumer, cons,
				 __ATOMIC_RELEASE);
	}
	for (i = 0; i < POSTERS; i++)
		pthread_join(t[i], NULL);
	is_int(bad_order, 0, "%d posters (wr API and post_send) x %d WQEs "
	       "through a 64-slot SQ: each once, per-thread order kept",
	       POSTERS, PER_POSTER);
	is_int(doorbells(HANDLE), 0, "no doorbell while KERNEL_ACTIVE");
	free_qp(&sqp);
}

int main(void)
{
	size_t i;

	harness_init();
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 1);

	plan(NO_PLAN);
	test_send_ops_check();
	test_qp_ex_setup();
	test_rc_builders(0);
	test_rc_builders(0xfffffffc);	/* the batch straddles the wrap */
	test_atomic_write_builder();
	test_uc_builders();
	test_ud_builders();
	test_batches();
	test_flags_and_setters();
	test_concurrent();
	return done();
}
