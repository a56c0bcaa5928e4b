// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: SRD messages between the verbs queues and the engine.  A send
 * work request becomes a struct srd_send_msg that the engine reads its
 * packets from and completes; an incoming message claims a receive work
 * request, as a struct srd_recv_msg the engine writes into.
 *
 * Lifetime: both hold a QP reference and a reference on every MR they
 * touch, from the work request until the engine completes or aborts the
 * message, so the pages they copy from or to stay pinned and a QP is
 * not freed under them.  Both are used under their peer's lock only.
 */

#include <linux/slab.h>

#include "srd.h"

/* One SGE of a message, with its MR held. */
struct srd_msg_seg {
	struct srd_mr *mr;
	u64 addr;
	u32 len;
};

struct srd_send_msg {
	struct srd_qp *qp;
	u64 wr_id;
	u32 len;
	bool signaled;
	bool is_inline;
	u32 nseg;
	union {
		DECLARE_FLEX_ARRAY(struct srd_msg_seg, seg);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

struct srd_recv_msg {
	struct srd_qp *qp;
	u64 wr_id;
	u32 len;
	u32 src_qpn;
	u32 imm_data;
	bool has_imm;
	bool solicited;
	union ib_gid sgid;
	u32 nseg;
	struct srd_msg_seg seg[];
};

static void srd_put_msg_segs(struct srd_msg_seg *seg, u32 n)
{
	while (n--)
		srd_mr_put(seg[n].mr);
}

/*
 * Take the MRs of @num_sge SGEs for @access, dropping empty ones, up to
 * @limit bytes.  Returns a vendor error; on error nothing is held.
 */
static u32 srd_get_msg_segs(struct srd_qp *qp, const struct srd_sge *sge,
			    u32 num_sge, int access, u32 limit,
			    struct srd_msg_seg *seg, u32 *nseg)
{
	u32 i, n = 0, total = 0, verr;

	for (i = 0; i < num_sge && total < limit; i++) {
		if (!sge[i].length)
			continue;
		seg[n].mr = srd_mr_get(qp->sdev, sge[i].lkey);
		if (!seg[n].mr) {
			verr = SRD_VERR_BAD_LKEY;
			goto err;
		}
		seg[n].addr = sge[i].addr;
		seg[n].len = min(sge[i].length, limit - total);
		verr = srd_mr_check(seg[n].mr, qp->ibqp.pd, seg[n].addr,
				    seg[n].len, access);
		n++;
		if (verr)
			goto err;
		total += seg[n - 1].len;
	}
	*nseg = n;
	return SRD_VERR_NONE;
err:
	srd_put_msg_segs(seg, n);
	return verr;
}

/* Copy between a message's segments and a buffer, at @offset. */
static void srd_segs_copy(struct srd_msg_seg *seg, u32 nseg, u32 offset,
			  u8 *buf, u32 len, bool to_mr)
{
	u32 i, chunk;

	for (i = 0; i < nseg && len; i++) {
		if (offset >= seg[i].len) {
			offset -= seg[i].len;
			continue;
		}
		chunk = min(len, seg[i].len - offset);
		if (to_mr)
			srd_mr_write(seg[i].mr, seg[i].addr + offset, buf, chunk);
		else
			srd_mr_read(seg[i].mr, seg[i].addr + offset, buf, chunk);
		buf += chunk;
		len -= chunk;
		offset = 0;
	}
}

/* --- sends ----------------------------------------------------------- */

/* The engine's outcome as a completion (docs/protocol.md, EFA's mapping). */
static void srd_comp_status_to_wc(enum srd_comp_status st, u8 *status,
				  u32 *verr)
{
	static const struct {
		u8 status;
		u32 verr;
	} map[SRD_COMP_NR] = {
		[SRD_COMP_OK] = { IB_WC_SUCCESS, SRD_VERR_NONE },
		[SRD_COMP_RNR_RETRY_EXC] = { IB_WC_RNR_RETRY_EXC_ERR,
					     SRD_VERR_RNR_RETRY_EXC },
		[SRD_COMP_BAD_DEST_QPN] = { IB_WC_REM_INV_RD_REQ_ERR,
					    SRD_VERR_REMOTE_BAD_QPN },
		[SRD_COMP_BAD_QKEY] = { IB_WC_REM_INV_RD_REQ_ERR,
					SRD_VERR_REMOTE_BAD_QKEY },
		[SRD_COMP_REMOTE_BAD_LENGTH] = { IB_WC_REM_INV_REQ_ERR,
						 SRD_VERR_REMOTE_BAD_LENGTH },
		[SRD_COMP_REMOTE_ABORT] = { IB_WC_REM_ABORT_ERR,
					    SRD_VERR_REMOTE_ABORT },
		[SRD_COMP_UNRESP_REMOTE] = { IB_WC_RESP_TIMEOUT_ERR,
					     SRD_VERR_UNRESP_REMOTE },
		[SRD_COMP_PEER_RESTARTED] = { IB_WC_REM_ABORT_ERR,
					      SRD_VERR_PEER_RESTARTED },
		[SRD_COMP_FLUSHED] = { IB_WC_WR_FLUSH_ERR, SRD_VERR_FLUSH },
	};

	if (WARN_ON_ONCE((unsigned int)st >= SRD_COMP_NR))
		st = SRD_COMP_REMOTE_ABORT;
	*status = map[st].status;
	*verr = map[st].verr;
}

static void srd_send_msg_free(struct srd_send_msg *msg)
{
	if (!msg->is_inline)
		srd_put_msg_segs(msg->seg, msg->nseg);
	kfree(msg);
}

/*
 * Hand the send work request @wqe of SRD QP @qp to the transport.  Under
 * sq_mutex.  Returns 0 when the work request is done with: handed over,
 * or failed with res->status set; -EAGAIN when the peer cannot take more
 * now (the caller retries later, the slot still posted).
 */
int srd_msg_send(struct srd_qp *qp, const struct srd_send_wqe *wqe,
		 struct srd_send_result *res)
{
	struct srd_dev *sdev = qp->sdev;
	const struct srd_sge *sge = (const void *)(wqe + 1);
	u32 max_inline_room = qp->sq.ring->stride - sizeof(*wqe);
	struct srd_send_req req = {};
	union ib_gid sgid, dgid;
	struct srd_send_msg *msg;
	struct srd_kpeer *kp;
	bool is_inline;
	u32 len, i, verr;
	u64 total = 0;
	int ret;

	if (wqe->opcode != SRD_WQE_SEND && wqe->opcode != SRD_WQE_SEND_WITH_IMM)
		goto err_opcode;
	is_inline = wqe->flags & SRD_WQE_INLINE;
	if (is_inline) {
		len = wqe->inline_len;
		if (len > qp->max_inline || len > max_inline_room)
			goto err_wqe;
		msg = kmalloc(struct_size(msg, inline_data, len), GFP_KERNEL);
	} else {
		if (wqe->num_sge > qp->sq.max_sge)
			goto err_wqe;
		for (i = 0; i < wqe->num_sge; i++)
			total += sge[i].length;
		len = min_t(u64, total, U32_MAX);
		msg = kmalloc(struct_size(msg, seg, wqe->num_sge), GFP_KERNEL);
	}
	res->byte_len = len;
	if (len > srd_max_srd_msg_bytes(sdev)) {
		kfree(msg);
		res->status = IB_WC_LOC_LEN_ERR;
		res->vendor_err = SRD_VERR_MSG_TOO_LONG;
		return 0;
	}
	if (!msg)
		goto err_nomem;
	msg->qp = qp;
	msg->wr_id = wqe->wr_id;
	msg->len = len;
	msg->signaled = (wqe->flags & SRD_WQE_SIGNALED) || qp->sq_sig_all;
	msg->is_inline = is_inline;
	msg->nseg = 0;
	if (is_inline) {
		memcpy(msg->inline_data, wqe + 1, len);
	} else {
		verr = srd_get_msg_segs(qp, sge, wqe->num_sge, 0, len,
					msg->seg, &msg->nseg);
		if (verr) {
			kfree(msg);
			res->status = IB_WC_LOC_PROT_ERR;
			res->vendor_err = verr;
			return 0;
		}
	}

	if (!srd_ah_lookup(sdev, wqe->ahn, &sgid, &dgid)) {
		srd_send_msg_free(msg);
		res->status = IB_WC_LOC_QP_OP_ERR;
		res->vendor_err = SRD_VERR_BAD_AH;
		return 0;
	}
	kp = srd_kpeer_get(sdev, &sgid, &dgid);
	if (!kp) {
		srd_send_msg_free(msg);
		goto err_nomem;
	}

	req.cookie = msg;
	req.src_qpn = qp->ibqp.qp_num;
	req.dst_qpn = wqe->remote_qpn & 0xffffff;
	/* A Q_Key with the high bit set means "use the QP's own". */
	req.qkey = wqe->remote_qkey & 0x80000000 ? READ_ONCE(qp->qkey) :
						   wqe->remote_qkey;
	req.has_imm = wqe->opcode == SRD_WQE_SEND_WITH_IMM;
	req.imm_data = be32_to_cpu(wqe->imm_data);
	req.solicited = wqe->flags & SRD_WQE_SOLICITED;
	req.len = len;
	req.rnr_retry = READ_ONCE(qp->rnr_retry);

	/* The message's references; dropped by srd_msg_send_done(). */
	refcount_inc(&qp->ref);
	atomic_inc(&qp->sq_inflight);
	ret = srd_kpeer_send(kp, &req);
	if (ret == SRD_SEND_OK)
		return 0;

	atomic_dec(&qp->sq_inflight);
	srd_qp_put(qp);
	srd_send_msg_free(msg);
	if (ret == SRD_SEND_BUSY)
		return -EAGAIN;
	if (ret == SRD_SEND_TOO_LONG) {
		res->status = IB_WC_LOC_LEN_ERR;
		res->vendor_err = SRD_VERR_MSG_TOO_LONG;
		return 0;
	}
err_nomem:
	res->status = IB_WC_GENERAL_ERR;
	res->vendor_err = SRD_VERR_NOMEM;
	return 0;
err_opcode:
	res->status = IB_WC_LOC_QP_OP_ERR;
	res->vendor_err = SRD_VERR_BAD_OPCODE;
	return 0;
err_wqe:
	res->status = IB_WC_LOC_LEN_ERR;
	res->vendor_err = SRD_VERR_BAD_WQE;
	return 0;
}

/* Copy @len bytes of the message at @offset into @dst, for a packet. */
int srd_msg_gather(struct srd_send_msg *msg, u32 offset, u8 *dst, u32 len)
{
	if (offset > msg->len || len > msg->len - offset)
		return -EINVAL;
	if (msg->is_inline)
		memcpy(dst, msg->inline_data + offset, len);
	else
		srd_segs_copy(msg->seg, msg->nseg, offset, dst, len, false);
	return 0;
}

/*
 * The engine is done with @msg.  Under the peer's lock.  Remote failures
 * complete the work request in error and leave the QP as it is: SRD is
 * connectionless, and one unreachable or misbehaving peer must not stop
 * a QP's traffic with the others.
 */
void srd_msg_send_done(struct srd_send_msg *msg, enum srd_comp_status st)
{
	struct srd_qp *qp = msg->qp;
	struct srd_cqe cqe = {};

	srd_comp_status_to_wc(st, &cqe.status, &cqe.vendor_err);
	/* A QP being destroyed completes nothing more. */
	if ((cqe.status != IB_WC_SUCCESS || msg->signaled) &&
	    !READ_ONCE(qp->sq_dead)) {
		cqe.wr_id = msg->wr_id;
		cqe.opcode = SRD_CQE_SEND;
		cqe.byte_len = msg->len;
		cqe.qp_num = qp->ibqp.qp_num;
		srd_cq_post(qp->scq, &cqe);
	}
	srd_send_msg_free(msg);

	/* Room in the SQ: for the provider, and for a doorbell that stopped. */
	atomic_dec(&qp->sq_inflight);
	srd_sq_publish(qp);
	/* Pairs with srd_sq_has_room(): we see sq_blocked, or it sees room. */
	smp_mb__after_atomic();
	if (READ_ONCE(qp->sq_blocked))
		mod_delayed_work(system_wq, &qp->sq_work, 0);
	srd_qp_put(qp);
}

/* --- receives -------------------------------------------------------- */

static bool srd_qp_can_receive(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS;
}

static void srd_recv_complete(struct srd_qp *qp, u64 wr_id, u8 status,
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
static enum srd_rx_verdict srd_claim_recv(struct srd_qp *qp,
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
		srd_recv_complete(qp, wqe->wr_id, IB_WC_LOC_LEN_ERR,
				  SRD_VERR_RECV_TOO_SHORT);
		verdict = SRD_RX_BAD_LENGTH;
		goto out;
	}
	msg = kmalloc(struct_size(msg, seg, wqe->num_sge),
		      GFP_ATOMIC | __GFP_NOWARN);
	if (!msg) {
		srd_recv_complete(qp, wqe->wr_id, IB_WC_GENERAL_ERR,
				  SRD_VERR_NOMEM);
		verdict = SRD_RX_QP_ERROR;
		goto out;
	}
	verr = srd_get_msg_segs(qp, sge, wqe->num_sge, IB_ACCESS_LOCAL_WRITE,
				info->msg_len, msg->seg, &nseg);
	if (verr) {
		kfree(msg);
		goto err_local;
	}
	msg->nseg = nseg;
	msg->wr_id = wqe->wr_id;
	*msgp = msg;
	goto out;

err_local:
	/* A bad receive work request: the QP fails, as on UD. */
	srd_recv_complete(qp, wqe->wr_id, IB_WC_LOC_PROT_ERR, verr);
	srd_count_one(qp->sdev, SRD_CNT_WQE_ERRORS);
	srd_qp_set_error(qp);
	verdict = SRD_RX_QP_ERROR;
out:
	spin_unlock_bh(&qp->rq_lock);
	return verdict;
}

enum srd_rx_verdict srd_msg_rx_begin(struct srd_dev *sdev,
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
	if (info->msg_len > srd_max_srd_msg_bytes(sdev)) {
		verdict = SRD_RX_BAD_LENGTH;
		goto out_put;
	}
	verdict = srd_claim_recv(qp, info, &msg);
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

void srd_msg_rx_data(void *handle, u32 offset, const u8 *data, u32 len)
{
	struct srd_recv_msg *msg = handle;

	if (offset > msg->len || len > msg->len - offset)
		return;
	srd_segs_copy(msg->seg, msg->nseg, offset, (u8 *)data, len, true);
}

static void srd_recv_msg_free(struct srd_recv_msg *msg)
{
	struct srd_qp *qp = msg->qp;

	srd_put_msg_segs(msg->seg, msg->nseg);
	kfree(msg);
	srd_qp_put(qp);
}

void srd_msg_rx_done(void *handle)
{
	struct srd_recv_msg *msg = handle;
	struct srd_qp *qp = msg->qp;
	struct srd_dev *sdev = qp->sdev;
	struct srd_cqe cqe = {
		.wr_id = msg->wr_id,
		.opcode = SRD_CQE_RECV,
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
void srd_msg_rx_abort(void *handle)
{
	struct srd_recv_msg *msg = handle;
	struct srd_qp *qp = msg->qp;

	if (srd_qp_can_receive(READ_ONCE(qp->state)))
		srd_recv_complete(qp, msg->wr_id, IB_WC_REM_ABORT_ERR,
				  SRD_VERR_REMOTE_ABORT);
	else
		srd_recv_complete(qp, msg->wr_id, IB_WC_WR_FLUSH_ERR,
				  SRD_VERR_FLUSH);
	srd_recv_msg_free(msg);
}
