// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: device counters, read through hw_counters in sysfs and
 * "rdma statistic".  docs/architecture.md says what the device's count,
 * docs/protocol.md what the SRD engine's (srd_*) count.
 */

#include "srd.h"

static const struct rdma_stat_desc srd_dev_counter_descs[SRD_NUM_COUNTERS] = {
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
	[SRD_CNT_SRD_RX_DROP_NO_PEER].name = "srd_rx_drop_no_peer",
	[SRD_CNT_SRD_PEERS].name = "srd_peers",
	[SRD_CNT_SRD_PEERS_EVICTED].name = "srd_peers_evicted",
	[SRD_CNT_RDMA_RKEY_INVALID].name = "rdma_rkey_invalid",
	[SRD_CNT_RDMA_RKEY_PD].name = "rdma_rkey_pd",
	[SRD_CNT_RDMA_RKEY_ACCESS].name = "rdma_rkey_access",
	[SRD_CNT_RDMA_RKEY_RANGE].name = "rdma_rkey_range",
};

/*
 * The SRD engine's counters (struct srd_counters, srd_counter_descs),
 * summed over the device's peers, shown after the device's own with an
 * "srd_" prefix.
 */
static char srd_engine_names[SRD_ENGINE_NUM_COUNTERS][32];

#define SRD_ALL_COUNTERS	(SRD_NUM_COUNTERS + SRD_ENGINE_NUM_COUNTERS)

static struct rdma_stat_desc srd_all_descs[SRD_ALL_COUNTERS];

struct rdma_hw_stats *srd_alloc_hw_device_stats(struct ib_device *ibdev)
{
	return rdma_alloc_hw_stats_struct(srd_all_descs, SRD_ALL_COUNTERS,
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
	struct srd_counters ec;
	int i;

	for (i = 0; i < SRD_NUM_COUNTERS; i++)
		stats->value[i] = atomic64_read(&sdev->counters[i]);
	srd_transport_counters(sdev, &ec);
	for (i = 0; i < SRD_ENGINE_NUM_COUNTERS; i++)
		stats->value[SRD_NUM_COUNTERS + i] =
			*(const u64 *)((const u8 *)&ec +
				       srd_counter_descs[i].offset);
	return SRD_ALL_COUNTERS;
}

/* The names of every counter, in the order get_hw_stats fills them. */
void srd_counters_init(void)
{
	int i;

	memcpy(srd_all_descs, srd_dev_counter_descs, sizeof(srd_dev_counter_descs));
	for (i = 0; i < SRD_NUM_COUNTERS; i++)
		WARN(!srd_all_descs[i].name, "rdma_srd: device counter %d has no name\n", i);
	for (i = 0; i < SRD_ENGINE_NUM_COUNTERS; i++) {
		snprintf(srd_engine_names[i], sizeof(srd_engine_names[i]), "srd_%s",
			 srd_counter_descs[i].name);
		srd_all_descs[SRD_NUM_COUNTERS + i].name = srd_engine_names[i];
	}
}
