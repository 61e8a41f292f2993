// SPDX-License-Identifier: GPL-2.0-only
/*
 * Peers seen: the source MAC of every valid frame a device receives, with a
 * packet count and the time it was last heard from, for administrators to
 * see who is on the other end of a cable (sysfs tbrdma_peers).  The table
 * is embedded in the device: the receive path never allocates.
 */
#include <linux/build_bug.h>
#include <linux/jiffies.h>
#include <linux/sysfs.h>

#include "tbrdma.h"

/* The longest line: "xx:xx:xx:xx:xx:xx <u64> <u64>\n" */
#define TBR_PEER_LINE_MAX	(3 * TBR_PEER_ADDR_LEN + 2 * 21)

void tbr_peers_init(struct tbr_dev *tdev)
{
	spin_lock_init(&tdev->peers.lock);
	tdev->peers.table.count = 0;
}

/*
 * A valid frame of @len_bytes bytes from @mac (TBR_PEER_ADDR_LEN bytes)
 * arrived on @tdev.  Any context; the receive path calls it in softirq.
 * Loopback devices have no peers.
 */
void tbr_peer_seen(struct tbr_dev *tdev, const u8 *mac,
		   unsigned int len_bytes)
{
	unsigned long flags;

	if (tdev->mode == TBRDMA_MODE_LOOPBACK)
		return;
	spin_lock_irqsave(&tdev->peers.lock, flags);
	tbr_peer_table_seen(&tdev->peers.table, mac, len_bytes, jiffies);
	spin_unlock_irqrestore(&tdev->peers.lock, flags);
}

/* One line per peer, most recently seen first: MAC RX_PACKETS MS_AGO */
ssize_t tbr_peers_show(struct tbr_dev *tdev, char *buf)
{
	const struct tbr_peer *p;
	unsigned long flags, now;
	unsigned int i;
	int len = 0;

	BUILD_BUG_ON(TBR_PEERS_MAX * TBR_PEER_LINE_MAX > PAGE_SIZE);

	spin_lock_irqsave(&tdev->peers.lock, flags);
	now = jiffies;
	for (i = 0; i < tdev->peers.table.count; i++) {
		p = &tdev->peers.table.peer[i];
		len += sysfs_emit_at(buf, len, "%pM %llu %llu\n", p->mac,
				     p->rx_packets,
				     jiffies64_to_msecs(now - p->last_seen));
	}
	spin_unlock_irqrestore(&tdev->peers.lock, flags);
	return len;
}
