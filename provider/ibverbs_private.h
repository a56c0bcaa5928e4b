/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: declarations of rdma-core's private provider ABI used by libsrd.
 *
 * These describe rdma-core v44.0's private provider ABI: the symbols that
 * libibverbs.so.1 exports under the symbol version IBVERBS_PRIVATE_34 and
 * that plugins named lib<name>-rdmav34.so rely on.  rdma-core does not
 * install its own header for this ABI (libibverbs/driver.h, kern-abi.h), so
 * this file declares, from a reading of rdma-core v44.0, only what libsrd
 * needs.
 *
 * Struct layouts must match rdma-core exactly.  The layouts below are
 * identical in every rdma-core release from v36.0 to v56.x (all
 * IBVERBS_PRIVATE_34).  v34.x and v35.x also call themselves
 * IBVERBS_PRIVATE_34 but have a shorter verbs_context_ops, so libsrd must
 * not be built against them; provider/detect-abi.sh refuses to.
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

#if SRD_PABI != 34
#error "ibverbs_private.h describes rdma-core's provider ABI 34 only"
#endif

/* ccan's struct list_node, as embedded by libibverbs. */
struct ibvp_list_node {
	struct ibvp_list_node *next;
	struct ibvp_list_node *prev;
};

struct verbs_match_ent;

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
 * Every op a provider can supply, in rdma-core's (sorted) order.
 * libibverbs reads the whole table, so every member is declared; those
 * libsrd does not implement yet are untyped placeholders of the same size
 * and are left NULL, which keeps libibverbs' EOPNOTSUPP default
 * (libibverbs/dummy_ops.c).  Give a placeholder its real type when
 * implementing it.
 */
typedef void (*verbs_op_unused)(void);

struct verbs_context_ops {
	verbs_op_unused advise_mr, alloc_dm, alloc_mw, alloc_null_mr,
		alloc_parent_domain;
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	verbs_op_unused alloc_td, async_event, attach_counters_point_flow,
		attach_mcast, bind_mw, close_xrcd, cq_event, create_ah,
		create_counters, create_cq, create_cq_ex, create_flow,
		create_flow_action_esp, create_qp, create_qp_ex,
		create_rwq_ind_table, create_srq, create_srq_ex, create_wq,
		dealloc_mw;
	int (*dealloc_pd)(struct ibv_pd *pd);
	verbs_op_unused dealloc_td, dereg_mr, destroy_ah, destroy_counters,
		destroy_cq, destroy_flow, destroy_flow_action, destroy_qp,
		destroy_rwq_ind_table, destroy_srq, destroy_wq, detach_mcast;
	void (*free_context)(struct ibv_context *context);
	verbs_op_unused free_dm, get_srq_num, import_dm, import_mr, import_pd,
		modify_cq, modify_flow_action_esp, modify_qp,
		modify_qp_rate_limit, modify_srq, modify_wq, open_qp,
		open_xrcd, poll_cq, post_recv, post_send, post_srq_ops,
		post_srq_recv;
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	verbs_op_unused query_ece;
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	verbs_op_unused query_qp, query_qp_data_in_order, query_rt_values,
		query_srq, read_counters, reg_dm_mr, reg_dmabuf_mr, reg_mr,
		req_notify_cq, rereg_mr, resize_cq, set_ece, unimport_dm,
		unimport_mr, unimport_pd;
};

_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *),
	       "verbs_context_ops must have rdma-core v36..v56's 76 ops");

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

/* Exported as IBVERBS_PRIVATE_34. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);
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
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibvp_get_context_resp *resp, size_t resp_size);
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

/* Exported as IBVERBS_1.0 but not declared in any installed header. */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);

#endif /* SRD_IBVERBS_PRIVATE_H */
