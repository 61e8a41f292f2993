/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small verbs helpers shared by the data-path test programs (integrity,
 * badinput): open a device by name, connect RC QPs in loopback (both ends
 * on the same device, addressed by the GID at a given index), poll with a
 * deadline.  Works the same on tbrdma and on rdma_rxe, which is the point:
 * the tests are proven on rxe before tbrdma's data path exists.
 */
#ifndef TBR_VUTIL_H
#define TBR_VUTIL_H

#include <stdint.h>
#include <infiniband/verbs.h>

struct vctx {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	union ibv_gid gid;	/* our own GID: loopback peers share it */
	int gid_index;
	uint8_t port_num;
};

/* Connection parameters of an RC/UC QP (see conn_defaults()). */
struct conn {
	uint8_t timeout;	/* local ACK timeout, 4.096 us * 2^timeout */
	uint8_t retry_cnt;
	uint8_t rnr_retry;	/* 7 = retry forever */
	uint8_t min_rnr_timer;	/* encoded IB value, 1 = 0.01 ms */
	uint8_t rd_atomic;	/* max_rd_atomic and max_dest_rd_atomic */
	int access;		/* qp_access_flags */
	const union ibv_gid *dgid;	/* the peer's GID; NULL: our own (loopback) */
};

/* Open the device named NAME, or NULL. */
struct ibv_context *vdev_open(const char *name);

/* Is NAME one of the comma-separated LIST (NULL: an empty list)? */
int name_listed(const char *list, const char *name);

/* Open DEV, query it and read the GID at GID_INDEX on port 1.
 * Prints why on stderr and returns -1 on failure. */
int vctx_open(struct vctx *v, const char *dev, int gid_index);
void vctx_close(struct vctx *v);

void conn_defaults(struct conn *c, const struct vctx *v);

/* The PSN both ends agree on for the QP numbered QPN. Chosen near the top
 * of the 24-bit space so longer runs cross the wrap-around. */
uint32_t psn_for(uint32_t qpn);

/* RESET -> INIT -> RTR -> RTS towards remote QP number DQPN on the same
 * device. Returns 0 or the errno of the failing ibv_modify_qp. */
int qp_connect(struct ibv_qp *qp, const struct vctx *v, uint32_t dqpn,
	       const struct conn *c);
int qp_to_init(struct ibv_qp *qp, const struct vctx *v, int access);
int qp_to_rtr(struct ibv_qp *qp, const struct vctx *v, uint32_t dqpn,
	      const struct conn *c);
int qp_to_rts(struct ibv_qp *qp, const struct conn *c);
int qp_to_state(struct ibv_qp *qp, enum ibv_qp_state s);
/* Current state from ibv_query_qp, or -1. */
int qp_state(struct ibv_qp *qp);

/* Poll one completion: 1 = got one, 0 = none within TIMEOUT_MS, -1 = poll
 * error. Busy-polls with sched_yield (no completion channel). */
int poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms);

uint64_t now_ms(void);

#endif /* TBR_VUTIL_H */
