// SPDX-License-Identifier: GPL-2.0-only
/* The bodies of the shims compat.h declares. */
#include <rdma/uverbs_ioctl.h>

#include "tbrdma.h"

#ifdef TBR_HAS_CREATE_CQ_ATTRS
int tbr_create_cq_attrs(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			struct uverbs_attr_bundle *attrs)
{
	/* Kernel consumers pass no bundle. */
	return tbr_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#endif
