// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* TCP rendezvous of the ranks; see rendezvous.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"
#include "comm/rendezvous.h"

#define HS_MAGIC 0x5450524eu	/* "TPRN" */
#define HS_VERSION 1
#define HS_LEN 32
/* KIND_REFUSED: the answer of a job that has all its ranks; its hash
 * field is the length of the text that follows */
enum { KIND_CTRL = 0, KIND_DATA = 1, KIND_REFUSED = 2 };
#define REFUSAL_MAX 600

/* One host of an entry ("[v6]" without its brackets) into OUT. */
static int put_host(const char *h, size_t n, char *out, size_t cap)
{
	if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
		h++;
		n -= 2;
	}
	if (!n || n >= cap || memchr(h, '[', n) || memchr(h, ']', n))
		return -1;
	memcpy(out, h, n);
	out[n] = 0;
	return 0;
}

/* ENTRY (LEN bytes): "h|h2|...:port" into *PA. */
static int parse_entry(const char *e, size_t len, struct tp_peer_addr *pa)
{
	const char *colon = NULL, *p, *h;
	int i = 0;

	memset(pa, 0, sizeof(*pa));
	for (p = e; p < e + len; p++)	/* the last ':' outside brackets */
		if (*p == '[')
			p = memchr(p, ']', (size_t)(e + len - p)) ?:
			    e + len - 1;
		else if (*p == ':')
			colon = p;
	if (!colon || colon == e || colon + 1 >= e + len ||
	    (size_t)(e + len - colon - 1) >= sizeof(pa->port))
		return -1;
	memcpy(pa->port, colon + 1, (size_t)(e + len - colon - 1));
	for (h = e; h < colon; i++) {
		const char *bar = memchr(h, '|', (size_t)(colon - h));
		size_t n = (size_t)((bar ? bar : colon) - h);

		if (i == TP_MAX_ADDRS ||
		    put_host(h, n, i ? pa->alt[i - 1] : pa->host,
			     i ? sizeof(pa->alt[0]) : sizeof(pa->host)))
			return -1;
		h = bar ? bar + 1 : colon;
		if (bar && h == colon)
			return -1;
	}
	pa->nalt = i - 1;
	return 0;
}

int tp_parse_peers(const char *list, struct tp_peer_addr *out, int max,
		   char *err, size_t errlen)
{
	const char *p = list;
	int n = 0;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (n == max) {
			snprintf(err, errlen, "more than %d peers", max);
			return -1;
		}
		if (parse_entry(p, len, &out[n])) {
			snprintf(err, errlen, "bad peer '%.*s' (expected host:port or host|host...:port, at most %d hosts)",
				 (int)(len < 100 ? len : 100), p, TP_MAX_ADDRS);
			return -1;
		}
		n++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!n)
		snprintf(err, errlen, "empty peer list");
	return n ? n : -1;
}

const char *tp_peer_host(const struct tp_peer_addr *pa, int i)
{
	return i ? pa->alt[i - 1] : pa->host;
}

int tp_peer_pick(const struct tp_peer_addr *pa, struct tp_route *route)
{
	int i, routed = -1;

	for (i = 0; i <= pa->nalt; i++) {
		struct tp_route r;

		/* another host's other address that is also ours (a NAT
		 * address every virtual machine has) is no way to it */
		if (tp_route_get(tp_peer_host(pa, i), &r) || (i && r.local))
			continue;
		if (r.onlink) {
			*route = r;
			return i;
		}
		if (routed < 0) {
			routed = i;
			*route = r;
		}
	}
	if (routed >= 0)
		return routed;
	memset(route, 0, sizeof(*route));
	return 0;
}

int tp_listen(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE,
	}, *res, *ai;
	int fd = -1, one = 1, e;

	e = getaddrinfo(host, port, &hints, &res);
	if (e) {
		snprintf(err, errlen, "listen on %s:%s: %s", host ? host : "*",
			 port, gai_strerror(e));
		return -1;
	}
	/* prefer IPv6 (dual-stack), then IPv4 */
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 128))
			break;
		e = errno;
		close(fd);
		fd = -1;
		errno = e;
	}
	if (fd < 0)
		snprintf(err, errlen, "listen on %s:%s: %s", host ? host : "*",
			 port, strerror(errno));
	freeaddrinfo(res);
	return fd;
}

int tp_wait_fd(int fd, short ev, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = ev };
		uint64_t now = tp_now_ns();
		int r;

		if (now >= deadline) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&p, 1, (int)((deadline - now) / 1000000u) + 1);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

int tp_read_full(int fd, void *buf, size_t len, uint64_t deadline)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, (char *)buf + got, len - got,
				 MSG_DONTWAIT);

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0) {
			errno = EPIPE;
			return -1;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		if (tp_wait_fd(fd, POLLIN, deadline))
			return -1;
	}
	return 0;
}

int tp_write_full(int fd, const void *buf, size_t len, uint64_t deadline)
{
	size_t put = 0;

	while (put < len) {
		ssize_t n = send(fd, (const char *)buf + put, len - put,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			put += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (tp_wait_fd(fd, POLLOUT, deadline))
			return -1;
	}
	return 0;
}

struct hs {
	uint32_t magic, version, kind, from, to, nranks;
	uint64_t hash;
};

static void hs_encode(unsigned char *b, const struct hs *h)
{
	memset(b, 0, HS_LEN);
	be_put(b, h->magic, 4);
	be_put(b + 4, h->version, 4);
	be_put(b + 8, h->kind, 4);
	be_put(b + 12, h->from, 4);
	be_put(b + 16, h->to, 4);
	be_put(b + 20, h->nranks, 4);
	be_put(b + 24, h->hash, 8);
}

static void hs_decode(const unsigned char *b, struct hs *h)
{
	h->magic = (uint32_t)be_get(b, 4);
	h->version = (uint32_t)be_get(b + 4, 4);
	h->kind = (uint32_t)be_get(b + 8, 4);
	h->from = (uint32_t)be_get(b + 12, 4);
	h->to = (uint32_t)be_get(b + 16, 4);
	h->nranks = (uint32_t)be_get(b + 20, 4);
	h->hash = be_get(b + 24, 8);
}

static void tune(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
}

/* Check a peer's handshake; names the mismatch. */
static int hs_check(struct tp_rdv *r, const struct hs *h, int expect_from,
		    uint64_t hash, const char *who)
{
	if (h->magic != HS_MAGIC || h->version != HS_VERSION) {
		tp_err("%s is not a tprun rank of this version", who);
		return -1;
	}
	if (h->nranks != (uint32_t)r->nranks) {
		tp_err("%s runs with %u ranks, we with %d", who, h->nranks,
		       r->nranks);
		return -1;
	}
	if (h->to != (uint32_t)r->rank ||
	    (expect_from >= 0 && h->from != (uint32_t)expect_from)) {
		tp_err("%s says it is rank %u talking to rank %u; expected rank %d talking to rank %d: check --rank and --peers",
		       who, h->from, h->to, expect_from, r->rank);
		return -1;
	}
	if (h->hash != hash) {
		tp_err("rank %u (%s) runs a different configuration (hash %016llx, ours %016llx): every rank needs the same model, shape, seed, prompt and generation flags",
		       h->from, who, (unsigned long long)h->hash,
		       (unsigned long long)hash);
		return -1;
	}
	return 0;
}

/* One non-blocking connect attempt of at most a second. */
static int try_connect(const struct addrinfo *ai, uint64_t deadline, int *err)
{
	uint64_t d = tp_now_ns() + 1000000000u;
	socklen_t sl = sizeof(int);
	int fd, e = 0;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
		return fd;
	if (errno != EINPROGRESS) {
		*err = errno;
	} else if (tp_wait_fd(fd, POLLOUT, d < deadline ? d : deadline)) {
		*err = errno;
	} else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) || e) {
		*err = e ? e : errno;
	} else {
		return fd;
	}
	close(fd);
	return -1;
}

int tp_dial(const char *host, const char *port, uint64_t deadline,
	    int *last_errno)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	}, *res = NULL, *ai;
	int fd = -1, e;

	*last_errno = ETIMEDOUT;
	for (;;) {
		e = getaddrinfo(host, port, &hints, &res);
		if (e) {
			*last_errno = 0;
			return -2 - e;
		}
		for (ai = res; ai && fd < 0; ai = ai->ai_next)
			fd = try_connect(ai, deadline, last_errno);
		freeaddrinfo(res);
		if (fd >= 0) {
			tune(fd);
			return fd;
		}
		if (tp_now_ns() >= deadline)
			return -1;
		usleep(100000);
	}
}

int tp_sock_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

static int connect_one(struct tp_rdv *r, const struct tp_peer_addr *pa,
		       const char *host, int peer, int kind, uint64_t hash,
		       uint64_t deadline)
{
	struct hs h = {
		.magic = HS_MAGIC, .version = HS_VERSION, .kind = (uint32_t)kind,
		.from = (uint32_t)r->rank, .to = (uint32_t)peer,
		.nranks = (uint32_t)r->nranks, .hash = hash,
	}, back;
	unsigned char b[HS_LEN];
	int fd, last;

	fd = tp_dial(host, pa->port, deadline, &last);
	if (fd < -1) {
		tp_err("rank %d (%s): %s", peer, r->name[peer],
		       gai_strerror(-2 - fd));
		return -1;
	}
	if (fd < 0) {
		tp_err("cannot connect to rank %d at %s: %s", peer,
		       r->name[peer], strerror(last));
		return -1;
	}
	hs_encode(b, &h);
	if (tp_write_full(fd, b, HS_LEN, deadline) ||
	    tp_read_full(fd, b, HS_LEN, deadline)) {
		tp_err("handshake with rank %d at %s: %s", peer, r->name[peer],
		       errno == EPIPE ? "it closed the connection (it refused us, see its messages)" :
		       strerror(errno));
		close(fd);
		return -1;
	}
	hs_decode(b, &back);
	if (back.magic == HS_MAGIC && back.kind == KIND_REFUSED &&
	    back.hash < REFUSAL_MAX) {
		char text[REFUSAL_MAX];

		if (tp_read_full(fd, text, (size_t)back.hash, deadline))
			snprintf(text, sizeof(text), "(its reason was cut short)");
		else
			text[back.hash] = 0;
		tp_err("rank %d at %s refused this rank: %s", peer,
		       r->name[peer], text);
		close(fd);
		return -1;
	}
	/* the reply comes from the peer: from/to swapped */
	if (hs_check(r, &back, peer, hash, r->name[peer])) {
		close(fd);
		return -1;
	}
	if (kind == KIND_CTRL)
		r->ctrl[peer] = fd;
	else
		r->data[peer] = fd;
	return 0;
}

/*
 * Until a connection waits on LFD (0), the deadline passes (-1), or a
 * rank we are already connected to goes away (-2: it failed, so will
 * we; no point waiting for the others). QUIET: ranks that sent data
 * already (the next phase), no longer watched.
 */
static int wait_accept(struct tp_rdv *r, int lfd, uint64_t deadline,
		       char *quiet)
{
	for (;;) {
		struct pollfd pf[TP_MAX_RANKS + 1] = { { .fd = lfd, .events = POLLIN } };
		int who[TP_MAX_RANKS + 1], n = 1, p, i;
		uint64_t now = tp_now_ns();

		for (p = 0; p < r->nranks; p++)
			if (r->ctrl[p] >= 0 && !quiet[p]) {
				pf[n].fd = r->ctrl[p];
				pf[n].events = POLLIN;
				who[n++] = p;
			}
		if (now >= deadline)
			return -1;
		if (poll(pf, (nfds_t)n, (int)((deadline - now) / 1000000u) + 1) < 0 &&
		    errno != EINTR)
			return -1;
		for (i = 1; i < n; i++) {
			char c;

			if (!pf[i].revents)
				continue;
			if (recv(pf[i].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0) {
				quiet[who[i]] = 1;
				continue;
			}
			tp_err("rank %d (%s) went away during the rendezvous (see its messages)",
			       who[i], r->name[who[i]]);
			return -2;
		}
		if (pf[0].revents)
			return 0;
	}
}

static int accept_all(struct tp_rdv *r, int lfd, uint64_t hash,
		      uint64_t deadline)
{
	int want = 2 * (r->nranks - 1 - r->rank), got = 0;
	char quiet[TP_MAX_RANKS] = { 0 };

	while (got < want) {
		unsigned char b[HS_LEN];
		struct hs h, me;
		char who[64];
		int fd, *slot;

		switch (wait_accept(r, lfd, deadline, quiet)) {
		case -1: {
			int p;

			for (p = r->rank + 1; p < r->nranks; p++)
				if (r->ctrl[p] < 0 || r->data[p] < 0)
					break;
			tp_err("rank %d (%s) did not connect within the rendezvous timeout",
			       p, r->name[p]);
			return -1;
		}
		case -2:
			return -1;
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		tune(fd);
		if (tp_read_full(fd, b, HS_LEN, deadline)) {
			close(fd);
			continue;	/* not one of ours, or gone */
		}
		hs_decode(b, &h);
		snprintf(who, sizeof(who), "the rank connecting as %u",
			 h.from);
		if (hs_check(r, &h, -1, hash, h.from < (uint32_t)r->nranks ?
			     r->name[h.from] : who)) {
			close(fd);
			return -1;
		}
		if (h.from <= (uint32_t)r->rank || h.kind > KIND_DATA) {
			tp_err("unexpected connection from rank %u", h.from);
			close(fd);
			return -1;
		}
		slot = h.kind == KIND_CTRL ? &r->ctrl[h.from] : &r->data[h.from];
		if (*slot >= 0) {
			tp_err("rank %u connected twice: two ranks use the same --rank?",
			       h.from);
			close(fd);
			return -1;
		}
		me = (struct hs){
			.magic = HS_MAGIC, .version = HS_VERSION,
			.kind = h.kind, .from = (uint32_t)r->rank,
			.to = h.from, .nranks = (uint32_t)r->nranks,
			.hash = hash,
		};
		hs_encode(b, &me);
		if (tp_write_full(fd, b, HS_LEN, deadline)) {
			close(fd);
			continue;
		}
		*slot = fd;
		got++;
	}
	return 0;
}

int tp_rdv_connect(struct tp_rdv *r, int rank, int nranks,
		   const struct tp_peer_addr *peers, int listen_fd,
		   uint64_t cfg_hash, int timeout_ms)
{
	uint64_t deadline = tp_now_ns() + (uint64_t)timeout_ms * 1000000u;
	const char *host[TP_MAX_RANKS];
	int p;

	memset(r, 0, sizeof(*r));
	r->rank = rank;
	r->nranks = nranks;
	for (p = 0; p < nranks; p++) {
		/* each peer at its address on our link to it, if any */
		host[p] = tp_peer_host(&peers[p], p == rank ? 0 :
				       tp_peer_pick(&peers[p], &r->route[p]));
		r->ctrl[p] = r->data[p] = -1;
		snprintf(r->name[p], sizeof(r->name[p]), strchr(host[p], ':') ?
			 "[%s]:%s" : "%s:%s", host[p], peers[p].port);
	}
	/* lower ranks first: they are connecting downwards or accepting */
	for (p = 0; p < rank; p++)
		if (connect_one(r, &peers[p], host[p], p, KIND_CTRL, cfg_hash,
				deadline) ||
		    connect_one(r, &peers[p], host[p], p, KIND_DATA, cfg_hash,
				deadline))
			goto fail;
	if (accept_all(r, listen_fd, cfg_hash, deadline))
		goto fail;
	return 0;
fail:
	tp_rdv_close(r);
	return -1;
}

int tp_rdv_xchg(struct tp_rdv *r, int peer, const void *out, void *in,
		size_t len, int timeout_ms)
{
	uint64_t deadline = tp_now_ns() + (uint64_t)timeout_ms * 1000000u;

	if (tp_write_full(r->ctrl[peer], out, len, deadline) ||
	    tp_read_full(r->ctrl[peer], in, len, deadline)) {
		tp_err("exchange with rank %d (%s): %s", peer, r->name[peer],
		       errno == EPIPE ? "it closed the connection (died?)" :
		       strerror(errno));
		return -1;
	}
	return 0;
}

int tp_rdv_barrier(struct tp_rdv *r, int timeout_ms)
{
	unsigned char o = 'R', i;
	int p;

	for (p = 0; p < r->nranks; p++)
		if (p != r->rank && tp_rdv_xchg(r, p, &o, &i, 1, timeout_ms))
			return -1;
	return 0;
}

void tp_rdv_close(struct tp_rdv *r)
{
	int p;

	for (p = 0; p < r->nranks; p++) {
		if (r->ctrl[p] >= 0)
			close(r->ctrl[p]);
		if (r->data[p] >= 0)
			close(r->data[p]);
		r->ctrl[p] = r->data[p] = -1;
	}
}

struct turn_away {
	int fd, rank, nranks;
	char name[280];
};

/*
 * After the mesh is complete, a rank keeps its port and tells whoever
 * still connects (the same rank started twice, or a rank that comes back
 * after the others gave it up) why it is refused, instead of leaving it
 * to time out against a closed port.
 */
static void *turn_away(void *arg)
{
	struct turn_away *t = arg;

	for (;;) {
		unsigned char b[HS_LEN];
		struct hs h, no;
		char text[REFUSAL_MAX];
		uint64_t deadline;
		int fd = accept4(t->fd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		deadline = tp_now_ns() + 2000000000ull;
		if (tp_read_full(fd, b, HS_LEN, deadline)) {
			close(fd);
			continue;
		}
		hs_decode(b, &h);
		if (h.magic != HS_MAGIC) {
			close(fd);
			continue;
		}
		snprintf(text, sizeof(text),
			 "the job of rank %d (%s) has all its %d ranks and runs: rank %u came late (after the job started, or after the others gave it up) or was started twice",
			 t->rank, t->name, t->nranks, h.from);
		tp_err("%s", text);
		no = (struct hs){
			.magic = HS_MAGIC, .version = HS_VERSION,
			.kind = KIND_REFUSED, .from = (uint32_t)t->rank,
			.to = h.from, .nranks = (uint32_t)t->nranks,
			.hash = strlen(text),
		};
		hs_encode(b, &no);
		if (!tp_write_full(fd, b, HS_LEN, deadline))
			(void)tp_write_full(fd, text, strlen(text), deadline);
		close(fd);
	}
}

void tp_rdv_turn_away(const struct tp_rdv *r, int lfd)
{
	struct turn_away *t = tp_calloc(1, sizeof(*t));
	pthread_t th;

	t->fd = lfd;
	t->rank = r->rank;
	t->nranks = r->nranks;
	snprintf(t->name, sizeof(t->name), "%s", r->name[r->rank]);
	if (pthread_create(&th, NULL, turn_away, t)) {
		close(lfd);
		free(t);
		return;
	}
	pthread_detach(th);
}
