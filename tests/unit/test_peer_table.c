// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kmod/peer_table.h: the peers-seen table behind sysfs tbrdma_peers.  Most
 * recently seen first, counts per peer, the least recently seen peer
 * evicted when full, and a long random run against a simple model.
 */
#include <stdint.h>

#include "tap.h"
#include "../../kmod/peer_table.h"

static void mac_of(unsigned char *mac, unsigned int n)
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = 0x00;
	mac[3] = (unsigned char)(n >> 16);
	mac[4] = (unsigned char)(n >> 8);
	mac[5] = (unsigned char)n;
}

static int has_mac(const struct tbr_peer *p, unsigned int n)
{
	unsigned char mac[TBR_PEER_ADDR_LEN];

	mac_of(mac, n);
	return tbr_peer_mac_equal(p->mac, mac);
}

static void seen(struct tbr_peer_table *t, unsigned int n, unsigned int len,
		 unsigned long now)
{
	unsigned char mac[TBR_PEER_ADDR_LEN];

	mac_of(mac, n);
	tbr_peer_table_seen(t, mac, len, now);
}

static void test_basics(void)
{
	struct tbr_peer_table t = { 0 };

	is_int(t.count, 0, "a new table is empty");

	seen(&t, 1, 100, 10);
	is_int(t.count, 1, "first frame: one peer");
	ok(has_mac(&t.peer[0], 1), "first peer's MAC recorded");
	is_int(t.peer[0].rx_packets, 1, "one packet");
	is_int(t.peer[0].rx_bytes, 100, "its bytes");
	is_int(t.peer[0].last_seen, 10, "its time");

	seen(&t, 1, 50, 20);
	is_int(t.count, 1, "same peer again: still one");
	is_int(t.peer[0].rx_packets, 2, "two packets");
	is_int(t.peer[0].rx_bytes, 150, "bytes add up");
	is_int(t.peer[0].last_seen, 20, "time updated");

	seen(&t, 2, 1, 30);
	is_int(t.count, 2, "second peer");
	ok(has_mac(&t.peer[0], 2) && has_mac(&t.peer[1], 1),
	   "the newest first");
	seen(&t, 1, 1, 40);
	ok(has_mac(&t.peer[0], 1) && has_mac(&t.peer[1], 2),
	   "a peer heard again moves to the front");
	is_int(t.peer[0].rx_packets, 3, "and keeps its count");
	is_int(t.peer[1].rx_packets, 1, "the other keeps its own");
}

static void test_eviction(void)
{
	struct tbr_peer_table t = { 0 };
	unsigned int i, found;

	for (i = 0; i < TBR_PEERS_MAX; i++)
		seen(&t, 100 + i, 1, i);
	is_int(t.count, TBR_PEERS_MAX, "table full");
	ok(has_mac(&t.peer[TBR_PEERS_MAX - 1], 100), "oldest at the end");

	seen(&t, 100, 1, 1000);	/* the oldest is heard again: now newest */
	seen(&t, 999, 1, 1001);	/* a new peer evicts the least recent: 101 */
	is_int(t.count, TBR_PEERS_MAX, "still full after a new peer");
	ok(has_mac(&t.peer[0], 999), "the new peer is first");
	ok(has_mac(&t.peer[1], 100), "the refreshed peer is second");
	found = 0;
	for (i = 0; i < t.count; i++)
		found += has_mac(&t.peer[i], 101);
	is_int(found, 0, "the least recently seen peer was evicted");
	is_int(t.peer[0].rx_packets, 1, "the new peer starts at one packet");

	seen(&t, 101, 7, 1002);
	is_int(t.peer[0].rx_packets, 1,
	       "an evicted peer coming back starts counting again");
	is_int(t.peer[0].rx_bytes, 7, "with its new bytes only");
}

/* Model: per-MAC counters and times, "present" = in the table. */
#define MODEL_MACS	(TBR_PEERS_MAX + 16)

struct model {
	int present[MODEL_MACS];
	unsigned long long packets[MODEL_MACS];
	unsigned long long bytes[MODEL_MACS];
	unsigned long last[MODEL_MACS];
	unsigned int count;
};

static void model_seen(struct model *m, unsigned int n, unsigned int len,
		       unsigned long now)
{
	unsigned int i, oldest = MODEL_MACS;

	if (!m->present[n]) {
		if (m->count == TBR_PEERS_MAX) {
			for (i = 0; i < MODEL_MACS; i++)
				if (m->present[i] && (oldest == MODEL_MACS ||
						      m->last[i] < m->last[oldest]))
					oldest = i;
			m->present[oldest] = 0;
		} else {
			m->count++;
		}
		m->present[n] = 1;
		m->packets[n] = 0;
		m->bytes[n] = 0;
	}
	m->packets[n]++;
	m->bytes[n] += len;
	m->last[n] = now;
}

static int table_matches_model(const struct tbr_peer_table *t,
			       const struct model *m)
{
	unsigned int i, n;

	if (t->count != m->count)
		return 0;
	for (i = 0; i < t->count; i++) {
		const struct tbr_peer *p = &t->peer[i];

		n = (unsigned int)p->mac[4] << 8 | p->mac[5];
		if (n >= MODEL_MACS || !m->present[n] || !has_mac(p, n) ||
		    p->rx_packets != m->packets[n] ||
		    p->rx_bytes != m->bytes[n] || p->last_seen != m->last[n])
			return 0;
		if (i > 0 && p->last_seen >= t->peer[i - 1].last_seen)
			return 0;	/* strictly newest first */
	}
	return 1;
}

static void test_random(void)
{
	static struct tbr_peer_table t;
	static struct model m;
	uint32_t x = 12345;
	unsigned long now;
	unsigned int n, len;
	int good = 1;

	for (now = 1; now <= 200000 && good; now++) {
		x = x * 1664525u + 1013904223u;
		/* Skewed: a few busy peers, a long tail of rare ones. */
		n = (x >> 8) % (x & 1 ? 4 : MODEL_MACS);
		len = (x >> 20) & 0xfff;
		seen(&t, n, len, now);
		model_seen(&m, n, len, now);
		good = table_matches_model(&t, &m);
	}
	ok(good, "200000 random frames over %d peers agree with an LRU model",
	   MODEL_MACS);
	if (!good)
		diag("  diverged at step %lu", now - 1);
}

int main(void)
{
	plan(NO_PLAN);
	test_basics();
	test_eviction();
	test_random();
	return done();
}
