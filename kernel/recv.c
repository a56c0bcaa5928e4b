// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the receive path of UD QPs, in softirq context: from the SRD
 * header of a datagram to a receive completion.
 */

#include <linux/skbuff.h>
#include <rdma/ib_pack.h>

#include "srd.h"
#include "wire.h"

struct srd_recv_seg {
	struct srd_mr *mr;
	u64 addr;
	u32 len;
};

struct srd_recv_ctx {
	const struct srd_wire_hdr *hdr;
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

static void srd_put_segs(struct srd_recv_seg *seg, u32 n)
{
	while (n--)
		srd_mr_put(seg[n].mr);
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
	struct srd_recv_seg seg[SRD_MAX_RECV_SGE];
	u32 need = SRD_GRH_BYTES + ctx->payload_len;
	u32 i, n = 0, total = 0, done, chunk, src_off;
	struct ib_grh grh;
	int err;
	u8 status = IB_WC_SUCCESS;

	lockdep_assert_held(&qp->rq_lock);

	*verr = SRD_VERR_NONE;
	if (wqe->num_sge > qp->rq.max_sge) {
		*verr = SRD_VERR_BAD_WQE;
		return IB_WC_LOC_LEN_ERR;
	}
	for (i = 0; i < wqe->num_sge && total < need; i++) {
		if (!sge[i].length)
			continue;
		seg[n].mr = srd_mr_get(qp->sdev, sge[i].lkey);
		if (!seg[n].mr) {
			*verr = SRD_VERR_BAD_LKEY;
			status = IB_WC_LOC_PROT_ERR;
			goto out;
		}
		seg[n].addr = sge[i].addr;
		seg[n].len = min(sge[i].length, need - total);
		*verr = srd_mr_check(seg[n].mr, qp->ibqp.pd, seg[n].addr,
				     seg[n].len, IB_ACCESS_LOCAL_WRITE);
		n++;
		if (*verr) {
			status = IB_WC_LOC_PROT_ERR;
			goto out;
		}
		total += seg[n - 1].len;
	}
	if (total < need) {
		*verr = SRD_VERR_RECV_TOO_SHORT;
		status = IB_WC_LOC_LEN_ERR;
		goto out;
	}

	/* The stream is the GRH, then the payload; segments cover it. */
	srd_build_grh(&grh, ctx);
	for (i = 0, done = 0; i < n; i++) {
		u64 addr = seg[i].addr;
		u32 left = seg[i].len;

		if (done < SRD_GRH_BYTES) {
			chunk = min(left, SRD_GRH_BYTES - done);
			if (srd_mr_write(seg[i].mr, addr, (u8 *)&grh + done,
					 chunk)) {
				/* Deregistered since it was found. */
				*verr = SRD_VERR_BAD_LKEY;
				status = IB_WC_LOC_PROT_ERR;
				goto out;
			}
			addr += chunk;
			left -= chunk;
			done += chunk;
		}
		if (left) {
			src_off = done - SRD_GRH_BYTES;
			err = srd_mr_write_skb(seg[i].mr, addr, ctx->skb,
					       ctx->payload_offset + src_off,
					       left);
			if (err == -EACCES) {
				*verr = SRD_VERR_BAD_LKEY;
				status = IB_WC_LOC_PROT_ERR;
				goto out;
			}
			if (err) {
				*verr = SRD_VERR_BAD_WQE;
				status = IB_WC_GENERAL_ERR;
				goto out;
			}
			done += left;
		}
	}
out:
	srd_put_segs(seg, n);
	return status;
}

static bool srd_qp_can_receive(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS;
}

/* Deliver a UD datagram to @qp.  Any context; takes rq_lock. */
static void srd_ud_deliver(struct srd_qp *qp, const struct srd_recv_ctx *ctx)
{
	struct srd_dev *sdev = qp->sdev;
	struct srd_ring *ring = qp->rq.ring;
	struct srd_cqe cqe = {};
	u32 prod, verr;
	u8 status;

	spin_lock_bh(&qp->rq_lock);
	if (!srd_qp_can_receive(qp->state)) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_QP_STATE);
		goto out;
	}
	/* Pairs with the provider's release store: slots before index. */
	prod = smp_load_acquire(&ring->ctl->prod);
	if (prod == qp->rq.cons || prod - qp->rq.cons > ring->num_entries) {
		/* No receive posted: UD drops the datagram. */
		srd_count_one(sdev, SRD_CNT_RX_DROP_NO_RECV);
		goto out;
	}
	memcpy(qp->rq.wqe, srd_ring_slot(ring, qp->rq.cons), ring->stride);
	qp->rq.cons++;

	status = srd_scatter(qp, ctx, &verr);
	/* The slot was copied before it is handed back. */
	smp_store_release(&ring->ctl->cons, qp->rq.cons);

	cqe.wr_id = ((struct srd_recv_wqe *)qp->rq.wqe)->wr_id;
	cqe.status = status;
	cqe.opcode = SRD_CQE_RECV;
	cqe.vendor_err = verr;
	cqe.qp_num = qp->ibqp.qp_num;
	if (status == IB_WC_SUCCESS) {
		cqe.byte_len = SRD_GRH_BYTES + ctx->payload_len;
		cqe.src_qp = be32_to_cpu(ctx->hdr->src_qpn) & 0xffffff;
		cqe.flags = SRD_CQE_GRH;
		if (ctx->hdr->opcode == SRD_OP_UD_SEND_WITH_IMM) {
			cqe.flags |= SRD_CQE_WITH_IMM;
			cqe.imm_data = ctx->hdr->imm_data;
		}
		if (ctx->hdr->flags & SRD_WF_SOLICITED)
			cqe.flags |= SRD_CQE_SOLICITED;
		cqe.slid = srd_ah_find_ahn(sdev, ctx->sgid);
		memcpy(cqe.sgid, ctx->sgid->raw, sizeof(cqe.sgid));
	}
	srd_cq_post(qp->rcq, &cqe);

	if (status != IB_WC_SUCCESS) {
		srd_count_one(sdev, SRD_CNT_WQE_ERRORS);
		srd_qp_set_error(qp);
	} else {
		srd_count_one(sdev, SRD_CNT_RX_PACKETS);
		srd_count(sdev, SRD_CNT_RX_BYTES, ctx->payload_len);
	}
out:
	spin_unlock_bh(&qp->rq_lock);
}

/*
 * A datagram for @sdev.  The SRD header is at @hdr_offset, its first
 * SRD_WIRE_COMMON_BYTES in the linear area.  The caller owns, and frees,
 * the skb.
 */
void srd_recv(struct srd_dev *sdev, struct sk_buff *skb, int hdr_offset,
	      const union ib_gid *sgid, const union ib_gid *dgid, u8 hop_limit)
{
	const u8 *common = skb->data + hdr_offset;
	const struct srd_wire_hdr *hdr;
	struct srd_recv_ctx ctx;
	struct srd_qp *qp;
	u32 hdr_len;

	/* SRD transport packets go to the engine, which checks the rest. */
	if (common[0] == SRD_WIRE_VERSION && common[1] >= SRD_WOP_FIRST &&
	    common[1] <= SRD_WOP_LAST) {
		srd_transport_recv(sdev, skb, hdr_offset, sgid, dgid);
		return;
	}
	if (!pskb_may_pull(skb, hdr_offset + SRD_WIRE_HDR_BYTES)) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_BAD_HDR);
		return;
	}
	hdr = (const void *)(skb->data + hdr_offset);
	hdr_len = hdr->hdr_len_words * 4;
	if (hdr->version != SRD_WIRE_VERSION || hdr_len < SRD_WIRE_HDR_BYTES ||
	    hdr_offset + hdr_len > skb->len ||
	    (hdr->opcode != SRD_OP_UD_SEND &&
	     hdr->opcode != SRD_OP_UD_SEND_WITH_IMM)) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_BAD_HDR);
		return;
	}
	ctx = (struct srd_recv_ctx){
		.hdr = hdr,
		.skb = skb,
		.payload_offset = hdr_offset + hdr_len,
		.payload_len = skb->len - hdr_offset - hdr_len,
		.sgid = sgid,
		.dgid = dgid,
		.hop_limit = hop_limit,
	};

	qp = srd_qp_get(sdev, be32_to_cpu(hdr->dst_qpn) & 0xffffff);
	if (!qp) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_NO_QP);
		return;
	}
	if (qp->ibqp.qp_type != IB_QPT_UD)
		srd_count_one(sdev, SRD_CNT_RX_DROP_NO_QP);
	else if (be32_to_cpu(hdr->qkey) != READ_ONCE(qp->qkey))
		srd_count_one(sdev, SRD_CNT_RX_DROP_QKEY);
	else
		srd_ud_deliver(qp, &ctx);
	srd_qp_put(qp);
}
