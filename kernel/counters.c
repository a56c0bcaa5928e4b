// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: device counters, read through hw_counters in sysfs and
 * "rdma statistic".  docs/architecture.md says what the device's count,
 * docs/protocol.md what the SRD engine's (srd_*) count.
 */

#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/string_helpers.h>
#include <linux/stringify.h>

#include "srd.h"

/* counters.h's names; srd_counters_init() shows them in lower case. */
static const char *const srd_dev_counter_ids[SRD_NUM_COUNTERS] = {
#define SRD_COUNTER(id)	__stringify(id),
#include "counters.h"
#undef SRD_COUNTER
};

static char srd_dev_names[SRD_NUM_COUNTERS][32];

/*
 * The SRD engine's counters (struct srd_counters, srd_counter_descs),
 * summed over the device's peers, shown after the device's own with an
 * "srd_" prefix.
 */
static char srd_engine_names[SRD_ENGINE_NUM_COUNTERS][32];

/*
 * Last, EFA's counters that softsrd's own add up to: named as the EFA
 * driver names them, meaning what they mean there (docs/architecture.md).
 */
enum srd_efa_counter {
	SRD_EFA_RX_DROPS,
	SRD_EFA_RETRANS_BYTES,
	SRD_EFA_RETRANS_PKTS,
	SRD_EFA_RETRANS_TIMEOUT_EVENTS,
	SRD_EFA_UNRESPONSIVE_REMOTE_EVENTS,
	SRD_EFA_NUM_COUNTERS
};

static const char *const srd_efa_names[SRD_EFA_NUM_COUNTERS] = {
	[SRD_EFA_RX_DROPS] = "rx_drops",
	[SRD_EFA_RETRANS_BYTES] = "retrans_bytes",
	[SRD_EFA_RETRANS_PKTS] = "retrans_pkts",
	[SRD_EFA_RETRANS_TIMEOUT_EVENTS] = "retrans_timeout_events",
	[SRD_EFA_UNRESPONSIVE_REMOTE_EVENTS] = "unresponsive_remote_events",
};

/*
 * Counters renamed, under their 0.1 names too until softsrd 0.3: the
 * device's alone, after the verbs' failures (a port's netlink reply has
 * no room for more), each the value of the engine counter at @offset.
 * docs/architecture.md ("Counters") lists them.
 */
static const struct {
	const char *name;
	size_t offset;
} srd_old_names[] = {
	{ "srd_rx_drop_stale_epoch",
	  offsetof(struct srd_counters, rx_drop_stale_tag) },
};

/* The device's counters of packets that reached it and were dropped. */
static const enum srd_counter srd_dev_rx_drops[] = {
	SRD_CNT_RX_DROP_BAD_HDR, SRD_CNT_RX_DROP_NO_QP,
	SRD_CNT_RX_DROP_QP_STATE, SRD_CNT_RX_DROP_QKEY,
	SRD_CNT_RX_DROP_NO_RECV, SRD_CNT_RX_DROP_TOO_LONG,
	SRD_CNT_RX_DROP_INGRESS, SRD_CNT_SRD_RX_DROP_NO_PEER,
};

/*
 * The order shown: the device's counters up to the verbs' failures, the
 * engine's, EFA's sums; that much for a port (EFA's port counters among
 * them), and for the device the verbs' failures after it (EFA's device
 * counters, which EFA too shows for the device alone), then the old
 * names of renamed counters.  Netlink's reply
 * to "rdma statistic show link DEV/1" holds a port's in one message of
 * about a page, which a few more counters would overflow.
 */
#define SRD_FIRST_VERB_ERR	SRD_CNT_ALLOC_PD_ERR
#define SRD_NUM_VERB_ERRS	(SRD_NUM_COUNTERS - SRD_FIRST_VERB_ERR)
#define SRD_ENGINE_BASE		SRD_FIRST_VERB_ERR
#define SRD_EFA_BASE		(SRD_ENGINE_BASE + SRD_ENGINE_NUM_COUNTERS)
#define SRD_PORT_COUNTERS	(SRD_EFA_BASE + SRD_EFA_NUM_COUNTERS)
#define SRD_VERB_ERR_BASE	SRD_PORT_COUNTERS
#define SRD_OLD_NAMES_BASE	(SRD_VERB_ERR_BASE + SRD_NUM_VERB_ERRS)
#define SRD_ALL_COUNTERS	(SRD_OLD_NAMES_BASE + ARRAY_SIZE(srd_old_names))
static_assert(SRD_NUM_COUNTERS - SRD_CNT_MMAP_ERR == 1,
	      "the verbs' failures are counters.h's last");

/*
 * What rdma_alloc_hw_stats_struct() takes: descriptors (5.16+), or before
 * them an array of names (HAVE_RDMA_STAT_DESC).
 */
#ifdef HAVE_RDMA_STAT_DESC
static struct rdma_stat_desc srd_all_descs[SRD_ALL_COUNTERS];
#define SRD_SET_NAME(i, n)	(srd_all_descs[i].name = (n))
#else
static const char *srd_all_descs[SRD_ALL_COUNTERS];
#define SRD_SET_NAME(i, n)	(srd_all_descs[i] = (n))
#endif

struct rdma_hw_stats *srd_alloc_hw_device_stats(struct ib_device *ibdev)
{
	return rdma_alloc_hw_stats_struct(srd_all_descs, SRD_ALL_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * One port: the device's counters but the verbs' failures, shown by
 * "rdma statistic" and in ports/1/hw_counters.
 */
struct rdma_hw_stats *srd_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port)
{
	return rdma_alloc_hw_stats_struct(srd_all_descs, SRD_PORT_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* The per-CPU packets and bytes each way (srd_count_traffic), summed. */
static void srd_traffic_sum(struct srd_dev *sdev, u64 *value)
{
	u64 tp = 0, tb = 0, rp = 0, rb = 0, a, b, c, d;
	unsigned int start;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct srd_pcpu_traffic *t = per_cpu_ptr(sdev->traffic, cpu);

		do {
			start = u64_stats_fetch_begin(&t->syncp);
			a = u64_stats_read(&t->tx_pkts);
			b = u64_stats_read(&t->tx_bytes);
			c = u64_stats_read(&t->rx_pkts);
			d = u64_stats_read(&t->rx_bytes);
		} while (u64_stats_fetch_retry(&t->syncp, start));
		tp += a;
		tb += b;
		rp += c;
		rb += d;
	}
	value[SRD_CNT_TX_PKTS] = tp;
	value[SRD_CNT_TX_BYTES] = tb;
	value[SRD_CNT_RX_PKTS] = rp;
	value[SRD_CNT_RX_BYTES] = rb;
}

int srd_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index)
{
	struct srd_dev *sdev = to_sdev(ibdev);
	struct srd_counters ec;
	unsigned int d;
	u64 *v;
	int i;

	for (i = 0; i < SRD_FIRST_VERB_ERR; i++)
		stats->value[i] = atomic64_read(&sdev->counters[i]);
	srd_traffic_sum(sdev, stats->value);
	srd_transport_counters(sdev, &ec);
	for (i = 0; i < SRD_ENGINE_NUM_COUNTERS; i++)
		stats->value[SRD_ENGINE_BASE + i] =
			*(const u64 *)((const u8 *)&ec +
				       srd_counter_descs[i].offset);

	/* Dropped by the device or by the SRD engine's checks. */
	v = &stats->value[SRD_EFA_BASE];
	v[SRD_EFA_RX_DROPS] = ec.rx_drop_bad_hdr + ec.rx_drop_stale_tag +
			      ec.rx_drop_out_of_window + ec.rx_drop_unsolicited;
	for (d = 0; d < ARRAY_SIZE(srd_dev_rx_drops); d++)
		v[SRD_EFA_RX_DROPS] += stats->value[srd_dev_rx_drops[d]];
	v[SRD_EFA_RETRANS_BYTES] = ec.retrans_bytes;
	v[SRD_EFA_RETRANS_PKTS] = ec.retransmits;
	v[SRD_EFA_RETRANS_TIMEOUT_EVENTS] = ec.rto_expired;
	v[SRD_EFA_UNRESPONSIVE_REMOTE_EVENTS] = ec.peer_unreachable;
	if (port)
		return SRD_PORT_COUNTERS;
	for (i = 0; i < SRD_NUM_VERB_ERRS; i++)
		stats->value[SRD_VERB_ERR_BASE + i] =
			atomic64_read(&sdev->counters[SRD_FIRST_VERB_ERR + i]);
	for (i = 0; i < ARRAY_SIZE(srd_old_names); i++)
		stats->value[SRD_OLD_NAMES_BASE + i] =
			*(const u64 *)((const u8 *)&ec + srd_old_names[i].offset);
	return SRD_ALL_COUNTERS;
}

/* The names of every counter, in the order get_hw_stats fills them. */
void srd_counters_init(void)
{
	int i;

	for (i = 0; i < SRD_NUM_COUNTERS; i++) {
		strscpy(srd_dev_names[i], srd_dev_counter_ids[i],
			sizeof(srd_dev_names[i]));
		string_lower(srd_dev_names[i], srd_dev_names[i]);
		SRD_SET_NAME(i < SRD_FIRST_VERB_ERR ? i :
			     SRD_VERB_ERR_BASE + i - SRD_FIRST_VERB_ERR,
			     srd_dev_names[i]);
	}
	for (i = 0; i < SRD_ENGINE_NUM_COUNTERS; i++) {
		snprintf(srd_engine_names[i], sizeof(srd_engine_names[i]), "srd_%s",
			 srd_counter_descs[i].name);
		SRD_SET_NAME(SRD_ENGINE_BASE + i, srd_engine_names[i]);
	}
	for (i = 0; i < SRD_EFA_NUM_COUNTERS; i++)
		SRD_SET_NAME(SRD_EFA_BASE + i, srd_efa_names[i]);
	for (i = 0; i < ARRAY_SIZE(srd_old_names); i++)
		SRD_SET_NAME(SRD_OLD_NAMES_BASE + i, srd_old_names[i].name);
}
