// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: memory isolation between processes, PDs and keys.  Every
 * refused access is checked twice: the exact completion status, and the
 * memory itself (a canary at the target must be unchanged, a READ's
 * destination must not receive a byte, an atomic's result buffer must not
 * be written).  Each case has a control that shows the same path works with
 * the right key, so a refusal means something.
 *
 *   foreign-keys     another process's keys (exact, neighbours, dead) used
 *                    as rkey and lkey through our own QPs -> refused
 *   foreign-qp       another process connects its QP to ours and exposes a
 *                    window: outside the window, wrong generation,
 *                    neighbouring and dead keys -> REM_ACCESS_ERR
 *   pd-mismatch      an MR of PD1 used by QPs of PD2 as lkey (send, receive,
 *                    READ destination) -> LOC_PROT_ERR; as rkey -> REM_ACCESS_ERR
 *   access-flags     MR rights and QP access flags one by one, and
 *                    registrations the verbs spec forbids (remote write
 *                    or atomic without local write) -> EINVAL
 *   dereg-dead       a deregistered MR's key: READ gets no stale data,
 *                    WRITE and atomics change nothing
 *   dereg-in-flight  dereg while WRITEs with its key are queued: after
 *                    dereg returns no byte of the region changes
 *   key-reuse        register/deregister until the index recurs: the old
 *                    key must not name the new MR
 *
 * Usage: isolation [-d DEV] [-g GID] [--dev2 DEV --gid2 GID] [--only CASE,...]
 *                  [--xfail CASE,...]
 * With --dev2 the responder side (targets, victim processes) lives on DEV2
 * (e.g. tbr0 -> tbr1 across a link); without, everything is loopback.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/tap.h"
#include "vutil.h"

#define TMO 5000
#define LBUF (64 * 1024)
#define CANARY 0xC5
#define LFILL 0xEE		/* what we try to write */
#define RFILL 0x00		/* a READ destination before the READ */
#define ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct vctx V1, V2s, *V2 = &V1;	/* requester side, responder side */
static const char *dev1 = "tbrlo0", *dev2;
static int gid1 = 1, gid2 = 1;
static struct conn C1, C2;		/* towards V2, towards V1 */
static int no_atomics;

/* A requester QP on V1 (PD rpd) connected to a responder QP on V2 (PD tpd). */
struct ends {
	struct ibv_cq *rcq, *tcq;
	struct ibv_qp *rqp, *tqp;
	struct ibv_mr *lmr;	/* requester's buffer, in rpd; NULL with no_lmr */
	uint8_t *lbuf;
};

static struct ibv_qp *mkqp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};

	return ibv_create_qp(pd, &ia);
}

static void ends_free(struct ends *e)
{
	if (e->rqp)
		ibv_destroy_qp(e->rqp);
	if (e->tqp)
		ibv_destroy_qp(e->tqp);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->tcq)
		ibv_destroy_cq(e->tcq);
	if (e->lmr)
		ibv_dereg_mr(e->lmr);
	free(e->lbuf);
	memset(e, 0, sizeof(*e));
}

/* TQP_ACCESS: the responder QP's access flags. */
static int ends_new(struct ends *e, struct ibv_pd *rpd, struct ibv_pd *tpd,
		    int tqp_access, int no_lmr)
{
	struct conn c2 = C2;
	int err;

	memset(e, 0, sizeof(*e));
	e->lbuf = aligned_alloc(4096, LBUF);
	e->rcq = ibv_create_cq(V1.ctx, 64, NULL, NULL, 0);
	e->tcq = ibv_create_cq(V2->ctx, 64, NULL, NULL, 0);
	if (!e->lbuf || !e->rcq || !e->tcq)
		goto fail;
	memset(e->lbuf, LFILL, LBUF);
	if (!no_lmr && !(e->lmr = ibv_reg_mr(rpd, e->lbuf, LBUF, ALL)))
		goto fail;
	e->rqp = mkqp(rpd, e->rcq);
	e->tqp = mkqp(tpd, e->tcq);
	if (!e->rqp || !e->tqp)
		goto fail;
	c2.access = tqp_access;
	err = qp_connect(e->rqp, &V1, e->tqp->qp_num, &C1);
	if (!err)
		err = qp_connect(e->tqp, V2, e->rqp->qp_num, &c2);
	if (!err)
		return 0;
	errno = err;
fail:
	diag("setting up a QP pair: %s", strerror(errno));
	ends_free(e);
	return -1;
}

static int is_atomic(enum ibv_wr_opcode o)
{
	return o == IBV_WR_ATOMIC_CMP_AND_SWP || o == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static const char *opname(enum ibv_wr_opcode o)
{
	switch (o) {
	case IBV_WR_RDMA_WRITE: return "WRITE";
	case IBV_WR_RDMA_READ: return "READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "CMP_SWAP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "FETCH_ADD";
	case IBV_WR_SEND: return "SEND";
	default: return "?";
	}
}

/* Post one signalled WR of LEN bytes at ADDR/LKEY; 0 or errno. */
static int post(struct ibv_qp *qp, uint64_t id, enum ibv_wr_opcode opc, void *addr,
		uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, int inl)
{
	struct ibv_sge sg = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = opc,
				  .send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0) }, *bad;

	if (is_atomic(opc)) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 0;	/* CMP_SWAP of a canary 0: the compare fails anyway */
		wr.wr.atomic.swap = 0x1111111111111111ULL;
		if (opc == IBV_WR_ATOMIC_CMP_AND_SWP)
			wr.wr.atomic.compare_add = 0xC5C5C5C5C5C5C5C5ULL;	/* would match the canary */
		else
			wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static int expect_wc(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st, const char *what)
{
	struct ibv_wc wc;

	if (poll_wc(cq, &wc, TMO) != 1) {
		diag("%s: no completion (expected %s)", what, ibv_wc_status_str(st));
		return 0;
	}
	if (wc.status != st || wc.wr_id != id) {
		diag("%s: got %s for wr_id %llu, expected %s for %llu", what,
		     ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id,
		     ibv_wc_status_str(st), (unsigned long long)id);
		return 0;
	}
	return 1;
}

static int all_bytes(const uint8_t *p, size_t n, uint8_t v, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v) {
			diag("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, p[i], v);
			return 0;
		}
	return 1;
}

/*
 * OPC at RADDR with RKEY through a fresh pair (rpd -> tpd); it must fail
 * with REM_ACCESS_ERR and bring nothing back.  The caller checks the target.
 */
static int refused(struct ibv_pd *rpd, struct ibv_pd *tpd, int tqp_access,
		   enum ibv_wr_opcode opc, uint64_t raddr, uint32_t rkey, const char *why)
{
	struct ends e;
	char what[160];
	uint32_t len = is_atomic(opc) ? 8 : 256;
	int r = 1;

	if (ends_new(&e, rpd, tpd, tqp_access, 0))
		return 0;
	snprintf(what, sizeof(what), "%s with %s (rkey 0x%x)", opname(opc), why, rkey);
	if (rkey == e.lmr->rkey) {	/* a guess that is our own valid key */
		diag("skipped: %s (it is our own MR's key)", what);
		ends_free(&e);
		return 1;
	}
	memset(e.lbuf, opc == IBV_WR_RDMA_WRITE ? LFILL : RFILL, len);
	r &= !post(e.rqp, 1, opc, e.lbuf, len, e.lmr->lkey, raddr, rkey, 0);
	r &= expect_wc(e.rcq, 1, IBV_WC_REM_ACCESS_ERR, what);
	if (opc != IBV_WR_RDMA_WRITE)
		r &= all_bytes(e.lbuf, len, RFILL, "the local buffer after the refused access");
	ends_free(&e);
	if (!r)
		diag("FAILED: %s", what);
	return r;
}

/* The same through a fresh pair, which must succeed (the control). */
static int allowed(struct ibv_pd *rpd, struct ibv_pd *tpd, enum ibv_wr_opcode opc,
		   uint64_t raddr, uint32_t rkey, const char *why)
{
	struct ends e;
	char what[160];
	int r = 1;

	if (ends_new(&e, rpd, tpd, ALL, 0))
		return 0;
	snprintf(what, sizeof(what), "control: %s with %s", opname(opc), why);
	r &= !post(e.rqp, 1, opc, e.lbuf, is_atomic(opc) ? 8 : 256, e.lmr->lkey, raddr, rkey, 0);
	r &= expect_wc(e.rcq, 1, IBV_WC_SUCCESS, what);
	ends_free(&e);
	return r;
}

static const enum ibv_wr_opcode rops[] = { IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
					   IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD };
static int nrops(void) { return no_atomics ? 2 : 4; }

/* ---- foreign-keys: another process's keys through our own QPs ---- */

struct victim_info {
	uint64_t va, dead_va;
	uint32_t key, dead_key;
	uint32_t win_qpn;	/* foreign-qp: the victim's QP number */
	uint32_t win_key;	/* foreign-qp: the window's key */
	uint64_t win_va;
};

static int rd_full(int fd, void *p, size_t n)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	for (size_t got = 0; got < n; ) {
		ssize_t k;

		if (poll(&pf, 1, 20000) != 1)
			return -1;
		k = read(fd, (char *)p + got, n - got);
		if (k <= 0)
			return -1;
		got += k;
	}
	return 0;
}

static int wr_full(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

#define VBUF (64 * 1024)
#define WIN_OFF (16 * 1024)	/* the window foreign-qp exposes */
#define WIN_LEN 4096

/*
 * The victim process: its own context, PD and a canary buffer registered
 * with every right; a second MR over the other half, deregistered at once
 * (its key is dead, its memory still holds the canary).  With a window:
 * serve QP connections on request ('c' + our QPN -> its QPN) from a PD
 * whose only MR is a window in the middle of the canary.  'v' checks the
 * canary (the window may hold LFILL when WIN_WRITES) and answers 1/0.
 */
static void victim(int rfd, int wfd, int window)
{
	struct vctx v;
	struct ibv_pd *pd;
	struct ibv_mr *mr = NULL, *dead, *win = NULL;
	struct ibv_cq *cq;
	struct ibv_qp *qps[64];
	int nqp = 0;
	struct victim_info vi = { 0 };
	uint8_t *buf = mmap(NULL, VBUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char cmd;

	if (buf == MAP_FAILED || vctx_open(&v, dev2 ? dev2 : dev1, dev2 ? gid2 : gid1))
		_exit(3);
	memset(buf, CANARY, VBUF);
	pd = ibv_alloc_pd(v.ctx);
	cq = ibv_create_cq(v.ctx, 64, NULL, NULL, 0);
	if (!pd || !cq)
		_exit(3);
	if (window) {
		win = ibv_reg_mr(pd, buf + WIN_OFF, WIN_LEN, ALL);
		if (!win)
			_exit(3);
		vi.win_key = win->rkey;
		vi.win_va = (uintptr_t)buf + WIN_OFF;
	} else {
		mr = ibv_reg_mr(pd, buf, VBUF / 2, ALL);
		if (!mr)
			_exit(3);
		vi.key = mr->rkey;
	}
	vi.va = (uintptr_t)buf;
	dead = ibv_reg_mr(pd, buf + VBUF / 2, VBUF / 2, ALL);
	if (!dead)
		_exit(3);
	vi.dead_key = dead->rkey;
	vi.dead_va = (uintptr_t)buf + VBUF / 2;
	ibv_dereg_mr(dead);
	if (wr_full(wfd, &vi, sizeof(vi)))
		_exit(3);
	while (rd_full(rfd, &cmd, 1) == 0) {
		if (cmd == 'c') {
			uint32_t peer, mine = 0;
			struct conn c;
			struct ibv_qp *qp;

			if (rd_full(rfd, &peer, 4))
				_exit(3);
			conn_defaults(&c, &v);
			c.dgid = &V1.gid;	/* inherited: the parent's GID */
			qp = nqp < 64 ? mkqp(pd, cq) : NULL;
			if (qp && !qp_connect(qp, &v, peer, &c)) {
				mine = qp->qp_num;
				qps[nqp++] = qp;
			}
			if (wr_full(wfd, &mine, 4))
				_exit(3);
		} else if (cmd == 'v') {
			char ok = 1;

			for (int i = 0; i < VBUF; i++)
				if (buf[i] != CANARY && !(window && i >= WIN_OFF &&
							  i < WIN_OFF + WIN_LEN && buf[i] == LFILL)) {
					fprintf(stderr, "victim: byte %d of the canary is 0x%02x\n", i, buf[i]);
					ok = 0;
					break;
				}
			if (wr_full(wfd, &ok, 1))
				_exit(3);
		} else {
			break;
		}
	}
	while (nqp)
		ibv_destroy_qp(qps[--nqp]);
	if (win)
		ibv_dereg_mr(win);
	if (mr)
		ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	vctx_close(&v);
	_exit(0);
}

struct vproc { pid_t pid; int rfd, wfd; struct victim_info vi; };

static int vproc_start(struct vproc *p, int window)
{
	int a[2], b[2];

	if (pipe(a) || pipe(b))
		return -1;
	fflush(NULL);
	p->pid = fork();
	if (p->pid == 0) {
		close(a[1]);
		close(b[0]);
		victim(a[0], b[1], window);
	}
	close(a[0]);
	close(b[1]);
	p->wfd = a[1];
	p->rfd = b[0];
	if (p->pid < 0 || rd_full(p->rfd, &p->vi, sizeof(p->vi))) {
		diag("the victim process did not start");
		return -1;
	}
	return 0;
}

static int vproc_canary_ok(struct vproc *p)
{
	char ok = 0;

	if (wr_full(p->wfd, "v", 1) || rd_full(p->rfd, &ok, 1))
		return 0;
	if (!ok)
		diag("the victim's memory changed");
	return ok == 1;
}

static int vproc_stop(struct vproc *p)
{
	int st = 0;

	wr_full(p->wfd, "q", 1);
	close(p->wfd);
	close(p->rfd);
	waitpid(p->pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		diag("victim process: exit status 0x%x", st);
		return 0;
	}
	return 1;
}

/* Keys to try: KEY itself, its neighbours, other generations, high bits. */
static int guesses(uint32_t key, uint32_t *out)
{
	int n = 0;

	out[n++] = key;
	out[n++] = key + 1;
	out[n++] = key - 1;
	out[n++] = key + 0x100;
	out[n++] = key - 0x100;
	out[n++] = key ^ 0x80;
	out[n++] = key | 0x01000000;	/* bits above the index */
	return n;
}

static int foreign_keys(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(V1.ctx), *tpd = V2 == &V1 ? pd : ibv_alloc_pd(V2->ctx);
	struct vproc vp;
	uint32_t k[16];
	int r = 1, n, tried = 0;

	if (!pd || !tpd || vproc_start(&vp, 0))
		return 0;
	n = guesses(vp.vi.key, k);
	k[n++] = vp.vi.dead_key;
	for (int i = 0; i < n; i++) {
		uint64_t va = k[i] == vp.vi.dead_key ? vp.vi.dead_va : vp.vi.va;

		for (int o = 0; o < nrops(); o++) {
			r &= refused(pd, tpd, ALL, rops[o], va + 64, k[i],
				     i == 0 ? "another process's key" :
				     i == n - 1 ? "another process's dead key" :
				     "a neighbour of another process's key");
			tried++;
		}
	}
	/* As a local key: SEND from, WRITE from, READ into its memory. */
	if (V2 == &V1) {
		static const enum ibv_wr_opcode lops[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ };

		for (int o = 0; o < 3; o++) {
			struct ends e;

			if (ends_new(&e, pd, tpd, ALL, 0))
				return 0;
			r &= !post(e.rqp, 1, lops[o], (void *)(uintptr_t)vp.vi.va, 64, vp.vi.key,
				   (uintptr_t)e.lbuf, e.lmr->rkey, 0);
			r &= expect_wc(e.rcq, 1, IBV_WC_LOC_PROT_ERR, lops[o] == IBV_WR_RDMA_READ ?
				       "READ into another process's memory (its key as lkey)" :
				       "sending from another process's memory (its key as lkey)");
			r &= all_bytes(e.lbuf, 64, LFILL, "our buffer (nothing may arrive)");
			ends_free(&e);
			tried++;
		}
	}
	r &= vproc_canary_ok(&vp);
	r &= vproc_stop(&vp);
	diag("%d accesses with another process's keys, all refused: %s", tried, r ? "yes" : "NO");
	if (tpd != pd)
		ibv_dealloc_pd(tpd);
	ibv_dealloc_pd(pd);
	return r;
}

/* ---- foreign-qp: through the other process's own QP ---- */

static int fq_attempt(struct vproc *vp, struct ibv_pd *pd, enum ibv_wr_opcode opc,
		      uint64_t raddr, uint32_t rkey, enum ibv_wc_status want, const char *what)
{
	struct ibv_cq *cq = ibv_create_cq(V1.ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp = cq ? mkqp(pd, cq) : NULL;
	uint8_t *lb = aligned_alloc(4096, 4096);
	struct ibv_mr *lmr = lb ? ibv_reg_mr(pd, lb, 4096, ALL) : NULL;
	uint32_t peer = 0, mine = qp ? qp->qp_num : 0;
	struct conn c = C1;
	int r = 0;

	if (!qp || !lmr)
		goto out;
	memset(lb, opc == IBV_WR_RDMA_WRITE ? LFILL : RFILL, 4096);
	if (wr_full(vp->wfd, "c", 1) || wr_full(vp->wfd, &mine, 4) ||
	    rd_full(vp->rfd, &peer, 4) || !peer) {
		diag("the victim did not connect a QP");
		goto out;
	}
	if (qp_connect(qp, &V1, peer, &c))
		goto out;
	r = !post(qp, 7, opc, lb, is_atomic(opc) ? 8 : 64, lmr->lkey, raddr, rkey, 0);
	r &= expect_wc(cq, 7, want, what);
	if (want != IBV_WC_SUCCESS && opc != IBV_WR_RDMA_WRITE)
		r &= all_bytes(lb, 64, RFILL, "our buffer after the refused access");
	if (want == IBV_WC_SUCCESS && opc == IBV_WR_RDMA_READ)
		r &= all_bytes(lb, 64, CANARY, "READ of the window");	/* w + 64: not written */
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (lmr)
		ibv_dereg_mr(lmr);
	free(lb);
	if (!r)
		diag("FAILED: %s", what);
	return r;
}

static int foreign_qp(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(V1.ctx);
	struct vproc vp;
	uint32_t k[16];
	int r = 1, n;
	uint64_t w;

	if (!pd || vproc_start(&vp, 1))
		return 0;
	w = vp.vi.win_va;
	/* Controls: the window itself works. */
	r &= fq_attempt(&vp, pd, IBV_WR_RDMA_WRITE, w, vp.vi.win_key, IBV_WC_SUCCESS,
			"control: WRITE inside the window");
	r &= fq_attempt(&vp, pd, IBV_WR_RDMA_READ, w + 64, vp.vi.win_key, IBV_WC_SUCCESS,
			"control: READ inside the window");
	/* Around the window, with its key. */
	for (int o = 0; o < nrops(); o++) {
		r &= fq_attempt(&vp, pd, rops[o], w - 64, vp.vi.win_key, IBV_WC_REM_ACCESS_ERR,
				"the window's key 64 B before the window");
		r &= fq_attempt(&vp, pd, rops[o], w + WIN_LEN, vp.vi.win_key, IBV_WC_REM_ACCESS_ERR,
				"the window's key just after the window");
		r &= fq_attempt(&vp, pd, rops[o], vp.vi.va, vp.vi.win_key, IBV_WC_REM_ACCESS_ERR,
				"the window's key at the buffer's start");
	}
	r &= fq_attempt(&vp, pd, IBV_WR_RDMA_WRITE, w + WIN_LEN - 32, vp.vi.win_key,
			IBV_WC_REM_ACCESS_ERR, "a WRITE of 64 B straddling the window's end");
	/* Forged keys at the window and at the dead MR's memory. */
	n = guesses(vp.vi.win_key, k);
	for (int i = 1; i < n; i++)
		for (int o = 0; o < nrops(); o++)
			r &= fq_attempt(&vp, pd, rops[o], w, k[i], IBV_WC_REM_ACCESS_ERR,
					"a neighbour of the window's key");
	for (int o = 0; o < nrops(); o++)
		r &= fq_attempt(&vp, pd, rops[o], vp.vi.dead_va, vp.vi.dead_key,
				IBV_WC_REM_ACCESS_ERR, "the key of the victim's deregistered MR");
	r &= vproc_canary_ok(&vp);
	r &= vproc_stop(&vp);
	ibv_dealloc_pd(pd);
	return r;
}

/* ---- pd-mismatch ---- */

static int pd_mismatch(void)
{
	struct ibv_pd *pd1 = ibv_alloc_pd(V2->ctx), *pd2 = ibv_alloc_pd(V2->ctx);
	struct ibv_pd *rpd = V2 == &V1 ? pd2 : ibv_alloc_pd(V1.ctx);
	uint8_t *t = aligned_alloc(4096, 8192);
	struct ibv_mr *m1 = NULL, *m2 = NULL;
	struct ends e;
	int r = 1;

	if (!pd1 || !pd2 || !rpd || !t)
		return 0;
	memset(t, CANARY, 8192);
	m1 = ibv_reg_mr(pd1, t, 4096, ALL);
	m2 = ibv_reg_mr(pd2, t + 4096, 4096, ALL);
	if (!m1 || !m2)
		return 0;
	/* Control: the responder's own PD's MR works. */
	r &= allowed(rpd, pd2, IBV_WR_RDMA_READ, (uintptr_t)t + 4096, m2->rkey, "an MR of the QP's PD");
	for (int o = 0; o < nrops(); o++)
		r &= refused(rpd, pd2, ALL, rops[o], (uintptr_t)t, m1->rkey, "an MR of another PD");
	r &= all_bytes(t, 4096, CANARY, "the other PD's MR");

	/* Local keys of another PD (same process, same device). */
	if (V2 == &V1) {
		if (ends_new(&e, pd2, pd2, ALL, 0))
			return 0;
		r &= !post(e.rqp, 1, IBV_WR_SEND, t, 64, m1->lkey, 0, 0, 0);
		r &= expect_wc(e.rcq, 1, IBV_WC_LOC_PROT_ERR, "SEND from an MR of another PD");
		ends_free(&e);
		if (ends_new(&e, pd2, pd2, ALL, 0))
			return 0;
		r &= !post(e.rqp, 2, IBV_WR_RDMA_READ, t, 64, m1->lkey, (uintptr_t)e.lbuf, e.lmr->rkey, 0);
		r &= expect_wc(e.rcq, 2, IBV_WC_LOC_PROT_ERR, "READ into an MR of another PD");
		ends_free(&e);
		if (ends_new(&e, pd2, pd2, ALL, 0))
			return 0;
		struct ibv_sge sg = { (uintptr_t)t, 64, m1->lkey };
		struct ibv_recv_wr rw = { .wr_id = 3, .sg_list = &sg, .num_sge = 1 }, *bad;

		r &= !ibv_post_recv(e.tqp, &rw, &bad);
		r &= !post(e.rqp, 4, IBV_WR_SEND, e.lbuf, 64, e.lmr->lkey, 0, 0, 0);
		r &= expect_wc(e.tcq, 3, IBV_WC_LOC_PROT_ERR, "receive into an MR of another PD");
		ends_free(&e);
		r &= all_bytes(t, 4096, CANARY, "the other PD's MR after local use");
	}
	ibv_dereg_mr(m1);
	ibv_dereg_mr(m2);
	if (rpd != pd2)
		ibv_dealloc_pd(rpd);
	ibv_dealloc_pd(pd1);
	ibv_dealloc_pd(pd2);
	free(t);
	return r;
}

/* ---- access-flags ---- */

static int access_flags(void)
{
	struct ibv_pd *tpd = ibv_alloc_pd(V2->ctx), *rpd = V2 == &V1 ? tpd : ibv_alloc_pd(V1.ctx);
	uint8_t *t = aligned_alloc(4096, 4096);
	struct ibv_mr *m;
	int r = 1;
	static const struct { int mr_access, qp_access; enum ibv_wr_opcode op; const char *why; } c[] = {
		{ ALL & ~IBV_ACCESS_REMOTE_WRITE, ALL, IBV_WR_RDMA_WRITE, "an MR without REMOTE_WRITE" },
		{ ALL & ~IBV_ACCESS_REMOTE_READ, ALL, IBV_WR_RDMA_READ, "an MR without REMOTE_READ" },
		{ IBV_ACCESS_LOCAL_WRITE, ALL, IBV_WR_RDMA_READ, "an MR with LOCAL_WRITE only" },
		{ 0, ALL, IBV_WR_RDMA_READ, "an MR with no rights" },
		{ ALL & ~IBV_ACCESS_REMOTE_ATOMIC, ALL, IBV_WR_ATOMIC_CMP_AND_SWP, "an MR without REMOTE_ATOMIC" },
		{ ALL & ~IBV_ACCESS_REMOTE_ATOMIC, ALL, IBV_WR_ATOMIC_FETCH_AND_ADD, "an MR without REMOTE_ATOMIC" },
		{ ALL, ALL & ~IBV_ACCESS_REMOTE_WRITE, IBV_WR_RDMA_WRITE, "a QP without REMOTE_WRITE" },
		{ ALL, ALL & ~IBV_ACCESS_REMOTE_READ, IBV_WR_RDMA_READ, "a QP without REMOTE_READ" },
		{ ALL, ALL & ~IBV_ACCESS_REMOTE_ATOMIC, IBV_WR_ATOMIC_FETCH_AND_ADD, "a QP without REMOTE_ATOMIC" },
		{ ALL, IBV_ACCESS_LOCAL_WRITE, IBV_WR_ATOMIC_CMP_AND_SWP, "a QP with no remote rights" },
	};

	if (!tpd || !rpd || !t)
		return 0;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (no_atomics && is_atomic(c[i].op))
			continue;
		memset(t, CANARY, 4096);
		m = ibv_reg_mr(tpd, t, 4096, c[i].mr_access);
		if (!m) {
			diag("ibv_reg_mr(0x%x): %s", c[i].mr_access, strerror(errno));
			return 0;
		}
		r &= refused(rpd, tpd, c[i].qp_access, c[i].op, (uintptr_t)t + 64, m->rkey, c[i].why);
		r &= all_bytes(t, 4096, CANARY, c[i].why);
		ibv_dereg_mr(m);
	}
	/* The verbs spec: remote write or atomic rights need local write. */
	static const int bad[] = { IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_ATOMIC,
				   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ };
	for (int i = 0; i < 3; i++) {
		errno = 0;
		m = ibv_reg_mr(tpd, t, 4096, bad[i]);
		if (m || errno != EINVAL) {
			diag("ibv_reg_mr(access 0x%x) without LOCAL_WRITE: %s, expected EINVAL",
			     bad[i], m ? "succeeded" : strerror(errno));
			r = 0;
			if (m)
				ibv_dereg_mr(m);
		}
	}
	/* Local: READ into an MR without LOCAL_WRITE must not land a byte. */
	struct ends e;
	memset(t, CANARY, 4096);
	m = ibv_reg_mr(rpd, t, 4096, IBV_ACCESS_REMOTE_READ);
	if (!m || ends_new(&e, rpd, tpd, ALL, 0))
		return 0;
	memset(e.lbuf, 0x42, 64);
	struct ibv_mr *src = ibv_reg_mr(tpd, e.lbuf + 8192, 4096, ALL);
	if (src) {
		memset(e.lbuf + 8192, 0x42, 64);
		r &= !post(e.rqp, 1, IBV_WR_RDMA_READ, t, 64, m->lkey, (uintptr_t)e.lbuf + 8192, src->rkey, 0);
		r &= expect_wc(e.rcq, 1, IBV_WC_LOC_PROT_ERR, "READ into an MR without LOCAL_WRITE");
		r &= all_bytes(t, 4096, CANARY, "the read-only READ destination");
		ibv_dereg_mr(src);
	}
	ends_free(&e);
	ibv_dereg_mr(m);
	if (rpd != tpd)
		ibv_dealloc_pd(rpd);
	ibv_dealloc_pd(tpd);
	free(t);
	return r;
}

/* ---- dereg-dead ---- */

static int dereg_dead(void)
{
	struct ibv_pd *tpd = ibv_alloc_pd(V2->ctx), *rpd = V2 == &V1 ? tpd : ibv_alloc_pd(V1.ctx);
	uint8_t *t = aligned_alloc(4096, 4096);
	struct ibv_mr *m;
	uint32_t key;
	int r = 1;

	if (!tpd || !rpd || !t)
		return 0;
	memset(t, CANARY, 4096);	/* the "secret" a stale key must not reach */
	m = ibv_reg_mr(tpd, t, 4096, ALL);
	if (!m)
		return 0;
	key = m->rkey;
	r &= allowed(rpd, tpd, IBV_WR_RDMA_READ, (uintptr_t)t, key, "the live key");
	r &= !ibv_dereg_mr(m);
	for (int o = 0; o < nrops(); o++)
		r &= refused(rpd, tpd, ALL, rops[o], (uintptr_t)t + 128, key, "a key deregistered just now");
	r &= all_bytes(t, 4096, CANARY, "the memory of the deregistered MR");
	if (rpd != tpd)
		ibv_dealloc_pd(rpd);
	ibv_dealloc_pd(tpd);
	free(t);
	return r;
}

/*
 * ---- dereg-in-flight: 16 WRITEs of 64 KiB queued with the key, dereg at
 * once.  Those that ran before dereg returned may have landed; after it,
 * nothing.  Completions: SUCCESS..., then REM_ACCESS_ERR, then flushes.
 */
static int dereg_in_flight(void)
{
	struct ibv_pd *tpd = ibv_alloc_pd(V2->ctx), *rpd = V2 == &V1 ? tpd : ibv_alloc_pd(V1.ctx);
	const size_t sz = 16 * LBUF;
	uint8_t *t = aligned_alloc(4096, sz), *snap = malloc(sz);
	struct ibv_mr *m;
	struct ends e;
	int r = 1, ok = 0, acc = 0, fl = 0, other = 0;

	if (!tpd || !rpd || !t || !snap)
		return 0;
	memset(t, CANARY, sz);
	m = ibv_reg_mr(tpd, t, sz, ALL);
	if (!m || ends_new(&e, rpd, tpd, ALL, 0))
		return 0;
	for (int i = 0; i < 16; i++)
		r &= !post(e.rqp, i, IBV_WR_RDMA_WRITE, e.lbuf, LBUF, e.lmr->lkey,
			   (uintptr_t)t + (size_t)i * LBUF, m->rkey, 0);
	r &= !ibv_dereg_mr(m);
	memcpy(snap, t, sz);
	for (int i = 0; i < 16; i++) {
		struct ibv_wc wc;

		if (poll_wc(e.rcq, &wc, TMO) != 1) {
			diag("only %d of 16 completions", i);
			r = 0;
			break;
		}
		if (wc.status == IBV_WC_SUCCESS && !acc && !fl)
			ok++;
		else if (wc.status == IBV_WC_REM_ACCESS_ERR && !acc && !fl)
			acc++;
		else if (wc.status == IBV_WC_WR_FLUSH_ERR && (acc || fl))
			fl++;
		else
			other++;
	}
	usleep(50000);
	diag("dereg with 16 WRITEs queued: %d done before it, %d REM_ACCESS_ERR, %d flushed",
	     ok, acc, fl);
	if (other || ok + acc + fl != 16 || (ok < 16 && acc != 1)) {
		diag("unexpected completion sequence (%d out of order)", other);
		r = 0;
	}
	if (memcmp(snap, t, sz)) {
		diag("the region changed after ibv_dereg_mr returned");
		r = 0;
	}
	ends_free(&e);
	if (rpd != tpd)
		ibv_dealloc_pd(rpd);
	ibv_dealloc_pd(tpd);
	free(snap);
	free(t);
	return r;
}

/*
 * ---- key-reuse: register and deregister one page until the MR index of
 * the first key comes round again (the index allocator is cyclic); the new
 * key must differ from every key that index had.  A WRITE (inline: no
 * other MR may exist meanwhile) with the old key must then be refused and
 * leave the new MR alone.  The period of the cycle is the number of free
 * indices; a second round holds enough extra MRs that the period is a
 * multiple of 256, which is where an 8-bit generation counter repeats.
 */
static int key_reuse_round(struct ibv_pd *tpd, struct ibv_pd *rpd, int fillers, long *period)
{
	uint8_t *a = aligned_alloc(4096, 4096), *b = aligned_alloc(4096, 4096);
	struct ibv_mr *fill[256], *m;
	uint32_t first, key = 0;
	struct ends e;
	long n = 0;
	int r = 1;

	if (!a || !b || ends_new(&e, rpd, tpd, ALL, 1))
		return 0;
	for (int i = 0; i < fillers; i++)
		if (!(fill[i] = ibv_reg_mr(tpd, b, 4096, IBV_ACCESS_LOCAL_WRITE)))
			return 0;
	memset(a, CANARY, 4096);
	m = ibv_reg_mr(tpd, a, 4096, ALL);
	if (!m)
		return 0;
	first = m->rkey;
	ibv_dereg_mr(m);
	memset(b, 0x77, 4096);
	for (;;) {
		m = ibv_reg_mr(tpd, b, 4096, ALL);
		if (!m) {
			diag("ibv_reg_mr: %s after %ld", strerror(errno), n);
			return 0;
		}
		n++;
		key = m->rkey;
		if ((key >> 8) == (first >> 8) || n > 300000)
			break;
		ibv_dereg_mr(m);
	}
	*period = n;
	diag("%d extra MRs held: index 0x%x came back after %ld registrations: key 0x%08x, then 0x%08x",
	     fillers, first >> 8, n, first, key);
	if (key == first) {
		diag("a deregistered MR's key names a new MR: a stale key is alive again");
		r = 0;
	}
	/* The old key on the new MR (same index): refused, nothing written. */
	uint64_t v = 0x1122334455667788ULL;

	r &= !post(e.rqp, 1, IBV_WR_RDMA_WRITE, &v, 8, 0, (uintptr_t)b, first, 1);
	r &= expect_wc(e.rcq, 1, IBV_WC_REM_ACCESS_ERR,
		       "inline WRITE with the old key onto the MR now at its index");
	r &= all_bytes(b, 4096, 0x77, "the new MR");
	ibv_dereg_mr(m);
	ends_free(&e);
	for (int i = 0; i < fillers; i++)
		ibv_dereg_mr(fill[i]);
	free(a);
	free(b);
	return r;
}

static int key_reuse(void)
{
	struct ibv_pd *tpd = ibv_alloc_pd(V2->ctx), *rpd = V2 == &V1 ? tpd : ibv_alloc_pd(V1.ctx);
	long period = 0;
	int r;

	if (!tpd || !rpd)
		return 0;
	r = key_reuse_round(tpd, rpd, 0, &period);
	if (period % 256)
		r &= key_reuse_round(tpd, rpd, period % 256, &period);
	if (rpd != tpd)
		ibv_dealloc_pd(rpd);
	ibv_dealloc_pd(tpd);
	return r;
}

static const struct { const char *name, *what; int (*fn)(void); } cases[] = {
	{ "foreign-keys", "another process's keys (exact, neighbours, dead) as rkey/lkey through our QPs: refused, its memory unchanged", foreign_keys },
	{ "foreign-qp", "through another process's QP: outside its window, forged and dead keys -> REM_ACCESS_ERR, canary intact", foreign_qp },
	{ "pd-mismatch", "an MR of another PD as lkey -> LOC_PROT_ERR, as rkey -> REM_ACCESS_ERR, memory unchanged", pd_mismatch },
	{ "access-flags", "MR rights and QP access flags hold one by one; no byte moves; remote rights without LOCAL_WRITE -> EINVAL", access_flags },
	{ "dereg-dead", "a key deregistered just now: READ/WRITE/atomics -> REM_ACCESS_ERR, no stale data", dereg_dead },
	{ "dereg-in-flight", "dereg with WRITEs queued: nothing lands after dereg returns", dereg_in_flight },
	{ "key-reuse", "an MR index reused: the old key does not name the new MR", key_reuse },
	{ NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'd' }, { "gid", 1, NULL, 'g' },
		{ "dev2", 1, NULL, 'D' }, { "gid2", 1, NULL, 'G' },
		{ "only", 1, NULL, 'o' }, { "skip", 1, NULL, 's' },
		{ "xfail", 1, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = NULL, *skip = NULL, *xfail = NULL;
	int o;

	while ((o = getopt_long(argc, argv, "d:g:", lo, NULL)) != -1) {
		switch (o) {
		case 'd': dev1 = optarg; break;
		case 'g': gid1 = atoi(optarg); break;
		case 'D': dev2 = optarg; break;
		case 'G': gid2 = atoi(optarg); break;
		case 'o': only = optarg; break;
		case 's': skip = optarg; break;
		case 'x': xfail = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g GID] [--dev2 DEV --gid2 GID] "
				"[--only CASE,...] [--skip CASE,...] [--xfail CASE,...]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (vctx_open(&V1, dev1, gid1))
		bail_out("cannot use device %s", dev1);
	if (dev2) {
		if (vctx_open(&V2s, dev2, gid2))
			bail_out("cannot use device %s", dev2);
		V2 = &V2s;
	}
	conn_defaults(&C1, &V1);
	conn_defaults(&C2, V2);
	C1.dgid = &V2->gid;
	C2.dgid = &V1.gid;
	C1.timeout = C2.timeout = 16;	/* ~268 ms: across a busy emulated link too */
	no_atomics = V1.attr.atomic_cap == IBV_ATOMIC_NONE || V2->attr.atomic_cap == IBV_ATOMIC_NONE;
	diag("requester %s, responder %s%s", dev1, dev2 ? dev2 : dev1,
	     no_atomics ? " (no atomics: atomic cases skipped)" : "");
	for (int i = 0; cases[i].name; i++) {
		int pass;

		if (only && !name_listed(only, cases[i].name))
			continue;
		if (name_listed(skip, cases[i].name)) {
			printf("ok %d - %s # SKIP --skip\n", ++tap_run, cases[i].name);
			continue;
		}
		pass = cases[i].fn();
		if (name_listed(xfail, cases[i].name)) {
			tap_run++;
			printf("%sok %d - %s: %s # TODO known bug\n", pass ? "" : "not ",
			       tap_run, cases[i].name, cases[i].what);
			continue;
		}
		ok(pass, "%s: %s", cases[i].name, cases[i].what);
	}
	if (dev2)
		vctx_close(&V2s);
	vctx_close(&V1);
	return done();
}
