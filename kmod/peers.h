/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The peers each device has received frames from, shown in sysfs as
 * tbrdma_peers.  The table itself (peer_table.h) is pure C; this is its
 * home in a device and its lock.
 */
#ifndef TBRDMA_PEERS_H
#define TBRDMA_PEERS_H

#include <linux/spinlock.h>
#include <linux/types.h>

#include "peer_table.h"

struct tbr_peers {
	spinlock_t lock;	/* the receive path (softirq) vs sysfs readers */
	struct tbr_peer_table table;
};

struct tbr_dev;

void tbr_peers_init(struct tbr_dev *tdev);
void tbr_peer_seen(struct tbr_dev *tdev, const u8 *mac,
		   unsigned int len_bytes);
ssize_t tbr_peers_show(struct tbr_dev *tdev, char *buf);

#endif /* TBRDMA_PEERS_H */
