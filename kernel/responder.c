// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the RDMA responder (docs/protocol.md, "RDMA read and write").
 * An incoming WRITE or READ becomes a struct srd_rdma_target once its
 * rkey passed the checks; for a WRITE the engine writes into it
 * (srd_responder_write), for a READ it reads the response from it
 * (srd_responder_gather).
 *
 * A target holds its QP but not the remote's MR: that MR is looked up by
 * rkey and checked again for each packet, so a deregistration is never
 * held up by a remote peer and no byte moves to or from its pages after
 * it.
 */

#include <linux/slab.h>
#include <linux/workqueue.h>

#include "srd.h"
#include "message.h"

static void srd_responder_free(struct srd_rdma_target *t)
{
	srd_qp_put(t->qp);
	kfree(t);
}

/*
 * The engine is done with incoming WRITE @t: all of it placed (@done),
 * or never to be.  A WRITE_WITH_IMM's receive completes with it.
 */
void srd_responder_finish(struct srd_rdma_target *t, bool done)
{
	if (done && t->in.kind == SRD_MSG_WRITE)
		srd_count(t->qp->sdev, SRD_CNT_RDMA_WRITE_RECV_BYTES, t->len);
	if (t->imm && done)
		srd_receiver_recv_done(t->imm);
	else if (t->imm)
		srd_receiver_recv_abort(t->imm);
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
enum srd_rx_verdict srd_responder_begin(struct srd_qp *qp,
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
			verdict = srd_receiver_unsolicited(qp, &recv);
		else
			verdict = srd_receiver_claim(qp, &imm_info, &recv);
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
int srd_responder_write(struct srd_rdma_target *t, u32 offset,
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
void srd_responder_done(struct srd_inbound *in, enum srd_comp_status st)
{
	struct srd_rdma_target *t = srd_inbound_rdma(in);

	if (st == SRD_COMP_OK)
		srd_count(t->qp->sdev, SRD_CNT_RDMA_READ_RESP_BYTES, t->len);
	srd_responder_free(t);
}
