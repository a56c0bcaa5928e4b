// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HAVE_KERNEL_CAP_FLAGS: ib_device_attr.kernel_cap_flags and
 * IBK_ALLOW_USER_UNREG (6.0+; before, IB_DEVICE_ALLOW_USER_UNREG in
 * device_cap_flags).
 */
#include <rdma/ib_verbs.h>

void probe_kernel_cap_flags(struct ib_device_attr *attr);
void probe_kernel_cap_flags(struct ib_device_attr *attr)
{
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
}
