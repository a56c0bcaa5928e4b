/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the messages between the verbs queues and the wire, as the
 * files that handle them share them: segs.c (their local memory, UD's
 * too), requester.c (SRD sends and RDMA requests), responder.c (every
 * incoming message, the engine's receive upcalls), sq.c and ud.c (UD
 * datagrams).
 */
#ifndef _SRD_MESSAGE_H
#define _SRD_MESSAGE_H

/* One SGE of a work request, with its MR held. */
struct srd_msg_seg {
	struct srd_mr *mr;
	u64 addr;
	u32 len;
};

/*
 * A SEND, WRITE or READ work request on its way: the engine's struct
 * srd_outbound (engine/srd_engine.h), which it hands back in transmit,
 * read_data and send_done.
 */
struct srd_outbound {
	struct srd_qp *qp;
	u64 wr_id;
	u32 len;
	u8 opcode;			/* enum srd_wqe_opcode */
	bool signaled;
	bool is_inline;
	bool mr_gone;			/* a READ's MR was deregistered */
	u32 flush_gen;			/* the QP's, when it was built */
	struct srd_kpeer *kp;
	u32 bytes;			/* allocated: srd_outbound_alloc() */
	u32 nseg;
	union {
		DECLARE_FLEX_ARRAY(struct srd_msg_seg, seg);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

/*
 * The engine's struct srd_inbound, an incoming message (what rx_begin
 * returns): the first member of a struct srd_recv_msg (SRD_MSG_SEND) or
 * of a struct srd_rdma_target (SRD_MSG_WRITE or SRD_MSG_READ), by its
 * kind; srd_inbound_recv() and srd_inbound_rdma() reach the container.
 */
struct srd_inbound {
	enum srd_msg_kind kind;
};

struct srd_recv_msg {
	struct srd_inbound in;		/* SRD_MSG_SEND */
	struct srd_qp *qp;
	u64 wr_id;
	u32 len;
	u8 opcode;			/* SRD_CQE_RECV or _RECV_RDMA_WITH_IMM */
	u32 src_qpn;
	u32 imm_data;
	bool has_imm;
	bool solicited;
	bool unsolicited;		/* consumed no receive: wr_id 0 */
	union ib_gid sgid;
	u32 bytes;			/* allocated: srd_recv_msg_alloc() */
	u32 nseg;
	struct srd_msg_seg seg[];
};

/*
 * An incoming WRITE or READ whose rkey passed the checks.  It holds the
 * target QP (and for WRITE_WITH_IMM the receive it claimed, or on a QP
 * with unsolicited_write_recv one that claimed none), not the MR:
 * each packet looks the rkey up again (srd_rdma_target_mr()).
 */
struct srd_rdma_target {
	struct srd_inbound in;		/* SRD_MSG_WRITE or SRD_MSG_READ */
	struct srd_qp *qp;
	struct srd_mr *mr;		/* identity only: no reference */
	u32 rkey;
	int access;			/* IB_ACCESS_REMOTE_WRITE or _READ */
	u64 op_addr;			/* the whole operation: */
	u32 op_len;			/*   what each packet is checked for */
	u64 addr;			/* this message's first byte */
	u32 len;
	struct srd_recv_msg *imm;	/* WRITE_WITH_IMM: its completion */
};

static inline struct srd_recv_msg *srd_inbound_recv(struct srd_inbound *in)
{
	WARN_ON_ONCE(in->kind != SRD_MSG_SEND);
	return container_of(in, struct srd_recv_msg, in);
}

static inline struct srd_rdma_target *srd_inbound_rdma(struct srd_inbound *in)
{
	WARN_ON_ONCE(in->kind == SRD_MSG_SEND);
	return container_of(in, struct srd_rdma_target, in);
}

static inline bool srd_qp_can_receive(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS;
}

/* segs.c */
void srd_segs_put(struct srd_msg_seg *seg, u32 n);
u32 srd_segs_get(struct srd_qp *qp, const struct srd_sge *sge,
		 u32 num_sge, int access, u32 limit,
		 struct srd_msg_seg *seg, u32 *nseg);
int srd_segs_copy(struct srd_msg_seg *seg, u32 nseg, u32 offset,
		  u8 *buf, u32 len, bool to_mr);
u32 srd_segs_len(const struct srd_msg_seg *seg, u32 nseg);
u32 srd_sge_len(const struct srd_sge *sge, u32 num_sge);
int srd_segs_write_skb(struct srd_msg_seg *seg, u32 nseg, u32 offset,
		       const struct sk_buff *skb, int skb_off, u32 len);

#endif
