/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by badinput.c (helpers, main) and badinput_cases.c (the cases). */
#ifndef TBR_BADINPUT_H
#define TBR_BADINPUT_H

#include <stdint.h>
#include <infiniband/verbs.h>

#include "vutil.h"

#define BUFSZ (64 * 1024)
#define TMO 5000	/* ms to wait for any completion that must come */

extern struct vctx V;	/* the device under test */
extern struct conn CN;	/* default connection parameters */

/* Two connected RC QPs on one PD, each with its own CQ, sharing one MR
 * (BUFSZ bytes, all access rights) over buf. */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *ca, *cb;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	uint8_t *buf;
};

/* A (requester, connection CA) <-> B (responder, CB); NULL = CN. */
int pair_new(struct pair *p, const struct conn *ca, const struct conn *cb);
void pair_free(struct pair *p);
struct ibv_qp *new_qp(struct ibv_pd *pd, struct ibv_cq *cq, int wr);

/* One signalled WR / one receive; errno-style result, diag on failure. */
int post_send(struct ibv_qp *qp, uint64_t id, enum ibv_wr_opcode opc,
	      void *addr, uint32_t len, uint32_t lkey, uint64_t raddr,
	      uint32_t rkey);
int post_recv(struct ibv_qp *qp, uint64_t id, void *addr, uint32_t len,
	      uint32_t lkey);

/* Checks: 1 = as expected, 0 = not (with a diag line saying why). */
int expect_wc(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status status,
	      const char *what);
int expect_error_wc(struct ibv_cq *cq, uint64_t id, const char *what);
int expect_quiet(struct ibv_cq *cq, const char *what);
int expect_state(struct ibv_qp *qp, int state, const char *what);
int expect_errno(int got, int want, const char *what);
int expect_err_and_flush(struct pair *p);

struct bcase {
	const char *name, *what;
	int (*fn)(void);	/* 1 = pass */
	int needs_atomics;
};
extern const struct bcase cases[];
int qp_state_machine(void);	/* badinput_qp.c */

#endif /* TBR_BADINPUT_H */
