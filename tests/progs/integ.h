/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared definitions of the integrity test (integrity.c runs the
 * processes, integ_req.c is the requester side of a QP pair, integ_resp.c
 * the responder side).
 *
 * Topology: process p owns Q "requester" QPs; its QP q is connected to
 * responder QP q of process (p + 1) % P (itself when P = 1).  Per pair
 * there are three buffers, mapped MAP_SHARED before fork so every process
 * sees them at the same address: L (requester's: SEND/WRITE sources, READ
 * and atomic destinations), R (responder's: WRITE targets, READ sources)
 * and V (responder's receive buffers).  The requester checks WRITE results
 * in R and READ results in L; the responder checks every receive.  Both
 * sides generate the pair's op sequence from (seed, p, q), so the
 * responder knows, in order, which messages will arrive and what they hold.
 */
#ifndef TBR_INTEG_H
#define TBR_INTEG_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "atomic_model.h"
#include "pattern.h"

#define MAX_PROCS 16
#define MAX_QPS 32
#define MAX_BATCH 16	/* WRs posted per round on one QP */
#define MAX_SGE 16
#define GUARD 16	/* canary bytes checked around every destination */
#define NCNT 4		/* shared atomic counters */
#define SQ_DEPTH 32
#define RQ_DEPTH 64

enum { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS,
	OP_FAA, NOPTYPES };

struct op {
	int type;
	uint32_t size;
	uint32_t imm;
	uint64_t key;		/* payload pattern */
};

/* What every process must agree on (derived from options + device). */
struct cfg {
	uint64_t seed;
	long ops;
	int qps, procs;
	size_t max_size;
	int atomics;		/* device supports them */
	int send_sge, recv_sge, read_sge;
	int stall_ms;
	int fence;		/* use IBV_SEND_FENCE on some WRs */
	int ack_timeout;	/* QP timeout: 4.096 us * 2^N (default 14, 67 ms) */
	int bulk;		/* only SEND, WRITE, READ of max_size/2..max_size */
	uint64_t min_bytes;	/* each direction must move at least this */
	const char *dev;
	int gid_index;
	const char *dev2;	/* odd processes use this one: two hosts */
	int gid_index2;
	size_t lsize, rsize, vsize;	/* per-pair buffer sizes */
};

struct barrier {
	int count, gen;
};

/* Per process, published through shared memory. */
struct pub {
	uint32_t req_qpn[MAX_QPS], resp_qpn[MAX_QPS];
	uint32_t r_rkey[MAX_QPS];	/* rkey of R of the pair it responds to */
	uint32_t cnt_rkey;
	union ibv_gid gid;		/* of the device the process uses */
};

struct result {
	long ops, recvs, atomics;
	uint64_t bytes;
	uint64_t bytes_out;	/* SEND, WRITE: from this process's device */
	uint64_t bytes_in;	/* READ: to it */
	int failed, finished;
	char why[512];
};

struct shared {
	int abort;
	struct barrier bar;
	struct pub pub[MAX_PROCS];
	struct result res[MAX_PROCS];
	uint64_t cnt_init[NCNT];
	long nlog[MAX_PROCS];
};

/* Buffers and logs: the same addresses in every process. */
struct layout {
	uint8_t *L[MAX_PROCS][MAX_QPS], *R[MAX_PROCS][MAX_QPS],
		*V[MAX_PROCS][MAX_QPS];
	uint8_t *cnt_page;	/* NCNT counters, one per 64-byte line */
	struct alog *log[MAX_PROCS];
	long logcap;
};

static inline uint64_t *counter_addr(const struct layout *l, int c)
{
	return (uint64_t *)(l->cnt_page + 64 * c + 24);
}

long ops_for(const struct cfg *c, int p, int q);
void gen_op(struct rng *r, const struct cfg *c, struct op *op);
int op_recv(const struct op *op);	/* consumes a receive WQE */
const char *op_name(int type);

/* The running process (set by integrity.c). */
extern struct shared *sh;
extern struct layout lay;
extern int me;
void fail_op(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Requester / responder state of this process. */
struct req;
struct resp;
struct req *req_new(const struct cfg *c, int q, struct ibv_pd *pd,
		    struct ibv_qp *qp);
int req_idle_post(struct req *r);	/* post the next round if idle; -1 err */
int req_complete(struct req *r, const struct ibv_wc *wc);
int req_done(const struct req *r);
void req_state(const struct req *r, char *buf, size_t len);

struct resp *resp_new(const struct cfg *c, int q, struct ibv_pd *pd,
		      struct ibv_qp *qp);
int resp_replenish(struct resp *r);
int resp_complete(struct resp *r, const struct ibv_wc *wc);
int resp_done(const struct resp *r);
void resp_state(const struct resp *r, char *buf, size_t len);

#endif /* TBR_INTEG_H */
