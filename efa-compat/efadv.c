// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd's libefa.so.1: rdma-core 64's efadv API (efadv_abi.h, symbol
 * versions EFA_1.0 to EFA_1.6) on srd devices, so that software written
 * for EFA runs on softsrd unmodified, whether it was built on rdma-core
 * 44 or on a newer one.  The library has libefa's SONAME and exactly its
 * symbol versions (libefa.map); it lives in a directory of its own and is
 * put in front of the system's with srd-efa-run (or LD_LIBRARY_PATH).
 *
 * Every function checks its arguments as libefa 64 does, with the same
 * errors (a positive errno, NULL with errno set, or a negative errno for
 * the queue depths), then does the work through libsrd's direct verbs,
 * whose structs are efadv's byte for byte (checked below).  Objects of
 * other devices go to the real libefa (real_libefa.c).
 *
 * A caller built on an older efadv.h passes a smaller INLEN (rdma-core
 * 44's efadv_qp_init_attr and efadv_cq_init_attr were 16 bytes): fields
 * past INLEN read as zero, which is what the old caller meant.
 *
 * What softsrd is not, it says so, after libefa's argument checks:
 *  - efadv_query_mr: no interconnect ids, ic_id_validity 0;
 *  - efadv_query_qp_wqs, efadv_query_cq: EOPNOTSUPP, for softsrd's rings
 *    are not EFA's hardware descriptors (callers fall back to ibv_wr_*()
 *    and ibv_start_poll());
 *  - device_caps never has CQ_WITH_EXT_MEM_DMABUF, so the CQ flag that
 *    needs it is refused with EOPNOTSUPP, as libefa refuses it on an EFA
 *    device without it; nor UNSOLICITED_WRITE_RECV but in the efa-gen3
 *    profile, and the QP flag and CQ wc_flag that need it likewise.
 * Hints are accepted and do nothing: a QP's service level (sl), the
 * processing hints of efadv_qp_from_ibv_qp_ex().  EFADV_QP_FLAGS_INLINE_WRITE
 * is accepted with RDMA write, which always takes inline data on softsrd.
 *
 * Where libefa reads or writes past the INLEN bytes it was given, this
 * library does not, and gives the answer libefa gives in practice:
 *  - efadv_query_device and efadv_query_ah fill a whole struct and copy
 *    its first INLEN bytes (libefa stores whole fields that straddle
 *    INLEN);
 *  - efadv_create_qp_ex, efadv_create_cq and the queue depths read their
 *    struct only up to INLEN (a field cut by INLEN keeps its first bytes);
 *  - a NULL object (context, PD, AH, CQ, QP, MR) or attribute struct, on
 *    which libefa crashes, fails with EINVAL.
 *
 * The device's limits profile decides what efadv_query_device reports:
 * an efa-genN profile that EFA generation's limits and caps (RDMA write
 * from efa-gen2 on, unsolicited write recv in efa-gen3), softsrd's its
 * larger limits and RDMA write; and efadv_create_qp_ex accepts RDMA write
 * send ops, efadv_create_qp_ex and efadv_create_cq the unsolicited write
 * recv flags, when the cap is set.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "efadv_abi.h"
#include "real_libefa.h"
#include "srddv.h"

#define EFA_COMPAT_EXPORT __attribute__((visibility("default")))

/*
 * The ABI: every struct of rdma-core 64's efadv.h, at these sizes and
 * offsets (rdma-core 44's are their prefixes), and the same as its srddv
 * counterpart where libsrd has one.
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
EFA_COMPAT_AT(struct efadv_device_attr, inline_buf_size_ex, 22);
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

_Static_assert(sizeof(struct efadv_ah_attr) == 16, "efadv_ah_attr");
EFA_COMPAT_AT(struct efadv_ah_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_ah_attr, ahn, 8);
EFA_COMPAT_AT(struct efadv_ah_attr, reserved, 10);
_Static_assert(sizeof(struct efadv_ah_attr) == sizeof(struct srddv_ah_attr),
	       "srddv_ah_attr");
EFA_COMPAT_SAME(struct efadv_ah_attr, struct srddv_ah_attr, ahn);

/* rdma-core 44's was 16 bytes: comp_mask, driver_qp_type, reserved[4]. */
_Static_assert(sizeof(struct efadv_qp_init_attr) == 24, "efadv_qp_init_attr");
EFA_COMPAT_AT(struct efadv_qp_init_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_qp_init_attr, driver_qp_type, 8);
EFA_COMPAT_AT(struct efadv_qp_init_attr, flags, 12);
EFA_COMPAT_AT(struct efadv_qp_init_attr, sl, 14);
EFA_COMPAT_AT(struct efadv_qp_init_attr, reserved, 15);
EFA_COMPAT_AT(struct efadv_qp_init_attr, wr_flags, 16);
_Static_assert(sizeof(((struct efadv_qp_init_attr *)0)->flags) == 2,
	       "efadv_qp_init_attr.flags");

/* rdma-core 44's was 16 bytes: comp_mask, wc_flags. */
_Static_assert(sizeof(struct efadv_cq_init_attr) == 56, "efadv_cq_init_attr");
EFA_COMPAT_AT(struct efadv_cq_init_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_cq_init_attr, wc_flags, 8);
EFA_COMPAT_AT(struct efadv_cq_init_attr, flags, 16);
EFA_COMPAT_AT(struct efadv_cq_init_attr, ext_mem_dmabuf.buffer, 24);
EFA_COMPAT_AT(struct efadv_cq_init_attr, ext_mem_dmabuf.length, 32);
EFA_COMPAT_AT(struct efadv_cq_init_attr, ext_mem_dmabuf.offset, 40);
EFA_COMPAT_AT(struct efadv_cq_init_attr, ext_mem_dmabuf.fd, 48);
EFA_COMPAT_AT(struct efadv_cq_init_attr, ext_mem_dmabuf.reserved, 52);

/*
 * The caller's inline efadv_wc_read_sgid() and efadv_wc_is_unsolicited()
 * call through offsets 8 and 16 of the srddv_cq inside libsrd's CQ.
 */
_Static_assert(sizeof(struct efadv_cq) == 24, "efadv_cq");
EFA_COMPAT_AT(struct efadv_cq, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_cq, wc_read_sgid, 8);
EFA_COMPAT_AT(struct efadv_cq, wc_is_unsolicited, 16);
_Static_assert(sizeof(struct srddv_cq) == sizeof(struct efadv_cq), "srddv_cq");
EFA_COMPAT_SAME(struct efadv_cq, struct srddv_cq, comp_mask);
EFA_COMPAT_SAME(struct efadv_cq, struct srddv_cq, wc_read_sgid);
EFA_COMPAT_SAME(struct efadv_cq, struct srddv_cq, wc_is_unsolicited);

_Static_assert(sizeof(struct efadv_mr_attr) == 16, "efadv_mr_attr");
EFA_COMPAT_AT(struct efadv_mr_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_mr_attr, ic_id_validity, 8);
EFA_COMPAT_AT(struct efadv_mr_attr, recv_ic_id, 10);
EFA_COMPAT_AT(struct efadv_mr_attr, rdma_read_ic_id, 12);
EFA_COMPAT_AT(struct efadv_mr_attr, rdma_recv_ic_id, 14);

_Static_assert(sizeof(struct efadv_wq_attr) == 40, "efadv_wq_attr");
EFA_COMPAT_AT(struct efadv_wq_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_wq_attr, buffer, 8);
EFA_COMPAT_AT(struct efadv_wq_attr, entry_size, 16);
EFA_COMPAT_AT(struct efadv_wq_attr, num_entries, 20);
EFA_COMPAT_AT(struct efadv_wq_attr, doorbell, 24);
EFA_COMPAT_AT(struct efadv_wq_attr, max_batch, 32);
EFA_COMPAT_AT(struct efadv_wq_attr, reserved, 36);

_Static_assert(sizeof(struct efadv_cq_attr) == 32, "efadv_cq_attr");
EFA_COMPAT_AT(struct efadv_cq_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_cq_attr, buffer, 8);
EFA_COMPAT_AT(struct efadv_cq_attr, entry_size, 16);
EFA_COMPAT_AT(struct efadv_cq_attr, num_entries, 20);
EFA_COMPAT_AT(struct efadv_cq_attr, doorbell, 24);

_Static_assert(sizeof(struct efadv_sq_depth_attr) == 24, "efadv_sq_depth_attr");
EFA_COMPAT_AT(struct efadv_sq_depth_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_sq_depth_attr, flags, 8);
EFA_COMPAT_AT(struct efadv_sq_depth_attr, max_send_sge, 12);
EFA_COMPAT_AT(struct efadv_sq_depth_attr, max_rdma_sge, 16);
EFA_COMPAT_AT(struct efadv_sq_depth_attr, max_inline_data, 20);

_Static_assert(sizeof(struct efadv_rq_depth_attr) == 16, "efadv_rq_depth_attr");
EFA_COMPAT_AT(struct efadv_rq_depth_attr, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_rq_depth_attr, max_recv_sge, 8);

/* The caller's inline efadv_wr_set_processing_hints() calls through 8. */
_Static_assert(sizeof(struct efadv_qp) == 16, "efadv_qp");
EFA_COMPAT_AT(struct efadv_qp, comp_mask, 0);
EFA_COMPAT_AT(struct efadv_qp, wr_set_processing_hints, 8);

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
EFA_COMPAT_SAME_VALUE(EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE,
		      SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE);
EFA_COMPAT_SAME_VALUE(EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV,
		      SRDDV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV);
EFA_COMPAT_SAME_VALUE(EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV,
		      SRDDV_QP_FLAGS_UNSOLICITED_WRITE_RECV);
EFA_COMPAT_SAME_VALUE(EFADV_WC_EX_WITH_IS_UNSOLICITED,
		      SRDDV_WC_EX_WITH_IS_UNSOLICITED);

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

/*
 * The caller's struct at @src, as much of it as @inlen gives, into the
 * zeroed @local: a field past @inlen is zero, as a caller built on an
 * older efadv.h, which has not got it, means.
 */
static void efa_copy_in(void *local, size_t local_len, const void *src,
			uint32_t inlen)
{
	memcpy(local, src, inlen < local_len ? inlen : local_len);
}

/* Whether the caller's bytes from @len to @inlen (a newer struct's) are 0. */
static bool efa_tail_zeroed(const void *src, size_t len, uint32_t inlen)
{
	return inlen <= len || efa_zeroed((const char *)src + len, inlen - len);
}

/*
 * The deepest SQ and RQ that efadv_create_qp_ex takes.  EFA's depend on
 * the SGE count and inline size, which set its descriptor sizes; each of
 * softsrd's ring slots is sized for the QP's SGEs and inline data, so its
 * rings hold max_sq_wr and max_rq_wr slots whatever those are.
 */
static uint32_t efa_sq_max_depth(const struct srddv_device_attr *dv)
{
	return dv->max_sq_wr;
}

static uint32_t efa_rq_max_depth(const struct srddv_device_attr *dv)
{
	return dv->max_rq_wr;
}

/* EFA's inline_buf_size_ex, the most a QP may ask for: 0 means no more. */
static uint16_t efa_inline_buf_size_ex(const struct srddv_device_attr *dv)
{
	return dv->inline_buf_size;
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
	if (!efa_field_given(struct efadv_device_attr, inline_buf_size_ex,
			     inlen) || !attr)
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
	out.inline_buf_size_ex = efa_inline_buf_size_ex(&dv);
	if (efa_field_given(struct efadv_device_attr, device_caps, inlen))
		out.device_caps |= dv.device_caps &
				   (EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
				    EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
				    EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV);
	if (efa_field_given(struct efadv_device_attr, max_rdma_size, inlen)) {
		out.max_rdma_size = dv.max_rdma_size;
		out.device_caps |= dv.device_caps &
				   (EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
				    EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE);
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
	if (!efa_field_given(struct efadv_ah_attr, ahn, inlen) || !attr)
		return EINVAL;

	/* The input comp_mask is not read (srddv's must be 0). */
	err = srddv_query_ah(ibvah, &dv, sizeof(dv));
	if (err)
		return err;
	out.ahn = dv.ahn;
	efa_copy_out(attr, &out, sizeof(out), inlen);

	return 0;
}

/* --- QPs ----------------------------------------------------------------- */

/*
 * What libefa's create_qp() checks (efa_check_qp_attr, efa_check_qp_limits)
 * before it creates an SRD QP, in its order, against the device's efadv
 * attributes.
 */
static int efa_check_qp_attr(struct ibv_context *ibvctx,
			     const struct ibv_qp_init_attr_ex *attr,
			     const struct efadv_qp_init_attr *efa_attr)
{
	const uint32_t supp_comp_mask = IBV_QP_INIT_ATTR_PD |
					IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	uint64_t supp_send_ops = IBV_QP_EX_WITH_SEND |
				 IBV_QP_EX_WITH_SEND_WITH_IMM;
	struct srddv_device_attr dv = {};
	uint16_t supp_flags = 0;
	int err;

	err = srddv_query_device(ibvctx, &dv, sizeof(dv));
	if (err)
		return err;
	if (dv.device_caps & SRDDV_DEVICE_ATTR_CAPS_RDMA_READ)
		supp_send_ops |= IBV_QP_EX_WITH_RDMA_READ;
	if (dv.device_caps & SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE) {
		supp_send_ops |= IBV_QP_EX_WITH_RDMA_WRITE |
				 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
		supp_flags |= EFADV_QP_FLAGS_INLINE_WRITE;
	}
	if (dv.device_caps & SRDDV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV)
		supp_flags |= EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV;

	if (efa_attr->driver_qp_type != EFADV_QP_DRIVER_TYPE_SRD)
		return EOPNOTSUPP;
	if (efa_attr->flags & ~supp_flags)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~supp_comp_mask)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD))
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~supp_send_ops))
		return EOPNOTSUPP;
	if (efa_attr->wr_flags & ~(uint64_t)EFADV_WR_EX_WITH_PROCESSING_HINTS)
		return EOPNOTSUPP;
	if (!attr->recv_cq || !attr->send_cq)
		return EINVAL;
	if (attr->srq)
		return EINVAL;
	if (attr->cap.max_send_sge > dv.max_sq_sge ||
	    attr->cap.max_recv_sge > dv.max_rq_sge ||
	    attr->cap.max_send_wr > efa_sq_max_depth(&dv) ||
	    attr->cap.max_recv_wr > efa_rq_max_depth(&dv) ||
	    attr->cap.max_inline_data > efa_inline_buf_size_ex(&dv))
		return EINVAL;
	return 0;
}

/*
 * An SRD QP.  Of @efa_attr, beyond the checks: sl, a service level,
 * selects nothing (softsrd has one); INLINE_WRITE is what softsrd's RDMA
 * write does anyway; PROCESSING_HINTS makes efadv_qp_from_ibv_qp_ex()'s
 * setter available, which it is on every srd QP; UNSOLICITED_WRITE_RECV
 * goes to libsrd and the kernel, which take a write with immediate to the
 * QP without a receive.
 */
static struct ibv_qp *efa_create_qp(struct ibv_context *ibvctx,
				    struct ibv_qp_init_attr_ex *attr,
				    const struct efadv_qp_init_attr *efa_attr)
{
	struct srddv_qp_init_attr dv = {
		.driver_qp_type = SRDDV_QP_DRIVER_TYPE_SRD,
	};
	int err;

	err = efa_check_qp_attr(ibvctx, attr, efa_attr);
	if (err) {
		errno = err;
		return NULL;
	}
	if (efa_attr->flags & EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV)
		dv.flags |= SRDDV_QP_FLAGS_UNSOLICITED_WRITE_RECV;
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
	efa_copy_in(&in, sizeof(in), efa_attr, inlen);
	if (in.comp_mask || in.reserved ||
	    !efa_tail_zeroed(efa_attr, sizeof(in), inlen)) {
		errno = EINVAL;
		return NULL;
	}

	return efa_create_qp(ibvctx, attr_ex, &in);
}

EFA_COMPAT_EXPORT struct ibv_qp *
efadv_create_driver_qp(struct ibv_pd *ibvpd, struct ibv_qp_init_attr *attr,
		       uint32_t driver_qp_type)
{
	struct efadv_qp_init_attr efa_attr = {
		.driver_qp_type = driver_qp_type,
	};
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
	qp = efa_create_qp(ibvpd->context, &attr_ex, &efa_attr);
	if (qp)
		memcpy(attr, &attr_ex, sizeof(*attr));
	return qp;
}

/*
 * EFA's setter stores the hints in the work request's descriptor for its
 * device's scheduler; softsrd has one way to send, so there is nothing to
 * store.  It needs no QP: every srd QP shares one efadv_qp.
 */
static void efa_wr_set_processing_hints(struct efadv_qp *efadv_qp,
					uint32_t hints)
{
	(void)efadv_qp;
	(void)hints;
}

static struct efadv_qp efa_srd_qp = {
	.wr_set_processing_hints = efa_wr_set_processing_hints,
};

/*
 * libefa sets wr_set_processing_hints only on a QP made with
 * EFADV_WR_EX_WITH_PROCESSING_HINTS (a caller that did not ask does not
 * call it); here it is there on every srd QP.
 */
EFA_COMPAT_EXPORT struct efadv_qp *efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *ibvqpx)
{
	if (!ibvqpx) {
		errno = EINVAL;
		return NULL;
	}
	if (!efa_is_srd(ibvqpx->qp_base.context))
		return real_efadv_qp_from_ibv_qp_ex(ibvqpx);

	return &efa_srd_qp;
}

EFA_COMPAT_EXPORT int efadv_query_qp_wqs(struct ibv_qp *ibvqp,
					 struct efadv_wq_attr *sq_attr,
					 struct efadv_wq_attr *rq_attr,
					 uint32_t inlen)
{
	if (!ibvqp)
		return EINVAL;
	if (!efa_is_srd(ibvqp->context))
		return real_efadv_query_qp_wqs(ibvqp, sq_attr, rq_attr, inlen);
	if (!efa_field_given(struct efadv_wq_attr, max_batch, inlen))
		return EINVAL;

	/*
	 * EFA's descriptor rings, for a caller that writes them itself;
	 * softsrd's rings (uapi/rdma/srd-abi.h) are another format.
	 */
	return EOPNOTSUPP;
}

/* --- queue depths -------------------------------------------------------- */

EFA_COMPAT_EXPORT int efadv_get_max_sq_depth(struct ibv_context *ibvctx,
					     struct efadv_sq_depth_attr *attr,
					     uint32_t inlen)
{
	struct efadv_sq_depth_attr in = {};
	struct srddv_device_attr dv = {};
	struct ibv_device_attr dattr;
	uint32_t depth;
	int err;

	if (!ibvctx)
		return -EINVAL;
	if (!efa_is_srd(ibvctx))
		return real_efadv_get_max_sq_depth(ibvctx, attr, inlen);
	if (!efa_field_given(struct efadv_sq_depth_attr, max_inline_data,
			     inlen) || !attr)
		return -EINVAL;
	efa_copy_in(&in, sizeof(in), attr, inlen);
	if (in.comp_mask)
		return -EINVAL;

	err = srddv_query_device(ibvctx, &dv, sizeof(dv));
	if (err)
		return -err;
	err = ibv_query_device(ibvctx, &dattr);
	if (err)
		return -err;
	if (in.max_send_sge > dv.max_sq_sge ||
	    in.max_rdma_sge > (uint32_t)dattr.max_sge_rd ||
	    in.max_inline_data > efa_inline_buf_size_ex(&dv))
		return -EINVAL;

	/*
	 * flags: EFADV_SQ_DEPTH_ATTR_INLINE_WRITE costs EFA a larger
	 * descriptor and softsrd nothing.  Its other bits are not read, as
	 * libefa does not read them.
	 */
	depth = efa_sq_max_depth(&dv);
	return depth > INT_MAX ? INT_MAX : (int)depth;
}

EFA_COMPAT_EXPORT int efadv_get_max_rq_depth(struct ibv_context *ibvctx,
					     struct efadv_rq_depth_attr *attr,
					     uint32_t inlen)
{
	struct efadv_rq_depth_attr in = {};
	struct srddv_device_attr dv = {};
	uint32_t depth;
	int err;

	if (!ibvctx)
		return -EINVAL;
	if (!efa_is_srd(ibvctx))
		return real_efadv_get_max_rq_depth(ibvctx, attr, inlen);
	if (!efa_field_given(struct efadv_rq_depth_attr, max_recv_sge, inlen) ||
	    !attr)
		return -EINVAL;
	efa_copy_in(&in, sizeof(in), attr, inlen);
	if (in.comp_mask)
		return -EINVAL;

	err = srddv_query_device(ibvctx, &dv, sizeof(dv));
	if (err)
		return -err;
	if (in.max_recv_sge > dv.max_rq_sge)
		return -EINVAL;

	/* libefa divides by max_recv_sge, and faults on 0; here it is taken. */
	depth = efa_rq_max_depth(&dv);
	return depth > INT_MAX ? INT_MAX : (int)depth;
}

/* --- CQs ----------------------------------------------------------------- */

EFA_COMPAT_EXPORT struct ibv_cq_ex *
efadv_create_cq(struct ibv_context *ibvctx, struct ibv_cq_init_attr_ex *attr_ex,
		struct efadv_cq_init_attr *efa_attr, uint32_t inlen)
{
	const uint32_t supp_comp_mask = IBV_CQ_INIT_ATTR_MASK_PD |
					IBV_CQ_INIT_ATTR_MASK_FLAGS;
	struct efadv_cq_init_attr in = {};
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
	    !efa_field_given(struct efadv_cq_init_attr, wc_flags, inlen)) {
		errno = EINVAL;
		return NULL;
	}
	efa_copy_in(&in, sizeof(in), efa_attr, inlen);
	if (in.comp_mask || !efa_tail_zeroed(efa_attr, sizeof(in), inlen)) {
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
	if (dattr.device_caps & SRDDV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV)
		supp_wc_flags |= EFADV_WC_EX_WITH_IS_UNSOLICITED;
	if (in.wc_flags & ~supp_wc_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	/* libefa's create_cq(): a parent domain and flags are optional. */
	if (!attr_ex) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr_ex->comp_mask & ~supp_comp_mask) ||
	    (attr_ex->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) ||
	    ((attr_ex->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr_ex->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/*
	 * libefa refuses a PD that is no parent domain, and softsrd has no
	 * parent domains.  (Completion channels it has, unlike some EFAs.)
	 */
	if (attr_ex->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * The ring is the kernel's, never the caller's memory: what the
	 * kernel answers libefa without CQ_WITH_EXT_MEM_DMABUF.  The other
	 * bits of flags are not read, as libefa does not read them.
	 */
	if (in.flags & EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF) {
		errno = EOPNOTSUPP;
		return NULL;
	}

	dv.wc_flags = in.wc_flags;
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

EFA_COMPAT_EXPORT int efadv_query_cq(struct ibv_cq *ibvcq,
				     struct efadv_cq_attr *attr, uint32_t inlen)
{
	if (!ibvcq)
		return EINVAL;
	if (!efa_is_srd(ibvcq->context))
		return real_efadv_query_cq(ibvcq, attr, inlen);
	if (!efa_field_given(struct efadv_cq_attr, num_entries, inlen))
		return EINVAL;

	/* As efadv_query_qp_wqs(): softsrd's CQEs are not EFA's. */
	return EOPNOTSUPP;
}

/* --- MRs ----------------------------------------------------------------- */

EFA_COMPAT_EXPORT int efadv_query_mr(struct ibv_mr *ibvmr,
				     struct efadv_mr_attr *attr, uint32_t inlen)
{
	if (!ibvmr)
		return EINVAL;
	if (!efa_is_srd(ibvmr->context))
		return real_efadv_query_mr(ibvmr, attr, inlen);
	if (!efa_field_given(struct efadv_mr_attr, rdma_recv_ic_id, inlen) ||
	    !attr)
		return EINVAL;

	/*
	 * The interconnect (a PCIe path) EFA reaches the MR's memory over,
	 * per operation.  softsrd's kernel copies through the CPU: no id is
	 * valid.  The input comp_mask is not read; the output one is 0.
	 */
	memset(attr, 0, inlen);

	return 0;
}
