// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles.  The kernel keeps the resolved address (the core fills
 * in the destination MAC for RoCE-style ports); a UD send WQE names it by
 * the handle the kernel returned.
 */
#include <errno.h>
#include <stdlib.h>

#include "tbrdma.h"

struct ibv_ah *tbrdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct tbrdma_cmd_create_ah_resp resp = {};
	struct tbrdma_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ah_handle = resp.drv.ah_handle;
	return &ah->ibv_ah;
}

int tbrdma_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (!ret)
		free(to_tah(ibah));
	return ret;
}
