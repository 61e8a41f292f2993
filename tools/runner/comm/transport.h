/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The network transports of the all-reduce: RDMA verbs and TCP. */
#ifndef TPRUN_TRANSPORT_H
#define TPRUN_TRANSPORT_H

#include <stddef.h>

#include "comm/allreduce.h"

/*
 * RDMA: one RC QP per peer on device DEV (port IB_PORT, GID GID_INDEX or
 * -1 to pick the IPv4-mapped one), both buffers registered once; the
 * peers' QPs are connected with what tp_rdma_info() produces.
 * SPIN_US: how long a wait busy-polls before sleeping on the completion
 * channel; SPIN_YIELD: give the CPU away between polls (more ranks than
 * CPUs). TIMEOUT_MS: the longest wait for one message.
 */
#define TP_RDMA_INFO_LEN 48
struct tp_xport *tp_rdma_new(const char *dev, int ib_port, int gid_index,
			     int rank, int nranks, size_t sbuf_bytes,
			     size_t rbuf_bytes, int spin_us, int spin_yield,
			     int timeout_ms);
void tp_rdma_info(struct tp_xport *x, int peer,
		  unsigned char out[TP_RDMA_INFO_LEN]);
int tp_rdma_connect(struct tp_xport *x, int peer,
		    const unsigned char in[TP_RDMA_INFO_LEN]);
/* "tbrlo0 port 1, GID 1 ::ffff:127.0.0.1, MTU 4096" */
const char *tp_rdma_describe(struct tp_xport *x);

/* TCP over the rendezvous' data connections FDS[peer] (-1 for self).
 * SPIN_US: how long a wait polls the sockets without sleeping (0: it
 * sleeps in poll() at once). */
struct tp_xport *tp_tcp_new(const int *fds, const char (*names)[280],
			    int rank, int nranks, size_t sbuf_bytes,
			    size_t rbuf_bytes, int spin_us, int timeout_ms);

#endif /* TPRUN_TRANSPORT_H */
