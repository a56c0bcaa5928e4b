/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals: the per-peer state and the functions the
 * engine's files call in one another.  Not for the OS layer; the unit
 * tests include it.
 *
 * Lifetime: a peer and everything hanging off it (windows, paths,
 * messages) is allocated through ops->alloc and freed by
 * srd_peer_destroy().  Everything is owned by exactly one peer; nothing
 * is shared between peers except the engine's config, ops and counters.
 * Serialisation: see srd_engine.h (one caller at a time per peer).
 */
#ifndef SRD_INTERNAL_H
#define SRD_INTERNAL_H

#include "srd_engine.h"

/* --- serial-number arithmetic (RFC 1982 style, 32 and 8 bits) -------- */

static inline bool srd_seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool srd_seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static inline bool srd_seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline bool srd_seq8_lt(uint8_t a, uint8_t b)
{
	return (int8_t)(uint8_t)(a - b) < 0;
}

static inline uint64_t srd_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t srd_max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* --- bitmaps --------------------------------------------------------- */

static inline bool srd_bit_test(const uint8_t *map, uint32_t i)
{
	return map[i >> 3] & (1u << (i & 7));
}

static inline void srd_bit_set(uint8_t *map, uint32_t i)
{
	map[i >> 3] |= (uint8_t)(1u << (i & 7));
}

/* --- wire (wire.c) --------------------------------------------------- */

/* In groups, in this order: srd_wire_parse() zeroes those a packet lacks. */
struct srd_pkt {
	uint8_t opcode, flags, hdr_len;	/* hdr_len in 4-byte words */
	uint32_t src_tag, dst_tag;	/* the wire's src_tag, dst_tag */
	uint32_t challenge, echo;	/* HELLO; 0 in every other opcode */
	/* Received: the OS's packet, where rx_data finds the payload. */
	const void *os_pkt;
	/* DATA */
	uint32_t psn, msg_id, msg_base;
	uint32_t dst_qpn, src_qpn, qkey, imm_data;
	uint32_t msg_len, offset;
	uint16_t seg_bytes;
	uint8_t attempt, path;
	uint32_t payload_len;		/* the bytes after hdr_len words */
	/* WRITE, READ_REQ */
	struct srd_rdma_info rdma;
	/* READ_RESP */
	uint32_t req_msg_id;
	uint8_t req_attempt;
	/* ACK, or a DATA packet's ACK block (has_ack) */
	bool has_ack;
	uint8_t ack_flags;		/* SRD_WF_ACK_DUP */
	uint32_t ack_psn, ack_delay_us;
	uint8_t sack[SRD_SACK_WINDOW_PKTS / 8];
	uint32_t dup_psn;		/* with SRD_WF_ACK_DUP */
	/* NAK: psn, msg_id, attempt above */
	uint8_t nak_reason;
};

/*
 * Reads no byte of @buf past min(@len, SRD_HDR_MAX_BYTES): the OS may
 * hand over just that much of a longer packet (srd_peer_on_packet_head()).
 */
int srd_wire_parse(const uint8_t *buf, size_t len, struct srd_pkt *p);
/* Each writes a header into buf (SRD_HDR_MAX_BYTES) and returns its length. */
uint32_t srd_wire_put_data(uint8_t *buf, const struct srd_pkt *p);
/* DATA with the RDMA extension: opcode WRITE or READ_REQ. */
uint32_t srd_wire_put_rdma(uint8_t *buf, const struct srd_pkt *p, uint8_t op);
uint32_t srd_wire_put_resp(uint8_t *buf, const struct srd_pkt *p);
struct srd_peer;
struct srd_tx_msg;
/*
 * What those write, for message @m of @peer (its kind gives the
 * opcode): the sender's own, from the message without a struct srd_pkt.
 */
uint32_t srd_wire_put_msg(uint8_t *buf, const struct srd_peer *peer,
			  const struct srd_tx_msg *m, uint32_t psn,
			  uint32_t offset, uint8_t flags, uint8_t path);
uint32_t srd_wire_put_ack(uint8_t *buf, const struct srd_pkt *p);
struct srd_rcv_window;
/*
 * What that writes, from the receiver's window @w: the ACK's @flags
 * (SRD_WF_ACK_DUP, SRD_WF_ACK_DRAIN), @delay_us, and @dup_psn, written
 * only with SRD_WF_ACK_DUP.
 */
uint32_t srd_wire_put_ack_win(uint8_t *buf, uint32_t src_tag,
			      uint32_t dst_tag, uint8_t flags,
			      const struct srd_rcv_window *w,
			      uint32_t delay_us, uint32_t dup_psn);
/*
 * Append @p's ACK fields as an ACK block to the DATA-family header of
 * @hdr_len bytes at @buf (flag HAS_ACK, hdr_len_words); returns the new
 * length, hdr_len + SRD_ACK_BLOCK_BYTES.
 */
uint32_t srd_wire_put_ack_block(uint8_t *buf, uint32_t hdr_len,
				const struct srd_pkt *p);
uint32_t srd_wire_put_nak(uint8_t *buf, const struct srd_pkt *p);
uint32_t srd_wire_put_hello(uint8_t *buf, const struct srd_pkt *p);

/* --- receive PSN window and SACK (seq.c) ---------------------------- */

/*
 * What the receiver knows of the PSNs it has accepted: the largest, and
 * a bitmap of the SRD_SACK_WINDOW_PKTS below it (bit i: largest - 1 - i,
 * in below[i / 64] bit i % 64: a 128-bit number, shifted once per new
 * largest PSN).  srd_rcv_sack() writes it as the wire's bytes.
 */
struct srd_rcv_window {
	bool valid;
	uint32_t largest;
	uint64_t below[SRD_SACK_WINDOW_PKTS / 64];
};

enum srd_rcv_result {
	SRD_RCV_NEW_IN_ORDER,	/* largest + 1 (or the first) */
	SRD_RCV_NEW_OUT_OF_ORDER,
	SRD_RCV_DUPLICATE,
	SRD_RCV_TOO_OLD,	/* below the window: cannot be recorded */
};

enum srd_rcv_result srd_rcv_record_any(struct srd_rcv_window *w,
				       uint32_t psn);

/*
 * Record @psn.  Inline: every DATA packet comes here, and nearly every
 * one is the next PSN, for which the map shifts up by one and the old
 * largest becomes its bit 0.  srd_rcv_record_any() takes every case (the
 * unit tests check that both agree).
 */
static inline enum srd_rcv_result srd_rcv_record(struct srd_rcv_window *w,
						 uint32_t psn)
{
	if (w->valid && psn == w->largest + 1) {
		w->below[1] = w->below[1] << 1 | w->below[0] >> 63;
		w->below[0] = w->below[0] << 1 | 1;
		w->largest = psn;
		return SRD_RCV_NEW_IN_ORDER;
	}
	return srd_rcv_record_any(w, psn);
}

bool srd_rcv_has(const struct srd_rcv_window *w, uint32_t psn);
/* The SACK bitmap of an ACK (docs/protocol.md: byte i / 8, bit i % 8). */
static inline void srd_rcv_sack(const struct srd_rcv_window *w,
				uint8_t sack[SRD_SACK_WINDOW_PKTS / 8])
{
	srd_put_le64(sack, w->below[0]);
	srd_put_le64(sack + 8, w->below[1]);
}

/* Does an ACK (ack_psn, sack) cover psn? */
bool srd_sack_covers(uint32_t ack_psn, const uint8_t *sack, uint32_t psn);

/* --- RTT and RTO (rto.c) --------------------------------------------- */

struct srd_rtt {
	uint32_t srtt_us;	/* 0: no sample yet */
	uint32_t rttvar_us;
	uint32_t latest_us;
	uint32_t min_us;	/* 0: none */
	uint64_t min_stamp_us;	/* when min_us was taken */
	/*
	 * Before backoff, and always within [rto_min_us, rto_max_us] (every
	 * writer clamps it): srd_rto_backed_off() of no backoff is rto_us.
	 */
	uint32_t rto_us;
	uint32_t floor_us;	/* adaptive floor: grows on spurious RTOs; 0: rto_min_us */
};

void srd_rtt_init(struct srd_rtt *r, const struct srd_config *cfg);
void srd_rtt_spurious_rto(struct srd_rtt *r, const struct srd_config *cfg);
void srd_rtt_relax_floor(struct srd_rtt *r, const struct srd_config *cfg);
void srd_rtt_sample(struct srd_rtt *r, const struct srd_config *cfg,
		    uint32_t sample_us, uint64_t now_us);
uint32_t srd_rto_backed_off(const struct srd_rtt *r,
			    const struct srd_config *cfg, uint32_t backoff);

/* --- congestion control (cc.c) --------------------------------------- */

#define SRD_CWND_ONE	256u	/* cwnd fixed point: packets * 256 */

/*
 * How many standing-delay windows (srtt / 2 each) a loss looks back over
 * to tell a queue from paths of unequal delay (cc.c, loss_from_queue()).
 */
#define SRD_CC_QUEUE_WINDOWS	8

struct srd_cc {
	uint32_t cwnd;		/* packets * SRD_CWND_ONE */
	uint32_t cwnd_undo;	/* before the last loss/RTO cut; 0: none */
	uint64_t last_decrease_us;
	uint64_t pace_next_ns;	/* earliest next DATA send */
	uint32_t standing_us;	/* least delay of the last window */
	/* ... of the last SRD_CC_QUEUE_WINDOWS windows (0: none yet) */
	uint32_t standing_hist_us[SRD_CC_QUEUE_WINDOWS];
	uint32_t standing_hist_next;
	uint32_t win_min_us;	/* ... of the current one */
	uint32_t win_samples;
	uint64_t win_end_us;
	uint64_t drain_start_us; /* a drain under way since; 0: none */
	uint64_t drain_last_us;	/* the last one's start */
	uint32_t drain_cwnd;	/* the window while one is; 0: none */
	bool drain_sampled;	/* ... and a packet sent since came back */
	bool stalled;		/* counted once per stall */
};

/* Are drains asked for and made (cc.c)?  Not with a fixed target. */
static inline bool srd_cc_drains(const struct srd_config *cfg)
{
	return cfg->cc_drain_interval_us && !cfg->cc_target_us;
}

void srd_cc_init(struct srd_cc *cc, const struct srd_config *cfg);
void srd_cc_on_ack(struct srd_cc *cc, const struct srd_config *cfg,
		   const struct srd_rtt *rtt, uint32_t acked_w,
		   uint32_t delay_us, uint64_t now_us);
bool srd_cc_on_loss(struct srd_cc *cc, const struct srd_config *cfg,
		    const struct srd_rtt *rtt, uint64_t now_us);
void srd_cc_undo(struct srd_cc *cc);
bool srd_cc_on_rto(struct srd_cc *cc, const struct srd_config *cfg,
		   const struct srd_rtt *rtt, bool first, uint64_t now_us);
bool srd_cc_drain_asks(const struct srd_engine *eng, uint64_t now_us);
void srd_cc_drain_newcomer(struct srd_engine *eng, uint64_t now_us);
bool srd_cc_drain_ack_any(struct srd_cc *cc, const struct srd_config *cfg,
			  bool asked, uint64_t now_us);

/*
 * An ACK that asks for a drain (@asked) or not (cc.c).  Inline: every ACK
 * comes here, and nearly every one neither asks nor finds a drain under
 * way, which changes nothing.  srd_cc_drain_ack_any() takes every case
 * (the unit tests check that both agree).
 */
static inline bool srd_cc_drain_ack(struct srd_cc *cc,
				    const struct srd_config *cfg, bool asked,
				    uint64_t now_us)
{
	if (!asked && !cc->drain_start_us)
		return false;
	return srd_cc_drain_ack_any(cc, cfg, asked, now_us);
}

/*
 * An RTT sample (already taken, srd_rtt_sample(): the minimum comes down
 * to it if it is less) of a packet sent at @sent_us.  Inline: every ACK
 * with a sample comes here.
 */
static inline void srd_cc_drain_sample(struct srd_cc *cc, uint64_t sent_us)
{
	if (cc->drain_start_us && sent_us >= cc->drain_start_us)
		cc->drain_sampled = true;
}

/* The window in force, in 1/256 packets: cwnd, or a drain's (cc.c). */
static inline uint32_t srd_cc_cwnd(const struct srd_cc *cc)
{
	return cc->drain_cwnd && cc->drain_cwnd < cc->cwnd ? cc->drain_cwnd :
	       cc->cwnd;
}

/*
 * Does a packet of weight @w (srd_tx_pkt_weight()) fit in the window
 * with @inflight_w in flight?  Inline: the pump and the deadline ask at
 * every packet.  A window below one packet holds one full packet, and
 * pacing keeps it (srd_cc_on_send()).
 */
static inline bool srd_cc_window_fits(const struct srd_cc *cc,
				      uint32_t inflight_w, uint32_t w)
{
	uint32_t c = srd_cc_cwnd(cc);

	return inflight_w + w <= (c > SRD_CWND_ONE ? c : SRD_CWND_ONE);
}

/* The window in whole packets of a full segment (at least one). */
static inline uint32_t srd_cc_window_pkts(const struct srd_cc *cc)
{
	uint32_t w = srd_cc_cwnd(cc) / SRD_CWND_ONE;

	return w ? w : 1;
}

static inline bool srd_cc_pacing_allows(const struct srd_cc *cc,
					uint64_t now_us)
{
	return cc->pace_next_ns <= now_us * 1000;
}

void srd_cc_pace(struct srd_cc *cc, const struct srd_config *cfg,
		 const struct srd_rtt *rtt, uint32_t w, uint64_t now_us);

/*
 * A DATA packet of weight @w leaves: pacing, with pacing on and an RTT
 * to pace by (srd_cc_pace()).  Inline: every DATA packet comes here.
 */
static inline void srd_cc_on_send(struct srd_cc *cc,
				  const struct srd_config *cfg,
				  const struct srd_rtt *rtt, uint32_t w,
				  uint64_t now_us)
{
	if (cfg->pacing_gain_pct && rtt->srtt_us)
		srd_cc_pace(cc, cfg, rtt, w, now_us);
}

uint64_t srd_cc_pacing_deadline_us(const struct srd_cc *cc);

/* --- paths (path.c) -------------------------------------------------- */

struct srd_path {
	enum srd_path_state state;
	uint32_t srtt_us, rttvar_us;
	uint32_t losses_in_row;
	uint32_t slow_skips;	/* turns skipped as slow since last used */
	uint32_t avoid_exp;	/* avoidances without a recovery */
	uint64_t avoid_until_us;
	bool probe_in_flight;
	uint64_t tx_pkts, acked_pkts, lost_pkts, timeouts, avoided, recovered;
};

#define SRD_PATH_NONE	0xffffffffu

/*
 * srd_path_select()'s every pass, pass 0 resumed at its @i-th path, @idx
 * (srd_path_select() took the paths before it); the passes after it
 * start again at @start.
 */
uint32_t srd_path_select_rest(struct srd_peer *peer, uint64_t now_us,
			      uint32_t exclude, uint64_t slow_x100,
			      uint32_t start, uint32_t i, uint32_t idx,
			      bool *is_probe);
/* The rest of srd_path_on_ack(): a recovery, and the RTT sample. */
void srd_path_on_ack_rest(struct srd_peer *peer, uint32_t path,
			  uint32_t rtt_us);
void srd_path_on_loss(struct srd_peer *peer, uint32_t path, bool was_probe,
		      bool timeout, uint64_t now_us);
void srd_path_on_spurious_loss(struct srd_peer *peer, uint32_t path);

/* --- messages (msg.c) ------------------------------------------------ */

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

/* --- RDMA operations of several chunks (rdma_op.c) ------------------- */

uint32_t srd_tx_queued_msgs(const struct srd_peer *peer);
int srd_tx_post_op(struct srd_peer *peer, const struct srd_send_req *req);
void srd_tx_op_chunk_done(struct srd_peer *peer, struct srd_tx_msg *m,
			  enum srd_comp_status st);
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
/* Abort the receives whose sender stopped (resp_timeout_us). */
void srd_rx_msg_on_timer(struct srd_peer *peer, uint64_t now_us);
void srd_rx_msg_slide(struct srd_peer *peer, uint32_t new_base);

/* --- the peer -------------------------------------------------------- */

enum srd_peer_state {
	SRD_PEER_PROBING = 0,	/* remote tag unknown: HELLO, no DATA */
	SRD_PEER_ESTABLISHED,	/* remote tag known: DATA flows */
};

/* One sent, unresolved DATA packet; indexed psn % tx_window_pkts. */
struct srd_tx_pkt {
	uint64_t sent_us;
	uint32_t psn;
	uint32_t msg_id;
	uint32_t seg;
	uint8_t path;
	uint8_t attempt;
	bool in_use;
	bool is_probe;
	bool is_retx;
	bool retx_rto;			/* is_retx: the copy before timed out */
	bool is_tlp;			/* a tail loss probe: a second copy */
	/* Flagged ACK_NOW: its ACK may wait for an answer (recovery.c). */
	bool ack_now;
	uint8_t lost_path;		/* is_retx: where the copy before went */
	uint16_t weight;		/* of the window, srd_tx_pkt_weight() */
};

/* A segment to send again; queued when its packet was declared lost. */
struct srd_retx {
	uint32_t msg_id;
	uint32_t seg;
	uint8_t attempt;
	uint8_t last_path;
	bool timeout;			/* declared lost by the RTO */
};

#define SRD_RETIRED_TAGS	4
/* A restart challenge's lifetime: this, and up to as long again (tag.c). */
#define SRD_CHALLENGE_PERIOD_US	(1ull << 26)
/* Replies to remotes with no peer: a burst, then one per gap (tag.c). */
#define SRD_STRAY_BURST		64
#define SRD_STRAY_GAP_US	10
#define SRD_TLP_MAX		2	/* tail loss probes before the RTO */

struct srd_engine {
	struct srd_config cfg;
	const struct srd_ops *ops;
	void *os;
	uint8_t tag_key[16];		/* the tags' secret (tag.c) */
	uint32_t stray_tokens;		/* replies without a peer, budget */
	uint64_t stray_refill_us;
	struct srd_peer *peers;
	struct srd_counters ctr;	/* engine-level, plus destroyed peers' */
	/* A drain asked for a newcomer from then (cc.c); 0: none. */
	uint64_t drain_soon_us;
};

struct srd_peer {
	struct srd_engine *eng;
	void *os;
	struct srd_peer *next;		/* eng->peers */
	enum srd_peer_state state;
	struct srd_counters ctr;

	/* tags (the wire's src_tag and dst_tag) */
	uint32_t local_tag;		/* ours for this remote: srd_engine_tag() */
	uint32_t remote_tag;		/* its tag for us, valid when ESTABLISHED */
	uint32_t retired[SRD_RETIRED_TAGS];
	uint32_t retired_next;
	uint64_t hello_due_us;		/* PROBING with work: next HELLO */
	uint32_t hello_tries;
	uint64_t last_unsolicited_hello_us;
	bool unsolicited_hello_sent;
	bool challenge_sent;		/* a claimed new remote tag challenged */
	uint64_t last_challenge_us;	/* ... then: one per hello_interval_us */

	/* timing */
	struct srd_rtt rtt;
	uint32_t rto_backoff;		/* RTO expiries since the last ACK progress */
	uint64_t rto_at_us;		/* the last RTO: the next is timed from it */
	bool rto_probe;			/* its resend may exceed the window */
	struct srd_cc cc;

	/* sender: packets */
	struct srd_tx_pkt *ring;	/* tx_window_pkts */
	uint32_t snd_nxt;		/* next PSN */
	uint32_t snd_una;		/* lowest PSN maybe in flight */
	uint32_t inflight;
	uint32_t inflight_w;		/* their weights, in 1/256 packets */
	uint32_t reo_wnd_us;		/* reordering allowance, grows on spurious */
	uint32_t acks_since_spurious;
	bool largest_acked_valid;
	uint32_t largest_acked;
	uint64_t loss_deadline_us;
	/*
	 * No later than the first ASSEMBLING receive can have made no
	 * progress for resp_timeout_us; SRD_NO_DEADLINE when none is.
	 */
	uint64_t rx_stall_check_us;
	/* New segments placed, of every message of this peer: is it live? */
	uint32_t rx_new_segs;
	uint64_t rx_progress_us;	/* ... and the last one's time */
	uint64_t tlp_base_us;		/* last new DATA, ACK progress or RTO */
	bool tail_ack_now;		/* the newest DATA sent was ACK_NOW */
	/*
	 * It answers our messages, and so holds their ACKs for its answers:
	 * a message of its began soon after one of ours, and no ACK came
	 * alone since (rx.c, recovery.c).
	 */
	bool remote_waits;
	bool msg_sent;			/* we started a message, the last at: */
	uint64_t msg_sent_us;		/* our last new message's first packet */
	uint32_t tlp_sent;		/* probes sent since then */
	struct srd_retx *retx;		/* tx_window_pkts */
	uint32_t retx_head, retx_tail;

	/* sender: messages */
	struct srd_tx_msg **tx_slots;	/* msg_window, by msg_id */
	uint32_t msg_base;		/* oldest unfinished message id */
	uint32_t msg_next;		/* next message id */
	uint32_t msg_rr;		/* round-robin cursor ... */
	uint32_t msg_rr_end;		/* ... and where its round ends */
	/* queue.c: the flows' heads, on ->flow_next; all their messages */
	struct srd_tx_msg *pending_head, *pending_tail;
	uint32_t pending_count;
	uint32_t held_msgs;		/* chunks held back (rdma_op.c) */
	struct srd_tx_msg *awaiting;	/* READs waiting for their response */
	/*
	 * The same READs in order of resp_deadline_us, earliest first: the
	 * peer's deadline wants the earliest at every packet, and there may
	 * be as many as the OS posts.
	 */
	struct srd_tx_msg *resp_due_head, *resp_due_tail;
	/*
	 * RNR gates (rnr.c): the head of each, on ->next; rnr_waiting counts
	 * the messages in them.
	 */
	struct srd_tx_msg *rnr_gates;
	uint32_t rnr_waiting;
	/* Window messages with a segment never sent: srd_tx_msg_unsent(). */
	uint32_t tx_unsent;
	/* Freed messages kept for the next sends (msg.c), on ->next. */
	struct srd_tx_msg *msg_cache;
	uint32_t msg_cache_n;		/* at most SRD_TX_MSG_CACHE */

	/* receiver */
	struct srd_rcv_window rcv;
	uint64_t rcv_largest_us;	/* when rcv.largest arrived */
	uint32_t ack_pending;		/* accepted packets not yet ACKed */
	bool ack_for_reply;		/* the pending ACK waits for a reply */
	bool ack_held;			/* one has waited, the last at: */
	uint64_t ack_held_us;		/* when the last such wait began */
	/* We answer its messages: its ACK_NOW packets' ACKs wait (rx.c). */
	bool interactive;
	uint64_t rx_data_us;		/* the last DATA accepted from it */
	bool ack_dup;			/* the next ACK names ack_dup_psn */
	uint32_t ack_dup_psn;
	bool ack_loss_seen;		/* data we had came again, at: */
	uint64_t ack_loss_us;
	/* Of about the last 256 DATA packets, the needless resends (rx.c). */
	uint16_t ack_ev_pkts, ack_ev_dups;
	uint64_t ack_due_us;
	struct srd_rx_slot *rx_slots;	/* msg_window, by msg_id */
	uint32_t rx_assembling;		/* rx_slots in SRD_RXS_ASSEMBLING */
	bool rx_base_valid;
	uint32_t rx_msg_base;

	/* paths */
	struct srd_path *paths;		/* n_paths */
	uint32_t path_rr;		/* DATA round-robin cursor */
	uint32_t ack_rr;		/* ACK/NAK/HELLO rotation */

	uint64_t deadline_us;		/* last given to ops->timer_set */
	uint64_t last_active_us;	/* last packet either way, or send posted */
};

static inline uint64_t srd_now(const struct srd_peer *peer)
{
	return peer->eng->ops->now_us(peer->eng->os);
}

/*
 * How long a receiver that answers holds the ACK of an ACK_NOW packet for
 * its answer, and so how much longer a sender whose peer answers waits
 * before a tail probe or an RTO (docs/protocol.md, "Receiver", rule 6):
 * ack_reply_wait_us, or SRD_REPLY_WAIT_RTTS smoothed RTTs where that is
 * more, up to SRD_REPLY_WAIT_MAX times ack_reply_wait_us; 0 when the
 * wait is off.  A sender probes two RTTs after its tail anyway, so a
 * wait of a few RTTs costs recovery little, and hosts whose RTT swings
 * by milliseconds (virtual CPUs waiting for the host's) answer late as
 * often as they deliver late: between TCG guests a 500 us wait ran out,
 * or the sender probed before the answer came, in a quarter of the
 * round trips.  Each end computes it from its own smoothed RTT, which
 * over one path both ways is about the same.
 */
#define SRD_REPLY_WAIT_RTTS	3
#define SRD_REPLY_WAIT_MAX	4
static inline uint32_t srd_reply_wait_us(const struct srd_peer *peer,
					 uint32_t rtts)
{
	uint64_t w = peer->eng->cfg.ack_reply_wait_us;
	uint64_t r = (uint64_t)rtts * peer->rtt.srtt_us;

	r = srd_min_u64(r, SRD_REPLY_WAIT_MAX * w);
	return (uint32_t)srd_max_u64(r, w);
}

/* peer.c: an event for ops->event; only while tracing is on. */
void srd_trace_emit(struct srd_peer *peer, enum srd_event_type type,
		    uint32_t psn, uint32_t msg_id, uint32_t seg, uint32_t path,
		    uint32_t why, uint32_t value, uint32_t value2);

static inline bool srd_tracing(const struct srd_peer *peer)
{
	const bool *on = peer->eng->ops->trace_on;

	return on && *on && peer->eng->ops->event;
}

#define SRD_TRACE(peer, type, psn, msg_id, seg, path, why, value, value2) \
	do {								\
		struct srd_peer *srd_trace_peer_ = (peer);		\
									\
		if (srd_tracing(srd_trace_peer_))			\
			srd_trace_emit(srd_trace_peer_, (type), (psn),	\
				       (msg_id), (seg), (path), (why),	\
				       (value), (value2));		\
	} while (0)

/* tag.c */
uint64_t srd_siphash24(const uint8_t key[16], const uint8_t *m, size_t len);
void srd_tag_init(struct srd_engine *eng);

/* peer.c */
void srd_peer_learn_tag(struct srd_peer *peer, uint32_t tag);
bool srd_peer_tag_retired(const struct srd_peer *peer, uint32_t tag);
/* A HELLO naming @dst_tag, carrying @challenge and @echo (or 0s). */
void srd_peer_send_hello(struct srd_peer *peer, uint32_t dst_tag,
			 uint32_t challenge, uint32_t echo);
/* The challenge to a claim of a new remote tag, and its check (tag.c). */
uint32_t srd_peer_challenge(const struct srd_peer *peer, uint32_t claimed,
			    uint64_t now_us);
bool srd_peer_challenge_ok(const struct srd_peer *peer, uint32_t claimed,
			   uint32_t echo, uint64_t now_us);
/*
 * A control packet (@m NULL), or a segment of @m at @off.  Inline: every
 * packet sent comes here, and its callers know whether @m is NULL.
 */
static inline int srd_peer_transmit(struct srd_peer *peer, uint32_t path,
				    const uint8_t *hdr, uint32_t hdr_len,
				    const struct srd_tx_msg *m, uint32_t off,
				    uint32_t len)
{
	struct srd_tx_desc d = {
		.path = path, .hdr = hdr, .hdr_len = hdr_len,
		.kind = m ? m->kind : SRD_MSG_SEND,
		.out = m ? m->out : NULL,
		.resp_src = m ? m->resp_src : NULL,
		/* The OS's offsets are within the whole operation (rdma_op.c). */
		.payload_off = m ? m->op_off + off : 0,
		.payload_len = len,
	};

	peer->ctr.tx_pkts++;
	peer->ctr.tx_bytes += hdr_len + len;
	return peer->eng->ops->transmit(peer->eng->os, peer->os, &d);
}

/*
 * A path skipped as slow gets no new RTT samples, so one bad sample would
 * keep it out for good and spraying would shrink to a few paths.  After
 * this many skipped turns it carries a packet anyway and is measured
 * again.
 */
#define SRD_SLOW_SKIPS_MAX	16

/*
 * The smoothed RTT above which a path is slow, times 100 (the path's is
 * compared times 100): none (the largest value) while the peer has none
 * or the test is off.  Against the peer's smoothed RTT, not its minimum:
 * on a busy host every path's RTT is far above the best sample ever
 * seen, and a minimum-based test would call them all slow.
 */
static inline uint64_t srd_path_slow_above(const struct srd_peer *peer)
{
	uint32_t pct = peer->eng->cfg.path_slow_pct;

	return pct && peer->rtt.srtt_us ? (uint64_t)peer->rtt.srtt_us * pct :
	       ~(uint64_t)0;
}

/* Does a usable path, not a probe, skip its turn as slow?  Counted. */
static inline bool srd_path_skip_slow(struct srd_path *p, uint64_t slow_x100)
{
	return p->srtt_us && (uint64_t)p->srtt_us * 100 > slow_x100 &&
	       p->slow_skips++ < SRD_SLOW_SKIPS_MAX;
}

static inline uint32_t srd_path_take(struct srd_peer *peer, uint32_t idx,
				     bool probe, bool *is_probe)
{
	peer->paths[idx].slow_skips = 0;
	peer->path_rr = idx + 1;
	*is_probe = probe;
	return idx;
}

/*
 * A path for the next DATA packet, not @exclude if another exists.
 * *@is_probe says the packet is its path's probe.  Inline: every DATA
 * packet comes here.  Pass 0 over ACTIVE paths, the common case, is done
 * here with as little as it needs: such a path is usable and not a
 * probe, so only the slow test applies.  At the first path that is not
 * ACTIVE srd_path_select_rest() (path.c) takes over where this left
 * off.  The cursor is at most n (peer.c draws it below n; a selection
 * sets it to the next index), so no division is needed to start from
 * it.  The unit tests check this against the three passes written as
 * one loop.
 */
static inline uint32_t srd_path_select(struct srd_peer *peer,
				       uint64_t now_us, uint32_t exclude,
				       bool *is_probe)
{
	uint32_t n = peer->eng->cfg.n_paths, i, idx, start;
	uint64_t slow_x100 = srd_path_slow_above(peer);
	struct srd_path *p;

	/* One path: it is taken even if excluded. */
	if (n == 1)
		exclude = SRD_PATH_NONE;
	start = peer->path_rr < n ? peer->path_rr : 0;
	for (i = 0, idx = start; i < n;
	     i++, idx = idx + 1 < n ? idx + 1 : 0) {
		p = &peer->paths[idx];
		if (idx == exclude)
			continue;
		if (p->state != SRD_PATH_ACTIVE)
			break;
		if (srd_path_skip_slow(p, slow_x100))
			continue;
		return srd_path_take(peer, idx, false, is_probe);
	}
	return srd_path_select_rest(peer, now_us, exclude, slow_x100, start,
				    i, idx, is_probe);
}

/*
 * A packet sent on @path was ACKed.  Inline: every packet ACKed comes
 * here, and for most the path is ACTIVE and there is no RTT sample (an
 * ACK gives one only for its largest PSN).
 */
static inline void srd_path_on_ack(struct srd_peer *peer, uint32_t path,
				   bool was_probe, uint32_t rtt_us)
{
	struct srd_path *p = &peer->paths[path];

	p->acked_pkts++;
	p->losses_in_row = 0;
	if (was_probe)
		p->probe_in_flight = false;
	if (p->state != SRD_PATH_ACTIVE || rtt_us)
		srd_path_on_ack_rest(peer, path, rtt_us);
}

/* tx.c */
void srd_tx_pump(struct srd_peer *peer, uint64_t now_us);
/*
 * queue.c: messages waiting for an id, a FIFO per local QP served in
 * turn: last in its QP's, first of all (an RNR probe), the next to start
 * taken off, the queued ones failed, and how many a QP has queued.
 */
void srd_tx_queue_msg(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_tx_queue_msg_front(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_tx_unqueue_head(struct srd_peer *peer);
void srd_tx_queue_fail(struct srd_peer *peer, enum srd_comp_status st,
		       bool by_qpn, uint32_t qpn);
uint32_t srd_tx_queued_of(struct srd_peer *peer, uint32_t src_qpn);
/*
 * May local QP @src_qpn queue @n more messages?  Within max_pending_msgs,
 * and one QP within three quarters of it: the others keep a quarter.
 */
static inline bool srd_tx_queue_has_room(struct srd_peer *peer,
					 uint32_t src_qpn, uint32_t n)
{
	uint32_t max = peer->eng->cfg.max_pending_msgs;
	uint32_t queued = srd_tx_queued_msgs(peer);

	/*
	 * A QP queues no more than the peer does: below three quarters in
	 * all, the walk of the flows (per post) is not needed.
	 */
	return queued + n <= max &&
	       (queued + n <= max - max / 4 ||
		srd_tx_queued_of(peer, src_qpn) + n <= max - max / 4);
}

/* An ACTIVE message gives its id back (it leaves the window). */
void srd_tx_leave_window(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_tx_fail_all(struct srd_peer *peer, enum srd_comp_status st,
		     bool include_pending);
void srd_tx_complete(struct srd_peer *peer, struct srd_tx_msg *m,
		     enum srd_comp_status st);
void srd_tx_reset_packets(struct srd_peer *peer);
/* RDMA read, requester: the READ message @id, in the window or awaiting. */
struct srd_tx_msg *srd_tx_read_find(struct srd_peer *peer, uint32_t id);
/* RDMA read, responder: queue the response; false if it cannot be now. */
bool srd_tx_queue_resp(struct srd_peer *peer, const struct srd_pkt *req,
		       struct srd_inbound *in);
/* The sender's table and messages, for recovery.c. */
static inline uint32_t srd_tx_ring_mask(const struct srd_peer *peer)
{
	return peer->eng->cfg.tx_window_pkts - 1;
}

/*
 * Counted in peer->tx_unsent: the pump has new segments of it to send (an
 * RNR probe none past its first until the receiver took it: rnr.c).
 */
static inline bool srd_tx_msg_unsent(const struct srd_tx_msg *m)
{
	return m->state == SRD_TXM_ACTIVE && m->next_seg < m->nsegs &&
	       !(m->rnr_probe && m->next_seg);
}

/* Message @id if it is in the window, else NULL: several times a packet. */
static inline struct srd_tx_msg *srd_tx_msg_by_id(struct srd_peer *peer,
						  uint32_t id)
{
	struct srd_tx_msg *m;

	if (id - peer->msg_base >= peer->msg_next - peer->msg_base)
		return NULL;
	m = peer->tx_slots[id & (peer->eng->cfg.msg_window - 1)];
	return m && m->msg_id == id ? m : NULL;
}

/* Inline: once for every packet ACKed or lost. */
static inline void srd_tx_release_pkt(struct srd_peer *peer,
				      struct srd_tx_pkt *e)
{
	if (e->is_probe)
		peer->paths[e->path].probe_in_flight = false;
	e->in_use = false;
	peer->inflight--;
	peer->inflight_w -= e->weight;
}

void srd_tx_advance_una(struct srd_peer *peer);
/* Forget the packets of one message (NAKed, failed): never retransmitted. */
void srd_tx_abandon_pkts(struct srd_peer *peer, uint32_t msg_id);
void srd_tx_finish(struct srd_peer *peer, struct srd_tx_msg *m,
		   enum srd_comp_status st);
/* An RDMA READ whose request was ACKed leaves the window to wait. */
void srd_tx_await_resp(struct srd_peer *peer, struct srd_tx_msg *m,
		       uint64_t now_us);
/* The awaiting READ at *@pp (a link of peer->awaiting) stops waiting. */
void srd_tx_unawait(struct srd_peer *peer, struct srd_tx_msg **pp);
/* READ @m's response made progress at @now_us: its deadline moves on. */
void srd_tx_resp_progress(struct srd_peer *peer, struct srd_tx_msg *m,
			  uint64_t now_us);
/*
 * Segment @seg of @m, of weight @w (srd_tx_pkt_weight()).  Returns false
 * when the message was failed instead (its source is gone).
 */
bool srd_tx_send_data(struct srd_peer *peer, struct srd_tx_msg *m,
		      uint32_t seg, uint32_t w, enum srd_tx_why why,
		      uint32_t last_path, uint64_t now_us);

/* rnr.c: messages whose receiver was not ready */
void srd_rnr_park(struct srd_peer *peer, struct srd_tx_msg *m, uint64_t now_us);
bool srd_rnr_gated(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_rnr_wake(struct srd_peer *peer, uint64_t now_us);
void srd_rnr_taken(struct srd_peer *peer, struct srd_tx_msg *m, uint64_t now_us);
void srd_rnr_open(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_rnr_fail(struct srd_peer *peer, enum srd_comp_status st,
		  bool requeue, bool by_qpn, uint32_t qpn);
uint64_t srd_rnr_deadline(const struct srd_peer *peer);

/* recovery.c */
void srd_tx_on_ack(struct srd_peer *peer, const struct srd_pkt *p,
		   uint64_t now_us);
void srd_tx_on_nak(struct srd_peer *peer, const struct srd_pkt *p,
		   uint64_t now_us);
void srd_tx_on_timer(struct srd_peer *peer, uint64_t now_us);
/*
 * Is there something for the pump to send, the congestion window, the
 * packet table and pacing aside: a retransmission, a new segment, or a
 * message that the message window has room to start?
 */
static inline bool srd_tx_has_work(const struct srd_peer *peer)
{
	return peer->retx_head != peer->retx_tail || peer->tx_unsent ||
	       (peer->pending_head &&
		peer->msg_next - peer->msg_base < peer->eng->cfg.msg_window);
}

/*
 * Could the pump send a full packet now, pacing aside, with packets of
 * weight @unsent_w taken but not yet counted in flight: work, room in
 * the congestion window, and the packet table's next slot free?  Room
 * for a full one: a smaller one may fit where this says no, and then
 * waits for the next ACK, which something in flight brings.
 */
static inline bool srd_tx_could_send(const struct srd_peer *peer,
				     uint32_t unsent_w)
{
	return srd_tx_has_work(peer) &&
	       srd_cc_window_fits(&peer->cc, peer->inflight_w + unsent_w,
				  SRD_CWND_ONE) &&
	       !peer->ring[peer->snd_nxt & srd_tx_ring_mask(peer)].in_use;
}

/*
 * How much of the congestion window segment @seg of @m takes, in 1/256
 * packets: its bytes on the wire over a full packet's, at least 1/256.
 * A full segment of any kind weighs a packet (RDMA's longer header comes
 * out of its segment), a 64-byte send about 1/80 of one at MTU 9000: the
 * window counts what a link's queue holds, bytes, so small messages are
 * not held to a packet's share each.
 */
static inline uint32_t srd_tx_pkt_weight(const struct srd_peer *peer,
					 const struct srd_tx_msg *m,
					 uint32_t seg)
{
	uint32_t rest = m->len - seg * m->seg_bytes, full, w;

	if (rest >= m->seg_bytes)
		return SRD_CWND_ONE;
	/* seg_bytes is at most SRD_MAX_SEG_BYTES: no overflow. */
	full = peer->eng->cfg.seg_bytes + SRD_HDR_DATA_BYTES;
	w = (rest + full - m->seg_bytes) * SRD_CWND_ONE / full;
	return w ? w : 1;
}

/* srd_tx_deadline() of an ESTABLISHED peer with anything under way. */
uint64_t srd_tx_deadline_busy(const struct srd_peer *peer);
/*
 * The sender's next deadline.  Inline: every call into the engine ends
 * here, and a receiver's peer, with nothing in flight, nothing to send
 * and no message in RNR_WAIT, has no timer but the loss deadline and, if
 * READs await their responses (as they do at every packet of those
 * responses), the earliest of theirs; srd_tx_deadline_busy() looks at
 * everything else.
 */
static inline uint64_t srd_tx_deadline(const struct srd_peer *peer)
{
	if (peer->state != SRD_PEER_ESTABLISHED)
		return SRD_NO_DEADLINE;
	if (!peer->inflight && !peer->rnr_gates && !srd_tx_has_work(peer))
		return peer->resp_due_head ?
		       srd_min_u64(peer->loss_deadline_us,
				   peer->resp_due_head->resp_deadline_us) :
		       peer->loss_deadline_us;
	return srd_tx_deadline_busy(peer);
}

/*
 * The peer's next deadline, to the OS if it moved.  Inline: every call
 * into the engine ends here, every packet received among them.
 */
static inline void srd_peer_update_deadline(struct srd_peer *peer)
{
	uint64_t d = srd_tx_deadline(peer);

	if (peer->ack_pending)
		d = srd_min_u64(d, peer->ack_due_us);
	if (peer->state == SRD_PEER_PROBING)
		d = srd_min_u64(d, peer->hello_due_us);
	d = srd_min_u64(d, peer->rx_stall_check_us);
	if (d == peer->deadline_us)
		return;
	peer->deadline_us = d;
	peer->eng->ops->timer_set(peer->eng->os, peer->os, d);
}

/* rx.c */
void srd_rx_send_ack(struct srd_peer *peer, uint64_t now_us);
void srd_rx_send_delayed_ack(struct srd_peer *peer, uint64_t now_us);
/* The pending ACK, if any, into @p's ACK fields for a DATA packet. */
bool srd_rx_ack_attach(struct srd_peer *peer, uint64_t now_us,
		       struct srd_pkt *p);
/* A new message to the peer leaves now: an answer, if it follows its data. */
void srd_rx_on_msg_sent(struct srd_peer *peer, uint64_t now_us);
/* NAK message @msg_id, attempt @attempt (psn: the packet refused, or 0). */
void srd_rx_send_nak(struct srd_peer *peer, uint32_t psn, uint32_t msg_id,
		     uint8_t attempt, uint8_t reason);
void srd_rx_reset(struct srd_peer *peer);

#endif /* SRD_INTERNAL_H */
