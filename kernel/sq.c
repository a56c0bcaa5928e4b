// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the send queue.  The provider fills SQ slots and rings a
 * doorbell (a POST_SEND with no work requests); the doorbell consumes the
 * ring here, in the caller's process context.  Each WQE is checked
 * (wqe.c); a UD send goes out at once (ud.c) and completes here; an SRD
 * send goes to the transport (requester.c), which completes it later.
 */

#include "srd.h"

/*
 * May the doorbell start one more SRD send?  Not while the QP has as many
 * in flight as its SQ has slots: then it stops, and the next completion
 * restarts it (srd_requester_done()).  Under sq_mutex.
 */
static bool srd_sq_has_room(struct srd_qp *qp)
{
	u32 limit = qp->sq.ring->num_entries;

	lockdep_assert_held(&qp->sq_mutex);

	if (atomic_read(&qp->sq_inflight) < limit)
		return true;
	WRITE_ONCE(qp->sq_blocked, true);
	/* Pairs with srd_requester_done(): it sees sq_blocked, or we see room. */
	smp_mb();
	if (atomic_read(&qp->sq_inflight) < limit) {
		WRITE_ONCE(qp->sq_blocked, false);
		return true;
	}
	return false;
}

/* The SQ failed: the QP goes to ERR and both queues are flushed. */
static void srd_sq_fail(struct srd_qp *qp)
{
	srd_count_one(qp->sdev, SRD_CNT_WQE_ERRORS);
	spin_lock_bh(&qp->rq_lock);
	srd_qp_set_error(qp);
	spin_unlock_bh(&qp->rq_lock);
	srd_qp_flush_sq(qp);
}

/*
 * Consume the SQ up to the producer index read on entry.  Under sq_mutex,
 * with the QP in RTS.  An error completion moves the QP to ERR and flushes
 * the rest.
 */
static void srd_sq_process(struct srd_qp *qp)
{
	struct srd_ring *ring = qp->sq.ring;
	struct srd_send_wqe *wqe = qp->sq.wqe;
	struct srd_send_result res;
	struct srd_wqe_rule rule;
	u32 prod, len;

	lockdep_assert_held(&qp->sq_mutex);

	/* Pairs with the provider's release store: slots before index. */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (prod - qp->sq.cons > ring->num_entries) {
		ibdev_dbg(qp->ibqp.device, "QP %u: SQ indices are inconsistent\n",
			  qp->ibqp.qp_num);
		srd_sq_fail(qp);
		return;
	}

	while (qp->sq.cons != prod) {
		if (qp->is_srd && !srd_sq_has_room(qp))
			return;
		/* Work on a copy: userspace may rewrite the slot meanwhile. */
		memcpy(wqe, srd_ring_slot(ring, qp->sq.cons), ring->stride);
		res = (struct srd_send_result){ .status = IB_WC_SUCCESS };
		if (!srd_wqe_check(qp, wqe, &rule, &len, &res)) {
			/* Completes in error below. */
		} else if (!qp->is_srd) {
			srd_ud_send(qp, wqe, rule, len, &res);
		} else if (srd_requester_post(qp, wqe, rule, len, &res) ==
			   -EAGAIN) {
			/* The peer is full: try again shortly. */
			WRITE_ONCE(qp->sq_blocked, true);
			mod_delayed_work(srd_wq, &qp->sq_work, 1);
			return;
		}
		/* After sq_inflight counts the send: see srd_sq_publish(). */
		smp_store_release(&qp->sq.cons, qp->sq.cons + 1);
		srd_sq_publish(qp);

		/* An SRD send in flight completes later, from the transport. */
		if (!qp->is_srd || res.status != IB_WC_SUCCESS)
			srd_count_sq_wr(qp->sdev, wqe->opcode, res.status,
					res.byte_len);
		if (res.status != IB_WC_SUCCESS ||
		    (!qp->is_srd &&
		     ((wqe->flags & SRD_WQE_SIGNALED) || qp->sq_sig_all))) {
			srd_complete(qp->scq, qp, wqe->wr_id, rule.cqe,
				     res.status, res.vendor_err, res.byte_len);
		}
		if (res.status != IB_WC_SUCCESS && !res.keep_qp) {
			srd_sq_fail(qp);
			return;
		}
		cond_resched();
	}
}

/* Resume an SRD doorbell that stopped for room (srd_sq_has_room()). */
void srd_sq_work(struct work_struct *work)
{
	struct srd_qp *qp = container_of(to_delayed_work(work), struct srd_qp,
					 sq_work);

	mutex_lock(&qp->sq_mutex);
	if (!qp->sq_dead && READ_ONCE(qp->sq_blocked)) {
		WRITE_ONCE(qp->sq_blocked, false);
		if (READ_ONCE(qp->state) == IB_QPS_RTS)
			srd_sq_process(qp);
	}
	mutex_unlock(&qp->sq_mutex);
}

int srd_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	struct srd_qp *qp = to_sqp(ibqp);
	int err = 0;

	/* Only the provider's doorbell, which carries no work request. */
	if (wr) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}

	mutex_lock(&qp->sq_mutex);
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTS:
		srd_sq_process(qp);
		break;
	case IB_QPS_ERR:
		/* Flush what was posted since, receives included. */
		srd_qp_flush_sq(qp);
		srd_qp_flush_rq(qp);
		break;
	default:
		err = -EINVAL;
		break;
	}
	mutex_unlock(&qp->sq_mutex);
	return err;
}
