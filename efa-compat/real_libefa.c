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
 * Without a real libefa, each function answers as libefa does for a
 * device that is not its own: EOPNOTSUPP.
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
