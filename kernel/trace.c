// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the rdma_srd trace events (trace.h), and the flag that tells
 * the engine whether any of them is enabled.
 */
#include <linux/atomic.h>

#define CREATE_TRACE_POINTS
#include "trace.h"

/* Read by the engine through srd_ops.trace_on; see trace.h. */
bool srd_trace_on;
static atomic_t srd_trace_users = ATOMIC_INIT(0);

/* An event was enabled (under the tracepoints' mutex). */
int srd_trace_reg(void)
{
	if (atomic_inc_return(&srd_trace_users) == 1)
		WRITE_ONCE(srd_trace_on, true);
	return 0;
}

void srd_trace_unreg(void)
{
	if (atomic_dec_and_test(&srd_trace_users))
		WRITE_ONCE(srd_trace_on, false);
}
