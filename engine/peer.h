/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * the per-peer state and the engine's (peer.c), and what every file of the
 * engine does to a peer: its clock, its reply wait, its trace events.
 *
 * Lifetime: a peer and everything hanging off it (windows, paths,
 * messages) is allocated through ops->alloc and freed by
 * srd_peer_destroy().  Everything is owned by exactly one peer; nothing is
 * shared between peers except the engine's config, ops and counters.
 * Serialisation: see srd_engine.h (one caller at a time per peer).
 */
#ifndef SRD_ENGINE_PEER_H
#define SRD_ENGINE_PEER_H

#include "util.h"
#include "seq.h"
#include "cc.h"

struct srd_path;
struct srd_tx_msg;
struct srd_rx_slot;

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
	uint64_t hello_start_us;	/* ... since the first of them */
	uint64_t last_unsolicited_hello_us;
	bool unsolicited_hello_sent;
	bool challenge_sent;		/* a claimed new remote tag challenged */
	uint64_t last_challenge_us;	/* ... then: one per hello_interval_us */

	/* timing */
	struct srd_rtt rtt;
	uint32_t rto_backoff;		/* RTO expiries since the last ACK progress */
	uint64_t rto_run_us;		/* ... the first of them */
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
	 * progress for peer_timeout_us; SRD_NO_DEADLINE when none is.
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

/* peer.c */
void srd_peer_learn_tag(struct srd_peer *peer, uint32_t tag);
bool srd_peer_tag_retired(const struct srd_peer *peer, uint32_t tag);
/* A HELLO naming @dst_tag, carrying @challenge and @echo (or 0s). */
void srd_peer_send_hello(struct srd_peer *peer, uint32_t dst_tag,
			 uint32_t challenge, uint32_t echo);

#endif /* SRD_ENGINE_PEER_H */
