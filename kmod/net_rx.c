// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frames in: the packet handler for the tbrdma EtherType.  Everything in a
 * frame comes from the wire and is checked here before anything acts on
 * it: version, opcode, lengths, checksum, destination QP.  Requests go to
 * the responder (net_resp.c), responses and ACKs to the requester
 * (net_req.c).  Runs in softirq context.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>

#include "net.h"

static void tbr_net_drop(struct tbr_dev *tdev, enum tbr_counter counter,
			 const char *why)
{
	tbr_count(tdev, counter, 1);
	net_dbg_ratelimited("tbrdma %s: dropped a frame: %s\n",
			    dev_name(&tdev->ibdev.dev), why);
}

static void tbr_net_bad(struct tbr_dev *tdev, const char *why)
{
	tbr_net_drop(tdev, TBR_CNT_RX_BAD_FRAMES, why);
}

static void tbr_net_rx_frame(struct tbr_dev *tdev, struct sk_buff *skb)
{
	const struct tbr_wire_hdr *hdr;
	unsigned int hdr_len;
	struct tbr_qp *qp;
	u32 pay_len;

	tbr_count(tdev, TBR_CNT_RX_PACKETS, 1);
	tbr_count(tdev, TBR_CNT_RX_BYTES, skb->len + ETH_HLEN);
	if (!pskb_may_pull(skb, sizeof(*hdr)))
		return tbr_net_bad(tdev, "truncated header");
	hdr = (const struct tbr_wire_hdr *)skb->data;
	if (hdr->version != TBR_WIRE_VERSION) {
		net_info_ratelimited("tbrdma %s: peer %pM speaks wire version %u, not %u\n",
				     dev_name(&tdev->ibdev.dev),
				     eth_hdr(skb)->h_source, hdr->version,
				     TBR_WIRE_VERSION);
		return tbr_net_bad(tdev, "version");
	}
	hdr_len = tbr_wire_hdr_len(hdr->opcode, hdr->transport, hdr->flags);
	if (!hdr_len || hdr->transport > TBR_TRANSPORT_XRC)
		return tbr_net_bad(tdev, "opcode");
	if (!pskb_may_pull(skb, hdr_len))
		return tbr_net_bad(tdev, "truncated extension");
	hdr = (const struct tbr_wire_hdr *)skb->data;
	pay_len = be32_to_cpu(hdr->pay_len);
	/* Longer is fine: short Ethernet frames are padded. */
	if (pay_len > skb->len - hdr_len)
		return tbr_net_bad(tdev, "truncated payload");

	if (hdr->flags & TBR_WF_CSUM) {
		if (!tbr_net_csum_ok(skb, hdr_len + pay_len)) {
			tbr_count(tdev, TBR_CNT_RX_CHECKSUM_ERRORS, 1);
			return;
		}
	} else if (tdev->csum) {
		/* We protect our data: a frame without a checksum may be damaged. */
		tbr_count(tdev, TBR_CNT_RX_CHECKSUM_ERRORS, 1);
		return;
	}

	qp = tbr_qp_get(tdev, be32_to_cpu(hdr->dst_qpn) & TBR_PSN_MASK);
	if (!qp) {
		if (tbr_wire_is_request(hdr->opcode))
			tbr_net_tomb_answer(tdev, hdr);
		/*
		 * Well formed, for a QP number nobody owns: every connection
		 * that ends leaves some (a duplicate or a late ACK in flight
		 * when its QP was destroyed).  Counted apart from malformed
		 * frames, which stay a sign of damage or of a broken peer.
		 */
		return tbr_net_drop(tdev, TBR_CNT_RX_STALE_FRAMES, "no such QP");
	}
	if (!qp->net || tbr_net_transport(qp) != hdr->transport) {
		tbr_net_bad(tdev, "transport");
	} else {
		/* Not our own frames, looped back (tbr_net_xmit()). */
		if (!ether_addr_equal(eth_hdr(skb)->h_source,
				      skb->dev->dev_addr))
			tbr_peer_seen(tdev, eth_hdr(skb)->h_source,
				      skb->len + ETH_HLEN);
		if (tbr_wire_is_request(hdr->opcode)) {
			/*
			 * The ACK a request carries first: it answers our
			 * requests, which came before this one, and their
			 * completions come before this one's, as they would
			 * after an ACK frame.  Applications count on that
			 * order: perftest's latency tests with events wait on
			 * one channel for the send's event, then the receive's.
			 */
			if (hdr->flags & TBR_WF_ACK_PSN)
				tbr_net_req_rx_piggy(qp, hdr);
			tbr_net_resp_rx(qp, skb, hdr, hdr_len);
		} else {
			tbr_net_req_rx(qp, skb, hdr, hdr_len);
		}
	}
	tbr_qp_put(qp);
}

static int tbr_net_rcv(struct sk_buff *skb, struct net_device *ndev,
		       struct packet_type *pt, struct net_device *orig_ndev)
{
	struct tbr_dev *tdev;

	if (skb->pkt_type == PACKET_OTHERHOST)
		goto drop;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	rcu_read_lock();
	tdev = tbr_dev_get_by_netdev_rcu(ndev);
	rcu_read_unlock();
	if (!tdev)
		goto drop;
	tbr_net_rx_frame(tdev, skb);
	ib_device_put(&tdev->ibdev);
	consume_skb(skb);
	return NET_RX_SUCCESS;
drop:
	kfree_skb(skb);
	return NET_RX_DROP;
}

static struct packet_type tbr_packet_type = {
	.type = cpu_to_be16(TBR_ETH_P),
	.func = tbr_net_rcv,
};

int tbr_net_init(void)
{
	dev_add_pack(&tbr_packet_type);
	return 0;
}

void tbr_net_exit(void)
{
	/* Waits for handlers that are running (synchronize_net). */
	dev_remove_pack(&tbr_packet_type);
}
