/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Differences between the kernels we build against (Debian 12's 6.1 and
 * 6.12).  Kbuild probes the installed headers for each API shape (a
 * version number would miss distribution backports) and defines TBR_HAS_*;
 * each shim hides one change so the driver code reads the same on both.
 */
#ifndef TBRDMA_COMPAT_H
#define TBRDMA_COMPAT_H

#include <rdma/ib_verbs.h>

/*
 * Since 6.11 create_cq receives the whole uverbs attribute bundle instead
 * of the driver's udata; the driver implements the udata form.
 */
#ifdef TBR_HAS_CREATE_CQ_ATTRS
int tbr_create_cq_attrs(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			struct uverbs_attr_bundle *attrs);
#define TBR_CREATE_CQ_OP tbr_create_cq_attrs
#else
#define TBR_CREATE_CQ_OP tbr_create_cq
#endif

#endif /* TBRDMA_COMPAT_H */
