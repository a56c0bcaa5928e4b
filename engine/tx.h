/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * the sender (tx.c): the pump, a message's packets, its completion.
 */
#ifndef SRD_ENGINE_TX_H
#define SRD_ENGINE_TX_H

#include "msg.h"
#include "path.h"

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

void srd_tx_pump(struct srd_peer *peer, uint64_t now_us);

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

#endif /* SRD_ENGINE_TX_H */
