/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-device transport counters, shown by `rdma statistic show link DEV/1`
 * (the RDMA core's hw counters).  Per-CPU so the data path never shares a
 * cache line to count.
 */
#ifndef TBRDMA_COUNTERS_H
#define TBRDMA_COUNTERS_H

#include <linux/percpu.h>
#include <linux/types.h>

enum tbr_counter {
	TBR_CNT_TX_PACKETS,
	TBR_CNT_TX_BYTES,
	TBR_CNT_RX_PACKETS,
	TBR_CNT_RX_BYTES,
	TBR_CNT_TX_OPS,			/* work requests the send engine executed */
	TBR_CNT_RX_OPS,			/* requests the responder executed */
	TBR_CNT_RETRANSMITS,		/* frames sent again */
	TBR_CNT_DUPLICATE_REQUESTS,	/* requests seen twice, answered again */
	TBR_CNT_OUT_OF_SEQUENCE,	/* requests after a gap, NAKed */
	TBR_CNT_RNR_NAK_SENT,
	TBR_CNT_RNR_NAK_RECEIVED,
	TBR_CNT_ACK_TIMEOUTS,		/* retransmission timer expiries */
	TBR_CNT_RX_BAD_FRAMES,		/* malformed, wrong version or transport */
	TBR_CNT_RX_STALE_FRAMES,	/* for a QP that is gone or reconnected */
	TBR_CNT_RX_CHECKSUM_ERRORS,	/* damaged in flight */
	TBR_CNT_FAST_REG,		/* REG_MR work requests that registered */
	TBR_CNT_LOCAL_INV,		/* LOCAL_INV work requests that invalidated */
	TBR_CNT_REMOTE_INV,		/* keys a peer's SEND_WITH_INV invalidated */
	TBR_CNT_RESPONSE_GAPS,		/* lost READ/atomic answers asked for at once */
	TBR_CNT_EARLY_PROBES,		/* quiet for 1/8 of the timeout: asked early */
	TBR_CNT_ACKS_PIGGYBACKED,	/* ACKs our requests carried (TBR_WF_ACK_PSN) */
	TBR_CNT_ACKS_DELAYED,		/* ACKs held back, then sent alone */
	TBR_CNT_PIGGY_ACKS_IGNORED,	/* carried ACKs outside what we had in flight */
	TBR_NUM_COUNTERS
};

struct tbr_counters {
	u64 v[TBR_NUM_COUNTERS];
};

struct tbr_dev;

int tbr_counters_init(struct tbr_dev *tdev);
void tbr_counters_free(struct tbr_dev *tdev);
u64 tbr_counter_read(struct tbr_dev *tdev, enum tbr_counter c);

#endif /* TBRDMA_COUNTERS_H */
