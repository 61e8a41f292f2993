// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: verbs the data-path tests do not cover yet.  One TAP line
 * per check; cases (--only NAME runs one):
 *
 *   cq-resize   ibv_resize_cq with unpolled CQEs: bigger, smaller but still
 *               holding them, below the pending count (must fail), and while
 *               CQEs are arriving; every CQE arrives once, in order.
 *   srq-limit   an armed SRQ limit raises IBV_EVENT_SRQ_LIMIT_REACHED once
 *               fewer than LIMIT WQEs remain (not before), and disarms.
 *   cq-events   completion channel: a solicited-only arm ignores an
 *               unsolicited SEND, fires on a solicited one, fires once;
 *               a "next" arm fires on any CQE.
 *   memlock     a child without CAP_IPC_LOCK and RLIMIT_MEMLOCK 1 MiB: the
 *               limit is enforced by memory registration, a refused
 *               registration pins nothing, deregistering gives it back.
 *   limits      query_device limits are enforced: CQ, QP and SRQ sizes,
 *               SGEs and inline data one above the limit are refused.
 *   cq-timestamps  an extended CQ with completion timestamps: each CQE's
 *               free-running stamp lies between the clock read before the
 *               post and after the poll (ibv_query_rt_values_ex gives the
 *               same clock), its wall-clock stamp likewise against
 *               CLOCK_REALTIME, and they never go backwards.
 *
 * --fastpath is not a test but the work load 140-verbs-extra.sh runs under
 * strace: 1000 receives (one post_recv each), 1000 sends in 100 post_send
 * calls of 10, polling 2000 completions, each phase between two markers,
 * close(-1001) ... close(-1004), so the script can count write()/ioctl() per phase.
 *
 * Usage: verbs_extra [-d DEV] [-g GID_INDEX] [--only CASE] [--fastpath]
 */
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../unit/tap.h"
#include "vutil.h"

#define TMO 5000		/* ms to wait for anything that must come */
#define QUIET_MS 300		/* ms to wait for something that must not */
#define BUFSZ (64 * 1024)
#define MSG 64			/* bytes per SEND */
#define TBR_MAX_INLINE 512	/* kmod/limits.h (tbrdma only) */

static struct vctx V;
static struct conn CN;
static const char *devname = "tbrlo0";

/* Two RC QPs on one PD: A sends (CQ sa), B receives (CQ rb, or its SRQ). */
struct pair {
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_cq *sa, *rb;
	struct ibv_qp *a, *b;
	struct ibv_srq *srq;
	struct ibv_comp_channel *ch;
};

static struct ibv_qp *mk_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			    struct ibv_srq *srq, int wr)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = srq ? 0 : wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static void pair_free(struct pair *p)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
	if (p->srq)
		ibv_destroy_srq(p->srq);
	if (p->sa)
		ibv_destroy_cq(p->sa);
	if (p->rb)
		ibv_destroy_cq(p->rb);
	if (p->ch)
		ibv_destroy_comp_channel(p->ch);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/* CQ sizes CQA/CQB, queue depth WR; SRQ_WR > 0 puts B on an SRQ; CHANNEL
 * gives B's CQ a completion channel.  Bails out when the set-up fails. */
static void pair_new(struct pair *p, int cqa, int cqb, int wr, int srq_wr,
		     int channel)
{
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->buf = aligned_alloc(4096, BUFSZ);
	p->pd = ibv_alloc_pd(V.ctx);
	if (!p->buf || !p->pd)
		bail_out("alloc pd/buffer: %s", strerror(errno));
	memset(p->buf, 0x5a, BUFSZ);
	p->mr = ibv_reg_mr(p->pd, p->buf, BUFSZ, CN.access);
	if (channel && !(p->ch = ibv_create_comp_channel(V.ctx)))
		bail_out("ibv_create_comp_channel: %s", strerror(errno));
	p->sa = ibv_create_cq(V.ctx, cqa, NULL, NULL, 0);
	p->rb = ibv_create_cq(V.ctx, cqb, NULL, p->ch, 0);
	if (!p->mr || !p->sa || !p->rb)
		bail_out("reg_mr/create_cq: %s", strerror(errno));
	if (srq_wr) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = srq_wr, .max_sge = 1 },
		};

		p->srq = ibv_create_srq(p->pd, &sa);
		if (!p->srq)
			bail_out("ibv_create_srq(%d): %s", srq_wr,
				 strerror(errno));
	}
	p->a = mk_qp(p->pd, p->sa, NULL, wr);
	p->b = mk_qp(p->pd, p->rb, p->srq, wr);
	if (!p->a || !p->b)
		bail_out("ibv_create_qp: %s", strerror(errno));
	err = qp_connect(p->a, &V, p->b->qp_num, &CN);
	if (!err)
		err = qp_connect(p->b, &V, p->a->qp_num, &CN);
	if (err)
		bail_out("qp_connect: %s", strerror(err));
}

static int recv_wr(struct pair *p, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)p->buf + BUFSZ / 2 + (id % 256) * MSG,
		.length = MSG, .lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return p->srq ? ibv_post_srq_recv(p->srq, &wr, &bad) :
			ibv_post_recv(p->b, &wr, &bad);
}

static int post_recvs(struct pair *p, uint64_t first, int n)
{
	for (int i = 0; i < n; i++) {
		int err = recv_wr(p, first + i);

		if (err) {
			diag("post_recv %d: %s", i, strerror(err));
			return err;
		}
	}
	return 0;
}

/* N chained signalled SENDs of MSG bytes in one post_send call. */
static int post_sends(struct pair *p, uint64_t first, int n, int flags)
{
	struct ibv_sge sge[16];
	struct ibv_send_wr wr[16], *bad;
	int err;

	if (n > 16)
		return EINVAL;
	for (int i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)p->buf + i * MSG,
					   .length = MSG, .lkey = p->mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = first + i, .sg_list = &sge[i], .num_sge = 1,
			.opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED | flags,
			.next = i + 1 < n ? &wr[i + 1] : NULL,
		};
	}
	err = ibv_post_send(p->a, wr, &bad);
	if (err)
		diag("post_send: %s", strerror(err));
	return err;
}

static int post_many_sends(struct pair *p, uint64_t first, int n)
{
	for (int i = 0; i < n; i += 16) {
		int err = post_sends(p, first + i, n - i < 16 ? n - i : 16, 0);

		if (err)
			return err;
	}
	return 0;
}

/* Poll N CQEs with wr_id FIRST, FIRST+1, ...: all successful, opcode OPC.
 * Returns how many arrived in order before the first surprise. */
static int poll_seq(struct ibv_cq *cq, uint64_t first, int n,
		    enum ibv_wc_opcode opc)
{
	struct ibv_wc wc;

	for (int i = 0; i < n; i++) {
		int r = poll_wc(cq, &wc, TMO);

		if (r != 1) {
			diag("CQE %d of %d (wr_id %llu): %s", i, n,
			     (unsigned long long)(first + i),
			     r ? "poll error" : "none within 5 s");
			return i;
		}
		if (wc.wr_id != first + i || wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != opc) {
			diag("CQE %d: wr_id %llu status %s opcode %d, expected wr_id %llu SUCCESS opcode %d",
			     i, (unsigned long long)wc.wr_id,
			     ibv_wc_status_str(wc.status), wc.opcode,
			     (unsigned long long)(first + i), opc);
			return i;
		}
	}
	return n;
}

/* 1 when CQ has no CQE right now (none lost, none duplicated). */
static int cq_empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int r = ibv_poll_cq(cq, 1, &wc);

	if (r)
		diag("unexpected CQE: %d, wr_id %llu", r,
		     r > 0 ? (unsigned long long)wc.wr_id : 0ULL);
	return r == 0;
}

/* --- cq-resize ---------------------------------------------------------- */

static void case_cq_resize(void)
{
	struct pair p;
	const int N = 40;
	int err, old;

	pair_new(&p, 64, 64, 64, 0, 0);
	ok(!post_recvs(&p, 1000, N) && !post_many_sends(&p, 0, N),
	   "cq-resize: posted %d receives and %d signalled sends", N, N);
	/* The responder completes a receive before the requester sees the
	 * ACK: once A's sends are complete, B's CQ holds all N receives. */
	is_int(poll_seq(p.sa, 0, N, IBV_WC_SEND), N,
	       "cq-resize: %d send CQEs in order", N);

	old = p.rb->cqe;
	err = ibv_resize_cq(p.rb, 16);
	ok(err != 0, "cq-resize: resize to 16 with %d CQEs pending refused (%s)",
	   N, err ? strerror(err) : "accepted");
	is_int(p.rb->cqe, old, "cq-resize: refused resize kept cqe %d", old);

	err = ibv_resize_cq(p.rb, 256);
	ok(!err && p.rb->cqe >= 256,
	   "cq-resize: grow to 256 with %d pending (err %d, cqe %d)", N, err,
	   p.rb->cqe);
	is_int(poll_seq(p.rb, 1000, 10, IBV_WC_RECV), 10,
	       "cq-resize: first 10 receive CQEs in order after growing");

	old = p.rb->cqe;
	err = ibv_resize_cq(p.rb, N - 10 + 2);
	ok(!err && p.rb->cqe >= N - 10 && p.rb->cqe < old,
	   "cq-resize: shrink to %d with %d pending (err %d, cqe %d -> %d)",
	   N - 10 + 2, N - 10, err, old, p.rb->cqe);
	is_int(poll_seq(p.rb, 1010, N - 10, IBV_WC_RECV), N - 10,
	       "cq-resize: remaining %d receive CQEs in order after shrinking",
	       N - 10);
	ok(cq_empty(p.rb), "cq-resize: no CQE lost or duplicated");

	/* The resized ring keeps working for new CQEs. */
	ok(!post_recvs(&p, 2000, 20) && !post_many_sends(&p, 100, 20),
	   "cq-resize: 20 more messages after resizing");
	is_int(poll_seq(p.sa, 100, 20, IBV_WC_SEND), 20,
	       "cq-resize: their send CQEs");
	is_int(poll_seq(p.rb, 2000, 20, IBV_WC_RECV), 20,
	       "cq-resize: their receive CQEs, in order");

	/* Resize both CQs while CQEs are arriving (M fits every size used:
	 * B's CQ has 32 slots now, and overflowing it would be an overrun). */
	const int M = 24;

	err = post_recvs(&p, 3000, M) || post_many_sends(&p, 200, M);
	if (!err)
		err = ibv_resize_cq(p.rb, 128);
	if (!err)
		err = ibv_resize_cq(p.sa, 128);
	if (!err)
		err = ibv_resize_cq(p.rb, 32);
	if (!err)
		err = ibv_resize_cq(p.sa, 32);
	ok(!err, "cq-resize: grow/shrink both CQs with %d messages in flight (%s)",
	   M, err ? strerror(err) : "ok");
	is_int(poll_seq(p.sa, 200, M, IBV_WC_SEND), M,
	       "cq-resize: in-flight send CQEs all there, in order");
	is_int(poll_seq(p.rb, 3000, M, IBV_WC_RECV), M,
	       "cq-resize: in-flight receive CQEs all there, in order");
	ok(cq_empty(p.rb) && cq_empty(p.sa),
	   "cq-resize: nothing extra after the in-flight resize");
	pair_free(&p);
}

/* --- srq-limit ---------------------------------------------------------- */

/* 1 when an async event is ready within MS, 0 if not, -1 on error. */
static int async_ready(int ms)
{
	struct pollfd pf = { .fd = V.ctx->async_fd, .events = POLLIN };
	int r = poll(&pf, 1, ms);

	return r < 0 ? -1 : r > 0;
}

static void case_srq_limit(void)
{
	const int W = 16, L = 4;
	struct ibv_srq_attr sattr = { .srq_limit = L };
	struct ibv_async_event ev;
	struct pair p;
	int early = -1, fired = 0, r;

	pair_new(&p, 64, 64, 64, W, 0);
	ok(!post_recvs(&p, 0, W), "srq-limit: %d receives posted to an SRQ of %d",
	   W, W);
	ok(!ibv_modify_srq(p.srq, &sattr, IBV_SRQ_LIMIT),
	   "srq-limit: armed with limit %d", L);
	memset(&sattr, 0, sizeof(sattr));
	r = ibv_query_srq(p.srq, &sattr);
	ok(!r && sattr.srq_limit == (unsigned)L,
	   "srq-limit: query_srq shows limit %u (want %d)", sattr.srq_limit, L);

	/* Consume one WQE at a time; "left" WQEs remain afterwards. */
	for (int i = 0; i < W - L + 1; i++) {
		int left = W - 1 - i;

		if (post_sends(&p, i, 1, 0) ||
		    poll_seq(p.sa, i, 1, IBV_WC_SEND) != 1 ||
		    poll_seq(p.rb, i, 1, IBV_WC_RECV) != 1) {
			diag("SEND %d failed", i);
			break;
		}
		if (left >= L && async_ready(left == L ? QUIET_MS : 0)) {
			early = left;
			break;
		}
		if (left == L - 1)
			fired = async_ready(TMO) == 1;
	}
	ok(early < 0, "srq-limit: no event while >= %d WQEs remain%s", L,
	   early < 0 ? "" : " (one came early)");
	if (early >= 0)
		diag("event pending with %d WQEs left", early);
	ok(fired, "srq-limit: an async event once %d WQEs remain", L - 1);
	if (fired || early >= 0) {
		if (ibv_get_async_event(V.ctx, &ev)) {
			ok(0, "srq-limit: ibv_get_async_event: %s",
			   strerror(errno));
		} else {
			ok(ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
			   ev.element.srq == p.srq,
			   "srq-limit: it is SRQ_LIMIT_REACHED for our SRQ (%s)",
			   ibv_event_type_str(ev.event_type));
			ibv_ack_async_event(&ev);
		}
	} else {
		skip(1, "no event to check");
	}
	sattr.srq_limit = 99;
	r = ibv_query_srq(p.srq, &sattr);
	ok(!r && sattr.srq_limit == 0,
	   "srq-limit: query_srq shows the limit disarmed (srq_limit %u)",
	   sattr.srq_limit);

	/* Disarmed: draining the rest raises nothing more. */
	for (int i = W - L + 1; i < W; i++)
		if (post_sends(&p, i, 1, 0) ||
		    poll_seq(p.sa, i, 1, IBV_WC_SEND) != 1 ||
		    poll_seq(p.rb, i, 1, IBV_WC_RECV) != 1)
			break;
	ok(async_ready(QUIET_MS) == 0,
	   "srq-limit: no second event while disarmed (SRQ drained to 0)");
	pair_free(&p);
}

/* --- cq-events ---------------------------------------------------------- */

/* 1 when a completion event is ready within MS. */
static int chan_ready(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pf = { .fd = ch->fd, .events = POLLIN };

	return poll(&pf, 1, ms) > 0;
}

/* Take one completion event; 1 if it is for CQ. */
static int take_cq_event(struct ibv_comp_channel *ch, struct ibv_cq *cq)
{
	struct ibv_cq *ecq;
	void *ectx;

	if (ibv_get_cq_event(ch, &ecq, &ectx)) {
		diag("ibv_get_cq_event: %s", strerror(errno));
		return 0;
	}
	ibv_ack_cq_events(ecq, 1);
	return ecq == cq;
}

/* One SEND (with FLAGS) A -> B, both completions polled. */
static int one_send(struct pair *p, uint64_t id, int flags)
{
	return !post_sends(p, id, 1, flags) &&
	       poll_seq(p->sa, id, 1, IBV_WC_SEND) == 1 &&
	       poll_seq(p->rb, id, 1, IBV_WC_RECV) == 1;
}

static void case_cq_events(void)
{
	struct pair p;
	int r;

	pair_new(&p, 16, 16, 16, 0, 1);
	ok(!post_recvs(&p, 0, 8), "cq-events: receives posted");

	r = ibv_req_notify_cq(p.rb, 1);
	ok(!r, "cq-events: req_notify_cq(solicited_only) (%d)", r);
	ok(one_send(&p, 0, 0), "cq-events: unsolicited SEND completes");
	ok(!chan_ready(p.ch, QUIET_MS),
	   "cq-events: ... and does not wake the solicited-only arm");

	ok(one_send(&p, 1, IBV_SEND_SOLICITED),
	   "cq-events: solicited SEND completes");
	r = chan_ready(p.ch, TMO);
	ok(r, "cq-events: ... and wakes the channel");
	ok(r && take_cq_event(p.ch, p.rb),
	   "cq-events: ibv_get_cq_event names our CQ, acked");

	ok(one_send(&p, 2, IBV_SEND_SOLICITED),
	   "cq-events: another solicited SEND, not re-armed");
	ok(!chan_ready(p.ch, QUIET_MS), "cq-events: ... no event (arm fired once)");

	r = ibv_req_notify_cq(p.rb, 0);
	ok(!r, "cq-events: req_notify_cq(next) (%d)", r);
	ok(one_send(&p, 3, 0), "cq-events: unsolicited SEND completes");
	r = chan_ready(p.ch, TMO);
	ok(r && take_cq_event(p.ch, p.rb),
	   "cq-events: ... and wakes a 'next' arm, event acked");

	/* An arm survives a resize of the CQ. */
	r = ibv_req_notify_cq(p.rb, 0);
	if (!r)
		r = ibv_resize_cq(p.rb, 64);
	ok(!r, "cq-events: armed 'next', then resized to 64 (%d)", r);
	ok(one_send(&p, 4, 0), "cq-events: unsolicited SEND completes");
	r = chan_ready(p.ch, TMO);
	ok(r && take_cq_event(p.ch, p.rb),
	   "cq-events: ... and wakes the arm made before the resize");
	pair_free(&p);
}

/* --- memlock ------------------------------------------------------------ */

/* The child reports its checks as records through a pipe. */
struct rec {
	int pass;
	char msg[200];
};
static int rec_fd = -1;

static __attribute__((format(printf, 2, 3))) void
crec(int pass, const char *fmt, ...)
{
	struct rec r = { .pass = pass };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	if (write(rec_fd, &r, sizeof(r)) != sizeof(r))
		_exit(3);
}

static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].inheritable &= ~(1U << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &h, d))
		return -1;
	if (syscall(SYS_capget, &h, d))
		return -1;
	return d[CAP_IPC_LOCK / 32].effective & (1U << (CAP_IPC_LOCK % 32)) ?
		       -1 : 0;
}

static const char *mr_err(struct ibv_mr *mr, int e)
{
	return mr ? "ok" : e == ENOMEM ? "ENOMEM" : e == EPERM ? "EPERM" :
			   e == EAGAIN ? "EAGAIN" : strerror(e);
}

static void memlock_child(void)
{
	const size_t K = 1024, LIM = 1024 * K;
	struct rlimit rl = { .rlim_cur = LIM, .rlim_max = LIM };
	struct ibv_mr *m1, *m2, *m3, *m4, *m5;
	struct ibv_pd *pd;
	uint8_t *buf;
	int e;

	crec(!setrlimit(RLIMIT_MEMLOCK, &rl), "memlock: RLIMIT_MEMLOCK set to 1 MiB");
	crec(!drop_ipc_lock(), "memlock: CAP_IPC_LOCK dropped");
	buf = aligned_alloc(4096, 8 * LIM);
	pd = ibv_alloc_pd(V.ctx);
	if (!buf || !pd) {
		crec(0, "memlock: alloc_pd/buffer: %s", strerror(errno));
		_exit(1);
	}
	memset(buf, 1, 8 * LIM);
	m1 = ibv_reg_mr(pd, buf, 512 * K, IBV_ACCESS_LOCAL_WRITE);
	crec(m1 != NULL, "memlock: register 512 KiB (%s)", mr_err(m1, errno));
	m2 = ibv_reg_mr(pd, buf + 2 * LIM, 4 * LIM, IBV_ACCESS_LOCAL_WRITE);
	e = errno;
	crec(!m2 && (e == ENOMEM || e == EPERM || e == EAGAIN),
	     "memlock: register 4 MiB more refused: errno %s", mr_err(m2, e));
	m3 = ibv_reg_mr(pd, buf + LIM, 512 * K, IBV_ACCESS_LOCAL_WRITE);
	crec(m3 != NULL,
	     "memlock: the refused registration pinned nothing: 512 KiB more (= the limit) works (%s)",
	     mr_err(m3, errno));
	m5 = ibv_reg_mr(pd, buf + 6 * LIM, 4096, IBV_ACCESS_LOCAL_WRITE);
	crec(!m5, "memlock: one page over the limit refused (%s)",
	     mr_err(m5, errno));
	crec((!m1 || !ibv_dereg_mr(m1)) && (!m3 || !ibv_dereg_mr(m3)),
	     "memlock: deregistered both");
	m4 = ibv_reg_mr(pd, buf + 2 * LIM, LIM, IBV_ACCESS_LOCAL_WRITE);
	crec(m4 != NULL,
	     "memlock: after deregistering, 1 MiB (the whole limit) registers again (%s)",
	     mr_err(m4, errno));
	if (m2)
		ibv_dereg_mr(m2);
	if (m4)
		ibv_dereg_mr(m4);
	if (m5)
		ibv_dereg_mr(m5);
	ibv_dealloc_pd(pd);
	_exit(0);
}

static void case_memlock(void)
{
	int fd[2], status = 0;
	struct rec r;
	pid_t pid;

	if (pipe(fd))
		bail_out("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (!pid) {
		close(fd[0]);
		rec_fd = fd[1];
		/* Its own context (the parent's stays open, unused). */
		if (vctx_open(&V, devname, V.gid_index))
			crec(0, "memlock: open %s in the child", devname);
		else
			memlock_child();
		_exit(1);
	}
	close(fd[1]);
	while (read(fd[0], &r, sizeof(r)) == sizeof(r))
		ok(r.pass, "%s", r.msg);
	close(fd[0]);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "memlock: child finished cleanly (status 0x%x)", status);
}

/* --- limits ------------------------------------------------------------- */

static int qp_refused(struct ibv_pd *pd, struct ibv_cq *cq,
		      struct ibv_qp_cap cap, const char *what)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .cap = cap,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	int e = errno;

	if (qp) {
		diag("%s: created (cap wr %u/%u sge %u/%u inline %u)", what,
		     ia.cap.max_send_wr, ia.cap.max_recv_wr,
		     ia.cap.max_send_sge, ia.cap.max_recv_sge,
		     ia.cap.max_inline_data);
		ibv_destroy_qp(qp);
		return 0;
	}
	diag("%s: %s", what, strerror(e));
	return 1;
}

static int qp_accepted(struct ibv_pd *pd, struct ibv_cq *cq,
		       struct ibv_qp_cap cap, struct ibv_qp_cap *got)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .cap = cap,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp) {
		diag("create_qp: %s", strerror(errno));
		return 0;
	}
	*got = ia.cap;
	ibv_destroy_qp(qp);
	return 1;
}

static void case_limits(void)
{
	const struct ibv_device_attr *a = &V.attr;
	const struct ibv_qp_cap base = { .max_send_wr = 4, .max_recv_wr = 4,
					 .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp_cap c, got;
	struct ibv_pd *pd = ibv_alloc_pd(V.ctx);
	struct ibv_cq *cq = ibv_create_cq(V.ctx, 16, NULL, NULL, 0), *big;
	struct ibv_srq *srq;

	if (!pd || !cq)
		bail_out("limits: alloc pd/cq: %s", strerror(errno));
	diag("limits: max_cqe %d max_qp_wr %d max_sge %d max_srq_wr %d max_srq_sge %d",
	     a->max_cqe, a->max_qp_wr, a->max_sge, a->max_srq_wr,
	     a->max_srq_sge);

	big = ibv_create_cq(V.ctx, a->max_cqe + 1, NULL, NULL, 0);
	ok(!big, "limits: CQ with max_cqe+1 = %d entries refused (%s)",
	   a->max_cqe + 1, big ? "created" : strerror(errno));
	if (big)
		ibv_destroy_cq(big);
	big = ibv_create_cq(V.ctx, a->max_cqe, NULL, NULL, 0);
	ok(big && big->cqe >= a->max_cqe, "limits: CQ with max_cqe entries works (%s)",
	   big ? "ok" : strerror(errno));
	if (big)
		ibv_destroy_cq(big);
	ok(ibv_resize_cq(cq, a->max_cqe + 1) != 0,
	   "limits: resize_cq to max_cqe+1 refused");

	c = base, c.max_send_wr = a->max_qp_wr + 1;
	ok(qp_refused(pd, cq, c, "max_send_wr"),
	   "limits: QP with max_send_wr = max_qp_wr+1 refused");
	c = base, c.max_recv_wr = a->max_qp_wr + 1;
	ok(qp_refused(pd, cq, c, "max_recv_wr"),
	   "limits: QP with max_recv_wr = max_qp_wr+1 refused");
	c = base, c.max_send_sge = a->max_sge + 1;
	ok(qp_refused(pd, cq, c, "max_send_sge"),
	   "limits: QP with max_send_sge = max_sge+1 refused");
	c = base, c.max_recv_sge = a->max_sge + 1;
	ok(qp_refused(pd, cq, c, "max_recv_sge"),
	   "limits: QP with max_recv_sge = max_sge+1 refused");
	c = base, c.max_inline_data = 1 << 20;
	ok(qp_refused(pd, cq, c, "max_inline_data 1 MiB"),
	   "limits: QP with 1 MiB of inline data refused");
	/* At the limit it must work, if that is a sane amount of memory
	 * (rdma_rxe claims 2^20 WRs and fails the allocation noisily). */
	if (a->max_qp_wr <= 65536) {
		c = base, c.max_send_wr = a->max_qp_wr, c.max_send_sge = a->max_sge;
		ok(qp_accepted(pd, cq, c, &got) &&
		   got.max_send_wr >= (unsigned)a->max_qp_wr,
		   "limits: QP with max_send_wr = max_qp_wr and max_sge SGEs works");
	} else {
		skip(1, "max_qp_wr %d too big to allocate", a->max_qp_wr);
	}
	if (!strncmp(devname, "tbr", 3)) {
		c = base, c.max_inline_data = TBR_MAX_INLINE;
		ok(qp_accepted(pd, cq, c, &got) &&
		   got.max_inline_data >= TBR_MAX_INLINE,
		   "limits: tbrdma QP with %d bytes inline works (got %u)",
		   TBR_MAX_INLINE, got.max_inline_data);
		c = base, c.max_inline_data = TBR_MAX_INLINE + 1;
		ok(qp_refused(pd, cq, c, "max_inline_data"),
		   "limits: tbrdma QP with %d bytes inline refused",
		   TBR_MAX_INLINE + 1);
	} else {
		skip(2, "inline limit of %s unknown", devname);
	}

	{
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = a->max_srq_wr + 1, .max_sge = 1 },
		};

		srq = ibv_create_srq(pd, &sa);
		ok(!srq, "limits: SRQ with max_srq_wr+1 WQEs refused");
		if (srq)
			ibv_destroy_srq(srq);
		sa.attr.max_wr = 16;
		sa.attr.max_sge = a->max_srq_sge + 1;
		srq = ibv_create_srq(pd, &sa);
		ok(!srq, "limits: SRQ with max_srq_sge+1 SGEs refused");
		if (srq)
			ibv_destroy_srq(srq);
		sa.attr.max_wr = 16;
		sa.attr.max_sge = 1;
		srq = ibv_create_srq(pd, &sa);
		if (srq) {
			struct ibv_srq_attr lim = {
				.srq_limit = a->max_srq_wr + 1,
			};

			ok(ibv_modify_srq(srq, &lim, IBV_SRQ_LIMIT) != 0,
			   "limits: SRQ limit above its size refused");
			ibv_destroy_srq(srq);
		} else {
			ok(0, "limits: SRQ of 16: %s", strerror(errno));
		}
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* --- fastpath (run under strace by the selftest) ----------------------- */

/* close(-1001), close(-1002), ...: a line no library writes. */
static void marker(void)
{
	static int n;

	syscall(SYS_close, -1000 - ++n);
}

static int fastpath(void)
{
	enum { N = 1000, B = 10 };
	struct ibv_wc wc[32];
	int errs = 0, sends = 0, recvs = 0, bad = 0;
	uint64_t deadline;
	struct pair p;

	pair_new(&p, 2 * N, 2 * N, 1024, 0, 0);
	marker();		/* 1: post_recv phase */
	for (int i = 0; i < N; i++)
		errs += recv_wr(&p, i) != 0;
	marker();		/* 2: post_send phase */
	for (int i = 0; i < N; i += B)
		errs += post_sends(&p, i, B, 0) != 0;
	marker();		/* 3: poll phase */
	/* The clock only now and then: without a vDSO clock (TCG guests may
	 * use hpet) each reading is a system call of the test's own. */
	deadline = now_ms() + 60000;
	for (unsigned int spin = 1; sends < N || recvs < N; spin++) {
		if (!(spin % 65536) && now_ms() > deadline)
			break;
		struct ibv_cq *cq = sends < N ? p.sa : p.rb;
		int n = ibv_poll_cq(cq, 32, wc);

		if (n < 0) {
			bad++;
			break;
		}
		if (n)
			spin = 1;
		for (int i = 0; i < n; i++) {
			bad += wc[i].status != IBV_WC_SUCCESS;
			if (cq == p.sa)
				sends++;
			else
				recvs++;
		}
	}
	marker();		/* 4: end */
	plan(2);
	ok(!errs, "fastpath: %d post_recv + %d post_send calls succeeded",
	   N, N / B);
	ok(sends == N && recvs == N && !bad,
	   "fastpath: %d send and %d receive CQEs, %d bad (want %d each)",
	   sends, recvs, bad, N);
	pair_free(&p);
	vctx_close(&V);
	return done();
}

/* --- cq-timestamps ------------------------------------------------------ */

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rt_values_ns(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(V.ctx, &v))
		return 0;
	return (uint64_t)v.raw_clock.tv_sec * 1000000000ull +
	       (uint64_t)v.raw_clock.tv_nsec;
}

#define TS_ROUNDS 16
/* The wall clock is derived from the monotonic stamp at poll time: allow
 * for an NTP step between the two reads of the clocks. */
#define WALL_SLACK_NS 50000000ull

static void case_cq_timestamps(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct ibv_device_attr_ex da = {};
	uint64_t last = 0, got = 0, in_window = 0, wall_ok = 0;
	int backwards = 0, bad = 0, err;
	struct ibv_cq_ex *cqx;
	struct pair p;

	err = ibv_query_device_ex(V.ctx, NULL, &da);
	ok(!err && da.completion_timestamp_mask && da.hca_core_clock == 1000000,
	   "cq-timestamps: device offers them (mask %#llx, core clock %llu kHz)",
	   (unsigned long long)da.completion_timestamp_mask,
	   (unsigned long long)da.hca_core_clock);
	cqx = ibv_create_cq_ex(V.ctx, &ca);
	ok(cqx != NULL, "cq-timestamps: ibv_create_cq_ex with both stamps (%s)",
	   cqx ? "ok" : strerror(errno));
	if (!cqx)
		return;
	/* A pair whose B end completes on the extended CQ. */
	pair_new(&p, 64, 64, 32, 0, 0);
	ibv_destroy_qp(p.b);
	p.b = mk_qp(p.pd, ibv_cq_ex_to_cq(cqx), NULL, 32);
	if (!p.b || qp_to_state(p.a, IBV_QPS_RESET) ||
	    qp_connect(p.a, &V, p.b->qp_num, &CN) ||
	    qp_connect(p.b, &V, p.a->qp_num, &CN))
		bail_out("cq-timestamps: QP on the extended CQ: %s",
			 strerror(errno));

	for (int i = 0; i < TS_ROUNDS; i++) {
		struct ibv_poll_cq_attr pa = {};
		uint64_t t0, w0, t1, w1, ts, wall;
		int tries = 0;

		t0 = clock_ns(CLOCK_MONOTONIC);
		w0 = clock_ns(CLOCK_REALTIME);
		if (post_recvs(&p, i, 1) || post_sends(&p, i, 1, 0) ||
		    poll_seq(p.sa, i, 1, IBV_WC_SEND) != 1) {
			bad++;
			break;
		}
		while ((err = ibv_start_poll(cqx, &pa)) == ENOENT &&
		       tries++ < TMO * 100)
			usleep(10);
		if (err) {
			bad++;
			break;
		}
		ts = ibv_wc_read_completion_ts(cqx);
		wall = ibv_wc_read_completion_wallclock_ns(cqx);
		bad += cqx->status != IBV_WC_SUCCESS ||
		       ibv_wc_read_byte_len(cqx) != MSG;
		ibv_end_poll(cqx);
		t1 = rt_values_ns();
		w1 = clock_ns(CLOCK_REALTIME);
		got++;
		in_window += ts >= t0 && ts <= t1;
		wall_ok += wall + WALL_SLACK_NS >= w0 &&
			   wall <= w1 + WALL_SLACK_NS;
		backwards += ts < last;
		last = ts;
	}
	ok(got == TS_ROUNDS && !bad, "cq-timestamps: %llu of %d receives "
	   "completed on the extended CQ, %d bad", (unsigned long long)got,
	   TS_ROUNDS, bad);
	ok(in_window == got, "cq-timestamps: %llu of %llu stamps between "
	   "CLOCK_MONOTONIC before the post and ibv_query_rt_values_ex after "
	   "the poll", (unsigned long long)in_window, (unsigned long long)got);
	ok(wall_ok == got, "cq-timestamps: %llu of %llu wall-clock stamps "
	   "within CLOCK_REALTIME around them", (unsigned long long)wall_ok,
	   (unsigned long long)got);
	ok(!backwards, "cq-timestamps: stamps never go backwards (%d did)",
	   backwards);
	pair_free(&p);		/* the QP before its CQ */
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
}

/* --- main --------------------------------------------------------------- */

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "cq-resize", case_cq_resize },
	{ "srq-limit", case_srq_limit },
	{ "cq-events", case_cq_events },
	{ "memlock", case_memlock },
	{ "limits", case_limits },
	{ "cq-timestamps", case_cq_timestamps },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "only", required_argument, NULL, 'o' },
		{ "fastpath", no_argument, NULL, 'f' },
		{}
	};
	const char *only = NULL;
	int gid = 1, fast = 0, c, ran = 0;

	while ((c = getopt_long(argc, argv, "d:g:", opts, NULL)) != -1) {
		switch (c) {
		case 'd': devname = optarg; break;
		case 'g': gid = atoi(optarg); break;
		case 'o': only = optarg; break;
		case 'f': fast = 1; break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g GID] [--only CASE] [--fastpath]\n",
				argv[0]);
			return 2;
		}
	}
	if (vctx_open(&V, devname, gid))
		bail_out("cannot open %s", devname);
	conn_defaults(&CN, &V);
	if (fast)
		return fastpath();

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (only && strcmp(only, cases[i].name))
			continue;
		diag("== %s", cases[i].name);
		cases[i].fn();
		ran++;
	}
	if (!ran)
		bail_out("no case named %s", only);
	vctx_close(&V);
	return done();
}
