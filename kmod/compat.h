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

/*
 * XRC needs no shim: 6.1 and 6.12 create an XRC_TGT QP the same way,
 * create_qp() with no PD, no CQs, init->xrcd set and a NULL udata (the
 * core owns it for the XRC domain), and pass XRC SRQs' domain and CQ in
 * init->ext (277-xrc runs on both kernels).
 */

#endif /* TBRDMA_COMPAT_H */
