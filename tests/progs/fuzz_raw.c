// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_uverbs, layer "raw": uverbs commands built by hand on a uverbs file
 * of our own (its own context, so nothing libibverbs holds is touched).
 *
 *  - legacy write() commands, well-formed or not: every create and destroy
 *    the module implements with handles of the right kind, of another kind
 *    or made up, wrong in_words/out_words (driver data of every length for
 *    CREATE_CQ/QP/SRQ/AH, RESIZE_CQ, GET_CONTEXT, ALLOC_PD), a word of the
 *    payload replaced, write sizes that disagree with the header;
 *  - extended (FLAG_EXTENDED) commands and random command numbers;
 *  - ioctl(RDMA_VERBS_IOCTL) with random objects, methods and attributes
 *    (all but GET_CONTEXT, which leaks in the core: see cmd_ioctl());
 *  - mmap() of ring offsets the kernel handed out and of made-up ones,
 *    writes into what got mapped, doorbells on raw QPs (POST_SEND with
 *    no WRs, and the doorbell file's ioctl with QP numbers we got, made
 *    up or too wide, and other requests);
 *  - closing the file with everything alive, then reopening.
 *
 * Pointers handed to the kernel always point into our scratch area (which
 * ends at a PROT_NONE page), at an unmapped or kernel address: never at
 * memory of ours the kernel could write into by accident.  The kernel's
 * answers are checked where they are ours: a queue description (driver
 * data of CREATE_CQ/QP/SRQ) must be well-formed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>

#include "../../uapi/tbrdma-abi.h"
#include "fuzz.h"

#define SCRATCH		(16 * 1024)
#define NHANDLE		8
#define NMAP		16
#define NOFF		32

enum kind { K_PD, K_CQ, K_QP, K_SRQ, K_MR, K_AH, NKIND };

struct rstate {
	struct rng r;
	uint64_t iter;
	int fd;
	uint8_t *scratch;	/* SCRATCH bytes, then a PROT_NONE page */
	uint8_t *data;		/* what raw MRs may cover */
	uint32_t handle[NKIND][NHANDLE];
	uint32_t nhandle[NKIND];
	uint64_t off[NOFF];	/* mmap offsets the kernel gave us */
	uint32_t offsize[NOFF];
	uint32_t noff;
	void *map[NMAP];
	size_t maplen[NMAP];
	uint32_t last_out;	/* out bytes the last command allowed */
	int doorbell_fd;	/* the context's doorbell file, or -1 */
	uint32_t qpn[NHANDLE];	/* QP numbers CREATE_QP answered */
	uint32_t nqpn;
};

static uint64_t resp_ptr(struct rstate *s)
{
	switch (rnd(&s->r, 20)) {
	case 0:
		return 0;
	case 1:
		return (uintptr_t)s->scratch + SCRATCH;	/* the guard page */
	case 2:
		return 0xffffffff81000000ULL;		/* kernel text */
	case 3:
		return (uintptr_t)s->scratch + SCRATCH - rnd(&s->r, 64);
	default:
		memset(s->scratch, 0, 512);
		return (uintptr_t)s->scratch;
	}
}

static uint32_t handle(struct rstate *s, enum kind k)
{
	struct rng *r = &s->r;
	enum kind other = (enum kind)rnd(r, NKIND);

	if (s->nhandle[k] && chance(r, 75))
		return s->handle[k][rnd(r, s->nhandle[k])];
	if (s->nhandle[other] && chance(r, 50))
		return s->handle[other][rnd(r, s->nhandle[other])];
	return chance(r, 50) ? rnd(r, 64) : rnd_u32(r);
}

static void remember(struct rstate *s, enum kind k, uint32_t h)
{
	if (s->nhandle[k] < NHANDLE)
		s->handle[k][s->nhandle[k]++] = h;
	else
		s->handle[k][rnd(&s->r, NHANDLE)] = h;
}

static void remember_queue(struct rstate *s, const struct tbrdma_queue_info *q,
			   bool whole, const char *what)
{
	uint64_t need;

	if (!q->num_slots && !q->mmap_size)
		return;		/* no such queue (a QP on an SRQ has no RQ) */
	if (!whole)
		return;		/* a response cut short: not all of it is there */
	need = TBRDMA_QUEUE_SLOTS_OFFSET + (uint64_t)q->num_slots * q->slot_size;
	if (q->num_slots & (q->num_slots - 1) || q->mmap_size < need ||
	    q->mmap_size % 4096 || q->mmap_offset % 4096 || q->slot_size % 8)
		fuzz_fail("%s: malformed queue info: offset %#llx size %u "
			  "slots %u slot_size %u", what,
			  (unsigned long long)q->mmap_offset, q->mmap_size,
			  q->num_slots, q->slot_size);
	if (s->noff < NOFF) {
		s->off[s->noff] = q->mmap_offset;
		s->offsize[s->noff++] = q->mmap_size;
	} else {
		uint32_t i = rnd(&s->r, NOFF);

		s->off[i] = q->mmap_offset;
		s->offsize[i] = q->mmap_size;
	}
}

/*
 * Send a legacy command: header, then the core payload PAYLOAD of CORE
 * bytes (response pointer first where the command has one).  RESP_CORE and
 * RESP_DRV are the sizes of the core response and of our driver data, to
 * choose out_words around.  Returns write()'s result (errno set).
 */
static ssize_t send_cmd(struct rstate *s, uint32_t cmd, void *payload,
			size_t core, size_t resp_core, size_t resp_drv,
			bool no_corrupt_from_8)
{
	struct rng *r = &s->r;
	uint32_t buf[256];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	size_t in = sizeof(*h) + core, len;
	uint32_t out = (uint32_t)(resp_core + resp_drv);
	ssize_t n;

	memset(buf, 0, sizeof(buf));
	memcpy(h + 1, payload, core);
	/* Driver data in the request: no command takes any. */
	if (chance(r, 10)) {
		size_t extra = 4 * rnd(r, 32);

		for (size_t i = 0; i < extra / 4; i++)
			buf[in / 4 + i] = rnd_u32(r);
		in += extra;
	} else if (chance(r, 5)) {
		in = 4 * rnd(r, (uint32_t)in / 4 + 1);	/* short */
	}
	switch (rnd(r, 10)) {
	case 0:
		out = (uint32_t)resp_core;		/* no driver data */
		break;
	case 1:
		out = (uint32_t)resp_core + 4 * rnd(r, (uint32_t)resp_drv / 4 + 1);
		break;
	case 2:
		out = 4 * rnd(r, 0x10000);
		break;
	case 3:
		out = (uint32_t)(resp_core + resp_drv) + 4 * rnd(r, 64);
		break;
	default:
		break;
	}
	/* One word of the payload replaced (the response pointer is not
	 * touched: it is chosen from safe values only). */
	if (chance(r, 15) && core > 8) {
		size_t w = 2 + rnd(r, (uint32_t)(core - 8) / 4);

		if (!no_corrupt_from_8 || w >= 4 + 2)
			buf[2 + w] = rnd_u32(r);
	}
	h->command = cmd;
	h->in_words = (uint16_t)(in / 4);
	h->out_words = (uint16_t)((out + 3) / 4);
	s->last_out = 4 * h->out_words;
	len = chance(r, 97) ? in : rnd(r, sizeof(buf) + 1);
	n = write(s->fd, buf, len);
	if (n >= 0 && (size_t)n != len)
		fuzz_fail("write of command %u: %zd of %zu bytes", cmd, n, len);
	return n;
}

static void account(const char *what, ssize_t n)
{
	fuzz_ret(what, n >= 0 ? 0 : errno);
}

/* The response was written where resp_ptr() put it, if there. */
static const void *resp_at(struct rstate *s, uint64_t resp)
{
	return resp == (uintptr_t)s->scratch ? s->scratch : NULL;
}

static void get_context(struct rstate *s, bool proper)
{
	struct ib_uverbs_get_context c = { .response = (uintptr_t)s->scratch };
	const struct ib_uverbs_get_context_resp *resp = (void *)s->scratch;
	ssize_t n;

	memset(s->scratch, 0, 64);
	if (proper) {
		const struct tbrdma_alloc_ucontext_resp *drv = (const void *)(resp + 1);
		struct {
			struct ib_uverbs_cmd_hdr h;
			struct ib_uverbs_get_context c;
			struct tbrdma_alloc_ucontext_req req;
		} cmd = { { IB_USER_VERBS_CMD_GET_CONTEXT, sizeof(cmd) / 4,
			    (sizeof(*resp) + sizeof(*drv)) / 4 },
			  c, { 0, 0 } };
		size_t len = sizeof(cmd);

		/* Mostly with a doorbell file, as the provider asks. */
		if (chance(&s->r, 70))
			cmd.req.flags = TBRDMA_UCTX_DOORBELL_FD;
		else if (chance(&s->r, 50)) {
			len -= sizeof(cmd.req);		/* no driver data */
			cmd.h.in_words = len / 4;
		}
		n = write(s->fd, &cmd, len);
		if (n >= 0 && (drv->flags & TBRDMA_UCTX_DOORBELL_FD))
			s->doorbell_fd = drv->doorbell_fd;
	} else {
		c.response = resp_ptr(s);
		n = send_cmd(s, IB_USER_VERBS_CMD_GET_CONTEXT, &c, sizeof(c),
			     sizeof(*resp), sizeof(struct tbrdma_alloc_ucontext_resp),
			     false);
	}
	account("GET_CONTEXT", n);
}

static void open_ctx(struct rstate *s)
{
	memset(s->nhandle, 0, sizeof(s->nhandle));
	s->noff = 0;
	s->nqpn = 0;
	s->doorbell_fd = -1;
	s->fd = open(F.uverbs_path, O_RDWR | O_CLOEXEC);
	if (s->fd < 0) {
		fuzz_fail("open %s: %s", F.uverbs_path, strerror(errno));
		return;
	}
	/* Sometimes garbage first: every command needs a context. */
	if (chance(&s->r, 20))
		get_context(s, false);
	get_context(s, true);
}

/* Close with whatever is alive; close every file the commands made. */
static void close_ctx(struct rstate *s, int floor_fd)
{
	bool unmap_first = chance(&s->r, 50);

	if (unmap_first)
		for (int i = 0; i < NMAP; i++)
			if (s->map[i]) {
				munmap(s->map[i], s->maplen[i]);
				s->map[i] = NULL;
			}
	close(s->fd);
	for (int fd = floor_fd; fd < floor_fd + 256; fd++)
		close(fd);
	/* Maps outlive the file: touch them once more, then let go. */
	for (int i = 0; i < NMAP; i++)
		if (s->map[i]) {
			((volatile uint8_t *)s->map[i])[rnd(&s->r, 256)] ^= 1;
			munmap(s->map[i], s->maplen[i]);
			s->map[i] = NULL;
		}
	s->fd = -1;
}

/* ---- legacy commands ---------------------------------------------------- */

static void cmd_alloc_pd(struct rstate *s)
{
	struct ib_uverbs_alloc_pd c = { .response = resp_ptr(s) };
	ssize_t n = send_cmd(s, IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c),
			     sizeof(struct ib_uverbs_alloc_pd_resp),
			     sizeof(struct tbrdma_alloc_pd_resp), false);
	const struct ib_uverbs_alloc_pd_resp *resp = resp_at(s, c.response);

	account("ALLOC_PD", n);
	if (n >= 0 && resp)
		remember(s, K_PD, resp->pd_handle);
}

static void cmd_create_cq(struct rstate *s)
{
	struct rng *r = &s->r;
	struct ib_uverbs_create_cq c = {
		.response = resp_ptr(s),
		.user_handle = rnd_u64(r),
		.cqe = chance(r, 80) ? 1 + rnd(r, 256) : rnd_u32(r),
		.comp_vector = chance(r, 90) ? 0 : rnd_u32(r),
		.comp_channel = chance(r, 90) ? -1 : (int32_t)rnd(r, 64),
	};
	ssize_t n = send_cmd(s, IB_USER_VERBS_CMD_CREATE_CQ, &c, sizeof(c),
			     sizeof(struct ib_uverbs_create_cq_resp),
			     sizeof(struct tbrdma_create_cq_resp), false);
	const struct ib_uverbs_create_cq_resp *resp = resp_at(s, c.response);

	account("CREATE_CQ", n);
	if (n >= 0 && resp) {
		remember(s, K_CQ, resp->cq_handle);
		remember_queue(s, (const void *)(resp + 1),
			       s->last_out >= sizeof(*resp) +
					      sizeof(struct tbrdma_create_cq_resp),
			       "CREATE_CQ");
	}
}

static void cmd_resize_cq(struct rstate *s)
{
	struct ib_uverbs_resize_cq c = {
		.response = resp_ptr(s),
		.cq_handle = handle(s, K_CQ),
		.cqe = chance(&s->r, 80) ? 1 + rnd(&s->r, 512) : rnd_u32(&s->r),
	};
	ssize_t n = send_cmd(s, IB_USER_VERBS_CMD_RESIZE_CQ, &c, sizeof(c),
			     sizeof(struct ib_uverbs_resize_cq_resp),
			     sizeof(struct tbrdma_create_cq_resp), false);
	const struct ib_uverbs_resize_cq_resp *resp = resp_at(s, c.response);

	account("RESIZE_CQ", n);
	if (n >= 0 && resp)
		remember_queue(s, (const void *)(resp + 1),
			       s->last_out >= sizeof(*resp) +
					      sizeof(struct tbrdma_create_cq_resp),
			       "RESIZE_CQ");
}

static void cmd_create_qp(struct rstate *s)
{
	static const uint8_t types[] = {
		IB_UVERBS_QPT_RC, IB_UVERBS_QPT_RC, IB_UVERBS_QPT_UC,
		IB_UVERBS_QPT_UD, IB_UVERBS_QPT_UD, IB_UVERBS_QPT_RAW_PACKET,
		IB_UVERBS_QPT_XRC_INI, IB_UVERBS_QPT_DRIVER, 1 /* SMI */,
		2 /* GSI */, 200,
	};
	struct rng *r = &s->r;
	uint32_t cq = handle(s, K_CQ);
	struct ib_uverbs_create_qp c = {
		.response = resp_ptr(s),
		.user_handle = rnd_u64(r),
		.pd_handle = handle(s, K_PD),
		.send_cq_handle = cq,
		.recv_cq_handle = chance(r, 70) ? cq : handle(s, K_CQ),
		.srq_handle = handle(s, K_SRQ),
		.max_send_wr = rnd_count(r, 256),
		.max_recv_wr = rnd_count(r, 256),
		.max_send_sge = rnd_count(r, 32),
		.max_recv_sge = rnd_count(r, 32),
		.max_inline_data = chance(r, 70) ? rnd(r, 600) : rnd_u32(r),
		.sq_sig_all = (uint8_t)rnd(r, 3),
		.qp_type = types[rnd(r, sizeof(types))],
		.is_srq = chance(r, 20),
	};
	ssize_t n = send_cmd(s, IB_USER_VERBS_CMD_CREATE_QP, &c, sizeof(c),
			     sizeof(struct ib_uverbs_create_qp_resp),
			     sizeof(struct tbrdma_create_qp_resp), false);
	const struct ib_uverbs_create_qp_resp *resp = resp_at(s, c.response);

	account("CREATE_QP", n);
	if (n >= 0 && resp) {
		const struct tbrdma_create_qp_resp *d = (const void *)(resp + 1);

		bool whole = s->last_out >= sizeof(*resp) + sizeof(*d);

		remember(s, K_QP, resp->qp_handle);
		if (s->nqpn < NHANDLE)
			s->qpn[s->nqpn++] = resp->qpn;
		else
			s->qpn[rnd(&s->r, NHANDLE)] = resp->qpn;
		remember_queue(s, &d->sq, whole, "CREATE_QP sq");
		remember_queue(s, &d->rq, whole, "CREATE_QP rq");
	}
}

static void cmd_create_srq(struct rstate *s)
{
	struct rng *r = &s->r;
	struct ib_uverbs_create_srq c = {
		.response = resp_ptr(s),
		.user_handle = rnd_u64(r),
		.pd_handle = handle(s, K_PD),
		.max_wr = rnd_count(r, 256),
		.max_sge = rnd_count(r, 32),
		.srq_limit = chance(r, 70) ? rnd(r, 4) : rnd_u32(r),
	};
	ssize_t n = send_cmd(s, IB_USER_VERBS_CMD_CREATE_SRQ, &c, sizeof(c),
			     sizeof(struct ib_uverbs_create_srq_resp),
			     sizeof(struct tbrdma_create_srq_resp), false);
	const struct ib_uverbs_create_srq_resp *resp = resp_at(s, c.response);

	account("CREATE_SRQ", n);
	if (n >= 0 && resp) {
		remember(s, K_SRQ, resp->srq_handle);
		remember_queue(s, (const void *)(resp + 1),
			       s->last_out >= sizeof(*resp) +
					      sizeof(struct tbrdma_create_srq_resp),
			       "CREATE_SRQ");
	}
}

static void cmd_reg_mr(struct rstate *s)
{
	struct rng *r = &s->r;
	uint64_t len = chance(r, 85) ? 1 + rnd(r, 65536) : rnd_u64(r);
	struct ib_uverbs_reg_mr c = {
		.response = resp_ptr(s),
		/* Only our data area, or nothing at all: the queues of raw
		 * QPs may write into whatever these MRs cover. */
		.start = chance(r, 85) ? (uintptr_t)s->data + rnd(r, 65536) :
			 chance(r, 50) ? 0 : 0xffff888000000000ULL,
		.length = len,
		.hca_va = chance(r, 50) ? 0 : rnd_u64(r),
		.pd_handle = handle(s, K_PD),
		.access_flags = chance(r, 70) ? (rnd(r, 16) | 1) : rnd_u32(r),
	};
	ssize_t n;
	const struct ib_uverbs_reg_mr_resp *resp;

	if (!c.hca_va)
		c.hca_va = c.start;
	n = send_cmd(s, IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c),
		     sizeof(struct ib_uverbs_reg_mr_resp), 0, true);
	resp = resp_at(s, c.response);
	account("REG_MR", n);
	if (n >= 0 && resp)
		remember(s, K_MR, resp->mr_handle);
}

static void cmd_create_ah(struct rstate *s)
{
	struct rng *r = &s->r;
	struct ib_uverbs_create_ah c = {
		.response = resp_ptr(s),
		.user_handle = rnd_u64(r),
		.pd_handle = handle(s, K_PD),
		.attr = {
			.dlid = (uint16_t)rnd_u32(r),
			.sl = (uint8_t)rnd(r, 16),
			.is_global = chance(r, 90),
			.port_num = chance(r, 90) ? 1 : (uint8_t)rnd(r, 4),
			.grh = {
				.sgid_index = chance(r, 85) ? 1 : (uint8_t)rnd(r, 256),
				.hop_limit = 64,
			},
		},
	};
	ssize_t n;
	const struct ib_uverbs_create_ah_resp *resp;

	memcpy(c.attr.grh.dgid, F.v.gid.raw, 16);
	n = send_cmd(s, IB_USER_VERBS_CMD_CREATE_AH, &c, sizeof(c),
		     sizeof(struct ib_uverbs_create_ah_resp),
		     sizeof(struct tbrdma_create_ah_resp), false);
	resp = resp_at(s, c.response);
	account("CREATE_AH", n);
	if (n >= 0 && resp)
		remember(s, K_AH, resp->ah_handle);
}

static void cmd_modify_qp(struct rstate *s)
{
	struct rng *r = &s->r;
	struct ib_uverbs_modify_qp c;
	ssize_t n;

	memset(&c, 0, sizeof(c));
	c.qp_handle = handle(s, K_QP);
	c.attr_mask = chance(r, 50) ? 1 : rnd_u32(r) & 0x1fffff;
	c.qp_state = (uint8_t)(chance(r, 90) ? rnd(r, 7) : rnd(r, 256));
	c.cur_qp_state = (uint8_t)rnd(r, 8);
	c.qkey = rnd_u32(r);
	c.rq_psn = rnd_u32(r);
	c.sq_psn = rnd_u32(r);
	c.dest_qp_num = chance(r, 50) ? rnd(r, 64) : rnd_u32(r);
	c.qp_access_flags = rnd(r, 16);
	c.path_mtu = (uint8_t)(1 + rnd(r, 6));
	c.port_num = chance(r, 90) ? 1 : (uint8_t)rnd(r, 256);
	c.max_rd_atomic = (uint8_t)rnd(r, 20);
	c.max_dest_rd_atomic = (uint8_t)rnd(r, 20);
	c.min_rnr_timer = (uint8_t)rnd(r, 32);
	c.timeout = (uint8_t)rnd(r, 32);
	c.retry_cnt = (uint8_t)rnd(r, 8);
	c.rnr_retry = (uint8_t)rnd(r, 8);
	c.dest.is_global = 1;
	c.dest.port_num = 1;
	c.dest.sgid_index = chance(r, 90) ? 1 : (uint8_t)rnd(r, 256);
	c.dest.hop_limit = 64;
	memcpy(c.dest.dgid, F.v.gid.raw, 16);
	n = send_cmd(s, IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), 0, 0,
		     false);
	account("MODIFY_QP", n);
}

/* A raw QP taken through INIT, RTR, RTS properly (3 commands, 3
 * iterations), so doorbells on raw rings reach the send engine. */
static void cmd_connect(struct rstate *s)
{
	struct rng *r = &s->r;
	struct ib_uverbs_modify_qp c;
	static const uint32_t masks[3] = {
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
		IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			IBV_QP_MIN_RNR_TIMER,
		IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC,
	};

	memset(&c, 0, sizeof(c));
	c.qp_handle = handle(s, K_QP);
	c.port_num = 1;
	c.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	c.path_mtu = IBV_MTU_1024;
	c.dest_qp_num = rnd(r, 64);
	c.max_dest_rd_atomic = 1;
	c.max_rd_atomic = 1;
	c.min_rnr_timer = 1;
	c.timeout = 10;
	c.retry_cnt = 1;
	c.rnr_retry = 1;
	c.dest.is_global = 1;
	c.dest.port_num = 1;
	c.dest.sgid_index = (uint8_t)F.v.gid_index;
	c.dest.hop_limit = 64;
	memcpy(c.dest.dgid, F.v.gid.raw, 16);
	for (int i = 0; i < 3; i++) {
		struct {
			struct ib_uverbs_cmd_hdr h;
			struct ib_uverbs_modify_qp c;
		} cmd = { { IB_USER_VERBS_CMD_MODIFY_QP, sizeof(cmd) / 4, 0 }, c };
		ssize_t n;

		cmd.c.attr_mask = masks[i];
		cmd.c.qp_state = IBV_QPS_INIT + i;
		n = write(s->fd, &cmd, sizeof(cmd));
		account("connect", n);
		if (i)
			F.iters++;
		if (n < 0)
			break;
	}
}

static void cmd_destroy(struct rstate *s)
{
	struct rng *r = &s->r;
	uint32_t buf[4] = { 0 };
	uint32_t cmd;
	size_t core = 4, resp = 0;
	enum kind k = (enum kind)rnd(r, NKIND);
	ssize_t n;

	switch (k) {
	case K_PD:
		cmd = IB_USER_VERBS_CMD_DEALLOC_PD;
		break;
	case K_MR:
		cmd = IB_USER_VERBS_CMD_DEREG_MR;
		break;
	case K_AH:
		cmd = IB_USER_VERBS_CMD_DESTROY_AH;
		break;
	case K_CQ:
		cmd = IB_USER_VERBS_CMD_DESTROY_CQ;
		core = sizeof(struct ib_uverbs_destroy_cq);
		resp = sizeof(struct ib_uverbs_destroy_cq_resp);
		break;
	case K_QP:
		cmd = IB_USER_VERBS_CMD_DESTROY_QP;
		core = sizeof(struct ib_uverbs_destroy_qp);
		resp = sizeof(struct ib_uverbs_destroy_qp_resp);
		break;
	default:
		cmd = IB_USER_VERBS_CMD_DESTROY_SRQ;
		core = sizeof(struct ib_uverbs_destroy_srq);
		resp = sizeof(struct ib_uverbs_destroy_srq_resp);
		break;
	}
	if (resp) {
		uint64_t p = resp_ptr(s);

		memcpy(buf, &p, 8);
		buf[2] = handle(s, k);
	} else {
		buf[0] = handle(s, k);
	}
	n = send_cmd(s, cmd, buf, core, resp, 0, false);
	account("DESTROY", n);
}

/* POST_SEND/POST_RECV/POST_SRQ_RECV: doorbells, or WRs (refused for user
 * QPs), with counts and sizes that disagree with the buffer. */
static void cmd_post(struct rstate *s)
{
	struct rng *r = &s->r;
	uint32_t buf[200];
	struct ib_uverbs_post_send *c = (void *)buf;
	uint32_t cmd, core;
	ssize_t n;

	memset(buf, 0, sizeof(buf));
	c->response = resp_ptr(s);
	switch (rnd(r, 3)) {
	case 0:
		cmd = IB_USER_VERBS_CMD_POST_SEND;
		c->qp_handle = handle(s, K_QP);
		break;
	case 1:
		cmd = IB_USER_VERBS_CMD_POST_RECV;
		c->qp_handle = handle(s, K_QP);
		break;
	default:
		cmd = IB_USER_VERBS_CMD_POST_SRQ_RECV;
		c->qp_handle = handle(s, K_SRQ);
	}
	if (chance(r, 60)) {
		c->wr_count = 0;
		c->sge_count = 0;
		c->wqe_size = cmd == IB_USER_VERBS_CMD_POST_SEND ?
			      sizeof(struct ib_uverbs_send_wr) :
			      sizeof(struct ib_uverbs_recv_wr);
		core = sizeof(*c);
	} else {
		c->wr_count = rnd_count(r, 4);
		c->sge_count = rnd_count(r, 8);
		c->wqe_size = chance(r, 70) ? sizeof(struct ib_uverbs_send_wr) :
					      rnd_u32(r);
		for (int i = 6; i < 200; i++)	/* the WRs and SGEs */
			buf[i] = chance(r, 50) ? 0 : rnd_u32(r);
		core = 4 * (4 + rnd(r, 190));
	}
	n = send_cmd(s, cmd, buf, core,
		     sizeof(struct ib_uverbs_post_send_resp), 0, false);
	account("POST", n);
}

/* The doorbell file's ioctl (kmod/doorbell.c). */
static void cmd_doorbell(struct rstate *s)
{
	struct rng *r = &s->r;
	unsigned long arg;
	unsigned int req = TBRDMA_IOCTL_SQ_DOORBELL;

	if (s->doorbell_fd < 0)
		return cmd_post(s);
	if (s->nqpn && chance(r, 80))
		arg = s->qpn[rnd(r, s->nqpn)];
	else if (chance(r, 50))
		arg = rnd_u32(r);
	else
		arg = rnd_u64(r);
	if (chance(r, 10))
		req = chance(r, 50) ? rnd_u32(r) : _IO(TBRDMA_IOCTL_MAGIC, rnd(r, 256));
	fuzz_ret("DOORBELL", ioctl(s->doorbell_fd, req, arg));
}

static void cmd_misc(struct rstate *s)
{
	struct rng *r = &s->r;
	uint32_t buf[16] = { 0 };
	uint64_t p = resp_ptr(s);
	ssize_t n;

	memcpy(buf, &p, 8);
	switch (rnd(r, 6)) {
	case 0:		/* POLL_CQ: user CQs are polled in user space */
		buf[2] = handle(s, K_CQ);
		buf[3] = rnd_count(r, 16);
		n = send_cmd(s, IB_USER_VERBS_CMD_POLL_CQ, buf, 16, 8, 0, false);
		break;
	case 1:		/* REQ_NOTIFY_CQ: sets the arm flag in the ring */
		buf[0] = handle(s, K_CQ);
		buf[1] = rnd(r, 3);
		n = send_cmd(s, IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, buf, 8, 0, 0,
			     false);
		break;
	case 2:
		buf[2] = handle(s, K_QP);
		buf[3] = rnd_u32(r);
		n = send_cmd(s, IB_USER_VERBS_CMD_QUERY_QP, buf, 16,
			     sizeof(struct ib_uverbs_query_qp_resp), 0, false);
		break;
	case 3:
		buf[2] = handle(s, K_SRQ);
		n = send_cmd(s, chance(r, 50) ? IB_USER_VERBS_CMD_QUERY_SRQ :
						IB_USER_VERBS_CMD_MODIFY_SRQ,
			     buf, 16, sizeof(struct ib_uverbs_query_srq_resp),
			     0, false);
		break;
	case 4:
		buf[2] = (uint8_t)(chance(r, 80) ? 1 : rnd(r, 256));
		n = send_cmd(s, IB_USER_VERBS_CMD_QUERY_PORT, buf, 16,
			     sizeof(struct ib_uverbs_query_port_resp), 0, false);
		break;
	default:
		n = send_cmd(s, IB_USER_VERBS_CMD_QUERY_DEVICE, buf, 8,
			     sizeof(struct ib_uverbs_query_device_resp), 0,
			     false);
	}
	account("MISC", n);
}

/* A random command number and sizes, legacy or extended. */
static void cmd_random(struct rstate *s)
{
	struct rng *r = &s->r;
	uint32_t buf[128];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	uint64_t p = resp_ptr(s);
	size_t len;
	ssize_t n;
	uint32_t cmd;

	for (int i = 0; i < 128; i++)
		buf[i] = chance(r, 50) ? 0 : rnd_u32(r);
	/* Never CREATE_COMP_CHANNEL (17) with a real response: it makes
	 * files; the close at every reopen reaps the ones that slip by. */
	cmd = chance(r, 80) ? rnd(r, 56) : rnd_u32(r);
	if (chance(r, 30))
		cmd |= IB_USER_VERBS_CMD_FLAG_EXTENDED;
	len = 8 + 4 * rnd(r, 120);
	/* REG_MR/REREG_MR pin what "start" names: only nothing at all. */
	if ((cmd & 0xff) == IB_USER_VERBS_CMD_REG_MR ||
	    (cmd & 0xff) == IB_USER_VERBS_CMD_REREG_MR) {
		buf[4] = buf[5] = buf[6] = buf[7] = 0;
		buf[8] = buf[9] = buf[10] = buf[11] = 0;
	}
	h->command = cmd;
	h->in_words = (uint16_t)(chance(r, 60) ? len / 4 : rnd(r, 0x10000));
	h->out_words = (uint16_t)rnd(r, 64);
	memcpy(&buf[2], &p, 8);
	if (cmd & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		struct ib_uverbs_ex_cmd_hdr *ex = (void *)(h + 1);

		h->in_words = (uint16_t)rnd(r, 16);
		ex->response = p;
		ex->provider_in_words = (uint16_t)rnd(r, 8);
		ex->provider_out_words = (uint16_t)rnd(r, 8);
		ex->cmd_hdr_reserved = chance(r, 90) ? 0 : rnd_u32(r);
		len = 8 + sizeof(*ex) + 8 * (h->in_words + ex->provider_in_words);
		if (len > sizeof(buf) || chance(r, 10))
			len = rnd(r, sizeof(buf) + 1);
	}
	n = write(s->fd, buf, len);
	if (n >= 0 && (size_t)n != len)
		fuzz_fail("write of random command %#x: %zd of %zu bytes", cmd,
			  n, len);
	account("RANDOM", n);
}

/* ---- ioctl -------------------------------------------------------------- */

static void cmd_ioctl(struct rstate *s)
{
	static const uint16_t objs[] = {
		UVERBS_OBJECT_DEVICE, UVERBS_OBJECT_PD, UVERBS_OBJECT_CQ,
		UVERBS_OBJECT_CQ, UVERBS_OBJECT_QP, UVERBS_OBJECT_QP,
		UVERBS_OBJECT_SRQ, UVERBS_OBJECT_AH, UVERBS_OBJECT_MR,
		UVERBS_OBJECT_MW, UVERBS_OBJECT_COMP_CHANNEL,
		UVERBS_OBJECT_ASYNC_EVENT, UVERBS_OBJECT_COUNTERS,
		UVERBS_OBJECT_DM, UVERBS_OBJECT_FLOW_ACTION, 0xffff,
	};
	struct rng *r = &s->r;
	union {
		struct ib_uverbs_ioctl_hdr h;
		uint8_t b[sizeof(struct ib_uverbs_ioctl_hdr) +
			  20 * sizeof(struct ib_uverbs_attr)];
	} u;
	uint16_t nattr = (uint16_t)rnd(r, 13);
	int ret;

	memset(&u, 0, sizeof(u));
	u.h.object_id = chance(r, 90) ? objs[rnd(r, sizeof(objs) / 2)] :
					(uint16_t)rnd_u32(r);
	u.h.method_id = (uint16_t)(chance(r, 90) ? rnd(r, 8) : rnd_u32(r));
	/*
	 * Not GET_CONTEXT: when it fails after allocating the context (the
	 * file has one already, or the driver refused), the RDMA core frees
	 * the context without dropping the task reference restrack took, so
	 * the calling process's task_struct leaks (every driver, in Debian's
	 * 6.1 and 6.12: tests/kernel-bugs/, Documentation/testing.md).  The
	 * write() GET_CONTEXT above, which cleans up, and libibverbs' own
	 * ioctl cover the method.
	 */
	if (u.h.object_id == UVERBS_OBJECT_DEVICE &&
	    u.h.method_id == UVERBS_METHOD_GET_CONTEXT)
		u.h.method_id = UVERBS_METHOD_QUERY_CONTEXT;
	u.h.num_attrs = nattr;
	u.h.length = (uint16_t)(sizeof(u.h) + nattr * sizeof(u.h.attrs[0]));
	if (chance(r, 5))
		u.h.length = (uint16_t)rnd(r, sizeof(u));
	if (chance(r, 3))
		u.h.num_attrs = (uint16_t)rnd_u32(r);
	u.h.driver_id = chance(r, 95) ? 0 : rnd_u32(r);
	u.h.reserved1 = chance(r, 95) ? 0 : rnd_u64(r);
	u.h.reserved2 = chance(r, 95) ? 0 : rnd_u32(r);
	for (int i = 0; i < nattr; i++) {
		struct ib_uverbs_attr *a = &u.h.attrs[i];
		static const uint16_t lens[] = { 0, 1, 2, 4, 4, 8, 8, 16, 24,
						 32, 64, 100, 512 };

		switch (rnd(r, 6)) {
		case 0:
			a->attr_id = UVERBS_ATTR_UHW_IN;
			break;
		case 1:
			a->attr_id = UVERBS_ATTR_UHW_OUT;
			break;
		case 2:
			a->attr_id = (uint16_t)rnd_u32(r);
			break;
		default:
			a->attr_id = (uint16_t)rnd(r, 12);
		}
		a->len = chance(r, 90) ? lens[rnd(r, sizeof(lens) / 2)] :
					 (uint16_t)rnd_u32(r);
		a->flags = (uint16_t)(chance(r, 90) ? rnd(r, 2) : rnd_u32(r));
		a->attr_data.reserved = chance(r, 95) ? 0 : (uint16_t)rnd_u32(r);
		switch (rnd(r, 6)) {
		case 0:		/* a handle or a small number (an fd) */
			a->data = handle(s, (enum kind)rnd(r, NKIND));
			break;
		case 1:
			a->data = rnd_u32(r);
			break;
		case 2:
			a->data = resp_ptr(s);
			break;
		default:	/* data to read or room to write, in scratch */
			for (int k = 0; k < 512; k += 4) {
				uint32_t v = chance(r, 50) ? 0 : rnd_u32(r);

				memcpy(s->scratch + 1024 + k, &v, 4);
			}
			a->data = (uintptr_t)s->scratch + 1024 +
				  (chance(r, 90) ? 0 : rnd(r, 64));
			if (a->len > 8 && a->len > SCRATCH - 1100)
				a->len = 512;
		}
	}
	ret = ioctl(s->fd, chance(r, 97) ? RDMA_VERBS_IOCTL : rnd_u32(r), &u);
	if (ret != 0 && ret != -1)
		fuzz_fail("ioctl returned %d", ret);
	fuzz_ret("ioctl", ret ? errno : 0);
}

/* ---- mmap and rings of raw QPs ----------------------------------------- */

static void cmd_mmap(struct rstate *s)
{
	struct rng *r = &s->r;
	int slot = (int)rnd(r, NMAP);
	uint64_t off;
	size_t len;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED;
	void *p;

	if (s->map[slot]) {
		/* Write into it (a ring header or slots), or let it go. */
		if (chance(r, 70)) {
			uint32_t *w = s->map[slot];
			size_t words = s->maplen[slot] / 4;

			if (chance(r, 50) && words > 64 + 256) {
				/* Garbage WQEs published right after what the
				 * kernel consumed: the next doorbell eats them. */
				for (int i = 0; i < 256; i++)
					w[64 + i] = chance(r, 50) ? rnd(r, 64) :
								    rnd_u32(r);
				__atomic_store_n(&w[0], w[16] + 1 + rnd(r, 3),
						 __ATOMIC_RELEASE);
				F.scribbles += 257;
			} else {
				for (int i = 0; i < 4; i++)
					w[chance(r, 50) ? rnd(r, 64) :
							  rnd(r, (uint32_t)words)] =
						rnd_u32(r);
				F.scribbles += 4;
			}
			F.ok_ret++;
			return;
		}
		munmap(s->map[slot], s->maplen[slot]);
		s->map[slot] = NULL;
		F.ok_ret++;
		return;
	}
	if (s->noff && chance(r, 75)) {
		uint32_t i = rnd(r, s->noff);

		off = s->off[i];
		len = s->offsize[i];
		if (chance(r, 20))
			len = 4096 * (1 + rnd(r, 8));
		if (chance(r, 10))
			off += 4096 * rnd(r, 4);
	} else {
		off = 4096 * (uint64_t)(chance(r, 80) ? rnd(r, 64) : rnd_u32(r));
		len = 4096 * (1 + rnd(r, 4));
	}
	if (chance(r, 5))
		flags = MAP_PRIVATE;
	if (chance(r, 5))
		prot = PROT_READ;
	if (chance(r, 2))
		prot |= PROT_EXEC;
	p = mmap(NULL, len, prot, flags, s->fd, (off_t)off);
	if (p == MAP_FAILED) {
		fuzz_ret("mmap", errno);
		return;
	}
	F.ok_ret++;
	if (prot & PROT_WRITE) {
		s->map[slot] = p;
		s->maplen[slot] = len;
	} else {
		volatile uint8_t x = ((volatile uint8_t *)p)[rnd(r, (uint32_t)len)];

		(void)x;
		munmap(p, len);
	}
}

int fuzz_raw(uint64_t seed, uint64_t iters)
{
	struct rstate s;
	int floor_fd;

	memset(&s, 0, sizeof(s));
	s.r.s = seed;
	s.scratch = mmap(NULL, SCRATCH + 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* 128 KiB, then a guard page that stops MRs running off the end. */
	s.data = mmap(NULL, 2 * 65536 + 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s.scratch == MAP_FAILED || s.data == MAP_FAILED ||
	    mprotect(s.scratch + SCRATCH, 4096, PROT_NONE) ||
	    mprotect(s.data + 2 * 65536, 4096, PROT_NONE)) {
		fuzz_fail("raw: set-up failed");
		return -1;
	}
	/* Every file number from here up is one the raw context made. */
	floor_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (floor_fd < 0) {
		fuzz_fail("raw: open /dev/null: %s", strerror(errno));
		return -1;
	}
	close(floor_fd);

	fuzz_note("raw", 0, "open");
	open_ctx(&s);
	for (s.iter = 0; s.iter < iters && s.fd >= 0; s.iter++) {
		uint32_t w = rnd(&s.r, 100);

		F.iters++;
		fuzz_note("raw", s.iter, "command");
		if (w < 6)
			cmd_alloc_pd(&s);
		else if (w < 14)
			cmd_create_cq(&s);
		else if (w < 17)
			cmd_resize_cq(&s);
		else if (w < 27)
			cmd_create_qp(&s);
		else if (w < 31)
			cmd_create_srq(&s);
		else if (w < 35)
			cmd_reg_mr(&s);
		else if (w < 38)
			cmd_create_ah(&s);
		else if (w < 43)
			cmd_modify_qp(&s);
		else if (w < 46)
			cmd_connect(&s);
		else if (w < 54)
			cmd_destroy(&s);
		else if (w < 59)
			cmd_post(&s);
		else if (w < 64)
			cmd_doorbell(&s);
		else if (w < 68)
			cmd_misc(&s);
		else if (w < 76)
			cmd_random(&s);
		else if (w < 86)
			cmd_ioctl(&s);
		else
			cmd_mmap(&s);

		if (s.iter % 2000 == 1999 || rnd(&s.r, 4000) == 0) {
			fuzz_note("raw", s.iter, "close and reopen");
			close_ctx(&s, floor_fd);
			open_ctx(&s);
		}
	}
	fuzz_note("raw", s.iter, "close");
	if (s.fd >= 0)
		close_ctx(&s, floor_fd);
	munmap(s.scratch, SCRATCH + 4096);
	munmap(s.data, 2 * 65536 + 4096);
	return 0;
}
