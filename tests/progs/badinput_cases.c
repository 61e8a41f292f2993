// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bad-input cases (see badinput.c).  Each builds what it needs, provokes
 * one error, checks the exact status/errno the verbs specification asks
 * for, and frees everything.  1 = as expected.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/tap.h"
#include "badinput.h"

#define WR_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define TOFF 32768	/* target MR of the remote-error cases: buf + TOFF */
#define TLEN 16384

static int bad_lkey(void)
{
	struct pair p;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	r &= !post_recv(p.b, 1, p.buf + 8192, 4096, p.mr->lkey);
	r &= !post_send(p.a, 2, IBV_WR_SEND, p.buf, 64, p.mr->lkey ^ 0xff, 0, 0);
	r &= expect_wc(p.ca, 2, IBV_WC_LOC_PROT_ERR, "SEND with a wrong lkey");
	r &= expect_state(p.a, IBV_QPS_ERR, "requester");
	r &= expect_quiet(p.cb, "receiver (nothing may arrive)");
	pair_free(&p);
	return r;
}

static int sge_beyond_mr(void)
{
	struct pair p;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	r &= !post_recv(p.b, 1, p.buf, 4096, p.mr->lkey);
	r &= !post_send(p.a, 2, IBV_WR_SEND, p.buf + BUFSZ - 100, 200,
			p.mr->lkey, 0, 0);
	r &= expect_wc(p.ca, 2, IBV_WC_LOC_PROT_ERR, "SEND of 200 B from 100 B before the MR's end");
	r &= expect_quiet(p.cb, "receiver (nothing may arrive)");
	pair_free(&p);
	return r;
}

static int recv_too_small(void)
{
	struct pair p;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	r &= !post_recv(p.b, 1, p.buf + 8192, 16, p.mr->lkey);
	r &= !post_send(p.a, 2, IBV_WR_SEND, p.buf, 64, p.mr->lkey, 0, 0);
	r &= expect_wc(p.cb, 1, IBV_WC_LOC_LEN_ERR, "receiver: 64 B into a 16 B buffer");
	r &= expect_wc(p.ca, 2, IBV_WC_REM_INV_REQ_ERR, "sender (NAK invalid request)");
	pair_free(&p);
	return r;
}

/*
 * A receive buffer may run past its MR's end: only the bytes a message
 * lands in are checked, as rxe, siw and hardware do (perftest 23.07+ posts
 * MTU-sized SRQ receives at every message-size step of its buffer).  64 B
 * into the MR's last 100 B arrive; 200 B -> LOC_PROT_ERR.
 */
static int recv_past_mr(void)
{
	uint8_t *end;
	struct pair p;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	end = p.buf + BUFSZ - 100;
	memset(p.buf, 0x5a, 256);
	r &= !post_recv(p.b, 1, end, 4096, p.mr->lkey);
	r &= !post_send(p.a, 2, IBV_WR_SEND, p.buf, 64, p.mr->lkey, 0, 0);
	r &= expect_wc(p.cb, 1, IBV_WC_SUCCESS, "receiver: 64 B into a 4096 B receive 100 B before the MR's end");
	r &= expect_wc(p.ca, 2, IBV_WC_SUCCESS, "sender of the 64 B");
	if (memcmp(end, p.buf, 64)) {
		diag("the 64 B did not arrive intact");
		r = 0;
	}
	r &= !post_recv(p.b, 3, end, 4096, p.mr->lkey);
	r &= !post_send(p.a, 4, IBV_WR_SEND, p.buf, 200, p.mr->lkey, 0, 0);
	r &= expect_wc(p.cb, 3, IBV_WC_LOC_PROT_ERR, "receiver: 200 B into the MR's last 100 B");
	r &= expect_error_wc(p.ca, 4, "sender of the 200 B");
	pair_free(&p);
	return r;
}

/* OPC of LEN bytes at TOFF + ROFF of a target MR with ACCESS, with its
 * rkey xored by XOR; DEAD: the MR is deregistered first. */
static int remote_error(enum ibv_wr_opcode opc, int access, uint32_t xor,
			long roff, uint32_t len, int dead, const char *what)
{
	struct pair p;
	struct ibv_mr *t;
	uint32_t rkey;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	t = ibv_reg_mr(p.pd, p.buf + TOFF, TLEN, access);
	if (!t) {
		diag("ibv_reg_mr(access 0x%x): %s", access, strerror(errno));
		pair_free(&p);
		return 0;
	}
	rkey = t->rkey ^ xor;
	if (dead)
		r &= !ibv_dereg_mr(t);
	r &= !post_send(p.a, 1, opc, p.buf + 1024, len, p.mr->lkey,
			(uintptr_t)p.buf + TOFF + roff, rkey);
	r &= expect_wc(p.ca, 1, IBV_WC_REM_ACCESS_ERR, what);
	r &= expect_err_and_flush(&p);
	if (!dead)
		ibv_dereg_mr(t);
	pair_free(&p);
	return r;
}

static int bad_rkey(void)
{
	return remote_error(IBV_WR_RDMA_WRITE, WR_ALL, 0xff, 0, 64, 0,
			    "WRITE with a wrong rkey");
}

static int remote_oob_write(void)
{
	return remote_error(IBV_WR_RDMA_WRITE, WR_ALL, 0, TLEN - 8, 64, 0,
			    "WRITE of 64 B 8 B before the MR's end");
}

static int remote_oob_read(void)
{
	return remote_error(IBV_WR_RDMA_READ, WR_ALL, 0, -8, 64, 0,
			    "READ of 64 B from 8 B before the MR's start");
}

static int no_remote_write(void)
{
	return remote_error(IBV_WR_RDMA_WRITE, WR_ALL & ~IBV_ACCESS_REMOTE_WRITE,
			    0, 0, 64, 0, "WRITE to an MR without REMOTE_WRITE");
}

static int no_remote_read(void)
{
	return remote_error(IBV_WR_RDMA_READ, WR_ALL & ~IBV_ACCESS_REMOTE_READ,
			    0, 0, 64, 0, "READ from an MR without REMOTE_READ");
}

static int no_remote_atomic(void)
{
	return remote_error(IBV_WR_ATOMIC_FETCH_AND_ADD,
			    WR_ALL & ~IBV_ACCESS_REMOTE_ATOMIC, 0, 0, 8, 0,
			    "FETCH_AND_ADD on an MR without REMOTE_ATOMIC");
}

/*
 * RDMA ATOMIC WRITE: 8 bytes stored at an aligned address of an MR with
 * REMOTE_WRITE (REMOTE_ATOMIC is not needed), completing as ATOMIC_WRITE.
 */
static int atomic_write(void)
{
	uint64_t *target, value = 0x0123456789abcdefull;
	struct ibv_wc wc;
	struct pair p;
	struct ibv_mr *t;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	target = (uint64_t *)(p.buf + TOFF);
	target[0] = target[1] = target[2] = ~0ull;
	t = ibv_reg_mr(p.pd, p.buf + TOFF, TLEN,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!t) {
		pair_free(&p);
		return 0;
	}
	memcpy(p.buf + 1024, &value, sizeof(value));
	r &= !post_send(p.a, 1, IBV_WR_ATOMIC_WRITE, p.buf + 1024, 8,
			p.mr->lkey, (uintptr_t)(target + 1), t->rkey);
	if (poll_wc(p.ca, &wc, TMO) != 1) {
		diag("ATOMIC_WRITE: no completion");
		r = 0;
	} else if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_ATOMIC_WRITE) {
		diag("ATOMIC_WRITE: status %s, opcode %d (want %d)",
		     ibv_wc_status_str(wc.status), wc.opcode, IBV_WC_ATOMIC_WRITE);
		r = 0;
	}
	if (target[1] != value || target[0] != ~0ull || target[2] != ~0ull) {
		diag("ATOMIC_WRITE: target %#llx (neighbours %#llx %#llx)",
		     (unsigned long long)target[1], (unsigned long long)target[0],
		     (unsigned long long)target[2]);
		r = 0;
	}
	r &= expect_state(p.a, IBV_QPS_RTS, "requester");
	ibv_dereg_mr(t);
	pair_free(&p);
	return r;
}

static int atomic_write_misaligned(void)
{
	struct pair p;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	r &= !post_send(p.a, 1, IBV_WR_ATOMIC_WRITE, p.buf + 1024, 8,
			p.mr->lkey, (uintptr_t)p.buf + TOFF + 4, p.mr->rkey);
	r &= expect_wc(p.ca, 1, IBV_WC_REM_INV_REQ_ERR,
		       "ATOMIC_WRITE to an address not 8-byte aligned");
	pair_free(&p);
	return r;
}

static int atomic_write_no_remote_write(void)
{
	return remote_error(IBV_WR_ATOMIC_WRITE, WR_ALL & ~IBV_ACCESS_REMOTE_WRITE,
			    0, 0, 8, 0, "ATOMIC_WRITE to an MR without REMOTE_WRITE");
}

/* Not 8 bytes: refused at the post, nothing reaches the queue. */
static int atomic_write_length(void)
{
	struct pair p;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	r &= post_send(p.a, 1, IBV_WR_ATOMIC_WRITE, p.buf + 1024, 16,
		       p.mr->lkey, (uintptr_t)p.buf + TOFF, p.mr->rkey) == EINVAL;
	r &= expect_quiet(p.ca, "ATOMIC_WRITE of 16 bytes (nothing posted)");
	pair_free(&p);
	return r;
}

static int dead_rkey(void)
{
	return remote_error(IBV_WR_RDMA_WRITE, WR_ALL, 0, 0, 64, 1,
			    "WRITE with the rkey of a deregistered MR");
}

static int dead_lkey(void)
{
	struct pair p;
	struct ibv_mr *m;
	uint32_t lkey;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	m = ibv_reg_mr(p.pd, p.buf + TOFF, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!m) {
		pair_free(&p);
		return 0;
	}
	lkey = m->lkey;
	r &= !ibv_dereg_mr(m);
	r &= !post_recv(p.b, 1, p.buf, 4096, p.mr->lkey);
	r &= !post_send(p.a, 2, IBV_WR_SEND, p.buf + TOFF, 64, lkey, 0, 0);
	r &= expect_wc(p.ca, 2, IBV_WC_LOC_PROT_ERR, "SEND with the lkey of a deregistered MR");
	r &= expect_quiet(p.cb, "receiver (nothing may arrive)");
	pair_free(&p);
	return r;
}

static int recv_no_local_write(void)
{
	struct pair p;
	struct ibv_mr *ro;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	ro = ibv_reg_mr(p.pd, p.buf + TOFF, 4096, 0);
	if (!ro) {
		pair_free(&p);
		return 0;
	}
	r &= !post_recv(p.b, 1, p.buf + TOFF, 4096, ro->lkey);
	r &= !post_send(p.a, 2, IBV_WR_SEND, p.buf, 64, p.mr->lkey, 0, 0);
	r &= expect_wc(p.cb, 1, IBV_WC_LOC_PROT_ERR, "receive into an MR without LOCAL_WRITE");
	r &= expect_error_wc(p.ca, 2, "sender");
	ibv_dereg_mr(ro);
	pair_free(&p);
	return r;
}

static int read_no_local_write(void)
{
	struct pair p;
	struct ibv_mr *ro;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	ro = ibv_reg_mr(p.pd, p.buf + TOFF, 4096, 0);
	if (!ro) {
		pair_free(&p);
		return 0;
	}
	r &= !post_send(p.a, 1, IBV_WR_RDMA_READ, p.buf + TOFF, 64, ro->lkey,
			(uintptr_t)p.buf, p.mr->rkey);
	r &= expect_wc(p.ca, 1, IBV_WC_LOC_PROT_ERR, "READ into an MR without LOCAL_WRITE");
	r &= expect_state(p.a, IBV_QPS_ERR, "requester");
	ibv_dereg_mr(ro);
	pair_free(&p);
	return r;
}

static int rnr_retry_exc(void)
{
	struct conn ca = CN, cb = CN;
	struct pair p;
	uint64_t t0;
	int r = 1;

	ca.rnr_retry = 2;	/* two retries, then give up */
	cb.min_rnr_timer = 1;	/* the shortest wait, 0.01 ms */
	if (pair_new(&p, &ca, &cb))
		return 0;
	t0 = now_ms();
	r &= !post_send(p.a, 1, IBV_WR_SEND, p.buf, 64, p.mr->lkey, 0, 0);
	r &= expect_wc(p.ca, 1, IBV_WC_RNR_RETRY_EXC_ERR, "SEND with no receive posted, rnr_retry 2");
	diag("RNR retries exhausted after %llu ms", (unsigned long long)(now_ms() - t0));
	r &= expect_state(p.a, IBV_QPS_ERR, "requester");
	pair_free(&p);
	return r;
}

static int rnr_recovers(void)
{
	struct conn ca = CN, cb = CN;
	struct pair p;
	int r = 1;

	ca.rnr_retry = 7;	/* forever */
	cb.min_rnr_timer = 1;
	if (pair_new(&p, &ca, &cb))
		return 0;
	memset(p.buf, 0x3c, 64);
	r &= !post_send(p.a, 1, IBV_WR_SEND, p.buf, 64, p.mr->lkey, 0, 0);
	usleep(100000);
	r &= expect_quiet(p.ca, "SEND while the receiver has no WQE");
	r &= !post_recv(p.b, 2, p.buf + 8192, 4096, p.mr->lkey);
	r &= expect_wc(p.ca, 1, IBV_WC_SUCCESS, "SEND once a receive is posted");
	r &= expect_wc(p.cb, 2, IBV_WC_SUCCESS, "the late receive");
	r &= !memcmp(p.buf, p.buf + 8192, 64);
	pair_free(&p);
	return r;
}

/* A transport counter of the device under test (sysfs hw_counters), or -1. */
static long long hw_counter(const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(V.ctx->device), name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * An RNR storm: 8 multi-frame SENDs (32 KiB each: 4 frames at MTU 9000)
 * go out while the receiver has no receive WQE for 400 ms, then all 8
 * receives are posted.  Every SEND must complete, in order, and every
 * receive hold its own message intact.  With BADINPUT_RNR_STRICT=1 (a
 * tbrdma device on a netdev: the network transport's requester, whose
 * counters these are) the sender must have waited with a back-off and
 * probed with the refused frame alone: at most one RNR NAK per ms of the
 * storm (plus the first doublings), and frames sent again at most one
 * probe per RNR NAK plus one window (64 frames) resent after the probe
 * was taken.  Going back N after each 10 us wait, as before, failed both
 * (stock 6.1 guest: 4,274 RNR NAKs and 5,427 frames sent again in
 * 451 ms; on one host the NAK comes back while the window is still going
 * out, so fewer than the whole window went again each time).
 */
static int rnr_storm(void)
{
	enum { N = 8, LEN = 32 * 1024, SLEEP_MS = 400, WINDOW = 64 };
	long long rnr0 = hw_counter("rnr_nak_received");
	long long re0 = hw_counter("retransmits");
	const char *strict = getenv("BADINPUT_RNR_STRICT");
	struct conn ca = CN, cb = CN;
	long long rnr, re;
	uint64_t t0, storm_ms;
	struct ibv_mr *mr = NULL;
	uint8_t *sbuf, *rbuf;
	struct pair p;
	int r = 1, i, j;

	ca.rnr_retry = 7;	/* forever */
	cb.min_rnr_timer = 1;	/* 10 us, as ggml asks */
	if (pair_new(&p, &ca, &cb))
		return 0;
	sbuf = aligned_alloc(4096, 2 * N * LEN);
	if (sbuf)
		mr = ibv_reg_mr(p.pd, sbuf, 2 * N * LEN, CN.access);
	if (!mr) {
		diag("rnr-storm: buffer or MR: %s", strerror(errno));
		free(sbuf);
		pair_free(&p);
		return 0;
	}
	rbuf = sbuf + N * LEN;
	for (i = 0; i < N * LEN; i++)
		sbuf[i] = (uint8_t)(i * 7 + (i >> 15) * 31 + (i >> 9));
	memset(rbuf, 0, N * LEN);

	t0 = now_ms();
	for (i = 0; i < N; i++)
		r &= !post_send(p.a, 100 + i, IBV_WR_SEND, sbuf + i * LEN, LEN,
				mr->lkey, 0, 0);
	usleep(SLEEP_MS * 1000);
	r &= expect_quiet(p.ca, "8 SENDs while the receiver has no WQE");
	for (i = 0; i < N; i++)
		r &= !post_recv(p.b, 200 + i, rbuf + i * LEN, LEN, mr->lkey);
	storm_ms = now_ms() - t0;
	for (i = 0; i < N; i++)
		r &= expect_wc(p.ca, 100 + i, IBV_WC_SUCCESS, "SEND after the RNR storm");
	for (i = 0; i < N; i++) {
		struct ibv_wc wc;

		if (poll_wc(p.cb, &wc, TMO) != 1 || wc.wr_id != 200 + (uint64_t)i ||
		    wc.status != IBV_WC_SUCCESS || wc.byte_len != LEN) {
			diag("rnr-storm: receive %d: not a %d-byte success in order", i, LEN);
			r = 0;
			break;
		}
	}
	for (i = 0; i < N; i++)
		for (j = 0; j < LEN; j++)
			if (rbuf[i * LEN + j] != sbuf[i * LEN + j]) {
				diag("rnr-storm: message %d differs at byte %d", i, j);
				r = 0;
				i = N;
				break;
			}
	rnr = hw_counter("rnr_nak_received") - rnr0;
	re = hw_counter("retransmits") - re0;
	diag("rnr-storm: %llu ms without receives: %lld RNR NAKs received, %lld frames sent again",
	     (unsigned long long)storm_ms, rnr, re);
	if (strict && strcmp(strict, "1") == 0 && rnr0 >= 0 && re0 >= 0) {
		if (rnr < 1) {
			diag("rnr-storm: no RNR NAK counted: the storm did not happen");
			r = 0;
		}
		if (rnr > (long long)storm_ms + 16) {
			diag("rnr-storm: %lld RNR NAKs in %llu ms: no back-off", rnr,
			     (unsigned long long)storm_ms);
			r = 0;
		}
		if (re > rnr + WINDOW) {
			diag("rnr-storm: %lld frames sent again for %lld RNR NAKs: more than a probe each",
			     re, rnr);
			r = 0;
		}
	}
	ibv_dereg_mr(mr);
	free(sbuf);
	pair_free(&p);
	return r;
}

static int retry_exc(void)
{
	struct conn ca = CN;
	struct pair p;
	uint64_t t0;
	int r = 1;

	ca.timeout = 10;	/* 4.2 ms */
	ca.retry_cnt = 2;
	if (pair_new(&p, &ca, NULL))
		return 0;
	/* The peer vanishes: nothing will ever ACK. */
	r &= expect_errno(ibv_destroy_qp(p.b), 0, "destroy the responder QP");
	p.b = NULL;
	t0 = now_ms();
	r &= !post_send(p.a, 1, IBV_WR_RDMA_WRITE, p.buf, 64, p.mr->lkey,
			(uintptr_t)p.buf + 4096, p.mr->rkey);
	r &= expect_wc(p.ca, 1, IBV_WC_RETRY_EXC_ERR, "WRITE to a destroyed QP, retry_cnt 2");
	diag("transport retries exhausted after %llu ms", (unsigned long long)(now_ms() - t0));
	r &= expect_state(p.a, IBV_QPS_ERR, "requester");
	pair_free(&p);
	return r;
}

/* Collect N completions on CQ, all FLUSH_ERR, with exactly the wr_ids
 * FIRST..FIRST+N-1 (any order between queues). */
static int expect_flushes(struct ibv_cq *cq, uint64_t *ids, int n, const char *what)
{
	int seen[64] = {}, r = 1;

	for (int i = 0; i < n; i++) {
		struct ibv_wc wc;
		int j;

		if (poll_wc(cq, &wc, TMO) != 1) {
			diag("%s: only %d of %d completions", what, i, n);
			return 0;
		}
		for (j = 0; j < n && ids[j] != wc.wr_id; j++)
			;
		if (wc.status != IBV_WC_WR_FLUSH_ERR || j == n || seen[j]++) {
			diag("%s: completion %s for wr_id %llu", what,
			     ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
			r = 0;
		}
	}
	return r & expect_quiet(cq, what);
}

static int err_flush(void)
{
	struct conn ca = CN;
	struct pair p;
	uint64_t ids[8] = { 10, 11, 12, 13, 20, 21, 22, 23 }, bids[3] = { 30, 31, 32 };
	int r = 1, i;

	ca.rnr_retry = 7;	/* the SENDs wait for receives forever */
	if (pair_new(&p, &ca, NULL))
		return 0;
	for (i = 0; i < 4; i++)
		r &= !post_send(p.a, 10 + i, IBV_WR_SEND, p.buf, 64, p.mr->lkey, 0, 0);
	for (i = 0; i < 4; i++)
		r &= !post_recv(p.a, 20 + i, p.buf + 4096 * (i + 1), 4096, p.mr->lkey);
	usleep(20000);
	r &= expect_quiet(p.ca, "4 SENDs stuck on RNR, 4 receives");
	r &= expect_errno(qp_to_state(p.a, IBV_QPS_ERR), 0, "modify_qp to ERR");
	r &= expect_flushes(p.ca, ids, 8, "requester moved to ERR");
	for (i = 0; i < 3; i++)
		r &= !post_recv(p.b, 30 + i, p.buf + 4096 * (i + 8), 4096, p.mr->lkey);
	r &= expect_errno(qp_to_state(p.b, IBV_QPS_ERR), 0, "modify_qp to ERR");
	r &= expect_flushes(p.cb, bids, 3, "responder moved to ERR");
	pair_free(&p);
	return r;
}

static int destroy_busy(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq;
	struct pair p;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	r &= expect_errno(ibv_destroy_cq(p.ca), EBUSY, "destroy_cq with a QP on it");
	r &= expect_errno(ibv_dealloc_pd(p.pd), EBUSY, "dealloc_pd with QPs and an MR");
	/* Refused destroys must leave the objects working. */
	r &= !post_recv(p.b, 1, p.buf + 8192, 4096, p.mr->lkey);
	r &= !post_send(p.a, 2, IBV_WR_SEND, p.buf, 64, p.mr->lkey, 0, 0);
	r &= expect_wc(p.ca, 2, IBV_WC_SUCCESS, "SEND after the refused destroys");
	r &= expect_wc(p.cb, 1, IBV_WC_SUCCESS, "receive after the refused destroys");
	r &= expect_errno(ibv_destroy_qp(p.a), 0, "destroy_qp");
	r &= expect_errno(ibv_destroy_qp(p.b), 0, "destroy_qp");
	p.a = p.b = NULL;
	r &= expect_errno(ibv_destroy_cq(p.ca), 0, "destroy_cq once its QP is gone");
	p.ca = NULL;
	r &= expect_errno(ibv_dealloc_pd(p.pd), EBUSY, "dealloc_pd with an MR");
	r &= expect_errno(ibv_dereg_mr(p.mr), 0, "dereg_mr");
	p.mr = NULL;
	srq = ibv_create_srq(p.pd, &sa);
	if (srq) {
		r &= expect_errno(ibv_dealloc_pd(p.pd), EBUSY, "dealloc_pd with an SRQ");
		r &= expect_errno(ibv_destroy_srq(srq), 0, "destroy_srq");
	} else {
		diag("no SRQ (%s): PD-with-SRQ not checked", strerror(errno));
	}
	r &= expect_errno(ibv_dealloc_pd(p.pd), 0, "dealloc_pd once empty");
	p.pd = NULL;
	pair_free(&p);
	return r;
}

static int too_many_sge(void)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct ibv_sge sg[64];
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sg, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	struct pair p;
	int r = 1, n;

	if (pair_new(&p, NULL, NULL))
		return 0;
	ibv_query_qp(p.a, &a, IBV_QP_CAP, &ia);
	n = ia.cap.max_send_sge + 1;
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)p.buf + 16 * i, 8, p.mr->lkey };
	wr.num_sge = n;
	r &= expect_errno(ibv_post_send(p.a, &wr, &bad), EINVAL, "post_send with max_send_sge + 1 SGEs");
	if (bad != &wr) {
		diag("bad_wr does not point at the refused WR");
		r = 0;
	}
	r &= expect_quiet(p.ca, "refused WR");
	wr.num_sge = n - 1;
	r &= !post_recv(p.b, 2, p.buf + 8192, 4096, p.mr->lkey);
	r &= expect_errno(ibv_post_send(p.a, &wr, &bad), 0, "post_send with max_send_sge SGEs");
	r &= expect_wc(p.ca, 1, IBV_WC_SUCCESS, "the SEND with max_send_sge SGEs");
	r &= expect_wc(p.cb, 2, IBV_WC_SUCCESS, "its receive");
	pair_free(&p);
	return r;
}

static int queue_overflow(void)
{
	struct conn ca = CN;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	struct pair p;
	int r = 1, i, err = 0;

	ca.rnr_retry = 7;	/* no receives at B: the SENDs never complete */
	if (pair_new(&p, &ca, NULL))
		return 0;
	ibv_query_qp(p.a, &a, IBV_QP_CAP, &ia);
	for (i = 0; i < (int)ia.cap.max_send_wr && !err; i++)
		err = post_send(p.a, i, IBV_WR_SEND, p.buf, 8, p.mr->lkey, 0, 0);
	r &= expect_errno(err, 0, "filling the send queue to cap.max_send_wr");
	struct ibv_sge sg = { (uintptr_t)p.buf, 8, p.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 999, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad = NULL;
	r &= expect_errno(ibv_post_send(p.a, &wr, &bad), ENOMEM, "one more send WR");
	r &= bad == &wr;
	for (i = 0, err = 0; i < (int)ia.cap.max_recv_wr && !err; i++)
		err = post_recv(p.a, i, p.buf, 8, p.mr->lkey);
	r &= expect_errno(err, 0, "filling the receive queue to cap.max_recv_wr");
	struct ibv_recv_wr rw = { .wr_id = 999, .sg_list = &sg, .num_sge = 1 }, *rbad = NULL;
	r &= expect_errno(ibv_post_recv(p.a, &rw, &rbad), ENOMEM, "one more receive WR");
	r &= rbad == &rw;
	diag("cap: %u send WRs, %u receive WRs", ia.cap.max_send_wr, ia.cap.max_recv_wr);
	pair_free(&p);
	return r;
}

/* A child with work in flight is SIGKILLed; the kernel must clean up. */
static int killed_process(void)
{
	int fd[2], st = 0;
	char c = 0;
	pid_t pid;

	if (pipe(fd))
		return 0;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct conn ca = CN;
		struct pair p;

		close(fd[0]);
		ca.rnr_retry = 7;
		/* A context of its own: never use the parent's after fork. */
		if (vctx_open(&V, ibv_get_device_name(V.ctx->device), V.gid_index) ||
		    pair_new(&p, &ca, NULL))
			_exit(1);
		for (int i = 0; i < 8; i++) {
			post_send(p.a, i, i & 1 ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
				  p.buf + 4096 * i, 4096, p.mr->lkey,
				  (uintptr_t)p.buf + 32768 + 4096 * (i % 8), p.mr->rkey);
			post_recv(p.a, 100 + i, p.buf + 4096 * i, 4096, p.mr->lkey);
		}
		for (int i = 0; i < 4; i++)	/* stuck on RNR: B has no receives */
			post_send(p.a, 200 + i, IBV_WR_SEND, p.buf, 4096, p.mr->lkey, 0, 0);
		if (write(fd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(fd[1]);
	struct pollfd pf = { .fd = fd[0], .events = POLLIN };
	int ready = poll(&pf, 1, 10000) == 1 && read(fd[0], &c, 1) == 1 && c == 'r';

	if (pid > 0) {
		usleep(2000);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	close(fd[0]);
	if (!ready)
		diag("the child did not get its work posted");
	return ready && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

const struct bcase cases[] = {
	{ "bad-lkey", "SEND with a wrong lkey -> LOC_PROT_ERR, QP in ERR", bad_lkey, 0 },
	{ "sge-beyond-mr", "SGE running past the MR's end -> LOC_PROT_ERR", sge_beyond_mr, 0 },
	{ "recv-too-small", "SEND larger than the receive -> LOC_LEN_ERR at the receiver, REM_INV_REQ_ERR at the sender", recv_too_small, 0 },
	{ "recv-past-mr", "receive running past its MR's end: a SEND that ends inside the MR arrives, a longer one -> LOC_PROT_ERR", recv_past_mr, 0 },
	{ "bad-rkey", "WRITE with a wrong rkey -> REM_ACCESS_ERR, QP in ERR, later WRs flushed", bad_rkey, 0 },
	{ "remote-oob-write", "WRITE past the remote MR's end -> REM_ACCESS_ERR, flush", remote_oob_write, 0 },
	{ "remote-oob-read", "READ before the remote MR's start -> REM_ACCESS_ERR, flush", remote_oob_read, 0 },
	{ "no-remote-write", "WRITE without REMOTE_WRITE -> REM_ACCESS_ERR, flush", no_remote_write, 0 },
	{ "no-remote-read", "READ without REMOTE_READ -> REM_ACCESS_ERR, flush", no_remote_read, 0 },
	{ "no-remote-atomic", "FETCH_AND_ADD without REMOTE_ATOMIC -> REM_ACCESS_ERR, flush", no_remote_atomic, 1 },
	{ "atomic-write", "ATOMIC_WRITE of 8 bytes to an MR with REMOTE_WRITE -> stored, completion ATOMIC_WRITE", atomic_write, 0 },
	{ "atomic-write-misaligned", "ATOMIC_WRITE to an unaligned address -> REM_INV_REQ_ERR", atomic_write_misaligned, 0 },
	{ "atomic-write-no-remote-write", "ATOMIC_WRITE without REMOTE_WRITE -> REM_ACCESS_ERR, flush", atomic_write_no_remote_write, 0 },
	{ "atomic-write-length", "ATOMIC_WRITE of 16 bytes -> EINVAL at the post", atomic_write_length, 0 },
	{ "dead-rkey", "WRITE with a deregistered MR's rkey -> REM_ACCESS_ERR, flush", dead_rkey, 0 },
	{ "dead-lkey", "SEND from a deregistered MR's lkey -> LOC_PROT_ERR", dead_lkey, 0 },
	{ "recv-no-local-write", "receive into an MR without LOCAL_WRITE -> LOC_PROT_ERR (sender: an error)", recv_no_local_write, 0 },
	{ "read-no-local-write", "READ into an MR without LOCAL_WRITE -> LOC_PROT_ERR", read_no_local_write, 0 },
	{ "rnr-retry-exc", "SEND without a receive, rnr_retry 2 -> RNR_RETRY_EXC_ERR, QP in ERR", rnr_retry_exc, 0 },
	{ "rnr-recovers", "SEND waits on RNR (rnr_retry 7) and completes once a receive is posted", rnr_recovers, 0 },
	{ "rnr-storm", "8 SENDs meet no receive for 400 ms (rnr_retry 7): all arrive intact and in order; RNR waits back off and probe with one frame", rnr_storm, 0 },
	{ "retry-exc", "WRITE to a QP that is gone, retry_cnt 2 -> RETRY_EXC_ERR, QP in ERR", retry_exc, 0 },
	{ "err-flush", "modify to ERR flushes every outstanding send and receive with WR_FLUSH_ERR", err_flush, 0 },
	{ "destroy-busy", "destroying a CQ/PD still in use -> EBUSY, objects still work", destroy_busy, 0 },
	{ "too-many-sge", "post_send with more SGEs than max_send_sge -> EINVAL, bad_wr set", too_many_sge, 0 },
	{ "queue-overflow", "posting past cap.max_send_wr / max_recv_wr -> ENOMEM, bad_wr set", queue_overflow, 0 },
	{ "qp-state-machine", "illegal QP transitions and attribute masks -> EINVAL, state unchanged", qp_state_machine, 0 },
	{ "killed-process", "a process SIGKILLed with WRs in flight releases everything", killed_process, 0 },
	{ NULL, NULL, NULL, 0 },
};
