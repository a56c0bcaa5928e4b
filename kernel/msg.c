// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: SRD messages between the verbs queues and the engine.  A send
 * work request becomes a struct srd_send_msg that the engine reads its
 * packets from and completes; an incoming message claims a receive work
 * request, as a struct srd_recv_msg the engine writes into.
 *
 * RDMA (docs/protocol.md, "RDMA read and write"): a READ or WRITE work
 * request is cut into chunks of at most SRD_MAX_RDMA_MSG_BYTES, one
 * engine message each (struct srd_chunk); a SEND is one chunk.  As the
 * responder, an incoming WRITE or READ becomes a struct srd_rdma_target
 * once its rkey passed the checks.
 *
 * Lifetime: send and receive messages hold a QP reference and a
 * reference on every local MR they touch, from the work request until
 * the engine completes or aborts the message, so the pages they copy from
 * or to stay pinned and a QP is not freed under them.  They are used
 * under their peer's lock only, but for the chunk bookkeeping of a
 * multi-chunk work request (its own lock and work item).  A target holds
 * its QP but not the remote's MR: that MR is looked up by rkey and
 * checked again for each packet, so a deregistration is never held up
 * by a remote peer and no byte moves to or from its pages after it.
 */

#include <linux/slab.h>
#include <linux/workqueue.h>

#include "srd.h"

/* One SGE of a message, with its MR held. */
struct srd_msg_seg {
	struct srd_mr *mr;
	u64 addr;
	u32 len;
};

/* One engine message of a work request: all of a SEND, a chunk of RDMA. */
struct srd_chunk {
	struct srd_send_msg *msg;
	u32 off;			/* in the work request's bytes */
	u32 len;
};

struct srd_send_msg {
	struct srd_qp *qp;
	u64 wr_id;
	u32 len;
	u8 opcode;			/* enum srd_wqe_opcode */
	bool signaled;
	bool is_inline;
	bool mr_gone;			/* a READ's MR was deregistered */
	u32 flush_gen;			/* the QP's, when it was built */
	/*
	 * Chunks: the first goes to the engine when the work request is
	 * consumed, the others from chunk_work.  The last chunk of a
	 * multi-chunk WRITE_WITH_IMM waits until every other one is done.
	 */
	struct srd_kpeer *kp;
	struct srd_send_req req;	/* what every chunk shares */
	spinlock_t lock;		/* the four below, multi-chunk only */
	u32 nchunks, next_chunk, chunks_busy;
	enum srd_comp_status status;	/* the first failure */
	struct delayed_work chunk_work;
	struct srd_chunk *chunks;	/* nchunks; &chunk0 for one */
	struct srd_chunk chunk0;
	u32 nseg;
	union {
		DECLARE_FLEX_ARRAY(struct srd_msg_seg, seg);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

struct srd_recv_msg {
	enum srd_msg_kind kind;		/* SRD_MSG_SEND: see srd_rdma_target */
	struct srd_qp *qp;
	u64 wr_id;
	u32 len;
	u8 opcode;			/* SRD_CQE_RECV or _RECV_RDMA_WITH_IMM */
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

/*
 * Copy between a message's segments and a buffer, at @offset.  0, or
 * -EACCES: an MR to be written was deregistered (what came before it was
 * written).  Reading a deregistered MR's pages, still pinned, is harmless.
 */
static int srd_segs_copy(struct srd_msg_seg *seg, u32 nseg, u32 offset,
			 u8 *buf, u32 len, bool to_mr)
{
	u32 i, chunk;

	for (i = 0; i < nseg && len; i++) {
		if (offset >= seg[i].len) {
			offset -= seg[i].len;
			continue;
		}
		chunk = min(len, seg[i].len - offset);
		if (!to_mr)
			srd_mr_read(seg[i].mr, seg[i].addr + offset, buf, chunk);
		else if (srd_mr_write(seg[i].mr, seg[i].addr + offset, buf,
				      chunk))
			return -EACCES;
		buf += chunk;
		len -= chunk;
		offset = 0;
	}
	return 0;
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
		[SRD_COMP_REMOTE_ACCESS] = { IB_WC_REM_ACCESS_ERR,
					     SRD_VERR_REMOTE_ACCESS },
	};

	if (WARN_ON_ONCE((unsigned int)st >= SRD_COMP_NR))
		st = SRD_COMP_REMOTE_ABORT;
	*status = map[st].status;
	*verr = map[st].verr;
}

static void srd_send_msg_free(struct srd_send_msg *msg)
{
	if (msg->kp)
		srd_kpeer_put(msg->kp);
	if (!msg->is_inline)
		srd_put_msg_segs(msg->seg, msg->nseg);
	if (msg->chunks != &msg->chunk0)
		kfree(msg->chunks);
	kfree(msg);
}

static bool srd_wqe_is_rdma(u8 opcode)
{
	return opcode == SRD_WQE_RDMA_WRITE ||
	       opcode == SRD_WQE_RDMA_WRITE_WITH_IMM ||
	       opcode == SRD_WQE_RDMA_READ;
}

u8 srd_wqe_cqe_opcode(u8 wqe_opcode)
{
	switch (wqe_opcode) {
	case SRD_WQE_RDMA_WRITE:
	case SRD_WQE_RDMA_WRITE_WITH_IMM:
		return SRD_CQE_RDMA_WRITE;
	case SRD_WQE_RDMA_READ:
		return SRD_CQE_RDMA_READ;
	default:
		return SRD_CQE_SEND;
	}
}

/* The engine request for chunk @i of @msg. */
static void srd_chunk_req(struct srd_send_msg *msg, u32 i,
			  struct srd_send_req *req)
{
	struct srd_chunk *c = &msg->chunks[i];

	*req = msg->req;
	req->cookie = c;
	if (req->kind == SRD_MSG_SEND)
		return;
	req->rdma.rdma_offset = c->off;
	req->rdma.length = c->len;
	req->len = req->kind == SRD_MSG_WRITE ? c->len : 0;
	/* Only the last chunk carries the immediate data. */
	req->has_imm = msg->req.has_imm && i == msg->nchunks - 1;
	req->solicited = msg->req.solicited && i == msg->nchunks - 1;
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
	bool rdma = srd_wqe_is_rdma(wqe->opcode);
	struct srd_send_req *req, first;
	union ib_gid sgid, dgid;
	struct srd_send_msg *msg;
	struct srd_kpeer *kp;
	bool is_inline;
	u32 len, i, verr, nchunks;
	u64 total = 0;
	int ret;

	if (wqe->opcode != SRD_WQE_SEND &&
	    wqe->opcode != SRD_WQE_SEND_WITH_IMM && !rdma)
		goto err_opcode;
	/* The profile's RDMA: the efa one has no RDMA write. */
	if (rdma && !(sdev->limits.device_caps &
		      (wqe->opcode == SRD_WQE_RDMA_READ ?
		       SRD_DEVICE_CAP_RDMA_READ : SRD_DEVICE_CAP_RDMA_WRITE)))
		goto err_opcode;
	is_inline = wqe->flags & SRD_WQE_INLINE;
	if (is_inline) {
		len = wqe->inline_len;
		if (len > qp->max_inline || len > max_inline_room ||
		    wqe->opcode == SRD_WQE_RDMA_READ)
			goto err_wqe;
		msg = kzalloc(struct_size(msg, inline_data, len), GFP_KERNEL);
	} else {
		if (wqe->num_sge > qp->sq.max_sge ||
		    (rdma && wqe->num_sge > sdev->limits.max_rdma_sge))
			goto err_wqe;
		for (i = 0; i < wqe->num_sge; i++)
			total += sge[i].length;
		len = min_t(u64, total, U32_MAX);
		msg = kzalloc(struct_size(msg, seg, wqe->num_sge), GFP_KERNEL);
	}
	res->byte_len = len;
	if (len > (rdma ? SRD_MAX_RDMA_BYTES : srd_max_srd_msg_bytes(sdev))) {
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
	msg->opcode = wqe->opcode;
	msg->signaled = (wqe->flags & SRD_WQE_SIGNALED) || qp->sq_sig_all;
	msg->is_inline = is_inline;
	msg->nseg = 0;
	spin_lock_init(&msg->lock);
	nchunks = rdma ? max_t(u32, 1, DIV_ROUND_UP(len, SRD_MAX_RDMA_MSG_BYTES)) : 1;
	msg->chunks = &msg->chunk0;
	if (nchunks > 1) {
		msg->chunks = kcalloc(nchunks, sizeof(*msg->chunks), GFP_KERNEL);
		if (!msg->chunks) {
			msg->chunks = &msg->chunk0;
			srd_send_msg_free(msg);
			goto err_nomem;
		}
	}
	msg->nchunks = nchunks;
	for (i = 0; i < nchunks; i++) {
		msg->chunks[i].msg = msg;
		msg->chunks[i].off = i * SRD_MAX_RDMA_MSG_BYTES;
		msg->chunks[i].len = min_t(u32, len - msg->chunks[i].off,
					   SRD_MAX_RDMA_MSG_BYTES);
	}
	if (is_inline) {
		memcpy(msg->inline_data, wqe + 1, len);
	} else {
		/* A READ writes into the local buffers. */
		verr = srd_get_msg_segs(qp, sge, wqe->num_sge,
					wqe->opcode == SRD_WQE_RDMA_READ ?
					IB_ACCESS_LOCAL_WRITE : 0, len,
					msg->seg, &msg->nseg);
		if (verr) {
			srd_send_msg_free(msg);
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
		/*
		 * No room for the peer (the table is full of busy ones) or no
		 * memory: this destination is unreachable now, as after a
		 * retry budget; the QP and its other peers carry on.
		 */
		srd_send_msg_free(msg);
		res->status = IB_WC_RESP_TIMEOUT_ERR;
		res->vendor_err = SRD_VERR_UNRESP_REMOTE;
		res->keep_qp = true;
		return 0;
	}
	msg->kp = kp;
	msg->flush_gen = READ_ONCE(qp->flush_gen);

	req = &msg->req;
	req->src_qpn = qp->ibqp.qp_num;
	req->dst_qpn = wqe->remote_qpn & 0xffffff;
	/* A Q_Key with the high bit set means "use the QP's own". */
	req->qkey = wqe->remote_qkey & 0x80000000 ? READ_ONCE(qp->qkey) :
						    wqe->remote_qkey;
	req->has_imm = wqe->opcode == SRD_WQE_SEND_WITH_IMM ||
		       wqe->opcode == SRD_WQE_RDMA_WRITE_WITH_IMM;
	req->imm_data = be32_to_cpu(wqe->imm_data);
	req->solicited = wqe->flags & SRD_WQE_SOLICITED;
	req->len = len;
	req->rnr_retry = READ_ONCE(qp->rnr_retry);
	if (rdma) {
		req->kind = wqe->opcode == SRD_WQE_RDMA_READ ? SRD_MSG_READ :
							       SRD_MSG_WRITE;
		req->rdma.remote_addr = wqe->remote_addr;
		req->rdma.rkey = wqe->rkey;
		req->rdma.rdma_len = len;
	}

	/* The message's references; dropped when it completes. */
	refcount_inc(&qp->ref);
	atomic_inc(&qp->sq_inflight);
	if (nchunks > 1) {
		/* Every chunk goes from the work item, off this path. */
		INIT_DELAYED_WORK(&msg->chunk_work, srd_msg_chunk_work);
		queue_delayed_work(srd_wq, &msg->chunk_work, 0);
		return 0;
	}
	msg->next_chunk = 1;
	msg->chunks_busy = 1;
	srd_chunk_req(msg, 0, &first);
	ret = srd_kpeer_send(kp, &first, qp, msg->flush_gen);
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

/* Copy @len bytes of chunk @c at @offset into @dst, for a packet. */
int srd_msg_gather(struct srd_chunk *c, u32 offset, u8 *dst, u32 len)
{
	struct srd_send_msg *msg = c->msg;

	if (offset > c->len || len > c->len - offset)
		return -EINVAL;
	offset += c->off;
	if (msg->is_inline)
		memcpy(dst, msg->inline_data + offset, len);
	else
		srd_segs_copy(msg->seg, msg->nseg, offset, dst, len, false);
	return 0;
}

/* Complete the work request of @msg with @st, and free it. */
static void srd_send_msg_complete(struct srd_send_msg *msg,
				  enum srd_comp_status st)
{
	struct srd_qp *qp = msg->qp;
	struct srd_cqe cqe = {};

	bool post;

	srd_comp_status_to_wc(st, &cqe.status, &cqe.vendor_err);
	if (cqe.status == IB_WC_SUCCESS && READ_ONCE(msg->mr_gone)) {
		/* Not all the response bytes could be placed. */
		cqe.status = IB_WC_LOC_PROT_ERR;
		cqe.vendor_err = SRD_VERR_BAD_LKEY;
	}
	/* A QP being destroyed completes nothing more. */
	post = (cqe.status != IB_WC_SUCCESS || msg->signaled) &&
	       !READ_ONCE(qp->sq_dead);
	cqe.wr_id = msg->wr_id;
	cqe.opcode = srd_wqe_cqe_opcode(msg->opcode);
	cqe.byte_len = msg->len;
	cqe.qp_num = qp->ibqp.qp_num;
	srd_send_msg_free(msg);

	/*
	 * Room in the SQ, before the completion says so: a program that
	 * posts again on seeing it must find the slot free (perftest does,
	 * and failed with ENOMEM when the completion came first).
	 */
	atomic_dec(&qp->sq_inflight);
	srd_sq_publish(qp);
	if (post)
		srd_cq_post(qp->scq, &cqe);
	/* Pairs with srd_sq_has_room(): we see sq_blocked, or it sees room. */
	smp_mb();
	if (READ_ONCE(qp->sq_blocked))
		mod_delayed_work(srd_wq, &qp->sq_work, 0);
	srd_qp_put(qp);
}

/*
 * Submit the chunks of a multi-chunk work request, and complete it when
 * the last is done.  The only place such a message is freed: every
 * change of its chunk state and every queueing of this work happen under
 * msg->lock, so once the work sees the message finished with no further
 * run queued, nothing can touch it again.
 */
void srd_msg_chunk_work(struct work_struct *work)
{
	struct srd_send_msg *msg = container_of(to_delayed_work(work),
						struct srd_send_msg,
						chunk_work);
	struct srd_send_req req;
	enum srd_comp_status st;
	bool done;
	u32 i;
	int ret;

	for (;;) {
		spin_lock_bh(&msg->lock);
		if (msg->status != SRD_COMP_OK || READ_ONCE(msg->qp->sq_dead)) {
			/* Nothing more goes out; wait for what is out. */
			if (msg->status == SRD_COMP_OK)
				msg->status = SRD_COMP_FLUSHED;
			msg->next_chunk = msg->nchunks;
		}
		if (msg->next_chunk == msg->nchunks) {
			done = !msg->chunks_busy &&
			       !delayed_work_pending(&msg->chunk_work);
			st = msg->status;
			spin_unlock_bh(&msg->lock);
			if (done) {
				/* As from the transport's softirq. */
				local_bh_disable();
				srd_send_msg_complete(msg, st);
				local_bh_enable();
			}
			return;
		}
		i = msg->next_chunk;
		/* The immediate data goes last, once all else is in place. */
		if (i == msg->nchunks - 1 && msg->req.has_imm &&
		    msg->chunks_busy) {
			spin_unlock_bh(&msg->lock);
			return;
		}
		msg->next_chunk++;
		msg->chunks_busy++;
		spin_unlock_bh(&msg->lock);

		srd_chunk_req(msg, i, &req);
		ret = srd_kpeer_send(msg->kp, &req, msg->qp, msg->flush_gen);
		if (ret == SRD_SEND_OK)
			continue;
		spin_lock_bh(&msg->lock);
		msg->chunks_busy--;
		if (ret == SRD_SEND_BUSY) {
			/* The peer's queue is full: again in a moment. */
			msg->next_chunk--;
			queue_delayed_work(srd_wq, &msg->chunk_work, 1);
			spin_unlock_bh(&msg->lock);
			return;
		}
		if (msg->status == SRD_COMP_OK)
			msg->status = SRD_COMP_FLUSHED;
		spin_unlock_bh(&msg->lock);
	}
}

/*
 * The engine is done with chunk @c.  Under the peer's lock.  A SEND is
 * one chunk: it completes at once.  Remote failures complete the work
 * request in error and leave the QP as it is: SRD is connectionless, and
 * one unreachable or misbehaving peer must not stop a QP's traffic with
 * the others.
 */
void srd_msg_send_done(struct srd_chunk *c, enum srd_comp_status st)
{
	struct srd_send_msg *msg = c->msg;

	if (msg->nchunks == 1) {
		srd_send_msg_complete(msg, st);
		return;
	}
	spin_lock(&msg->lock);
	if (st != SRD_COMP_OK && msg->status == SRD_COMP_OK)
		msg->status = st;
	msg->chunks_busy--;
	/* To finish, or to send the immediate chunk, or to stop sending. */
	if (!msg->chunks_busy || st != SRD_COMP_OK)
		mod_delayed_work(srd_wq, &msg->chunk_work, 0);
	spin_unlock(&msg->lock);
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
	msg->kind = SRD_MSG_SEND;
	msg->nseg = nseg;
	msg->wr_id = wqe->wr_id;
	msg->opcode = SRD_CQE_RECV;
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

/* --- RDMA responder ------------------------------------------------- */

/*
 * An incoming WRITE or READ whose rkey passed the checks.  It holds the
 * target QP (and for WRITE_WITH_IMM the receive it claimed), not the MR:
 * each packet looks the rkey up again (srd_rdma_target_mr()).
 */
struct srd_rdma_target {
	enum srd_msg_kind kind;		/* SRD_MSG_WRITE or SRD_MSG_READ */
	struct srd_qp *qp;
	struct srd_mr *mr;		/* identity only: no reference */
	u32 rkey;
	int access;			/* IB_ACCESS_REMOTE_WRITE or _READ */
	u64 op_addr;			/* the whole operation: */
	u32 op_len;			/*   what each packet is checked for */
	u64 addr;			/* this message's first byte */
	u32 len;
	struct srd_recv_msg *imm;	/* WRITE_WITH_IMM: its receive */
};

static void srd_rdma_target_free(struct srd_rdma_target *t)
{
	srd_qp_put(t->qp);
	kfree(t);
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
				       t->op_len, t->access))) {
		srd_mr_put(mr);
		mr = NULL;
	}
	if (!mr)
		srd_count_one(t->qp->sdev, SRD_CNT_RDMA_RKEY_INVALID);
	return mr;
}

/*
 * The responder's checks (docs/protocol.md, "RDMA read and write"), then
 * for WRITE_WITH_IMM a receive.  Takes over the reference on @qp.
 */
static enum srd_rx_verdict srd_rdma_rx_begin(struct srd_qp *qp,
					     const union ib_gid *remote,
					     const struct srd_rx_msg_info *info,
					     void **handle)
{
	const struct srd_rdma_info *r = &info->rdma;
	struct srd_dev *sdev = qp->sdev;
	struct srd_rx_msg_info imm_info;
	enum srd_rx_verdict verdict;
	struct srd_rdma_target *t;
	struct srd_recv_msg *recv;
	struct srd_mr *mr = NULL;
	int why;

	if (!srd_qp_can_receive(READ_ONCE(qp->state))) {
		verdict = SRD_RX_QP_ERROR;
		goto out_put;
	}
	t = kzalloc(sizeof(*t), GFP_ATOMIC | __GFP_NOWARN);
	if (!t) {
		verdict = SRD_RX_QP_ERROR;
		goto out_put;
	}
	t->kind = info->kind;
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
			   SRD_CNT_RDMA_RKEY_INVALID;
		if (mr)
			srd_mr_put(mr);
		if (why) {
			srd_count_one(sdev, why);
			kfree(t);
			verdict = SRD_RX_BAD_ACCESS;
			goto out_put;
		}
		t->mr = mr;
	}
	if (info->kind == SRD_MSG_WRITE && info->has_imm) {
		/* Only the receive's existence matters: no bytes go to it. */
		imm_info = *info;
		imm_info.msg_len = 0;
		verdict = srd_claim_recv(qp, &imm_info, &recv);
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
	*handle = t;
	return SRD_RX_ACCEPT;

out_put:
	srd_qp_put(qp);
	return verdict;
}

/* WRITE: @len bytes at @offset of the message.  0, or -EACCES. */
static int srd_rdma_write(struct srd_rdma_target *t, u32 offset,
			  const u8 *data, u32 len)
{
	struct srd_mr *mr;
	int err;

	if (offset > t->len || len > t->len - offset)
		return -EINVAL;
	mr = srd_rdma_target_mr(t);
	if (!mr)
		return -EACCES;
	err = srd_mr_write(mr, t->addr + offset, data, len);
	srd_mr_put(mr);
	return err;
}

/* READ_RESP: the bytes of a response packet.  0, or SRD_TX_ABORT. */
int srd_msg_resp_gather(void *handle, u32 offset, u8 *dst, u32 len)
{
	struct srd_rdma_target *t = handle;
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

/* The READ_RESP of @handle is over: sent and ACKed, or failed. */
void srd_msg_resp_done(void *handle, enum srd_comp_status st)
{
	srd_rdma_target_free(handle);
}

/* Requester: response bytes of a READ chunk, into the local buffers. */
void srd_msg_read_data(struct srd_chunk *c, u32 offset, const u8 *data,
		       u32 len)
{
	struct srd_send_msg *msg = c->msg;

	if (offset > c->len || len > c->len - offset)
		return;
	if (srd_segs_copy(msg->seg, msg->nseg, c->off + offset, (u8 *)data,
			  len, true))
		WRITE_ONCE(msg->mr_gone, true);
}

/* --- the engine's receive upcalls ------------------------------------ */

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
	if (info->kind != SRD_MSG_SEND)
		return srd_rdma_rx_begin(qp, remote, info, handle);
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

int srd_msg_rx_data(void *handle, u32 offset, const u8 *data, u32 len)
{
	struct srd_recv_msg *msg = handle;

	if (msg->kind != SRD_MSG_SEND)
		return srd_rdma_write(handle, offset, data, len);
	if (offset > msg->len || len > msg->len - offset)
		return 0;
	return srd_segs_copy(msg->seg, msg->nseg, offset, (u8 *)data, len,
			     true);
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

	if (msg->kind != SRD_MSG_SEND) {
		struct srd_rdma_target *t = handle;

		if (t->imm)
			srd_msg_rx_done(t->imm);
		srd_rdma_target_free(t);
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
void srd_msg_rx_abort(void *handle)
{
	struct srd_recv_msg *msg = handle;
	struct srd_qp *qp = msg->qp;

	if (msg->kind != SRD_MSG_SEND) {
		struct srd_rdma_target *t = handle;

		if (t->imm)
			srd_msg_rx_abort(t->imm);
		srd_rdma_target_free(t);
		return;
	}

	if (srd_qp_can_receive(READ_ONCE(qp->state)))
		srd_recv_complete(qp, msg->wr_id, IB_WC_REM_ABORT_ERR,
				  SRD_VERR_REMOTE_ABORT);
	else
		srd_recv_complete(qp, msg->wr_id, IB_WC_WR_FLUSH_ERR,
				  SRD_VERR_FLUSH);
	srd_recv_msg_free(msg);
}
