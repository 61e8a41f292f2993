// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The all-reduce transport over RDMA verbs: one RC QP per peer, on the
 * device that serves that peer (a cluster cabled as a triangle, ring or
 * mesh has a device per cable; route.c finds which), one CQ with a
 * completion channel per device, the send and receive buffers
 * registered once on each. A peer without a device is reached over IP
 * only: the all-reduce then runs as a ring over the links there are. A put is an RDMA WRITE WITH IMMEDIATE straight into the peer's
 * receive buffer; the immediate is the per-pair message sequence number,
 * which the receiver checks, and its receive completion is what tells it
 * the data is there. Receives (no scatter entries: WRITE_WITH_IMM places
 * the data by address) stay posted ahead, one reposted per completion.
 *
 * Plain libibverbs, nothing tbrdma-specific: any RC-capable device works
 * (tbrdma, rdma_rxe, a RoCE or InfiniBand NIC).
 *
 * Failures: a completion with an error status names the peer and the
 * status (RETRY_EXC_ERR: the peer is gone or the link is down); a wait
 * that sees nothing for the timeout gives up; both return -1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "base/util.h"
#include "comm/transport.h"

/* wr_id: receives carry RECV_TAG | peer, writes peer << 1 | parity (the
 * opcode of a completion with an error status is undefined) */
#define RECV_TAG (1ull << 40)

/* One device (a cable's end): its context, CQ and the buffers' keys. */
struct rdma_dev {
	char name[64];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *smr, *rmr;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index, use_grh, max_inline, npeers;
	unsigned unacked;
};

struct rdma_peer {
	int dev;		/* index in rdma_x.d, -1: no RDMA link */
	struct ibv_qp *qp;
	uint32_t psn;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t sent;		/* immediate = message sequence number */
	uint64_t recvd;
	int sq_used;
};

struct rdma_x {
	struct tp_xport x;
	struct rdma_dev d[TP_MAX_RANKS];
	int ndev;
	int ib_port;
	int sq_depth, rq_depth, spin_us, spin_yield;
	uint64_t outstanding[2];
	struct rdma_peer p[TP_MAX_RANKS];
	char desc[2048];
};

static const char *status_hint(enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_RETRY_EXC_ERR:
		return " (no acknowledgement: the rank is gone or the link is down)";
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return " (the rank stopped taking messages)";
	case IBV_WC_WR_FLUSH_ERR:
		return " (the queue pair had failed before)";
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
		return " (the rank rejected the write: mismatched buffers?)";
	default:
		return "";
	}
}

static int peer_of_qp(struct rdma_x *r, uint32_t qpn)
{
	int p;

	for (p = 0; p < r->x.nranks; p++)
		if (r->p[p].qp && r->p[p].qp->qp_num == qpn)
			return p;
	return -1;
}

static int post_recv(struct rdma_x *r, int p)
{
	struct ibv_recv_wr wr = { .wr_id = RECV_TAG | (uint64_t)p }, *bad;

	if (ibv_post_recv(r->p[p].qp, &wr, &bad)) {
		tp_err("RDMA: posting a receive for rank %d failed", p);
		r->x.lost_peer = p;
		return -1;
	}
	return 0;
}

/* Poll device D's CQ once; 0 or -1 (reported). *got: completions seen. */
static int poll_dev(struct rdma_x *r, struct rdma_dev *d, int *got)
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(d->cq, 32, wc), i;

	if (n < 0) {
		tp_err("RDMA %s: polling the completion queue failed", d->name);
		return -1;
	}
	*got += n;
	for (i = 0; i < n; i++) {
		int recv = !!(wc[i].wr_id & RECV_TAG), p;

		p = recv ? (int)(wc[i].wr_id & 0xffff) : (int)(wc[i].wr_id >> 1);
		if (p < 0 || p >= r->x.nranks || p == r->x.rank)
			p = peer_of_qp(r, wc[i].qp_num);
		if (wc[i].status != IBV_WC_SUCCESS) {
			tp_err("RDMA %s rank %d (on %s) failed: %s%s",
			       recv ? "receive from" : "write to", p, d->name,
			       ibv_wc_status_str(wc[i].status),
			       status_hint(wc[i].status));
			r->x.lost_peer = p;
			return -1;
		}
		if (p < 0) {
			tp_err("RDMA: completion of an unknown QP %u",
			       wc[i].qp_num);
			return -1;
		}
		if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
			uint32_t seq = ntohl(wc[i].imm_data);

			if (seq != (uint32_t)(r->p[p].recvd + 1)) {
				tp_err("RDMA: message %u from rank %d, expected %u: protocol error",
				       seq, p, (uint32_t)(r->p[p].recvd + 1));
				r->x.lost_peer = p;
				return -1;
			}
			r->p[p].recvd++;
			if (post_recv(r, p))
				return -1;
		} else if (wc[i].opcode == IBV_WC_RDMA_WRITE) {
			r->outstanding[wc[i].wr_id & 1]--;
			r->p[p].sq_used--;
		} else {
			tp_err("RDMA: unexpected completion opcode %d from rank %d",
			       wc[i].opcode, p);
			r->x.lost_peer = p;
			return -1;
		}
	}
	return 0;
}

/* Poll every device's CQ once. */
static int poll_once(struct rdma_x *r, int *got)
{
	int i;

	*got = 0;
	for (i = 0; i < r->ndev; i++)
		if (poll_dev(r, &r->d[i], got))
			return -1;
	return 0;
}

enum { W_RECV, W_SENT, W_SQ };

static int cond_met(struct rdma_x *r, int kind, int arg, uint64_t count)
{
	switch (kind) {
	case W_RECV: return r->p[arg].recvd >= count;
	case W_SENT: return r->outstanding[arg] == 0;
	default: return r->p[arg].sq_used < r->sq_depth;
	}
}

/* Sleep on the completion channels until something completes or MS pass. */
static int sleep_cq(struct rdma_x *r, int ms)
{
	struct pollfd pf[TP_MAX_RANKS];
	struct ibv_cq *cq;
	void *cq_ctx;
	int i;

	for (i = 0; i < r->ndev; i++) {
		pf[i].fd = r->d[i].ch->fd;
		pf[i].events = POLLIN;
	}
	if (poll(pf, (nfds_t)r->ndev, ms) < 0 && errno != EINTR)
		return -1;
	for (i = 0; i < r->ndev; i++) {
		struct rdma_dev *d = &r->d[i];

		while (!ibv_get_cq_event(d->ch, &cq, &cq_ctx))
			if (++d->unacked >= 64) {
				ibv_ack_cq_events(d->cq, d->unacked);
				d->unacked = 0;
			}
	}
	return 0;
}

/* Ask every CQ for an event at its next completion. */
static int arm(struct rdma_x *r)
{
	int i;

	for (i = 0; i < r->ndev; i++)
		if (ibv_req_notify_cq(r->d[i].cq, 0)) {
			tp_err("RDMA %s: arming the completion queue failed",
			       r->d[i].name);
			return -1;
		}
	return 0;
}

/*
 * Between two polls of a spinning wait: on a machine with a CPU for every
 * rank, a pause (the peer runs elsewhere); with more ranks than CPUs, the
 * CPU goes to a rank that has work (a sched_yield()).
 */
static void spin_pause(struct rdma_x *r)
{
	if (r->spin_yield)
		sched_yield();
	else
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#else
		__asm__ __volatile__("" ::: "memory");
#endif
}

/* Polls between two readings of the clock: a reading can cost
 * microseconds (an emulated HPET), far more than a poll. */
#define POLLS_PER_CLOCK 32

static int wait_until(struct rdma_x *r, int kind, int arg, uint64_t count)
{
	uint64_t start, now, spin_end, deadline;
	int got, armed = 0, polls = 0;

	/*
	 * Most waits are over at the first look (on loopback our write has
	 * completed in its doorbell call): then no clock is read, which in a
	 * guest costs about as much as a 256-byte all-reduce's whole poll.
	 */
	if (poll_once(r, &got))
		return -1;
	if (cond_met(r, kind, arg, count))
		return 0;
	start = now = tp_now_ns();
	spin_end = start + (uint64_t)r->spin_us * 1000u;
	deadline = start + (uint64_t)r->x.timeout_ms * 1000000u;
	for (;;) {
		if (poll_once(r, &got))
			return -1;
		if (cond_met(r, kind, arg, count))
			return 0;
		if (got) {
			armed = 0;
			continue;
		}
		if (now < spin_end && ++polls % POLLS_PER_CLOCK) {
			spin_pause(r);
			continue;
		}
		now = tp_now_ns();
		if (now >= deadline)
			break;
		if (now < spin_end) {
			spin_pause(r);
			continue;
		}
		if (!armed) {
			/* arm, then look again: a completion may have come */
			if (arm(r))
				return -1;
			armed = 1;
			continue;
		}
		if (sleep_cq(r, (int)((deadline - now) / 1000000u) + 1 < 200 ?
			     (int)((deadline - now) / 1000000u) + 1 : 200))
			return -1;
		armed = 0;
	}
	if (kind == W_RECV) {
		tp_err("RDMA: nothing from rank %d for %d ms (it hangs, or the link is down)",
		       arg, r->x.timeout_ms);
		r->x.lost_peer = arg;
	} else {
		tp_err("RDMA: writes not completed within %d ms", r->x.timeout_ms);
	}
	return -1;
}

static int rdma_put(struct tp_xport *x, int peer, size_t src_off,
		    size_t dst_off, size_t len, int par)
{
	struct rdma_x *r = (struct rdma_x *)x;
	struct rdma_peer *pe = &r->p[peer];
	struct rdma_dev *d;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)peer << 1 | (uint64_t)par,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,	/* an empty message: a barrier */
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	if (pe->dev < 0) {
		tp_err("RDMA: no link to rank %d (it is reached over IP only)",
		       peer);
		return -1;
	}
	d = &r->d[pe->dev];
	sge = (struct ibv_sge){
		.addr = (uintptr_t)(x->sbuf + src_off),
		.length = (uint32_t)len,
		.lkey = d->smr->lkey,
	};
	if (pe->sq_used >= r->sq_depth && wait_until(r, W_SQ, peer, 0))
		return -1;
	wr.imm_data = htonl(++pe->sent);
	wr.wr.rdma.remote_addr = pe->raddr + dst_off;
	wr.wr.rdma.rkey = pe->rkey;
	if ((int)len <= d->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	err = ibv_post_send(pe->qp, &wr, &bad);
	if (err) {
		tp_err("RDMA: posting a write to rank %d (on %s) failed: %s",
		       peer, d->name, strerror(err));
		x->lost_peer = peer;
		return -1;
	}
	pe->sq_used++;
	r->outstanding[par]++;
	x->bytes_sent += len;
	x->peer_bytes[peer] += len;
	return 0;
}

static int rdma_wait_recv(struct tp_xport *x, int peer, uint64_t count)
{
	return wait_until((struct rdma_x *)x, W_RECV, peer, count);
}

static int rdma_wait_sent(struct tp_xport *x, int par)
{
	return wait_until((struct rdma_x *)x, W_SENT, par, 0);
}

static void dev_close(struct rdma_dev *d)
{
	if (d->unacked)
		ibv_ack_cq_events(d->cq, d->unacked);
	if (d->cq)
		ibv_destroy_cq(d->cq);
	if (d->ch)
		ibv_destroy_comp_channel(d->ch);
	if (d->smr)
		ibv_dereg_mr(d->smr);
	if (d->rmr)
		ibv_dereg_mr(d->rmr);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
}

static void rdma_destroy(struct tp_xport *x)
{
	struct rdma_x *r = (struct rdma_x *)x;
	int p;

	for (p = 0; p < x->nranks; p++)
		if (r->p[p].qp)
			ibv_destroy_qp(r->p[p].qp);
	for (p = 0; p < r->ndev; p++)
		dev_close(&r->d[p]);
	free(x->sbuf);
	free(x->rbuf);
	free(r);
}

static const struct tp_xport_ops rdma_ops = {
	.put = rdma_put,
	.wait_recv = rdma_wait_recv,
	.wait_sent = rdma_wait_sent,
	.destroy = rdma_destroy,
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	char names[256] = "";
	size_t pos = 0;
	int i;

	for (i = 0; list && list[i]; i++) {
		const char *n = ibv_get_device_name(list[i]);

		tp_appendf(names, sizeof(names), &pos, "%s%s", i ? ", " : "",
			   n);
		if (!strcmp(n, name))
			ctx = ibv_open_device(list[i]);
	}
	if (!ctx)
		tp_err("RDMA device %s %s (devices: %s)", name,
		       list ? "cannot be opened or does not exist" :
		       "not found: no RDMA devices", pos ? names : "none");
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* The GID to use: the IPv4-mapped one (RoCE v2 over IPv4), else the
 * first non-zero one; -1 if the table is empty (InfiniBand: LID only). */
static int pick_gid(struct rdma_dev *d, int ib_port)
{
	union ibv_gid g;
	int i, first = -1;

	for (i = 0; i < d->port.gid_tbl_len && i < 256; i++) {
		static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

		if (ibv_query_gid(d->ctx, (uint8_t)ib_port, i, &g))
			continue;
		if (!memcmp(g.raw, v4, 12) && (g.raw[12] | g.raw[13] |
					       g.raw[14] | g.raw[15]))
			return i;
		if (first < 0 && (g.global.subnet_prefix ||
				  g.global.interface_id))
			first = i;
	}
	return first;
}

/*
 * Open device NAME (GID GID_INDEX, -1: pick one) into D, with a CQ of
 * CQE entries and both buffers registered. 0, or -1 (reported).
 */
static int dev_open(struct rdma_x *r, struct rdma_dev *d, const char *name,
		    int gid_index, int cqe)
{
	struct tp_xport *x = &r->x;
	int port = r->ib_port;

	snprintf(d->name, sizeof(d->name), "%s", name);
	d->ctx = open_dev(name);
	if (!d->ctx)
		return -1;
	if (ibv_query_port(d->ctx, (uint8_t)port, &d->port)) {
		tp_err("RDMA %s: port %d cannot be queried", name, port);
		return -1;
	}
	if (d->port.state != IBV_PORT_ACTIVE) {
		tp_err("RDMA %s port %d is not active (state %s)", name, port,
		       ibv_port_state_str(d->port.state));
		return -1;
	}
	d->gid_index = gid_index >= 0 ? gid_index : pick_gid(d, port);
	if (d->gid_index >= 0) {
		if (ibv_query_gid(d->ctx, (uint8_t)port, d->gid_index,
				  &d->gid)) {
			tp_err("RDMA %s: GID index %d cannot be read", name,
			       d->gid_index);
			return -1;
		}
		d->use_grh = 1;
	} else if (d->port.link_layer == IBV_LINK_LAYER_ETHERNET) {
		tp_err("RDMA %s: no GID on port %d (is the netdev up, with an address?)",
		       name, port);
		return -1;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	d->ch = ibv_create_comp_channel(d->ctx);
	if (d->ch) {
		fcntl(d->ch->fd, F_SETFL, fcntl(d->ch->fd, F_GETFL) | O_NONBLOCK);
		d->cq = ibv_create_cq(d->ctx, cqe, NULL, d->ch, 0);
	}
	if (!d->pd || !d->ch || !d->cq) {
		tp_err("RDMA %s: cannot create a PD, completion channel or CQ of %d entries",
		       name, cqe);
		return -1;
	}
	d->smr = ibv_reg_mr(d->pd, x->sbuf, x->sbuf_len, IBV_ACCESS_LOCAL_WRITE);
	d->rmr = ibv_reg_mr(d->pd, x->rbuf, x->rbuf_len,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!d->smr || !d->rmr) {
		tp_err("RDMA %s: registering %zu + %zu bytes failed: %s (RLIMIT_MEMLOCK?)",
		       name, x->sbuf_len, x->rbuf_len, strerror(errno));
		return -1;
	}
	return 0;
}

/* An RC QP for peer P on its device, in INIT, its receives posted. */
static int peer_qp(struct rdma_x *r, int p)
{
	struct rdma_dev *d = &r->d[r->p[p].dev];
	struct ibv_qp_init_attr ia = {
		.send_cq = d->cq,
		.recv_cq = d->cq,
		.cap = {
			.max_send_wr = (uint32_t)r->sq_depth,
			.max_recv_wr = (uint32_t)r->rq_depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
			.max_inline_data = 64,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = (uint8_t)r->ib_port,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int i;

	r->p[p].qp = ibv_create_qp(d->pd, &ia);
	if (!r->p[p].qp) {
		/* some devices have no inline data */
		ia.cap.max_inline_data = 0;
		r->p[p].qp = ibv_create_qp(d->pd, &ia);
	}
	if (!r->p[p].qp) {
		tp_err("RDMA %s: cannot create an RC QP: %s", d->name,
		       strerror(errno));
		return -1;
	}
	d->max_inline = (int)ia.cap.max_inline_data;
	if (ibv_modify_qp(r->p[p].qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		tp_err("RDMA %s: QP to INIT failed: %s", d->name,
		       strerror(errno));
		return -1;
	}
	r->p[p].psn = (uint32_t)tp_hash4(tp_now_ns(), (uint64_t)getpid(),
					 (uint64_t)r->x.rank, (uint64_t)p) &
		      0xffffff;
	for (i = 0; i < r->rq_depth; i++)
		if (post_recv(r, p))
			return -1;
	return 0;
}

/* "tbr0 port 1, GID 1 ::ffff:10.0.0.1, MTU 4096" */
static void dev_describe(const struct rdma_x *r, const struct rdma_dev *d,
			 char *out, size_t len)
{
	char gs[INET6_ADDRSTRLEN] = "none";

	if (d->use_grh)
		inet_ntop(AF_INET6, d->gid.raw, gs, sizeof(gs));
	snprintf(out, len, "%s port %d, GID %d %s, MTU %d", d->name,
		 r->ib_port, d->gid_index, gs, 128 << d->port.active_mtu);
}

/* One line for the report: the device, or which serves which peer. */
static void describe(struct rdma_x *r)
{
	size_t pos = 0;
	char one[200];
	int p;

	r->desc[0] = 0;
	if (r->ndev == 1 && r->d[0].npeers == r->x.nranks - 1) {
		dev_describe(r, &r->d[0], r->desc, sizeof(r->desc));
		return;
	}
	for (p = 0; p < r->x.nranks; p++) {
		if (p == r->x.rank)
			continue;
		if (r->p[p].dev < 0) {
			tp_appendf(r->desc, sizeof(r->desc), &pos,
				   "%srank %d: over IP only", pos ? "; " : "",
				   p);
			continue;
		}
		dev_describe(r, &r->d[r->p[p].dev], one, sizeof(one));
		tp_appendf(r->desc, sizeof(r->desc), &pos, "%srank %d: %s",
			   pos ? "; " : "", p, one);
	}
}

struct tp_xport *tp_rdma_new(const struct tp_rdma_link *links, int ib_port,
			     int rank, int nranks, size_t sbuf_bytes,
			     size_t rbuf_bytes, int spin_us, int spin_yield,
			     int timeout_ms)
{
	struct rdma_x *r = tp_calloc(1, sizeof(*r));
	struct tp_xport *x = &r->x;
	int p, i;

	x->ops = &rdma_ops;
	x->name = "rdma";
	x->rank = rank;
	x->nranks = nranks;
	x->timeout_ms = timeout_ms;
	x->lost_peer = -1;
	x->sbuf = tp_alloc_pages(sbuf_bytes);
	x->rbuf = tp_alloc_pages(rbuf_bytes);
	x->sbuf_len = sbuf_bytes;
	x->rbuf_len = rbuf_bytes;
	r->ib_port = ib_port;
	r->spin_us = spin_us;
	r->spin_yield = spin_yield;
	/* two calls of 2N-2 messages in flight per peer at most */
	r->sq_depth = 4 * nranks + 8;
	r->rq_depth = 4 * nranks + 8;

	/* the devices: one per cable (a name and GID), shared by its peers */
	for (p = 0; p < nranks; p++) {
		r->p[p].dev = -1;
		if (p == rank || !links[p].dev[0])
			continue;
		for (i = 0; i < r->ndev; i++)
			if (!strcmp(r->d[i].name, links[p].dev) &&
			    (links[p].gid_index < 0 ||
			     r->d[i].gid_index == links[p].gid_index))
				break;
		if (i == r->ndev) {
			int cqe = (nranks - 1) * (r->sq_depth + r->rq_depth) + 16;

			r->ndev++;
			if (dev_open(r, &r->d[i], links[p].dev,
				     links[p].gid_index, cqe))
				goto fail;
		}
		r->p[p].dev = i;
		r->d[i].npeers++;
		x->link_mask |= 1ull << p;
	}
	for (p = 0; p < nranks; p++)
		if (r->p[p].dev >= 0 && peer_qp(r, p))
			goto fail;
	describe(r);
	return x;
fail:
	rdma_destroy(x);
	return NULL;
}

const char *tp_rdma_describe(struct tp_xport *x)
{
	return ((struct rdma_x *)x)->desc;
}

int tp_rdma_link(struct tp_xport *x, int peer, char *dev, size_t devlen,
		 char *gid, size_t gidlen)
{
	struct rdma_x *r = (struct rdma_x *)x;
	const struct rdma_dev *d;

	dev[0] = gid[0] = 0;
	if (peer < 0 || peer >= x->nranks || r->p[peer].dev < 0)
		return -1;
	d = &r->d[r->p[peer].dev];
	snprintf(dev, devlen, "%s", d->name);
	if (d->use_grh)
		inet_ntop(AF_INET6, d->gid.raw, gid, (socklen_t)gidlen);
	return 0;
}

static void put32(unsigned char *b, uint32_t v)
{
	b[0] = (unsigned char)(v >> 24);
	b[1] = (unsigned char)(v >> 16);
	b[2] = (unsigned char)(v >> 8);
	b[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

/*
 * What PEER needs to reach us: our QP for it, its PSN, our LID, GID, MTU
 * and the receive buffer (address, key, size), on the device that serves
 * it. Big-endian: 0 qpn, 4 psn, 8 rkey, 12 lid, 16 mtu, 20 has_grh,
 * 24 raddr (8), 32 gid (16), 48 linked (1: we have a QP for it; 0: it
 * is reached over IP only, and the rest is zero).
 */
void tp_rdma_info(struct tp_xport *x, int peer,
		  unsigned char out[TP_RDMA_INFO_LEN])
{
	struct rdma_x *r = (struct rdma_x *)x;
	uint64_t a = (uintptr_t)x->rbuf;
	const struct rdma_dev *d;

	memset(out, 0, TP_RDMA_INFO_LEN);
	if (r->p[peer].dev < 0)
		return;
	d = &r->d[r->p[peer].dev];
	put32(out, r->p[peer].qp->qp_num);
	put32(out + 4, r->p[peer].psn);
	put32(out + 8, d->rmr->rkey);
	put32(out + 12, d->port.lid);
	put32(out + 16, d->port.active_mtu);
	put32(out + 20, (uint32_t)d->use_grh);
	put32(out + 24, (uint32_t)(a >> 32));
	put32(out + 28, (uint32_t)a);
	memcpy(out + 32, d->gid.raw, 16);
	put32(out + 48, 1);
}

/* No RDMA link to PEER after all: its QP goes, the peer is IP only. */
static void unlink_peer(struct rdma_x *r, int peer)
{
	struct rdma_peer *pe = &r->p[peer];

	if (pe->dev < 0)
		return;
	ibv_destroy_qp(pe->qp);
	pe->qp = NULL;
	r->d[pe->dev].npeers--;
	pe->dev = -1;
	r->x.link_mask &= ~(1ull << peer);
	describe(r);
}

int tp_rdma_connect(struct tp_xport *x, int peer,
		    const unsigned char in[TP_RDMA_INFO_LEN])
{
	struct rdma_x *r = (struct rdma_x *)x;
	struct rdma_peer *pe = &r->p[peer];
	enum ibv_mtu mtu = (enum ibv_mtu)get32(in + 16);
	const struct rdma_dev *d;
	struct ibv_qp_attr a;

	if (pe->dev < 0 || !get32(in + 48)) {
		if (pe->dev >= 0)
			tp_info("RDMA: rank %d has no device towards us: it is reached over IP only",
				peer);
		unlink_peer(r, peer);
		return 0;
	}
	d = &r->d[pe->dev];
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = mtu < d->port.active_mtu ? mtu : d->port.active_mtu,
		.dest_qp_num = get32(in),
		.rq_psn = get32(in + 4),
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.dlid = (uint16_t)get32(in + 12),
			.port_num = (uint8_t)r->ib_port,
		},
	};
	pe->rkey = get32(in + 8);
	pe->raddr = (uint64_t)get32(in + 24) << 32 | get32(in + 28);
	if (get32(in + 20) && d->use_grh) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, in + 32, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
		a.ah_attr.grh.hop_limit = 64;
	}
	if (ibv_modify_qp(pe->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
		tp_err("RDMA %s: connecting the QP to rank %d (RTR) failed: %s",
		       d->name, peer, strerror(errno));
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = pe->psn;
	/*
	 * 4.096 us x 2^16 = 268 ms a try, 8 tries: 2.1 s before a cable
	 * that carries nothing fails the QP, inside --peer-timeout's 4 s.
	 * 67 ms (2^14) ran out on a loss-free cable when three one-vCPU
	 * guests shared two cores and each was descheduled in turn.
	 */
	a.timeout = 16;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(pe->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)) {
		tp_err("RDMA %s: connecting the QP to rank %d (RTS) failed: %s",
		       d->name, peer, strerror(errno));
		return -1;
	}
	return 0;
}
