/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Differences between the kernels we build against (Debian 12's 6.1 and
 * 6.12, Debian 13's 6.12, Debian unstable's 7.2).  Kbuild probes the
 * installed headers for each API shape (a version number would miss
 * distribution backports) and defines TBR_HAS_*; each shim hides one
 * change so the driver code reads the same on all of them.  The driver is
 * written against the newest API; older kernels get it from here.
 */
#ifndef TBRDMA_COMPAT_H
#define TBRDMA_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/timer.h>
#include <rdma/ib_umem.h>
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
 * 7.x (the core's umem rework): user space's CQs are created through
 * create_user_cq, which the core requires for them, and create_cq is left
 * to kernel consumers; both take the bundle, and the driver serves both
 * with TBR_CREATE_CQ_OP (device.c sets create_user_cq when it exists).
 * Resizing is for user CQs only and became resize_user_cq, with an
 * unsigned count.
 */
#ifdef TBR_HAS_RESIZE_USER_CQ
int tbr_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe,
		       struct ib_udata *udata);
#endif

/*
 * 6.17: reg_user_mr also receives a DMA handle (PCIe TPH steering) when
 * user space passes one; we offer none (no alloc_dmah), so any is refused.
 */
#ifdef TBR_HAS_REG_MR_DMAH
struct ib_mr *tbr_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 iova, int access, struct ib_dmah *dmah,
				   struct ib_udata *udata);
#define TBR_REG_USER_MR_OP tbr_reg_user_mr_dmah
#else
#define TBR_REG_USER_MR_OP tbr_reg_user_mr
#endif

/*
 * 6.2+: the kernel names access rights the device does not offer (FLUSH
 * to global or persistent visibility, IBTA 1.5; no IB_DEVICE_FLUSH_*).
 * An MR asking for them is refused with EOPNOTSUPP (the core does so for
 * user MRs), a QP's are dropped (qp.c); bits no kernel defines are EINVAL.
 */
#ifdef TBR_HAS_ACCESS_FLUSH
#define TBR_ACCESS_NOT_OFFERED \
	(IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT)
#else
#define TBR_ACCESS_NOT_OFFERED 0
#endif

/* 7.x: ib_umem_get() became ib_umem_get_va(), same arguments. */
#ifndef TBR_HAS_UMEM_GET_VA
#define ib_umem_get_va(device, addr, size, access) \
	ib_umem_get(device, addr, size, access)
#endif

/* 6.16: from_timer() became timer_container_of(). */
#ifndef TBR_HAS_TIMER_CONTAINER_OF
#define timer_container_of(var, callback_timer, timer_fieldname) \
	from_timer(var, callback_timer, timer_fieldname)
#endif

/*
 * 6.13: hrtimer_setup() sets the callback with the rest; 6.15 removed
 * hrtimer_init(), which left setting ->function to the caller.
 */
#ifndef TBR_HAS_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * XRC needs no shim: 6.1 and 6.12 create an XRC_TGT QP the same way,
 * create_qp() with no PD, no CQs, init->xrcd set and a NULL udata (the
 * core owns it for the XRC domain), and pass XRC SRQs' domain and CQ in
 * init->ext (277-xrc runs on both kernels).
 */

#endif /* TBRDMA_COMPAT_H */
