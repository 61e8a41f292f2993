// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The all-reduce transport over TCP, the baseline: the same algorithms
 * and buffers as RDMA, each put becoming a 24-byte header (sequence,
 * destination offset, length) and the payload on the peer's data
 * connection. Sockets are non-blocking and every wait drives all of them
 * (sends and receives), so ranks that all send at once never deadlock on
 * full socket buffers. A wait sleeps in poll() (as Gloo and MPI's TCP path
 * do), or with a spin time first polls without sleeping for that long.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "base/util.h"
#include "comm/transport.h"

#define HDR_LEN 24
#define TCP_MAGIC 0x54504152u	/* "TPAR" */

struct out_msg {
	unsigned char hdr[HDR_LEN];
	size_t src_off, len, done;	/* done counts header + payload */
	int par;
};

struct tcp_peer {
	int fd;
	const char *name;
	struct out_msg *q;	/* ring of queued messages */
	unsigned qcap, qhead, qlen;
	uint32_t sent;		/* sequence numbers */
	/* the message being received */
	unsigned char hdr[HDR_LEN];
	size_t hgot, dst_off, len, got;
	uint64_t recvd;
};

struct tcp_x {
	struct tp_xport x;
	struct tcp_peer p[TP_MAX_RANKS];
	uint64_t outstanding[2];
	int spin_us;
};

static int peer_error(struct tcp_x *t, int p, const char *what, int err)
{
	t->x.lost_peer = p;
	tp_err("TCP %s rank %d (%s): %s", what, p, t->p[p].name,
	       err ? strerror(err) :
	       "connection closed (the rank died or exited)");
	return -1;
}

/* Write what the socket takes from the head of P's queue. */
static int flush_out(struct tcp_x *t, int p)
{
	struct tcp_peer *pe = &t->p[p];

	while (pe->qlen) {
		struct out_msg *m = &pe->q[pe->qhead];
		struct iovec iov[2];
		int n = 0;
		ssize_t w;

		if (m->done < HDR_LEN) {
			iov[n].iov_base = m->hdr + m->done;
			iov[n++].iov_len = HDR_LEN - m->done;
			iov[n].iov_base = t->x.sbuf + m->src_off;
			iov[n++].iov_len = m->len;
		} else {
			iov[n].iov_base = t->x.sbuf + m->src_off +
					  (m->done - HDR_LEN);
			iov[n++].iov_len = m->len - (m->done - HDR_LEN);
		}
		w = sendmsg(pe->fd, &(struct msghdr){ .msg_iov = iov,
			    .msg_iovlen = (size_t)n }, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			return peer_error(t, p, "send to", errno);
		}
		m->done += (size_t)w;
		if (m->done < HDR_LEN + m->len)
			return 0;
		t->outstanding[m->par]--;
		pe->qhead = (pe->qhead + 1) % pe->qcap;
		pe->qlen--;
	}
	return 0;
}

/* Read what is there from P into the receive buffer. */
static int pull_in(struct tcp_x *t, int p)
{
	struct tcp_peer *pe = &t->p[p];

	for (;;) {
		ssize_t n;

		if (pe->hgot < HDR_LEN) {
			n = recv(pe->fd, pe->hdr + pe->hgot, HDR_LEN - pe->hgot,
				 MSG_DONTWAIT);
		} else {
			n = recv(pe->fd, t->x.rbuf + pe->dst_off + pe->got,
				 pe->len - pe->got, MSG_DONTWAIT);
		}
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 :
			       peer_error(t, p, "receive from", errno);
		if (n == 0 && (pe->hgot < HDR_LEN || pe->len > pe->got))
			return peer_error(t, p, "receive from", 0);
		if (pe->hgot < HDR_LEN) {
			pe->hgot += (size_t)n;
			if (pe->hgot < HDR_LEN)
				continue;
			pe->dst_off = be_get(pe->hdr + 8, 8);
			pe->len = be_get(pe->hdr + 16, 8);
			pe->got = 0;
			if (be_get(pe->hdr, 4) != TCP_MAGIC ||
			    (uint32_t)be_get(pe->hdr + 4, 4) !=
			    (uint32_t)(pe->recvd + 1) ||
			    pe->dst_off > t->x.rbuf_len ||
			    pe->len > t->x.rbuf_len - pe->dst_off) {
				tp_err("TCP: bad message from rank %d (%s): protocol error",
				       p, pe->name);
				t->x.lost_peer = p;
				return -1;
			}
		} else {
			pe->got += (size_t)n;
		}
		if (pe->got == pe->len) {
			pe->recvd++;
			pe->hgot = 0;
			pe->len = pe->got = 0;
		}
	}
}

/* One round: poll every connection, move what can move. */
static int progress(struct tcp_x *t, int timeout_ms)
{
	struct pollfd pf[TP_MAX_RANKS];
	int idx[TP_MAX_RANKS], n = 0, p, i, r;

	for (p = 0; p < t->x.nranks; p++) {
		if (p == t->x.rank)
			continue;
		pf[n].fd = t->p[p].fd;
		pf[n].events = POLLIN | (t->p[p].qlen ? POLLOUT : 0);
		idx[n++] = p;
	}
	r = poll(pf, (nfds_t)n, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	for (i = 0; i < n; i++) {
		if (!pf[i].revents)
			continue;
		if ((pf[i].revents & POLLOUT) && flush_out(t, idx[i]))
			return -1;
		if ((pf[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    pull_in(t, idx[i]))
			return -1;
	}
	return 0;
}

static int tcp_put(struct tp_xport *x, int peer, size_t src_off,
		   size_t dst_off, size_t len, int par)
{
	struct tcp_x *t = (struct tcp_x *)x;
	struct tcp_peer *pe = &t->p[peer];
	struct out_msg *m;

	if (pe->qlen == pe->qcap) {
		tp_err("TCP: send queue to rank %d full", peer);
		return -1;
	}
	m = &pe->q[(pe->qhead + pe->qlen) % pe->qcap];
	be_put(m->hdr, TCP_MAGIC, 4);
	be_put(m->hdr + 4, ++pe->sent, 4);
	be_put(m->hdr + 8, dst_off, 8);
	be_put(m->hdr + 16, len, 8);
	m->src_off = src_off;
	m->len = len;
	m->done = 0;
	m->par = par;
	pe->qlen++;
	t->outstanding[par]++;
	x->bytes_sent += len;
	x->peer_bytes[peer] += len;
	return flush_out(t, peer);
}

static int wait_done(const struct tcp_x *t, int peer, uint64_t count,
		     int par)
{
	return peer >= 0 ? t->p[peer].recvd >= count : t->outstanding[par] == 0;
}

/*
 * As the RDMA transport waits: no clock reading when the wait is over at
 * the first look (a send that went out whole), one per round after that.
 */
static int wait_for(struct tcp_x *t, int peer, uint64_t count, int par)
{
	uint64_t now, deadline, spin_end;

	if (wait_done(t, peer, count, par))
		return 0;
	now = tp_now_ns();
	deadline = now + (uint64_t)t->x.timeout_ms * 1000000u;
	spin_end = now + (uint64_t)t->spin_us * 1000u;
	for (;;) {
		if (progress(t, now < spin_end ? 0 : 100))
			return -1;
		if (wait_done(t, peer, count, par))
			return 0;
		now = tp_now_ns();
		if (now > deadline) {
			if (peer >= 0) {
				tp_err("TCP: no data from rank %d (%s) for %d ms",
				       peer, t->p[peer].name, t->x.timeout_ms);
				t->x.lost_peer = peer;
			} else {
				tp_err("TCP: sends did not drain for %d ms",
				       t->x.timeout_ms);
			}
			return -1;
		}
	}
}

static int tcp_wait_recv(struct tp_xport *x, int peer, uint64_t count)
{
	return wait_for((struct tcp_x *)x, peer, count, 0);
}

static int tcp_wait_sent(struct tp_xport *x, int par)
{
	return wait_for((struct tcp_x *)x, -1, 0, par);
}

static void tcp_destroy(struct tp_xport *x)
{
	struct tcp_x *t = (struct tcp_x *)x;
	int p;

	for (p = 0; p < x->nranks; p++)
		free(t->p[p].q);
	free(x->sbuf);
	free(x->rbuf);
	free(t);
}

static const struct tp_xport_ops tcp_ops = {
	.put = tcp_put,
	.wait_recv = tcp_wait_recv,
	.wait_sent = tcp_wait_sent,
	.destroy = tcp_destroy,
};

struct tp_xport *tp_tcp_new(const int *fds, const char (*names)[280],
			    int rank, int nranks, size_t sbuf_bytes,
			    size_t rbuf_bytes, int spin_us, int timeout_ms)
{
	struct tcp_x *t = tp_calloc(1, sizeof(*t));
	int p;

	t->x.ops = &tcp_ops;
	t->x.name = "tcp";
	t->x.rank = rank;
	t->x.nranks = nranks;
	t->x.sbuf = tp_alloc_pages(sbuf_bytes);
	t->x.rbuf = tp_alloc_pages(rbuf_bytes);
	t->x.sbuf_len = sbuf_bytes;
	t->x.rbuf_len = rbuf_bytes;
	t->x.timeout_ms = timeout_ms;
	t->x.lost_peer = -1;
	t->spin_us = spin_us;
	for (p = 0; p < nranks; p++) {
		t->p[p].fd = fds[p];
		t->p[p].name = names[p];
		if (p == rank)
			continue;
		t->x.link_mask |= 1ull << p;
		/* at most two calls of 2N-2 messages are in flight */
		t->p[p].qcap = (unsigned)(4 * nranks + 8);
		t->p[p].q = tp_calloc(t->p[p].qcap, sizeof(struct out_msg));
		fcntl(fds[p], F_SETFL, fcntl(fds[p], F_GETFL) | O_NONBLOCK);
	}
	return &t->x;
}
