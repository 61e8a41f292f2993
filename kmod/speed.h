/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Port speed and width from the netdev's Ethernet speed.  Pure arithmetic,
 * shared with the host unit tests: the includer provides the IB_SPEED_* and
 * IB_WIDTH_* names (the kernel from <rdma/ib_verbs.h>).
 */
#ifndef TBRDMA_SPEED_H
#define TBRDMA_SPEED_H

/*
 * thunderbolt-net reports no ethtool speed; the slowest Thunderbolt link
 * runs at 10 Gb/s, so an unknown speed is taken as that.
 */
#define TBR_UNKNOWN_SPEED_MBPS	10000

struct tbr_ib_rate {
	unsigned char speed;	/* IB_SPEED_*: per-lane rate */
	unsigned char width;	/* IB_WIDTH_*: lanes */
};

/* The IB speed x width that does not exceed @mbps (0: unknown). */
static inline struct tbr_ib_rate tbr_ib_rate_for_mbps(unsigned int mbps)
{
	struct tbr_ib_rate rate = { IB_SPEED_EDR, IB_WIDTH_4X };	/* 100 Gb/s */

	if (!mbps)
		mbps = TBR_UNKNOWN_SPEED_MBPS;
	if (mbps <= 1000)
		rate = (struct tbr_ib_rate){ IB_SPEED_SDR, IB_WIDTH_1X };	/* 2.5 */
	else if (mbps <= 10000)
		rate = (struct tbr_ib_rate){ IB_SPEED_FDR10, IB_WIDTH_1X };	/* 10 */
	else if (mbps <= 20000)
		rate = (struct tbr_ib_rate){ IB_SPEED_DDR, IB_WIDTH_4X };	/* 20 */
	else if (mbps <= 25000)
		rate = (struct tbr_ib_rate){ IB_SPEED_EDR, IB_WIDTH_1X };	/* 25 */
	else if (mbps <= 40000)
		rate = (struct tbr_ib_rate){ IB_SPEED_FDR10, IB_WIDTH_4X };	/* 40 */
	return rate;
}

#endif /* TBRDMA_SPEED_H */
