// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: user contexts and protection domains.
 */

#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/srd-abi.h>

#include "srd.h"

int srd_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct ib_device *ibdev = ibuc->device;
	struct srd_dev *sdev = to_sdev(ibdev);
	struct srd_alloc_ucontext_resp resp = {};
	struct srd_alloc_ucontext_cmd cmd = {};
	int err;

	/* Older or foreign providers send less: refuse, do not guess. */
	if (udata->inlen < sizeof(cmd)) {
		ibdev_dbg(ibdev, "ucontext: command of %zu bytes, need %zu\n",
			  udata->inlen, sizeof(cmd));
		return -EINVAL;
	}
	err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
	if (err)
		return err;
	if (cmd.comp_mask) {
		ibdev_dbg(ibdev, "ucontext: unknown comp_mask 0x%x\n",
			  cmd.comp_mask);
		return -EOPNOTSUPP;
	}
	if (cmd.abi_version != SRD_UVERBS_ABI_VERSION) {
		ibdev_dbg(ibdev, "ucontext: provider ABI %u, kernel ABI %u\n",
			  cmd.abi_version, SRD_UVERBS_ABI_VERSION);
		return -EPROTO;
	}
	if (!ib_is_udata_cleared(udata, sizeof(cmd), udata->inlen - sizeof(cmd)))
		return -EOPNOTSUPP;

	resp.abi_version = SRD_UVERBS_ABI_VERSION;
	resp.limits_profile = sdev->limits.profile;
	resp.max_send_sge = sdev->limits.max_send_sge;
	resp.max_recv_sge = sdev->limits.max_recv_sge;
	resp.max_rdma_sge = sdev->limits.max_rdma_sge;
	resp.max_inline_data = sdev->limits.max_inline_bytes;
	resp.max_msg_sz = srd_max_srd_msg_bytes(sdev);
	resp.comp_mask = SRD_UCONTEXT_RESP_RDMA;
	resp.device_caps = sdev->limits.device_caps;
	resp.max_rdma_size = SRD_MAX_RDMA_BYTES;
	return ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
}

void srd_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

int srd_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srd_dev *sdev = to_sdev(ibpd->device);
	struct srd_pd *pd = to_spd(ibpd);
	struct srd_alloc_pd_resp resp = {};
	int id, err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	id = ida_alloc_range(&sdev->pd_ida, 1, SRD_MAX_PD, GFP_KERNEL);
	if (id < 0)
		return id == -ENOSPC ? -ENOMEM : id;
	pd->pdn = id;
	srd_count_one(sdev, SRD_CNT_PDS);

	if (udata && udata->outlen) {
		resp.pdn = pd->pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_free;
	}
	return 0;

err_free:
	atomic64_dec(&sdev->counters[SRD_CNT_PDS]);
	ida_free(&sdev->pd_ida, pd->pdn);
	return err;
}

int srd_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srd_dev *sdev = to_sdev(ibpd->device);

	ida_free(&sdev->pd_ida, to_spd(ibpd)->pdn);
	atomic64_dec(&sdev->counters[SRD_CNT_PDS]);
	return 0;
}
