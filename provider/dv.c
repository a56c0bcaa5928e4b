// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: direct verbs, the functions <infiniband/srddv.h> declares and
 * libsrd.so.1 exports (libsrd.map).
 */
#include <errno.h>
#include <string.h>

#include "srd.h"
#include "srddv.h"
#include "verbs.h"

#define SRDDV_EXPORT __attribute__((visibility("default")))

/* The bytes of @type up to the end of @field. */
#define srddv_size_to(type, field) \
	(offsetof(type, field) + sizeof(((type *)0)->field))

SRDDV_EXPORT bool srddv_is_srd_device(struct ibv_device *device)
{
	return device && srd_is_srd_device(device);
}

SRDDV_EXPORT int srddv_query_ah(struct ibv_ah *ah, struct srddv_ah_attr *attr,
				uint32_t inlen)
{
	if (!srd_is_srd_device(ah->context->device))
		return EOPNOTSUPP;
	if (inlen < srddv_size_to(struct srddv_ah_attr, ahn) ||
	    attr->comp_mask)
		return EINVAL;

	memset(attr, 0, inlen);
	attr->ahn = to_srd_ah(ah)->ahn;

	return 0;
}

SRDDV_EXPORT int srddv_query_device(struct ibv_context *ibvctx,
				    struct srddv_device_attr *attr,
				    uint32_t inlen)
{
	struct ibv_device_attr dattr;
	struct srd_context *ctx;
	int err;

	if (!ibvctx || !srd_is_srd_device(ibvctx->device))
		return EOPNOTSUPP;
	if (!attr ||
	    inlen < srddv_size_to(struct srddv_device_attr, max_rdma_size) ||
	    attr->comp_mask)
		return EINVAL;

	err = ibv_query_device(ibvctx, &dattr);
	if (err)
		return err;

	ctx = to_srd_ctx(ibvctx);
	memset(attr, 0, inlen);
	attr->max_sq_wr = dattr.max_qp_wr;
	attr->max_rq_wr = dattr.max_qp_wr;
	/* Per direction, as the kernel gave them (max_sge is the smaller). */
	attr->max_sq_sge = ctx->max_send_sge > UINT16_MAX ? UINT16_MAX :
							    ctx->max_send_sge;
	attr->max_rq_sge = ctx->max_recv_sge > UINT16_MAX ? UINT16_MAX :
							    ctx->max_recv_sge;
	attr->inline_buf_size = ctx->max_inline_data > UINT16_MAX ?
					UINT16_MAX : ctx->max_inline_data;
	/* The srd_device_caps bits are the srddv ones. */
	attr->device_caps = ctx->device_caps &
			    (SRDDV_DEVICE_ATTR_CAPS_RDMA_READ |
			     SRDDV_DEVICE_ATTR_CAPS_RNR_RETRY |
			     SRDDV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
			     SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE |
			     SRDDV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV);
	attr->max_rdma_size = ctx->max_rdma_size;

	return 0;
}

#define SRDDV_SAME_BIT(a, b) ((unsigned int)(a) == (unsigned int)(b))
_Static_assert(SRDDV_SAME_BIT(SRDDV_DEVICE_ATTR_CAPS_RDMA_READ,
			      SRD_DEVICE_CAP_RDMA_READ) &&
	       SRDDV_SAME_BIT(SRDDV_DEVICE_ATTR_CAPS_RNR_RETRY,
			      SRD_DEVICE_CAP_RNR_RETRY) &&
	       SRDDV_SAME_BIT(SRDDV_DEVICE_ATTR_CAPS_CQ_WITH_SGID,
			      SRD_DEVICE_CAP_CQ_WITH_SGID) &&
	       SRDDV_SAME_BIT(SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE,
			      SRD_DEVICE_CAP_RDMA_WRITE) &&
	       SRDDV_SAME_BIT(SRDDV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV,
			      SRD_DEVICE_CAP_UNSOLICITED_WRITE_RECV),
	       "srddv device caps differ from the uapi's");
_Static_assert(SRDDV_SAME_BIT(SRDDV_QP_FLAGS_UNSOLICITED_WRITE_RECV,
			      SRD_QP_FLAG_UNSOLICITED_WRITE_RECV),
	       "srddv QP flags differ from the uapi's");
_Static_assert(sizeof(struct srddv_device_attr) == 32,
	       "struct srddv_device_attr is part of the ABI");

SRDDV_EXPORT int srddv_wc_read_sgid(struct ibv_cq_ex *ibcqx,
				    union ibv_gid *sgid)
{
	const struct srd_cqe *cqe;

	if (!srd_is_srd_device(ibcqx->context->device))
		return EOPNOTSUPP;

	cqe = to_srd_cq_ex(ibcqx)->cur_cqe;
	if (!cqe || cqe->status != IBV_WC_SUCCESS ||
	    !(cqe->opcode & IBV_WC_RECV))
		return ENOENT;

	memcpy(sgid->raw, cqe->sgid, sizeof(sgid->raw));

	return 0;
}

/* Whether the @len bytes at @p are all zero. */
static bool srddv_zeroed(const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * A caller built against a newer header may pass a bigger struct; its
 * extra bytes name features this version lacks, so they must be zero.
 * One built before flags (inlen 12) asks for none.  *@flags: the QP's
 * SRD_QP_FLAG_* bits, each one the device has.
 */
static int srddv_check_qp_init_attr(const struct srd_context *ctx,
				    const struct srddv_qp_init_attr *attr,
				    uint32_t inlen, uint32_t *flags)
{
	uint32_t supported = 0;

	*flags = 0;
	if (!attr ||
	    inlen < srddv_size_to(struct srddv_qp_init_attr, driver_qp_type))
		return EINVAL;
	if (attr->comp_mask)
		return EINVAL;
	if (inlen >= sizeof(*attr) &&
	    !srddv_zeroed(attr->reserved, sizeof(attr->reserved)))
		return EINVAL;
	if (inlen > sizeof(*attr) &&
	    !srddv_zeroed(attr + 1, inlen - sizeof(*attr)))
		return EINVAL;
	if (attr->driver_qp_type != SRDDV_QP_DRIVER_TYPE_SRD)
		return EOPNOTSUPP;
	if (inlen < srddv_size_to(struct srddv_qp_init_attr, flags))
		return 0;
	if (ctx->device_caps & SRD_DEVICE_CAP_UNSOLICITED_WRITE_RECV)
		supported |= SRDDV_QP_FLAGS_UNSOLICITED_WRITE_RECV;
	if (attr->flags & ~supported)
		return EOPNOTSUPP;
	*flags = attr->flags;
	return 0;
}

SRDDV_EXPORT struct ibv_qp *
srddv_create_qp_ex(struct ibv_context *ibvctx,
		   struct ibv_qp_init_attr_ex *attr_ex,
		   struct srddv_qp_init_attr *srd_attr, uint32_t inlen)
{
	uint32_t flags;
	int err;

	if (!ibvctx || !srd_is_srd_device(ibvctx->device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr_ex || attr_ex->qp_type != IBV_QPT_DRIVER) {
		errno = EINVAL;
		return NULL;
	}
	err = srddv_check_qp_init_attr(to_srd_ctx(ibvctx), srd_attr, inlen,
				       &flags);
	if (err) {
		srd_err(verbs_get_ctx(ibvctx),
			"unsupported srddv_qp_init_attr (inlen %u)\n", inlen);
		errno = err;
		return NULL;
	}

	/* SRD is the only driver type: IBV_QPT_DRIVER says it already. */
	return srd_create_qp_flags(ibvctx, attr_ex, flags);
}

/*
 * srddv_cq->wc_read_sgid of a CQ made with SRDDV_WC_EX_WITH_SGID: EFA's
 * rule, the GID only of a sender the receiver has no AH for.  Called
 * between start_poll and end_poll, under the CQ's lock.
 */
static int srd_dv_cq_read_sgid(struct srddv_cq *dv_cq, union ibv_gid *sgid)
{
	const struct srd_cqe *cqe = srddv_cq_to_srd_cq(dv_cq)->cur_cqe;

	if (!cqe || cqe->status != IBV_WC_SUCCESS ||
	    !(cqe->opcode & IBV_WC_RECV) || cqe->slid != 0xffff)
		return -ENOENT;

	memcpy(sgid->raw, cqe->sgid, sizeof(sgid->raw));

	return 0;
}

/*
 * srddv_cq->wc_is_unsolicited of a CQ made with
 * SRDDV_WC_EX_WITH_IS_UNSOLICITED: the current completion consumed no
 * receive (a write with immediate to a QP made with
 * SRDDV_QP_FLAGS_UNSOLICITED_WRITE_RECV).  Between start_poll and end_poll.
 */
static bool srd_dv_cq_is_unsolicited(struct srddv_cq *dv_cq)
{
	const struct srd_cqe *cqe = srddv_cq_to_srd_cq(dv_cq)->cur_cqe;

	return cqe && (cqe->flags & SRD_CQE_UNSOLICITED);
}

static int srddv_check_cq_init_attr(struct srd_context *ctx,
				    const struct srddv_cq_init_attr *attr,
				    uint32_t inlen)
{
	uint64_t supported = 0;

	if (!attr || inlen < srddv_size_to(struct srddv_cq_init_attr, wc_flags))
		return EINVAL;
	if (attr->comp_mask)
		return EINVAL;
	if (inlen > sizeof(*attr) &&
	    !srddv_zeroed(attr + 1, inlen - sizeof(*attr)))
		return EINVAL;
	if (ctx->device_caps & SRD_DEVICE_CAP_CQ_WITH_SGID)
		supported |= SRDDV_WC_EX_WITH_SGID;
	if (ctx->device_caps & SRD_DEVICE_CAP_UNSOLICITED_WRITE_RECV)
		supported |= SRDDV_WC_EX_WITH_IS_UNSOLICITED;
	if (attr->wc_flags & ~supported)
		return EOPNOTSUPP;
	return 0;
}

SRDDV_EXPORT struct ibv_cq_ex *
srddv_create_cq(struct ibv_context *ibvctx, struct ibv_cq_init_attr_ex *attr_ex,
		struct srddv_cq_init_attr *srd_attr, uint32_t inlen)
{
	struct srd_cq *cq;
	int err;

	if (!ibvctx || !srd_is_srd_device(ibvctx->device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	err = srddv_check_cq_init_attr(to_srd_ctx(ibvctx), srd_attr, inlen);
	if (err) {
		srd_err(verbs_get_ctx(ibvctx),
			"unsupported srddv_cq_init_attr (inlen %u)\n", inlen);
		errno = err;
		return NULL;
	}
	if (!attr_ex) {
		errno = EINVAL;
		return NULL;
	}

	cq = srd_cq_create(ibvctx, attr_ex);
	if (!cq)
		return NULL;
	if (srd_attr->wc_flags & SRDDV_WC_EX_WITH_SGID)
		cq->dv_cq.wc_read_sgid = srd_dv_cq_read_sgid;
	if (srd_attr->wc_flags & SRDDV_WC_EX_WITH_IS_UNSOLICITED)
		cq->dv_cq.wc_is_unsolicited = srd_dv_cq_is_unsolicited;

	return &cq->vcq.cq_ex;
}

SRDDV_EXPORT struct srddv_cq *srddv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx)
{
	if (!ibvcqx || !srd_is_srd_device(ibvcqx->context->device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	return &to_srd_cq_ex(ibvcqx)->dv_cq;
}
