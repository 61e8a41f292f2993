/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Device limits.  query_device reports exactly these and the code enforces
 * them; an object kind the driver cannot create yet reports 0.
 */
#ifndef TBRDMA_LIMITS_H
#define TBRDMA_LIMITS_H

#define TBR_MAX_PD		16384
#define TBR_GID_TABLE_LEN	64	/* RoCEv2 GIDs: one per IP address of the netdev */
#define TBR_PKEY_TABLE_LEN	1	/* Ethernet ports have only the default P_Key */
#define TBR_DEFAULT_PKEY	0xffff

#define TBR_VENDOR_ID		0xffffff	/* no IEEE OUI: "unassigned", as soft RoCE does */
#define TBR_VENDOR_PART_ID	0x7462		/* "tb" */
#define TBR_HW_VERSION		1
/* Driver version, reported as firmware version: major.minor.sub */
#define TBR_FW_MAJOR		0
#define TBR_FW_MINOR		1
#define TBR_FW_SUB		0

#endif /* TBRDMA_LIMITS_H */
