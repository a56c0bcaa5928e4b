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
 */
static int srddv_check_qp_init_attr(const struct srddv_qp_init_attr *attr,
				    uint32_t inlen)
{
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
	return 0;
}

SRDDV_EXPORT struct ibv_qp *
srddv_create_qp_ex(struct ibv_context *ibvctx,
		   struct ibv_qp_init_attr_ex *attr_ex,
		   struct srddv_qp_init_attr *srd_attr, uint32_t inlen)
{
	int err;

	if (!ibvctx || !srd_is_srd_device(ibvctx->device)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr_ex || attr_ex->qp_type != IBV_QPT_DRIVER) {
		errno = EINVAL;
		return NULL;
	}
	err = srddv_check_qp_init_attr(srd_attr, inlen);
	if (err) {
		srd_err(verbs_get_ctx(ibvctx),
			"unsupported srddv_qp_init_attr (inlen %u)\n", inlen);
		errno = err;
		return NULL;
	}

	/* SRD is the only driver type: IBV_QPT_DRIVER says it already. */
	return srd_create_qp_ex(ibvctx, attr_ex);
}
