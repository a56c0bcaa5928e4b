// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: libsrd device matching, context setup and registration with
 * libibverbs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_ioctl_verbs.h>

#include "srd.h"
#include "verbs.h"

static void srd_free_context(struct ibv_context *ibvctx);

/*
 * The verbs libsrd implements.  Every op left NULL keeps the default
 * libibverbs installed before calling verbs_set_ops(): in rdma-core v44
 * (libibverbs/dummy_ops.c, verbs_dummy_ops) those fail with EOPNOTSUPP,
 * either returned or, for ops returning a pointer, in errno with NULL.
 * So SRQs, MWs, resize_cq, multicast, ... fail with EOPNOTSUPP.
 */
static const struct verbs_context_ops srd_ctx_ops = {
	.alloc_pd = srd_alloc_pd,
	.create_ah = srd_create_ah,
	.create_cq = srd_create_cq,
	.create_cq_ex = srd_create_cq_ex,
	.create_qp = srd_create_qp,
	.create_qp_ex = srd_create_qp_ex,
	.dealloc_pd = srd_dealloc_pd,
	.dereg_mr = srd_dereg_mr,
	.destroy_ah = srd_destroy_ah,
	.destroy_cq = srd_destroy_cq,
	.destroy_qp = srd_destroy_qp,
	.free_context = srd_free_context,
	.modify_qp = srd_modify_qp,
	.poll_cq = srd_poll_cq,
	.post_recv = srd_post_recv,
	.post_send = srd_post_send,
	.query_device_ex = srd_query_device_ex,
	.query_port = srd_query_port,
	.query_qp = srd_query_qp,
	.reg_mr = srd_reg_mr,
	.req_notify_cq = ibv_cmd_req_notify_cq,
};

static struct verbs_context *srd_alloc_context(struct ibv_device *ibdev,
					       int cmd_fd, void *private_data)
{
	struct srd_get_context_resp resp = {};
	struct srd_get_context_cmd cmd = {};
	struct srd_context *ctx;
	int err;

	(void)private_data;

	/* Takes ownership of cmd_fd: closes it on failure. */
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
			(struct verbs_context *)offsetof(struct srd_context, ibvctx),
			RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	cmd.drv.comp_mask = 0;
	cmd.drv.abi_version = SRD_UVERBS_ABI_VERSION;

	err = srd_cmd_get_context(&ctx->ibvctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err) {
		srd_err(&ctx->ibvctx, "ibv_cmd_get_context failed: %d\n", err);
		goto err_free;
	}

	if (resp.drv.abi_version != SRD_UVERBS_ABI_VERSION) {
		srd_err(&ctx->ibvctx,
			"kernel srd ABI %u, libsrd built for %u\n",
			resp.drv.abi_version, SRD_UVERBS_ABI_VERSION);
		err = EPROTO;
		goto err_free;
	}

	/*
	 * The fields of a comp_mask bit are valid only with it; a kernel
	 * from before them leaves them 0 (and RDMA unsupported).  Unknown
	 * bits are ignored.
	 */
	if (resp.drv.comp_mask & SRD_UCONTEXT_RESP_RDMA) {
		ctx->device_caps = resp.drv.device_caps;
		ctx->max_rdma_size = resp.drv.max_rdma_size;
	}
	ctx->limits_profile = resp.drv.limits_profile;
	ctx->max_send_sge = resp.drv.max_send_sge;
	ctx->max_recv_sge = resp.drv.max_recv_sge;
	ctx->max_rdma_sge = resp.drv.max_rdma_sge;
	ctx->max_inline_data = resp.drv.max_inline_data;
	ctx->max_msg_sz = resp.drv.max_msg_sz;

	err = srd_qp_table_init(ctx);
	if (err)
		goto err_free;

	verbs_set_ops(&ctx->ibvctx, &srd_ctx_ops);

	return &ctx->ibvctx;

err_free:
	/* Closes cmd_fd (and async_fd if the kernel gave one). */
	verbs_uninit_context(&ctx->ibvctx);
	free(ctx);
	errno = err;
	return NULL;
}

static void srd_free_context(struct ibv_context *ibvctx)
{
	struct srd_context *ctx = to_srd_ctx(ibvctx);

	srd_qp_table_destroy(ctx);
	verbs_uninit_context(&ctx->ibvctx);
	free(ctx);
}

/*
 * The kernel registers with RDMA_DRIVER_UNKNOWN and users name srd devices
 * freely, so neither driver_id nor name can identify one: its hca_type
 * sysfs file does.  libibverbs then checks the device's uverbs ABI against
 * match_{min,max}_abi_version.
 */
static bool srd_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char hca_type[32];

	if (ibv_read_sysfs_file(sysfs_dev->ibdev_path, "hca_type", hca_type,
				sizeof(hca_type)) <= 0)
		return false;

	return strcmp(hca_type, SRD_HCA_TYPE) == 0;
}

static struct verbs_device *srd_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct srd_device *dev;

	(void)sysfs_dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	return &dev->vdev;
}

static void srd_uninit_device(struct verbs_device *vdev)
{
	free(srd_container_of(vdev, struct srd_device, vdev));
}

/*
 * No table entries: srd devices are matched by srd_match_device().  The
 * terminating entry must be there all the same, or libibverbs crashes
 * walking a NULL table when another provider's device (rxe) is present.
 */
static const struct verbs_match_ent srd_match_table[] = {
	{},
};

static const struct verbs_device_ops srd_dev_ops = {
	.name = "srd",
	.match_min_abi_version = SRD_UVERBS_ABI_VERSION,
	.match_max_abi_version = SRD_UVERBS_ABI_VERSION,
	.match_table = srd_match_table,
	.match_device = srd_match_device,
	.alloc_device = srd_alloc_device,
	.uninit_device = srd_uninit_device,
	.alloc_context = srd_alloc_context,
};

/*
 * The device is bound to this copy of libsrd.  A program that links
 * libsrd.so.1 and has libibverbs load the plugin gets one copy, as the
 * plugin is a link to the same file.
 */
bool srd_is_srd_device(struct ibv_device *ibdev)
{
	return verbs_get_device(ibdev)->ops == &srd_dev_ops;
}

/*
 * What rdma-core's PROVIDER_DRIVER() does: registration when libibverbs
 * dlopen()s the plugin, or when a program linked with libsrd.so.1 starts.
 */
static void __attribute__((constructor)) srd_register_driver(void)
{
	srd_verbs_register_driver(&srd_dev_ops);
}
