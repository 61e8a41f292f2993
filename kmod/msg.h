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

/*
 * A message, or one frame of it on a network device.  Loopback messages
 * are always one frame: first and last, offset 0, length == total.
 */
struct tbr_msg {
	u32 opcode;			/* enum ib_uverbs_wr_opcode */
	bool solicited;
	__be32 imm_data;
	u32 src_qpn;
	u32 qkey;			/* UD */
	const struct tbr_ah_info *ah;	/* UD: source and destination GIDs */
	u64 length;			/* payload of this frame (READ: to read) */
	u64 total;			/* of the whole message */
	u64 offset;			/* of this frame's payload in the message */
	bool first;
	bool last;
	u64 remote_addr;		/* RDMA and atomics: of this frame's payload */
	u32 rkey;
	u64 compare_add;
	u64 swap;
	u32 xrc_srqn;			/* XRC: the SRQ at the responder it names */
	struct tbr_srq *srq;		/* XRC responder: that SRQ, held; or NULL */
	struct tbr_xfer *xfer;		/* local: payload (SEND/WRITE) or destination (READ) */
	const struct sk_buff *skb;	/* network: the payload is here instead */
	u32 skb_off;
};

/*
 * A SEND arriving in several frames keeps its receive WQE between them
 * (network devices; under the responder's lock).
 */
struct tbr_rx_cont {
	bool active;
	u64 wr_id;
	u64 total;			/* the message's length, from its first frame */
	u64 next_off;			/* where the next frame must start */
	u32 hdr_len;			/* UD: GRH bytes in front of the payload */
	struct tbr_sgl sgl;		/* the receive buffers, MR references held */
	u32 num_sge;			/* the WQE's SGEs, for UC to reuse it */
	struct tbrdma_sge sge[TBR_MAX_SGE];
	struct tbr_srq *srq;		/* XRC: whose WQE it is and CQ it ends on, held */
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
void tbr_rx_cont_flush(struct tbr_qp *qp, struct tbr_rx_cont *cont);
void tbr_rx_cont_drop(struct tbr_rx_cont *cont);
void tbr_rx_xrc_get(struct tbr_qp *qp, struct tbr_msg *msg);
void tbr_rx_xrc_put(struct tbr_msg *msg);

/* tx.c: a WQE checked and described as a message */
enum ib_wc_status tbr_tx_prepare(struct tbr_qp *qp,
				 struct tbrdma_send_wqe *wqe,
				 struct tbr_msg *msg, struct tbr_sgl *local,
				 struct tbr_ah_info *ah, u32 *dst_qpn);

/* loopback.c: the loopback transport */
enum tbr_resp tbr_loopback_deliver(struct tbr_qp *src, u32 dst_qpn,
				   struct tbr_msg *msg);

#endif /* TBRDMA_MSG_H */
