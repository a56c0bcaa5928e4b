// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: SRD work requests of the send queue, the requester's side.
 * A SEND, WRITE or READ work request becomes a struct srd_outbound and
 * one engine request; the engine reads its packets' bytes from it
 * (srd_requester_gather), places a READ's response into it
 * (srd_requester_read_data) and completes it once (srd_requester_done).
 * Cutting an RDMA operation into messages is the engine's
 * (engine/rdma_op.c).
 *
 * Lifetime: an outbound message holds a QP reference and a reference on every
 * local MR it touches (segs.c), from the work request until the engine
 * completes it.  It is used under its peer's lock.
 */

#include <linux/slab.h>
#include <linux/workqueue.h>

#include "srd.h"
#include "message.h"

/*
 * The engine's outcome as a completion (docs/protocol.md, EFA's mapping).
 * A switch without a default, so that a status added to the engine without
 * a case here is a -Wswitch warning, which fails the W=1 build check; a
 * table would have completed it as IB_WC_SUCCESS (its zero entry).  A
 * value outside the enum cannot happen: it completes as an error.
 */
static void srd_comp_status_to_wc(enum srd_comp_status st, u8 *status,
				  u32 *verr)
{
	switch (st) {
	case SRD_COMP_OK:
		*status = IB_WC_SUCCESS;
		*verr = SRD_VERR_NONE;
		return;
	case SRD_COMP_RNR_RETRY_EXC:
		*status = IB_WC_RNR_RETRY_EXC_ERR;
		*verr = SRD_VERR_RNR_RETRY_EXC;
		return;
	case SRD_COMP_BAD_DEST_QPN:
		*status = IB_WC_REM_INV_RD_REQ_ERR;
		*verr = SRD_VERR_REMOTE_BAD_QPN;
		return;
	case SRD_COMP_BAD_QKEY:
		*status = IB_WC_REM_INV_RD_REQ_ERR;
		*verr = SRD_VERR_REMOTE_BAD_QKEY;
		return;
	case SRD_COMP_REMOTE_BAD_LENGTH:
		*status = IB_WC_REM_INV_REQ_ERR;
		*verr = SRD_VERR_REMOTE_BAD_LENGTH;
		return;
	case SRD_COMP_REMOTE_ABORT:
		*status = IB_WC_REM_ABORT_ERR;
		*verr = SRD_VERR_REMOTE_ABORT;
		return;
	case SRD_COMP_UNRESP_REMOTE:
		*status = IB_WC_RESP_TIMEOUT_ERR;
		*verr = SRD_VERR_UNRESP_REMOTE;
		return;
	case SRD_COMP_PEER_RESTARTED:
		*status = IB_WC_REM_ABORT_ERR;
		*verr = SRD_VERR_PEER_RESTARTED;
		return;
	case SRD_COMP_FLUSHED:
		*status = IB_WC_WR_FLUSH_ERR;
		*verr = SRD_VERR_FLUSH;
		return;
	case SRD_COMP_REMOTE_ACCESS:
		*status = IB_WC_REM_ACCESS_ERR;
		*verr = SRD_VERR_REMOTE_ACCESS;
		return;
	case SRD_COMP_NR:
		break;
	}
	WARN_ON_ONCE(1);
	*status = IB_WC_REM_ABORT_ERR;
	*verr = SRD_VERR_REMOTE_ABORT;
}

/*
 * An outbound message of @bytes, cleared up to its segments or inline
 * data: @qp's spare if it is large enough, else a new one.  A ping-pong
 * posts one and frees one at every exchange, and kzalloc() and kfree()
 * cost more than clearing the header here (a kernel that clears every
 * object it allocates, as Debian's do with init_on_alloc, clears the
 * whole object too).  Under sq_mutex.
 */
static struct srd_outbound *srd_outbound_alloc(struct srd_qp *qp,
					       size_t bytes)
{
	struct srd_outbound *msg = xchg(&qp->spare_out, NULL);
	u32 got;

	if (msg && msg->bytes >= bytes) {
		got = msg->bytes;
		memset(msg, 0, offsetof(struct srd_outbound, seg));
		msg->bytes = got;
		return msg;
	}
	kfree(msg);
	/* The poster's: charged to its memory cgroup. */
	msg = kzalloc(bytes, GFP_KERNEL_ACCOUNT);
	if (msg)
		msg->bytes = bytes;
	return msg;
}

static void srd_requester_free(struct srd_outbound *msg)
{
	if (msg->kp)
		srd_kpeer_put(msg->kp);
	if (!msg->is_inline)
		srd_segs_put(msg->seg, msg->nseg);
	/* The QP's spare, unless it has one: its reference keeps it. */
	if (cmpxchg(&msg->qp->spare_out, NULL, msg))
		kfree(msg);
}

/* The engine's message kind of an SRD work request of rules @rules. */
static enum srd_msg_kind srd_wqe_msg_kind(u32 rules)
{
	if (rules & SRD_WQE_RULE_REMOTE_READ)
		return SRD_MSG_READ;
	if (rules & SRD_WQE_RULE_REMOTE_WRITE)
		return SRD_MSG_WRITE;
	return SRD_MSG_SEND;
}

/*
 * Hand the send work request @wqe of SRD QP @qp, of @rule and payload
 * @len as srd_wqe_check() found them, to the transport.  Under
 * sq_mutex.  Returns 0 when the work request is done with: handed over,
 * or failed with res->status set; -EAGAIN when the peer cannot take more
 * now (the caller retries later, the slot still posted).
 */
int srd_requester_post(struct srd_qp *qp, const struct srd_send_wqe *wqe,
		       struct srd_wqe_rule rule, u32 len,
		       struct srd_send_result *res)
{
	struct srd_dev *sdev = qp->sdev;
	const struct srd_sge *sge = (const void *)(wqe + 1);
	bool rdma = rule.rules & SRD_WQE_RULE_RDMA;
	bool is_inline = wqe->flags & SRD_WQE_INLINE;
	struct srd_send_req r = {}, *req = &r;
	union ib_gid sgid, dgid;
	struct srd_outbound *msg;
	struct srd_kpeer *kp;
	u32 verr;
	int ret;

	if (is_inline)
		msg = srd_outbound_alloc(qp, struct_size(msg, inline_data, len));
	else
		msg = srd_outbound_alloc(qp, struct_size(msg, seg, wqe->num_sge));
	if (!msg)
		goto err_nomem;
	msg->qp = qp;
	msg->wr_id = wqe->wr_id;
	msg->len = len;
	msg->opcode = wqe->opcode;
	msg->signaled = (wqe->flags & SRD_WQE_SIGNALED) || qp->sq_sig_all;
	msg->is_inline = is_inline;
	msg->nseg = 0;
	if (is_inline) {
		memcpy(msg->inline_data, wqe + 1, len);
	} else {
		/* A READ writes into the local buffers. */
		verr = srd_segs_get(qp, sge, wqe->num_sge,
				    rule.rules & SRD_WQE_RULE_REMOTE_READ ?
				    IB_ACCESS_LOCAL_WRITE : 0, len,
				    msg->seg, &msg->nseg);
		if (verr) {
			srd_requester_free(msg);
			res->status = IB_WC_LOC_PROT_ERR;
			res->vendor_err = verr;
			return 0;
		}
	}

	if (!srd_ah_lookup(sdev, wqe->ahn, &sgid, &dgid)) {
		srd_requester_free(msg);
		res->status = IB_WC_LOC_QP_OP_ERR;
		res->vendor_err = SRD_VERR_BAD_AH;
		return 0;
	}
	kp = srd_kpeer_get(sdev, &sgid, &dgid);
	if (!kp) {
		/*
		 * No room for the peer (the table is full of busy ones) or no
		 * memory: this destination is unreachable now, as after a
		 * retry budget; the QP and its other peers carry on.
		 */
		srd_requester_free(msg);
		res->status = IB_WC_RESP_TIMEOUT_ERR;
		res->vendor_err = SRD_VERR_UNRESP_REMOTE;
		res->keep_qp = true;
		return 0;
	}
	msg->kp = kp;
	msg->flush_gen = READ_ONCE(qp->flush_gen);

	req->src_qpn = qp->ibqp.qp_num;
	req->dst_qpn = wqe->remote_qpn & 0xffffff;
	req->qkey = srd_wqe_qkey(qp, wqe);
	req->has_imm = rule.rules & SRD_WQE_RULE_IMM;
	req->imm_data = be32_to_cpu(wqe->imm_data);
	req->solicited = wqe->flags & SRD_WQE_SOLICITED;
	req->len = len;
	req->rnr_retry = READ_ONCE(qp->rnr_retry);
	req->out = msg;
	req->kind = srd_wqe_msg_kind(rule.rules);
	if (rdma) {
		req->rdma.remote_addr = wqe->remote_addr;
		req->rdma.rkey = wqe->rkey;
		req->rdma.rdma_len = len;
		req->rdma.length = len;
		if (req->kind == SRD_MSG_READ)
			req->len = 0;
	}

	/* The message's references; dropped when it completes. */
	refcount_inc(&qp->ref);
	atomic_inc(&qp->sq_inflight);
	ret = srd_kpeer_send(kp, req, qp, msg->flush_gen);
	if (ret == SRD_SEND_OK)
		return 0;

	atomic_dec(&qp->sq_inflight);
	srd_qp_put(qp);
	srd_requester_free(msg);
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
}

/* Copy @len bytes of @msg at @offset into @dst, for a packet. */
int srd_requester_gather(struct srd_outbound *msg, u32 offset, u8 *dst,
			 u32 len)
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
 * The engine is done with @msg: every byte delivered (or, for a READ,
 * placed), or failed.  Under the peer's lock.  Its work request
 * completes with @st and @msg is freed.  Remote failures complete the
 * work request in error and leave the QP as it is: SRD is
 * connectionless, and one unreachable or misbehaving peer must not stop
 * a QP's traffic with the others.
 */
void srd_requester_done(struct srd_outbound *msg, enum srd_comp_status st)
{
	struct srd_qp *qp = msg->qp;
	u64 wr_id = msg->wr_id;
	u32 len = msg->len, verr;
	u8 wqe_opcode = msg->opcode, status;
	u8 opcode = srd_wqe_rule(wqe_opcode).cqe;
	bool post;

	srd_comp_status_to_wc(st, &status, &verr);
	if (status == IB_WC_SUCCESS && READ_ONCE(msg->mr_gone)) {
		/* Not all the response bytes could be placed. */
		status = IB_WC_LOC_PROT_ERR;
		verr = SRD_VERR_BAD_LKEY;
	}
	/* A QP being destroyed completes nothing more. */
	post = (status != IB_WC_SUCCESS || msg->signaled) &&
	       !READ_ONCE(qp->sq_dead);
	srd_requester_free(msg);
	srd_count_sq_wr(qp->sdev, wqe_opcode, status, len);

	/*
	 * Room in the SQ, before the completion says so: a program that
	 * posts again on seeing it must find the slot free (perftest does,
	 * and failed with ENOMEM when the completion came first).
	 */
	atomic_dec(&qp->sq_inflight);
	srd_sq_publish(qp);
	if (post)
		srd_complete(qp->scq, qp, wr_id, opcode, status, verr, len);
	/* Pairs with srd_sq_has_room(): we see sq_blocked, or it sees room. */
	smp_mb();
	if (READ_ONCE(qp->sq_blocked))
		mod_delayed_work(srd_wq, &qp->sq_work, 0);
	srd_qp_put(qp);
}

/*
 * Requester: response bytes of a READ, @len of them in @skb at @skb_off,
 * into the local buffers at @offset.
 */
void srd_requester_read_data(struct srd_outbound *msg, u32 offset,
			     const struct sk_buff *skb, int skb_off, u32 len)
{
	if (offset > msg->len || len > msg->len - offset)
		return;
	if (srd_segs_write_skb(msg->seg, msg->nseg, offset, skb, skb_off, len))
		WRITE_ONCE(msg->mr_gone, true);
}
