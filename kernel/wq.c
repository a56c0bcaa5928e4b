// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: a QP's work queues as the data path uses them (qp.c creates,
 * modifies and destroys the QP): a QP found by number and held, the
 * posted receive taken (UD and SRD alike), the SQ slots and the QP's
 * state published to the provider, its error state and the flush of
 * either queue.  Nothing here calls the transport, so that the files of
 * the data path that use it (ud.c, requester.c, responder.c, sq.c) are
 * not in a cycle with qp.c.
 */

#include "srd.h"

/* Publish the QP state where the provider reads it.  Under rq_lock. */
void srd_qp_set_state(struct srd_qp *qp, enum ib_qp_state state)
{
	lockdep_assert_held(&qp->rq_lock);
	WRITE_ONCE(qp->state, state);
	WRITE_ONCE(qp->sq.ring->ctl->state, state);
	WRITE_ONCE(qp->rq.ring->ctl->state, state);
	/*
	 * Pairs with the provider's full barrier after it publishes an RQ
	 * prod: either a flush that follows sees the new receive, or the
	 * provider sees ERR and rings the doorbell to have it flushed.
	 */
	smp_mb();
}

/* Find a QP by number and take a reference.  Any context. */
struct srd_qp *srd_qp_get(struct srd_dev *sdev, u32 qpn)
{
	struct srd_qp *qp;
	unsigned long flags;

	xa_lock_irqsave(&sdev->qps, flags);
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&sdev->qps, flags);
	return qp;
}

void srd_qp_put(struct srd_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/*
 * Complete every posted work request of @wq with IB_WC_WR_FLUSH_ERR.  The
 * caller holds the queue's lock.  A broken ring (more posted than it has
 * slots) is flushed as if empty: there is no telling what is in it.
 */
static void srd_wq_flush(struct srd_qp *qp, struct srd_wq *wq,
			 struct srd_cq *cq, u8 opcode)
{
	struct srd_ring *ring = wq->ring;
	u64 wr_id;
	u32 prod;

	/* Pairs with the provider's release store: slots before index. */
	prod = smp_load_acquire(&ring->ctl->prod);

	if (prod - wq->cons > ring->num_entries) {
		srd_count_one(qp->sdev, SRD_CNT_WQE_ERRORS);
		wq->cons = prod;
	}
	while (wq->cons != prod) {
		/* wr_id is the first field of both slot kinds. */
		wr_id = READ_ONCE(*(u64 *)srd_ring_slot(ring, wq->cons));
		srd_complete(cq, qp, wr_id, opcode, IB_WC_WR_FLUSH_ERR,
			     SRD_VERR_FLUSH, 0);
		wq->cons++;
	}
	/* Slots read before they are handed back. */
	smp_store_release(&ring->ctl->cons, wq->cons);
}

/*
 * Copy the next posted receive of @qp into qp->rq.wqe (userspace may
 * rewrite the slot) without taking it: srd_rq_consume() takes it.  Under
 * rq_lock.  0; -ENOENT: none is posted; -EIO: the ring's indices say more
 * is posted than it has slots, a broken ring, and the QP is in ERR now,
 * as a broken SQ puts it.
 */
int srd_rq_peek(struct srd_qp *qp)
{
	struct srd_ring *ring = qp->rq.ring;
	u32 prod;

	lockdep_assert_held(&qp->rq_lock);

	/* Pairs with the provider's release store: slots before index. */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (prod == qp->rq.cons)
		return -ENOENT;
	if (prod - qp->rq.cons > ring->num_entries) {
		srd_count_one(qp->sdev, SRD_CNT_WQE_ERRORS);
		srd_qp_set_error(qp);
		return -EIO;
	}
	memcpy(qp->rq.wqe, srd_ring_slot(ring, qp->rq.cons), ring->stride);
	return 0;
}

/* Take the receive srd_rq_peek() copied: its slot is handed back. */
void srd_rq_consume(struct srd_qp *qp)
{
	lockdep_assert_held(&qp->rq_lock);

	qp->rq.cons++;
	/* The slot was copied before it is handed back. */
	smp_store_release(&qp->rq.ring->ctl->cons, qp->rq.cons);
}

/*
 * Take the next posted receive of @qp: a copy of its slot in qp->rq.wqe,
 * the slot handed back.  Under rq_lock, on UD and SRD alike; returns as
 * srd_rq_peek().
 */
int srd_rq_claim(struct srd_qp *qp)
{
	int err = srd_rq_peek(qp);

	if (!err)
		srd_rq_consume(qp);
	return err;
}

/* Under rq_lock. */
static void __srd_qp_flush_rq(struct srd_qp *qp)
{
	lockdep_assert_held(&qp->rq_lock);
	srd_wq_flush(qp, &qp->rq, qp->rcq, SRD_CQE_RECV);
}

void srd_qp_flush_rq(struct srd_qp *qp)
{
	spin_lock_bh(&qp->rq_lock);
	__srd_qp_flush_rq(qp);
	spin_unlock_bh(&qp->rq_lock);
}

/*
 * Tell the provider which SQ slots it may reuse.  A UD slot is free once
 * the doorbell processed it.  An SRD slot counts as free only once its
 * send completed, so that at most max_send_wr sends are posted and not
 * completed, as verbs promise: the published index is the consumer
 * index less the sends in flight.  (The slot itself was copied long
 * before.)  Any context; the index only moves forward.
 */
void srd_sq_publish(struct srd_qp *qp)
{
	unsigned long flags;
	u32 done;

	spin_lock_irqsave(&qp->sq_pub_lock, flags);
	/*
	 * Pairs with the release in srd_sq_process(): a send counted in
	 * sq.cons is counted in sq_inflight.
	 */
	done = smp_load_acquire(&qp->sq.cons);
	if (qp->is_srd)
		done -= atomic_read(&qp->sq_inflight);
	if ((s32)(done - qp->sq_pub) > 0) {
		qp->sq_pub = done;
		/* The slots were copied before they are handed back. */
		smp_store_release(&qp->sq.ring->ctl->cons, done);
	}
	spin_unlock_irqrestore(&qp->sq_pub_lock, flags);
}

/* Under sq_mutex. */
void srd_qp_flush_sq(struct srd_qp *qp)
{
	unsigned long flags;

	lockdep_assert_held(&qp->sq_mutex);

	srd_wq_flush(qp, &qp->sq, qp->scq, SRD_CQE_SEND);
	/* The flush published cons = prod; keep srd_sq_publish() in step. */
	spin_lock_irqsave(&qp->sq_pub_lock, flags);
	qp->sq_pub = qp->sq.cons;
	spin_unlock_irqrestore(&qp->sq_pub_lock, flags);
}

/*
 * A work request completed in error: the QP goes to ERR and its posted
 * receives are flushed.  Called with rq_lock held.  Posted sends are
 * flushed by whoever holds sq_mutex next (the send path itself, the next
 * doorbell, or modify_qp).
 */
void srd_qp_set_error(struct srd_qp *qp)
{
	lockdep_assert_held(&qp->rq_lock);
	srd_qp_set_state(qp, IB_QPS_ERR);
	__srd_qp_flush_rq(qp);
}
