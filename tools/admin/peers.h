/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The peers a netdev-mode device has received frames from, from the
 * kernel's /sys/class/infiniband/DEV/tbrdma_peers: one line per peer,
 * "MAC RX_PACKETS LAST_SEEN_MS_AGO".
 */
#ifndef TBRDMA_ADMIN_PEERS_H
#define TBRDMA_ADMIN_PEERS_H

#include <stddef.h>
#include <stdint.h>

#define PEERS_MAX 64

struct peer {
	char mac[18];		/* "02:00:00:00:00:02" */
	uint64_t rx_packets;
	uint64_t last_seen_ms;	/* how long ago the last frame came */
};

struct peer_list {
	size_t n;
	size_t malformed;	/* lines that did not parse, skipped */
	struct peer p[PEERS_MAX];
};

/* Parse the attribute's text (any number of lines, at most PEERS_MAX kept). */
void peers_parse(const char *text, struct peer_list *list);

/*
 * Read and parse a device's peers: 0, -ENOENT if the module has no such
 * attribute, or -errno.
 */
int peers_read(const char *ibdev, struct peer_list *list);

#endif /* TBRDMA_ADMIN_PEERS_H */
