// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the rules of a send WQE, UD or SRD, checked in one place
 * before the doorbell hands the WQE to ud.c or requester.c, and how EFA's
 * counters count it once processed.  What each opcode may do is
 * SRD_WQE_OPCODES' (uapi/rdma/srd-abi.h), read through srd_wqe_rule(), as
 * the provider reads it.
 */

#include "srd.h"
#include "message.h"

/*
 * The payload of @wqe: inline data within the QP's limit and its ring
 * slot, else at most @max_sge SGEs.  Sets *len (U32_MAX if the SGEs add
 * up to more); false if the WQE is malformed.
 */
static bool srd_wqe_payload(struct srd_qp *qp, const struct srd_send_wqe *wqe,
			    u32 max_sge, u32 *len)
{
	u32 max_inline_room = qp->sq.ring->stride - sizeof(*wqe);

	if (wqe->flags & SRD_WQE_INLINE) {
		*len = wqe->inline_len;
		return *len <= qp->max_inline && *len <= max_inline_room;
	}
	if (wqe->num_sge > max_sge)
		return false;
	*len = srd_sge_len((const void *)(wqe + 1), wqe->num_sge);
	return true;
}

/* The longest payload a work request of @rule may carry on @qp. */
static u32 srd_wqe_max_len(struct srd_qp *qp, struct srd_wqe_rule rule)
{
	if (!qp->is_srd)
		return srd_port_mtu_bytes(qp->sdev);
	if (rule.rules & SRD_WQE_RULE_RDMA)
		return SRD_MAX_RDMA_BYTES;
	return srd_max_srd_msg_bytes(qp->sdev);
}

/*
 * Check send WQE @wqe of @qp: its opcode is one @qp's type and its
 * device's profile take (the efa profiles have no RDMA write), a READ
 * is not inline, its payload is well formed and within the limit.
 * Sets *rule and *len (also res->byte_len); false, with @res set to the
 * completion's error, if the WQE breaks a rule.
 */
bool srd_wqe_check(struct srd_qp *qp, const struct srd_send_wqe *wqe,
		   struct srd_wqe_rule *rule, u32 *len,
		   struct srd_send_result *res)
{
	const struct srd_limits *lim = &qp->sdev->limits;
	u32 max_sge = qp->sq.max_sge;

	*rule = srd_wqe_rule(wqe->opcode);
	*len = 0;
	if (!(rule->qps & (qp->is_srd ? SRD_WQE_ON_SRD : SRD_WQE_ON_UD)) ||
	    (rule->cap & lim->device_caps) != rule->cap) {
		srd_send_fail(res, IB_WC_LOC_QP_OP_ERR, SRD_VERR_BAD_OPCODE);
		return false;
	}
	if (rule->rules & SRD_WQE_RULE_RDMA)
		max_sge = min(max_sge, lim->max_rdma_sge);
	if (((wqe->flags & SRD_WQE_INLINE) &&
	     (rule->rules & SRD_WQE_RULE_REMOTE_READ)) ||
	    !srd_wqe_payload(qp, wqe, max_sge, len)) {
		srd_send_fail(res, IB_WC_LOC_LEN_ERR, SRD_VERR_BAD_WQE);
		return false;
	}
	res->byte_len = *len;
	if (*len > srd_wqe_max_len(qp, *rule)) {
		srd_send_fail(res, IB_WC_LOC_LEN_ERR, SRD_VERR_MSG_TOO_LONG);
		return false;
	}
	return true;
}

/* The Q_Key a send WQE names: with the high bit set, the QP's own. */
u32 srd_wqe_qkey(const struct srd_qp *qp, const struct srd_send_wqe *wqe)
{
	return wqe->remote_qkey & 0x80000000 ? READ_ONCE(qp->qkey) :
					       wqe->remote_qkey;
}

/*
 * A send-queue work request the device processed, as EFA's counters count
 * it: every one of its kind, the bytes of those that succeeded, and for
 * RDMA those that failed.  A SEND has no error counter on EFA.
 */
void srd_count_sq_wr(struct srd_dev *sdev, u8 wqe_opcode, u8 status, u32 len)
{
	bool ok = status == IB_WC_SUCCESS;

	/* Every opcode counted: -Wswitch fails the build for one left out. */
	switch ((enum srd_wqe_opcode)wqe_opcode) {
	case SRD_WQE_SEND:
	case SRD_WQE_SEND_WITH_IMM:
		srd_count_one(sdev, SRD_CNT_SEND_WRS);
		if (ok)
			srd_count(sdev, SRD_CNT_SEND_BYTES, len);
		break;
	case SRD_WQE_RDMA_READ:
		srd_count_one(sdev, SRD_CNT_RDMA_READ_WRS);
		if (ok)
			srd_count(sdev, SRD_CNT_RDMA_READ_BYTES, len);
		else
			srd_count_one(sdev, SRD_CNT_RDMA_READ_WR_ERR);
		break;
	case SRD_WQE_RDMA_WRITE:
	case SRD_WQE_RDMA_WRITE_WITH_IMM:
		srd_count_one(sdev, SRD_CNT_RDMA_WRITE_WRS);
		if (ok)
			srd_count(sdev, SRD_CNT_RDMA_WRITE_BYTES, len);
		else
			srd_count_one(sdev, SRD_CNT_RDMA_WRITE_WR_ERR);
		break;
	}
}
