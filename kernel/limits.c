// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: limits profiles.  A device takes the profile of the module
 * parameter "limits" when it is created: "softsrd" (its own, larger
 * limits) or "efa", which reproduces EFA's, so that code that would break
 * on EFA breaks here too.
 */

#include <linux/moduleparam.h>
#include <linux/string.h>

#include "srd.h"

static const char * const srd_limits_names[] = {
	[SRD_LIMITS_SOFTSRD] = "softsrd",
	[SRD_LIMITS_EFA] = "efa",
};

static const struct srd_limits srd_limits_profiles[] = {
	[SRD_LIMITS_SOFTSRD] = {
		.profile = SRD_LIMITS_SOFTSRD,
		.max_send_sge = SRD_MAX_SEND_SGE,
		.max_recv_sge = SRD_MAX_RECV_SGE,
		.max_rdma_sge = SRD_MAX_RDMA_SGE,
		.max_inline_bytes = SRD_MAX_INLINE_BYTES,
		.max_srd_msg_bytes = SRD_DEV_MAX_MSG_BYTES,
	},
	[SRD_LIMITS_EFA] = {
		.profile = SRD_LIMITS_EFA,
		.max_send_sge = 2,
		.max_recv_sge = 3,
		.max_rdma_sge = 1,
		.max_inline_bytes = 32,
		.max_srd_msg_bytes = 0,		/* the port MTU */
	},
};

static unsigned int srd_limits_param = SRD_LIMITS_SOFTSRD;

static int srd_limits_param_set(const char *val, const struct kernel_param *kp)
{
	int profile = sysfs_match_string(srd_limits_names, val);

	if (profile < 0)
		return -EINVAL;
	WRITE_ONCE(srd_limits_param, profile);
	return 0;
}

static int srd_limits_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  srd_limits_names[READ_ONCE(srd_limits_param)]);
}

static const struct kernel_param_ops srd_limits_param_ops = {
	.set = srd_limits_param_set,
	.get = srd_limits_param_get,
};

module_param_cb(limits, &srd_limits_param_ops, NULL, 0644);
MODULE_PARM_DESC(limits, "Limits profile of devices created from now on: softsrd (default) or efa");

/* The limits a new device takes. */
void srd_limits_init(struct srd_limits *limits)
{
	*limits = srd_limits_profiles[READ_ONCE(srd_limits_param)];
}

const char *srd_limits_name(const struct srd_limits *limits)
{
	return srd_limits_names[limits->profile];
}
