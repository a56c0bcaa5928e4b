// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: device counters, read through hw_counters in sysfs and
 * "rdma statistic".  docs/architecture.md says what each one counts.
 */

#include "srd.h"

static const struct rdma_stat_desc srd_counter_descs[] = {
	[SRD_CNT_PDS].name = "pds",
	[SRD_CNT_CQS].name = "cqs",
	[SRD_CNT_QPS].name = "qps",
	[SRD_CNT_MRS].name = "mrs",
	[SRD_CNT_AHS].name = "ahs",
	[SRD_CNT_TX_PACKETS].name = "tx_packets",
	[SRD_CNT_TX_BYTES].name = "tx_bytes",
	[SRD_CNT_TX_ERRORS].name = "tx_errors",
	[SRD_CNT_RX_PACKETS].name = "rx_packets",
	[SRD_CNT_RX_BYTES].name = "rx_bytes",
	[SRD_CNT_RX_DROP_BAD_HDR].name = "rx_drop_bad_hdr",
	[SRD_CNT_RX_DROP_NO_QP].name = "rx_drop_no_qp",
	[SRD_CNT_RX_DROP_QP_STATE].name = "rx_drop_qp_state",
	[SRD_CNT_RX_DROP_QKEY].name = "rx_drop_qkey",
	[SRD_CNT_RX_DROP_NO_RECV].name = "rx_drop_no_recv",
	[SRD_CNT_CQ_OVERFLOWS].name = "cq_overflows",
	[SRD_CNT_WQE_ERRORS].name = "wqe_errors",
};

static_assert(ARRAY_SIZE(srd_counter_descs) == SRD_NUM_COUNTERS);

struct rdma_hw_stats *srd_alloc_hw_device_stats(struct ib_device *ibdev)
{
	return rdma_alloc_hw_stats_struct(srd_counter_descs, SRD_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * One port: its counters are the device's, shown by "rdma statistic" and
 * in ports/1/hw_counters as well as in the device's hw_counters.
 */
struct rdma_hw_stats *srd_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port)
{
	return srd_alloc_hw_device_stats(ibdev);
}

int srd_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index)
{
	struct srd_dev *sdev = to_sdev(ibdev);
	int i;

	for (i = 0; i < SRD_NUM_COUNTERS; i++)
		stats->value[i] = atomic64_read(&sdev->counters[i]);
	return SRD_NUM_COUNTERS;
}
