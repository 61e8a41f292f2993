// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrc — XRC on one device (loopback), TAP output: what ibv_xsrq_pingpong
 * does not look at.  One XRC send (XRC_INI) QP talks to one XRC receive
 * (XRC_TGT) QP of XRC domain A; every message names an SRQ, and only an
 * XRC SRQ of domain A, in service, may take it:
 *   - a SEND to SRQ A1 completes on A1's CQ, reported with the TGT QP's
 *     number, and an RDMA WRITE to an MR of A1's PD works;
 *   - a SEND naming an SRQ number nobody has, an SRQ of domain B, or a
 *     destroyed SRQ: IBV_WC_REM_INV_REQ_ERR at the sender, nothing at any
 *     receiver;
 *   - an RDMA WRITE or READ to an MR of another PD than A1's:
 *     IBV_WC_REM_ACCESS_ERR;
 *   - the verbs refuse what XRC QPs do not have (post_send on the TGT
 *     QP, ibv_get_srq_num on a basic SRQ).
 * Every error moves the QPs to ERROR; they are reset and connected again
 * before the next case, and a last good SEND proves they work after all.
 *
 * usage: xrc [-d DEV] [-g GID_INDEX]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vutil.h"
#include "../unit/tap.h"

#define BUF	4096
#define WAIT_MS	5000
#define QUIET_MS 200	/* "nothing arrives": how long we look */

struct xrc {
	struct vctx v;
	struct conn c;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *scq, *rcq_a1, *rcq_b;
	struct ibv_xrcd *xa, *xb;
	struct ibv_srq *a1, *b1;
	struct ibv_qp *ini, *tgt;
	struct ibv_mr *mr, *mr2;
	char *buf, *buf2;
};

static struct ibv_srq *xsrq(struct xrc *x, struct ibv_xrcd *d,
			    struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = x->pd,
		.xrcd = d,
		.cq = cq,
	};

	return ibv_create_srq_ex(x->v.ctx, &a);
}

static struct ibv_xrcd *xrcd(struct xrc *x)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,		/* a domain of this process only */
		.oflags = O_CREAT,
	};

	return ibv_open_xrcd(x->v.ctx, &a);
}

/* RESET -> INIT -> RTR for an XRC QP towards DQPN. */
static int xqp_up(struct xrc *x, struct ibv_qp *qp, uint32_t dqpn)
{
	int err = qp_to_state(qp, IBV_QPS_RESET);
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = x->v.port_num,
		.qp_access_flags = x->c.access,
	};

	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = x->v.port.active_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = psn_for(dqpn);
	a.max_dest_rd_atomic = x->c.rd_atomic;
	a.min_rnr_timer = x->c.min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = x->v.gid;
	a.ah_attr.grh.sgid_index = x->v.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = x->v.port_num;
	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN |
				    (qp->qp_type == IBV_QPT_XRC_RECV ?
				     IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER : 0));
	return err;
}

/* The INI QP to RTS (vutil's qp_to_rts() sets these for RC only). */
static int xqp_rts(struct xrc *x)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = psn_for(x->ini->qp_num),
		.timeout = x->c.timeout,
		.retry_cnt = x->c.retry_cnt,
		.rnr_retry = x->c.rnr_retry,
		.max_rd_atomic = x->c.rd_atomic,
	};

	return ibv_modify_qp(x->ini, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Both ends from scratch: after an error both may be in ERROR. */
static int reconnect(struct xrc *x)
{
	int err = xqp_up(x, x->tgt, x->ini->qp_num);

	if (!err)
		err = xqp_up(x, x->ini, x->tgt->qp_num);
	if (!err)
		err = xqp_rts(x);
	return err;
}

static int post_recv(struct ibv_srq *srq, struct xrc *x, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)x->buf + BUF / 2, .length = BUF / 2,
		.lkey = x->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* One work request on the INI QP naming SRQN; its completion's status. */
static int xsend(struct xrc *x, enum ibv_wr_opcode op, uint32_t srqn,
		 struct ibv_mr *rmr, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)x->buf, .length = len, .lkey = x->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int ret;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (rmr) {
		wr.wr.rdma.remote_addr = (uintptr_t)rmr->addr;
		wr.wr.rdma.rkey = rmr->rkey;
	}
	ret = ibv_post_send(x->ini, &wr, &bad);
	if (ret) {
		diag("ibv_post_send: %s", strerror(ret));
		return -1;
	}
	if (poll_wc(x->scq, &wc, WAIT_MS) != 1) {
		diag("no send completion within %d ms", WAIT_MS);
		return -1;
	}
	if (wc.wr_id != 7)
		diag("send completion wr_id %llu, not 7",
		     (unsigned long long)wc.wr_id);
	return wc.status;
}

/* Nothing may complete on CQ within QUIET_MS. */
static int quiet(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	return poll_wc(cq, &wc, QUIET_MS) == 0;
}

static int setup(struct xrc *x, const char *dev, int gid)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;

	if (vctx_open(&x->v, dev, gid))
		return -1;
	conn_defaults(&x->c, &x->v);
	x->c.rnr_retry = 0;	/* an RNR would be a bug here: fail fast */
	x->buf = calloc(1, BUF);
	x->buf2 = calloc(1, BUF);
	x->pd = ibv_alloc_pd(x->v.ctx);
	x->pd2 = ibv_alloc_pd(x->v.ctx);
	if (!x->buf || !x->buf2 || !x->pd || !x->pd2)
		return -1;
	x->mr = ibv_reg_mr(x->pd, x->buf, BUF, acc);
	x->mr2 = ibv_reg_mr(x->pd2, x->buf2, BUF, acc);
	x->scq = ibv_create_cq(x->v.ctx, 16, NULL, NULL, 0);
	x->rcq_a1 = ibv_create_cq(x->v.ctx, 16, NULL, NULL, 0);
	x->rcq_b = ibv_create_cq(x->v.ctx, 16, NULL, NULL, 0);
	if (!x->mr || !x->mr2 || !x->scq || !x->rcq_a1 || !x->rcq_b)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct xrc x = { 0 };
	const char *dev = "tbrlo0";
	struct ibv_send_wr *bad;
	struct ibv_send_wr swr = { 0 };
	struct ibv_srq *gone, *basic;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	uint32_t na1 = 0, nb1 = 0, ngone = 0, n;
	struct ibv_wc wc;
	int gid = 1, opt, st;

	while ((opt = getopt(argc, argv, "d:g:")) != -1) {
		if (opt == 'd')
			dev = optarg;
		else if (opt == 'g')
			gid = atoi(optarg);
		else
			return 2;
	}
	plan(NO_PLAN);
	if (!ok(setup(&x, dev, gid) == 0, "device, PDs, MRs, CQs"))
		return done();

	x.xa = xrcd(&x);
	x.xb = xrcd(&x);
	if (!ok(x.xa && x.xb, "ibv_open_xrcd twice")) {
		diag("ibv_open_xrcd: %s", strerror(errno));
		return done();
	}
	x.a1 = xsrq(&x, x.xa, x.rcq_a1);
	x.b1 = xsrq(&x, x.xb, x.rcq_b);
	gone = xsrq(&x, x.xa, x.rcq_a1);
	if (!ok(x.a1 && x.b1 && gone, "XRC SRQs in both domains")) {
		diag("ibv_create_srq_ex: %s", strerror(errno));
		return done();
	}
	st = ibv_get_srq_num(x.a1, &na1) || ibv_get_srq_num(x.b1, &nb1) ||
	     ibv_get_srq_num(gone, &ngone);
	ok(!st && na1 && na1 != nb1 && ngone != na1 && ngone != nb1,
	   "ibv_get_srq_num: distinct numbers %u %u %u", na1, nb1, ngone);
	ok(!ibv_destroy_srq(gone), "destroy the third SRQ (its number %u "
	   "must now be refused)", ngone);
	basic = ibv_create_srq(x.pd, &sa);
	ok(basic && ibv_get_srq_num(basic, &n) != 0,
	   "ibv_get_srq_num on a basic SRQ fails");
	if (basic)
		ibv_destroy_srq(basic);

	x.ini = ibv_create_qp_ex(x.v.ctx, &(struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = x.scq,
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = x.pd });
	x.tgt = ibv_create_qp_ex(x.v.ctx, &(struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = x.xa });
	if (!ok(x.ini && x.tgt, "XRC send and receive QPs")) {
		diag("ibv_create_qp_ex: %s", strerror(errno));
		return done();
	}
	if (!ok(reconnect(&x) == 0, "connect INI %u <-> TGT %u",
		x.ini->qp_num, x.tgt->qp_num))
		return done();
	ok(ibv_post_send(x.tgt, &swr, &bad) != 0,
	   "post_send on the receive QP fails");

	/* The good path: SEND to A1, then RDMA WRITE into A1's PD. */
	strcpy(x.buf, "xrc to a1");
	ok(!post_recv(x.a1, &x, 41), "post a receive on SRQ A1");
	is_int(xsend(&x, IBV_WR_SEND, na1, NULL, 10), IBV_WC_SUCCESS,
	       "SEND naming SRQ A1: success");
	st = poll_wc(x.rcq_a1, &wc, WAIT_MS);
	ok(st == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 41 &&
	   wc.byte_len == 10 && wc.qp_num == x.tgt->qp_num &&
	   wc.opcode == IBV_WC_RECV,
	   "receive completion on A1's CQ, with the TGT QP's number "
	   "(status %d wr_id %llu len %u qp %u)", st == 1 ? (int)wc.status : -1,
	   st == 1 ? (unsigned long long)wc.wr_id : 0ULL,
	   st == 1 ? wc.byte_len : 0, st == 1 ? wc.qp_num : 0);
	ok(!strcmp(x.buf + BUF / 2, "xrc to a1"), "the data arrived");
	x.buf[0] = 'W';
	is_int(xsend(&x, IBV_WR_RDMA_WRITE, na1, x.mr, 10), IBV_WC_SUCCESS,
	       "RDMA WRITE to an MR of A1's PD: success");

	/* No such SRQ, another domain's SRQ, a destroyed SRQ. */
	ok(!post_recv(x.b1, &x, 51), "post a receive on SRQ B1 (domain B)");
	is_int(xsend(&x, IBV_WR_SEND, 0xabcdef, NULL, 10),
	       IBV_WC_REM_INV_REQ_ERR, "SEND naming no SRQ: remote invalid request");
	ok(reconnect(&x) == 0, "reconnect");
	is_int(xsend(&x, IBV_WR_SEND, nb1, NULL, 10), IBV_WC_REM_INV_REQ_ERR,
	       "SEND naming SRQ B1 of another domain: remote invalid request");
	ok(quiet(x.rcq_b), "nothing completed on B1's CQ");
	ok(reconnect(&x) == 0, "reconnect");
	is_int(xsend(&x, IBV_WR_SEND_WITH_IMM, ngone, NULL, 10),
	       IBV_WC_REM_INV_REQ_ERR,
	       "SEND naming a destroyed SRQ: remote invalid request");
	ok(quiet(x.rcq_a1), "nothing completed on A1's CQ");

	/* RDMA checks the named SRQ's PD: pd2's MR is refused. */
	ok(reconnect(&x) == 0, "reconnect");
	is_int(xsend(&x, IBV_WR_RDMA_WRITE, na1, x.mr2, 10),
	       IBV_WC_REM_ACCESS_ERR,
	       "RDMA WRITE to an MR of another PD: remote access error");
	ok(reconnect(&x) == 0, "reconnect");
	is_int(xsend(&x, IBV_WR_RDMA_READ, na1, x.mr2, 10),
	       IBV_WC_REM_ACCESS_ERR,
	       "RDMA READ from an MR of another PD: remote access error");

	/* Still in service: B1's receive is still there, A1 takes a SEND. */
	ok(reconnect(&x) == 0, "reconnect");
	strcpy(x.buf, "again");
	ok(!post_recv(x.a1, &x, 42), "post a receive on SRQ A1");
	is_int(xsend(&x, IBV_WR_SEND, na1, NULL, 6), IBV_WC_SUCCESS,
	       "SEND naming SRQ A1 after the errors: success");
	st = poll_wc(x.rcq_a1, &wc, WAIT_MS);
	ok(st == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 42 &&
	   wc.qp_num == x.tgt->qp_num, "its receive completion on A1's CQ");

	ok(!ibv_destroy_qp(x.ini) && !ibv_destroy_qp(x.tgt), "destroy QPs");
	ok(!ibv_destroy_srq(x.a1) && !ibv_destroy_srq(x.b1), "destroy SRQs");
	ok(!ibv_close_xrcd(x.xa) && !ibv_close_xrcd(x.xb), "close XRC domains");
	ibv_dereg_mr(x.mr);
	ibv_dereg_mr(x.mr2);
	ibv_destroy_cq(x.scq);
	ibv_destroy_cq(x.rcq_a1);
	ibv_destroy_cq(x.rcq_b);
	ibv_dealloc_pd(x.pd);
	ibv_dealloc_pd(x.pd2);
	vctx_close(&x.v);
	free(x.buf);
	free(x.buf2);
	return done();
}
