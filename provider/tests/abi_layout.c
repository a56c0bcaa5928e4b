// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Does ibverbs_private.h lay out rdma-core's private provider ABI as
 * rdma-core does?  This file is compiled twice and the two outputs must
 * be identical:
 *
 *   -DSRD_LAYOUT_REAL with -I<rdma-core>/build/include -I<rdma-core>:
 *	rdma-core's own libibverbs/driver.h and kern-abi.h (a v44.0 tree,
 *	configured with cmake so that config.h and kernel-abi/ exist);
 *   without it, with -I provider: libsrd's ibverbs_private.h and srd.h.
 *
 * It prints the offset and size of every member libsrd declares, the sizes
 * of the commands it sends, and where their driver data goes.
 * scripts/host-tests.sh runs it when SRD_RDMA_CORE names such a tree.
 */
#include <stddef.h>
#include <stdio.h>

#ifdef SRD_LAYOUT_REAL
#include <config.h>
#include <infiniband/driver.h>
#include <rdma/srd-abi.h>

#define _STRUCT_srd_alloc_ucontext_cmd struct {}
#define _STRUCT_srd_alloc_ucontext_resp struct {}
#define _STRUCT_srd_alloc_pd_resp struct {}
#define _STRUCT_srd_create_cq_cmd struct {}
#define _STRUCT_srd_create_cq_resp struct {}
#define _STRUCT_srd_create_qp_cmd struct {}
#define _STRUCT_srd_create_qp_resp struct {}
#define _STRUCT_srd_create_ah_resp struct {}
#define _STRUCT_empty struct {}
DECLARE_DRV_CMD(x_get_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		srd_alloc_ucontext_cmd, srd_alloc_ucontext_resp);
DECLARE_DRV_CMD(x_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD, empty,
		srd_alloc_pd_resp);
DECLARE_DRV_CMD(x_create_cq, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		srd_create_cq_cmd, srd_create_cq_resp);
DECLARE_DRV_CMD(x_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		srd_create_qp_cmd, srd_create_qp_resp);
DECLARE_DRV_CMD(x_create_ah, IB_USER_VERBS_CMD_CREATE_AH, empty,
		srd_create_ah_resp);

#define GET_CONTEXT_CMD struct x_get_context
#define GET_CONTEXT_RESP struct x_get_context_resp
#define ALLOC_PD_RESP struct x_alloc_pd_resp
#define CREATE_CQ_CMD struct x_create_cq
#define CREATE_CQ_RESP struct x_create_cq_resp
#define CREATE_QP_CMD struct x_create_qp
#define CREATE_QP_RESP struct x_create_qp_resp
#define CREATE_AH_RESP struct x_create_ah_resp
#define DRV drv_payload
#define CORE(s, f) offsetof(struct s, f)
#else
#include "srd.h"

#define GET_CONTEXT_CMD struct srd_get_context_cmd
#define GET_CONTEXT_RESP struct srd_get_context_resp
#define ALLOC_PD_RESP struct srd_alloc_pd_cmd_resp
#define CREATE_CQ_CMD struct srd_create_cq_ucmd
#define CREATE_CQ_RESP struct srd_create_cq_uresp
#define CREATE_QP_CMD struct srd_create_qp_ucmd
#define CREATE_QP_RESP struct srd_create_qp_uresp
#define CREATE_AH_RESP struct srd_create_ah_uresp
#define DRV drv
/* The commands whose kernel struct ibverbs_private.h embeds whole. */
#define CORE(s, f) offsetof(struct s, core.f)
#endif

#define MEMBER(s, m)							\
	printf("%s.%s at %zu size %zu\n", #s, #m, offsetof(struct s, m),	\
	       sizeof(((struct s *)0)->m))
#define SIZE(s)								\
	printf("sizeof(%s) %zu align %zu\n", #s, sizeof(s), _Alignof(s))
#define VALUE(e) printf("%s = %zu\n", #e, (size_t)(e))
#define OP(m) MEMBER(verbs_context_ops, m);

int main(void)
{
	OP(advise_mr) OP(alloc_dm) OP(alloc_mw) OP(alloc_null_mr)
	OP(alloc_parent_domain) OP(alloc_pd) OP(alloc_td) OP(async_event)
	OP(attach_counters_point_flow) OP(attach_mcast) OP(bind_mw)
	OP(close_xrcd) OP(cq_event) OP(create_ah) OP(create_counters)
	OP(create_cq) OP(create_cq_ex) OP(create_flow)
	OP(create_flow_action_esp) OP(create_qp) OP(create_qp_ex)
	OP(create_rwq_ind_table) OP(create_srq) OP(create_srq_ex)
	OP(create_wq) OP(dealloc_mw) OP(dealloc_pd) OP(dealloc_td)
	OP(dereg_mr) OP(destroy_ah) OP(destroy_counters) OP(destroy_cq)
	OP(destroy_flow) OP(destroy_flow_action) OP(destroy_qp)
	OP(destroy_rwq_ind_table) OP(destroy_srq) OP(destroy_wq)
	OP(detach_mcast) OP(free_context) OP(free_dm) OP(get_srq_num)
	OP(import_dm) OP(import_mr) OP(import_pd) OP(modify_cq)
	OP(modify_flow_action_esp) OP(modify_qp) OP(modify_qp_rate_limit)
	OP(modify_srq) OP(modify_wq) OP(open_qp) OP(open_xrcd) OP(poll_cq)
	OP(post_recv) OP(post_send) OP(post_srq_ops) OP(post_srq_recv)
	OP(query_device_ex) OP(query_ece) OP(query_port) OP(query_qp)
	OP(query_qp_data_in_order) OP(query_rt_values) OP(query_srq)
	OP(read_counters) OP(reg_dm_mr) OP(reg_dmabuf_mr) OP(reg_mr)
	OP(req_notify_cq) OP(rereg_mr) OP(resize_cq) OP(set_ece)
	OP(unimport_dm) OP(unimport_mr) OP(unimport_pd)
	SIZE(struct verbs_context_ops);

	MEMBER(verbs_match_ent, driver_data);
	MEMBER(verbs_match_ent, u.driver_id);
	MEMBER(verbs_match_ent, vendor);
	MEMBER(verbs_match_ent, device);
	MEMBER(verbs_match_ent, kind);
	SIZE(struct verbs_match_ent);

	MEMBER(verbs_device_ops, name);
	MEMBER(verbs_device_ops, match_min_abi_version);
	MEMBER(verbs_device_ops, match_max_abi_version);
	MEMBER(verbs_device_ops, match_table);
	MEMBER(verbs_device_ops, static_providers);
	MEMBER(verbs_device_ops, match_device);
	MEMBER(verbs_device_ops, alloc_context);
	MEMBER(verbs_device_ops, import_context);
	MEMBER(verbs_device_ops, alloc_device);
	MEMBER(verbs_device_ops, uninit_device);
	SIZE(struct verbs_device_ops);

	MEMBER(verbs_device, device);
	MEMBER(verbs_device, ops);
	MEMBER(verbs_device, refcount);
	MEMBER(verbs_device, entry);
	MEMBER(verbs_device, sysfs);
	MEMBER(verbs_device, core_support);
	SIZE(struct verbs_device);

	MEMBER(verbs_sysfs_dev, entry);
	MEMBER(verbs_sysfs_dev, provider_data);
	MEMBER(verbs_sysfs_dev, match);
	MEMBER(verbs_sysfs_dev, flags);
	MEMBER(verbs_sysfs_dev, sysfs_name);
	MEMBER(verbs_sysfs_dev, sysfs_cdev);
	MEMBER(verbs_sysfs_dev, ibdev_name);
	MEMBER(verbs_sysfs_dev, ibdev_path);

	MEMBER(verbs_mr, ibv_mr);
	MEMBER(verbs_mr, mr_type);
	MEMBER(verbs_mr, access);
	SIZE(struct verbs_mr);
	MEMBER(verbs_qp, qp);
	MEMBER(verbs_qp, qp_ex);
	MEMBER(verbs_qp, comp_mask);
	MEMBER(verbs_qp, xrcd);
	SIZE(struct verbs_qp);
	VALUE(VERBS_QP_XRCD);
	VALUE(VERBS_QP_EX);
	MEMBER(verbs_cq, cq);
	MEMBER(verbs_cq, cq_ex);
	SIZE(struct verbs_cq);

	/* Commands and responses. */
	SIZE(struct ibv_get_context);
	SIZE(struct ibv_alloc_pd);
	SIZE(struct ibv_query_port);
	MEMBER(ibv_query_port, port_num);
	SIZE(struct ibv_create_cq_ex);
	VALUE(CORE(ibv_create_cq_ex, user_handle));
	VALUE(CORE(ibv_create_cq_ex, cqe));
	VALUE(CORE(ibv_create_cq_ex, comp_channel));
	VALUE(CORE(ibv_create_cq_ex, flags));
	VALUE(CORE(ibv_create_cq_ex, reserved));
	SIZE(struct ibv_create_qp);
	MEMBER(ibv_create_qp, response);
	MEMBER(ibv_create_qp, user_handle);
	MEMBER(ibv_create_qp, pd_handle);
	MEMBER(ibv_create_qp, send_cq_handle);
	MEMBER(ibv_create_qp, recv_cq_handle);
	MEMBER(ibv_create_qp, srq_handle);
	MEMBER(ibv_create_qp, max_send_wr);
	MEMBER(ibv_create_qp, max_recv_wr);
	MEMBER(ibv_create_qp, max_send_sge);
	MEMBER(ibv_create_qp, max_recv_sge);
	MEMBER(ibv_create_qp, max_inline_data);
	MEMBER(ibv_create_qp, sq_sig_all);
	MEMBER(ibv_create_qp, qp_type);
	MEMBER(ibv_create_qp, is_srq);
	MEMBER(ibv_create_qp, reserved);
	SIZE(struct ibv_modify_qp);
	VALUE(CORE(ibv_modify_qp, dest));
	VALUE(CORE(ibv_modify_qp, alt_dest));
	VALUE(CORE(ibv_modify_qp, qp_handle));
	VALUE(CORE(ibv_modify_qp, alt_timeout));
	SIZE(struct ibv_query_qp);
	MEMBER(ibv_query_qp, response);
	MEMBER(ibv_query_qp, qp_handle);
	MEMBER(ibv_query_qp, attr_mask);
	SIZE(struct ibv_reg_mr);
	MEMBER(ibv_reg_mr, response);
	MEMBER(ibv_reg_mr, start);
	MEMBER(ibv_reg_mr, length);
	MEMBER(ibv_reg_mr, hca_va);
	MEMBER(ibv_reg_mr, pd_handle);
	MEMBER(ibv_reg_mr, access_flags);
	SIZE(struct ibv_post_send);
	MEMBER(ibv_post_send, response);
	MEMBER(ibv_post_send, qp_handle);
	MEMBER(ibv_post_send, wr_count);
	MEMBER(ibv_post_send, sge_count);
	MEMBER(ibv_post_send, wqe_size);

	/* Where the driver data of each command and response goes. */
	SIZE(GET_CONTEXT_CMD);
	VALUE(offsetof(GET_CONTEXT_CMD, DRV));
	SIZE(GET_CONTEXT_RESP);
	VALUE(offsetof(GET_CONTEXT_RESP, DRV));
	SIZE(ALLOC_PD_RESP);
	VALUE(offsetof(ALLOC_PD_RESP, DRV));
	SIZE(CREATE_CQ_CMD);
	VALUE(offsetof(CREATE_CQ_CMD, DRV));
	SIZE(CREATE_CQ_RESP);
	VALUE(offsetof(CREATE_CQ_RESP, DRV));
	SIZE(CREATE_QP_CMD);
	VALUE(offsetof(CREATE_QP_CMD, DRV));
	SIZE(CREATE_QP_RESP);
	VALUE(offsetof(CREATE_QP_RESP, DRV));
	SIZE(CREATE_AH_RESP);
	VALUE(offsetof(CREATE_AH_RESP, DRV));

	return 0;
}
