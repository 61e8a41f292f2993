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

#ifdef TBR_HAS_RESIZE_USER_CQ
int tbr_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe,
		       struct ib_udata *udata)
{
	if (cqe > INT_MAX)
		return -EINVAL;
	return tbr_resize_cq(ibcq, cqe, udata);
}
#endif

#ifdef TBR_HAS_REG_MR_DMAH
struct ib_mr *tbr_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 iova, int access, struct ib_dmah *dmah,
				   struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return tbr_reg_user_mr(ibpd, start, length, iova, access, udata);
}
#endif
