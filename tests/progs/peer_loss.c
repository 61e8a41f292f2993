// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a peer that dies mid-transfer leaves behind (issue 40): an RC
 * connection made with RDMA CM, the server streaming 64 KiB SENDs with a
 * window of them in flight, the client receiving.  The test powers the
 * client's machine off mid-stream; the server, the survivor, must then see
 * its QP go to the error state with the send that was at the head
 * completing RETRY_EXC_ERR and every other one flushed (WR_FLUSH_ERR), and
 * RDMA CM's DISCONNECTED event, each within the time it prints.
 *
 *   survivor: peer_loss -s ADDR [-p PORT] [-t ACK_TIMEOUT] [-r RETRY_CNT] [-w SECS]
 *   victim:   peer_loss -c ADDR [-p PORT] [-m MIB_BEFORE_READY]
 *
 * The victim prints "ready" once it has received MIB_BEFORE_READY MiB (4),
 * then keeps receiving until it is killed.  The survivor prints one line
 * per event, milliseconds since the last successful completion:
 *   error STATUS after MS ms
 *   flushed N
 *   qp_state ERR
 *   disconnected after MS ms
 * and "result ok" when the head failed with RETRY_EXC_ERR, the rest were
 * flushed, the QP is in error and DISCONNECTED came; exit 0 only then.
 * On the first error it calls rdma_disconnect(), as an application does,
 * and waits at most SECS (60) for DISCONNECTED.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MSG_SIZE	(64 * 1024)
#define WINDOW		16
#define RECVS		32

static const char *addr;
static const char *port = "18999";
static int ack_timeout = 14;		/* 4.096 us * 2^14: 67 ms */
static int retry_cnt = 7;
static long ready_mib = 4;
static double cm_wait_ms = 60000;	/* -w: for DISCONNECTED after the error */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
	fprintf(stderr, "peer_loss: %s: %s\n", what, strerror(errno));
	exit(2);
}

static struct rdma_cm_event *expect(struct rdma_event_channel *ch,
				    enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev))
		die("rdma_get_cm_event");
	if (ev->event != type) {
		fprintf(stderr, "peer_loss: got %s, expected %s (status %d)\n",
			rdma_event_str(ev->event), rdma_event_str(type), ev->status);
		exit(2);
	}
	return ev;
}

struct conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
};

static void setup_qp(struct conn *c, int recvs)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = WINDOW, .max_recv_wr = RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	size_t len = (size_t)MSG_SIZE * RECVS;
	int i;

	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = ibv_create_cq(c->id->verbs, WINDOW + RECVS, NULL, NULL, 0);
	c->buf = calloc(1, len);
	if (!c->pd || !c->cq || !c->buf)
		die("pd/cq/buffer");
	c->mr = ibv_reg_mr(c->pd, c->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		die("ibv_reg_mr");
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &qa))
		die("rdma_create_qp");
	for (i = 0; i < recvs; i++) {
		struct ibv_sge sge = { (uintptr_t)c->buf + (size_t)i * MSG_SIZE,
				       MSG_SIZE, c->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(c->id->qp, &wr, &bad))
			die("ibv_post_recv");
	}
}

static int victim(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	struct conn c = { 0 };
	long long got = 0;
	int said = 0;

	if (!ch || rdma_create_id(ch, &c.id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		die("rdma_getaddrinfo");
	if (rdma_resolve_addr(c.id, NULL, ai->ai_dst_addr, 2000))
		die("rdma_resolve_addr");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(c.id, 2000))
		die("rdma_resolve_route");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	setup_qp(&c, RECVS);
	if (rdma_connect(c.id, &cp))
		die("rdma_connect");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	for (;;) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(c.cq, 1, &wc);

		if (n < 0)
			die("ibv_poll_cq");
		if (!n)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "peer_loss: receive failed: %s\n",
				ibv_wc_status_str(wc.status));
			return 1;
		}
		got += wc.byte_len;
		if (!said && got >= ready_mib << 20) {
			printf("ready %lld bytes\n", got);
			fflush(stdout);
			said = 1;
		}
		{
			struct ibv_sge sge = { (uintptr_t)c.buf + wc.wr_id * MSG_SIZE,
					       MSG_SIZE, c.mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = wc.wr_id, .sg_list = &sge,
						  .num_sge = 1 }, *bad;

			if (ibv_post_recv(c.id->qp, &wr, &bad))
				die("ibv_post_recv");
		}
	}
}

static int post_send(struct conn *c, uint64_t n)
{
	struct ibv_sge sge = { (uintptr_t)c->buf + (n % RECVS) * MSG_SIZE,
			       MSG_SIZE, c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = n, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(c->id->qp, &wr, &bad);
}

static int survivor(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_conn_param cp = { .retry_count = retry_cnt, .rnr_retry_count = 7 };
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *ai;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_event *ev;
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;
	struct conn c = { 0 };
	uint64_t posted = 0, done = 0, flushed = 0, good = 0;
	double last_ok, t_err = -1, t_disc = -1;
	enum ibv_wc_status head = IBV_WC_SUCCESS;
	uint8_t to = ack_timeout;
	int disconnected = 0;

	if (!ch || rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		die("rdma_getaddrinfo");
	if (rdma_bind_addr(listen_id, ai->ai_src_addr) || rdma_listen(listen_id, 1))
		die("rdma_bind_addr/listen");
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	c.id = ev->id;
	rdma_ack_cm_event(ev);
	setup_qp(&c, 0);
	if (rdma_set_option(c.id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &to, sizeof(to)))
		die("RDMA_OPTION_ID_ACK_TIMEOUT");
	if (rdma_accept(c.id, &cp))
		die("rdma_accept");
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	if (ibv_query_qp(c.id->qp, &qattr, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT, &qinit))
		die("ibv_query_qp");
	printf("connected: ack timeout %u, retry_cnt %u\n", qattr.timeout, qattr.retry_cnt);
	fflush(stdout);

	last_ok = now_ms();
	/* Stream until the peer is gone and every send has come back. */
	while (!(t_err >= 0 && done == posted && disconnected)) {
		if (t_err >= 0 && now_ms() - t_err > cm_wait_ms) {
			printf("no DISCONNECTED within %.0f ms of the error\n", cm_wait_ms);
			break;
		}
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		struct ibv_wc wc[WINDOW];
		int i, n;

		while (t_err < 0 && posted - done < WINDOW)
			if (post_send(&c, posted++))
				die("ibv_post_send");
		n = ibv_poll_cq(c.cq, WINDOW, wc);
		if (n < 0)
			die("ibv_poll_cq");
		for (i = 0; i < n; i++) {
			done++;
			if (wc[i].status == IBV_WC_SUCCESS) {
				last_ok = now_ms();
				good++;
				continue;
			}
			if (t_err < 0) {
				t_err = now_ms();
				head = wc[i].status;
				printf("error %s after %.0f ms\n",
				       ibv_wc_status_str(head), t_err - last_ok);
				fflush(stdout);
				/* What an application does on a dead peer. */
				rdma_disconnect(c.id);
			} else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
				flushed++;
			} else {
				printf("unexpected %s\n", ibv_wc_status_str(wc[i].status));
			}
		}
		/* CM events without blocking the completion loop. */
		if (!disconnected && poll(&pfd, 1, 0) == 1) {
			if (rdma_get_cm_event(ch, &ev))
				die("rdma_get_cm_event");
			if (ev->event == RDMA_CM_EVENT_DISCONNECTED) {
				disconnected = 1;
				t_disc = now_ms();
				printf("disconnected after %.0f ms (status %d)\n",
				       t_disc - last_ok, ev->status);
				fflush(stdout);
			} else {
				printf("cm event %s\n", rdma_event_str(ev->event));
			}
			rdma_ack_cm_event(ev);
		}
		if (!n)
			usleep(t_err < 0 ? 0 : 1000);
	}
	printf("flushed %llu of %llu posted\n", (unsigned long long)flushed,
	       (unsigned long long)posted);
	if (ibv_query_qp(c.id->qp, &qattr, IBV_QP_STATE, &qinit))
		die("ibv_query_qp");
	printf("qp_state %s\n", qattr.qp_state == IBV_QPS_ERR ? "ERR" : "not ERR");
	/* The head timed out; everything posted after it was flushed. */
	if (head == IBV_WC_RETRY_EXC_ERR && flushed + good + 1 == posted &&
	    qattr.qp_state == IBV_QPS_ERR && disconnected) {
		printf("result ok\n");
		return 0;
	}
	printf("result FAILED\n");
	return 1;
}

int main(int argc, char **argv)
{
	int opt, server = -1;

	while ((opt = getopt(argc, argv, "s:c:p:t:r:m:w:")) != -1) {
		switch (opt) {
		case 's':
			server = 1;
			addr = optarg;
			break;
		case 'c':
			server = 0;
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 't':
			ack_timeout = atoi(optarg);
			break;
		case 'r':
			retry_cnt = atoi(optarg);
			break;
		case 'm':
			ready_mib = atol(optarg);
			break;
		case 'w':
			cm_wait_ms = atof(optarg) * 1000;
			break;
		default:
			server = -1;
			optind = argc;
		}
	}
	if (server < 0 || !addr) {
		fprintf(stderr, "usage: peer_loss -s ADDR | -c ADDR [-p PORT] [-t ACK_TIMEOUT] [-r RETRY_CNT] [-m MIB] [-w SECS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	return server ? survivor() : victim();
}
