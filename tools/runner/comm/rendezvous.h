/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rendezvous over TCP: rank R listens on the port of entry R of the peer
 * list and connects to every lower rank; every pair gets two connections,
 * "control" (handshake, exchange of QP addresses, then heartbeats: see
 * liveness.c) and "data" (the TCP all-reduce transport). The handshake
 * carries the ranks, the number of ranks and a hash of the configuration
 * (model, flags), so ranks started with different options refuse to run
 * together instead of producing garbage.
 */
#ifndef TPRUN_RENDEZVOUS_H
#define TPRUN_RENDEZVOUS_H

#include <stddef.h>
#include <stdint.h>

#include "comm/allreduce.h"
#include "comm/route.h"

/*
 * A rank's entry of the peer list: "host:port", or with the addresses of
 * each of its cables "a|b|c:port" (a host with several links is reached
 * at the address on the link to it, see route.h); [v6addr] in brackets.
 */
struct tp_peer_addr {
	char host[256];		/* the first address: the one for messages */
	char port[16];
	int nalt;		/* more addresses, in alt[] */
	char alt[TP_MAX_ADDRS - 1][INET6_ADDRSTRLEN + 2];
};

struct tp_rdv {
	int rank, nranks;
	int ctrl[TP_MAX_RANKS];		/* -1 for ourselves */
	int data[TP_MAX_RANKS];
	char name[TP_MAX_RANKS][280];	/* "host:port", for messages */
	/* the route to each peer's address we use (tp_peer_pick) */
	struct tp_route route[TP_MAX_RANKS];
};

/*
 * "h0:p0,h1|h1b:p1,..." ([v6addr]:port works too). Returns the count or
 * -1.
 */
int tp_parse_peers(const char *list, struct tp_peer_addr *out, int max,
		   char *err, size_t errlen);
/* Address I (0..nalt) of PA. */
const char *tp_peer_host(const struct tp_peer_addr *pa, int i);
/*
 * Which of PA's addresses this host reaches it at: the first on a link
 * of this host (no gateway: a cable to it), else the first with a
 * route, else the first; an address of this host's own only when it is
 * the first (ranks on one host). *ROUTE: the route to it (onlink 0 and src ""
 * when there is none, or the address is a name).
 */
int tp_peer_pick(const struct tp_peer_addr *pa, struct tp_route *route);
/* A listening socket on PORT of every local address (or -1 + ERR). */
int tp_listen(const char *host, const char *port, char *err, size_t errlen);

/* Connect the full mesh. LISTEN_FD: our listening socket. */
int tp_rdv_connect(struct tp_rdv *r, int rank, int nranks,
		   const struct tp_peer_addr *peers, int listen_fd,
		   uint64_t cfg_hash, int timeout_ms);
/*
 * Keep answering on LFD (our listening socket, which it takes) after the
 * mesh is complete: a rank that connects now is refused with a message
 * (started twice, or back after the others gave it up).
 */
void tp_rdv_turn_away(const struct tp_rdv *r, int lfd);
/* Send OUT and receive IN (LEN bytes each way) on PEER's control link. */
int tp_rdv_xchg(struct tp_rdv *r, int peer, const void *out, void *in,
		size_t len, int timeout_ms);
/* Every rank has reached this point. */
int tp_rdv_barrier(struct tp_rdv *r, int timeout_ms);
void tp_rdv_close(struct tp_rdv *r);

/*
 * A TCP connection to HOST:PORT, retried every 0.1 s until DEADLINE (for
 * a peer that is not listening yet): the socket, -1 with the last
 * connect() error in *LAST_ERRNO, or -2 - (a getaddrinfo() error).
 */
int tp_dial(const char *host, const char *port, uint64_t deadline,
	    int *last_errno);
/* The local port of socket FD, or -1. */
int tp_sock_port(int fd);
/* Until FD is ready for EV (POLLIN/POLLOUT): 0, or -1 (ETIMEDOUT). */
int tp_wait_fd(int fd, short ev, uint64_t deadline);

/*
 * --rendezvous HOST:PORT (rendezvous_register.c): the ranks learn each
 * other's endpoints from one address. Rank 0 listens there; every other rank
 * opens its own listening socket (a port the kernel picks), registers it
 * with rank 0 and receives the list of all, in --peers syntax. Rank 0
 * checks that every rank has the same world size and model file (size
 * and a hash of its header) and that no rank registers twice; an error
 * is sent to every rank that registered, so each says what went wrong.
 */
struct tp_rdv_reg {
	const char *addr;		/* HOST:PORT of rank 0 */
	const char *listen_host;	/* our listening address, or NULL */
	int rank, nranks;
	uint64_t model_size, model_hash;	/* 0 for synthetic weights */
	int timeout_ms;
};

/* 0 with *PEERS (malloc'ed) and our listening socket *LFD, or -1
 * (reported). Rank 0 keeps answering latecomers with an error. */
int tp_rdv_register(const struct tp_rdv_reg *q, char **peers, int *lfd);

/* Read/write exactly LEN bytes with a deadline; -1 + errno on failure
 * (ETIMEDOUT, or EPIPE when the peer closed). */
int tp_read_full(int fd, void *buf, size_t len, uint64_t deadline_ns);
int tp_write_full(int fd, const void *buf, size_t len, uint64_t deadline_ns);

#endif /* TPRUN_RENDEZVOUS_H */
