// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: incoming SRD messages.  The engine's receive upcalls
 * (srd_receiver_begin, _data, _done, _abort): a SEND claims a receive work
 * request and becomes a struct srd_recv_msg the engine writes into; an
 * RDMA WRITE or READ goes to the responder (responder.c).  Both kinds of
 * handle start with their enum srd_msg_kind.
 *
 * Lifetime: a receive message holds a QP reference and its receive's MRs
 * (segs.c) until the engine completes or aborts it; it is used under its
 * peer's lock.
 */

#include <linux/slab.h>
#include <linux/workqueue.h>

#include "srd.h"
#include "message.h"

static void srd_receiver_complete(struct srd_qp *qp, u64 wr_id, u8 status,
				  u32 verr)
{
	if (READ_ONCE(qp->sq_dead))
		return;
	struct srd_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = SRD_CQE_RECV,
		.vendor_err = verr,
		.qp_num = qp->ibqp.qp_num,
	};

	srd_cq_post(qp->rcq, &cqe);
}

/*
 * Claim a receive of QP @qp for a message of @info->msg_len bytes.  Under
 * the peer's lock; takes rq_lock.
 */
enum srd_rx_verdict srd_receiver_claim(struct srd_qp *qp,
				       const struct srd_rx_msg_info *info,
				       struct srd_recv_msg **msgp)
{
	struct srd_ring *ring = qp->rq.ring;
	struct srd_recv_wqe *wqe = qp->rq.wqe;
	const struct srd_sge *sge = (const void *)(wqe + 1);
	enum srd_rx_verdict verdict = SRD_RX_ACCEPT;
	struct srd_recv_msg *msg;
	u32 prod, verr, i, nseg;
	u64 room = 0;

	spin_lock_bh(&qp->rq_lock);
	if (!srd_qp_can_receive(qp->state)) {
		verdict = SRD_RX_QP_ERROR;
		goto out;
	}
	/* Pairs with the provider's release store: slots before index. */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (prod == qp->rq.cons) {
		/* No receive posted: the sender retries (RNR). */
		verdict = SRD_RX_RNR;
		goto out;
	}
	if (prod - qp->rq.cons > ring->num_entries) {
		srd_count_one(qp->sdev, SRD_CNT_WQE_ERRORS);
		srd_qp_set_error(qp);
		verdict = SRD_RX_QP_ERROR;
		goto out;
	}
	memcpy(wqe, srd_ring_slot(ring, qp->rq.cons), ring->stride);
	qp->rq.cons++;
	/* The slot was copied before it is handed back. */
	smp_store_release(&ring->ctl->cons, qp->rq.cons);

	if (wqe->num_sge > qp->rq.max_sge) {
		verr = SRD_VERR_BAD_WQE;
		goto err_local;
	}
	for (i = 0; i < wqe->num_sge; i++)
		room += sge[i].length;
	if (room < info->msg_len) {
		/* The sender's message is too big: its fault, not ours. */
		srd_receiver_complete(qp, wqe->wr_id, IB_WC_LOC_LEN_ERR,
				      SRD_VERR_RECV_TOO_SHORT);
		verdict = SRD_RX_BAD_LENGTH;
		goto out;
	}
	msg = kmalloc(struct_size(msg, seg, wqe->num_sge),
		      GFP_ATOMIC | __GFP_NOWARN);
	if (!msg) {
		srd_receiver_complete(qp, wqe->wr_id, IB_WC_GENERAL_ERR,
				      SRD_VERR_NOMEM);
		verdict = SRD_RX_QP_ERROR;
		goto out;
	}
	verr = srd_segs_get(qp, sge, wqe->num_sge, IB_ACCESS_LOCAL_WRITE,
			    info->msg_len, msg->seg, &nseg);
	if (verr) {
		kfree(msg);
		goto err_local;
	}
	msg->kind = SRD_MSG_SEND;
	msg->nseg = nseg;
	msg->wr_id = wqe->wr_id;
	msg->opcode = SRD_CQE_RECV;
	*msgp = msg;
	goto out;

err_local:
	/* A bad receive work request: the QP fails, as on UD. */
	srd_receiver_complete(qp, wqe->wr_id, IB_WC_LOC_PROT_ERR, verr);
	srd_count_one(qp->sdev, SRD_CNT_WQE_ERRORS);
	srd_qp_set_error(qp);
	verdict = SRD_RX_QP_ERROR;
out:
	spin_unlock_bh(&qp->rq_lock);
	return verdict;
}

enum srd_rx_verdict srd_receiver_begin(struct srd_dev *sdev,
				       const union ib_gid *remote,
				       const struct srd_rx_msg_info *info,
				       void **handle)
{
	struct srd_recv_msg *msg = NULL;
	enum srd_rx_verdict verdict;
	struct srd_qp *qp;

	qp = srd_qp_get(sdev, info->dst_qpn);
	if (!qp)
		return SRD_RX_BAD_QPN;
	if (!qp->is_srd) {
		verdict = SRD_RX_BAD_QPN;
		goto out_put;
	}
	if (info->qkey != READ_ONCE(qp->qkey)) {
		verdict = SRD_RX_BAD_QKEY;
		goto out_put;
	}
	if (info->kind != SRD_MSG_SEND)
		return srd_responder_begin(qp, remote, info, handle);
	if (info->msg_len > srd_max_srd_msg_bytes(sdev)) {
		verdict = SRD_RX_BAD_LENGTH;
		goto out_put;
	}
	verdict = srd_receiver_claim(qp, info, &msg);
	if (verdict != SRD_RX_ACCEPT)
		goto out_put;

	/* The message keeps the QP reference. */
	msg->qp = qp;
	msg->len = info->msg_len;
	msg->src_qpn = info->src_qpn;
	msg->imm_data = info->imm_data;
	msg->has_imm = info->has_imm;
	msg->solicited = info->solicited;
	msg->sgid = *remote;
	*handle = msg;
	return SRD_RX_ACCEPT;

out_put:
	srd_qp_put(qp);
	return verdict;
}

int srd_receiver_data(void *handle, u32 offset, const u8 *data, u32 len)
{
	struct srd_recv_msg *msg = handle;

	if (msg->kind != SRD_MSG_SEND)
		return srd_responder_write(handle, offset, data, len);
	if (offset > msg->len || len > msg->len - offset)
		return 0;
	return srd_segs_copy(msg->seg, msg->nseg, offset, (u8 *)data, len,
			     true);
}

static void srd_recv_msg_free(struct srd_recv_msg *msg)
{
	struct srd_qp *qp = msg->qp;

	srd_segs_put(msg->seg, msg->nseg);
	kfree(msg);
	srd_qp_put(qp);
}

void srd_receiver_done(void *handle)
{
	struct srd_recv_msg *msg = handle;
	struct srd_qp *qp = msg->qp;
	struct srd_dev *sdev = qp->sdev;

	if (msg->kind != SRD_MSG_SEND) {
		struct srd_rdma_target *t = handle;

		if (t->imm)
			srd_receiver_done(t->imm);
		srd_responder_free(t);
		return;
	}
	struct srd_cqe cqe = {
		.wr_id = msg->wr_id,
		.opcode = msg->opcode,
		.qp_num = qp->ibqp.qp_num,
	};

	/* A QP that failed meanwhile flushes, whatever arrived. */
	if (srd_qp_can_receive(READ_ONCE(qp->state))) {
		cqe.status = IB_WC_SUCCESS;
		cqe.byte_len = msg->len;
		cqe.src_qp = msg->src_qpn;
		if (msg->has_imm) {
			cqe.flags |= SRD_CQE_WITH_IMM;
			cqe.imm_data = cpu_to_be32(msg->imm_data);
		}
		if (msg->solicited)
			cqe.flags |= SRD_CQE_SOLICITED;
		cqe.slid = srd_ah_find_ahn(sdev, &msg->sgid);
		memcpy(cqe.sgid, msg->sgid.raw, sizeof(cqe.sgid));
		srd_count_one(sdev, SRD_CNT_RX_PACKETS);
		srd_count(sdev, SRD_CNT_RX_BYTES, msg->len);
	} else {
		cqe.status = IB_WC_WR_FLUSH_ERR;
		cqe.vendor_err = SRD_VERR_FLUSH;
	}
	if (!READ_ONCE(qp->sq_dead))
		srd_cq_post(qp->rcq, &cqe);
	srd_recv_msg_free(msg);
}

/*
 * The message will never complete: its sender gave up or restarted, or
 * our QP is going away.  The receive completes in error; what was
 * already written to its buffers is undefined.
 */
void srd_receiver_abort(void *handle)
{
	struct srd_recv_msg *msg = handle;
	struct srd_qp *qp = msg->qp;

	if (msg->kind != SRD_MSG_SEND) {
		struct srd_rdma_target *t = handle;

		if (t->imm)
			srd_receiver_abort(t->imm);
		srd_responder_free(t);
		return;
	}

	if (srd_qp_can_receive(READ_ONCE(qp->state)))
		srd_receiver_complete(qp, msg->wr_id, IB_WC_REM_ABORT_ERR,
				      SRD_VERR_REMOTE_ABORT);
	else
		srd_receiver_complete(qp, msg->wr_id, IB_WC_WR_FLUSH_ERR,
				      SRD_VERR_FLUSH);
	srd_recv_msg_free(msg);
}
