// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "peers.h"
#include "sysfs.h"

static int is_mac(const char *s)
{
	int i;

	for (i = 0; i < 17; i++) {
		if (i % 3 == 2 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
			return 0;
	}
	return s[17] == '\0';
}

static int parse_line(const char *line, struct peer *peer)
{
	char mac[32], rest;

	if (sscanf(line, "%31s %" SCNu64 " %" SCNu64 " %c", mac,
		   &peer->rx_packets, &peer->last_seen_ms, &rest) != 3)
		return -EINVAL;
	/* sscanf takes "-1" for an unsigned: refuse signs. */
	if (strchr(line, '-') || !is_mac(mac))
		return -EINVAL;
	memcpy(peer->mac, mac, sizeof(peer->mac));
	return 0;
}

void peers_parse(const char *text, struct peer_list *list)
{
	const char *line = text, *end;
	char buf[256];
	size_t len;

	list->n = 0;
	list->malformed = 0;
	while (*line) {
		end = strchr(line, '\n');
		len = end ? (size_t)(end - line) : strlen(line);
		if (len >= sizeof(buf)) {
			list->malformed++;
		} else {
			memcpy(buf, line, len);
			buf[len] = '\0';
			if (strspn(buf, " \t") == len)
				;	/* blank line */
			else if (list->n == PEERS_MAX)
				;	/* keep the first PEERS_MAX */
			else if (parse_line(buf, &list->p[list->n]))
				list->malformed++;
			else
				list->n++;
		}
		if (!end)
			break;
		line = end + 1;
	}
}

int peers_read(const char *ibdev, struct peer_list *list)
{
	/* A sysfs attribute is at most a page. */
	char text[8192];
	int err;

	err = tbr_sysfs_read(text, sizeof(text),
			     "class/infiniband/%s/tbrdma_peers", ibdev);
	if (err)
		return err;
	peers_parse(text, list);
	return 0;
}
