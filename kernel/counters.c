// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: device counters, read through hw_counters in sysfs and
 * "rdma statistic".  docs/architecture.md says what the device's count,
 * docs/protocol.md what the SRD engine's (srd_*) count.
 */

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

#define SRD_ALL_COUNTERS	(SRD_NUM_COUNTERS + SRD_ENGINE_NUM_COUNTERS)

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

	for (i = 0; i < SRD_NUM_COUNTERS; i++) {
		strscpy(srd_dev_names[i], srd_dev_counter_ids[i],
			sizeof(srd_dev_names[i]));
		string_lower(srd_dev_names[i], srd_dev_names[i]);
		SRD_SET_NAME(i, srd_dev_names[i]);
	}
	for (i = 0; i < SRD_ENGINE_NUM_COUNTERS; i++) {
		snprintf(srd_engine_names[i], sizeof(srd_engine_names[i]), "srd_%s",
			 srd_counter_descs[i].name);
		SRD_SET_NAME(SRD_NUM_COUNTERS + i, srd_engine_names[i]);
	}
}
