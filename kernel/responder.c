// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the responder, everything that arrives (IBA's responder, as
 * rxe_resp.c): the engine's receive upcalls (srd_responder_begin, _data,
 * _done, _abort), which switch on the message's kind once, here.
 *  - A SEND claims a receive work request and becomes a struct
 *    srd_recv_msg the engine writes into, completed as a receive.
 *  - An RDMA WRITE or READ (docs/protocol.md, "RDMA read and write")
 *    becomes a struct srd_rdma_target once its rkey passed the checks;
 *    for a WRITE the engine writes into it, for a READ it reads the
 *    response from it (srd_responder_gather).  A WRITE_WITH_IMM claims a
 *    receive as well, or on a QP with unsolicited write recv a receive
 *    message of no work request.
 * What the engine holds is the struct srd_inbound in either (message.h).
 *
 * Lifetime: a receive message holds a QP reference and its receive's MRs
 * (segs.c) until the engine completes or aborts it; it is used under its
 * peer's lock.  A target holds its QP but not the remote's MR: that MR is
 * looked up by rkey and checked again for each packet, so a
 * deregistration is never held up by a remote peer and no byte moves to
 * or from its pages after it.
 */

#include <linux/slab.h>
#include <linux/workqueue.h>

#include "srd.h"
#include "message.h"

/* --- SEND: into a receive ---------------------------------------------- */

/* A receive of @qp completes in error, unless the QP is being destroyed. */
static void srd_recv_complete(struct srd_qp *qp, u64 wr_id, u8 status,
			      u32 verr, u8 opcode)
{
	if (!READ_ONCE(qp->sq_dead))
		srd_complete(qp->rcq, qp, wr_id, opcode, status, verr, 0);
}

/* The same, of receive message @msg: unsolicited, its CQE says so. */
static void srd_recv_msg_complete(struct srd_recv_msg *msg, u8 status,
				  u32 verr, u8 opcode)
{
	struct srd_qp *qp = msg->qp;

	if (!msg->unsolicited)
		srd_recv_complete(qp, msg->wr_id, status, verr, opcode);
	else if (!READ_ONCE(qp->sq_dead))
		srd_complete_flags(qp->rcq, qp, 0, opcode, status, verr,
				   SRD_CQE_UNSOLICITED);
}

/*
 * A receive message of @bytes, not cleared (its users set every field):
 * @qp's spare if it is large enough, else a new one, as for outbound
 * messages (srd_outbound_alloc()).  Under rq_lock, in BH context.
 */
static struct srd_recv_msg *srd_recv_msg_alloc(struct srd_qp *qp,
					       size_t bytes)
{
	struct srd_recv_msg *msg = xchg(&qp->spare_recv, NULL);

	if (msg && msg->bytes >= bytes)
		return msg;
	kfree(msg);
	msg = kmalloc(bytes, GFP_ATOMIC | __GFP_NOWARN);
	if (msg)
		msg->bytes = bytes;
	return msg;
}

/*
 * Claim a receive of QP @qp for a message of @info->msg_len bytes.  Under
 * the peer's lock; takes rq_lock.
 */
static enum srd_rx_verdict srd_recv_claim(struct srd_qp *qp,
					  const struct srd_rx_msg_info *info,
					  struct srd_recv_msg **msgp)
{
	struct srd_recv_wqe *wqe = qp->rq.wqe;
	const struct srd_sge *sge = (const void *)(wqe + 1);
	enum srd_rx_verdict verdict = SRD_RX_ACCEPT;
	struct srd_recv_msg *msg;
	u32 verr, nseg;
	int err;

	spin_lock_bh(&qp->rq_lock);
	if (!srd_qp_can_receive(qp->state)) {
		verdict = SRD_RX_QP_ERROR;
		goto out;
	}
	err = srd_rq_claim(qp);
	if (err) {
		/* None posted: the sender retries (RNR). */
		verdict = err == -ENOENT ? SRD_RX_RNR : SRD_RX_QP_ERROR;
		goto out;
	}

	if (wqe->num_sge > qp->rq.max_sge) {
		verr = SRD_VERR_BAD_WQE;
		goto err_local;
	}
	if (srd_sge_len(sge, wqe->num_sge) < info->msg_len) {
		/* The sender's message is too big: its fault, not ours. */
		srd_recv_complete(qp, wqe->wr_id, IB_WC_LOC_LEN_ERR,
				  SRD_VERR_RECV_TOO_SHORT, SRD_CQE_RECV);
		verdict = SRD_RX_BAD_LENGTH;
		goto out;
	}
	msg = srd_recv_msg_alloc(qp, struct_size(msg, seg, wqe->num_sge));
	if (!msg) {
		srd_recv_complete(qp, wqe->wr_id, IB_WC_GENERAL_ERR,
				  SRD_VERR_NOMEM, SRD_CQE_RECV);
		verdict = SRD_RX_QP_ERROR;
		goto out;
	}
	verr = srd_segs_get(qp, sge, wqe->num_sge, IB_ACCESS_LOCAL_WRITE,
			    info->msg_len, msg->seg, &nseg);
	if (verr) {
		kfree(msg);
		goto err_local;
	}
	msg->in.kind = SRD_MSG_SEND;
	msg->nseg = nseg;
	msg->wr_id = wqe->wr_id;
	msg->opcode = SRD_CQE_RECV;
	msg->unsolicited = false;
	*msgp = msg;
	goto out;

err_local:
	/* A bad receive work request: the QP fails, as on UD. */
	srd_recv_complete(qp, wqe->wr_id, IB_WC_LOC_PROT_ERR, verr,
			  SRD_CQE_RECV);
	srd_count_one(qp->sdev, SRD_CNT_WQE_ERRORS);
	srd_qp_set_error(qp);
	verdict = SRD_RX_QP_ERROR;
out:
	spin_unlock_bh(&qp->rq_lock);
	return verdict;
}

/*
 * A receive message of QP @qp that claims no receive work request: a write
 * with immediate to a QP with unsolicited_write_recv.  It never waits for
 * a receive (no RNR) and has no buffers.  Under the peer's lock; takes
 * rq_lock.
 */
static enum srd_rx_verdict srd_recv_unsolicited(struct srd_qp *qp,
						struct srd_recv_msg **msgp)
{
	enum srd_rx_verdict verdict = SRD_RX_ACCEPT;
	struct srd_recv_msg *msg;

	spin_lock_bh(&qp->rq_lock);
	if (!srd_qp_can_receive(qp->state)) {
		verdict = SRD_RX_QP_ERROR;
		goto out;
	}
	msg = srd_recv_msg_alloc(qp, sizeof(*msg));
	if (!msg) {
		verdict = SRD_RX_QP_ERROR;
		goto out;
	}
	msg->in.kind = SRD_MSG_SEND;
	msg->nseg = 0;
	msg->wr_id = 0;
	msg->opcode = SRD_CQE_RECV_RDMA_WITH_IMM;
	msg->unsolicited = true;
	*msgp = msg;
out:
	spin_unlock_bh(&qp->rq_lock);
	return verdict;
}

static void srd_recv_msg_free(struct srd_recv_msg *msg)
{
	struct srd_qp *qp = msg->qp;

	srd_segs_put(msg->seg, msg->nseg);
	/* The QP's spare, unless it has one; before the QP's reference goes. */
	if (cmpxchg(&qp->spare_recv, NULL, msg))
		kfree(msg);
	srd_qp_put(qp);
}

/* Receive @msg is complete: all its bytes are placed. */
static void srd_recv_done(struct srd_recv_msg *msg)
{
	struct srd_qp *qp = msg->qp;
	struct srd_dev *sdev = qp->sdev;
	struct srd_recv_from from = {
		.sgid = &msg->sgid,
		.src_qpn = msg->src_qpn,
	};

	/* A QP that failed meanwhile flushes, whatever arrived. */
	if (!srd_qp_can_receive(READ_ONCE(qp->state))) {
		srd_recv_msg_complete(msg, IB_WC_WR_FLUSH_ERR,
				      SRD_VERR_FLUSH, msg->opcode);
		goto out;
	}
	srd_count_one(sdev, SRD_CNT_RX_PACKETS);
	/* A WRITE_WITH_IMM's bytes are rdma_write_recv_bytes (responder.c). */
	if (msg->opcode == SRD_CQE_RECV) {
		srd_count_one(sdev, SRD_CNT_RECV_WRS);
		srd_count(sdev, SRD_CNT_RECV_BYTES, msg->len);
	}
	/* A QP being destroyed completes nothing more. */
	if (READ_ONCE(qp->sq_dead))
		goto out;
	if (msg->has_imm) {
		from.flags |= SRD_CQE_WITH_IMM;
		from.imm_data = cpu_to_be32(msg->imm_data);
	}
	if (msg->solicited)
		from.flags |= SRD_CQE_SOLICITED;
	if (msg->unsolicited)
		from.flags |= SRD_CQE_UNSOLICITED;
	srd_complete_recv(qp, msg->wr_id, msg->opcode, msg->len, &from);
out:
	srd_recv_msg_free(msg);
}

/*
 * Receive @msg will never complete: its sender gave up or restarted, or
 * our QP is going away.  It completes in error; what was already written
 * to its buffers is undefined.
 */
static void srd_recv_abort(struct srd_recv_msg *msg)
{
	struct srd_qp *qp = msg->qp;

	if (srd_qp_can_receive(READ_ONCE(qp->state)))
		srd_recv_msg_complete(msg, IB_WC_REM_ABORT_ERR,
				      SRD_VERR_REMOTE_ABORT, SRD_CQE_RECV);
	else
		srd_recv_msg_complete(msg, IB_WC_WR_FLUSH_ERR,
				      SRD_VERR_FLUSH, SRD_CQE_RECV);
	srd_recv_msg_free(msg);
}

/* --- RDMA WRITE and READ ------------------------------------------------ */

static void srd_responder_free(struct srd_rdma_target *t)
{
	srd_qp_put(t->qp);
	kfree(t);
}

/*
 * The engine is done with incoming WRITE @t: all of it placed (@done),
 * or never to be.  A WRITE_WITH_IMM's receive completes with it.
 */
static void srd_rdma_finish(struct srd_rdma_target *t, bool done)
{
	if (done && t->in.kind == SRD_MSG_WRITE)
		srd_count(t->qp->sdev, SRD_CNT_RDMA_WRITE_RECV_BYTES, t->len);
	if (t->imm && done)
		srd_recv_done(t->imm);
	else if (t->imm)
		srd_recv_abort(t->imm);
	srd_responder_free(t);
}

/*
 * The MR of @t, if it is still the one the operation was accepted for and
 * still passes the checks; with a reference.  NULL: deregistered.
 */
static struct srd_mr *srd_rdma_target_mr(struct srd_rdma_target *t)
{
	struct srd_mr *mr = srd_mr_get_rkey(t->qp->sdev, t->rkey);

	if (mr && (mr != t->mr ||
		   srd_mr_check_remote(mr, t->qp->ibqp.pd, t->op_addr,
				       t->op_len, t->access) != SRD_RKEY_OK)) {
		srd_mr_put(mr);
		mr = NULL;
	}
	if (!mr)
		srd_mr_count_refusal(t->qp->sdev, SRD_RKEY_INVALID);
	return mr;
}

/*
 * The responder's checks (docs/protocol.md, "RDMA read and write"), then
 * for WRITE_WITH_IMM a receive.  Takes over the reference on @qp.
 */
static enum srd_rx_verdict srd_rdma_begin(struct srd_qp *qp,
					  const union ib_gid *remote,
					  const struct srd_rx_msg_info *info,
					  struct srd_inbound **inp)
{
	const struct srd_rdma_info *r = &info->rdma;
	struct srd_dev *sdev = qp->sdev;
	struct srd_rx_msg_info imm_info;
	enum srd_rx_verdict verdict;
	struct srd_rdma_target *t;
	struct srd_recv_msg *recv;
	enum srd_rkey_verdict why;
	struct srd_mr *mr = NULL;

	if (!srd_qp_can_receive(READ_ONCE(qp->state))) {
		verdict = SRD_RX_QP_ERROR;
		goto out_put;
	}
	t = kzalloc(sizeof(*t), GFP_ATOMIC | __GFP_NOWARN);
	if (!t) {
		verdict = SRD_RX_QP_ERROR;
		goto out_put;
	}
	t->in.kind = info->kind;
	t->qp = qp;
	t->rkey = r->rkey;
	t->access = info->kind == SRD_MSG_WRITE ? IB_ACCESS_REMOTE_WRITE :
						  IB_ACCESS_REMOTE_READ;
	t->op_addr = r->remote_addr;
	t->op_len = r->rdma_len;
	t->addr = r->remote_addr + r->rdma_offset;
	t->len = r->length;
	/* Zero bytes: no rkey is checked, nothing is touched (IBA C9-88). */
	if (r->rdma_len) {
		mr = srd_mr_get_rkey(sdev, r->rkey);
		why = mr ? srd_mr_check_remote(mr, qp->ibqp.pd, r->remote_addr,
					       r->rdma_len, t->access) :
			   SRD_RKEY_INVALID;
		if (mr)
			srd_mr_put(mr);
		if (why != SRD_RKEY_OK) {
			srd_mr_count_refusal(sdev, why);
			kfree(t);
			verdict = SRD_RX_BAD_ACCESS;
			goto out_put;
		}
		t->mr = mr;
	}
	if (info->kind == SRD_MSG_WRITE && info->has_imm) {
		/*
		 * Only the receive's existence matters: no bytes go to it.
		 * A QP made for it takes the write without one, as EFA's
		 * unsolicited write recv.
		 */
		imm_info = *info;
		imm_info.msg_len = 0;
		if (qp->unsolicited_write_recv)
			verdict = srd_recv_unsolicited(qp, &recv);
		else
			verdict = srd_recv_claim(qp, &imm_info, &recv);
		if (verdict != SRD_RX_ACCEPT) {
			kfree(t);
			goto out_put;
		}
		refcount_inc(&qp->ref);		/* the receive's own */
		recv->qp = qp;
		recv->opcode = SRD_CQE_RECV_RDMA_WITH_IMM;
		recv->len = r->rdma_len;
		recv->src_qpn = info->src_qpn;
		recv->imm_data = info->imm_data;
		recv->has_imm = true;
		recv->solicited = info->solicited;
		recv->sgid = *remote;
		t->imm = recv;
	}
	*inp = &t->in;
	return SRD_RX_ACCEPT;

out_put:
	srd_qp_put(qp);
	return verdict;
}

/*
 * WRITE: @len bytes at @offset of the message, from @skb at @skb_off.
 * 0, or -EACCES.
 */
static int srd_rdma_write(struct srd_rdma_target *t, u32 offset,
			  const struct sk_buff *skb, int skb_off, u32 len)
{
	struct srd_mr *mr;
	int err;

	if (offset > t->len || len > t->len - offset)
		return -EINVAL;
	mr = srd_rdma_target_mr(t);
	if (!mr)
		return -EACCES;
	err = srd_mr_write_skb(mr, t->addr + offset, skb, skb_off, len);
	srd_mr_put(mr);
	return err;
}

/* READ_RESP: the bytes of a response packet.  0, or SRD_TX_ABORT. */
int srd_responder_gather(struct srd_inbound *in, u32 offset, u8 *dst,
			 u32 len)
{
	struct srd_rdma_target *t = srd_inbound_rdma(in);
	struct srd_mr *mr;

	if (offset > t->len || len > t->len - offset)
		return -EINVAL;
	mr = srd_rdma_target_mr(t);
	if (!mr)
		return SRD_TX_ABORT;
	srd_mr_read(mr, t->addr + offset, dst, len);
	srd_mr_put(mr);
	return 0;
}

/* The READ_RESP of @in is over: sent and ACKed, or failed. */
void srd_responder_resp_done(struct srd_inbound *in, enum srd_comp_status st)
{
	struct srd_rdma_target *t = srd_inbound_rdma(in);

	if (st == SRD_COMP_OK)
		srd_count(t->qp->sdev, SRD_CNT_RDMA_READ_RESP_BYTES, t->len);
	srd_responder_free(t);
}

/* --- the engine's receive upcalls: the one switch on kind --------------- */

enum srd_rx_verdict srd_responder_begin(struct srd_dev *sdev,
					const union ib_gid *remote,
					const struct srd_rx_msg_info *info,
					struct srd_inbound **inp)
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
		return srd_rdma_begin(qp, remote, info, inp);
	if (info->msg_len > srd_max_srd_msg_bytes(sdev)) {
		verdict = SRD_RX_BAD_LENGTH;
		goto out_put;
	}
	verdict = srd_recv_claim(qp, info, &msg);
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
	*inp = &msg->in;
	return SRD_RX_ACCEPT;

out_put:
	srd_qp_put(qp);
	return verdict;
}

int srd_responder_data(struct srd_inbound *in, u32 offset,
		       const struct sk_buff *skb, int skb_off, u32 len)
{
	struct srd_recv_msg *msg;

	if (in->kind != SRD_MSG_SEND)
		return srd_rdma_write(srd_inbound_rdma(in), offset, skb,
				      skb_off, len);
	msg = srd_inbound_recv(in);
	if (offset > msg->len || len > msg->len - offset)
		return 0;
	return srd_segs_write_skb(msg->seg, msg->nseg, offset, skb, skb_off,
				  len);
}

void srd_responder_done(struct srd_inbound *in)
{
	if (in->kind == SRD_MSG_SEND)
		srd_recv_done(srd_inbound_recv(in));
	else
		srd_rdma_finish(srd_inbound_rdma(in), true);
}

void srd_responder_abort(struct srd_inbound *in)
{
	if (in->kind == SRD_MSG_SEND)
		srd_recv_abort(srd_inbound_recv(in));
	else
		srd_rdma_finish(srd_inbound_rdma(in), false);
}
