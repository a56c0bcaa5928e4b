/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd direct verbs: what libsrd offers beyond libibverbs.
 *
 * Installed as <infiniband/srddv.h>; link with -lsrd (pkg-config libsrd).
 * The symbols are versioned SRD_1.0, but srddv_create_qp_ex (SRD_1.1).
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

#ifdef __cplusplus
}
#endif

#endif /* SRDDV_H */
