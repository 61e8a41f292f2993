/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The network transports of the all-reduce: RDMA verbs and TCP. */
#ifndef TPRUN_TRANSPORT_H
#define TPRUN_TRANSPORT_H

#include <stddef.h>

#include "comm/allreduce.h"

/*
 * RDMA: one RC QP per peer, on device LINKS[peer].dev (port IB_PORT,
 * GID LINKS[peer].gid_index or -1 to pick the IPv4-mapped one; no
 * device: no QP, that peer is reached over IP only), the buffers
 * registered once on each device; the peers' QPs are connected with
 * what tp_rdma_info() produces. SPIN_US: how long a wait busy-polls
 * before sleeping on the completion channels; SPIN_YIELD: give the CPU
 * away between polls (more ranks than CPUs). TIMEOUT_MS: the longest
 * wait for one message.
 */
#define TP_RDMA_INFO_LEN 52
struct tp_rdma_link {
	char dev[64];		/* "": no RDMA link */
	int gid_index;
};
struct tp_xport *tp_rdma_new(const struct tp_rdma_link *links, int ib_port,
			     int rank, int nranks, size_t sbuf_bytes,
			     size_t rbuf_bytes, int spin_us, int spin_yield,
			     int timeout_ms);
void tp_rdma_info(struct tp_xport *x, int peer,
		  unsigned char out[TP_RDMA_INFO_LEN]);
/* Connect our QP for PEER to its; a peer without a QP for us (or we
 * for it) is no RDMA link: 0 all the same. -1 (reported) on failure. */
int tp_rdma_connect(struct tp_xport *x, int peer,
		    const unsigned char in[TP_RDMA_INFO_LEN]);
/* The device serving PEER and our GID on it (text): 0, or -1 if none. */
int tp_rdma_link(struct tp_xport *x, int peer, char *dev, size_t devlen,
		 char *gid, size_t gidlen);
/* "tbrlo0 port 1, GID 1 ::ffff:127.0.0.1, MTU 4096", or per peer
 * "rank 1: tbrm12 port 1, ...; rank 2: ..." */
const char *tp_rdma_describe(struct tp_xport *x);

/* TCP over the rendezvous' data connections FDS[peer] (-1 for self).
 * SPIN_US: how long a wait polls the sockets without sleeping (0: it
 * sleeps in poll() at once). */
struct tp_xport *tp_tcp_new(const int *fds, const char (*names)[280],
			    int rank, int nranks, size_t sbuf_bytes,
			    size_t rbuf_bytes, int spin_us, int timeout_ms);

#endif /* TPRUN_TRANSPORT_H */
