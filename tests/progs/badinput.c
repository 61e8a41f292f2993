// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest test: bad input to the verbs data path.  Each case provokes one
 * error (bad keys, lengths, access rights, RNR, flushes, busy objects,
 * illegal QP transitions, dead keys, a process killed mid-flight) and
 * asserts the exact completion status or errno, then checks that the
 * device still works: a fresh QP pair moves and verifies data.  One TAP
 * line per case.
 *
 * Usage: badinput [-d DEV] [-g GID_INDEX] [--only CASE] [--xfail CASE,...]
 * --xfail marks cases as TODO (known bug of the device under test, e.g.
 * rdma_rxe on 6.1); the health check after them still counts.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/tap.h"
#include "badinput.h"

struct vctx V;
struct conn CN;
static const char *xfail = "";

struct ibv_qp *new_qp(struct ibv_pd *pd, struct ibv_cq *cq, int wr)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 4, .max_recv_sge = 4 },
	};

	return ibv_create_qp(pd, &ia);
}

void pair_free(struct pair *p)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
	if (p->ca)
		ibv_destroy_cq(p->ca);
	if (p->cb)
		ibv_destroy_cq(p->cb);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

int pair_new(struct pair *p, const struct conn *ca, const struct conn *cb)
{
	int err;

	memset(p, 0, sizeof(*p));
	p->buf = aligned_alloc(4096, BUFSZ);
	p->pd = ibv_alloc_pd(V.ctx);
	p->ca = ibv_create_cq(V.ctx, 64, NULL, NULL, 0);
	p->cb = ibv_create_cq(V.ctx, 64, NULL, NULL, 0);
	if (!p->buf || !p->pd || !p->ca || !p->cb)
		goto fail;
	memset(p->buf, 0, BUFSZ);
	p->mr = ibv_reg_mr(p->pd, p->buf, BUFSZ, CN.access);
	p->a = new_qp(p->pd, p->ca, 16);
	p->b = new_qp(p->pd, p->cb, 16);
	if (!p->mr || !p->a || !p->b)
		goto fail;
	err = qp_connect(p->a, &V, p->b->qp_num, ca ? ca : &CN);
	if (!err)
		err = qp_connect(p->b, &V, p->a->qp_num, cb ? cb : &CN);
	if (!err)
		return 0;
	diag("connecting the pair: %s", strerror(err));
fail:
	diag("creating a QP pair failed: %s", strerror(errno));
	pair_free(p);
	return -1;
}

int post_send(struct ibv_qp *qp, uint64_t id, enum ibv_wr_opcode opc,
		     void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
		     uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = opc,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	if (opc == IBV_WR_ATOMIC_FETCH_AND_ADD || opc == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		diag("ibv_post_send: %s", strerror(err));
	return err;
}

int post_recv(struct ibv_qp *qp, uint64_t id, void *addr, uint32_t len,
		     uint32_t lkey)
{
	struct ibv_sge sg = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;
	int err = ibv_post_recv(qp, &wr, &bad);

	if (err)
		diag("ibv_post_recv: %s", strerror(err));
	return err;
}

/* The next completion on CQ must be for WR ID with STATUS. */
int expect_wc(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status status,
		     const char *what)
{
	struct ibv_wc wc;
	int n = poll_wc(cq, &wc, TMO);

	if (n != 1) {
		diag("%s: no completion within %d ms (expected %s)", what, TMO,
		     ibv_wc_status_str(status));
		return 0;
	}
	if (wc.status != status || wc.wr_id != id) {
		diag("%s: got %s (%d) for wr_id %llu, expected %s (%d) for wr_id %llu",
		     what, ibv_wc_status_str(wc.status), wc.status,
		     (unsigned long long)wc.wr_id, ibv_wc_status_str(status),
		     status, (unsigned long long)id);
		return 0;
	}
	return 1;
}

/* Nothing more on CQ for a little while. */
int expect_quiet(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	if (poll_wc(cq, &wc, 50) == 0)
		return 1;
	diag("%s: unexpected completion %s for wr_id %llu", what,
	     ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id);
	return 0;
}

int expect_state(struct ibv_qp *qp, int state, const char *what)
{
	int s = qp_state(qp);

	if (s == state)
		return 1;
	diag("%s: query_qp says state %d, expected %d", what, s, state);
	return 0;
}

/* After a requester error: the QP is in ERR and later WRs are flushed. */
int expect_err_and_flush(struct pair *p)
{
	int r = expect_state(p->a, IBV_QPS_ERR, "requester after the error");

	if (post_send(p->a, 11, IBV_WR_SEND, p->buf, 8, p->mr->lkey, 0, 0) ||
	    post_send(p->a, 12, IBV_WR_RDMA_WRITE, p->buf, 8, p->mr->lkey,
		      (uintptr_t)p->buf + 4096, p->mr->rkey))
		return 0;
	r &= expect_wc(p->ca, 11, IBV_WC_WR_FLUSH_ERR, "SEND posted after the error");
	r &= expect_wc(p->ca, 12, IBV_WC_WR_FLUSH_ERR, "WRITE posted after the error");
	return r;
}

int expect_error_wc(struct ibv_cq *cq, uint64_t id, const char *what)
{
	struct ibv_wc wc;

	if (poll_wc(cq, &wc, TMO) != 1) {
		diag("%s: no completion within %d ms (expected an error)", what, TMO);
		return 0;
	}
	if (wc.status == IBV_WC_SUCCESS || wc.wr_id != id) {
		diag("%s: got %s for wr_id %llu, expected an error for wr_id %llu",
		     what, ibv_wc_status_str(wc.status),
		     (unsigned long long)wc.wr_id, (unsigned long long)id);
		return 0;
	}
	diag("%s: %s (%d)", what, ibv_wc_status_str(wc.status), wc.status);
	return 1;
}

int expect_errno(int got, int want, const char *what)
{
	if (got == want)
		return 1;
	diag("%s: got %d (%s), expected %d (%s)", what, got, strerror(got),
	     want, strerror(want));
	return 0;
}

/* A fresh pair moves data correctly: SEND (2 SGEs), WRITE, READ, FAA. */
static int healthy(void)
{
	struct pair p;
	uint8_t *b;
	int r = 1;

	if (pair_new(&p, NULL, NULL))
		return 0;
	b = p.buf;
	for (int i = 0; i < 8192; i++)
		b[i] = i * 7 + 3;
	struct ibv_sge sg[2] = { { (uintptr_t)b, 1000, p.mr->lkey },
				 { (uintptr_t)b + 3000, 3096, p.mr->lkey } };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sg, .num_sge = 2,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;

	r &= !post_recv(p.b, 2, b + 16384, 8192, p.mr->lkey);
	r &= !ibv_post_send(p.a, &wr, &bad);
	r &= expect_wc(p.ca, 1, IBV_WC_SUCCESS, "health: SEND");
	r &= expect_wc(p.cb, 2, IBV_WC_SUCCESS, "health: receive");
	r &= !memcmp(b + 16384, b, 1000) && !memcmp(b + 16384 + 1000, b + 3000, 3096);
	r &= !post_send(p.a, 3, IBV_WR_RDMA_WRITE, b, 8192, p.mr->lkey,
			(uintptr_t)b + 32768, p.mr->rkey);
	r &= expect_wc(p.ca, 3, IBV_WC_SUCCESS, "health: WRITE");
	r &= !memcmp(b + 32768, b, 8192);
	r &= !post_send(p.a, 4, IBV_WR_RDMA_READ, b + 49152, 8192, p.mr->lkey,
			(uintptr_t)b, p.mr->rkey);
	r &= expect_wc(p.ca, 4, IBV_WC_SUCCESS, "health: READ");
	r &= !memcmp(b + 49152, b, 8192);
	if (V.attr.atomic_cap != IBV_ATOMIC_NONE) {
		uint64_t *t = (uint64_t *)(b + 40960), *res = (uint64_t *)(b + 40968);

		*t = 41;
		r &= !post_send(p.a, 5, IBV_WR_ATOMIC_FETCH_AND_ADD, res, 8,
				p.mr->lkey, (uintptr_t)t, p.mr->rkey);
		r &= expect_wc(p.ca, 5, IBV_WC_SUCCESS, "health: FETCH_AND_ADD");
		r &= *res == 41 && *t == 42;
	}
	pair_free(&p);
	if (!r)
		diag("the device no longer works correctly on a fresh QP pair");
	return r;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, NULL, 'd' }, { "gid", 1, NULL, 'g' },
		{ "only", 1, NULL, 'o' }, { "xfail", 1, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = "tbrlo0", *only = NULL;
	int gid = 1, o;

	while ((o = getopt_long(argc, argv, "d:g:", lo, NULL)) != -1) {
		switch (o) {
		case 'd': dev = optarg; break;
		case 'g': gid = atoi(optarg); break;
		case 'o': only = optarg; break;
		case 'x': xfail = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g GID] [--only CASE] [--xfail CASE,...]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (vctx_open(&V, dev, gid))
		bail_out("cannot use device %s", dev);
	conn_defaults(&CN, &V);
	for (const struct bcase *c = cases; c->name; c++) {
		int pass, well;

		if (only && !name_listed(only, c->name))
			continue;
		if (c->needs_atomics && V.attr.atomic_cap == IBV_ATOMIC_NONE) {
			skip(1, "%s: device has no atomics", c->name);
			continue;
		}
		pass = c->fn();
		well = healthy();
		if (name_listed(xfail, c->name) && well) {
			tap_run++;	/* TAP TODO: reported, not counted as failed */
			printf("%sok %d - %s: %s # TODO known bug of this device\n",
			       pass ? "" : "not ", tap_run, c->name, c->what);
			continue;
		}
		ok(pass && well, "%s: %s", c->name, c->what);
	}
	vctx_close(&V);
	return done();
}
