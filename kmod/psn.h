/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * 24-bit packet sequence numbers.  They wrap, so "before" means within
 * half the space behind, as in InfiniBand.  Pure: unit-tested on the host.
 */
#ifndef TBRDMA_PSN_H
#define TBRDMA_PSN_H

#include <linux/types.h>

#define TBR_PSN_BITS	24
#define TBR_PSN_SPACE	0x1000000u	/* 2^TBR_PSN_BITS */

static inline u32 tbr_psn_add(u32 psn, u32 n)
{
	return (psn + n) & (TBR_PSN_SPACE - 1);
}

/* a - b as a signed distance: < 0 when a is before b. */
static inline s32 tbr_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << (32 - TBR_PSN_BITS)) >> (32 - TBR_PSN_BITS);
}

static inline bool tbr_psn_before(u32 a, u32 b)
{
	return tbr_psn_diff(a, b) < 0;
}

/* Frames a message of @len bytes takes in @seg-byte pieces (at least one). */
static inline u32 tbr_psn_frames(u64 len, u32 seg)
{
	return len ? (u32)((len + seg - 1) / seg) : 1;
}

#endif /* TBRDMA_PSN_H */
