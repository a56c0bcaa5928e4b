/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * messages (msg.c): the sender's, and the receiver's slots.
 */
#ifndef SRD_ENGINE_MSG_H
#define SRD_ENGINE_MSG_H

#include "peer.h"
#include "wire.h"

enum srd_tx_msg_state {
	SRD_TXM_QUEUED = 0,	/* posted, waiting for a message id */
	SRD_TXM_ACTIVE,		/* has an id; segments being sent */
	SRD_TXM_RNR_WAIT,	/* out of the window, in its QPs' RNR gate (rnr.c) */
	SRD_TXM_AWAIT_RESP,	/* READ: request ACKed, out of the window,
				 * on peer->awaiting until its response
				 */
};

/*
 * An RDMA operation of more than one chunk (rdma_op.c).  It lives while
 * any of its chunks does: chunks_out counts those queued or started, the
 * held one apart.
 */
struct srd_tx_op {
	struct srd_outbound *out;	/* the OS's request, for send_done */
	uint32_t chunks_out;
	struct srd_tx_msg *held;	/* WRITE_WITH_IMM: its last chunk */
	enum srd_comp_status status;	/* the first failure */
};

/*
 * A message's per-segment bitmaps (acked, placed) of up to this many
 * bytes live in its struct: no allocation, and no free, for a message
 * of up to 128 segments (1 MiB in 9000-byte packets), nearly every one.
 */
#define SRD_MSG_BITS_INLINE	16

/*
 * Freed messages a peer keeps for its next sends, rather than give each
 * back to the OS and ask for another (srd_tx_msg_alloc()).
 */
#define SRD_TX_MSG_CACHE	4

struct srd_tx_msg {
	/*
	 * The pending queue, peer->awaiting, peer->rnr_gates (a gate's
	 * head), or the messages behind a gate's head.
	 */
	struct srd_tx_msg *next;
	union {
		/* AWAIT_RESP: on peer->resp_due_head's list, by deadline */
		struct {
			struct srd_tx_msg *due_prev, *due_next;
		};
		/* RNR_WAIT, a gate's head: those behind it, on ->next */
		struct {
			struct srd_tx_msg *rnr_behind, *rnr_behind_tail;
		};
		/* QUEUED, its QP's first: the next QP's, its own last */
		struct {
			struct srd_tx_msg *flow_next, *flow_tail;
		};
	};
	/* The OS's object, by kind: */
	struct srd_outbound *out;	/* SEND, WRITE, READ */
	struct srd_inbound *resp_src;	/* READ_RESP: the READ's target */
	struct srd_tx_op *op;		/* a chunk of it, or NULL */
	uint32_t op_off;		/* the chunk's first byte in the op */
	enum srd_msg_kind kind;
	struct srd_rdma_info rdma;	/* WRITE, READ */
	uint32_t req_msg_id;		/* READ_RESP: the READ it answers */
	uint8_t req_attempt;
	bool resp_claimed;		/* READ: a response is being placed */
	struct srd_rx_slot *resp_slot;	/* READ: the slot it claimed last */
	uint64_t resp_deadline_us;	/* READ: fail if no progress by then */
	uint32_t src_qpn, dst_qpn, qkey, imm_data;
	bool has_imm, solicited;
	uint8_t rnr_retry;
	uint8_t attempt;
	enum srd_tx_msg_state state;
	uint32_t len, nsegs;
	uint32_t seg_bytes;		/* payload per packet (kind's header) */
	uint32_t msg_id;
	uint32_t next_seg;		/* first segment never sent this attempt */
	uint32_t segs_acked;
	union {
		/* A gate's head: when it goes as the probe (none: one is out) */
		uint64_t rnr_until_us;
		/* QUEUED, its QP's first: how many of its QP's are queued */
		uint32_t flow_queued;
	};
	uint8_t *acked;			/* nsegs bits, while ACTIVE */
	uint32_t acked_bytes;		/* size of the acked bitmap */
	uint8_t rnr_naks;		/* RNR NAKs it drew, saturating */
	bool rnr_probe;			/* sent again to try its receiver */
	/*
	 * A gate's head: its probes NAKed in a row (the gate's first NAK
	 * included, saturating), and taken in a row (0 or 1; rnr.c)
	 */
	uint8_t rnr_gate_naks : 7, rnr_gate_taken : 1;
	uint8_t acked_inline[SRD_MSG_BITS_INLINE];	/* acked, if it fits */
};

enum srd_rx_slot_state {
	SRD_RXS_FREE = 0,
	SRD_RXS_ASSEMBLING,	/* receive claimed; segments arriving */
	SRD_RXS_COMPLETE,	/* delivered; later copies are duplicates */
	SRD_RXS_RNR,		/* attempt `attempt` was refused for RNR */
	SRD_RXS_REJECTED,	/* refused for good with nak_reason */
};

struct srd_rx_slot {
	enum srd_rx_slot_state state;
	/* A READ_RESP: placed into our READ req_msg_id, no OS object. */
	bool is_resp;
	uint32_t req_msg_id;
	/*
	 * ... and that READ, found once by claim (its id may have left the
	 * window); NULL once freed (srd_tx_msg_free), as it may be while the
	 * response is still arriving.
	 */
	struct srd_tx_msg *read;
	uint32_t msg_id;
	uint8_t attempt, nak_reason;
	uint32_t msg_len, seg_bytes, nsegs, segs_placed;
	uint32_t dst_qpn;
	struct srd_inbound *in;		/* rx_begin's; NULL for a READ_RESP */
	uint8_t *placed;		/* nsegs bits, while ASSEMBLING */
	uint32_t placed_bytes;
	uint8_t placed_inline[SRD_MSG_BITS_INLINE];	/* placed, if it fits */
	uint64_t progress_us;		/* ASSEMBLING: last new segment */
	uint32_t progress_segs;		/* ... and peer->rx_new_segs then */
	uint64_t hold_until_us;		/* ... aborted then, however slow */
};

uint32_t srd_msg_nsegs(uint32_t len, uint32_t seg_bytes);
uint32_t srd_msg_seg_bytes(const struct srd_config *cfg, enum srd_msg_kind kind);
struct srd_tx_msg *srd_tx_msg_alloc(struct srd_peer *peer,
				    const struct srd_send_req *req);
bool srd_tx_msg_activate(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_tx_msg_deactivate(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_tx_msg_free(struct srd_peer *peer, struct srd_tx_msg *m);
/* Give the messages the peer keeps for its next sends back to the OS. */
void srd_tx_msg_cache_drain(struct srd_peer *peer);

void srd_rx_slot_release(struct srd_peer *peer, struct srd_rx_slot *s,
			 bool abort);
void srd_rx_slot_reject(struct srd_peer *peer, struct srd_rx_slot *s,
			bool abort, uint8_t reason);
/* The receiver side of one DATA packet; see msg.c for the verdicts. */
enum srd_rx_data_verdict {
	SRD_RXD_PLACED,		/* new data placed: ACK */
	SRD_RXD_DUPLICATE,	/* already had it: ACK */
	SRD_RXD_NAK,		/* refused: NAK with *reason */
	SRD_RXD_DROP,		/* stale or malformed: nothing */
};

enum srd_rx_data_verdict srd_rx_msg_on_data(struct srd_peer *peer,
					    const struct srd_pkt *p,
					    uint64_t now_us, uint8_t *reason);
/* Abort the receives whose sender stopped (peer_timeout_us). */
void srd_rx_msg_on_timer(struct srd_peer *peer, uint64_t now_us);
void srd_rx_msg_slide(struct srd_peer *peer, uint32_t new_base);

#endif /* SRD_ENGINE_MSG_H */
