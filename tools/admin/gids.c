// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gids.h"
#include "sysfs.h"

int gid_format(const char *text, char *buf, size_t size)
{
	static const unsigned char zero[16];
	unsigned char raw[16];
	char digits[5] = "";
	unsigned long group;
	int i, j;

	for (i = 0; i < 8; i++) {
		for (j = 0; j < 4; j++) {
			if (!isxdigit((unsigned char)text[j]))
				return -EINVAL;
			digits[j] = text[j];
		}
		group = strtoul(digits, NULL, 16);
		raw[2 * i] = group >> 8;
		raw[2 * i + 1] = group & 0xff;
		text += 4;
		if (*text != (i < 7 ? ':' : '\0'))
			return -EINVAL;
		text++;
	}
	if (!memcmp(raw, zero, sizeof(raw)))
		return -ENODATA;
	return inet_ntop(AF_INET6, raw, buf, size) ? 0 : -errno;
}

static int by_index(const void *a, const void *b)
{
	const struct gid_entry *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

int gids_read(const char *ibdev, unsigned int port, struct gid_table *table)
{
	char dir[TBR_PATH_MAX], text[64], *end;
	struct gid_entry *g;
	struct dirent *de;
	unsigned long index;
	DIR *d;
	int err;

	table->n = 0;
	err = tbr_sysfs_path(dir, sizeof(dir), "class/infiniband/%s/ports/%u/gids",
			     ibdev, port);
	if (err)
		return err;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && table->n < GIDS_MAX) {
		index = strtoul(de->d_name, &end, 10);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end)
			continue;
		g = &table->g[table->n];
		memset(g, 0, sizeof(*g));
		g->index = index;
		if (tbr_sysfs_read(text, sizeof(text),
				   "class/infiniband/%s/ports/%u/gids/%lu",
				   ibdev, port, index) ||
		    gid_format(text, g->address, sizeof(g->address)))
			continue;
		/* Empty slots fail to read their type (EINVAL): keep "". */
		tbr_sysfs_read(g->type, sizeof(g->type),
			       "class/infiniband/%s/ports/%u/gid_attrs/types/%lu",
			       ibdev, port, index);
		tbr_sysfs_read(g->netdev, sizeof(g->netdev),
			       "class/infiniband/%s/ports/%u/gid_attrs/ndevs/%lu",
			       ibdev, port, index);
		table->n++;
	}
	closedir(d);
	qsort(table->g, table->n, sizeof(table->g[0]), by_index);
	return 0;
}
