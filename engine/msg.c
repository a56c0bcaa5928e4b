// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: messages.  The sender's side: a posted send becomes a
 * struct srd_tx_msg, queued until the peer's message window has room,
 * then given the next message id and a bitmap of acknowledged segments.
 * The receiver's side: one slot per message id in the window, which
 * claims a receive through ops->rx_begin when the first packet of the
 * message (in any order) arrives, places every segment once, and says
 * whether a packet is to be ACKed, NAKed or dropped.
 *
 * Receive slot states (enum srd_rx_slot_state), per message id:
 *
 *   FREE --first packet, rx_begin ACCEPT--> ASSEMBLING --all placed--> COMPLETE
 *   FREE --rx_begin RNR--> RNR(attempt a) --packet of attempt > a--> (as FREE)
 *   FREE --rx_begin error--> REJECTED(reason)
 *   ASSEMBLING --no new segment for peer_timeout_us, or the QP flushed,
 *               or placement failed--> REJECTED (rx_abort)
 *   any --the sender's msg_base passes the id--> FREE (ASSEMBLING: rx_abort)
 *
 * Within one attempt the first packet to arrive decides for all of them,
 * so a message is never half accepted and half refused.
 *
 * RDMA (docs/protocol.md, "RDMA read and write"): a WRITE is received as
 * a send is, into what rx_begin returned after checking the rkey.  A
 * READ request is accepted like a one-segment message and answered with
 * a READ_RESP message queued on our sending side.  A READ_RESP claims no
 * receive: its slot places the bytes into our own READ (by req_msg_id)
 * through ops->read_data, and completing it completes that READ.
 */
#include "msg.h"
#include "tx.h"

uint32_t srd_msg_nsegs(uint32_t len, uint32_t seg_bytes)
{
	return len ? (uint32_t)(((uint64_t)len + seg_bytes - 1) / seg_bytes) : 1;
}

/*
 * Payload bytes per packet of a message of @kind: cfg->seg_bytes is what
 * fits after a DATA header; RDMA headers are longer, so their packets
 * carry that much less and every packet fits the same MTU.
 */
uint32_t srd_msg_seg_bytes(const struct srd_config *cfg, enum srd_msg_kind kind)
{
	switch (kind) {
	case SRD_MSG_WRITE:
	case SRD_MSG_READ:
		return cfg->seg_bytes - (SRD_HDR_RDMA_BYTES - SRD_HDR_DATA_BYTES);
	case SRD_MSG_READ_RESP:
		return cfg->seg_bytes - (SRD_HDR_RESP_BYTES - SRD_HDR_DATA_BYTES);
	case SRD_MSG_SEND:
		break;
	}
	return cfg->seg_bytes;
}

static void *eng_alloc(struct srd_peer *peer, size_t bytes)
{
	void *p = peer->eng->ops->alloc(peer->eng->os, bytes);

	if (!p)
		peer->ctr.alloc_failures++;
	return p;
}

static void eng_free(struct srd_peer *peer, void *ptr, size_t bytes)
{
	if (ptr)
		peer->eng->ops->free(peer->eng->os, ptr, bytes);
}

/*
 * A cleared bitmap of @bytes: @inl if it fits, else allocated.  All of
 * @inl is cleared: a constant size is a few stores, where @bytes would be
 * a call to memset() for every message.
 */
static uint8_t *bits_get(struct srd_peer *peer, uint8_t *inl, uint32_t bytes)
{
	if (bytes > SRD_MSG_BITS_INLINE)
		return eng_alloc(peer, bytes);
	srd_memset(inl, 0, SRD_MSG_BITS_INLINE);
	return inl;
}

static void bits_put(struct srd_peer *peer, uint8_t *bits,
		     const uint8_t *inl, uint32_t bytes)
{
	if (bits != inl)
		eng_free(peer, bits, bytes);
}

/*
 * One per message in flight, allocated and freed per message: no holes,
 * so that on LP64 it is a 192-byte object, not a 256-byte one (an
 * allocator rounds up, and a hardened kernel zeroes what it rounds to).
 */
SRD_STATIC_ASSERT(sizeof(void *) != 8 || sizeof(struct srd_tx_msg) <= 192,
		  "struct srd_tx_msg grew past 192 bytes");

/*
 * A message is taken from the peer's cache of freed ones when it has
 * one: a ping-pong frees a message and needs another at every exchange,
 * and the OS's allocator costs more than the fields' clearing here (a
 * kernel's also clears the whole object, and its free is a second call).
 * Everything before the inline bitmap is cleared, as ops->alloc clears
 * it; bits_get() clears the bitmap when the message is given its id.
 */
struct srd_tx_msg *srd_tx_msg_alloc(struct srd_peer *peer,
				    const struct srd_send_req *req)
{
	struct srd_tx_msg *m = peer->msg_cache;

	if (m) {
		peer->msg_cache = m->next;
		peer->msg_cache_n--;
		srd_memset(m, 0, srd_offsetof(struct srd_tx_msg, acked_inline));
	} else {
		m = eng_alloc(peer, sizeof(*m));
		if (!m)
			return NULL;
	}
	m->next = NULL;
	m->out = req->out;
	m->op = NULL;
	m->op_off = 0;
	m->src_qpn = req->src_qpn & 0xffffff;
	m->dst_qpn = req->dst_qpn & 0xffffff;
	m->qkey = req->qkey;
	m->imm_data = req->imm_data;
	m->has_imm = req->has_imm;
	m->solicited = req->solicited;
	m->rnr_retry = req->rnr_retry > SRD_RNR_RETRY_INFINITE ?
		       SRD_RNR_RETRY_INFINITE : req->rnr_retry;
	m->kind = req->kind;
	m->rdma = req->rdma;
	m->len = req->kind == SRD_MSG_READ ? 0 : req->len;
	m->seg_bytes = srd_msg_seg_bytes(&peer->eng->cfg, req->kind);
	m->nsegs = srd_msg_nsegs(m->len, m->seg_bytes);
	m->state = SRD_TXM_QUEUED;
	return m;
}

/* Give m the next message id; false when the window is full or memory is short. */
bool srd_tx_msg_activate(struct srd_peer *peer, struct srd_tx_msg *m)
{
	uint32_t w = peer->eng->cfg.msg_window;

	if (peer->msg_next - peer->msg_base >= w)
		return false;
	m->acked_bytes = (m->nsegs + 7) / 8;
	m->acked = bits_get(peer, m->acked_inline, m->acked_bytes);
	if (!m->acked)
		return false;
	m->msg_id = peer->msg_next++;
	m->state = SRD_TXM_ACTIVE;
	m->next_seg = 0;
	m->segs_acked = 0;
	peer->tx_slots[m->msg_id & (w - 1)] = m;
	if (srd_tx_msg_unsent(m))
		peer->tx_unsent++;
	return true;
}

/* The reverse of srd_tx_msg_activate(), once m left the window. */
void srd_tx_msg_deactivate(struct srd_peer *peer, struct srd_tx_msg *m)
{
	bits_put(peer, m->acked, m->acked_inline, m->acked_bytes);
	m->acked = NULL;
	m->next_seg = 0;
	m->segs_acked = 0;
}

void srd_tx_msg_free(struct srd_peer *peer, struct srd_tx_msg *m)
{
	/* A response still arriving must not place into it any more. */
	if (m->resp_slot && m->resp_slot->read == m)
		m->resp_slot->read = NULL;
	bits_put(peer, m->acked, m->acked_inline, m->acked_bytes);
	if (peer->msg_cache_n < SRD_TX_MSG_CACHE) {
		m->next = peer->msg_cache;
		peer->msg_cache = m;
		peer->msg_cache_n++;
		return;
	}
	eng_free(peer, m, sizeof(*m));
}

void srd_tx_msg_cache_drain(struct srd_peer *peer)
{
	struct srd_tx_msg *m;

	while ((m = peer->msg_cache)) {
		peer->msg_cache = m->next;
		eng_free(peer, m, sizeof(*m));
	}
	peer->msg_cache_n = 0;
}

void srd_rx_slot_release(struct srd_peer *peer, struct srd_rx_slot *s,
			 bool abort)
{
	if (s->state == SRD_RXS_ASSEMBLING) {
		peer->rx_assembling--;
		if (abort && !s->is_resp)
			peer->eng->ops->rx_abort(peer->eng->os, s->in);
	}
	bits_put(peer, s->placed, s->placed_inline, s->placed_bytes);
	srd_memset(s, 0, sizeof(*s));
}

/* The sender finished every message below new_base: forget them. */
void srd_rx_msg_slide(struct srd_peer *peer, uint32_t new_base)
{
	uint32_t w = peer->eng->cfg.msg_window, n, i;

	n = new_base - peer->rx_msg_base;
	if (n > w)
		n = w;
	for (i = 0; i < n; i++)
		srd_rx_slot_release(peer, &peer->rx_slots[(peer->rx_msg_base + i) &
							   (w - 1)], true);
	peer->rx_msg_base = new_base;
}

static uint8_t verdict_to_nak(enum srd_rx_verdict v)
{
	switch (v) {
	case SRD_RX_RNR:
		return SRD_NAK_RNR;
	case SRD_RX_BAD_QPN:
		return SRD_NAK_BAD_QPN;
	case SRD_RX_BAD_QKEY:
		return SRD_NAK_BAD_QKEY;
	case SRD_RX_BAD_LENGTH:
		return SRD_NAK_BAD_LENGTH;
	case SRD_RX_BAD_ACCESS:
		return SRD_NAK_REMOTE_ACCESS;
	default:
		return SRD_NAK_REMOTE_ABORT;
	}
}

/* The kind of a packet of the DATA family (SRD_WIRE_OPS' kind column). */
#define PKT_KIND_CASE(n, v, hdr, fl, k)					\
	case SRD_WOP_##n:						\
		return SRD_MSG_##k
static enum srd_msg_kind pkt_kind(const struct srd_pkt *p)
{
	switch ((enum srd_engine_wire_op)p->opcode) {
	SRD_WIRE_OPS(PKT_KIND_CASE, SRD_LIST_SEMI);
	}
	return SRD_MSG_NONE;
}

/*
 * The longest a receive of @len bytes may be held, from its first
 * segment: peer_timeout_us, and twice that for each segment it takes at
 * our own segment size.  A live sender serves the messages it has
 * started in turn, a segment each per round, so it finishes within this
 * as long as its rounds take under 2 * peer_timeout_us on average; one
 * that trickles (a segment now and then to each of many messages, never
 * silent and never leaving one behind for long) would otherwise hold
 * its receives, and the memory they pin, for as long as it likes.  Our
 * segment size, not the sender's: a sender that cuts a message into
 * smaller pieces gets no longer for it.
 */
static uint64_t rx_hold_us(const struct srd_config *cfg, uint32_t len,
			   enum srd_msg_kind kind)
{
	uint64_t n = srd_msg_nsegs(len, srd_msg_seg_bytes(cfg, kind));

	return (uint64_t)cfg->peer_timeout_us * (1 + 2 * n);
}

/*
 * A READ_RESP: is it the answer to a READ of ours?  The READ must be
 * waiting for exactly this: its id, attempt, QPs and length.
 */
static enum srd_rx_verdict claim_resp(struct srd_peer *peer,
				      struct srd_rx_slot *s,
				      const struct srd_pkt *p, uint64_t now_us)
{
	struct srd_tx_msg *m = srd_tx_read_find(peer, p->req_msg_id);

	if (!m || m->resp_claimed || m->attempt != p->req_attempt ||
	    m->rdma.length != p->msg_len || m->src_qpn != p->dst_qpn ||
	    m->dst_qpn != p->src_qpn)
		return SRD_RX_QP_ERROR;		/* NAK REMOTE_ABORT */
	m->resp_claimed = true;
	m->resp_slot = s;
	s->read = m;
	srd_tx_resp_progress(peer, m, now_us);
	return SRD_RX_ACCEPT;
}

static enum srd_rx_data_verdict claim(struct srd_peer *peer,
				      struct srd_rx_slot *s,
				      const struct srd_pkt *p, uint64_t now_us,
				      uint8_t *reason)
{
	struct srd_rx_msg_info info;
	enum srd_rx_verdict v;
	struct srd_inbound *in = NULL;
	uint32_t nsegs;

	s->msg_id = p->msg_id;
	s->attempt = p->attempt;
	s->is_resp = p->opcode == SRD_WOP_READ_RESP;
	if (s->is_resp) {
		v = claim_resp(peer, s, p, now_us);
		s->req_msg_id = p->req_msg_id;
	} else if (p->opcode == SRD_WOP_DATA &&
		   p->msg_len > peer->eng->cfg.max_msg_bytes) {
		v = SRD_RX_BAD_LENGTH;
	} else {
		info.src_qpn = p->src_qpn;
		info.dst_qpn = p->dst_qpn;
		info.qkey = p->qkey;
		info.imm_data = p->imm_data;
		info.has_imm = p->flags & SRD_WF_DATA_HAS_IMM;
		info.solicited = p->flags & SRD_WF_DATA_SOLICITED;
		info.msg_len = p->msg_len;
		info.kind = pkt_kind(p);
		info.rdma = p->rdma;
		v = peer->eng->ops->rx_begin(peer->eng->os, peer->os, &info,
					     &in);
		if (v == SRD_RX_BAD_ACCESS)
			peer->ctr.rdma_access_naks++;
	}
	if (v == SRD_RX_ACCEPT && p->opcode == SRD_WOP_READ_REQ) {
		/*
		 * The request is delivered once its response is queued; if
		 * it cannot be now, drop: the requester sends it again.
		 */
		if (!srd_tx_queue_resp(peer, p, in)) {
			peer->eng->ops->resp_done(peer->eng->os, in,
						  SRD_COMP_FLUSHED);
			srd_memset(s, 0, sizeof(*s));
			return SRD_RXD_DROP;
		}
		peer->ctr.rdma_reads_in++;
		peer->ctr.msgs_delivered++;
		s->state = SRD_RXS_COMPLETE;
		return SRD_RXD_PLACED;
	}
	if (v == SRD_RX_ACCEPT) {
		nsegs = srd_msg_nsegs(p->msg_len, p->seg_bytes);
		s->placed_bytes = (nsegs + 7) / 8;
		s->placed = bits_get(peer, s->placed_inline, s->placed_bytes);
		if (!s->placed) {
			/* The sender retransmits; maybe memory is back then. */
			if (s->is_resp)
				s->read->resp_claimed = false;
			else
				peer->eng->ops->rx_abort(peer->eng->os, in);
			srd_memset(s, 0, sizeof(*s));
			return SRD_RXD_DROP;
		}
		s->state = SRD_RXS_ASSEMBLING;
		peer->rx_assembling++;
		/* A READ's response has the requester's own deadline. */
		if (!s->is_resp) {
			s->progress_us = now_us;
			s->progress_segs = peer->rx_new_segs;
			s->hold_until_us = now_us + rx_hold_us(&peer->eng->cfg,
							       p->msg_len,
							       pkt_kind(p));
			/* Never later than this receive's first look. */
			peer->rx_stall_check_us =
				srd_min_u64(peer->rx_stall_check_us,
					    now_us + peer->eng->cfg.peer_timeout_us);
		}
		s->in = in;
		s->msg_len = p->msg_len;
		s->seg_bytes = p->seg_bytes;
		s->nsegs = nsegs;
		s->segs_placed = 0;
		s->dst_qpn = p->dst_qpn;
		return SRD_RXD_PLACED;	/* the caller places the segment */
	}
	*reason = verdict_to_nak(v);
	s->nak_reason = *reason;
	s->state = v == SRD_RX_RNR ? SRD_RXS_RNR : SRD_RXS_REJECTED;
	return SRD_RXD_NAK;
}

/*
 * Refuse the rest of the message in @s for good: its later packets are
 * NAKed @reason.  @abort: its OS object is aborted (srd_rx_slot_release).
 */
void srd_rx_slot_reject(struct srd_peer *peer, struct srd_rx_slot *s,
			bool abort, uint8_t reason)
{
	uint32_t id = s->msg_id;
	uint8_t att = s->attempt;

	srd_rx_slot_release(peer, s, abort);
	s->state = SRD_RXS_REJECTED;
	s->nak_reason = reason;
	s->msg_id = id;
	s->attempt = att;
}

static enum srd_rx_data_verdict reject(struct srd_peer *peer,
				       struct srd_rx_slot *s, bool abort,
				       uint8_t reason, uint8_t *out)
{
	srd_rx_slot_reject(peer, s, abort, reason);
	*out = reason;
	return SRD_RXD_NAK;
}

static enum srd_rx_data_verdict place(struct srd_peer *peer,
				      struct srd_rx_slot *s,
				      const struct srd_pkt *p, uint64_t now_us,
				      uint8_t *reason)
{
	const struct srd_ops *ops = peer->eng->ops;
	bool is_resp = p->opcode == SRD_WOP_READ_RESP;
	struct srd_rx_payload pl;
	struct srd_tx_msg *m = NULL;
	uint32_t seg;

	if (p->msg_len != s->msg_len || p->seg_bytes != s->seg_bytes ||
	    s->is_resp != is_resp) {
		peer->ctr.rx_drop_bad_hdr++;
		return SRD_RXD_DROP;
	}
	seg = p->offset / s->seg_bytes;
	if (srd_bit_test(s->placed, seg))
		return SRD_RXD_DUPLICATE;
	/* Where the OS finds the bytes to place. */
	pl.pkt = p->os_pkt;
	pl.off = p->hdr_len * 4u;
	pl.len = p->payload_len;
	if (s->is_resp) {
		/*
		 * Our READ may have failed or been flushed meanwhile (freed),
		 * or wait to be sent again (RNR).
		 */
		m = s->read;
		if (!m || !m->resp_claimed ||
		    (m->state != SRD_TXM_ACTIVE &&
		     m->state != SRD_TXM_AWAIT_RESP))
			return reject(peer, s, false, SRD_NAK_REMOTE_ABORT,
				      reason);
		if (p->payload_len)
			ops->read_data(peer->eng->os, m->out,
				       m->op_off + p->offset, &pl);
		srd_tx_resp_progress(peer, m, now_us);
	} else if (p->payload_len &&
		   ops->rx_data(peer->eng->os, s->in, p->offset, &pl)) {
		/* An RDMA target or a receive's MR deregistered meanwhile. */
		peer->ctr.rdma_access_naks++;
		return reject(peer, s, true, SRD_NAK_REMOTE_ACCESS, reason);
	}
	srd_bit_set(s->placed, seg);
	s->progress_us = now_us;
	s->progress_segs = ++peer->rx_new_segs;
	peer->rx_progress_us = now_us;
	if (++s->segs_placed == s->nsegs) {
		if (m)
			srd_tx_complete(peer, m, SRD_COMP_OK);
		else
			ops->rx_done(peer->eng->os, s->in);
		if (p->opcode == SRD_WOP_WRITE)
			peer->ctr.rdma_writes_in++;
		peer->ctr.msgs_delivered++;
		srd_rx_slot_release(peer, s, false);
		s->state = SRD_RXS_COMPLETE;
		s->msg_id = p->msg_id;
	}
	return SRD_RXD_PLACED;
}

enum srd_rx_data_verdict srd_rx_msg_on_data(struct srd_peer *peer,
					    const struct srd_pkt *p,
					    uint64_t now_us, uint8_t *reason)
{
	uint32_t w = peer->eng->cfg.msg_window;
	struct srd_rx_slot *s;
	enum srd_rx_data_verdict v;

	if (!peer->rx_base_valid) {
		peer->rx_base_valid = true;
		peer->rx_msg_base = p->msg_base;
	} else if (srd_seq_gt(p->msg_base, peer->rx_msg_base)) {
		srd_rx_msg_slide(peer, p->msg_base);
	}
	/*
	 * Below the base: finished at the sender, which needs no ACK for it.
	 * None is sent: an ACK here would complete a message we may never
	 * have placed, were the base moved by a packet that lied.
	 */
	if (srd_seq_lt(p->msg_id, peer->rx_msg_base) ||
	    p->msg_id - peer->rx_msg_base >= w) {
		peer->ctr.rx_drop_out_of_window++;
		return SRD_RXD_DROP;
	}
	s = &peer->rx_slots[p->msg_id & (w - 1)];
	switch (s->state) {
	case SRD_RXS_FREE:
		break;
	case SRD_RXS_ASSEMBLING:
		if (p->attempt != s->attempt)
			return SRD_RXD_DROP;
		goto assembling;
	case SRD_RXS_COMPLETE:
		return SRD_RXD_DUPLICATE;
	case SRD_RXS_RNR:
		if (p->attempt == s->attempt) {
			*reason = SRD_NAK_RNR;
			return SRD_RXD_NAK;
		}
		if (srd_seq8_lt(p->attempt, s->attempt))
			return SRD_RXD_DROP;
		break;
	case SRD_RXS_REJECTED:
		*reason = s->nak_reason;
		return SRD_RXD_NAK;
	}
	v = claim(peer, s, p, now_us, reason);
	if (v != SRD_RXD_PLACED || s->state != SRD_RXS_ASSEMBLING)
		return v;
	/* One call of place(): it is inlined, every DATA packet comes here. */
assembling:
	return place(peer, s, p, now_us, reason);
}

/*
 * A sender that stops mid-message (crashed, cut off, or never meaning to
 * finish) would hold the receive, and the memory it pins, for good: a
 * receive with no new segment for peer_timeout_us is aborted, if the
 * peer sent nothing new either, or sent more than eight rounds of new
 * segments of its other messages meanwhile.  A live sender serves the
 * messages it has started in turn (one segment each per round, and at
 * most msg_window of them are started; retransmissions under loss keep
 * the turn only roughly, hence eight), so a message it leaves behind
 * that long it does not mean to finish; and a live sender that is only
 * slow (a starved share of a bottleneck) keeps its receives, however
 * long its rounds take.  A live sender gives up on a peer sooner than
 * this (its retry budget).
 */
void srd_rx_msg_on_timer(struct srd_peer *peer, uint64_t now_us)
{
	uint32_t w = peer->eng->cfg.msg_window, i;
	uint64_t timeout = peer->eng->cfg.peer_timeout_us, next = SRD_NO_DEADLINE;
	uint64_t check;
	bool peer_silent = peer->rx_progress_us + timeout <= now_us;
	struct srd_rx_slot *s;

	if (peer->rx_stall_check_us > now_us)
		return;
	for (i = 0; i < w; i++) {
		s = &peer->rx_slots[i];
		if (s->state != SRD_RXS_ASSEMBLING || s->is_resp)
			continue;
		if (s->hold_until_us <= now_us) {
			peer->ctr.rx_msg_overdue++;
			srd_rx_slot_reject(peer, s, true, SRD_NAK_REMOTE_ABORT);
			continue;
		}
		if (s->progress_us + timeout > now_us) {
			check = s->progress_us + timeout;
		} else if (peer_silent ||
			   peer->rx_new_segs - s->progress_segs > 8 * w) {
			peer->ctr.rx_msg_timeouts++;
			srd_rx_slot_reject(peer, s, true, SRD_NAK_REMOTE_ABORT);
			continue;
		} else {
			/* Slow, not stopped: look again in a while. */
			check = now_us + timeout / 4 + 1;
		}
		/* Only a receive still held names the next look. */
		next = srd_min_u64(next, srd_min_u64(check, s->hold_until_us));
	}
	peer->rx_stall_check_us = next;
}
