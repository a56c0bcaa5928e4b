/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: libsrd verbs, wired into srd_ctx_ops in srd.c: device, port, PD,
 * MR and AH verbs (verbs.c), CQs (cq.c) and QPs (qp.c).
 */
#ifndef SRD_VERBS_H
#define SRD_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct verbs_mr;

int srd_query_device_ex(struct ibv_context *ibvctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int srd_query_port(struct ibv_context *ibvctx, uint8_t port,
		   struct ibv_port_attr *port_attr);
struct ibv_pd *srd_alloc_pd(struct ibv_context *ibvctx);
int srd_dealloc_pd(struct ibv_pd *ibvpd);
struct ibv_mr *srd_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			  uint64_t hca_va, int access);
int srd_dereg_mr(struct verbs_mr *vmr);
struct ibv_ah *srd_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr);
int srd_destroy_ah(struct ibv_ah *ibah);

/* cq.c */
struct srd_cq;
struct srd_cq *srd_cq_create(struct ibv_context *ibvctx,
			     struct ibv_cq_init_attr_ex *attr);
struct ibv_cq *srd_create_cq(struct ibv_context *ibvctx, int cqe,
			     struct ibv_comp_channel *channel, int comp_vector);
struct ibv_cq_ex *srd_create_cq_ex(struct ibv_context *ibvctx,
				   struct ibv_cq_init_attr_ex *attr);
int srd_destroy_cq(struct ibv_cq *ibcq);
int srd_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);

/* qp.c */
struct ibv_qp *srd_create_qp(struct ibv_pd *ibpd,
			     struct ibv_qp_init_attr *attr);
struct ibv_qp *srd_create_qp_ex(struct ibv_context *ibvctx,
				struct ibv_qp_init_attr_ex *attr);
/* srddv_create_qp_ex()'s: with SRD_QP_FLAG_* flags. */
struct ibv_qp *srd_create_qp_flags(struct ibv_context *ibvctx,
				   struct ibv_qp_init_attr_ex *attr,
				   uint32_t flags);
int srd_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask);
int srd_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		 int attr_mask, struct ibv_qp_init_attr *init_attr);
int srd_destroy_qp(struct ibv_qp *ibqp);
int srd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr);
int srd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr);

/* qp_table.c */
struct srd_context;
struct srd_qp;
int srd_qp_table_init(struct srd_context *ctx);
void srd_qp_table_destroy(struct srd_context *ctx);
void srd_qp_table_add(struct srd_context *ctx, struct srd_qp *qp);
void srd_qp_table_del(struct srd_context *ctx, struct srd_qp *qp);
bool srd_qp_table_has(struct srd_context *ctx, uint32_t qpn);

#endif /* SRD_VERBS_H */
