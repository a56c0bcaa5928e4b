// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd's libefa.so.1: rdma-core 44's efadv API (<infiniband/efadv.h>)
 * on srd devices, so that software written for EFA runs on softsrd
 * unmodified.  The library has libefa's SONAME and exactly its symbol
 * versions (libefa.map); it lives in a directory of its own and is put in
 * front of the system's with srd-efa-run (or LD_LIBRARY_PATH).
 *
 * Every function checks its arguments as libefa 44 does, with the same
 * errors (a positive errno, or NULL with errno set), then does the work
 * through libsrd's direct verbs, whose structs are efadv's byte for byte
 * (checked below).  Objects of other devices go to the real libefa
 * (real_libefa.c).
 *
 * Where libefa 44 reads or writes past the INLEN bytes it was given, this
 * library does not, and gives the answer libefa gives in practice:
 *  - efadv_query_device and efadv_query_ah fill a whole struct and copy
 *    its first INLEN bytes (libefa stores whole fields that straddle
 *    INLEN);
 *  - efadv_create_qp_ex checks the reserved bytes only up to INLEN;
 *  - efadv_create_cq with INLEN 9..15 fails with EINVAL (libefa scans for
 *    a nonzero byte from offset 16 on, unbounded, and fails when it finds
 *    one);
 *  - a NULL object (context, PD, AH, CQ), on which libefa crashes, fails
 *    with EINVAL.
 *
 * Beyond EFA: with the softsrd limits profile, efadv_query_device reports
 * softsrd's larger limits and the RDMA write capability (bit 3, the one
 * rdma-core 46 names EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE), and
 * efadv_create_qp_ex accepts RDMA write send ops when it is set.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <infiniband/efadv.h>
#include <infiniband/verbs.h>

#include "real_libefa.h"
#include "srddv.h"

#define EFA_COMPAT_EXPORT __attribute__((visibility("default")))

/* rdma-core 46's name; 44's efadv.h does not have it. */
#define EFA_COMPAT_CAPS_RDMA_WRITE (1U << 3)

/*
 * The ABI: every struct of rdma-core 44's efadv.h, at these sizes and
 * offsets, and the same as its srddv counterpart.
 */
#define EFA_COMPAT_AT(type, field, off) \
	_Static_assert(offsetof(type, field) == (off), #type "." #field)
#define EFA_COMPAT_SAME(a, b, field) \
	_Static_assert(offsetof(a, field) == offsetof(b, field) && \
		       sizeof(((a *)0)->field) == sizeof(((b *)0)->field), \
		       #a "." #field " is not " #b "." #field)

_Static_assert(sizeof(struct efadv_device_attr) == 32, "efadv_device_attr");
EFA_COMPAT_AT(struct efadv_device_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_device_attr, max_sq_wr, 8);
EFA_COMPAT_AT(struct efadv_device_attr, max_rq_wr, 12);
EFA_COMPAT_AT(struct efadv_device_attr, max_sq_sge, 16);
EFA_COMPAT_AT(struct efadv_device_attr, max_rq_sge, 18);
EFA_COMPAT_AT(struct efadv_device_attr, inline_buf_size, 20);
EFA_COMPAT_AT(struct efadv_device_attr, reserved, 22);
EFA_COMPAT_AT(struct efadv_device_attr, device_caps, 24);
EFA_COMPAT_AT(struct efadv_device_attr, max_rdma_size, 28);
_Static_assert(sizeof(struct efadv_device_attr) ==
	       sizeof(struct srddv_device_attr), "srddv_device_attr");
EFA_COMPAT_SAME(struct efadv_device_attr, struct srddv_device_attr, max_sq_wr);
EFA_COMPAT_SAME(struct efadv_device_attr, struct srddv_device_attr, max_rq_wr);
EFA_COMPAT_SAME(struct efadv_device_attr, struct srddv_device_attr, max_sq_sge);
EFA_COMPAT_SAME(struct efadv_device_attr, struct srddv_device_attr, max_rq_sge);
EFA_COMPAT_SAME(struct efadv_device_attr, struct srddv_device_attr,
		inline_buf_size);
EFA_COMPAT_SAME(struct efadv_device_attr, struct srddv_device_attr,
		device_caps);
EFA_COMPAT_SAME(struct efadv_device_attr, struct srddv_device_attr,
		max_rdma_size);

_Static_assert(sizeof(struct efadv_qp_init_attr) == 16, "efadv_qp_init_attr");
EFA_COMPAT_AT(struct efadv_qp_init_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_qp_init_attr, driver_qp_type, 8);
EFA_COMPAT_AT(struct efadv_qp_init_attr, reserved, 12);
_Static_assert(sizeof(((struct efadv_qp_init_attr *)0)->reserved) == 4,
	       "efadv_qp_init_attr.reserved");

_Static_assert(sizeof(struct efadv_ah_attr) == 16, "efadv_ah_attr");
EFA_COMPAT_AT(struct efadv_ah_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_ah_attr, ahn, 8);
EFA_COMPAT_AT(struct efadv_ah_attr, reserved, 10);
_Static_assert(sizeof(struct efadv_ah_attr) == sizeof(struct srddv_ah_attr),
	       "srddv_ah_attr");
EFA_COMPAT_SAME(struct efadv_ah_attr, struct srddv_ah_attr, ahn);

_Static_assert(sizeof(struct efadv_cq_init_attr) == 16, "efadv_cq_init_attr");
EFA_COMPAT_AT(struct efadv_cq_init_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_cq_init_attr, wc_flags, 8);

/* The caller's inline efadv_wc_read_sgid() calls through offset 8. */
_Static_assert(sizeof(struct efadv_cq) == 16, "efadv_cq");
EFA_COMPAT_AT(struct efadv_cq, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_cq, wc_read_sgid, 8);
_Static_assert(sizeof(struct efadv_cq) == sizeof(struct srddv_cq), "srddv_cq");
EFA_COMPAT_SAME(struct efadv_cq, struct srddv_cq, comp_mask);
EFA_COMPAT_SAME(struct efadv_cq, struct srddv_cq, wc_read_sgid);

#define EFA_COMPAT_SAME_VALUE(a, b) \
	_Static_assert((int)(a) == (int)(b), #a " is not " #b)
EFA_COMPAT_SAME_VALUE(EFADV_QP_DRIVER_TYPE_SRD, SRDDV_QP_DRIVER_TYPE_SRD);
EFA_COMPAT_SAME_VALUE(EFADV_WC_EX_WITH_SGID, SRDDV_WC_EX_WITH_SGID);
EFA_COMPAT_SAME_VALUE(EFADV_DEVICE_ATTR_CAPS_RDMA_READ,
		      SRDDV_DEVICE_ATTR_CAPS_RDMA_READ);
EFA_COMPAT_SAME_VALUE(EFADV_DEVICE_ATTR_CAPS_RNR_RETRY,
		      SRDDV_DEVICE_ATTR_CAPS_RNR_RETRY);
EFA_COMPAT_SAME_VALUE(EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID,
		      SRDDV_DEVICE_ATTR_CAPS_CQ_WITH_SGID);
EFA_COMPAT_SAME_VALUE(EFA_COMPAT_CAPS_RDMA_WRITE,
		      SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE);

/* libefa's vext_field_avail(): a field is given if it starts before INLEN. */
#define efa_field_given(type, field, inlen) (offsetof(type, field) < (inlen))

static bool efa_zeroed(const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

static bool efa_is_srd(const struct ibv_context *ctx)
{
	return ctx && srddv_is_srd_device(ctx->device);
}

/* The first @inlen bytes of @full at @dst, zeroes past it (as memset). */
static void efa_copy_out(void *dst, const void *full, size_t full_len,
			 uint32_t inlen)
{
	size_t n = inlen < full_len ? inlen : full_len;

	memcpy(dst, full, n);
	if (inlen > n)
		memset((char *)dst + n, 0, inlen - n);
}

EFA_COMPAT_EXPORT int efadv_query_device(struct ibv_context *ibvctx,
					 struct efadv_device_attr *attr,
					 uint32_t inlen)
{
	struct srddv_device_attr dv = {};
	struct efadv_device_attr out = {};
	int err;

	if (!ibvctx)
		return EINVAL;
	if (!efa_is_srd(ibvctx))
		return real_efadv_query_device(ibvctx, attr, inlen);
	if (!efa_field_given(struct efadv_device_attr, inline_buf_size, inlen))
		return EINVAL;

	err = srddv_query_device(ibvctx, &dv, sizeof(dv));
	if (err)
		return err;

	/* The input comp_mask is not read; the output one is 0. */
	out.max_sq_wr = dv.max_sq_wr;
	out.max_rq_wr = dv.max_rq_wr;
	out.max_sq_sge = dv.max_sq_sge;
	out.max_rq_sge = dv.max_rq_sge;
	out.inline_buf_size = dv.inline_buf_size;
	if (efa_field_given(struct efadv_device_attr, device_caps, inlen))
		out.device_caps |= dv.device_caps &
				   (EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
				    EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID);
	if (efa_field_given(struct efadv_device_attr, max_rdma_size, inlen)) {
		out.max_rdma_size = dv.max_rdma_size;
		out.device_caps |= dv.device_caps &
				   (EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
				    EFA_COMPAT_CAPS_RDMA_WRITE);
	}
	efa_copy_out(attr, &out, sizeof(out), inlen);

	return 0;
}

EFA_COMPAT_EXPORT int efadv_query_ah(struct ibv_ah *ibvah,
				     struct efadv_ah_attr *attr,
				     uint32_t inlen)
{
	struct srddv_ah_attr dv = {};
	struct efadv_ah_attr out = {};
	int err;

	if (!ibvah)
		return EINVAL;
	if (!efa_is_srd(ibvah->context))
		return real_efadv_query_ah(ibvah, attr, inlen);
	if (!efa_field_given(struct efadv_ah_attr, ahn, inlen))
		return EINVAL;

	/* The input comp_mask is not read (srddv's must be 0). */
	err = srddv_query_ah(ibvah, &dv, sizeof(dv));
	if (err)
		return err;
	out.ahn = dv.ahn;
	efa_copy_out(attr, &out, sizeof(out), inlen);

	return 0;
}

/*
 * What libefa's create_qp() checks (efa_check_qp_attr, efa_check_qp_limits)
 * before it creates an SRD QP, against the device's efadv attributes.
 */
static int efa_check_qp_attr(struct ibv_context *ibvctx,
			     const struct ibv_qp_init_attr_ex *attr,
			     uint32_t driver_qp_type)
{
	const uint32_t supp_comp_mask = IBV_QP_INIT_ATTR_PD |
					IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint64_t supp_send_ops = IBV_QP_EX_WITH_SEND |
				 IBV_QP_EX_WITH_SEND_WITH_IMM;
	struct srddv_device_attr dv = {};
	int err;

	err = srddv_query_device(ibvctx, &dv, sizeof(dv));
	if (err)
		return err;
	if (dv.device_caps & SRDDV_DEVICE_ATTR_CAPS_RDMA_READ)
		supp_send_ops |= IBV_QP_EX_WITH_RDMA_READ;
	if (dv.device_caps & SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE)
		supp_send_ops |= IBV_QP_EX_WITH_RDMA_WRITE |
				 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;

	if (driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~supp_comp_mask)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD))
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~supp_send_ops))
		return EOPNOTSUPP;
	if (!attr->recv_cq || !attr->send_cq)
		return EINVAL;
	if (attr->srq)
		return EINVAL;
	if (attr->cap.max_send_sge > dv.max_sq_sge ||
	    attr->cap.max_recv_sge > dv.max_rq_sge ||
	    attr->cap.max_send_wr > dv.max_sq_wr ||
	    attr->cap.max_recv_wr > dv.max_rq_wr)
		return EINVAL;
	return 0;
}

static struct ibv_qp *efa_create_qp(struct ibv_context *ibvctx,
				    struct ibv_qp_init_attr_ex *attr,
				    uint32_t driver_qp_type)
{
	struct srddv_qp_init_attr dv = {
		.driver_qp_type = SRDDV_QP_DRIVER_TYPE_SRD,
	};
	int err;

	err = efa_check_qp_attr(ibvctx, attr, driver_qp_type);
	if (err) {
		errno = err;
		return NULL;
	}
	return srddv_create_qp_ex(ibvctx, attr, &dv, sizeof(dv));
}

EFA_COMPAT_EXPORT struct ibv_qp *
efadv_create_qp_ex(struct ibv_context *ibvctx,
		   struct ibv_qp_init_attr_ex *attr_ex,
		   struct efadv_qp_init_attr *efa_attr, uint32_t inlen)
{
	struct efadv_qp_init_attr in = {};

	if (!ibvctx) {
		errno = EINVAL;
		return NULL;
	}
	if (!efa_is_srd(ibvctx))
		return real_efadv_create_qp_ex(ibvctx, attr_ex, efa_attr, inlen);

	if (!attr_ex || attr_ex->qp_type != IBV_QPT_DRIVER ||
	    !efa_field_given(struct efadv_qp_init_attr, driver_qp_type,
			     inlen) || !efa_attr) {
		errno = EINVAL;
		return NULL;
	}
	memcpy(&in, efa_attr, inlen < sizeof(in) ? inlen : sizeof(in));
	if (in.comp_mask || !efa_zeroed(in.reserved, sizeof(in.reserved)) ||
	    (inlen > sizeof(in) && !efa_zeroed(efa_attr + 1, inlen - sizeof(in)))) {
		errno = EINVAL;
		return NULL;
	}

	return efa_create_qp(ibvctx, attr_ex, in.driver_qp_type);
}

EFA_COMPAT_EXPORT struct ibv_qp *
efadv_create_driver_qp(struct ibv_pd *ibvpd, struct ibv_qp_init_attr *attr,
		       uint32_t driver_qp_type)
{
	struct ibv_qp_init_attr_ex attr_ex = {};
	struct ibv_qp *qp;

	if (!ibvpd) {
		errno = EINVAL;
		return NULL;
	}
	if (!efa_is_srd(ibvpd->context))
		return real_efadv_create_driver_qp(ibvpd, attr, driver_qp_type);

	if (!attr || attr->qp_type != IBV_QPT_DRIVER) {
		errno = EINVAL;
		return NULL;
	}

	/* The old API: a PD and nothing else, so no ibv_wr_*() ops. */
	memcpy(&attr_ex, attr, sizeof(*attr));
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = ibvpd;
	qp = efa_create_qp(ibvpd->context, &attr_ex, driver_qp_type);
	if (qp)
		memcpy(attr, &attr_ex, sizeof(*attr));
	return qp;
}

EFA_COMPAT_EXPORT struct ibv_cq_ex *
efadv_create_cq(struct ibv_context *ibvctx, struct ibv_cq_init_attr_ex *attr_ex,
		struct efadv_cq_init_attr *efa_attr, uint32_t inlen)
{
	struct srddv_cq_init_attr dv = {};
	struct srddv_device_attr dattr = {};
	uint64_t supp_wc_flags = 0;
	int err;

	if (!ibvctx) {
		errno = EINVAL;
		return NULL;
	}
	if (!efa_is_srd(ibvctx))
		return real_efadv_create_cq(ibvctx, attr_ex, efa_attr, inlen);

	if (!efa_attr ||
	    !efa_field_given(struct efadv_cq_init_attr, wc_flags, inlen) ||
	    inlen < sizeof(*efa_attr) || efa_attr->comp_mask ||
	    (inlen > sizeof(*efa_attr) &&
	     !efa_zeroed(efa_attr + 1, inlen - sizeof(*efa_attr)))) {
		errno = EINVAL;
		return NULL;
	}

	err = srddv_query_device(ibvctx, &dattr, sizeof(dattr));
	if (err) {
		errno = err;
		return NULL;
	}
	if (dattr.device_caps & SRDDV_DEVICE_ATTR_CAPS_CQ_WITH_SGID)
		supp_wc_flags |= EFADV_WC_EX_WITH_SGID;
	if (efa_attr->wc_flags & ~supp_wc_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	/* libefa's create_cq(): no optional attributes, standard fields. */
	if (!attr_ex || attr_ex->comp_mask ||
	    (attr_ex->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	dv.wc_flags = efa_attr->wc_flags;
	return srddv_create_cq(ibvctx, attr_ex, &dv, sizeof(dv));
}

EFA_COMPAT_EXPORT struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *cq)
{
	if (!cq) {
		errno = EINVAL;
		return NULL;
	}
	if (!efa_is_srd(cq->context))
		return real_efadv_cq_from_ibv_cq_ex(cq);

	/* The same struct: checked above. */
	return (struct efadv_cq *)srddv_cq_from_ibv_cq_ex(cq);
}
