// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: UD QPs' datagrams, both ways.  A send goes out at once from
 * the doorbell (sq.c), in process context; a datagram received, in
 * softirq context, goes from its SRD header to a receive completion.
 */

#include <linux/jhash.h>
#include <linux/skbuff.h>
#include <net/ipv6.h>
#include <rdma/ib_pack.h>

#include "srd.h"
#include "message.h"

/*
 * The UDP source port of a UD flow: fixed for a (source QP, destination
 * QP) pair, so one flow keeps one path and its order.
 */
static u16 srd_ud_src_port(u32 src_qpn, u32 dst_qpn)
{
	return srd_wire_src_port(jhash_2words(src_qpn, dst_qpn, 0));
}

/* Gather the SGEs of a UD send into @dst.  Returns a vendor error. */
static u32 srd_gather(struct srd_qp *qp, const struct srd_sge *sge,
		      u32 num_sge, u8 *dst, u32 len)
{
	struct srd_msg_seg seg[SRD_MAX_SEND_SGE];
	u32 n, verr;

	verr = srd_segs_get(qp, sge, num_sge, 0, len, seg, &n);
	if (verr)
		return verr;
	srd_segs_copy(seg, n, 0, dst, len, false);
	srd_segs_put(seg, n);
	return SRD_VERR_NONE;
}

void srd_ud_send(struct srd_qp *qp, const struct srd_send_wqe *wqe,
		 struct srd_wqe_rule rule, u32 len, struct srd_send_result *res)
{
	struct srd_dev *sdev = qp->sdev;
	const struct srd_sge *sge = (const void *)(wqe + 1);
	struct srd_ud_hdr hdr;
	union ib_gid sgid, dgid;
	struct sk_buff *skb;
	u32 verr;
	int err;

	if (!srd_ah_lookup(sdev, wqe->ahn, &sgid, &dgid))
		return srd_send_fail(res, IB_WC_LOC_QP_OP_ERR, SRD_VERR_BAD_AH);

	skb = srd_xmit_alloc(sdev, SRD_HDR_UD_BYTES + len, GFP_KERNEL);
	if (!skb)
		return srd_send_fail(res, IB_WC_GENERAL_ERR, SRD_VERR_NOMEM);

	hdr = (struct srd_ud_hdr){
		.opcode = rule.rules & SRD_WQE_RULE_IMM ?
			  SRD_OP_UD_SEND_WITH_IMM : SRD_OP_UD_SEND,
		.flags = wqe->flags & SRD_WQE_SOLICITED ? SRD_WF_UD_SOLICITED : 0,
		.dst_qpn = wqe->remote_qpn,
		.src_qpn = qp->ibqp.qp_num,
		.qkey = srd_wqe_qkey(qp, wqe),
		.imm_data = be32_to_cpu(wqe->imm_data),
	};
	srd_wire_put_ud(skb_put(skb, SRD_HDR_UD_BYTES), &hdr);

	if (wqe->flags & SRD_WQE_INLINE) {
		skb_put_data(skb, wqe + 1, len);
	} else {
		verr = srd_gather(qp, sge, wqe->num_sge, skb_put(skb, len),
				  len);
		if (verr) {
			kfree_skb(skb);
			return srd_send_fail(res, IB_WC_LOC_PROT_ERR, verr);
		}
	}

	err = srd_xmit(sdev, skb, &sgid, &dgid,
		       srd_ud_src_port(qp->ibqp.qp_num, wqe->remote_qpn));
	if (err) {
		/* A datagram service: the loss is counted, not fatal. */
		srd_count_one(sdev, SRD_CNT_TX_ERRORS);
		ibdev_dbg_ratelimited(&sdev->ibdev, "QP %u: send to %pI6 failed: %d\n",
				      qp->ibqp.qp_num, dgid.raw, err);
		return;
	}
	srd_count_one(sdev, SRD_CNT_TX_PACKETS);
}

/* --- receive ---------------------------------------------------------- */

struct srd_recv_ctx {
	struct srd_ud_hdr hdr;
	const struct sk_buff *skb;
	int payload_offset;
	u32 payload_len;
	const union ib_gid *sgid;
	const union ib_gid *dgid;
	u8 hop_limit;
};

/*
 * The 40-byte GRH that precedes the payload in a UD receive buffer: an
 * IBA GRH (IPv6 layout) naming the sender and the receiver by GID,
 * IPv4-mapped for IPv4.
 */
static void srd_build_grh(struct ib_grh *grh, const struct srd_recv_ctx *ctx)
{
	memset(grh, 0, sizeof(*grh));
	grh->version_tclass_flow = cpu_to_be32(6 << 28);
	grh->paylen = cpu_to_be16(ctx->payload_len);
	grh->next_hdr = 0x1b;
	grh->hop_limit = ctx->hop_limit;
	grh->sgid = *ctx->sgid;
	grh->dgid = *ctx->dgid;
}

/*
 * Scatter the GRH and the payload into the receive WQE in qp->rq.wqe.
 * Under rq_lock.  Returns the completion status; *verr says why.
 */
static u8 srd_scatter(struct srd_qp *qp, const struct srd_recv_ctx *ctx,
		      u32 *verr)
{
	struct srd_recv_wqe *wqe = qp->rq.wqe;
	const struct srd_sge *sge = (const void *)(wqe + 1);
	struct srd_msg_seg seg[SRD_MAX_RECV_SGE];
	u32 need = SRD_GRH_BYTES + ctx->payload_len, n;
	struct ib_grh grh;
	u8 status;
	int err;

	lockdep_assert_held(&qp->rq_lock);

	if (wqe->num_sge > qp->rq.max_sge) {
		*verr = SRD_VERR_BAD_WQE;
		return IB_WC_LOC_LEN_ERR;
	}
	*verr = srd_segs_get(qp, sge, wqe->num_sge, IB_ACCESS_LOCAL_WRITE,
			     need, seg, &n);
	if (*verr)
		return IB_WC_LOC_PROT_ERR;
	if (srd_segs_len(seg, n) < need) {
		*verr = SRD_VERR_RECV_TOO_SHORT;
		status = IB_WC_LOC_LEN_ERR;
		goto out;
	}

	/* The stream is the GRH, then the payload; segments cover it. */
	srd_build_grh(&grh, ctx);
	err = srd_segs_copy(seg, n, 0, (u8 *)&grh, SRD_GRH_BYTES, true);
	if (!err)
		err = srd_segs_write_skb(seg, n, SRD_GRH_BYTES, ctx->skb,
					 ctx->payload_offset,
					 ctx->payload_len);
	/* -EACCES: deregistered since it was found. */
	*verr = !err ? SRD_VERR_NONE :
		err == -EACCES ? SRD_VERR_BAD_LKEY : SRD_VERR_BAD_WQE;
	status = !err ? IB_WC_SUCCESS :
		 err == -EACCES ? IB_WC_LOC_PROT_ERR : IB_WC_GENERAL_ERR;
out:
	srd_segs_put(seg, n);
	return status;
}

/*
 * Whether the datagram is longer than the receive copied in qp->rq.wqe
 * can hold.  A WQE with more SGEs than the QP allows is not judged here:
 * srd_scatter() fails it.
 */
static bool srd_ud_too_long(const struct srd_qp *qp,
			    const struct srd_recv_ctx *ctx)
{
	const struct srd_recv_wqe *wqe = qp->rq.wqe;

	if (wqe->num_sge > qp->rq.max_sge)
		return false;
	return srd_sge_len((const void *)(wqe + 1), wqe->num_sge) <
	       SRD_GRH_BYTES + ctx->payload_len;
}

/* Deliver a UD datagram to @qp.  Any context; takes rq_lock. */
static void srd_ud_deliver(struct srd_qp *qp, const struct srd_recv_ctx *ctx)
{
	struct srd_dev *sdev = qp->sdev;
	struct srd_recv_from from = {
		.sgid = ctx->sgid,
		.src_qpn = ctx->hdr.src_qpn,
		.flags = SRD_CQE_GRH,
	};
	u32 verr;
	u64 wr_id;
	u8 status;

	spin_lock_bh(&qp->rq_lock);
	if (!srd_qp_can_receive(qp->state)) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	if (srd_rq_peek(qp)) {
		/* None posted (or a broken ring): UD drops the datagram. */
		srd_count_one(sdev, SRD_CNT_RX_DROP_NO_RECV);
		goto out;
	}
	/*
	 * Too big for the receive: the sender's fault, and anyone who knows
	 * the QPN and Q_Key can send one, so the datagram is dropped and the
	 * receive stays posted (IBA's class D, as rxe does).
	 */
	if (srd_ud_too_long(qp, ctx)) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_TOO_LONG);
		goto out;
	}
	srd_rq_consume(qp);
	wr_id = ((struct srd_recv_wqe *)qp->rq.wqe)->wr_id;
	status = srd_scatter(qp, ctx, &verr);
	if (status != IB_WC_SUCCESS) {
		srd_complete(qp->rcq, qp, wr_id, SRD_CQE_RECV, status, verr, 0);
		srd_count_one(sdev, SRD_CNT_WQE_ERRORS);
		srd_qp_set_error(qp);
		goto out;
	}
	if (ctx->hdr.opcode == SRD_OP_UD_SEND_WITH_IMM) {
		from.flags |= SRD_CQE_WITH_IMM;
		from.imm_data = cpu_to_be32(ctx->hdr.imm_data);
	}
	if (ctx->hdr.flags & SRD_WF_UD_SOLICITED)
		from.flags |= SRD_CQE_SOLICITED;
	srd_complete_recv(qp, wr_id, SRD_CQE_RECV,
			  SRD_GRH_BYTES + ctx->payload_len, &from);
	srd_count_one(sdev, SRD_CNT_RX_PACKETS);
	srd_count_one(sdev, SRD_CNT_RECV_WRS);
	srd_count(sdev, SRD_CNT_RECV_BYTES, ctx->payload_len);
out:
	spin_unlock_bh(&qp->rq_lock);
}

/*
 * A UD datagram for @sdev (socket.c sends the SRD transport's packets to
 * transport.c).  The SRD header is at @hdr_offset, its first
 * SRD_HDR_COMMON_BYTES in the linear area.  The caller owns, and frees,
 * the skb.
 */
void srd_ud_recv(struct srd_dev *sdev, struct sk_buff *skb, int hdr_offset,
		 const union ib_gid *sgid, const union ib_gid *dgid,
		 u8 hop_limit)
{
	struct srd_recv_ctx ctx;
	struct srd_qp *qp;

	/* The parser reads the UD header's fields: make them linear. */
	if (!pskb_may_pull(skb, hdr_offset + min_t(u32, SRD_HDR_UD_BYTES,
						   skb->len - hdr_offset)) ||
	    srd_wire_parse_ud(skb->data + hdr_offset, skb->len - hdr_offset,
			      &ctx.hdr)) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_BAD_HDR);
		return;
	}
	ctx.skb = skb;
	ctx.payload_offset = hdr_offset + ctx.hdr.hdr_len;
	ctx.payload_len = skb->len - ctx.payload_offset;
	ctx.sgid = sgid;
	ctx.dgid = dgid;
	ctx.hop_limit = hop_limit;

	qp = srd_qp_get(sdev, ctx.hdr.dst_qpn);
	if (!qp) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_NO_QP);
		return;
	}
	if (qp->ibqp.qp_type != IB_QPT_UD)
		srd_count_one(sdev, SRD_CNT_RX_DROP_NO_QP);
	else if (ctx.hdr.qkey != READ_ONCE(qp->qkey))
		srd_count_one(sdev, SRD_CNT_RX_DROP_QKEY);
	else
		srd_ud_deliver(qp, &ctx);
	srd_qp_put(qp);
}
