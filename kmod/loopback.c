// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loopback transport: both ends of every QP connection are on this
 * device, so a message is delivered by calling the responder directly,
 * with its data copied once from the source pages to the destination
 * pages.  No packets, no checksums, no retransmission.
 */
#include "msg.h"

/* Would the destination accept traffic from the source at all? */
static bool tbr_loopback_peers(const struct tbr_qp *src,
			       const struct tbr_qp *dst, u32 qkey)
{
	if (tbr_qp_is_datagram(src))
		return tbr_qp_is_datagram(dst) && READ_ONCE(dst->qkey) == qkey;
	/* An XRC_INI QP talks to an XRC_TGT QP. */
	if (src->ibqp.qp_type == IB_QPT_XRC_INI)
		return dst->ibqp.qp_type == IB_QPT_XRC_TGT &&
		       READ_ONCE(dst->dest_qpn) == src->ibqp.qp_num;
	/* A connected QP takes traffic only from the QP it is connected to. */
	return dst->ibqp.qp_type == src->ibqp.qp_type &&
	       READ_ONCE(dst->dest_qpn) == src->ibqp.qp_num;
}

enum tbr_resp tbr_loopback_deliver(struct tbr_qp *src, u32 dst_qpn,
				   struct tbr_msg *msg)
{
	enum tbr_resp unanswered = tbr_qp_is_reliable(src) ?
				   TBR_RESP_NO_QP : TBR_RESP_DROPPED;
	struct tbr_qp *dst;
	enum tbr_resp resp;

	/* Each message counts as one packet each way: nothing is segmented. */
	tbr_count(src->tdev, TBR_CNT_TX_PACKETS, 1);
	tbr_count(src->tdev, TBR_CNT_TX_BYTES, msg->length);
	dst = tbr_qp_get(src->tdev, dst_qpn);
	if (!dst)
		return unanswered;
	if (tbr_loopback_peers(src, dst, msg->qkey)) {
		tbr_count(src->tdev, TBR_CNT_RX_PACKETS, 1);
		tbr_count(src->tdev, TBR_CNT_RX_BYTES, msg->length);
		tbr_rx_xrc_get(dst, msg);
		resp = tbr_rx_message(dst, msg);
		tbr_rx_xrc_put(msg);
	} else {
		tbr_count(src->tdev, TBR_CNT_RX_BAD_FRAMES, 1);
		resp = unanswered;
	}
	tbr_qp_put(dst);
	return resp;
}
