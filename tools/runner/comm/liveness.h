/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Liveness of the other ranks. After the rendezvous a thread owns the
 * control connections: it sends a heartbeat to every peer every 250 ms
 * and watches what comes back. When a peer's connection closes (its
 * process died: the kernel closes its sockets), when a peer says it is
 * aborting, or when a peer is silent for longer than the peer timeout
 * (hung, or the link is down), the thread prints which rank and why and
 * ends the process with exit code 3, whatever the main thread is doing.
 * Together with the RDMA completion errors and the per-message timeout of
 * the transports, every rank exits within seconds when one goes away.
 *
 * At the end, tp_mon_finish() exchanges "bye" messages carrying a hash of
 * the generated tokens (which must be equal on every rank); a connection
 * that closes after its bye is a normal end.
 */
#ifndef TPRUN_MONITOR_H
#define TPRUN_MONITOR_H

#include <stdint.h>

#include "comm/rendezvous.h"

int tp_mon_start(struct tp_rdv *r, int peer_timeout_ms);
/* 0, or -1 (reported) when a peer's tokens differ or it never said bye. */
int tp_mon_finish(uint64_t token_hash, int timeout_ms);
/*
 * Tell the peers we are failing (best effort, any thread): because of
 * rank CULPRIT (a data path error about it: the peers then name it), or
 * -1 (our own failure).
 */
void tp_mon_abort(int culprit);
/*
 * FN runs in the monitor thread when it has found a rank lost, with the
 * message it printed, before the process exits (tprun serve answers its
 * requests with it). NULL: none.
 */
void tp_mon_on_lost(void (*fn)(const char *why));

#endif /* TPRUN_MONITOR_H */
