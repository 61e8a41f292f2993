// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --rendezvous HOST:PORT: rank 0 collects every rank's listening endpoint
 * and hands out the list; see rendezvous.h. What follows (the full mesh
 * of control and data connections, the configuration check) is the
 * rendezvous of --peers (rendezvous.c), unchanged.
 *
 * A registration is one fixed-size message and the rank's addresses (all
 * of them: a host with a cable per peer is reached at a different
 * address by each); the answer is a status and a text: the peer list,
 * each rank as "the address rank 0 saw|its others:port", or the error
 * every rank prints.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"
#include "comm/rendezvous.h"

#define REG_MAGIC 0x54505247u	/* "TPRG" */
#define REG_VERSION 2
#define REG_LEN 40
#define ANSWER_LEN 12
#define TEXT_MAX 32768
#define ADDRS_MAX 512	/* a rank's addresses, "a|b|[v6]" */
/* a connection must say who it is this fast (a port scanner does not) */
#define HELLO_NS 5000000000ull
enum { ANSWER_OK = 0, ANSWER_ERROR = 1 };

struct reg {
	uint32_t magic, version, rank, nranks, port, addrs_len;
	uint64_t model_size, model_hash;
};

static void reg_encode(unsigned char *b, const struct reg *r)
{
	memset(b, 0, REG_LEN);
	be_put(b, r->magic, 4);
	be_put(b + 4, r->version, 4);
	be_put(b + 8, r->rank, 4);
	be_put(b + 12, r->nranks, 4);
	be_put(b + 16, r->port, 4);
	be_put(b + 20, r->addrs_len, 4);
	be_put(b + 24, r->model_size, 8);
	be_put(b + 32, r->model_hash, 8);
}

static void reg_decode(const unsigned char *b, struct reg *r)
{
	r->magic = (uint32_t)be_get(b, 4);
	r->version = (uint32_t)be_get(b + 4, 4);
	r->rank = (uint32_t)be_get(b + 8, 4);
	r->nranks = (uint32_t)be_get(b + 12, 4);
	r->port = (uint32_t)be_get(b + 16, 4);
	r->addrs_len = (uint32_t)be_get(b + 20, 4);
	r->model_size = be_get(b + 24, 8);
	r->model_hash = be_get(b + 32, 8);
}

static int answer(int fd, int status, const char *text, uint64_t deadline)
{
	unsigned char b[ANSWER_LEN];
	size_t len = strlen(text);

	be_put(b, REG_MAGIC, 4);
	be_put(b + 4, (uint64_t)status, 4);
	be_put(b + 8, len, 4);
	return tp_write_full(fd, b, sizeof(b), deadline) ||
	       tp_write_full(fd, text, len, deadline) ? -1 : 0;
}

/* The address FD's peer connected from, as a --peers host. */
static void peer_host(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];

	snprintf(out, len, "?");
	if (getpeername(fd, (struct sockaddr *)&ss, &sl))
		return;
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip,
			  sizeof(ip));
		snprintf(out, len, "%s", ip);
		return;
	}
	{
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {	/* a dual-stack listener */
			inet_ntop(AF_INET, a->s6_addr + 12, ip, sizeof(ip));
			snprintf(out, len, "%s", ip);
		} else {
			inet_ntop(AF_INET6, a, ip, sizeof(ip));
			snprintf(out, len, "[%s]", ip);
		}
	}
}

/* Rank 0's view of the ranks that registered. */
struct registry {
	const struct tp_rdv_reg *q;
	int fd[TP_MAX_RANKS];			/* -1: not yet */
	char host[TP_MAX_RANKS][INET6_ADDRSTRLEN + 2];
	char addrs[TP_MAX_RANKS][ADDRS_MAX];	/* its others */
	uint32_t port[TP_MAX_RANKS];
	char text[TEXT_MAX];
};

/* Why registration R cannot join this job (into TEXT), or 0. */
static int refuse(struct registry *g, const struct reg *r, const char *from)
{
	const struct tp_rdv_reg *q = g->q;

	if (r->version != REG_VERSION)
		snprintf(g->text, sizeof(g->text),
			 "rank %u (%s) runs another version of tprun (registration version %u, ours %d)",
			 r->rank, from, r->version, REG_VERSION);
	else if (r->nranks != (uint32_t)q->nranks)
		snprintf(g->text, sizeof(g->text),
			 "world sizes disagree: rank %u (%s) was started as one of %u ranks, rank 0 as one of %d",
			 r->rank, from, r->nranks, q->nranks);
	else if (r->rank == 0)
		snprintf(g->text, sizeof(g->text),
			 "a second rank 0 registered from %s: was rank 0 started twice?",
			 from);
	else if (r->rank >= (uint32_t)q->nranks)
		snprintf(g->text, sizeof(g->text),
			 "rank %u (%s) is not a rank of a job of %d", r->rank,
			 from, q->nranks);
	else if (g->fd[r->rank] >= 0)
		snprintf(g->text, sizeof(g->text),
			 "rank %u registered twice, from %s and from %s: was it started twice?",
			 r->rank, g->host[r->rank], from);
	else if (r->model_size != q->model_size ||
		 r->model_hash != q->model_hash)
		snprintf(g->text, sizeof(g->text),
			 "rank %u (%s) has another model file than rank 0: %llu bytes with header hash %016llx, rank 0 %llu bytes with header hash %016llx%s",
			 r->rank, from, (unsigned long long)r->model_size,
			 (unsigned long long)r->model_hash,
			 (unsigned long long)q->model_size,
			 (unsigned long long)q->model_hash,
			 !r->model_size || !q->model_size ?
			 " (0: synthetic weights)" : "");
	else
		return 0;
	return -1;
}

/* Tell every registered rank (and FD) what went wrong; say it too. */
static int fail_all(struct registry *g, int fd, uint64_t deadline)
{
	int p;

	tp_err("rendezvous at %s: %s", g->q->addr, g->text);
	if (fd >= 0) {
		answer(fd, ANSWER_ERROR, g->text, deadline);
		close(fd);
	}
	for (p = 1; p < g->q->nranks; p++)
		if (g->fd[p] >= 0) {
			answer(g->fd[p], ANSWER_ERROR, g->text, deadline);
			close(g->fd[p]);
			g->fd[p] = -1;
		}
	return -1;
}

/* Which ranks have not registered, for the timeout's message. */
static void missing(struct registry *g, char *out, size_t len)
{
	size_t pos = 0;
	int p, n = 0;

	out[0] = 0;
	for (p = 1; p < g->q->nranks; p++)
		if (g->fd[p] < 0)
			tp_appendf(out, len, &pos, "%s%d", n++ ? ", " : "", p);
}

struct latecomers {
	int fd, nranks;
	char addr[300];
};

/*
 * After the job has all its ranks, rank 0 keeps the rendezvous port and
 * turns away whoever still registers (a rank started twice, a second job
 * with the same address) with a message, instead of leaving it to time
 * out against a closed port.
 */
static void *turn_away(void *arg)
{
	struct latecomers *l = arg;
	unsigned char b[REG_LEN];
	char text[800], from[INET6_ADDRSTRLEN + 2];
	struct reg r;
	int fd;

	for (;;) {
		fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		peer_host(fd, from, sizeof(from));
		if (!tp_read_full(fd, b, REG_LEN, tp_now_ns() + HELLO_NS)) {
			char addrs[ADDRS_MAX];

			reg_decode(b, &r);
			/* read what it sent: closing on unread bytes resets
			 * the connection before it reads our answer */
			if (r.addrs_len < ADDRS_MAX)
				(void)tp_read_full(fd, addrs, r.addrs_len,
						   tp_now_ns() + HELLO_NS);
			if (r.nranks != (uint32_t)l->nranks)
				snprintf(text, sizeof(text),
					 "world sizes disagree: this rank was started as one of %u ranks, the job at %s has %d",
					 r.nranks, l->addr, l->nranks);
			else
				snprintf(text, sizeof(text),
					 "the job at %s already has its %d ranks: rank %u (from %s) came late (after the job started, or after it was declared lost) or was started twice",
					 l->addr, l->nranks, r.rank, from);
			tp_err("rendezvous: %s", text);
			answer(fd, ANSWER_ERROR, text, tp_now_ns() + HELLO_NS);
		}
		close(fd);
	}
}

static void keep_turning_away(int fd, const struct tp_rdv_reg *q)
{
	struct latecomers *l = tp_calloc(1, sizeof(*l));
	pthread_t t;

	l->fd = fd;
	l->nranks = q->nranks;
	snprintf(l->addr, sizeof(l->addr), "%s", q->addr);
	if (pthread_create(&t, NULL, turn_away, l)) {
		close(fd);
		free(l);
		return;
	}
	pthread_detach(t);
}

/*
 * Append a rank's entry to the peer list at *POS: HOST (where rank 0 saw
 * it, or its address) first, then its other addresses ADDRS ("a|b").
 */
static void entry(char *list, size_t *pos, const char *host,
		  const char *addrs, unsigned port)
{
	const char *a = addrs;

	tp_appendf(list, TEXT_MAX, pos, "%s%s%s%s", *pos ? "," : "",
		   strchr(host, ':') && host[0] != '[' ? "[" : "", host,
		   strchr(host, ':') && host[0] != '[' ? "]" : "");
	while (*a) {
		size_t n = strcspn(a, "|");
		int same = n == strlen(host) && !strncmp(a, host, n);

		if (!same && n)
			tp_appendf(list, TEXT_MAX, pos, "|%.*s", (int)n, a);
		a += n;
		if (*a == '|')
			a++;
	}
	tp_appendf(list, TEXT_MAX, pos, ":%u", port);
}

static int rank0(const struct tp_rdv_reg *q, const struct tp_peer_addr *me,
		 int mesh_port, char **peers)
{
	uint64_t deadline = tp_now_ns() + (uint64_t)q->timeout_ms * 1000000u;
	struct registry *g = tp_calloc(1, sizeof(*g));
	char mine[ADDRS_MAX];
	int rfd, p, got = 0, ret = -1;
	size_t pos = 0;

	g->q = q;
	for (p = 0; p < q->nranks; p++)
		g->fd[p] = -1;
	rfd = tp_listen(q->listen_host, me->port, g->text, sizeof(g->text));
	if (rfd < 0) {
		tp_err("rendezvous at %s: %s: is rank 0 of this job (or another job with this address) already running?",
		       q->addr, g->text);
		goto out;
	}
	while (got < q->nranks - 1) {
		unsigned char b[REG_LEN];
		char from[sizeof(g->host[0])], addrs[ADDRS_MAX];
		uint64_t hello;
		struct reg r;
		int fd;

		if (tp_wait_fd(rfd, POLLIN, deadline)) {
			char list[TP_MAX_RANKS * 4];

			missing(g, list, sizeof(list));
			snprintf(g->text, sizeof(g->text),
				 "rank%s %s did not register within %.1f s",
				 strchr(list, ',') ? "s" : "", list,
				 q->timeout_ms / 1000.0);
			fail_all(g, -1, tp_now_ns() + HELLO_NS);
			close(rfd);
			goto out;
		}
		fd = accept4(rfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		peer_host(fd, from, sizeof(from));
		hello = tp_now_ns() + HELLO_NS;
		if (tp_read_full(fd, b, REG_LEN, hello < deadline ? hello :
				 deadline)) {
			close(fd);	/* not one of ours, or gone */
			continue;
		}
		reg_decode(b, &r);
		if (r.magic != REG_MAGIC) {	/* not tprun: not our business */
			tp_info("rendezvous: ignoring a connection from %s (not a tprun rank)",
				from);
			close(fd);
			continue;
		}
		if (r.addrs_len >= ADDRS_MAX ||
		    (r.version == REG_VERSION && r.rank < (uint32_t)q->nranks &&
		     tp_read_full(fd, addrs, r.addrs_len, hello))) {
			close(fd);	/* garbled or gone */
			continue;
		}
		addrs[r.addrs_len] = 0;
		if (refuse(g, &r, from)) {
			fail_all(g, fd, tp_now_ns() + HELLO_NS);
			close(rfd);
			goto out;
		}
		g->fd[r.rank] = fd;
		g->port[r.rank] = r.port;
		snprintf(g->host[r.rank], sizeof(g->host[0]), "%s", from);
		snprintf(g->addrs[r.rank], sizeof(g->addrs[0]), "%s", addrs);
		got++;
	}
	*peers = tp_calloc(TEXT_MAX, 1);
	tp_local_addrs(mine, sizeof(mine));
	entry(*peers, &pos, me->host, mine, (unsigned)mesh_port);
	for (p = 1; p < q->nranks; p++)
		entry(*peers, &pos, g->host[p], g->addrs[p], g->port[p]);
	for (p = 1; p < q->nranks; p++) {
		/* one that died meanwhile is found missing in the mesh */
		answer(g->fd[p], ANSWER_OK, *peers, tp_now_ns() + HELLO_NS);
		close(g->fd[p]);
	}
	keep_turning_away(rfd, q);
	ret = 0;
out:
	free(g);
	return ret;
}

static int other_rank(const struct tp_rdv_reg *q, const struct tp_peer_addr *r0,
		      int mesh_port, char **peers)
{
	uint64_t deadline = tp_now_ns() + (uint64_t)q->timeout_ms * 1000000u;
	struct reg r = {
		.magic = REG_MAGIC, .version = REG_VERSION,
		.rank = (uint32_t)q->rank, .nranks = (uint32_t)q->nranks,
		.port = (uint32_t)mesh_port, .model_size = q->model_size,
		.model_hash = q->model_hash,
	};
	char addrs[ADDRS_MAX];
	unsigned char b[REG_LEN > ANSWER_LEN ? REG_LEN : ANSWER_LEN];
	char *text;
	uint32_t len;
	int fd, last, status;

	fd = tp_dial(r0->host, r0->port, deadline, &last);
	if (fd < -1) {
		tp_err("rendezvous at %s: %s", q->addr, gai_strerror(-2 - fd));
		return -1;
	}
	if (fd < 0) {
		tp_err("rendezvous at %s: nobody answered within %.1f s (%s): is rank 0 running, with this address?",
		       q->addr, q->timeout_ms / 1000.0, strerror(last));
		return -1;
	}
	/* rank 0 waits up to its own timeout for the others: a little more */
	deadline = tp_now_ns() + (uint64_t)q->timeout_ms * 1000000u +
		   HELLO_NS;
	tp_local_addrs(addrs, sizeof(addrs));
	r.addrs_len = (uint32_t)strlen(addrs);
	reg_encode(b, &r);
	if (tp_write_full(fd, b, REG_LEN, deadline) ||
	    tp_write_full(fd, addrs, r.addrs_len, deadline) ||
	    tp_read_full(fd, b, ANSWER_LEN, deadline)) {
		tp_err("rendezvous at %s: %s", q->addr,
		       errno == ETIMEDOUT ? "no answer from rank 0 in time" :
		       "rank 0 closed the connection (see its messages)");
		close(fd);
		return -1;
	}
	status = (int)be_get(b + 4, 4);
	len = (uint32_t)be_get(b + 8, 4);
	if (be_get(b, 4) != REG_MAGIC || len >= TEXT_MAX) {
		tp_err("rendezvous at %s: the answer is not from a tprun rank 0 of this version",
		       q->addr);
		close(fd);
		return -1;
	}
	text = tp_calloc(len + 1, 1);
	if (tp_read_full(fd, text, len, deadline)) {
		tp_err("rendezvous at %s: the answer was cut short", q->addr);
		goto fail;
	}
	close(fd);
	if (status != ANSWER_OK) {
		tp_err("rendezvous at %s: %s", q->addr, text);
		free(text);
		return -1;
	}
	*peers = text;
	return 0;
fail:
	close(fd);
	free(text);
	return -1;
}

int tp_rdv_register(const struct tp_rdv_reg *q, char **peers, int *lfd)
{
	struct tp_peer_addr r0;
	char err[300];
	int fd, port;

	if (tp_parse_peers(q->addr, &r0, 1, err, sizeof(err)) != 1) {
		tp_err("--rendezvous %s: %s", q->addr, err);
		return -1;
	}
	/* our own endpoint of the mesh: any free port */
	fd = tp_listen(q->listen_host, "0", err, sizeof(err));
	if (fd < 0) {
		tp_err("%s", err);
		return -1;
	}
	port = tp_sock_port(fd);
	tp_info("rendezvous at %s: rank %d of %d, listening on port %d",
		q->addr, q->rank, q->nranks, port);
	if ((q->rank == 0 ? rank0(q, &r0, port, peers) :
	     other_rank(q, &r0, port, peers))) {
		close(fd);
		return -1;
	}
	tp_info("rendezvous: ranks at %s", *peers);
	*lfd = fd;
	return 0;
}
