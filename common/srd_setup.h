/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verbs setup softsrd's own programs share: srd_perf (tools/srd_perf,
 * installed) and the C selftests (through selftests/srd_test.h).  Which
 * device is an srd one, and whether its GIDs are of this namespace; a GID
 * by address, or the first IPv4-mapped one; a UD or an SRD QP, and the
 * RESET -> INIT -> RTR -> RTS walk; an AH to a GID.
 *
 * Static inline functions, compiled into each program that includes this
 * header: nothing here is a library to find at run time.  None of them
 * decides how to fail.  Each returns NULL or -1 (with errno), or an errno
 * value, and says which in its comment; the caller reports it its own way
 * (srd_perf's die() with its exit status, srd_test.h's FAIL lines).
 *
 * With SRD_HAVE_SRDDV defined, libsrd's direct verbs (<infiniband/srddv.h>)
 * are used where they exist; without, only plain verbs.
 */
#ifndef SRD_SETUP_H
#define SRD_SETUP_H

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#ifdef SRD_HAVE_SRDDV
#include <infiniband/srddv.h>
#endif

#define SRD_GRH		40		/* UD receive buffers start with a GRH */

/* A verb that returns an errno value (or -1 with errno set) as a number. */
static inline int srd_err(int rc)
{
	return rc == -1 ? errno : rc;
}

/* --- devices -------------------------------------------------------------- */

/* Whether d is an srd device: libsrd's answer, else by its name. */
static inline bool srd_device_is_srd(struct ibv_device *d)
{
#ifdef SRD_HAVE_SRDDV
	return srddv_is_srd_device(d);
#else
	return !strncmp(ibv_get_device_name(d), "srd", 3);
#endif
}

/* The device of a NULL-terminated list (ibv_get_device_list) named name, or NULL. */
static inline struct ibv_device *srd_device_by_name(struct ibv_device **list,
						    const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

/*
 * Whether one of the first 16 GIDs of port 1 of device dev (read from
 * sysfs) is an address of this network namespace; false when that cannot
 * be told.
 */
static inline bool srd_device_is_local(const char *dev)
{
	struct ifaddrs *ifs, *i;
	union ibv_gid g, a;
	bool local = false;
	char path[256], txt[64];
	FILE *f;
	int n;

	if (getifaddrs(&ifs))
		return false;
	for (n = 0; n < 16 && !local; n++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gids/%d",
			 dev, n);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%63s", txt) != 1 || inet_pton(AF_INET6, txt, g.raw) != 1)
			memset(&g, 0, sizeof(g));
		fclose(f);
		for (i = ifs; i && !local; i = i->ifa_next) {
			memset(&a, 0, sizeof(a));
			if (!i->ifa_addr)
				continue;
			if (i->ifa_addr->sa_family == AF_INET) {
				a.raw[10] = a.raw[11] = 0xff;
				memcpy(&a.raw[12], &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			} else if (i->ifa_addr->sa_family == AF_INET6) {
				memcpy(a.raw, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
			} else {
				continue;
			}
			local = !memcmp(&a, &g, sizeof(g));
		}
	}
	freeifaddrs(ifs);
	return local;
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

/* Whether g is IPv4-mapped (::ffff:A.B.C.D). */
static inline bool srd_gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
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

/*
 * The index of the first IPv4-mapped GID among port 1's first n (its
 * gid_tbl_len), skipping any ibv_query_gid refuses; -1 if none.  *gid (if
 * gid) is it.
 */
static inline int srd_find_v4_gid(struct ibv_context *ctx, int n, union ibv_gid *gid)
{
	union ibv_gid g;
	int i;

	for (i = 0; i < n; i++)
		if (!ibv_query_gid(ctx, 1, i, &g) && srd_gid_is_v4(&g)) {
			if (gid)
				*gid = g;
			return i;
		}
	return -1;
}

/* --- QPs ------------------------------------------------------------------ */

enum srd_qp_kind {
	SRD_QP_UD,		/* IBV_QPT_UD */
	SRD_QP_SRD,		/* IBV_QPT_DRIVER: SRD on an srd device */
	SRD_QP_SRDDV,		/* the same through srddv_create_qp_ex, as efadv's */
};

/*
 * A QP of kind on pd (and pd's context) and the CQs, in RESET, through
 * ibv_create_qp_ex or srddv_create_qp_ex; with send_ops (IBV_QP_EX_WITH_*)
 * not 0, for the ibv_wr_*() API with those ops.  *cap: what to ask for, and
 * on success what was granted.  NULL with errno if refused (SRD_QP_SRDDV
 * without SRD_HAVE_SRDDV: EOPNOTSUPP).
 */
static inline struct ibv_qp *srd_qp_new(struct ibv_pd *pd, struct ibv_cq *scq,
					struct ibv_cq *rcq, enum srd_qp_kind kind,
					uint64_t send_ops, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = scq, .recv_cq = rcq, .cap = *cap,
		.qp_type = kind == SRD_QP_UD ? IBV_QPT_UD : IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};
	struct ibv_qp *qp;

	if (send_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = send_ops;
	}
	if (kind == SRD_QP_SRDDV) {
#ifdef SRD_HAVE_SRDDV
		struct srddv_qp_init_attr sa = {
			.driver_qp_type = SRDDV_QP_DRIVER_TYPE_SRD,
		};

		qp = srddv_create_qp_ex(pd->context, &a, &sa, sizeof(sa));
#else
		qp = NULL;
		errno = EOPNOTSUPP;
#endif
	} else {
		qp = ibv_create_qp_ex(pd->context, &a);
	}
	if (qp)
		*cap = a.cap;
	return qp;
}

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

/*
 * RESET -> INIT -> RTR -> RTS with UD's masks, sq_psn 0; rnr_retry >= 0
 * is set on RTR -> RTS (SRD QPs), < 0 leaves the default.  0 or the errno
 * of the step that failed.
 */
static inline int srd_qp_to_rts_rnr(struct ibv_qp *qp, uint32_t qkey, int rnr_retry)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	int rc = srd_qp_to_init(qp, qkey);

	if (rc)
		return rc;
	rc = srd_err(ibv_modify_qp(qp, &a, IBV_QP_STATE));
	if (rc)
		return rc;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (rnr_retry >= 0) {
		a.rnr_retry = rnr_retry;
		mask |= IBV_QP_RNR_RETRY;
	}
	return srd_err(ibv_modify_qp(qp, &a, mask));
}

/* RESET -> INIT -> RTR -> RTS, rnr_retry left alone; 0 or the errno. */
static inline int srd_qp_to_rts(struct ibv_qp *qp, uint32_t qkey)
{
	return srd_qp_to_rts_rnr(qp, qkey, -1);
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
