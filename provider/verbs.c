// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device/port queries and protection domains.  All of them are plain
 * uverbs commands: the kernel module does the work, the provider only
 * adds its driver data and wraps the result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "tbrdma.h"

int tbrdma_query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	/* Picks QUERY_DEVICE or EX_QUERY_DEVICE by attr_size and fills attr. */
	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	/* The kernel only passes the raw 64-bit fw_ver; show it as the
	 * usual major.minor.sub_minor (16 bits each). */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

int tbrdma_query_port(struct ibv_context *context, uint8_t port,
		      struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *tbrdma_alloc_pd(struct ibv_context *context)
{
	struct tbrdma_cmd_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct tbrdma_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	/* No request data; the response carries our tbrdma_alloc_pd_resp. */
	ret = ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.drv.pdn;
	return &pd->ibv_pd;
}

int tbrdma_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	/* Keep the memory if the kernel refused: the PD still exists. */
	ret = ibv_cmd_dealloc_pd(ibpd);
	if (!ret)
		free(to_tpd(ibpd));
	return ret;
}

/*
 * XRC domains: nothing of ours, the kernel object and its handle.  A file
 * descriptor in attr shares one domain between processes (ibv_open_xrcd).
 */
struct ibv_xrcd *tbrdma_open_xrcd(struct ibv_context *context,
				  struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp = {};
	struct ibv_open_xrcd cmd = {};
	struct verbs_xrcd *xrcd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	ret = ibv_cmd_open_xrcd(context, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

int tbrdma_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = tbrdma_container_of(ibxrcd,
						      struct verbs_xrcd, xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}
