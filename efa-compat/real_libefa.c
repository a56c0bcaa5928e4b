// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd's libefa.so.1: forwarding to the system's real libefa, for the
 * objects of devices that are not srd devices (a real EFA NIC beside
 * softsrd devices).
 *
 * The real library is opened by the path libibverbs loads EFA's verbs
 * plugin from (REAL_LIBEFA, <provider dir>/libefa-rdmav34.so, a link to
 * the system's libefa.so.1.*).  glibc identifies a loaded object by its
 * file, so this is the copy libibverbs bound the EFA devices to: real
 * libefa accepts a device only if it is bound to its own copy.  Opening it
 * by its SONAME would find this library instead, which has the same one.
 *
 * Without a real libefa, or without the function in it (a libefa older
 * than the symbol version that added it), each function answers as
 * libefa does for a device that is not its own: EOPNOTSUPP, negative
 * where the function returns a negative errno.
 */
#define _GNU_SOURCE		/* dlvsym */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "real_libefa.h"

#ifndef REAL_LIBEFA
#error "REAL_LIBEFA must name the system's libefa (efa-compat/Makefile)"
#endif

static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static void *real_handle;

static void real_open(void)
{
	/* Never closed: the process may hold its objects until it exits. */
	real_handle = dlopen(REAL_LIBEFA, RTLD_NOW | RTLD_LOCAL);
}

/* @name at symbol version @version in the real libefa, or NULL. */
static void *real_sym(const char *name, const char *version)
{
	pthread_once(&real_once, real_open);
	if (!real_handle)
		return NULL;
	return dlvsym(real_handle, name, version);
}

typedef struct ibv_qp *create_driver_qp_fn(struct ibv_pd *,
					   struct ibv_qp_init_attr *, uint32_t);
typedef struct ibv_qp *create_qp_ex_fn(struct ibv_context *,
				       struct ibv_qp_init_attr_ex *,
				       struct efadv_qp_init_attr *, uint32_t);
typedef int query_device_fn(struct ibv_context *, struct efadv_device_attr *,
			    uint32_t);
typedef int query_ah_fn(struct ibv_ah *, struct efadv_ah_attr *, uint32_t);
typedef struct ibv_cq_ex *create_cq_fn(struct ibv_context *,
				       struct ibv_cq_init_attr_ex *,
				       struct efadv_cq_init_attr *, uint32_t);
typedef struct efadv_cq *cq_from_ibv_cq_ex_fn(struct ibv_cq_ex *);
typedef int query_mr_fn(struct ibv_mr *, struct efadv_mr_attr *, uint32_t);
typedef int query_qp_wqs_fn(struct ibv_qp *, struct efadv_wq_attr *,
			    struct efadv_wq_attr *, uint32_t);
typedef int query_cq_fn(struct ibv_cq *, struct efadv_cq_attr *, uint32_t);
typedef int get_max_sq_depth_fn(struct ibv_context *,
				struct efadv_sq_depth_attr *, uint32_t);
typedef int get_max_rq_depth_fn(struct ibv_context *,
				struct efadv_rq_depth_attr *, uint32_t);
typedef struct efadv_qp *qp_from_ibv_qp_ex_fn(struct ibv_qp_ex *);

struct ibv_qp *real_efadv_create_driver_qp(struct ibv_pd *pd,
					   struct ibv_qp_init_attr *attr,
					   uint32_t driver_qp_type)
{
	create_driver_qp_fn *fn = real_sym("efadv_create_driver_qp", "EFA_1.0");

	if (!fn) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return fn(pd, attr, driver_qp_type);
}

struct ibv_qp *real_efadv_create_qp_ex(struct ibv_context *ctx,
				       struct ibv_qp_init_attr_ex *attr_ex,
				       struct efadv_qp_init_attr *efa_attr,
				       uint32_t inlen)
{
	create_qp_ex_fn *fn = real_sym("efadv_create_qp_ex", "EFA_1.1");

	if (!fn) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return fn(ctx, attr_ex, efa_attr, inlen);
}

int real_efadv_query_device(struct ibv_context *ctx,
			    struct efadv_device_attr *attr, uint32_t inlen)
{
	query_device_fn *fn = real_sym("efadv_query_device", "EFA_1.1");

	return fn ? fn(ctx, attr, inlen) : EOPNOTSUPP;
}

int real_efadv_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr,
			uint32_t inlen)
{
	query_ah_fn *fn = real_sym("efadv_query_ah", "EFA_1.1");

	return fn ? fn(ah, attr, inlen) : EOPNOTSUPP;
}

struct ibv_cq_ex *real_efadv_create_cq(struct ibv_context *ctx,
				       struct ibv_cq_init_attr_ex *attr_ex,
				       struct efadv_cq_init_attr *efa_attr,
				       uint32_t inlen)
{
	create_cq_fn *fn = real_sym("efadv_create_cq", "EFA_1.2");

	if (!fn) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return fn(ctx, attr_ex, efa_attr, inlen);
}

struct efadv_cq *real_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *cq)
{
	cq_from_ibv_cq_ex_fn *fn = real_sym("efadv_cq_from_ibv_cq_ex",
					    "EFA_1.2");

	if (!fn) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return fn(cq);
}

int real_efadv_query_mr(struct ibv_mr *mr, struct efadv_mr_attr *attr,
			uint32_t inlen)
{
	query_mr_fn *fn = real_sym("efadv_query_mr", "EFA_1.3");

	return fn ? fn(mr, attr, inlen) : EOPNOTSUPP;
}

int real_efadv_query_qp_wqs(struct ibv_qp *qp, struct efadv_wq_attr *sq_attr,
			    struct efadv_wq_attr *rq_attr, uint32_t inlen)
{
	query_qp_wqs_fn *fn = real_sym("efadv_query_qp_wqs", "EFA_1.4");

	return fn ? fn(qp, sq_attr, rq_attr, inlen) : EOPNOTSUPP;
}

int real_efadv_query_cq(struct ibv_cq *cq, struct efadv_cq_attr *attr,
			uint32_t inlen)
{
	query_cq_fn *fn = real_sym("efadv_query_cq", "EFA_1.4");

	return fn ? fn(cq, attr, inlen) : EOPNOTSUPP;
}

int real_efadv_get_max_sq_depth(struct ibv_context *ctx,
				struct efadv_sq_depth_attr *attr,
				uint32_t inlen)
{
	get_max_sq_depth_fn *fn = real_sym("efadv_get_max_sq_depth", "EFA_1.5");

	return fn ? fn(ctx, attr, inlen) : -EOPNOTSUPP;
}

int real_efadv_get_max_rq_depth(struct ibv_context *ctx,
				struct efadv_rq_depth_attr *attr,
				uint32_t inlen)
{
	get_max_rq_depth_fn *fn = real_sym("efadv_get_max_rq_depth", "EFA_1.5");

	return fn ? fn(ctx, attr, inlen) : -EOPNOTSUPP;
}

struct efadv_qp *real_efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *qpx)
{
	qp_from_ibv_qp_ex_fn *fn = real_sym("efadv_qp_from_ibv_qp_ex",
					    "EFA_1.6");

	if (!fn) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return fn(qpx);
}
