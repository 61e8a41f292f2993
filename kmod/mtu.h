/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Path MTU from the netdev MTU.  Pure arithmetic with no kernel dependency,
 * so the host unit tests compile this header as it is.
 */
#ifndef TBRDMA_MTU_H
#define TBRDMA_MTU_H

/*
 * Bytes each frame needs besides RDMA payload: the transport header and its
 * extension headers.  Kept as a budget the wire format must fit in, so the
 * MTU an application sees does not change when the format gains a field.
 */
#define TBR_FRAME_OVERHEAD	128

#define TBR_IB_MTU_MIN		256
#define TBR_IB_MTU_MAX		4096

/*
 * The largest IB MTU (256, 512, ... 4096 bytes) whose frames fit in a netdev
 * MTU, or 0 when not even a 256-byte payload fits (the port is then unusable).
 */
static inline unsigned int tbr_ib_mtu_for_netdev_mtu(unsigned int netdev_mtu)
{
	unsigned int mtu = TBR_IB_MTU_MAX;

	if (netdev_mtu < TBR_FRAME_OVERHEAD + TBR_IB_MTU_MIN)
		return 0;
	while (mtu + TBR_FRAME_OVERHEAD > netdev_mtu)
		mtu /= 2;
	return mtu;
}

#endif /* TBRDMA_MTU_H */
