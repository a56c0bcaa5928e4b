/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd direct verbs: what libsrd offers beyond libibverbs.  srddv(7)
 * and one page per function (srddv_query_device(3), ...) document them.
 *
 * Installed as <infiniband/srddv.h>; link with -lsrd (pkg-config libsrd).
 * Every function returns 0 or a positive errno value, but those that
 * create an object: they return it, or NULL with errno set.
 */
#ifndef SRDDV_H
#define SRDDV_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* srddv_is_srd_device(3): is DEVICE an srd device? */
bool srddv_is_srd_device(struct ibv_device *device);

/* srddv_query_ah(3): the AH number of AH (comp_mask must be 0). */
struct srddv_ah_attr {
	uint64_t comp_mask;
	uint16_t ahn;
	uint8_t reserved[6];
};

int srddv_query_ah(struct ibv_ah *ah, struct srddv_ah_attr *attr,
		   uint32_t inlen);

/*
 * srddv_query_device(3): queue, SGE, inline and RDMA limits, and the
 * SRDDV_DEVICE_ATTR_CAPS_* bits, of the device of IBVCTX.
 */
enum srddv_device_attr_caps {
	SRDDV_DEVICE_ATTR_CAPS_RDMA_READ = 1 << 0,
	SRDDV_DEVICE_ATTR_CAPS_RNR_RETRY = 1 << 1,
	SRDDV_DEVICE_ATTR_CAPS_CQ_WITH_SGID = 1 << 2,
	SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE = 1 << 3,
	SRDDV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV = 1 << 4,
};

struct srddv_device_attr {
	uint64_t comp_mask;
	uint32_t max_sq_wr;
	uint32_t max_rq_wr;
	uint16_t max_sq_sge;
	uint16_t max_rq_sge;
	uint16_t inline_buf_size;
	uint8_t reserved[2];
	uint32_t device_caps;
	uint32_t max_rdma_size;
};

int srddv_query_device(struct ibv_context *ibvctx,
		       struct srddv_device_attr *attr, uint32_t inlen);

/* srddv_wc_read_sgid(3): the source GID of the current receive completion. */
int srddv_wc_read_sgid(struct ibv_cq_ex *cq, union ibv_gid *sgid);

/* srddv_create_qp_ex(3): an SRD QP (attr_ex->qp_type IBV_QPT_DRIVER). */
enum {
	SRDDV_QP_DRIVER_TYPE_SRD = 0,
};

/*
 * srddv_qp_init_attr.flags.  UNSOLICITED_WRITE_RECV (a device with
 * SRDDV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV): an RDMA write with
 * immediate to the QP consumes no receive work request.
 */
enum {
	SRDDV_QP_FLAGS_UNSOLICITED_WRITE_RECV = 1 << 0,
};

struct srddv_qp_init_attr {
	uint64_t comp_mask;
	uint32_t driver_qp_type;
	uint16_t flags;			/* SRDDV_QP_FLAGS_*; reserved before */
	uint8_t reserved[2];
};

struct ibv_qp *srddv_create_qp_ex(struct ibv_context *ibvctx,
				  struct ibv_qp_init_attr_ex *attr_ex,
				  struct srddv_qp_init_attr *srd_attr,
				  uint32_t inlen);

/*
 * srddv_create_cq(3): a CQ with srd options; srddv_cq_from_ibv_cq_ex(3)
 * and srddv_cq_wc_read_sgid(3): the GID of a sender with no AH here.
 */
enum {
	SRDDV_WC_EX_WITH_SGID = 1 << 0,
	SRDDV_WC_EX_WITH_IS_UNSOLICITED = 1 << 1,
};

struct srddv_cq_init_attr {
	uint64_t comp_mask;
	uint64_t wc_flags;
};

/*
 * wc_is_unsolicited is set on a CQ made with SRDDV_WC_EX_WITH_IS_UNSOLICITED
 * only: whether the current receive completion consumed no receive work
 * request (its wr_id is then 0).
 */
struct srddv_cq {
	uint64_t comp_mask;
	int (*wc_read_sgid)(struct srddv_cq *cq, union ibv_gid *sgid);
	bool (*wc_is_unsolicited)(struct srddv_cq *cq);
};

struct ibv_cq_ex *srddv_create_cq(struct ibv_context *ibvctx,
				  struct ibv_cq_init_attr_ex *attr_ex,
				  struct srddv_cq_init_attr *srd_attr,
				  uint32_t inlen);

struct srddv_cq *srddv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx);

static inline int srddv_cq_wc_read_sgid(struct srddv_cq *cq,
					union ibv_gid *sgid)
{
	return cq->wc_read_sgid(cq, sgid);
}

static inline bool srddv_cq_wc_is_unsolicited(struct srddv_cq *cq)
{
	return cq->wc_is_unsolicited(cq);
}

#ifdef __cplusplus
}
#endif

#endif /* SRDDV_H */
