/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A Thunderbolt link in `status` and `thunderbolt status` output. */
#ifndef TBRDMA_ADMIN_TBT_REPORT_H
#define TBRDMA_ADMIN_TBT_REPORT_H

#include <stdio.h>

#include "json.h"
#include "tbt_link.h"

/*
 * Find and judge the link under @netdev: 0, or -ENOENT if @netdev is not
 * on Thunderbolt.
 */
int tbt_link_examine(const char *netdev, struct tbt_link *link);

/* Lines "<indent>thunderbolt ..." and "<indent>WARNING ...". */
void tbt_link_print(FILE *out, const struct tbt_link *link,
		    const char *indent);
/* The link as a JSON object (the caller wrote the key, if any). */
void tbt_link_json(struct json_writer *w, const struct tbt_link *link);

#endif /* TBRDMA_ADMIN_TBT_REPORT_H */
