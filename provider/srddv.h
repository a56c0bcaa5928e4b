/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd direct verbs: what libsrd offers beyond libibverbs.
 *
 * Installed as <infiniband/srddv.h>; link with -lsrd (pkg-config libsrd).
 * The symbols are versioned SRD_1.0.  libsrd.so.1 is also the libibverbs
 * plugin for srd devices (libsrd-rdmav34.so links to it), so a program
 * using these functions and libibverbs shares one copy of the provider.
 *
 * Every function returns 0 or a positive errno value, as verbs do.
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

#ifdef __cplusplus
}
#endif

#endif /* SRDDV_H */
