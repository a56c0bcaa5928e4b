// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: completion queues — a ring the kernel fills and userspace
 * polls without a system call, and completion events.
 */

#include <linux/log2.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "srd.h"

int srd_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata)
{
	struct srd_dev *sdev = to_sdev(ibcq->device);
	struct srd_create_cq_resp resp = {};
	struct srd_create_cq_cmd cmd = {};
	struct srd_ucontext *uctx;
	struct srd_cq *cq = to_scq(ibcq);
	int err;

	/* Kernel consumers have no ring to poll: userspace only. */
	if (!udata)
		return -EOPNOTSUPP;
	uctx = rdma_udata_to_drv_context(udata, struct srd_ucontext, ibuc);

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SRD_MAX_CQE)
		return -EINVAL;
	if (udata->inlen) {
		err = ib_copy_from_udata(&cmd, udata,
					 min(udata->inlen, sizeof(cmd)));
		if (err)
			return err;
		if (cmd.comp_mask || cmd.reserved ||
		    (udata->inlen > sizeof(cmd) &&
		     !ib_is_udata_cleared(udata, sizeof(cmd),
					  udata->inlen - sizeof(cmd))))
			return -EOPNOTSUPP;
	}
	if (atomic64_inc_return(&sdev->counters[SRD_CNT_CQS]) > SRD_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	cq->sdev = sdev;
	cq->cqn = atomic_inc_return(&sdev->next_cqn);
	spin_lock_init(&cq->lock);
	cq->ring = srd_ring_create(&uctx->ibuc,
				   roundup_pow_of_two(attr->cqe),
				   sizeof(struct srd_cqe));
	if (IS_ERR(cq->ring)) {
		err = PTR_ERR(cq->ring);
		goto err_count;
	}
	ibcq->cqe = cq->ring->num_entries;

	resp.cqn = cq->cqn;
	srd_ring_info(cq->ring, &resp.ring);
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_ring;
	return 0;

err_ring:
	srd_ring_destroy(cq->ring);
err_count:
	atomic64_dec(&sdev->counters[SRD_CNT_CQS]);
	return err;
}

int srd_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct srd_cq *cq = to_scq(ibcq);

	/* ib_core destroys a CQ only when no QP uses it any more. */
	srd_ring_destroy(cq->ring);
	atomic64_dec(&cq->sdev->counters[SRD_CNT_CQS]);
	return 0;
}

/* Is there a completion userspace has not consumed?  Under cq->lock. */
static bool srd_cq_has_entries(struct srd_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	return READ_ONCE(cq->ring->ctl->cons) != cq->prod;
}

int srd_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct srd_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* A pending "next completion" request covers solicited ones too. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && srd_cq_has_entries(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

static void srd_cq_overflow_event(struct srd_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Add a completion, in the conventions of the device's profile.  Any
 * context.  When the ring is full the completion is
 * dropped and the CQ is in error from then on: the entries already in the
 * ring stay as they were, and the owner gets IB_EVENT_CQ_ERR once.
 */
static void srd_cq_post(struct srd_cq *cq, const struct srd_cqe *cqe)
{
	struct srd_ring *ring = cq->ring;
	bool notify = false, overflow = false;
	struct srd_cqe c = *cqe;
	unsigned long flags;
	u32 cons;

	srd_profile_cqe(&cq->sdev->limits, &c);

	spin_lock_irqsave(&cq->lock, flags);
	if (unlikely(cq->overflowed)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		srd_count_one(cq->sdev, SRD_CNT_CQ_OVERFLOWS);
		return;
	}
	/* Pairs with the release store of cons after a slot is read. */
	cons = smp_load_acquire(&ring->ctl->cons);
	if (unlikely(cq->prod - cons >= ring->num_entries)) {
		cq->overflowed = true;
		WRITE_ONCE(ring->ctl->state,
			   READ_ONCE(ring->ctl->state) | SRD_CQ_FLAG_OVERFLOW);
		overflow = true;
	} else {
		memcpy(srd_ring_slot(ring, cq->prod), &c, sizeof(c));
		/* Publish the slot before the index. */
		smp_store_release(&ring->ctl->prod, ++cq->prod);
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED &&
		     (c.flags & SRD_CQE_SOLICITED))) {
			cq->notify = 0;
			notify = true;
		}
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflow) {
		srd_count_one(cq->sdev, SRD_CNT_CQ_OVERFLOWS);
		ibdev_warn_ratelimited(cq->ibcq.device,
				       "CQ %u overflowed: completion lost\n",
				       cq->cqn);
		srd_cq_overflow_event(cq);
	}
	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/*
 * Every completion is built here.  srd_complete(): work request @wr_id of
 * @qp is over, on @cq, with @status and vendor error @verr.  Any context.
 */
void srd_complete(struct srd_cq *cq, struct srd_qp *qp, u64 wr_id,
		  u8 opcode, u8 status, u32 verr, u32 byte_len)
{
	struct srd_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.vendor_err = verr,
		.byte_len = byte_len,
		.qp_num = qp->ibqp.qp_num,
	};

	srd_cq_post(cq, &cqe);
}

/* srd_complete() of a completion with CQE @flags and no bytes. */
void srd_complete_flags(struct srd_cq *cq, struct srd_qp *qp, u64 wr_id,
			u8 opcode, u8 status, u32 verr, u16 flags)
{
	struct srd_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.flags = flags,
		.vendor_err = verr,
		.qp_num = qp->ibqp.qp_num,
	};

	srd_cq_post(cq, &cqe);
}

/*
 * A receive of @qp succeeded: @byte_len bytes (with the GRH on UD) from
 * the sender @from.
 */
void srd_complete_recv(struct srd_qp *qp, u64 wr_id, u8 opcode,
		       u32 byte_len, const struct srd_recv_from *from)
{
	struct srd_cqe cqe = {
		.wr_id = wr_id,
		.status = IB_WC_SUCCESS,
		.opcode = opcode,
		.flags = from->flags,
		.byte_len = byte_len,
		.imm_data = from->imm_data,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = from->src_qpn,
		.slid = srd_ah_find_ahn(qp->sdev, qp->ibqp.pd, from->sgid),
	};

	memcpy(cqe.sgid, from->sgid->raw, sizeof(cqe.sgid));
	srd_cq_post(qp->rcq, &cqe);
}
