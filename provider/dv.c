// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: direct verbs, the functions <infiniband/srddv.h> declares and
 * libsrd.so.1 exports (libsrd.map).
 */
#include <errno.h>
#include <string.h>

#include "srd.h"
#include "srddv.h"

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
