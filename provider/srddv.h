/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd direct verbs: what libsrd offers beyond libibverbs.
 *
 * Installed as <infiniband/srddv.h>; link with -lsrd (pkg-config libsrd).
 * The symbols are versioned SRD_1.0, but srddv_create_qp_ex (SRD_1.1),
 * srddv_query_device (SRD_1.2), srddv_create_cq and
 * srddv_cq_from_ibv_cq_ex (SRD_1.3).
 * libsrd.so.1 is also the libibverbs
 * plugin for srd devices (libsrd-rdmav34.so links to it), so a program
 * using these functions and libibverbs shares one copy of the provider.
 *
 * Every function returns 0 or a positive errno value, as verbs do, but
 * those that create an object: they return it, or NULL with errno set.
 */
#ifndef SRDDV_H
#define SRDDV_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * srddv_is_srd_device - is DEVICE an srd device?
 *
 *	bool srddv_is_srd_device(struct ibv_device *device);
 *
 * True when libsrd drives DEVICE (any entry of ibv_get_device_list(),
 * whatever name the device was given).  The other srddv_ functions refuse
 * objects of other devices with EOPNOTSUPP.
 */
bool srddv_is_srd_device(struct ibv_device *device);

/*
 * srddv_query_ah - the srd attributes of an address handle
 *
 *	int srddv_query_ah(struct ibv_ah *ah, struct srddv_ah_attr *attr,
 *			   uint32_t inlen);
 *
 * Fills ATTR, of INLEN bytes (sizeof(*attr) for the caller's version of
 * this header), for AH:
 *
 *	comp_mask	in: must be 0 (no optional fields are defined);
 *			out: 0
 *	ahn		the AH number that work requests carry and that a
 *			receiver reports as the slid of a completion from
 *			this address (see srddv_wc_read_sgid)
 *
 * Errors: EOPNOTSUPP if AH is not an srd AH; EINVAL if INLEN is too small
 * for ahn or comp_mask has a bit set.  Bytes of ATTR up to INLEN that this
 * version does not know are zeroed.
 */
struct srddv_ah_attr {
	uint64_t comp_mask;
	uint16_t ahn;
	uint8_t reserved[6];
};

int srddv_query_ah(struct ibv_ah *ah, struct srddv_ah_attr *attr,
		   uint32_t inlen);

/*
 * srddv_query_device - what an srd device supports beyond ibv_query_device
 *
 *	int srddv_query_device(struct ibv_context *ibvctx,
 *			       struct srddv_device_attr *attr,
 *			       uint32_t inlen);
 *
 * Fills ATTR, of INLEN bytes (sizeof(*attr) for the caller's version of
 * this header), for the device of IBVCTX:
 *
 *	comp_mask	in: must be 0 (no optional fields are defined);
 *			out: 0
 *	max_sq_wr	work requests a QP's send queue may hold
 *	max_rq_wr	work requests a QP's receive queue may hold
 *	max_sq_sge	SGEs of a send work request (an RDMA one: also at
 *			most ibv_device_attr.max_sge_rd)
 *	max_rq_sge	SGEs of a receive work request
 *	inline_buf_size	bytes of inline data a send work request may carry
 *	device_caps	SRDDV_DEVICE_ATTR_CAPS_* bits:
 *			RDMA_READ	ibv_wr_rdma_read() on SRD QPs
 *			RDMA_WRITE	ibv_wr_rdma_write() and
 *					ibv_wr_rdma_write_imm() on SRD QPs
 *			RNR_RETRY	IBV_QP_RNR_RETRY is honoured
 *			CQ_WITH_SGID	srddv_wc_read_sgid() works
 *	max_rdma_size	bytes one RDMA read or write may move (the total
 *			length of its SGEs); 0 without RDMA
 *
 * An SRD QP may ask for the RDMA operations (send_ops_flags of
 * ibv_create_qp_ex()) only when device_caps has their bit; else the
 * creation fails with EOPNOTSUPP.  RDMA work requests go through the
 * ibv_wr_*() API only: ibv_post_send() cannot carry both an address
 * handle and an rkey, and refuses them with EINVAL.
 *
 * Errors: EOPNOTSUPP if IBVCTX is not an srd context; EINVAL if INLEN is
 * too small for max_rdma_size or comp_mask has a bit set; otherwise what
 * ibv_query_device() reports.  Bytes of ATTR up to INLEN that this
 * version does not know are zeroed.
 */
enum srddv_device_attr_caps {
	SRDDV_DEVICE_ATTR_CAPS_RDMA_READ = 1 << 0,
	SRDDV_DEVICE_ATTR_CAPS_RNR_RETRY = 1 << 1,
	SRDDV_DEVICE_ATTR_CAPS_CQ_WITH_SGID = 1 << 2,
	SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE = 1 << 3,
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

/*
 * srddv_wc_read_sgid - the source GID of the current receive completion
 *
 *	int srddv_wc_read_sgid(struct ibv_cq_ex *cq, union ibv_gid *sgid);
 *
 * Between ibv_start_poll() and ibv_end_poll() on CQ (created with
 * ibv_create_cq_ex()), copies the GID of the sender of the current
 * completion to SGID.  Use it to create an AH back to a sender whose slid
 * is 0xffff (no AH of the receiver names it).
 *
 * Errors: ENOENT if the current completion is not a successful receive,
 * or there is no current completion; EOPNOTSUPP if CQ is not an srd CQ.
 */
int srddv_wc_read_sgid(struct ibv_cq_ex *cq, union ibv_gid *sgid);

/*
 * srddv_create_qp_ex - create an SRD QP
 *
 *	struct ibv_qp *srddv_create_qp_ex(struct ibv_context *ibvctx,
 *					  struct ibv_qp_init_attr_ex *attr_ex,
 *					  struct srddv_qp_init_attr *srd_attr,
 *					  uint32_t inlen);
 *
 * Creates a QP of the driver type SRD_ATTR names, as ibv_create_qp_ex()
 * would (ATTR_EX->cap is updated to what was granted; the QP is used with
 * the standard verbs).  ATTR_EX->qp_type must be IBV_QPT_DRIVER.  SRD_ATTR
 * has INLEN bytes (sizeof(*srd_attr) for the caller's version of this
 * header):
 *
 *	comp_mask	must be 0 (no optional fields are defined)
 *	driver_qp_type	SRDDV_QP_DRIVER_TYPE_SRD: reliable, unordered
 *			datagrams, addressed as UD (AH, QPN, Q_Key)
 *	reserved	must be zero
 *
 * ibv_create_qp_ex() with IBV_QPT_DRIVER creates the same QP; this
 * function names the driver type, as efadv_create_qp_ex() does for EFA.
 *
 * Returns the QP, or NULL with errno set: EOPNOTSUPP if IBVCTX is not an
 * srd context or DRIVER_QP_TYPE is unknown; EINVAL if qp_type is not
 * IBV_QPT_DRIVER, INLEN is too small for driver_qp_type, comp_mask has a
 * bit set, or a reserved byte (or a byte past the end of this version's
 * struct, up to INLEN) is not zero; otherwise what ibv_create_qp_ex()
 * would report.
 */
enum {
	SRDDV_QP_DRIVER_TYPE_SRD = 0,
};

struct srddv_qp_init_attr {
	uint64_t comp_mask;
	uint32_t driver_qp_type;
	uint8_t reserved[4];
};

struct ibv_qp *srddv_create_qp_ex(struct ibv_context *ibvctx,
				  struct ibv_qp_init_attr_ex *attr_ex,
				  struct srddv_qp_init_attr *srd_attr,
				  uint32_t inlen);

/*
 * srddv_create_cq - create a CQ with srd options
 *
 *	struct ibv_cq_ex *srddv_create_cq(struct ibv_context *ibvctx,
 *					  struct ibv_cq_init_attr_ex *attr_ex,
 *					  struct srddv_cq_init_attr *srd_attr,
 *					  uint32_t inlen);
 *
 * Creates a CQ as ibv_create_cq_ex() would, with the options of SRD_ATTR,
 * of INLEN bytes (sizeof(*srd_attr) for the caller's version of this
 * header):
 *
 *	comp_mask	must be 0 (no optional fields are defined)
 *	wc_flags	SRDDV_WC_EX_WITH_SGID: srddv_cq_wc_read_sgid() works
 *			on the CQ (needs the CQ_WITH_SGID device cap)
 *
 * Returns the CQ, or NULL with errno set: EOPNOTSUPP if IBVCTX is not an
 * srd context, or wc_flags has a bit this device lacks; EINVAL if INLEN is
 * too small for wc_flags, comp_mask has a bit set, or a byte past the end
 * of this version's struct (up to INLEN) is not zero; otherwise what
 * ibv_create_cq_ex() would report.
 *
 * srddv_cq_from_ibv_cq_ex - the srd view of a CQ
 *
 *	struct srddv_cq *srddv_cq_from_ibv_cq_ex(struct ibv_cq_ex *cq);
 *
 * The struct srddv_cq of CQ (any srd CQ, whichever verb created it),
 * valid until the CQ is destroyed; NULL with errno EOPNOTSUPP if CQ is not
 * an srd CQ.
 *
 * srddv_cq_wc_read_sgid - the source GID of a sender the receiver has no
 * AH for
 *
 *	int srddv_cq_wc_read_sgid(struct srddv_cq *cq, union ibv_gid *sgid);
 *
 * Between ibv_start_poll() and ibv_end_poll(), for the current completion:
 * if it is a successful receive whose slid is 0xffff (no AH of this
 * device names the sender), copies the sender's GID to SGID and returns 0;
 * otherwise returns -ENOENT (negative: the sender has an AH, use slid; or
 * the completion is not such a receive).  As efadv_wc_read_sgid() does on
 * EFA.  Only for CQs created by srddv_create_cq() with
 * SRDDV_WC_EX_WITH_SGID; on others cq->wc_read_sgid is NULL.
 * srddv_wc_read_sgid() (above) reports any receive's GID instead.
 */
enum {
	SRDDV_WC_EX_WITH_SGID = 1 << 0,
};

struct srddv_cq_init_attr {
	uint64_t comp_mask;
	uint64_t wc_flags;
};

struct srddv_cq {
	uint64_t comp_mask;
	int (*wc_read_sgid)(struct srddv_cq *cq, union ibv_gid *sgid);
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

#ifdef __cplusplus
}
#endif

#endif /* SRDDV_H */
