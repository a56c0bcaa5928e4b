/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the SRD messages between the verbs queues and the engine, as
 * the files that handle them share them: segs.c (their local memory),
 * requester.c (sends and RDMA requests), receiver.c (incoming messages,
 * the engine's receive upcalls), responder.c (incoming RDMA).
 */
#ifndef _SRD_MESSAGE_H
#define _SRD_MESSAGE_H

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

/* receiver.c */
enum srd_rx_verdict srd_receiver_claim(struct srd_qp *qp,
				       const struct srd_rx_msg_info *info,
				       struct srd_recv_msg **msgp);

/* responder.c */
void srd_responder_free(struct srd_rdma_target *t);
enum srd_rx_verdict srd_responder_begin(struct srd_qp *qp,
					const union ib_gid *remote,
					const struct srd_rx_msg_info *info,
					void **handle);
int srd_responder_write(struct srd_rdma_target *t, u32 offset,
			const u8 *data, u32 len);

#endif
