/* SPDX-License-Identifier: GPL-2.0-only */
/* What a UD send needs from an address handle. */
#ifndef TBRDMA_AH_H
#define TBRDMA_AH_H

#include <linux/if_ether.h>
#include <rdma/ib_verbs.h>

struct tbr_dev;

struct tbr_ah_info {
	u32 pdn;
	union ib_gid sgid;
	union ib_gid dgid;
	u8 dmac[ETH_ALEN];
	struct rcu_head rcu;
};

int tbr_av_check(struct tbr_dev *tdev, const union ib_gid *dgid,
		 const u8 *dmac);
bool tbr_ah_lookup(struct tbr_dev *tdev, u32 handle, u32 pdn,
		   struct tbr_ah_info *out);

#endif /* TBRDMA_AH_H */
