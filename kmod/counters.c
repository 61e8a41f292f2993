// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device's transport counters as the RDMA core's per-port hw counters:
 * `rdma statistic show link DEV/1` and the port's hw_counters in sysfs.
 */
#include <linux/cpumask.h>

#include "tbrdma.h"

/* The names user space sees; tools/tbrdma and the tests rely on them. */
static const struct rdma_stat_desc tbr_counter_descs[TBR_NUM_COUNTERS] = {
	[TBR_CNT_TX_PACKETS].name = "tx_packets",
	[TBR_CNT_TX_BYTES].name = "tx_bytes",
	[TBR_CNT_RX_PACKETS].name = "rx_packets",
	[TBR_CNT_RX_BYTES].name = "rx_bytes",
	[TBR_CNT_TX_OPS].name = "tx_ops",
	[TBR_CNT_RX_OPS].name = "rx_ops",
	[TBR_CNT_RETRANSMITS].name = "retransmits",
	[TBR_CNT_DUPLICATE_REQUESTS].name = "duplicate_requests",
	[TBR_CNT_OUT_OF_SEQUENCE].name = "out_of_sequence",
	[TBR_CNT_RNR_NAK_SENT].name = "rnr_nak_sent",
	[TBR_CNT_RNR_NAK_RECEIVED].name = "rnr_nak_received",
	[TBR_CNT_ACK_TIMEOUTS].name = "ack_timeouts",
	[TBR_CNT_RX_BAD_FRAMES].name = "rx_bad_frames",
	[TBR_CNT_RX_STALE_FRAMES].name = "rx_stale_frames",
	[TBR_CNT_RX_CHECKSUM_ERRORS].name = "rx_checksum_errors",
	[TBR_CNT_FAST_REG].name = "fast_reg",
	[TBR_CNT_LOCAL_INV].name = "local_inv",
	[TBR_CNT_REMOTE_INV].name = "remote_inv",
	[TBR_CNT_RESPONSE_GAPS].name = "response_gaps",
	[TBR_CNT_EARLY_PROBES].name = "early_probes",
	[TBR_CNT_ACKS_PIGGYBACKED].name = "acks_piggybacked",
	[TBR_CNT_ACKS_DELAYED].name = "acks_delayed",
	[TBR_CNT_PIGGY_ACKS_IGNORED].name = "piggy_acks_ignored",
};

int tbr_counters_init(struct tbr_dev *tdev)
{
	tdev->counters = alloc_percpu(struct tbr_counters);
	return tdev->counters ? 0 : -ENOMEM;
}

void tbr_counters_free(struct tbr_dev *tdev)
{
	free_percpu(tdev->counters);
	tdev->counters = NULL;
}

u64 tbr_counter_read(struct tbr_dev *tdev, enum tbr_counter c)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(tdev->counters, cpu)->v[c]);
	return sum;
}

struct rdma_hw_stats *tbr_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port)
{
	return rdma_alloc_hw_stats_struct(tbr_counter_descs, TBR_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int tbr_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index)
{
	struct tbr_dev *tdev = to_tdev(ibdev);
	int c;

	for (c = 0; c < TBR_NUM_COUNTERS; c++)
		stats->value[c] = tbr_counter_read(tdev, c);
	return TBR_NUM_COUNTERS;
}
