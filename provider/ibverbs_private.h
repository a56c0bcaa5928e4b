/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: declarations of rdma-core's private provider ABI used by libsrd.
 *
 * These describe rdma-core's private provider ABI: the symbols that
 * libibverbs.so.1 exports under the symbol version IBVERBS_PRIVATE_<PABI>
 * and that plugins named lib<name>-rdmav<PABI>.so rely on, for the
 * rdma-core release SRD_RC (its major number) of private ABI SRD_PABI,
 * both from provider/detect-abi.sh.  rdma-core does not install its own
 * header for this ABI (libibverbs/driver.h, kern-abi.h), so this file
 * declares, from a reading of rdma-core's tags v44.0 to v64.0 and master
 * as of 65.0, only what libsrd needs.
 *
 * Struct layouts must match rdma-core exactly, and the ABI number does
 * not say the layout: v36 and v62 added ops to verbs_context_ops without
 * changing it.  So the release decides (provider/abi/verbs_context_ops.txt
 * lists every op with the release that added it; the host test
 * test_provider_ops_layout_per_release checks this file against it for
 * every release below).  The other structs declared here are the same
 * from v36.0 to 65.0.  Supported: ABI 34 as in rdma-core 36..56, 57
 * (57..58), 59 (59..63), 64 (64) and 65 (65).  v34.x and v35.x also call
 * themselves IBVERBS_PRIVATE_34 but have a shorter verbs_context_ops;
 * provider/detect-abi.sh refuses them.  What changed for libsrd beyond the
 * ops: ibv_cmd_get_context() takes an fd array from 57 on, and
 * ibv_cmd_create_cq_ex() provider attributes from 59 on (srd_cmd_*()
 * below pass NULL).
 * provider/tests/abi_layout.c prints every offset and size declared here,
 * compiled once against this file and once against rdma-core's own
 * headers; scripts/host-tests.sh compares the two when SRD_RDMA_CORE names
 * a configured rdma-core tree.
 *
 * Truncated structs (marked so) are only ever allocated by libibverbs and
 * are reached through pointers: members past the last one declared are
 * left out on purpose.  Structs libsrd allocates or hands to libibverbs
 * are declared in full.
 */
#ifndef SRD_IBVERBS_PRIVATE_H
#define SRD_IBVERBS_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#if !((SRD_PABI == 34 && SRD_RC >= 36 && SRD_RC <= 56) || \
      (SRD_PABI == 57 && SRD_RC >= 57 && SRD_RC <= 58) || \
      (SRD_PABI == 59 && SRD_RC >= 59 && SRD_RC <= 63) || \
      (SRD_PABI == 64 && SRD_RC == 64) || (SRD_PABI == 65 && SRD_RC == 65))
#error "ibverbs_private.h describes rdma-core's provider ABI 34 (rdma-core 36..56), 57 (57..58), 59 (59..63), 64 and 65 only"
#endif

/* ccan's struct list_node, as embedded by libibverbs. */
struct ibvp_list_node {
	struct ibvp_list_node *next;
	struct ibvp_list_node *prev;
};

/*
 * One entry of a provider's match table.  libibverbs walks the table of
 * every provider for every device whose kernel driver id it knows (rxe,
 * mlx5, ...), up to an entry of kind 0, so a provider needs at least
 * that terminating entry even when it matches by match_device alone.
 */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;			/* 0: the end of the table */
};

/* An rdma device found in sysfs.  Truncated: ends at ibdev_path. */
struct verbs_sysfs_dev {
	struct ibvp_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	/*
	 * Not declared: modalias, node_guid, driver_id, node_type,
	 * ibdev_idx, num_ports, abi_ver, time_created.
	 */
};

struct verbs_device;

/* Provided by libsrd and registered with verbs_register_driver_34(). */
struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* Allocated by the provider (alloc_device), filled in by libibverbs. */
struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct ibvp_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

static inline struct verbs_device *verbs_get_device(struct ibv_device *dev)
{
	return (struct verbs_device *)((char *)dev -
				       offsetof(struct verbs_device, device));
}

/*
 * Verbs objects the provider allocates, embedding the public object
 * libibverbs hands to the application.  libibverbs reaches the fields past
 * the public object (ibv_dereg_mr reads mr_type and access; ibv_qp_to_qp_ex
 * tests comp_mask), so these are declared in full.
 */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;		/* rdma-core's enum ibv_mr_type; set by
				 * ibv_cmd_reg_mr */
	int access;		/* set by ibv_cmd_reg_mr */
};

struct verbs_xrcd;

/*
 * verbs_qp.comp_mask.  VERBS_QP_EX: the provider filled in the ibv_qp_ex
 * (its wr_* functions), so ibv_qp_to_qp_ex() returns it.
 */
enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;	/* VERBS_QP_* */
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0 &&
	       offsetof(struct ibv_cq_ex, context) ==
	       offsetof(struct ibv_cq, context) &&
	       offsetof(struct ibv_cq_ex, comp_events_completed) ==
	       offsetof(struct ibv_cq, comp_events_completed),
	       "ibv_qp_ex must start with ibv_qp, ibv_cq_ex with ibv_cq's fields");

/*
 * Every op a provider can supply, in rdma-core's (sorted) order.
 * libibverbs reads the whole table, so every member is declared; those
 * libsrd does not implement yet are untyped placeholders of the same size
 * and are left NULL, which keeps libibverbs' EOPNOTSUPP default
 * (libibverbs/dummy_ops.c).  Give a placeholder its real type when
 * implementing it.
 */
typedef void (*verbs_op_unused)(void);

struct verbs_mr;

struct verbs_context_ops {
	verbs_op_unused advise_mr;
#if SRD_RC >= 64
	verbs_op_unused alloc_buf;
#endif
	verbs_op_unused alloc_dm;
#if SRD_RC >= 59
	verbs_op_unused alloc_dmah;
#endif
	verbs_op_unused alloc_mw, alloc_null_mr, alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	verbs_op_unused alloc_td, async_event, attach_counters_point_flow,
		attach_mcast, bind_mw, close_xrcd, cq_event;
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
#if SRD_RC >= 65
	verbs_op_unused create_comp_cntr;
#endif
	verbs_op_unused create_counters;
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	verbs_op_unused create_flow, create_flow_action_esp;
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	verbs_op_unused create_rwq_ind_table, create_srq, create_srq_ex,
		create_wq;
#if SRD_RC >= 59
	verbs_op_unused dealloc_dmah;
#endif
	verbs_op_unused dealloc_mw;
	int (*dealloc_pd)(struct ibv_pd *pd);
	verbs_op_unused dealloc_td;
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
#if SRD_RC >= 65
	verbs_op_unused destroy_comp_cntr;
#endif
	verbs_op_unused destroy_counters;
	int (*destroy_cq)(struct ibv_cq *cq);
	verbs_op_unused destroy_flow, destroy_flow_action;
	int (*destroy_qp)(struct ibv_qp *qp);
	verbs_op_unused destroy_rwq_ind_table, destroy_srq, destroy_wq,
		detach_mcast;
#if SRD_RC >= 62
	verbs_op_unused dm_export_dmabuf_fd;
#endif
#if SRD_RC >= 64
	verbs_op_unused free_buf;
#endif
	void (*free_context)(struct ibv_context *context);
	verbs_op_unused free_dm, get_srq_num, import_dm, import_mr, import_pd;
#if SRD_RC >= 65
	verbs_op_unused inc_comp_cntr, inc_err_comp_cntr;
#endif
	verbs_op_unused modify_cq, modify_flow_action_esp;
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	verbs_op_unused modify_qp_rate_limit, modify_srq, modify_wq, open_qp,
		open_xrcd;
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	verbs_op_unused post_srq_ops, post_srq_recv;
#if SRD_RC >= 65
	verbs_op_unused qp_attach_comp_cntr, query_comp_cntr_caps;
#endif
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	verbs_op_unused query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if SRD_RC >= 62
	verbs_op_unused query_port_speed;
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	verbs_op_unused query_qp_data_in_order, query_rt_values, query_srq;
#if SRD_RC >= 65
	verbs_op_unused read_comp_cntr;
#endif
	verbs_op_unused read_counters;
#if SRD_RC >= 65
	verbs_op_unused read_err_comp_cntr;
#endif
	verbs_op_unused reg_dm_mr, reg_dmabuf_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
#if SRD_RC >= 59
	verbs_op_unused reg_mr_ex;
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	verbs_op_unused rereg_mr, resize_cq;
#if SRD_RC >= 65
	verbs_op_unused set_comp_cntr;
#endif
	verbs_op_unused set_ece;
#if SRD_RC >= 65
	verbs_op_unused set_err_comp_cntr;
#endif
	verbs_op_unused unimport_dm, unimport_mr, unimport_pd;
};

_Static_assert(sizeof(struct verbs_context_ops) ==
	       (76 + 3 * (SRD_RC >= 59) + 2 * (SRD_RC >= 62) + 2 * (SRD_RC >= 64) +
		10 * (SRD_RC >= 65)) * sizeof(void *),
	       "verbs_context_ops must have the release's number of ops");

/*
 * Legacy write() commands and their responses as libibverbs lays them out:
 * the uverbs header, then the kernel's request struct; a provider appends
 * its driver data directly after either.  The kernel structs end in a
 * flexible driver_data[], which cannot be followed by driver data in a C
 * struct, so these spell out the same fields.  The asserts below tie them
 * to <rdma/ib_user_verbs.h>.
 */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u8 port_num;
	__u8 reserved[7];
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

/* struct ib_uverbs_get_context_resp */
struct ibvp_get_context_resp {
	__u32 async_fd;
	__u32 num_comp_vectors;
} __attribute__((aligned(8)));

/* struct ib_uverbs_alloc_pd_resp */
struct ibvp_alloc_pd_resp {
	__u32 pd_handle;
};

/* struct ib_uverbs_create_ah_resp */
struct ibvp_create_ah_resp {
	__u32 ah_handle;
};

/*
 * The extended write() commands carry a second header.  The kernel
 * structs of these have no flexible array, so they are embedded whole.
 */
struct ibvp_ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

struct ibv_create_cq_ex {
	struct ibvp_ex_hdr hdr;
	struct ib_uverbs_ex_create_cq core;
};

struct ibv_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 user_handle;
	__u32 pd_handle;
	__u32 send_cq_handle;
	__u32 recv_cq_handle;
	__u32 srq_handle;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u8 sq_sig_all;
	__u8 qp_type;
	__u8 is_srq;
	__u8 reserved;
};

/* ib_uverbs_modify_qp ends in a zero-length array: embedded whole. */
struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 attr_mask;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__aligned_u64 start;
	__aligned_u64 length;
	__aligned_u64 hca_va;
	__u32 pd_handle;
	__u32 access_flags;
};

/*
 * POST_SEND, which libsrd writes itself (with no work requests) as the send
 * queue's doorbell.
 */
struct ibv_post_send {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 wr_count;
	__u32 sge_count;
	__u32 wqe_size;
};

#define IBVP_SAME_LAYOUT(ours, core, hdr_size)				\
	_Static_assert(sizeof(struct ours) ==				\
			       (hdr_size) + sizeof(struct core) &&	\
		       _Alignof(struct ours) == _Alignof(struct core),	\
		       #ours " must match " #core)

IBVP_SAME_LAYOUT(ibv_get_context, ib_uverbs_get_context,
		 sizeof(struct ib_uverbs_cmd_hdr));
IBVP_SAME_LAYOUT(ibv_query_port, ib_uverbs_query_port,
		 sizeof(struct ib_uverbs_cmd_hdr));
IBVP_SAME_LAYOUT(ibv_alloc_pd, ib_uverbs_alloc_pd,
		 sizeof(struct ib_uverbs_cmd_hdr));
IBVP_SAME_LAYOUT(ibvp_get_context_resp, ib_uverbs_get_context_resp, 0);
IBVP_SAME_LAYOUT(ibvp_alloc_pd_resp, ib_uverbs_alloc_pd_resp, 0);
IBVP_SAME_LAYOUT(ibvp_create_ah_resp, ib_uverbs_create_ah_resp, 0);
IBVP_SAME_LAYOUT(ibv_create_cq_ex, ib_uverbs_ex_create_cq,
		 sizeof(struct ibvp_ex_hdr));
IBVP_SAME_LAYOUT(ibv_create_qp, ib_uverbs_create_qp,
		 sizeof(struct ib_uverbs_cmd_hdr));
IBVP_SAME_LAYOUT(ibv_modify_qp, ib_uverbs_modify_qp,
		 sizeof(struct ib_uverbs_cmd_hdr));
IBVP_SAME_LAYOUT(ibv_query_qp, ib_uverbs_query_qp,
		 sizeof(struct ib_uverbs_cmd_hdr));
IBVP_SAME_LAYOUT(ibv_reg_mr, ib_uverbs_reg_mr,
		 sizeof(struct ib_uverbs_cmd_hdr));
IBVP_SAME_LAYOUT(ibv_post_send, ib_uverbs_post_send,
		 sizeof(struct ib_uverbs_cmd_hdr));
_Static_assert(sizeof(struct ibvp_ex_hdr) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       sizeof(struct ib_uverbs_ex_cmd_hdr),
	       "ibvp_ex_hdr has padding");
_Static_assert(offsetof(struct ibv_create_qp, sq_sig_all) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       offsetof(struct ib_uverbs_create_qp, sq_sig_all),
	       "ibv_create_qp.sq_sig_all misplaced");
_Static_assert(offsetof(struct ibv_post_send, wqe_size) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       offsetof(struct ib_uverbs_post_send, wqe_size),
	       "ibv_post_send.wqe_size misplaced");
_Static_assert(offsetof(struct ibv_reg_mr, access_flags) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       offsetof(struct ib_uverbs_reg_mr, access_flags),
	       "ibv_reg_mr.access_flags misplaced");
_Static_assert(offsetof(struct ibv_query_port, port_num) ==
	       sizeof(struct ib_uverbs_cmd_hdr) +
	       offsetof(struct ib_uverbs_query_port, port_num),
	       "ibv_query_port.port_num misplaced");

/* Logging levels understood by __verbs_log (VERBS_LOG_LEVEL). */
enum {
	VERBS_LOG_ERR = 1,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

/* Exported as IBVERBS_PRIVATE_<SRD_PABI>. */
#define SRD_CAT2(a, b)	a##b
#define SRD_CAT(a, b)	SRD_CAT2(a, b)
#define srd_verbs_register_driver SRD_CAT(verbs_register_driver_, SRD_PABI)
void srd_verbs_register_driver(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* rdma-core types resp as the kernel struct its ibvp_ twin matches. */
#if SRD_PABI >= 57
struct ibv_fd_arr;
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibv_fd_arr *fd_arr,
			struct ibvp_get_context_resp *resp, size_t resp_size);
#define srd_cmd_get_context(ctx, cmd, cmd_size, resp, resp_size) \
	ibv_cmd_get_context(ctx, cmd, cmd_size, NULL, resp, resp_size)
#else
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibvp_get_context_resp *resp, size_t resp_size);
#define srd_cmd_get_context	ibv_cmd_get_context
#endif
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ibvp_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
#if SRD_PABI >= 59
struct verbs_create_cq_prov_attr;
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_create_cq_prov_attr *prov_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
#define srd_cmd_create_cq_ex(ctx, attr, cq, cmd, cmd_size, resp, resp_size, flags) \
	ibv_cmd_create_cq_ex(ctx, attr, NULL, cq, cmd, cmd_size, resp, \
			     resp_size, flags)
#else
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
#define srd_cmd_create_cq_ex	ibv_cmd_create_cq_ex
#endif
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ibvp_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

/* Exported as IBVERBS_1.0 but not declared in any installed header. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

#endif /* SRD_IBVERBS_PRIVATE_H */
