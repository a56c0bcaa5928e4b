/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd's libefa.so.1: the system's real libefa, for devices that are
 * not srd devices (real_libefa.c).  Each function calls its namesake
 * there, or fails as libefa fails for a device that is not its own when
 * the system's libefa lacks it (rdma-core 44's has EFA_1.0 to EFA_1.2).
 */
#ifndef REAL_LIBEFA_H
#define REAL_LIBEFA_H

#include <stdint.h>

#include "efadv_abi.h"

struct ibv_qp *real_efadv_create_driver_qp(struct ibv_pd *pd,
					   struct ibv_qp_init_attr *attr,
					   uint32_t driver_qp_type);
struct ibv_qp *real_efadv_create_qp_ex(struct ibv_context *ctx,
				       struct ibv_qp_init_attr_ex *attr_ex,
				       struct efadv_qp_init_attr *efa_attr,
				       uint32_t inlen);
int real_efadv_query_device(struct ibv_context *ctx,
			    struct efadv_device_attr *attr, uint32_t inlen);
int real_efadv_query_ah(struct ibv_ah *ah, struct efadv_ah_attr *attr,
			uint32_t inlen);
struct ibv_cq_ex *real_efadv_create_cq(struct ibv_context *ctx,
				       struct ibv_cq_init_attr_ex *attr_ex,
				       struct efadv_cq_init_attr *efa_attr,
				       uint32_t inlen);
struct efadv_cq *real_efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *cq);
int real_efadv_query_mr(struct ibv_mr *mr, struct efadv_mr_attr *attr,
			uint32_t inlen);
int real_efadv_query_qp_wqs(struct ibv_qp *qp, struct efadv_wq_attr *sq_attr,
			    struct efadv_wq_attr *rq_attr, uint32_t inlen);
int real_efadv_query_cq(struct ibv_cq *cq, struct efadv_cq_attr *attr,
			uint32_t inlen);
int real_efadv_get_max_sq_depth(struct ibv_context *ctx,
				struct efadv_sq_depth_attr *attr,
				uint32_t inlen);
int real_efadv_get_max_rq_depth(struct ibv_context *ctx,
				struct efadv_rq_depth_attr *attr,
				uint32_t inlen);
struct efadv_qp *real_efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *qpx);

#endif /* REAL_LIBEFA_H */
