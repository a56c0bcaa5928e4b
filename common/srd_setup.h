/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verbs setup softsrd's own programs share: the C selftests (through
 * selftests/srd_test.h), and srd_perf (tools/srd_perf, installed) next.
 * A device by name; a GID by address; the RESET -> INIT -> RTR -> RTS
 * walk; an AH to a GID.
 *
 * Static inline functions, compiled into each program that includes this
 * header: nothing here is a library to find at run time.  None of them
 * decides how to fail.  Each returns NULL or -1 (with errno), or an errno
 * value, and says which in its comment; the caller reports it its own way
 * (srd_perf's die() with its exit status, srd_test.h's FAIL lines).
 */
#ifndef SRD_SETUP_H
#define SRD_SETUP_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#define SRD_GRH		40		/* UD receive buffers start with a GRH */

/* A verb that returns an errno value (or -1 with errno set) as a number. */
static inline int srd_err(int rc)
{
	return rc == -1 ? errno : rc;
}

/* --- devices -------------------------------------------------------------- */

/* The device of a NULL-terminated list (ibv_get_device_list) named name, or NULL. */
static inline struct ibv_device *srd_device_by_name(struct ibv_device **list,
						    const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

/* --- GIDs ----------------------------------------------------------------- */

/* ip: "A.B.C.D" (as ::ffff:A.B.C.D) or an IPv6 address; 0, or -1 if neither. */
static inline int srd_gid_of_ip(const char *ip, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (inet_pton(AF_INET, ip, &gid->raw[12]) == 1) {
		gid->raw[10] = gid->raw[11] = 0xff;
		return 0;
	}
	return inet_pton(AF_INET6, ip, gid->raw) == 1 ? 0 : -1;
}

/*
 * The index of port 1's GID for address ip (srd_gid_of_ip), looking until
 * the first index ibv_query_gid refuses; -1 if none.  *gid (if gid) is it.
 */
static inline int srd_find_gid(struct ibv_context *ctx, const char *ip,
			       union ibv_gid *gid)
{
	union ibv_gid want, g;
	int i;

	if (srd_gid_of_ip(ip, &want))
		return -1;
	for (i = 0; i < 256; i++) {
		if (ibv_query_gid(ctx, 1, i, &g))
			break;
		if (!memcmp(&g, &want, sizeof(g))) {
			if (gid)
				*gid = g;
			return i;
		}
	}
	return -1;
}

/* --- QPs ------------------------------------------------------------------ */

/* RESET -> INIT on port 1, P_Key index 0, with qkey; 0 or the errno. */
static inline int srd_qp_to_init(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = qkey,
	};

	return srd_err(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				     IBV_QP_PORT | IBV_QP_QKEY));
}

/* RESET -> INIT -> RTR -> RTS with UD's masks, sq_psn 0; 0 or the errno. */
static inline int srd_qp_to_rts(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int rc = srd_qp_to_init(qp, qkey);

	if (rc)
		return rc;
	rc = srd_err(ibv_modify_qp(qp, &a, IBV_QP_STATE));
	if (rc)
		return rc;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return srd_err(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN));
}

/* The QP's state (enum ibv_qp_state), or -1 if ibv_query_qp fails. */
static inline int srd_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* --- AHs ------------------------------------------------------------------ */

/*
 * An AH on pd to dgid from port 1's GID sgid_index, with a GRH of hop
 * limit 64; NULL with errno if refused.
 */
static inline struct ibv_ah *srd_ah_new(struct ibv_pd *pd, int sgid_index,
					const union ibv_gid *dgid)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = sgid_index, .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &a);
}

#endif
