// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HAVE_REG_USER_MR_DMAH: reg_user_mr takes a struct ib_dmah * before the
 * udata (6.17+).
 */
#include <rdma/ib_verbs.h>

static struct ib_mr *probe_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
				       u64 iova, int access, struct ib_dmah *dmah,
				       struct ib_udata *udata)
{
	return NULL;
}

const struct ib_device_ops probe_ops = { .reg_user_mr = probe_reg_user_mr };
