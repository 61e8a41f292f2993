// SPDX-License-Identifier: GPL-2.0-only
/*
 * The responder: a message arrives at a QP.  Checks the QP's access
 * rights and the remote key, takes a receive WQE when the operation
 * consumes one, moves the data and writes the responder's completion.
 *
 * Errors follow the verbs spec's classes: on RC a remote access violation
 * or an unusable receive WQE puts the responder QP in error as well; on UC
 * and UD a message the responder cannot take is dropped.
 */
#include <linux/atomic.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ipv6.h>
#include <rdma/ib_pack.h>

#include "net.h"

static bool tbr_rx_reliable(struct tbr_qp *qp)
{
	return tbr_qp_is_reliable(qp);
}

/*
 * The PD memory is checked against: the QP's, or for an XRC_TGT QP (which
 * has none) that of the XRC SRQ the request names, for SENDs and RDMA
 * alike, as the XRC spec has it (Documentation/clients.md, "XRC").
 */
static u32 tbr_rx_pdn(const struct tbr_qp *qp, const struct tbr_msg *msg)
{
	return msg->srq ? msg->srq->pdn : qp->pdn;
}

/* Where a receive completes: the XRC SRQ's CQ, else the QP's receive CQ. */
static struct tbr_cq *tbr_rx_cq(struct tbr_qp *qp, const struct tbr_msg *msg)
{
	return msg->srq ? to_tcq(msg->srq->ibsrq.ext.cq) : tbr_qp_rcq(qp);
}

/*
 * An XRC_TGT QP: find the SRQ the request names, if it may take it (an
 * XRC SRQ of its XRC domain); msg->srq stays NULL when not, and the
 * request is then refused as invalid (tbr_rx_message).  Any other QP:
 * nothing to do.  The caller calls tbr_rx_xrc_put() when done.
 */
void tbr_rx_xrc_get(struct tbr_qp *qp, struct tbr_msg *msg)
{
	msg->srq = NULL;
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		msg->srq = tbr_srq_get_xrc(qp, msg->xrc_srqn);
}

void tbr_rx_xrc_put(struct tbr_msg *msg)
{
	if (msg->srq)
		tbr_srq_put(msg->srq);
	msg->srq = NULL;
}

/* A SEND's continuation ends: its buffers and its SRQ are let go. */
static void tbr_rx_cont_end(struct tbr_rx_cont *cont)
{
	cont->active = false;
	if (cont->srq)
		tbr_srq_put(cont->srq);
	cont->srq = NULL;
}

/* Class C error on RC: the responder QP goes to error too. */
static enum tbr_resp tbr_rx_access_error(struct tbr_qp *qp)
{
	if (!tbr_rx_reliable(qp))
		return TBR_RESP_DROPPED;
	tbr_qp_event(qp, IB_EVENT_QP_ACCESS_ERR);
	tbr_qp_set_error(qp);
	return TBR_RESP_REM_ACCESS;
}

static void tbr_rx_complete(struct tbr_qp *qp, u64 wr_id,
			    enum ib_wc_status status, u32 opcode, u32 byte_len,
			    struct tbr_msg *msg)
{
	struct tbrdma_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = msg->src_qpn,
	};

	if (status == IB_WC_SUCCESS &&
	    (msg->opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
	     msg->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM)) {
		cqe.wc_flags |= TBRDMA_CQE_WITH_IMM;
		cqe.imm_data = msg->imm_data;
	}
	/* The provider reads network_hdr_type with the uapi's names. */
	static_assert(RDMA_NETWORK_IPV4 == TBRDMA_NETWORK_IPV4);
	static_assert(RDMA_NETWORK_IPV6 == TBRDMA_NETWORK_IPV6);
	if (status == IB_WC_SUCCESS &&
	    msg->opcode == IB_UVERBS_WR_SEND_WITH_INV) {
		cqe.wc_flags |= TBRDMA_CQE_WITH_INV;
		cqe.invalidate_rkey = msg->rkey;
	}
	if (msg->ah && status == IB_WC_SUCCESS) {
		cqe.wc_flags |= TBRDMA_CQE_GRH;
		cqe.network_hdr_type = ipv6_addr_v4mapped((struct in6_addr *)
							   msg->ah->dgid.raw) ?
				       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	}
	if (tbr_cq_post(tbr_rx_cq(qp, msg), &cqe, qp, msg->solicited))
		tbr_qp_set_error(qp);	/* CQ overrun */
}

/*
 * Take the receive WQE a SEND or WRITE_WITH_IMM consumes.  0 with the WQE
 * in msg->xfer->recv_wqe, or the answer to give when there is none.
 */
static int tbr_rx_take_wqe(struct tbr_qp *qp, struct tbr_msg *msg,
			   enum tbr_resp *resp)
{
	struct tbrdma_recv_wqe *wqe = (void *)msg->xfer->recv_wqe;
	struct tbr_srq *srq = msg->srq ?: qp->srq;
	struct tbr_recvq *rq = srq ? &srq->rq : &qp->rq;
	int left = tbr_recvq_take(rq, wqe);

	if (left >= 0) {
		if (srq)
			tbr_srq_check_limit(srq, left);
		return 0;
	}
	if (left == -ENOENT) {
		*resp = tbr_rx_reliable(qp) ? TBR_RESP_RNR : TBR_RESP_DROPPED;
	} else if (left == -EINVAL) {
		/* Consumed but malformed: it completes in error. */
		tbr_rx_complete(qp, wqe->wr_id, IB_WC_LOC_QP_OP_ERR,
				IB_WC_RECV, 0, msg);
		tbr_qp_set_error(qp);
		*resp = tbr_rx_reliable(qp) ? TBR_RESP_REM_OP : TBR_RESP_DROPPED;
	} else {
		/* User space wrote an impossible producer counter. */
		tbr_qp_event(qp, IB_EVENT_QP_FATAL);
		tbr_qp_set_error(qp);
		*resp = tbr_rx_reliable(qp) ? TBR_RESP_REM_OP : TBR_RESP_DROPPED;
	}
	return -1;
}

/*
 * The 40 bytes a UD receive buffer starts with: an IPv4 header in the last
 * 20 bytes for IPv4 GIDs, else an IPv6 header (the GRH layout), as RoCEv2
 * hardware delivers them and ib_init_ah_attr_from_wc() parses them.
 */
static void tbr_rx_build_grh(u8 *grh, const struct tbr_ah_info *ah, u64 len)
{
	const struct in6_addr *sgid = (const struct in6_addr *)ah->sgid.raw;
	const struct in6_addr *dgid = (const struct in6_addr *)ah->dgid.raw;

	memset(grh, 0, 40);
	if (ipv6_addr_v4mapped(dgid)) {
		struct iphdr *ip = (struct iphdr *)(grh + 20);

		ip->version = 4;
		ip->ihl = 5;
		ip->tot_len = htons(sizeof(*ip) + 8 + len);
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->saddr = sgid->s6_addr32[3];
		ip->daddr = dgid->s6_addr32[3];
		ip->check = ip_fast_csum((u8 *)ip, ip->ihl);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)grh;

		ip6->version = 6;
		ip6->payload_len = htons(8 + len);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = 64;
		ip6->saddr = *sgid;
		ip6->daddr = *dgid;
	}
}

/* Move this frame's payload to @dst at @dst_off. */
static void tbr_rx_copy_in(struct tbr_sgl *dst, u64 dst_off,
			   const struct tbr_msg *msg)
{
	if (msg->skb)
		tbr_sgl_copy_from_skb(dst, dst_off, msg->skb, msg->skb_off,
				      msg->length);
	else
		tbr_sgl_copy(dst, dst_off, &msg->xfer->local, msg->length);
}

/* A receive WQE was taken and its buffers resolved: check, place the GRH. */
static enum tbr_resp tbr_rx_send_begin(struct tbr_qp *qp, struct tbr_msg *msg,
				       struct tbr_sgl *dst, u64 wr_id,
				       u32 hdr_len)
{
	if (msg->total + hdr_len > dst->total) {
		tbr_sgl_put(dst);
		tbr_rx_complete(qp, wr_id, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0,
				msg);
		if (!tbr_rx_reliable(qp))
			return TBR_RESP_DROPPED;
		tbr_qp_set_error(qp);
		return TBR_RESP_REM_INV;
	}
	if (hdr_len) {
		struct tbr_sgl grh;

		tbr_rx_build_grh(msg->xfer->grh, msg->ah, msg->total);
		tbr_sgl_kernel(&grh, msg->xfer->grh, hdr_len);
		tbr_sgl_copy(dst, 0, &grh, hdr_len);
	}
	return TBR_RESP_OK;
}

/*
 * Resolve a receive WQE's buffers for a message of @need bytes (only those
 * are checked against their MRs, see tbr_sgl_resolve()).  On failure the
 * WQE completes in error and the QP goes to error; returns the answer.
 */
static enum tbr_resp tbr_rx_resolve(struct tbr_qp *qp, struct tbr_msg *msg,
				    struct tbr_sgl *dst, u64 wr_id,
				    const struct tbrdma_sge *sge, u32 num_sge,
				    u64 need)
{
	enum ib_wc_status status;

	status = tbr_sgl_resolve(dst, qp->tdev, tbr_rx_pdn(qp, msg), sge,
				 num_sge, IB_ACCESS_LOCAL_WRITE, need);
	if (status == IB_WC_SUCCESS)
		return TBR_RESP_OK;
	tbr_rx_complete(qp, wr_id, status, IB_WC_RECV, 0, msg);
	tbr_qp_set_error(qp);
	return tbr_rx_reliable(qp) ? TBR_RESP_REM_OP : TBR_RESP_DROPPED;
}

/*
 * A SEND, or one frame of it.  The first frame takes a receive WQE; one
 * that is not also the last keeps it in the QP's continuation until the
 * last frame completes it.  A UC message whose end was lost leaves its WQE
 * there for the next message, which the verbs spec allows; its buffers
 * are resolved again for that message's length.
 */
static enum tbr_resp tbr_rx_send(struct tbr_qp *qp, struct tbr_msg *msg)
{
	struct tbr_rx_cont *cont = tbr_rx_cont_of(qp);
	struct tbrdma_recv_wqe *wqe = (void *)msg->xfer->recv_wqe;
	struct tbr_sgl *dst = &msg->xfer->remote;
	u32 hdr_len = msg->ah ? sizeof(msg->xfer->grh) : 0;
	enum tbr_resp resp;
	u64 wr_id;

	if (cont && cont->active) {
		dst = &cont->sgl;
		wr_id = cont->wr_id;
		hdr_len = cont->hdr_len;
		if (msg->first) {	/* UC: a new message reuses the WQE */
			tbr_sgl_put(dst);
			resp = tbr_rx_resolve(qp, msg, dst, wr_id, cont->sge,
					      cont->num_sge,
					      msg->total + hdr_len);
			if (resp != TBR_RESP_OK) {
				tbr_rx_cont_end(cont);
				return resp;
			}
			if (msg->total + hdr_len > dst->total)
				goto too_long;
			cont->total = msg->total;
			cont->next_off = 0;
		}
		/* A later frame must continue exactly the message we started. */
		if (msg->total != cont->total || msg->offset != cont->next_off ||
		    msg->srq != cont->srq)
			goto too_long;
	} else {
		if (!msg->first)	/* UC: the start was lost */
			return TBR_RESP_DROPPED;
		if (tbr_rx_take_wqe(qp, msg, &resp))
			return resp;
		wr_id = wqe->wr_id;
		resp = tbr_rx_resolve(qp, msg, dst, wr_id,
				      (struct tbrdma_sge *)(wqe + 1),
				      wqe->num_sge, msg->total + hdr_len);
		if (resp != TBR_RESP_OK)
			return resp;
		resp = tbr_rx_send_begin(qp, msg, dst, wr_id, hdr_len);
		if (resp != TBR_RESP_OK)
			return resp;
		if (!msg->last) {
			if (WARN_ON_ONCE(!cont)) {
				tbr_sgl_put(dst);
				return TBR_RESP_DROPPED;
			}
			cont->sgl = *dst;
			cont->wr_id = wr_id;
			cont->hdr_len = hdr_len;
			cont->total = msg->total;
			cont->next_off = 0;
			cont->active = true;
			cont->num_sge = wqe->num_sge;
			memcpy(cont->sge, wqe + 1,
			       wqe->num_sge * sizeof(cont->sge[0]));
			cont->srq = msg->srq;
			if (cont->srq)
				refcount_inc(&cont->srq->users);
			dst = &cont->sgl;
		}
	}
	if (msg->offset + msg->length > msg->total)
		goto too_long;

	tbr_rx_copy_in(dst, hdr_len + msg->offset, msg);
	if (!msg->last) {
		cont->next_off = msg->offset + msg->length;
		return TBR_RESP_OK;
	}
	tbr_sgl_put(dst);
	if (cont && cont->active)
		tbr_rx_cont_end(cont);
	/* SEND_WITH_INV: the key dies with the message's completion. */
	if (msg->opcode == IB_UVERBS_WR_SEND_WITH_INV &&
	    tbr_mr_invalidate(qp->tdev, tbr_rx_pdn(qp, msg), qp->ibqp.qp_num,
			      msg->rkey, true) !=
	    IB_WC_SUCCESS) {
		tbr_rx_complete(qp, wr_id, IB_WC_REM_INV_REQ_ERR, IB_WC_RECV, 0,
				msg);
		if (!tbr_rx_reliable(qp))
			return TBR_RESP_DROPPED;
		tbr_qp_set_error(qp);
		return TBR_RESP_REM_INV;
	}
	tbr_rx_complete(qp, wr_id, IB_WC_SUCCESS, IB_WC_RECV,
			msg->total + hdr_len, msg);
	return TBR_RESP_OK;

too_long:
	tbr_sgl_put(dst);
	tbr_rx_complete(qp, wr_id, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0, msg);
	if (cont && cont->active)
		tbr_rx_cont_end(cont);
	if (!tbr_rx_reliable(qp))
		return TBR_RESP_DROPPED;
	tbr_qp_set_error(qp);
	return TBR_RESP_REM_INV;
}

/* The QP leaves service: a SEND in progress completes as flushed. */
void tbr_rx_cont_flush(struct tbr_qp *qp, struct tbr_rx_cont *cont)
{
	struct tbr_msg msg = { .src_qpn = 0 };

	if (!cont->active)
		return;
	tbr_sgl_put(&cont->sgl);
	msg.srq = cont->srq;
	tbr_rx_complete(qp, cont->wr_id, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, 0,
			&msg);
	tbr_rx_cont_end(cont);
}

/* The QP is reset or destroyed: a SEND in progress ends without completion. */
void tbr_rx_cont_drop(struct tbr_rx_cont *cont)
{
	if (!cont->active)
		return;
	tbr_sgl_put(&cont->sgl);
	tbr_rx_cont_end(cont);
}

/* An RDMA WRITE, or one frame of it; the immediate comes with the last. */
static enum tbr_resp tbr_rx_write(struct tbr_qp *qp, struct tbr_msg *msg)
{
	struct tbrdma_recv_wqe *wqe = (void *)msg->xfer->recv_wqe;
	struct tbr_sgl *dst = &msg->xfer->remote;
	bool with_imm = msg->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM &&
			msg->last;
	enum tbr_resp resp;

	if (!(qp->access & IB_ACCESS_REMOTE_WRITE) ||
	    tbr_sgl_resolve_remote(dst, qp->tdev, tbr_rx_pdn(qp, msg),
				   qp->ibqp.qp_num, msg->rkey,
				   msg->remote_addr, msg->length,
				   IB_ACCESS_REMOTE_WRITE) != IB_WC_SUCCESS)
		return tbr_rx_access_error(qp);

	/* The key is good; only now may the immediate consume a WQE. */
	if (with_imm && tbr_rx_take_wqe(qp, msg, &resp)) {
		tbr_sgl_put(dst);
		return resp;
	}
	tbr_rx_copy_in(dst, 0, msg);
	tbr_sgl_put(dst);
	if (with_imm)
		tbr_rx_complete(qp, wqe->wr_id, IB_WC_SUCCESS,
				IB_WC_RECV_RDMA_WITH_IMM, msg->total, msg);
	return TBR_RESP_OK;
}

static enum tbr_resp tbr_rx_read(struct tbr_qp *qp, struct tbr_msg *msg)
{
	struct tbr_sgl *src = &msg->xfer->remote;

	if (!(qp->access & IB_ACCESS_REMOTE_READ) ||
	    tbr_sgl_resolve_remote(src, qp->tdev, tbr_rx_pdn(qp, msg),
				   qp->ibqp.qp_num, msg->rkey,
				   msg->remote_addr, msg->length,
				   IB_ACCESS_REMOTE_READ) != IB_WC_SUCCESS)
		return tbr_rx_access_error(qp);
	/* Network: the transport sends @src back in frames and puts it. */
	if (msg->skb)
		return TBR_RESP_OK;
	tbr_sgl_copy(&msg->xfer->local, 0, src, msg->length);
	tbr_sgl_put(src);
	return TBR_RESP_OK;
}

/*
 * The 8 bytes an atomic or an ATOMIC WRITE acts on: aligned, in memory the
 * rkey and the QP open with @access; resolved into msg->xfer->remote,
 * where they never cross a page.
 */
static enum tbr_resp tbr_rx_target_u64(struct tbr_qp *qp, struct tbr_msg *msg,
				       int access)
{
	if (msg->remote_addr & 7)
		return tbr_rx_reliable(qp) ? TBR_RESP_REM_INV : TBR_RESP_DROPPED;
	if (!(qp->access & access) ||
	    tbr_sgl_resolve_remote(&msg->xfer->remote, qp->tdev,
				   tbr_rx_pdn(qp, msg), qp->ibqp.qp_num,
				   msg->rkey, msg->remote_addr, sizeof(u64),
				   access) != IB_WC_SUCCESS)
		return tbr_rx_access_error(qp);
	return TBR_RESP_OK;
}

/* Real atomic instructions: atomic against each other and against CPUs. */
static enum tbr_resp tbr_rx_atomic(struct tbr_qp *qp, struct tbr_msg *msg)
{
	struct tbr_sgl *target = &msg->xfer->remote;
	enum tbr_resp resp;
	u64 *p;

	resp = tbr_rx_target_u64(qp, msg, IB_ACCESS_REMOTE_ATOMIC);
	if (resp != TBR_RESP_OK)
		return resp;
	p = tbr_sgl_u64(target);
	if (msg->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP)
		msg->xfer->atomic_orig = cmpxchg64(p, msg->compare_add,
						   msg->swap);
	else
		msg->xfer->atomic_orig = atomic64_fetch_add(msg->compare_add,
							    (atomic64_t *)p);
	tbr_sgl_put(target);
	return TBR_RESP_OK;
}

/*
 * ATOMIC WRITE: 8 bytes to an aligned address of memory the rkey opens for
 * remote writes, stored at once, so no reader sees half of them.
 */
static enum tbr_resp tbr_rx_atomic_write(struct tbr_qp *qp,
					 struct tbr_msg *msg)
{
	struct tbr_sgl *target = &msg->xfer->remote;
	struct tbr_sgl value_sgl;
	enum tbr_resp resp;
	u64 value;

	if (msg->total != sizeof(u64) || msg->length != sizeof(u64))
		return TBR_RESP_REM_INV;
	resp = tbr_rx_target_u64(qp, msg, IB_ACCESS_REMOTE_WRITE);
	if (resp != TBR_RESP_OK)
		return resp;
	tbr_sgl_kernel(&value_sgl, &value, sizeof(value));
	tbr_rx_copy_in(&value_sgl, 0, msg);
	WRITE_ONCE(*tbr_sgl_u64(target), value);
	tbr_sgl_put(target);
	return TBR_RESP_OK;
}

enum tbr_resp tbr_rx_message(struct tbr_qp *qp, struct tbr_msg *msg)
{
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTR:
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		break;
	default:	/* not receiving: the request goes unanswered */
		return tbr_rx_reliable(qp) ? TBR_RESP_NO_QP : TBR_RESP_DROPPED;
	}
	tbr_count(qp->tdev, TBR_CNT_RX_OPS, 1);
	/*
	 * XRC: no such SRQ, not an XRC SRQ, or one of another XRC domain.
	 * NAK invalid request; the requester's WQE completes in error.
	 */
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT && !msg->srq)
		return TBR_RESP_REM_INV;
	/* An XRC_INI QP only sends: it has nowhere to take a request. */
	if (qp->ibqp.qp_type == IB_QPT_XRC_INI)
		return TBR_RESP_REM_INV;

	switch (msg->opcode) {
	case IB_UVERBS_WR_SEND_WITH_INV:
		/* Invalidation is for connected QPs. */
		if (tbr_qp_is_datagram(qp))
			return TBR_RESP_DROPPED;
		fallthrough;
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return tbr_rx_send(qp, msg);
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return tbr_rx_write(qp, msg);
	case IB_UVERBS_WR_RDMA_READ:
		return tbr_rx_read(qp, msg);
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return tbr_rx_atomic(qp, msg);
	case TBRDMA_WR_ATOMIC_WRITE:
		/* RC (and XRC) only, as the other atomics. */
		if (!tbr_rx_reliable(qp))
			return TBR_RESP_DROPPED;
		return tbr_rx_atomic_write(qp, msg);
	default:
		return tbr_rx_reliable(qp) ? TBR_RESP_REM_INV : TBR_RESP_DROPPED;
	}
}
