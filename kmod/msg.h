/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A message: one work request as the requester hands it to the transport
 * and the transport hands it to the responder (rx.c).  In loopback mode
 * this is a plain function call; the network transport carries the same
 * fields in frames.
 */
#ifndef TBRDMA_MSG_H
#define TBRDMA_MSG_H

#include "sgl.h"

/* Scratch space for executing one message, owned by the requester's QP. */
struct tbr_xfer {
	struct tbr_sgl local;		/* the requester's memory */
	struct tbr_sgl remote;		/* the responder's memory */
	u8 recv_wqe[sizeof(struct tbrdma_recv_wqe) +
		    TBR_MAX_SGE * sizeof(struct tbrdma_sge)];
	u8 grh[40];			/* UD: the header before the payload */
	u64 atomic_orig;		/* ATOMIC_*: the value found */
};

struct tbr_msg {
	u32 opcode;			/* enum ib_uverbs_wr_opcode */
	bool solicited;
	__be32 imm_data;
	u32 src_qpn;
	u32 qkey;			/* UD */
	const struct tbr_ah_info *ah;	/* UD: source and destination GIDs */
	u64 length;
	u64 remote_addr;		/* RDMA and atomics */
	u32 rkey;
	u64 compare_add;
	u64 swap;
	struct tbr_xfer *xfer;		/* local: payload (SEND/WRITE) or destination (READ) */
};

/* What the responder answers; the requester turns it into a completion. */
enum tbr_resp {
	TBR_RESP_OK,
	TBR_RESP_RNR,		/* no receive WQE (RC): RNR NAK, retry later */
	TBR_RESP_REM_ACCESS,	/* rkey, bounds or rights: NAK remote access error */
	TBR_RESP_REM_INV,	/* invalid request: too long, misaligned atomic */
	TBR_RESP_REM_OP,	/* the responder failed with its own WQE */
	TBR_RESP_NO_QP,		/* nobody connected there: the requester times out */
	TBR_RESP_DROPPED,	/* UC/UD: silently dropped */
};

enum tbr_resp tbr_rx_message(struct tbr_qp *dst, struct tbr_msg *msg);

/* loopback.c: the loopback transport */
enum tbr_resp tbr_loopback_deliver(struct tbr_qp *src, u32 dst_qpn,
				   struct tbr_msg *msg);

#endif /* TBRDMA_MSG_H */
