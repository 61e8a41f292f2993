// SPDX-License-Identifier: GPL-2.0-only
/*
 * One frame out: headers, the payload taken from a scatter/gather list,
 * handed to the netdev's normal transmit path.  Where the netdev takes
 * paged buffers (NETIF_F_SG, as veth and thunderbolt-net do) the payload
 * is attached as references to the registered pages and never copied;
 * elsewhere it is copied into the frame.  A payload of up to
 * TBR_NET_COPYBREAK bytes is copied too, as NIC drivers do on receive:
 * copying a few bytes costs less than taking and dropping a page
 * reference, and a linear frame is cheaper for the receiver to copy out.
 *
 * The end-to-end checksum is the Internet checksum (RFC 1071), asked of
 * the netdev as checksum offload (CHECKSUM_PARTIAL), exactly as TCP does:
 * a NIC that can checksum any protocol does it, the stack does it in
 * software for one that cannot (validate_xmit_skb()), and a frame that
 * never leaves this host (veth) is never summed at all, because nothing
 * can damage it; what could (netem's corruption) sums it first.  An
 * XXH64 in software, which wire version 1 used, cost more than the copy.
 */
#include <linux/etherdevice.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/vmalloc.h>
#include <net/checksum.h>

#include "net.h"

u8 tbr_net_transport(const struct tbr_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		return TBR_TRANSPORT_RC;
	case IB_QPT_UC:
		return TBR_TRANSPORT_UC;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return TBR_TRANSPORT_XRC;
	default:
		return TBR_TRANSPORT_UD;
	}
}

/* The peer of a connected QP: the MAC the core resolved for its path. */
const u8 *tbr_net_peer_mac(struct tbr_qp *qp)
{
	return qp->av.roce.dmac;
}

/*
 * Payload bytes one frame of @opcode carries on this device's netdev.  A
 * request that may carry a piggybacked ACK keeps room for it, so that any
 * of its frames can, resent or not.
 */
u32 tbr_net_max_payload(struct tbr_dev *tdev, u8 opcode, u8 transport)
{
	u32 mtu = READ_ONCE(tdev->ndev->mtu);
	u32 hdr = tbr_wire_hdr_len(opcode, transport,
				   tbr_wire_may_piggy(opcode, transport) ?
				   TBR_WF_ACK_PSN : 0);

	return mtu > hdr ? mtu - hdr : 0;
}

void tbr_net_frame_init(struct tbr_frame *f, struct tbr_qp *qp, u8 opcode,
			u32 dst_qpn, u32 psn)
{
	memset(f, 0, sizeof(*f));
	f->hdr.version = TBR_WIRE_VERSION;
	f->hdr.opcode = opcode;
	f->hdr.transport = tbr_net_transport(qp);
	f->hdr.dst_qpn = cpu_to_be32(dst_qpn);
	f->hdr.src_qpn = cpu_to_be32(qp->ibqp.qp_num);
	f->hdr.psn = cpu_to_be32(psn & TBR_PSN_MASK);
}

/*
 * An ACK (or NAK) of transport RC or XRC from our QP @src_qpn to QP
 * @dst_qpn at @dmac.  It needs no QP: a destroyed QP's tombstone sends it
 * too.
 */
void tbr_net_xmit_ack(struct tbr_dev *tdev, const u8 *dmac, u8 transport,
		      u32 src_qpn, u32 dst_qpn, u32 psn, u8 syndrome,
		      u8 rnr_timer)
{
	struct tbr_frame f;

	memset(&f, 0, sizeof(f));
	f.hdr.version = TBR_WIRE_VERSION;
	f.hdr.opcode = TBR_OP_ACK;
	f.hdr.transport = transport;
	f.hdr.dst_qpn = cpu_to_be32(dst_qpn);
	f.hdr.src_qpn = cpu_to_be32(src_qpn);
	f.hdr.psn = cpu_to_be32(psn & TBR_PSN_MASK);
	f.ext.ack.syndrome = syndrome;
	f.ext.ack.rnr_timer = rnr_timer;
	f.dmac = dmac;
	tbr_net_xmit(tdev, &f);
}

/*
 * The page under a kernel consumer's buffer (on a software device its DMA
 * addresses are kernel virtual addresses), if an skb may hold a reference
 * to it: not slab memory, and not the tail of a higher-order allocation
 * without a count of its own -- the test sendpage_ok() makes for the same
 * reason.  NULL sends the frame copied.
 */
static struct page *tbr_kernel_page(const void *kaddr)
{
	struct page *page;

	if (is_vmalloc_addr(kaddr))
		page = vmalloc_to_page(kaddr);
	else if (virt_addr_valid(kaddr))
		page = virt_to_page(kaddr);
	else
		return NULL;
	return page && sendpage_ok(page) ? page : NULL;
}

static bool tbr_skb_add_frag(struct sk_buff *skb, int *nr, struct page *page,
			     unsigned int off, unsigned int len)
{
	if (*nr == MAX_SKB_FRAGS)
		return false;
	get_page(page);
	skb_fill_page_desc(skb, (*nr)++, page, off, len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return true;
}

/*
 * Attach the payload as page references; false if it cannot be.  A user
 * MR's pieces come with their pinned page; a kernel consumer's buffer
 * (its WRITEs and SENDs of storage data) is split at page boundaries and
 * referenced page by page, so its data is not copied either.
 */
static bool tbr_frame_add_frags(struct sk_buff *skb, const struct tbr_frame *f)
{
	struct tbr_sgl_piece piece;
	struct tbr_sgl_iter it;
	u32 left = f->pay_len;
	int nr = 0;

	tbr_sgl_iter_init(&it, f->pay, f->pay_off);
	while (left && tbr_sgl_iter_next(&it, left, &piece)) {
		const u8 *p = piece.kaddr;
		size_t n = piece.len;

		left -= piece.len;
		if (piece.page) {
			if (!tbr_skb_add_frag(skb, &nr, piece.page,
					      piece.page_off, piece.len))
				return false;
			continue;
		}
		while (n) {
			struct page *page = tbr_kernel_page(p);
			unsigned int off = offset_in_page(p);
			unsigned int len = min_t(size_t, n, PAGE_SIZE - off);

			if (!page || !tbr_skb_add_frag(skb, &nr, page, off, len))
				return false;
			p += len;
			n -= len;
		}
	}
	return !left;
}

/*
 * Copy the payload into the frame; with @sum, add it up on the way (one
 * pass instead of a copy and then a checksum pass) and return its sum.
 */
static __wsum tbr_frame_copy_payload(u8 *to, const struct tbr_frame *f,
				     bool sum)
{
	struct tbr_sgl_piece piece;
	struct tbr_sgl_iter it;
	u32 left = f->pay_len, done = 0;
	__wsum csum = 0;

	tbr_sgl_iter_init(&it, f->pay, f->pay_off);
	while (left && tbr_sgl_iter_next(&it, left, &piece)) {
		if (sum)
			csum = csum_block_add(csum,
					      csum_partial_copy_nocheck(piece.kaddr,
									to + done,
									piece.len),
					      done);
		else
			memcpy(to + done, piece.kaddr, piece.len);
		done += piece.len;
		left -= piece.len;
	}
	return csum;
}

/* The headers into a new frame: the piggybacked ACK after the others. */
static void tbr_frame_put_headers(struct sk_buff *skb, const struct tbr_frame *f)
{
	skb_put_data(skb, f, tbr_wire_op_hdr_len(f->hdr.opcode,
						 f->hdr.transport));
	if (f->hdr.flags & TBR_WF_ACK_PSN)
		skb_put_data(skb, &f->piggy, sizeof(f->piggy));
}

/* Every frame in the protocol goes out here.  Any context. */
int tbr_net_xmit(struct tbr_dev *tdev, struct tbr_frame *f)
{
	struct net_device *ndev = tdev->ndev;
	unsigned int hdr_len = tbr_wire_hdr_len(f->hdr.opcode, f->hdr.transport,
						f->hdr.flags);
	bool paged = f->pay_len > TBR_NET_COPYBREAK && !f->snapshot &&
		     (ndev->features & NETIF_F_SG);
	bool to_self = ether_addr_equal(f->dmac, ndev->dev_addr);
	unsigned int room = LL_RESERVED_SPACE(ndev);
	struct sk_buff *skb;
	bool sum_here;
	__wsum sum = 0;

	BUILD_BUG_ON(offsetof(struct tbr_frame, ext) != sizeof(struct tbr_wire_hdr));
	if (!f->pay)
		f->pay_len = 0;
	f->hdr.pay_len = cpu_to_be32(f->pay_len);
	f->hdr.csum = 0;	/* summed as 0, then filled in */
	f->hdr.csum_pad = 0;
	if (tdev->csum)
		f->hdr.flags |= TBR_WF_CSUM;

	skb = alloc_skb(room + hdr_len + (paged ? 0 : f->pay_len) +
			ndev->needed_tailroom, GFP_ATOMIC);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, room);
	skb_reset_network_header(skb);
	tbr_frame_put_headers(skb, f);
	if (paged && !tbr_frame_add_frags(skb, f)) {
		/* Too many pieces for one skb: copy instead. */
		kfree_skb(skb);
		skb = alloc_skb(room + hdr_len + f->pay_len +
				ndev->needed_tailroom, GFP_ATOMIC);
		if (!skb)
			return -ENOMEM;
		skb_reserve(skb, room);
		skb_reset_network_header(skb);
		tbr_frame_put_headers(skb, f);
		paged = false;
	}
	/*
	 * A copied frame for a netdev that cannot sum it (virtio-net
	 * without offloads: the stack would sum it in a pass of its own) is
	 * summed here, while the payload is copied.
	 */
	sum_here = tdev->csum && !paged && !to_self &&
		   !(ndev->features & NETIF_F_HW_CSUM);
	if (!paged && f->pay_len)
		sum = tbr_frame_copy_payload(skb_put(skb, f->pay_len), f,
					     sum_here);
	if (sum_here) {
		sum = csum_block_add(csum_partial(skb->data, hdr_len, 0), sum,
				     hdr_len);
		((struct tbr_wire_hdr *)skb->data)->csum = csum_fold(sum);
	} else if (tdev->csum &&
		   !skb_partial_csum_set(skb, 0,
					 offsetof(struct tbr_wire_hdr, csum))) {
		/* From our header to the end, into csum: by the NIC or the stack. */
		kfree_skb(skb);
		return -EINVAL;
	}

	skb->dev = ndev;
	skb->protocol = htons(TBR_ETH_P);
	if (dev_hard_header(skb, ndev, TBR_ETH_P, f->dmac, ndev->dev_addr,
			    skb->len) < 0) {
		kfree_skb(skb);
		return -EINVAL;
	}
	tbr_count(tdev, TBR_CNT_TX_PACKETS, 1);
	tbr_count(tdev, TBR_CNT_TX_BYTES, skb->len);
	if (unlikely(to_self)) {
		/*
		 * To one of our own GIDs (a QP of this device: libfabric's
		 * dgram endpoints, any two processes on one host): the wire
		 * would take it to the peer, which drops it.  Receive it here,
		 * as a NIC loops such packets back and veth hands frames over:
		 * through the backlog, so the packet handler runs in softirq
		 * context as always, never inside the sender.
		 */
		skb->protocol = eth_type_trans(skb, ndev);
		netif_rx(skb);
		return 0;
	}
	/* The netdev's own drops count as losses: the protocol recovers. */
	dev_queue_xmit(skb);
	return 0;
}

/*
 * Does the frame's checksum match?  @len: header and payload bytes (a
 * frame may be longer: padding).  A frame built on this host that never
 * left it (veth, our own loopback) is still CHECKSUM_PARTIAL and was never
 * summed: nothing can have damaged it.  A NIC that summed the whole frame
 * (CHECKSUM_COMPLETE) saves the pass when there is no padding.
 */
bool tbr_net_csum_ok(const struct sk_buff *skb, unsigned int len)
{
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		return true;
	if (skb->ip_summed == CHECKSUM_COMPLETE && skb->len == len)
		return csum_fold(skb->csum) == 0;
	return csum_fold(skb_checksum(skb, 0, len, 0)) == 0;
}
