/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Device limits.  query_device reports exactly these and the code enforces
 * them.
 */
#ifndef TBRDMA_LIMITS_H
#define TBRDMA_LIMITS_H

#include <linux/bits.h>

#define TBR_MAX_PD		16384
#define TBR_MAX_QP		16384
#define TBR_MAX_QP_WR		16384	/* slots of an SQ or RQ */
#define TBR_MAX_SGE		32	/* per send or receive WQE */
#define TBR_MAX_INLINE		512	/* bytes of inline data per send WQE */
#define TBR_MAX_CQ		16384
/*
 * Slots of a CQ (64 bytes each: 16 MiB at most).  libfabric's rxm over
 * verbs sizes its CQ for (128 + 128) x FI_UNIVERSE_SIZE (1024) entries.
 */
#define TBR_MAX_CQE		262144
#define TBR_MAX_MR		65536
#define TBR_MAX_MR_SIZE		BIT_ULL(40)
#define TBR_MAX_FAST_REG_PAGES	512	/* page list of a fast-registration MR */
#define TBR_MAX_SRQ		16384
#define TBR_MAX_SRQ_WR		16384
#define TBR_MAX_AH		65536
#define TBR_MAX_RD_ATOM		16	/* outstanding RDMA READ/atomics per QP */
#define TBR_MAX_MSG_SIZE	BIT(31)

#define TBR_GID_TABLE_LEN	64	/* RoCEv2 GIDs: one per IP address of the netdev */
#define TBR_PKEY_TABLE_LEN	1	/* Ethernet ports have only the default P_Key */
#define TBR_DEFAULT_PKEY	0xffff

#define TBR_VENDOR_ID		0xffffff	/* no IEEE OUI: "unassigned", as soft RoCE does */
#define TBR_VENDOR_PART_ID	0x7462		/* "tb" */
#define TBR_HW_VERSION		1

/* Driver version, reported as firmware version: major.minor.sub */
#define TBR_FW_MAJOR		0
#define TBR_FW_MINOR		2
#define TBR_FW_SUB		0

#endif /* TBRDMA_LIMITS_H */
