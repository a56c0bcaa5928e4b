// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: device counters, read through hw_counters in sysfs and
 * "rdma statistic".  docs/architecture.md says what each one counts.
 */

#include "srd.h"

static const struct rdma_stat_desc srd_counter_descs[SRD_NUM_COUNTERS] = {
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
 * The SRD engine's counters (struct srd_counters), summed over the
 * device's peers, shown after the device's own with an "srd_" prefix.
 */
#define SRD_ECTR(field) { "srd_" #field, offsetof(struct srd_counters, field) }

static const struct {
	const char *name;
	size_t offset;
} srd_engine_ctrs[] = {
	SRD_ECTR(tx_pkts), SRD_ECTR(tx_bytes),
	SRD_ECTR(rx_pkts), SRD_ECTR(rx_bytes),
	SRD_ECTR(tx_data_pkts), SRD_ECTR(rx_data_pkts),
	SRD_ECTR(retransmits), SRD_ECTR(rto_expired),
	SRD_ECTR(fast_retransmits), SRD_ECTR(spurious_retransmits),
	SRD_ECTR(duplicates), SRD_ECTR(out_of_order),
	SRD_ECTR(acks_sent), SRD_ECTR(acks_received),
	SRD_ECTR(naks_sent), SRD_ECTR(naks_received),
	SRD_ECTR(rnr_naks_sent), SRD_ECTR(rnr_naks_received),
	SRD_ECTR(hellos_sent), SRD_ECTR(hellos_received),
	SRD_ECTR(cwnd_stalls), SRD_ECTR(tx_window_stalls),
	SRD_ECTR(path_switches), SRD_ECTR(path_recoveries),
	SRD_ECTR(peer_restarts), SRD_ECTR(peer_unreachable),
	SRD_ECTR(msgs_sent), SRD_ECTR(msgs_failed), SRD_ECTR(msgs_delivered),
	SRD_ECTR(rx_drop_bad_hdr), SRD_ECTR(rx_drop_stale_epoch),
	SRD_ECTR(rx_drop_out_of_window), SRD_ECTR(alloc_failures),
	SRD_ECTR(rdma_writes_in), SRD_ECTR(rdma_reads_in),
	SRD_ECTR(rdma_access_naks), SRD_ECTR(resp_timeouts),
	SRD_ECTR(tail_probes), SRD_ECTR(rx_msg_timeouts),
	SRD_ECTR(stateless_replies), SRD_ECTR(rx_drop_unsolicited),
};

#define SRD_ALL_COUNTERS	(SRD_NUM_COUNTERS + ARRAY_SIZE(srd_engine_ctrs))

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
	for (i = 0; i < ARRAY_SIZE(srd_engine_ctrs); i++)
		stats->value[SRD_NUM_COUNTERS + i] =
			*(const u64 *)((const u8 *)&ec +
				       srd_engine_ctrs[i].offset);
	return SRD_ALL_COUNTERS;
}

/* The names of every counter, in the order get_hw_stats fills them. */
void srd_counters_init(void)
{
	int i;

	memcpy(srd_all_descs, srd_counter_descs, sizeof(srd_counter_descs));
	for (i = 0; i < ARRAY_SIZE(srd_engine_ctrs); i++)
		srd_all_descs[SRD_NUM_COUNTERS + i].name =
			srd_engine_ctrs[i].name;
}
