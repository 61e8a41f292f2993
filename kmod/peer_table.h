/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The peers a device has received frames from: a small table kept in
 * most-recently-seen order, the least recently seen peer evicted when a new
 * one arrives and the table is full.  Pure C with no kernel dependency (the
 * caller passes the time and does the locking), so the host unit tests
 * compile this header as it is.
 */
#ifndef TBRDMA_PEER_TABLE_H
#define TBRDMA_PEER_TABLE_H

#define TBR_PEERS_MAX		32	/* per device */
#define TBR_PEER_ADDR_LEN	6	/* an Ethernet MAC */

struct tbr_peer {
	unsigned char mac[TBR_PEER_ADDR_LEN];
	unsigned long long rx_packets;
	unsigned long long rx_bytes;
	unsigned long last_seen;	/* the caller's clock (jiffies) */
};

struct tbr_peer_table {
	unsigned int count;
	struct tbr_peer peer[TBR_PEERS_MAX];	/* most recently seen first */
};

static inline int tbr_peer_mac_equal(const unsigned char *a,
				     const unsigned char *b)
{
	unsigned int i;

	for (i = 0; i < TBR_PEER_ADDR_LEN; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/*
 * A frame of @len bytes from @mac arrived at time @now: count it and move
 * its peer to the front.  Constant-bounded work, no allocation.
 */
static inline void tbr_peer_table_seen(struct tbr_peer_table *t,
				       const unsigned char *mac,
				       unsigned int len, unsigned long now)
{
	struct tbr_peer p;
	unsigned int i, j;

	for (i = 0; i < t->count; i++)
		if (tbr_peer_mac_equal(t->peer[i].mac, mac))
			break;
	if (i < t->count) {
		p = t->peer[i];
	} else {
		/* New: takes the last slot, a free one or the oldest peer's. */
		if (t->count < TBR_PEERS_MAX)
			t->count++;
		i = t->count - 1;
		for (j = 0; j < TBR_PEER_ADDR_LEN; j++)
			p.mac[j] = mac[j];
		p.rx_packets = 0;
		p.rx_bytes = 0;
	}
	for (; i > 0; i--)
		t->peer[i] = t->peer[i - 1];
	p.rx_packets++;
	p.rx_bytes += len;
	p.last_seen = now;
	t->peer[0] = p;
}

#endif /* TBRDMA_PEER_TABLE_H */
