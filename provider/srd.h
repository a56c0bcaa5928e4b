/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: libsrd provider structures.
 */
#ifndef SRD_H
#define SRD_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/srd-abi.h>

#include "ibverbs_private.h"
#include "ring.h"
#include "srddv.h"

#define srd_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct srd_device {
	struct verbs_device vdev;	/* must be first */
};

#define SRD_QP_TABLE_BUCKETS	256	/* a power of two */

struct srd_qp;

struct srd_context {
	struct verbs_context ibvctx;	/* must be first */
	/* From srd_alloc_ucontext_resp. */
	uint32_t limits_profile;	/* enum srd_limits_profile */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_rdma_sge;
	uint32_t max_inline_data;
	uint32_t max_msg_sz;
	/* 0 unless the kernel set SRD_UCONTEXT_RESP_RDMA. */
	uint32_t device_caps;		/* enum srd_device_caps */
	uint32_t max_rdma_size;		/* bytes of one RDMA read or write */
	/* The live QPs by number, chained through table_next (qp_table.c). */
	pthread_spinlock_t qp_table_lock;
	struct srd_qp *qp_table[SRD_QP_TABLE_BUCKETS];
};

struct srd_pd {
	struct ibv_pd ibvpd;
	uint32_t pdn;
};

/*
 * A CQ.  The kernel produces CQEs into ring; poll_cq consumes them without
 * entering the kernel.  lock serialises consumers: ibv_poll_cq() holds it
 * for one call, the extended API from start_poll to end_poll.
 */
struct srd_cq {
	struct verbs_cq vcq;
	struct srd_ring ring;
	pthread_spinlock_t lock;
	uint32_t cqn;
	/* What srddv_cq_from_ibv_cq_ex() returns; set at creation. */
	struct srddv_cq dv_cq;
	/* Guarded by lock, valid from start_poll to end_poll. */
	const struct srd_cqe *cur_cqe;	/* the CQE read_*() report, or NULL */
	uint32_t poll_cons;		/* cons once the current CQE is done */
	/*
	 * Guarded by lock: a QP number polling last found live in the
	 * context's table, SRD_NO_QPN if none.  A QP leaves the table under
	 * its CQs' locks and clears it there (qp_table.c), so a poll need
	 * not take the table's lock for each CQE of the same QP.
	 */
	uint32_t live_qpn;
};

#define SRD_NO_QPN	UINT32_MAX	/* no QP has it: QP numbers are 24-bit */

/*
 * One work queue of a QP: the provider produces WQEs into ring, the kernel
 * consumes them.  lock serialises producers (posting threads); it is never
 * held across a system call.
 */
struct srd_wq {
	struct srd_ring ring;
	pthread_spinlock_t lock;
	uint32_t max_wr;		/* WQEs the ring may hold: the cap */
	uint32_t max_sge;
	uint32_t max_inline;		/* SQ only: bytes */
};

/*
 * A QP.  The fields after rq are set at creation and read-only after,
 * but for the ibv_wr_*() state, which sq.lock guards from wr_start until
 * wr_complete or wr_abort.
 */
struct srd_qp {
	struct verbs_qp vqp;
	struct srd_wq sq;
	struct srd_wq rq;
	uint32_t max_msg_sz;		/* bytes one WR may carry */
	uint32_t max_rdma_sge;		/* SGEs of an RDMA WR (SRD QPs) */
	uint32_t max_rdma_size;		/* bytes of an RDMA WR (SRD QPs) */
	bool sq_sig_all;
	struct srd_qp *table_next;	/* ctx->qp_table, under its lock */

	/* ibv_wr_*() state, guarded by sq.lock. */
	uint32_t wr_prod;		/* the next slot to fill */
	struct srd_send_wqe *wr_wqe;	/* the WQE setters apply to, or NULL */
	bool wr_has_addr;		/* wr_set_ud_addr() called on wr_wqe */
	int wr_err;			/* first error since wr_start */
};

struct srd_ah {
	struct ibv_ah ibvah;
	uint16_t ahn;			/* srd_create_ah_resp.ahn */
};

static inline struct srd_device *to_srd_dev(struct ibv_device *ibdev)
{
	return srd_container_of(verbs_get_device(ibdev), struct srd_device,
				vdev);
}

static inline struct srd_context *to_srd_ctx(struct ibv_context *ibctx)
{
	return srd_container_of(ibctx, struct srd_context, ibvctx.context);
}

static inline struct srd_pd *to_srd_pd(struct ibv_pd *ibpd)
{
	return srd_container_of(ibpd, struct srd_pd, ibvpd);
}

static inline struct srd_cq *to_srd_cq(struct ibv_cq *ibcq)
{
	return srd_container_of(ibcq, struct srd_cq, vcq.cq);
}

static inline struct srd_cq *to_srd_cq_ex(struct ibv_cq_ex *ibcqx)
{
	return srd_container_of(ibcqx, struct srd_cq, vcq.cq_ex);
}

static inline struct srd_cq *srddv_cq_to_srd_cq(struct srddv_cq *dv_cq)
{
	return srd_container_of(dv_cq, struct srd_cq, dv_cq);
}

static inline struct srd_qp *to_srd_qp(struct ibv_qp *ibqp)
{
	return srd_container_of(ibqp, struct srd_qp, vqp.qp);
}

static inline struct srd_qp *to_srd_qp_ex(struct ibv_qp_ex *ibqpx)
{
	return srd_container_of(ibqpx, struct srd_qp, vqp.qp_ex);
}

static inline struct srd_ah *to_srd_ah(struct ibv_ah *ibah)
{
	return srd_container_of(ibah, struct srd_ah, ibvah);
}

/* Whether @ibdev is bound to this libsrd (srd.c). */
bool srd_is_srd_device(struct ibv_device *ibdev);

/*
 * Commands carrying driver data: the core command (or response) first, the
 * srd-abi.h struct directly after it, with no padding in between.
 */
struct srd_get_context_cmd {
	struct ibv_get_context ibv_cmd;
	struct srd_alloc_ucontext_cmd drv;
};

struct srd_get_context_resp {
	struct ibvp_get_context_resp ibv_resp;
	struct srd_alloc_ucontext_resp drv;
};

struct srd_alloc_pd_cmd_resp {
	struct ibvp_alloc_pd_resp ibv_resp;
	struct srd_alloc_pd_resp drv;
};

/*
 * The whole command or response of a create, core part and driver part.
 * srd-abi.h owns the names srd_create_*_cmd and _resp, so these are
 * _ucmd and _uresp.
 */
struct srd_create_cq_ucmd {
	struct ibv_create_cq_ex ibv_cmd;
	struct srd_create_cq_cmd drv;
};

struct srd_create_cq_uresp {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct srd_create_cq_resp drv;
};

struct srd_create_qp_ucmd {
	struct ibv_create_qp ibv_cmd;
	struct srd_create_qp_cmd drv;
};

struct srd_create_qp_uresp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct srd_create_qp_resp drv;
};

struct srd_create_ah_uresp {
	struct ibvp_create_ah_resp ibv_resp;
	struct srd_create_ah_resp drv;
};

#define SRD_ASSERT_PACKED(type, core, drv_type)				\
	_Static_assert(sizeof(type) == sizeof(core) + sizeof(drv_type) &&	\
		       offsetof(type, drv) == sizeof(core),			\
		       #type " has padding")

SRD_ASSERT_PACKED(struct srd_get_context_cmd, struct ibv_get_context,
		  struct srd_alloc_ucontext_cmd);
SRD_ASSERT_PACKED(struct srd_get_context_resp, struct ibvp_get_context_resp,
		  struct srd_alloc_ucontext_resp);
SRD_ASSERT_PACKED(struct srd_alloc_pd_cmd_resp, struct ibvp_alloc_pd_resp,
		  struct srd_alloc_pd_resp);

SRD_ASSERT_PACKED(struct srd_create_cq_ucmd, struct ibv_create_cq_ex,
		  struct srd_create_cq_cmd);
SRD_ASSERT_PACKED(struct srd_create_cq_uresp,
		  struct ib_uverbs_ex_create_cq_resp, struct srd_create_cq_resp);
SRD_ASSERT_PACKED(struct srd_create_qp_ucmd, struct ibv_create_qp,
		  struct srd_create_qp_cmd);
SRD_ASSERT_PACKED(struct srd_create_qp_uresp,
		  struct ib_uverbs_create_qp_resp, struct srd_create_qp_resp);
SRD_ASSERT_PACKED(struct srd_create_ah_uresp, struct ibvp_create_ah_resp,
		  struct srd_create_ah_resp);

/*
 * Errors go to VERBS_LOG_FILE when VERBS_LOG_LEVEL >= 1 (libibverbs'
 * logging).  Preserves errno.
 */
#define srd_err(vctx, fmt, ...)						\
	do {								\
		int srd_saved_errno_ = errno;				\
		__verbs_log(vctx, VERBS_LOG_ERR, "%s: %s: " fmt,	\
			    (vctx)->context.device->name, __func__,	\
			    ##__VA_ARGS__);				\
		errno = srd_saved_errno_;				\
	} while (0)

#endif /* SRD_H */
