// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: memory windows (IB spec 10.6.7).  A requester QP (PD rpd on
 * DEV) talks to two responder QPs (both in PD tpd on DEV2, or on DEV in
 * loopback) whose buffer is an MR with MW_BIND and local write only: every
 * remote access that works, works through a window.  Each case checks the
 * completion status and the memory (a canary outside the window, the bytes
 * inside), and each refusal has a control with the right key first.
 *
 *   caps          MEM_WINDOW, MEM_WINDOW_TYPE_2B, max_mw; alloc/dealloc
 *   type1         ibv_bind_mw: WRITE/READ inside, not past the end, not
 *                 with the MR's own rkey, READ-only window refuses WRITE
 *   type1-rebind  a rebind changes the rkey (the old one dies); a
 *                 zero-length bind unbinds; any QP of the PD may use it
 *   type2         IBV_WR_BIND_MW (the new rkey from ibv_inc_rkey): WRITE,
 *                 READ, atomics; only through the QP it was bound through
 *   type2-inv     LOCAL_INV, a peer's SEND_WITH_INV (the receive reports
 *                 IBV_WC_WITH_INV and the rkey), dealloc: the rkey dies;
 *                 a FREE window can be bound again
 *   bind-errors   IBV_WC_MW_BIND_ERR for: an MR without MW_BIND, a range
 *                 outside the MR, a zero-length type 2 window, a type 2
 *                 window still bound, a window of another PD or a forged
 *                 window key, remote write on an MR without local write
 *   keys          a stale rkey (old low byte) and a window's rkey as an
 *                 lkey are refused; LOCAL_INV of a type 1 window fails
 *   dereg-busy    ibv_dereg_mr of an MR with a bound window: EBUSY; after
 *                 the window is gone it works
 *   wr-api        ibv_wr_bind_mw and ibv_wr_local_inv (extended QPs)
 *   exit-bound    a process exits with bound windows of both types: the
 *                 kernel cleans up (276-mw.sh compares the device's
 *                 objects before and after, the harness checks dmesg)
 *
 * Usage: mw [-d DEV] [-g GID] [--dev2 DEV --gid2 GID] [--only CASE,...]
 * Prints TAP; exits 0 only if every check passed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/tap.h"
#include "vutil.h"

#define TMO 5000
#define BUF (64 * 1024)
#define WOFF 4096		/* the window: tbuf[WOFF, WOFF + WLEN) */
#define WLEN 8192
#define CANARY 0xC5
#define PAT 0x5A
#define RW (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)
#define ALL (IBV_ACCESS_LOCAL_WRITE | RW | IBV_ACCESS_REMOTE_ATOMIC)

static struct vctx V1, V2s, *V2 = &V1;
static const char *dev1 = "tbrlo0", *dev2;
static int gid1 = 1, gid2 = 1;
static struct conn C1, C2;

/* Two requester QPs on V1, each connected to its responder QP on V2. */
struct ends {
	struct ibv_pd *rpd, *tpd;
	struct ibv_cq *rcq, *tcq;
	struct ibv_qp *rqp[2], *tqp[2];
	struct ibv_mr *lmr, *tmr;
	uint8_t *lbuf, *tbuf;
};

static struct ibv_qp *mkqp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static void ends_free(struct ends *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (e->rqp[i])
			ibv_destroy_qp(e->rqp[i]);
		if (e->tqp[i])
			ibv_destroy_qp(e->tqp[i]);
	}
	if (e->lmr)
		ibv_dereg_mr(e->lmr);
	if (e->tmr)
		ibv_dereg_mr(e->tmr);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->tcq)
		ibv_destroy_cq(e->tcq);
	if (e->rpd)
		ibv_dealloc_pd(e->rpd);
	if (e->tpd)
		ibv_dealloc_pd(e->tpd);
	free(e->lbuf);
	free(e->tbuf);
	memset(e, 0, sizeof(*e));
}

/* Everything connected; the responder's MR gets @tmr_access. */
static int ends_new(struct ends *e, int tmr_access)
{
	int i;

	memset(e, 0, sizeof(*e));
	if (posix_memalign((void **)&e->lbuf, 4096, BUF) ||
	    posix_memalign((void **)&e->tbuf, 4096, BUF))
		goto err;
	memset(e->lbuf, PAT, BUF);
	memset(e->tbuf, CANARY, BUF);
	e->rpd = ibv_alloc_pd(V1.ctx);
	e->tpd = ibv_alloc_pd(V2->ctx);
	e->rcq = ibv_create_cq(V1.ctx, 64, NULL, NULL, 0);
	e->tcq = ibv_create_cq(V2->ctx, 64, NULL, NULL, 0);
	if (!e->rpd || !e->tpd || !e->rcq || !e->tcq)
		goto err;
	e->lmr = ibv_reg_mr(e->rpd, e->lbuf, BUF, ALL);
	e->tmr = ibv_reg_mr(e->tpd, e->tbuf, BUF, tmr_access);
	if (!e->lmr || !e->tmr)
		goto err;
	for (i = 0; i < 2; i++) {
		e->rqp[i] = mkqp(e->rpd, e->rcq);
		e->tqp[i] = mkqp(e->tpd, e->tcq);
		if (!e->rqp[i] || !e->tqp[i])
			goto err;
		C1.access = ALL;
		C2.access = ALL;
		if (qp_connect(e->rqp[i], &V1, e->tqp[i]->qp_num, &C1) ||
		    qp_connect(e->tqp[i], V2, e->rqp[i]->qp_num, &C2))
			goto err;
	}
	return 0;
err:
	diag("setting up the QPs failed: %s", strerror(errno));
	ends_free(e);
	return -1;
}

/* One completion from @cq: its status, or -1 (none, or a poll error). */
static int wait_status(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct ibv_wc w;

	if (!wc)
		wc = &w;
	if (poll_wc(cq, wc, TMO) != 1) {
		diag("no completion within %d ms", TMO);
		return -1;
	}
	return wc->status;
}

/* ibv_bind_mw (type 1) on the responder's QP @i: the completion status. */
static int bind1(struct ends *e, int i, struct ibv_mw *mw, struct ibv_mr *mr,
		 size_t off, size_t len, int access)
{
	struct ibv_mw_bind b = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		/* No MR (an unbind): libibverbs wants address 0 too. */
		.bind_info = { .mr = mr,
			       .addr = mr ? (uintptr_t)e->tbuf + off : 0,
			       .length = len, .mw_access_flags = access },
	};
	struct ibv_wc wc;
	int ret = ibv_bind_mw(e->tqp[i], mw, &b);

	if (ret) {
		diag("ibv_bind_mw: %s", strerror(ret));
		return -1;
	}
	ret = wait_status(e->tcq, &wc);
	if (ret == IBV_WC_SUCCESS && (wc.opcode != IBV_WC_BIND_MW ||
				      wc.wr_id != 0xb1)) {
		diag("bind completion: opcode %d wr_id %#llx", wc.opcode,
		     (unsigned long long)wc.wr_id);
		return -1;
	}
	return ret;
}

/* IBV_WR_BIND_MW (type 2) on QP @i with rkey @*key (the next one). */
static int bind2(struct ends *e, int i, struct ibv_mw *mw, uint32_t *key,
		 struct ibv_mr *mr, size_t off, size_t len, int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 0xb2, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	int ret;

	*key = ibv_inc_rkey(*key);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = *key;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)e->tbuf + off, .length = len,
		.mw_access_flags = access,
	};
	ret = ibv_post_send(e->tqp[i], &wr, &bad);
	if (ret) {
		diag("post BIND_MW: %s", strerror(ret));
		return -1;
	}
	ret = wait_status(e->tcq, &wc);
	if (ret == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW) {
		diag("bind completion: opcode %d", wc.opcode);
		return -1;
	}
	return ret;
}

/* LOCAL_INV of @rkey on the responder's QP @i: the completion status. */
static int local_inv(struct ends *e, int i, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 0x11, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = rkey,
	}, *bad;
	struct ibv_wc wc;
	int ret;

	if (ibv_post_send(e->tqp[i], &wr, &bad))
		return -1;
	ret = wait_status(e->tcq, &wc);
	if (ret == IBV_WC_SUCCESS && wc.opcode != IBV_WC_LOCAL_INV) {
		diag("LOCAL_INV completion: opcode %d", wc.opcode);
		return -1;
	}
	return ret;
}

/*
 * An RDMA WRITE/READ (@len bytes at window offset @off, i.e. tbuf + off)
 * or an atomic from requester QP @i with @rkey: the requester's status.
 */
static int rdma(struct ends *e, int i, enum ibv_wr_opcode op, uint32_t rkey,
		size_t off, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)e->lbuf, .length = (uint32_t)len,
		.lkey = e->lmr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x77, .opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.sg_list = &sge, .num_sge = 1,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = (uintptr_t)e->tbuf + off;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
		sge.length = 8;
	} else {
		wr.wr.rdma.remote_addr = (uintptr_t)e->tbuf + off;
		wr.wr.rdma.rkey = rkey;
	}
	if (ibv_post_send(e->rqp[i], &wr, &bad))
		return -1;
	return wait_status(e->rcq, NULL);
}

static int all_bytes(const uint8_t *p, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

/* The responder's buffer: only [off, off + len) was written (PAT). */
static int only_written(const struct ends *e, size_t off, size_t len)
{
	return all_bytes(e->tbuf, off, CANARY) &&
	       all_bytes(e->tbuf + off, len, PAT) &&
	       all_bytes(e->tbuf + off + len, BUF - off - len, CANARY);
}

#define STATUS(got, want, ...) is_int(got, want, __VA_ARGS__)

/* ---- cases --------------------------------------------------------------- */

static int case_caps(void)
{
	struct ibv_device_attr *a = &V2->attr;
	int f0 = tap_failed;
	struct ibv_pd *pd = ibv_alloc_pd(V2->ctx);
	struct ibv_mw *m1, *m2;

	ok(a->device_cap_flags & IBV_DEVICE_MEM_WINDOW,
	   "caps: IBV_DEVICE_MEM_WINDOW");
	ok(a->device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
	   "caps: IBV_DEVICE_MEM_WINDOW_TYPE_2B");
	ok(a->max_mw > 0, "caps: max_mw %d", a->max_mw);
	if (!pd)
		return ok(0, "caps: PD");
	m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	m2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	ok(m1 && m2 && m1->type == IBV_MW_TYPE_1 && m2->type == IBV_MW_TYPE_2 &&
	   m1->rkey && m2->rkey && m1->rkey != m2->rkey,
	   "caps: alloc type 1 and type 2, distinct non-zero rkeys");
	ok(!ibv_alloc_mw(pd, (enum ibv_mw_type)3), "caps: type 3 refused");
	ok((!m1 || !ibv_dealloc_mw(m1)) && (!m2 || !ibv_dealloc_mw(m2)),
	   "caps: dealloc");
	ibv_dealloc_pd(pd);
	return tap_failed == f0;
}

static int case_type1(void)
{
	int f0 = tap_failed;
	struct ends e;
	struct ibv_mw *mw;

	/* Remote rights through the window only: the MR grants none. */
	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type1: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	if (!mw) {
		ends_free(&e);
		return ok(0, "type1: alloc");
	}
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, mw->rkey, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR, "type1: unbound window: WRITE refused");
	ok(all_bytes(e.tbuf, BUF, CANARY), "type1: unbound: memory unchanged");
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type1: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	STATUS(bind1(&e, 0, mw, e.tmr, WOFF, WLEN, RW), IBV_WC_SUCCESS,
	       "type1: bind [4096, +8192) READ|WRITE");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, mw->rkey, WOFF, WLEN),
	       IBV_WC_SUCCESS, "type1: WRITE of the whole window");
	ok(only_written(&e, WOFF, WLEN), "type1: exactly the window written");
	memset(e.tbuf + WOFF + WLEN - 100, 0x33, 100);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_READ, mw->rkey, WOFF + WLEN - 100, 100),
	       IBV_WC_SUCCESS, "type1: READ of the window's last 100 bytes");
	ok(all_bytes(e.lbuf, 100, 0x33), "type1: READ brought the bytes");
	memset(e.lbuf, PAT, BUF);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, e.tmr->rkey, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR,
	       "type1: the MR's own rkey (no remote rights) refused");
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type1: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	bind1(&e, 0, mw, e.tmr, WOFF, WLEN, RW);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, mw->rkey, WOFF + WLEN - 32, 64),
	       IBV_WC_REM_ACCESS_ERR, "type1: WRITE across the window's end");
	ok(all_bytes(e.tbuf, BUF, CANARY), "type1: nothing written");
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type1: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	bind1(&e, 0, mw, e.tmr, WOFF, WLEN, IBV_ACCESS_REMOTE_READ);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_READ, mw->rkey, WOFF, 64),
	       IBV_WC_SUCCESS, "type1: READ-only window: READ works");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, mw->rkey, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR, "type1: READ-only window: WRITE refused");
	ok(all_bytes(e.tbuf, BUF, CANARY), "type1: nothing written");
	ibv_dealloc_mw(mw);
	ends_free(&e);
	return tap_failed == f0;
}

static int case_type1_rebind(void)
{
	int f0 = tap_failed;
	uint32_t old;
	struct ends e;
	struct ibv_mw *mw;

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "rebind: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	bind1(&e, 0, mw, e.tmr, WOFF, WLEN, RW);
	old = mw->rkey;
	STATUS(bind1(&e, 0, mw, e.tmr, 0, 4096, RW), IBV_WC_SUCCESS,
	       "rebind: bind again to [0, 4096)");
	ok(mw->rkey != old && (mw->rkey >> 8) == (old >> 8),
	   "rebind: new rkey %#x (was %#x), same index", mw->rkey, old);
	STATUS(rdma(&e, 1, IBV_WR_RDMA_WRITE, mw->rkey, 0, 4096),
	       IBV_WC_SUCCESS, "rebind: the other QP of the PD uses it");
	ok(only_written(&e, 0, 4096), "rebind: [0, 4096) written");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, old, 0, 64),
	       IBV_WC_REM_ACCESS_ERR, "rebind: the old rkey is dead");
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "rebind: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	bind1(&e, 0, mw, e.tmr, WOFF, WLEN, RW);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, mw->rkey, WOFF, 64),
	       IBV_WC_SUCCESS, "unbind: control WRITE");
	STATUS(bind1(&e, 0, mw, e.tmr, WOFF, 0, 0), IBV_WC_SUCCESS,
	       "unbind: zero-length bind");
	memset(e.tbuf, CANARY, BUF);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, mw->rkey, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR, "unbind: WRITE refused");
	ok(all_bytes(e.tbuf, BUF, CANARY), "unbind: nothing written");
	ibv_dealloc_mw(mw);
	ends_free(&e);
	return tap_failed == f0;
}

static int case_type2(void)
{
	int f0 = tap_failed;
	struct ends e;
	struct ibv_mw *mw;
	uint32_t key;
	uint64_t v;

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type2: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = mw->rkey;
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR, "type2: FREE window: WRITE refused");
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type2: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = mw->rkey;
	STATUS(bind2(&e, 0, mw, &key, e.tmr, WOFF, WLEN,
		     RW | IBV_ACCESS_REMOTE_ATOMIC),
	       IBV_WC_SUCCESS, "type2: IBV_WR_BIND_MW");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, WOFF, WLEN),
	       IBV_WC_SUCCESS, "type2: WRITE of the whole window");
	ok(only_written(&e, WOFF, WLEN), "type2: exactly the window written");
	memset(e.tbuf + WOFF, 0, 8);
	STATUS(rdma(&e, 0, IBV_WR_ATOMIC_FETCH_AND_ADD, key, WOFF, 8),
	       IBV_WC_SUCCESS, "type2: FETCH_AND_ADD");
	memcpy(&v, e.tbuf + WOFF, 8);
	is_int((int)v, 1, "type2: the atomic added 1");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_READ, key, WOFF + 8, 64),
	       IBV_WC_SUCCESS, "type2: READ");
	STATUS(rdma(&e, 1, IBV_WR_RDMA_WRITE, key, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR,
	       "type2: another QP of the same PD is refused");
	ok(all_bytes(e.tbuf + WOFF + 8, WLEN - 8, PAT),
	   "type2: the refused WRITE changed nothing");
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type2: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = mw->rkey;
	bind2(&e, 0, mw, &key, e.tmr, WOFF, WLEN, RW);
	STATUS(rdma(&e, 0, IBV_WR_ATOMIC_FETCH_AND_ADD, key, WOFF, 8),
	       IBV_WC_REM_ACCESS_ERR, "type2: no atomic right: refused");
	ok(all_bytes(e.tbuf, BUF, CANARY), "type2: nothing changed");
	ibv_dealloc_mw(mw);
	ends_free(&e);
	return tap_failed == f0;
}

/* A SEND_WITH_INV of @rkey from requester QP 0 to responder QP 0. */
static int send_inv(struct ends *e, uint32_t rkey, struct ibv_wc *rwc)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)e->tbuf, .length = 64, .lkey = e->tmr->lkey,
	}, sge = {
		.addr = (uintptr_t)e->lbuf, .length = 16, .lkey = e->lmr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 0x5e, .sg_list = &rsge,
				   .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr = {
		.wr_id = 0x5f, .opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
		.invalidate_rkey = rkey,
	}, *bad;
	int s;

	if (ibv_post_recv(e->tqp[0], &rwr, &rbad) ||
	    ibv_post_send(e->rqp[0], &wr, &bad))
		return -1;
	s = wait_status(e->rcq, NULL);
	if (s != IBV_WC_SUCCESS)
		return s;
	return wait_status(e->tcq, rwc);
}

static int case_type2_inv(void)
{
	int f0 = tap_failed;
	struct ibv_wc wc;
	struct ends e;
	struct ibv_mw *mw;
	uint32_t key;

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type2-inv: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = mw->rkey;
	bind2(&e, 0, mw, &key, e.tmr, WOFF, WLEN, RW);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, WOFF, 64), IBV_WC_SUCCESS,
	       "local: control WRITE");
	STATUS(local_inv(&e, 0, key), IBV_WC_SUCCESS, "local: LOCAL_INV");
	STATUS(local_inv(&e, 0, key), IBV_WC_SUCCESS,
	       "local: LOCAL_INV of a FREE window: no error");
	memset(e.tbuf, CANARY, BUF);
	STATUS(bind2(&e, 0, mw, &key, e.tmr, 0, 4096, RW), IBV_WC_SUCCESS,
	       "local: a FREE window binds again, under a new rkey");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, 0, 4096), IBV_WC_SUCCESS,
	       "local: WRITE through the new binding");
	STATUS(local_inv(&e, 0, key), IBV_WC_SUCCESS, "local: LOCAL_INV again");
	memset(e.tbuf, CANARY, BUF);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, 0, 64),
	       IBV_WC_REM_ACCESS_ERR, "local: the invalidated rkey is dead");
	ok(all_bytes(e.tbuf, BUF, CANARY), "local: nothing written");
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type2-inv: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = mw->rkey;
	bind2(&e, 0, mw, &key, e.tmr, WOFF, WLEN, RW);
	memset(&wc, 0, sizeof(wc));
	STATUS(send_inv(&e, key, &wc), IBV_WC_SUCCESS,
	       "remote: SEND_WITH_INV received");
	ok(wc.opcode == IBV_WC_RECV && (wc.wc_flags & IBV_WC_WITH_INV) &&
	   wc.invalidated_rkey == key,
	   "remote: the receive says IBV_WC_WITH_INV, rkey %#x", key);
	memset(e.tbuf, CANARY, BUF);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR, "remote: the invalidated rkey is dead");
	ok(all_bytes(e.tbuf, BUF, CANARY), "remote: nothing written");
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "type2-inv: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = mw->rkey;
	bind2(&e, 0, mw, &key, e.tmr, WOFF, WLEN, RW);
	ok(!ibv_dealloc_mw(mw), "dealloc: a bound window");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR, "dealloc: its rkey is dead");
	ok(all_bytes(e.tbuf, BUF, CANARY), "dealloc: nothing written");
	ok(!ibv_dereg_mr(e.tmr), "dealloc: the MR deregisters");
	e.tmr = NULL;
	ends_free(&e);
	return tap_failed == f0;
}

struct bind_err {
	const char *what;
	int mr_access;		/* of the responder's MR */
	int type;
	size_t off, len;
	int access;
	int twice;		/* bind a type 2 window that is still bound */
	int other_pd;		/* a window of another PD */
	int forged;		/* a window key nobody allocated */
};

static int case_bind_errors(void)
{
	static const struct bind_err c[] = {
		{ "type 1 on an MR without MW_BIND", IBV_ACCESS_LOCAL_WRITE |
		  RW, 1, WOFF, WLEN, RW, 0, 0, 0 },
		{ "type 2 on an MR without MW_BIND", IBV_ACCESS_LOCAL_WRITE |
		  RW, 2, WOFF, WLEN, RW, 0, 0, 0 },
		{ "a range past the MR's end", IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_MW_BIND, 1, BUF - 4096, 8192, RW, 0, 0, 0 },
		{ "a zero-length type 2 window", IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_MW_BIND, 2, WOFF, 0, RW, 0, 0, 0 },
		{ "a type 2 window that is still bound",
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, 2, WOFF, WLEN,
		  RW, 1, 0, 0 },
		{ "a window of another PD", IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_MW_BIND, 2, WOFF, WLEN, RW, 0, 1, 0 },
		{ "a forged window key", IBV_ACCESS_LOCAL_WRITE |
		  IBV_ACCESS_MW_BIND, 2, WOFF, WLEN, RW, 0, 0, 1 },
		{ "remote write on an MR without local write",
		  IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ, 1, WOFF, WLEN,
		  IBV_ACCESS_REMOTE_WRITE, 0, 0, 0 },
	};
	int f0 = tap_failed;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct ibv_pd *pd2 = NULL;
		struct ibv_mw *mw, fake;
		struct ends e;
		uint32_t key;
		int s;

		if (ends_new(&e, c[i].mr_access)) {
			ok(0, "bind error: setup");
			continue;
		}
		if (c[i].other_pd)
			pd2 = ibv_alloc_pd(V2->ctx);
		mw = ibv_alloc_mw(pd2 ? pd2 : e.tpd, c[i].type == 1 ?
				  IBV_MW_TYPE_1 : IBV_MW_TYPE_2);
		if (!mw) {
			ok(0, "bind error: alloc_mw");
			ends_free(&e);
			continue;
		}
		key = mw->rkey;
		if (c[i].twice)
			bind2(&e, 0, mw, &key, e.tmr, c[i].off, c[i].len,
			      c[i].access);
		if (c[i].forged) {
			fake = *mw;
			fake.rkey = (mw->rkey + (77u << 8)) & ~0xffu;
			key = fake.rkey;
			s = bind2(&e, 0, &fake, &key, e.tmr, c[i].off,
				  c[i].len, c[i].access);
		} else if (c[i].type == 1) {
			s = bind1(&e, 0, mw, e.tmr, c[i].off, c[i].len,
				  c[i].access);
		} else {
			s = bind2(&e, 0, mw, &key, e.tmr, c[i].off, c[i].len,
				  c[i].access);
		}
		STATUS(s, IBV_WC_MW_BIND_ERR, "bind error: %s", c[i].what);
		ibv_dealloc_mw(mw);
		if (pd2)
			ibv_dealloc_pd(pd2);
		ends_free(&e);
	}
	return tap_failed == f0;
}

static int case_keys(void)
{
	int f0 = tap_failed;
	struct ends e;
	struct ibv_mw *mw;
	uint32_t key;

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "keys: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = mw->rkey;
	bind2(&e, 0, mw, &key, e.tmr, WOFF, WLEN, RW);
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, mw->rkey, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR,
	       "keys: the window's allocation rkey (old low byte) refused");
	ok(all_bytes(e.tbuf, BUF, CANARY), "keys: nothing written");
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "keys: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	bind1(&e, 0, mw, e.tmr, WOFF, WLEN, RW);
	{
		struct ibv_sge sge = { .addr = (uintptr_t)e.tbuf + WOFF,
				       .length = 64, .lkey = mw->rkey };
		struct ibv_send_wr wr = {
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1,
		}, *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)e.lbuf;
		wr.wr.rdma.rkey = e.lmr->rkey;
		ibv_post_send(e.tqp[0], &wr, &bad);
		STATUS(wait_status(e.tcq, NULL), IBV_WC_LOC_PROT_ERR,
		       "keys: a window's rkey as an lkey refused");
	}
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "keys: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	bind1(&e, 0, mw, e.tmr, WOFF, WLEN, RW);
	ok(local_inv(&e, 0, mw->rkey) > IBV_WC_SUCCESS,
	   "keys: LOCAL_INV of a type 1 window completes in error");
	ibv_dealloc_mw(mw);
	ends_free(&e);
	return tap_failed == f0;
}

static int case_dereg_busy(void)
{
	int f0 = tap_failed;
	struct ends e;
	struct ibv_mw *mw;
	uint32_t key;

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "dereg-busy: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
	bind1(&e, 0, mw, e.tmr, WOFF, WLEN, RW);
	is_int(ibv_dereg_mr(e.tmr), EBUSY, "dereg-busy: type 1 bound: EBUSY");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, mw->rkey, WOFF, 64),
	       IBV_WC_SUCCESS, "dereg-busy: the window still works");
	bind1(&e, 0, mw, NULL, 0, 0, 0);
	ok(!ibv_dereg_mr(e.tmr), "dereg-busy: after unbinding it works");
	e.tmr = NULL;
	ibv_dealloc_mw(mw);
	ends_free(&e);

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "dereg-busy: setup");
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = mw->rkey;
	bind2(&e, 0, mw, &key, e.tmr, WOFF, WLEN, RW);
	is_int(ibv_dereg_mr(e.tmr), EBUSY, "dereg-busy: type 2 bound: EBUSY");
	local_inv(&e, 0, key);
	ok(!ibv_dereg_mr(e.tmr), "dereg-busy: after LOCAL_INV it works");
	e.tmr = NULL;
	ibv_dealloc_mw(mw);
	ends_free(&e);
	return tap_failed == f0;
}

static int case_wr_api(void)
{
	int f0 = tap_failed;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_BIND_MW |
				  IBV_QP_EX_WITH_LOCAL_INV |
				  IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_mw_bind_info bi;
	struct ibv_qp_ex *x;
	struct ibv_qp *qp;
	struct ends e;
	struct ibv_mw *mw;
	uint32_t key;

	if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
		return ok(0, "wr-api: setup");
	/* Replace responder QP 0 by an extended one, connected likewise. */
	ia.pd = e.tpd;
	ia.send_cq = ia.recv_cq = e.tcq;
	qp = ibv_create_qp_ex(V2->ctx, &ia);
	if (!qp) {
		ends_free(&e);
		return ok(0, "wr-api: create an extended QP: %s",
			  strerror(errno));
	}
	ibv_destroy_qp(e.rqp[0]);
	ibv_destroy_qp(e.tqp[0]);
	e.tqp[0] = qp;
	e.rqp[0] = mkqp(e.rpd, e.rcq);
	if (!e.rqp[0] ||
	    qp_connect(e.rqp[0], &V1, qp->qp_num, &C1) ||
	    qp_connect(qp, V2, e.rqp[0]->qp_num, &C2)) {
		ends_free(&e);
		return ok(0, "wr-api: connect");
	}
	x = ibv_qp_to_qp_ex(qp);
	mw = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
	key = ibv_inc_rkey(mw->rkey);
	bi = (struct ibv_mw_bind_info){ .mr = e.tmr,
		.addr = (uintptr_t)e.tbuf + WOFF, .length = WLEN,
		.mw_access_flags = RW };
	ibv_wr_start(x);
	x->wr_id = 0xb3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw, key, &bi);
	is_int(ibv_wr_complete(x), 0, "wr-api: ibv_wr_bind_mw posted");
	STATUS(wait_status(e.tcq, NULL), IBV_WC_SUCCESS, "wr-api: bound");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, WOFF, 64), IBV_WC_SUCCESS,
	       "wr-api: WRITE through the window");
	ibv_wr_start(x);
	x->wr_id = 0xb4;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(x, key);
	is_int(ibv_wr_complete(x), 0, "wr-api: ibv_wr_local_inv posted");
	STATUS(wait_status(e.tcq, NULL), IBV_WC_SUCCESS, "wr-api: invalidated");
	STATUS(rdma(&e, 0, IBV_WR_RDMA_WRITE, key, WOFF, 64),
	       IBV_WC_REM_ACCESS_ERR, "wr-api: the rkey is dead");
	ibv_dealloc_mw(mw);
	ends_free(&e);
	return tap_failed == f0;
}

static int case_exit_bound(void)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		struct ibv_mw *m1, *m2;
		struct ends e;
		uint32_t key;

		/* Contexts of its own: those inherited stay the parent's. */
		if (vctx_open(&V1, dev1, gid1) ||
		    (dev2 && vctx_open(&V2s, dev2, gid2)))
			_exit(1);
		if (ends_new(&e, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND))
			_exit(2);
		m1 = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_1);
		m2 = ibv_alloc_mw(e.tpd, IBV_MW_TYPE_2);
		if (!m1 || !m2)
			_exit(3);
		key = m2->rkey;
		if (bind1(&e, 0, m1, e.tmr, WOFF, WLEN, RW) ||
		    bind2(&e, 1, m2, &key, e.tmr, 0, WOFF, RW))
			_exit(4);
		_exit(0);	/* everything still bound and allocated */
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return ok(0, "exit-bound: fork/wait");
	return ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "exit-bound: a child bound two windows and exited (status %#x)",
		  status);
}

static const struct {
	const char *name;
	int (*fn)(void);
} cases[] = {
	{ "caps", case_caps },
	{ "type1", case_type1 },
	{ "type1-rebind", case_type1_rebind },
	{ "type2", case_type2 },
	{ "type2-inv", case_type2_inv },
	{ "bind-errors", case_bind_errors },
	{ "keys", case_keys },
	{ "dereg-busy", case_dereg_busy },
	{ "wr-api", case_wr_api },
	{ "exit-bound", case_exit_bound },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'd' }, { "gid", 1, NULL, 'g' },
		{ "dev2", 1, NULL, 'D' }, { "gid2", 1, NULL, 'G' },
		{ "only", 1, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = NULL;
	int o, i;

	while ((o = getopt_long(argc, argv, "d:g:", lo, NULL)) != -1) {
		switch (o) {
		case 'd': dev1 = optarg; break;
		case 'g': gid1 = atoi(optarg); break;
		case 'D': dev2 = optarg; break;
		case 'G': gid2 = atoi(optarg); break;
		case 'o': only = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g GID] "
				"[--dev2 DEV --gid2 GID] [--only CASE,...]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (vctx_open(&V1, dev1, gid1)) {
		printf("Bail out! cannot use device %s\n", dev1);
		return 1;
	}
	if (dev2) {
		if (vctx_open(&V2s, dev2, gid2)) {
			printf("Bail out! cannot use device %s\n", dev2);
			return 1;
		}
		V2 = &V2s;
	}
	conn_defaults(&C1, &V1);
	conn_defaults(&C2, V2);
	C1.dgid = &V2->gid;
	C2.dgid = &V1.gid;
	C1.timeout = C2.timeout = 16;	/* ~268 ms: a busy emulated link too */
	C1.retry_cnt = C2.retry_cnt = 7;
	diag("requester %s, responder %s", dev1, dev2 ? dev2 : dev1);
	for (i = 0; cases[i].name; i++) {
		if (only && !name_listed(only, cases[i].name))
			continue;
		diag("case %s", cases[i].name);
		cases[i].fn();
	}
	if (dev2)
		vctx_close(&V2s);
	vctx_close(&V1);
	printf("%d passed, %d failed\n", tap_run - tap_failed, tap_failed);
	return done();
}
