/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The ranks connected for a command, and their teardown (connect.c). */
#ifndef TPRUN_CONNECT_H
#define TPRUN_CONNECT_H

#include <stddef.h>
#include <stdint.h>

#include "cmd/opts.h"

struct tp_rdv;
struct tp_xport;
/*
 * Rendezvous with the other ranks (HASH: the configuration they must
 * share), then the transport of o->transport with buffers for all-reduces
 * of up to MAX_FLOATS floats (*RDMA, and *TCP for --transport tcp or
 * --compare), then the monitor. 0, or -1 (reported).
 */
int tp_connect_ranks(struct tp_opts *o, uint64_t hash, size_t max_floats,
		     struct tp_rdv *rdv, struct tp_xport **rdma,
		     struct tp_xport **tcp);
/* The transports (either may be NULL) and the rendezvous' connections,
 * after a run that ended well (an aborted one leaves them to exit()). */
void tp_disconnect_ranks(struct tp_rdv *rdv, struct tp_xport *rdma,
			 struct tp_xport *tcp);
/*
 * After an RDMA connect, on rank 0: the device RANK uses for PEER (""
 * when it reaches it over IP only), or NULL when it is not known.
 */
#define TP_LINK_NAME 64
const char *tp_link_device(int rank, int peer);
/* How long an RDMA wait busy-polls before it sleeps (--spin-us, auto). */
int tp_spin_us(const struct tp_opts *o);
/* More ranks on this machine than CPUs: a spinning wait yields the CPU. */
int tp_oversubscribed(const struct tp_opts *o);

#endif /* TPRUN_CONNECT_H */
