// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HAVE_RDMA_STAT_DESC: rdma_alloc_hw_stats_struct() takes struct
 * rdma_stat_desc (5.16+; before, an array of names).
 */
#include <rdma/ib_verbs.h>

static const struct rdma_stat_desc probe_descs[1] = { { .name = "probe" } };

struct rdma_hw_stats *probe_rdma_stat_desc(void);
struct rdma_hw_stats *probe_rdma_stat_desc(void)
{
	return rdma_alloc_hw_stats_struct(probe_descs, 1, 10);
}
