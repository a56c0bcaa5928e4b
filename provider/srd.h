/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: libsrd provider structures.
 */
#ifndef SRD_H
#define SRD_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/srd-abi.h>

#include "ibverbs_private.h"

#define srd_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct srd_device {
	struct verbs_device vdev;	/* must be first */
};

struct srd_context {
	struct verbs_context ibvctx;	/* must be first */
	/* From srd_alloc_ucontext_resp. */
	uint32_t limits_profile;	/* enum srd_limits_profile */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_rdma_sge;
	uint32_t max_inline_data;
	uint32_t max_msg_sz;
};

struct srd_pd {
	struct ibv_pd ibvpd;
	uint32_t pdn;
};

static inline struct srd_device *to_srd_dev(struct ibv_device *ibdev)
{
	return srd_container_of(verbs_get_device(ibdev), struct srd_device,
				vdev);
}

static inline struct srd_context *to_srd_ctx(struct ibv_context *ibctx)
{
	return srd_container_of(ibctx, struct srd_context, ibvctx.context);
}

static inline struct srd_pd *to_srd_pd(struct ibv_pd *ibpd)
{
	return srd_container_of(ibpd, struct srd_pd, ibvpd);
}

/*
 * Commands carrying driver data: the core command (or response) first, the
 * srd-abi.h struct directly after it, with no padding in between.
 */
struct srd_get_context_cmd {
	struct ibv_get_context ibv_cmd;
	struct srd_alloc_ucontext_cmd drv;
};

struct srd_get_context_resp {
	struct ibvp_get_context_resp ibv_resp;
	struct srd_alloc_ucontext_resp drv;
};

struct srd_alloc_pd_cmd_resp {
	struct ibvp_alloc_pd_resp ibv_resp;
	struct srd_alloc_pd_resp drv;
};

#define SRD_ASSERT_PACKED(type, core, drv_type)				\
	_Static_assert(sizeof(type) == sizeof(core) + sizeof(drv_type) &&	\
		       offsetof(type, drv) == sizeof(core),			\
		       #type " has padding")

SRD_ASSERT_PACKED(struct srd_get_context_cmd, struct ibv_get_context,
		  struct srd_alloc_ucontext_cmd);
SRD_ASSERT_PACKED(struct srd_get_context_resp, struct ibvp_get_context_resp,
		  struct srd_alloc_ucontext_resp);
SRD_ASSERT_PACKED(struct srd_alloc_pd_cmd_resp, struct ibvp_alloc_pd_resp,
		  struct srd_alloc_pd_resp);

/*
 * Errors go to VERBS_LOG_FILE when VERBS_LOG_LEVEL >= 1 (libibverbs'
 * logging).  Preserves errno.
 */
#define srd_err(vctx, fmt, ...)						\
	do {								\
		int srd_saved_errno_ = errno;				\
		__verbs_log(vctx, VERBS_LOG_ERR, "%s: %s: " fmt,	\
			    (vctx)->context.device->name, __func__,	\
			    ##__VA_ARGS__);				\
		errno = srd_saved_errno_;				\
	} while (0)

#endif /* SRD_H */
