/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd's libefa.so.1: declarations of the efadv ABI it implements,
 * that of rdma-core 64's libefa (symbol versions EFA_1.0 to EFA_1.6).
 *
 * Written by us from a reading of rdma-core v64.0's
 * providers/efa/efadv.h, efa.c, verbs.c and man pages, with only what
 * this library exports and the constants its checks name.  It replaces
 * the system's <infiniband/efadv.h> inside efa-compat (never include
 * both): Debian 12's is rdma-core 44's, which lacks EFA_1.3 to EFA_1.6
 * and has the shorter structs, and a newer system's would change under
 * the build.  efadv.c asserts every size and offset here at build time.
 *
 * Structs grow at their end and callers say how much they know in
 * INLEN, so a caller built on an older efadv.h passes a smaller INLEN:
 * rdma-core 44's efadv_qp_init_attr was 16 bytes (reserved[4] where
 * flags, sl and reserved now are), its efadv_cq_init_attr 16 (up to
 * wc_flags), its efadv_cq 16 (up to wc_read_sgid), and its
 * efadv_device_attr had reserved[2] where inline_buf_size_ex now is.
 */
#ifndef SOFTSRD_EFADV_ABI_H
#define SOFTSRD_EFADV_ABI_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* --- EFA_1.1: efadv_query_device ----------------------------------------- */

enum {
	EFADV_DEVICE_ATTR_CAPS_RDMA_READ = 1 << 0,
	EFADV_DEVICE_ATTR_CAPS_RNR_RETRY = 1 << 1,
	EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID = 1 << 2,
	EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE = 1 << 3,
	EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV = 1 << 4,
	EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF = 1 << 5,
};

struct efadv_device_attr {
	uint64_t comp_mask;
	uint32_t max_sq_wr;
	uint32_t max_rq_wr;
	uint16_t max_sq_sge;
	uint16_t max_rq_sge;
	uint16_t inline_buf_size;
	uint16_t inline_buf_size_ex;	/* reserved[2] up to rdma-core 61 */
	uint32_t device_caps;
	uint32_t max_rdma_size;
};

int efadv_query_device(struct ibv_context *ibvctx,
		       struct efadv_device_attr *attr, uint32_t inlen);

/* --- EFA_1.1: efadv_query_ah ---------------------------------------------- */

struct efadv_ah_attr {
	uint64_t comp_mask;
	uint16_t ahn;
	uint8_t reserved[6];
};

int efadv_query_ah(struct ibv_ah *ibvah, struct efadv_ah_attr *attr,
		   uint32_t inlen);

/* --- EFA_1.0, EFA_1.1: SRD QPs -------------------------------------------- */

enum {
	EFADV_QP_DRIVER_TYPE_SRD = 0,
};

enum {
	EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV = 1 << 0,
	EFADV_QP_FLAGS_INLINE_WRITE = 1 << 1,
};

enum {
	EFADV_WR_EX_WITH_PROCESSING_HINTS = 1 << 0,
};

struct efadv_qp_init_attr {
	uint64_t comp_mask;
	uint32_t driver_qp_type;
	uint16_t flags;			/* EFADV_QP_FLAGS_* */
	uint8_t sl;			/* service level, 0 the default */
	uint8_t reserved;
	uint64_t wr_flags;		/* EFADV_WR_EX_* */
};

struct ibv_qp *efadv_create_driver_qp(struct ibv_pd *ibvpd,
				      struct ibv_qp_init_attr *attr,
				      uint32_t driver_qp_type);
struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ibvctx,
				  struct ibv_qp_init_attr_ex *attr_ex,
				  struct efadv_qp_init_attr *efa_attr,
				  uint32_t inlen);

/* --- EFA_1.2: CQs ---------------------------------------------------------- */

enum {
	EFADV_WC_EX_WITH_SGID = 1 << 0,
	EFADV_WC_EX_WITH_IS_UNSOLICITED = 1 << 1,
};

enum {
	EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF = 1 << 0,
};

struct efadv_cq_init_attr {
	uint64_t comp_mask;
	uint64_t wc_flags;		/* EFADV_WC_EX_* */
	uint64_t flags;			/* EFADV_CQ_INIT_FLAGS_* */
	struct {
		uint8_t *buffer;
		uint64_t length;
		uint64_t offset;
		int32_t fd;
		uint8_t reserved[4];
	} ext_mem_dmabuf;
};

/*
 * A caller's inline efadv_wc_read_sgid() calls through wc_read_sgid,
 * and efadv_wc_is_unsolicited() through wc_is_unsolicited, valid only
 * on a CQ made with EFADV_WC_EX_WITH_IS_UNSOLICITED.
 */
struct efadv_cq {
	uint64_t comp_mask;
	int (*wc_read_sgid)(struct efadv_cq *efadv_cq, union ibv_gid *sgid);
	bool (*wc_is_unsolicited)(struct efadv_cq *efadv_cq);
};

struct ibv_cq_ex *efadv_create_cq(struct ibv_context *ibvctx,
				  struct ibv_cq_init_attr_ex *attr_ex,
				  struct efadv_cq_init_attr *efa_attr,
				  uint32_t inlen);
struct efadv_cq *efadv_cq_from_ibv_cq_ex(struct ibv_cq_ex *ibvcqx);

static inline int efadv_wc_read_sgid(struct efadv_cq *efadv_cq,
				     union ibv_gid *sgid)
{
	return efadv_cq->wc_read_sgid(efadv_cq, sgid);
}

static inline bool efadv_wc_is_unsolicited(struct efadv_cq *efadv_cq)
{
	return efadv_cq->wc_is_unsolicited(efadv_cq);
}

/* --- EFA_1.3: efadv_query_mr ---------------------------------------------- */

enum {
	EFADV_MR_ATTR_VALIDITY_RECV_IC_ID = 1 << 0,
	EFADV_MR_ATTR_VALIDITY_RDMA_READ_IC_ID = 1 << 1,
	EFADV_MR_ATTR_VALIDITY_RDMA_RECV_IC_ID = 1 << 2,
};

struct efadv_mr_attr {
	uint64_t comp_mask;
	uint16_t ic_id_validity;	/* EFADV_MR_ATTR_VALIDITY_* */
	uint16_t recv_ic_id;
	uint16_t rdma_read_ic_id;
	uint16_t rdma_recv_ic_id;
};

int efadv_query_mr(struct ibv_mr *ibvmr, struct efadv_mr_attr *attr,
		   uint32_t inlen);

/* --- EFA_1.4: the hardware queues, for a caller's own data path ------------ */

struct efadv_wq_attr {
	uint64_t comp_mask;
	uint8_t *buffer;
	uint32_t entry_size;
	uint32_t num_entries;
	uint32_t *doorbell;
	uint32_t max_batch;
	uint8_t reserved[4];
};

int efadv_query_qp_wqs(struct ibv_qp *ibvqp, struct efadv_wq_attr *sq_attr,
		       struct efadv_wq_attr *rq_attr, uint32_t inlen);

struct efadv_cq_attr {
	uint64_t comp_mask;
	uint8_t *buffer;
	uint32_t entry_size;
	uint32_t num_entries;
	uint32_t *doorbell;
};

int efadv_query_cq(struct ibv_cq *ibvcq, struct efadv_cq_attr *attr,
		   uint32_t inlen);

/* --- EFA_1.5: queue depths; a depth, or a negative errno -------------------- */

enum {
	EFADV_SQ_DEPTH_ATTR_INLINE_WRITE = 1 << 0,
};

struct efadv_sq_depth_attr {
	uint64_t comp_mask;
	uint32_t flags;			/* EFADV_SQ_DEPTH_ATTR_* */
	uint32_t max_send_sge;
	uint32_t max_rdma_sge;
	uint32_t max_inline_data;
};

int efadv_get_max_sq_depth(struct ibv_context *ibvctx,
			   struct efadv_sq_depth_attr *attr, uint32_t inlen);

struct efadv_rq_depth_attr {
	uint64_t comp_mask;
	uint32_t max_recv_sge;
};

int efadv_get_max_rq_depth(struct ibv_context *ibvctx,
			   struct efadv_rq_depth_attr *attr, uint32_t inlen);

/* --- EFA_1.6: work request setters beyond ibv_wr_*() ------------------------ */

enum {
	EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE = 1 << 0,
};

/* A caller's inline efadv_wr_set_processing_hints() calls through it. */
struct efadv_qp {
	uint64_t comp_mask;
	void (*wr_set_processing_hints)(struct efadv_qp *efadv_qp,
					uint32_t hints);
};

struct efadv_qp *efadv_qp_from_ibv_qp_ex(struct ibv_qp_ex *ibvqpx);

static inline void efadv_wr_set_processing_hints(struct efadv_qp *efadv_qp,
						 uint32_t hints)
{
	efadv_qp->wr_set_processing_hints(efadv_qp, hints);
}

#endif /* SOFTSRD_EFADV_ABI_H */
