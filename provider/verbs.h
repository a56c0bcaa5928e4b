/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: libsrd verbs, wired into srd_ctx_ops in srd.c.
 */
#ifndef SRD_VERBS_H
#define SRD_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

int srd_query_device_ex(struct ibv_context *ibvctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int srd_query_port(struct ibv_context *ibvctx, uint8_t port,
		   struct ibv_port_attr *port_attr);
struct ibv_pd *srd_alloc_pd(struct ibv_context *ibvctx);
int srd_dealloc_pd(struct ibv_pd *ibvpd);

#endif /* SRD_VERBS_H */
