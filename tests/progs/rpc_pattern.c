// SPDX-License-Identifier: GPL-2.0-only
/*
 * ggml's RPC transport pattern (ggml-org/ggml src/ggml-rpc/transport.cpp,
 * GGML_RPC_RDMA), reproduced so it can be measured and checked without
 * ggml: a TCP connection first; its local address, as a RoCE GID
 * (::ffff:a.b.c.d), picks the RDMA device and GID index (RoCE v2 preferred,
 * then v1); an RC QP whose path MTU is the port's active MTU; every message
 * then moves as SENDs of at most 256 KiB, copied into a registered bounce
 * buffer by the sender and out of one of 24 pre-posted 256 KiB receive
 * slots by the receiver; completions busy-polled; messages of at most 256
 * bytes sent inline.  ggml keeps one send in flight (one bounce buffer, it
 * waits for each completion); -w 4 keeps four (four bounce buffers, the
 * QP's max_send_wr), which is what issue 35 describes.  -t tcp moves the
 * same bytes over the TCP socket with the same chunking and copies (a
 * 256 KiB bounce buffer on each side).
 *
 *   server: rpc_pattern -l [-p PORT] [-B ADDR] [-S MS]
 *   client: rpc_pattern -c HOST [-p PORT] [-t rdma|tcp] [-s MIB] [-n ROUNDS]
 *                       [-w SENDS] [-d DEV] [-g GID_INDEX] [-v] [-S MS]
 *
 * The client sends its choice in a hello; the server serves that one
 * connection and exits.  Each round: an upload (client -> server, ended by
 * the server's 8-byte receipt) and a download (server -> client), timed;
 * between them, untimed, the server checks the upload and fills the
 * download, and the client checks the download afterwards.  Every byte is
 * checked; a round's pattern differs from every other's.  The client
 * prints a line per round and
 *   result TRANSPORT upload U download D MB/s (medians of N) data ok
 * (MB = 10^6 bytes).  Exit 0 only if every byte of every round was right.
 * -v (either side) adds where each side's chunk time went (copies, posting
 * or send(), waiting), averaged over the chunks it sent and received.
 * -S MS (either side, RDMA) makes that side's receiver stall: every 32nd
 * chunk it receives, it sleeps MS ms before copying the chunk out, as a
 * descheduled receiver would; the sender meanwhile fills the 24 receive
 * slots and meets RNR NAKs (the RNR storms of issue 35).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define CHUNK		(256u * 1024)	/* ggml: RDMA_CHUNK */
#define RX_DEPTH	24		/* ggml: RDMA_RX_DEPTH */
#define MAX_SENDS	4		/* ggml: max_send_wr */
#define MAX_INLINE	256		/* ggml: max_inline_data asked for */
#define MAX_MIB		1024
#define MAX_ROUNDS	64
#define STALL_SECS	30		/* no completion for this long: fail */
#define MAGIC		0x74627270u	/* "tbrp" */

struct hello {
	uint32_t magic;
	uint32_t rdma;		/* 1: move the data over RDMA */
	uint32_t qpn, psn;	/* RDMA only */
	uint8_t gid[16];
	uint64_t size;		/* bytes per message */
	uint32_t rounds;
	uint32_t ok;		/* client: sends in flight; server: 1 = RDMA ready */
};

struct conn {
	int fd;
	int rdma;
	unsigned int sends;	/* sends in flight at most */
	/* RDMA */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint8_t *tx, *rx;	/* sends x CHUNK, RX_DEPTH x CHUNK */
	unsigned long rx_chunks;	/* received, for -S */
	struct ibv_mr *tx_mr, *rx_mr;
	uint32_t max_inline;
	unsigned int tx_posted, tx_done;
	int gid_idx;
	enum ibv_mtu mtu;
	union ibv_gid gid;
	/* TCP */
	uint8_t *bounce;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * -v: where a chunk's time goes, per side and role (seconds summed over
 * chunks larger than the inline limit; three clock reads per chunk, about
 * 1 % of a 256 KiB chunk in the test guest).
 */
static int verbose;
static unsigned int stall_ms;	/* -S: the receiver sleeps this long ... */
#define STALL_EVERY	32	/* ... every this many chunks */
static struct {
	double copy, post, wait;
	unsigned long chunks;
} st_tx, st_rx;

static double tick(double *acc, double t0)
{
	double t = verbose ? now() : 0;

	*acc += t - t0;
	return t;
}

static void die(const char *what)
{
	fprintf(stderr, "rpc_pattern: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

static int full_io(int fd, void *buf, size_t len, int out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) :
				  recv(fd, p, len, MSG_WAITALL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* ggml's rdma_build_target_gid(): the socket's local address as a GID. */
static int local_gid(int fd, uint8_t gid[16])
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -1;
	memset(gid, 0, 16);
	if (ss.ss_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		return 0;
	}
	if (ss.ss_family == AF_INET6) {
		memcpy(gid, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
		return 0;
	}
	return -1;
}

static const char *gid_type_name(int t)
{
	return t == IBV_GID_TYPE_ROCE_V2 ? "RoCEv2" :
	       t == IBV_GID_TYPE_ROCE_V1 ? "RoCEv1" : "IB";
}

/* ggml's rdma_probe(): find the device and GID index, make the QP. */
static int rdma_probe(struct conn *c, const char *want_dev, int want_gid)
{
	struct ibv_device **devs;
	struct ibv_qp_init_attr qia = { 0 };
	struct ibv_port_attr pa;
	uint8_t target[16];
	int n, d, type = IBV_GID_TYPE_IB;
	const char *name = NULL;

	if (local_gid(c->fd, target))
		return -1;
	devs = ibv_get_device_list(&n);
	if (!devs) {
		fprintf(stderr, "rpc_pattern: no RDMA devices\n");
		return -1;
	}
	c->gid_idx = -1;
	for (d = 0; d < n && !c->ctx; d++) {
		struct ibv_context *ctx;
		int i, v1 = -1, v2 = -1;

		name = ibv_get_device_name(devs[d]);
		if (want_dev && strcmp(want_dev, name))
			continue;
		ctx = ibv_open_device(devs[d]);
		if (!ctx)
			continue;
		if (ibv_query_port(ctx, 1, &pa)) {
			ibv_close_device(ctx);
			continue;
		}
		if (want_gid >= 0) {
			struct ibv_gid_entry e;

			v2 = want_gid;
			if (!ibv_query_gid_ex(ctx, 1, want_gid, &e, 0))
				type = e.gid_type;
		}
		for (i = 0; want_gid < 0 && i < pa.gid_tbl_len; i++) {
			struct ibv_gid_entry e;

			if (ibv_query_gid_ex(ctx, 1, i, &e, 0) ||
			    memcmp(e.gid.raw, target, 16))
				continue;
			if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && v2 < 0)
				v2 = i;
			else if (e.gid_type == IBV_GID_TYPE_ROCE_V1 && v1 < 0)
				v1 = i;
		}
		if (want_gid < 0)
			type = v2 >= 0 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
		c->gid_idx = v2 >= 0 ? v2 : v1;
		if (c->gid_idx >= 0) {
			c->ctx = ctx;
			c->mtu = pa.active_mtu;
		} else {
			ibv_close_device(ctx);
		}
	}
	if (!c->ctx) {
		ibv_free_device_list(devs);
		fprintf(stderr, "rpc_pattern: no RDMA device has the socket's address as a GID\n");
		return -1;
	}
	name = ibv_get_device_name(devs[d - 1]);
	c->pd = ibv_alloc_pd(c->ctx);
	c->scq = ibv_create_cq(c->ctx, 16, NULL, NULL, 0);
	c->rcq = ibv_create_cq(c->ctx, RX_DEPTH + 4, NULL, NULL, 0);
	if (!c->pd || !c->scq || !c->rcq)
		die("pd/cq");
	qia.send_cq = c->scq;
	qia.recv_cq = c->rcq;
	qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_wr = MAX_SENDS;
	qia.cap.max_recv_wr = RX_DEPTH + 4;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	qia.cap.max_inline_data = MAX_INLINE;
	c->qp = ibv_create_qp(c->pd, &qia);
	if (!c->qp)
		die("ibv_create_qp");
	c->max_inline = qia.cap.max_inline_data;
	c->tx = aligned_alloc(4096, (size_t)c->sends * CHUNK);
	c->rx = aligned_alloc(4096, (size_t)RX_DEPTH * CHUNK);
	if (!c->tx || !c->rx)
		die("bounce buffers");
	c->tx_mr = ibv_reg_mr(c->pd, c->tx, (size_t)c->sends * CHUNK,
			      IBV_ACCESS_LOCAL_WRITE);
	c->rx_mr = ibv_reg_mr(c->pd, c->rx, (size_t)RX_DEPTH * CHUNK,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!c->tx_mr || !c->rx_mr)
		die("ibv_reg_mr");
	if (ibv_query_gid(c->ctx, 1, c->gid_idx, &c->gid))
		die("ibv_query_gid");
	printf("RDMA probed: dev=%s gid=%d %s qpn=%u inline=%u\n", name,
	       c->gid_idx, gid_type_name(type), c->qp->qp_num, c->max_inline);
	ibv_free_device_list(devs);
	return 0;
}

static int post_rx(struct conn *c, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->rx + (size_t)slot * CHUNK),
		.length = CHUNK,
		.lkey = c->rx_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->qp, &wr, &bad);
}

/* ggml's rdma_activate(), with its attributes. */
static int rdma_activate(struct conn *c, uint32_t qpn, uint32_t psn,
			 const uint8_t *gid)
{
	struct ibv_qp_attr a = { 0 };
	int i;

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_LOCAL_WRITE;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	for (i = 0; i < RX_DEPTH; i++)
		if (post_rx(c, i))
			return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->mtu;
	a.dest_qp_num = qpn;
	a.rq_psn = psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	memcpy(&a.ah_attr.grh.dgid, gid, 16);
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.sgid_index = c->gid_idx;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = c->qp->qp_num & 0xffffff;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		return -1;
	printf("RDMA activated: qpn=%u->%u mtu=%d rx_depth=%d sends=%u\n",
	       c->qp->qp_num, qpn, 128 << c->mtu, RX_DEPTH, c->sends);
	return 0;
}

/* Busy-poll one completion (ggml's rdma_poll), with a stall deadline. */
static int rdma_poll(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double deadline = 0;
	unsigned long s;

	for (s = 0;; s++) {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n > 0) {
			if (wc->status != IBV_WC_SUCCESS)
				fprintf(stderr, "rpc_pattern: completion status %d (%s)\n",
					wc->status, ibv_wc_status_str(wc->status));
			return wc->status == IBV_WC_SUCCESS ? 0 : -1;
		}
		if (n < 0)
			return -1;
		if ((s & 0xffff) == 0) {
			if (!deadline)
				deadline = now() + STALL_SECS;
			else if (now() > deadline) {
				fprintf(stderr, "rpc_pattern: no completion in %d s\n",
					STALL_SECS);
				return -1;
			}
		}
	}
}

static int rdma_send(struct conn *c, const void *data, size_t size)
{
	const uint8_t *src = data;
	struct ibv_wc wc;

	do {
		size_t chunk = size < CHUNK ? size : CHUNK;
		unsigned int slot = c->tx_posted % c->sends;
		struct ibv_sge sge = { .length = chunk };
		struct ibv_send_wr wr = { .opcode = IBV_WR_SEND, .sg_list = &sge,
					  .num_sge = 1,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;

		/* Every bounce buffer busy: the oldest send must complete. */
		if (c->tx_posted - c->tx_done == c->sends) {
			double t = verbose ? now() : 0;

			if (rdma_poll(c->scq, &wc))
				return -1;
			tick(&st_tx.wait, t);
			c->tx_done++;
		}
		if (chunk <= c->max_inline) {
			sge.addr = (uintptr_t)src;
			wr.send_flags |= IBV_SEND_INLINE;
		} else {
			double t = verbose ? now() : 0;

			memcpy(c->tx + (size_t)slot * CHUNK, src, chunk);
			sge.addr = (uintptr_t)(c->tx + (size_t)slot * CHUNK);
			sge.lkey = c->tx_mr->lkey;
			t = tick(&st_tx.copy, t);
			if (ibv_post_send(c->qp, &wr, &bad))
				return -1;
			tick(&st_tx.post, t);
			st_tx.chunks++;
			c->tx_posted++;
			src += chunk;
			size -= chunk;
			continue;
		}
		if (ibv_post_send(c->qp, &wr, &bad))
			return -1;
		c->tx_posted++;
		src += chunk;
		size -= chunk;
	} while (size);
	/* As ggml: the data is the peer's when send_data returns. */
	while (c->tx_done != c->tx_posted) {
		double t = verbose ? now() : 0;

		if (rdma_poll(c->scq, &wc))
			return -1;
		tick(&st_tx.wait, t);
		c->tx_done++;
	}
	return 0;
}

static int rdma_recv(struct conn *c, void *data, size_t size)
{
	uint8_t *dst = data;
	struct ibv_wc wc;

	while (size) {
		double t = verbose ? now() : 0;
		int slot;

		if (rdma_poll(c->rcq, &wc))
			return -1;
		if (wc.byte_len > c->max_inline)
			t = tick(&st_rx.wait, t);
		slot = (int)wc.wr_id;
		if (stall_ms && wc.byte_len > c->max_inline &&
		    ++c->rx_chunks % STALL_EVERY == 0)
			usleep(stall_ms * 1000);
		if (slot < 0 || slot >= RX_DEPTH || wc.byte_len > size) {
			fprintf(stderr, "rpc_pattern: message of %u bytes where %zu were left\n",
				wc.byte_len, size);
			return -1;
		}
		memcpy(dst, c->rx + (size_t)slot * CHUNK, wc.byte_len);
		if (wc.byte_len > c->max_inline) {
			t = tick(&st_rx.copy, t);
			st_rx.chunks++;
		}
		if (post_rx(c, slot))
			return -1;
		if (wc.byte_len > c->max_inline)
			tick(&st_rx.post, t);
		dst += wc.byte_len;
		size -= wc.byte_len;
	}
	return 0;
}

/* TCP: the same chunks and the same copies through a bounce buffer. */
static int tcp_send(struct conn *c, const void *data, size_t size)
{
	const uint8_t *src = data;

	do {
		size_t chunk = size < CHUNK ? size : CHUNK;

		double t = verbose ? now() : 0;

		memcpy(c->bounce, src, chunk);
		t = tick(&st_tx.copy, t);
		if (full_io(c->fd, c->bounce, chunk, 1))
			return -1;
		if (chunk > MAX_INLINE) {
			tick(&st_tx.post, t);
			st_tx.chunks++;
		}
		src += chunk;
		size -= chunk;
	} while (size);
	return 0;
}

static int tcp_recv(struct conn *c, void *data, size_t size)
{
	uint8_t *dst = data;

	while (size) {
		size_t chunk = size < CHUNK ? size : CHUNK;

		double t = verbose ? now() : 0;

		if (full_io(c->fd, c->bounce, chunk, 0))
			return -1;
		if (chunk > MAX_INLINE)
			t = tick(&st_rx.wait, t);
		memcpy(dst, c->bounce, chunk);
		if (chunk > MAX_INLINE) {
			tick(&st_rx.copy, t);
			st_rx.chunks++;
		}
		dst += chunk;
		size -= chunk;
	}
	return 0;
}

static int send_data(struct conn *c, const void *d, size_t n)
{
	return c->rdma ? rdma_send(c, d, n) : tcp_send(c, d, n);
}

static int recv_data(struct conn *c, void *d, size_t n)
{
	return c->rdma ? rdma_recv(c, d, n) : tcp_recv(c, d, n);
}

/* The bytes of round R, direction DIR: different for every round. */
static void fill(uint8_t *p, size_t n, uint32_t r, int dir)
{
	uint64_t seed = ((uint64_t)r << 33 | (uint64_t)dir << 32 | 0x5bd1e995) *
			0x9E3779B97F4A7C15ull;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t v = seed ^ (i * 0xff51afd7ed558ccdull);

		memcpy(p + i, &v, 8);
	}
	for (; i < n; i++)
		p[i] = (uint8_t)(seed >> (i % 8 * 8));
}

/* Offset of the first wrong byte, or -1. */
static long check(const uint8_t *p, uint8_t *want, size_t n, uint32_t r, int dir)
{
	size_t i;

	fill(want, n, r, dir);
	if (!memcmp(p, want, n))
		return -1;
	for (i = 0; p[i] == want[i]; i++)
		;
	return (long)i;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(n - 1) / 2];
}

enum { OP_UP = 1, OP_CHECK, OP_DOWN, OP_BYE };

struct req {
	uint32_t op, round;
	uint64_t size;
};

static int serve(struct conn *c, size_t size)
{
	uint8_t *buf = malloc(size), *want = malloc(size);
	uint64_t status = 0;	/* rounds whose upload was wrong */
	struct req q;

	if (!buf || !want)
		die("malloc");
	for (;;) {
		if (recv_data(c, &q, sizeof(q)))
			return -1;
		if (q.size != size && q.op != OP_BYE)
			return -1;
		switch (q.op) {
		case OP_UP: {
			uint64_t got = size;

			if (recv_data(c, buf, size) ||
			    send_data(c, &got, sizeof(got)))
				return -1;
			break;
		}
		case OP_CHECK: {	/* untimed: check the upload, fill the download */
			long bad = check(buf, want, size, q.round, 0);

			if (bad >= 0) {
				fprintf(stderr, "rpc_pattern: round %u upload wrong from byte %ld\n",
					q.round, bad);
				status++;
			}
			fill(buf, size, q.round, 1);
			if (send_data(c, &status, sizeof(status)))
				return -1;
			break;
		}
		case OP_DOWN:
			if (send_data(c, buf, size))
				return -1;
			break;
		case OP_BYE:
			send_data(c, &status, sizeof(status));
			free(buf);
			free(want);
			return status ? 1 : 0;
		default:
			return -1;
		}
	}
}

static int run_client(struct conn *c, size_t size, unsigned int rounds)
{
	uint8_t *buf = malloc(size), *want = malloc(size);
	double up[MAX_ROUNDS], down[MAX_ROUNDS];
	uint64_t status, bad_rounds = 0;
	unsigned int r;

	if (!buf || !want)
		die("malloc");
	for (r = 0; r < rounds; r++) {
		struct req q = { OP_UP, r, size };
		double t0;
		long bad;

		fill(buf, size, r, 0);
		t0 = now();
		if (send_data(c, &q, sizeof(q)) || send_data(c, buf, size) ||
		    recv_data(c, &status, sizeof(status)) || status != size)
			return -1;
		up[r] = size / (now() - t0) / 1e6;
		q.op = OP_CHECK;
		if (send_data(c, &q, sizeof(q)) ||
		    recv_data(c, &status, sizeof(status)))
			return -1;
		memset(buf, 0, size);
		q.op = OP_DOWN;
		t0 = now();
		if (send_data(c, &q, sizeof(q)) || recv_data(c, buf, size))
			return -1;
		down[r] = size / (now() - t0) / 1e6;
		bad = check(buf, want, size, r, 1);
		if (bad >= 0) {
			fprintf(stderr, "rpc_pattern: round %u download wrong from byte %ld\n",
				r, bad);
			bad_rounds++;
		}
		printf("round %u: upload %.1f MB/s download %.1f MB/s\n", r,
		       up[r], down[r]);
	}
	{
		struct req q = { OP_BYE, r, 0 };

		if (send_data(c, &q, sizeof(q)) ||
		    recv_data(c, &status, sizeof(status)))
			return -1;
	}
	bad_rounds += status;
	printf("result %s upload %.1f download %.1f MB/s (medians of %u, %zu MiB, %u KiB chunks, %u sends in flight) data %s\n",
	       c->rdma ? "rdma" : "tcp", median(up, rounds), median(down, rounds),
	       rounds, size >> 20, CHUNK >> 10, c->rdma ? c->sends : 1,
	       bad_rounds ? "WRONG" : "ok");
	free(buf);
	free(want);
	return bad_rounds ? 1 : 0;
}

static int tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int fd, one = 1, tries;

	if (getaddrinfo(host, port, &hints, &ai))
		die("getaddrinfo");
	for (tries = 0;; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket");
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		close(fd);
		if (tries == 100)
			die("connect");
		usleep(100000);	/* the server may not listen yet */
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int tcp_accept(const char *bind_addr, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd, one = 1;

	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = bind_addr ? inet_addr(bind_addr) : INADDR_ANY;
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		die("bind/listen");
	printf("listening on port %d\n", port);
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(lfd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* -v: per-chunk averages of both roles of this side. */
static void print_stats(const char *side, int rdma)
{
	if (!verbose)
		return;
	if (st_tx.chunks)
		printf("%s sends: %lu chunks, per chunk: copy in %.1f us, %s %.1f us, waiting for completions %.1f us\n",
		       side, st_tx.chunks, st_tx.copy / st_tx.chunks * 1e6,
		       rdma ? "ibv_post_send" : "send()", st_tx.post / st_tx.chunks * 1e6,
		       st_tx.wait / st_tx.chunks * 1e6);
	if (st_rx.chunks)
		printf("%s receives: %lu chunks, per chunk: waiting %.1f us (%s), copy out %.1f us, %s %.1f us\n",
		       side, st_rx.chunks, st_rx.wait / st_rx.chunks * 1e6,
		       rdma ? "polling the CQ" : "in recv()", st_rx.copy / st_rx.chunks * 1e6,
		       rdma ? "ibv_post_recv" : "-", st_rx.post / st_rx.chunks * 1e6);
}

static void usage(void)
{
	fprintf(stderr, "usage: rpc_pattern -l [-p PORT] [-B ADDR] [-d DEV] [-g GID] [-S MS]\n"
		"       rpc_pattern -c HOST [-p PORT] [-t rdma|tcp] [-s MIB] [-n ROUNDS] [-w 1-4] [-d DEV] [-g GID] [-v] [-S MS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct conn c = { .fd = -1, .sends = MAX_SENDS };
	const char *host = NULL, *dev = NULL, *bind_addr = NULL;
	char port[16] = "18515";
	int listen_mode = 0, want_gid = -1, opt, rc;
	unsigned long mib = 32, rounds = 3;
	struct hello h = { 0 }, peer;

	c.rdma = 1;
	while ((opt = getopt(argc, argv, "lc:p:B:t:s:n:w:d:g:vS:")) != -1) {
		switch (opt) {
		case 'v': verbose = 1; break;
		case 'S': stall_ms = strtoul(optarg, NULL, 0); break;
		case 'l': listen_mode = 1; break;
		case 'c': host = optarg; break;
		case 'p': snprintf(port, sizeof(port), "%s", optarg); break;
		case 'B': bind_addr = optarg; break;
		case 't':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "rdma"))
				usage();
			c.rdma = !strcmp(optarg, "rdma");
			break;
		case 's': mib = strtoul(optarg, NULL, 0); break;
		case 'n': rounds = strtoul(optarg, NULL, 0); break;
		case 'w': c.sends = strtoul(optarg, NULL, 0); break;
		case 'd': dev = optarg; break;
		case 'g': want_gid = atoi(optarg); break;
		default: usage();
		}
	}
	if (listen_mode == !!host || !mib || mib > MAX_MIB || !rounds ||
	    rounds > MAX_ROUNDS || !c.sends || c.sends > MAX_SENDS)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (host) {
		c.fd = tcp_connect(host, port);
		h.magic = MAGIC;
		h.rdma = c.rdma;
		h.size = (uint64_t)mib << 20;
		h.rounds = rounds;
		if (c.rdma) {
			if (rdma_probe(&c, dev, want_gid))
				return 1;
			h.qpn = c.qp->qp_num;
			h.psn = c.qp->qp_num & 0xffffff;
			memcpy(h.gid, c.gid.raw, 16);
		}
		h.ok = c.sends;	/* to the server: its sends in flight */
		if (full_io(c.fd, &h, sizeof(h), 1) || full_io(c.fd, &peer, sizeof(peer), 0))
			die("hello");
		if (c.rdma && (!peer.ok || rdma_activate(&c, peer.qpn, peer.psn, peer.gid)))
			die("RDMA activation");
		c.bounce = malloc(CHUNK);
		rc = run_client(&c, (size_t)mib << 20, rounds);
		print_stats("client", c.rdma);
	} else {
		c.fd = tcp_accept(bind_addr, atoi(port));
		if (full_io(c.fd, &h, sizeof(h), 0) || h.magic != MAGIC ||
		    !h.size || h.size > (uint64_t)MAX_MIB << 20 ||
		    !h.ok || h.ok > MAX_SENDS)
			die("hello");
		c.rdma = h.rdma;
		c.sends = h.ok;
		peer = h;
		memset(&h, 0, sizeof(h));
		h.magic = MAGIC;
		if (c.rdma) {
			if (!rdma_probe(&c, dev, want_gid)) {
				h.qpn = c.qp->qp_num;
				h.psn = c.qp->qp_num & 0xffffff;
				memcpy(h.gid, c.gid.raw, 16);
				/* Our receives are posted at INIT, before the client may send. */
				h.ok = !rdma_activate(&c, peer.qpn, peer.psn, peer.gid);
			}
		}
		if (full_io(c.fd, &h, sizeof(h), 1))
			die("hello");
		if (c.rdma && !h.ok)
			die("RDMA activation");
		c.bounce = malloc(CHUNK);
		rc = serve(&c, peer.size);
		print_stats("server", c.rdma);
		if (rc < 0)
			fprintf(stderr, "rpc_pattern: server: connection failed\n");
	}
	if (rc < 0)
		fprintf(stderr, "rpc_pattern: transfer failed\n");
	return rc ? 1 : 0;
}
