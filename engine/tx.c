// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the sender.  Posting, picking the next packet
 * (retransmissions first, then new segments round-robin over the active
 * messages), the in-flight packet table and finishing messages.  What
 * comes back (ACKs and NAKs) and what does not (losses, the RTO, tail
 * probes and the retry budget) is recovery.c's.
 *
 * Every transmission, first or again, takes a fresh PSN: an ACK is never
 * ambiguous, every ACKed packet gives an RTT sample for its path, and the
 * receiver's duplicate detection works on (message id, segment).
 *
 * Sender message states (enum srd_tx_msg_state):
 *
 *   QUEUED --window has room, peer ESTABLISHED--> ACTIVE
 *   ACTIVE --every segment ACKed--> done, send_done(OK)
 *   ACTIVE --RNR NAK, retries left--> RNR_WAIT (out of the window, rnr.c)
 *   RNR_WAIT --its gate's backoff over, or its gate opened--> QUEUED
 *   ACTIVE --RNR NAK, no retries left / error NAK / retry budget /
 *            peer restart / flush--> done, send_done(error)
 *
 * An RDMA READ is a one-segment request whose completion is its response
 * (a message in the other direction, placed by msg.c):
 *
 *   ACTIVE --response placed--> done, send_done(OK)
 *   ACTIVE --request ACKed--> AWAIT_RESP (out of the window, on
 *            peer->awaiting) --response placed--> done
 *   AWAIT_RESP --no response progress for peer_timeout_us--> UNRESP_REMOTE
 *   AWAIT_RESP --NAK REMOTE_ACCESS / REMOTE_ABORT, failure, flush--> error
 *
 * Leaving the window at its ACK keeps a READ from holding a message id
 * while the other side's response waits for one of its own: two peers
 * reading from each other can never fill both windows with READs.
 */
#include "tx.h"
#include "queue.h"
#include "rnr.h"
#include "recovery.h"
#include "rx.h"

/*
 * After every ACK.  The walk is on locals: a store to the peer could
 * alias the table as far as the compiler knows, and would have every
 * step load the peer's fields again.
 */
void srd_tx_advance_una(struct srd_peer *peer)
{
	const struct srd_tx_pkt *ring = peer->ring, *e;
	uint32_t una = peer->snd_una, nxt = peer->snd_nxt;
	uint32_t mask = srd_tx_ring_mask(peer);

	for (; una != nxt; una++) {
		e = &ring[una & mask];
		if (e->in_use && e->psn == una)
			break;
	}
	peer->snd_una = una;
}

/* Forget the packets of one message (NAKed, failed): never retransmitted. */
void srd_tx_abandon_pkts(struct srd_peer *peer, uint32_t msg_id)
{
	struct srd_tx_pkt *e;
	uint32_t psn;

	for (psn = peer->snd_una; psn != peer->snd_nxt; psn++) {
		e = &peer->ring[psn & srd_tx_ring_mask(peer)];
		if (e->in_use && e->psn == psn && e->msg_id == msg_id)
			srd_tx_release_pkt(peer, e);
	}
	srd_tx_advance_una(peer);
}

static void advance_msg_base(struct srd_peer *peer)
{
	uint32_t w = peer->eng->cfg.msg_window;

	while (peer->msg_base != peer->msg_next &&
	       !peer->tx_slots[peer->msg_base & (w - 1)])
		peer->msg_base++;
}

void srd_tx_finish(struct srd_peer *peer, struct srd_tx_msg *m,
		   enum srd_comp_status st)
{
	if (m->rnr_probe)
		srd_rnr_open(peer, m);
	if (st == SRD_COMP_OK) {
		peer->ctr.msgs_sent++;
	} else {
		peer->ctr.msgs_failed++;
		SRD_TRACE(peer, SRD_EV_MSG_ERROR, 0, m->msg_id, 0, 0, 0, st, 0);
	}
	if (m->kind == SRD_MSG_READ_RESP)
		peer->eng->ops->resp_done(peer->eng->os, m->resp_src, st);
	else if (m->op)
		srd_tx_op_chunk_done(peer, m, st);
	else
		peer->eng->ops->send_done(peer->eng->os, m->out, st);
	srd_tx_msg_free(peer, m);
}

struct srd_tx_msg *srd_tx_read_find(struct srd_peer *peer, uint32_t id)
{
	struct srd_tx_msg *m = srd_tx_msg_by_id(peer, id);

	if (m)
		return m->kind == SRD_MSG_READ && m->state == SRD_TXM_ACTIVE ?
		       m : NULL;
	for (m = peer->awaiting; m; m = m->next)
		if (m->msg_id == id)
			return m;
	return NULL;
}

/*
 * The deadline list (peer->resp_due_head): a deadline is set to now +
 * peer_timeout_us, so a READ put back is nearly always the latest and
 * the walk from the tail stops at once.
 */
static void due_unlink(struct srd_peer *peer, struct srd_tx_msg *m)
{
	if (m->due_prev)
		m->due_prev->due_next = m->due_next;
	else
		peer->resp_due_head = m->due_next;
	if (m->due_next)
		m->due_next->due_prev = m->due_prev;
	else
		peer->resp_due_tail = m->due_prev;
}

static void due_insert(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg *at = peer->resp_due_tail;

	while (at && at->resp_deadline_us > m->resp_deadline_us)
		at = at->due_prev;
	m->due_prev = at;
	m->due_next = at ? at->due_next : peer->resp_due_head;
	if (m->due_next)
		m->due_next->due_prev = m;
	else
		peer->resp_due_tail = m;
	if (at)
		at->due_next = m;
	else
		peer->resp_due_head = m;
}

void srd_tx_unawait(struct srd_peer *peer, struct srd_tx_msg **pp)
{
	struct srd_tx_msg *m = *pp;

	*pp = m->next;
	due_unlink(peer, m);
}

void srd_tx_resp_progress(struct srd_peer *peer, struct srd_tx_msg *m,
			  uint64_t now_us)
{
	uint64_t d = now_us + peer->eng->cfg.peer_timeout_us;

	/* Packets come several a microsecond: often it stays put. */
	if (m->state != SRD_TXM_AWAIT_RESP || d == m->resp_deadline_us) {
		m->resp_deadline_us = d;
		return;
	}
	due_unlink(peer, m);
	m->resp_deadline_us = d;
	due_insert(peer, m);
}

static void unlink_awaiting(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg **pp;

	for (pp = &peer->awaiting; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			srd_tx_unawait(peer, pp);
			return;
		}
	}
}

void srd_tx_leave_window(struct srd_peer *peer, struct srd_tx_msg *m)
{
	if (srd_tx_msg_unsent(m))
		peer->tx_unsent--;
	peer->tx_slots[m->msg_id & (peer->eng->cfg.msg_window - 1)] = NULL;
	advance_msg_base(peer);
}

/* A READ's request was ACKed: it leaves the window and waits. */
void srd_tx_await_resp(struct srd_peer *peer, struct srd_tx_msg *m,
		       uint64_t now_us)
{
	srd_tx_leave_window(peer, m);
	m->state = SRD_TXM_AWAIT_RESP;
	if (!m->resp_claimed)
		m->resp_deadline_us = now_us + peer->eng->cfg.peer_timeout_us;
	m->next = peer->awaiting;
	peer->awaiting = m;
	due_insert(peer, m);
}

/*
 * The responder's READ_RESP for @m ended in failure @st on our side:
 * tell the requester, whose READ would otherwise wait for its timeout.
 */
static void resp_failed(struct srd_peer *peer, struct srd_tx_msg *m,
			enum srd_comp_status st)
{
	uint8_t reason;

	if (st == SRD_COMP_REMOTE_ACCESS)
		reason = SRD_NAK_REMOTE_ACCESS;
	else if (st == SRD_COMP_FLUSHED)
		reason = SRD_NAK_REMOTE_ABORT;
	else
		return;		/* the requester sent it, or is gone */
	if (peer->state == SRD_PEER_ESTABLISHED)
		srd_rx_send_nak(peer, 0, m->req_msg_id, m->req_attempt, reason);
}

/* m is ACTIVE or AWAIT_RESP: take it out and complete it. */
void srd_tx_complete(struct srd_peer *peer, struct srd_tx_msg *m,
		     enum srd_comp_status st)
{
	if (m->state == SRD_TXM_AWAIT_RESP) {
		unlink_awaiting(peer, m);
		srd_tx_finish(peer, m, st);
		return;
	}
	if (st != SRD_COMP_OK)
		srd_tx_abandon_pkts(peer, m->msg_id);
	srd_tx_leave_window(peer, m);
	srd_tx_finish(peer, m, st);
}

static void fail_matching(struct srd_peer *peer, enum srd_comp_status st,
			  bool include_pending, bool by_qpn, uint32_t qpn)
{
	struct srd_tx_msg *m, **pp;
	uint32_t id;

	for (id = peer->msg_base; id != peer->msg_next; id++) {
		m = srd_tx_msg_by_id(peer, id);
		if (m && (!by_qpn || m->src_qpn == qpn)) {
			if (by_qpn && m->kind == SRD_MSG_READ_RESP)
				resp_failed(peer, m, st);
			srd_tx_complete(peer, m, st);
		}
	}
	pp = &peer->awaiting;
	while ((m = *pp)) {
		if (by_qpn && m->src_qpn != qpn) {
			pp = &m->next;
			continue;
		}
		srd_tx_unawait(peer, pp);
		srd_tx_finish(peer, m, st);
	}
	/*
	 * Before the queue: a gate of those failed here must be gone when
	 * its probe, if queued, fails below (srd_tx_finish() would open it
	 * onto the queue being walked).
	 */
	srd_rnr_fail(peer, st, !include_pending, by_qpn, qpn);
	if (include_pending)
		srd_tx_queue_fail(peer, st, by_qpn, qpn);
}

void srd_tx_fail_all(struct srd_peer *peer, enum srd_comp_status st,
		     bool include_pending)
{
	fail_matching(peer, st, include_pending, false, 0);
}

void srd_tx_reset_packets(struct srd_peer *peer)
{
	uint32_t i;

	srd_memset(peer->ring, 0,
		   sizeof(*peer->ring) * peer->eng->cfg.tx_window_pkts);
	peer->inflight = 0;
	peer->inflight_w = 0;
	peer->snd_una = peer->snd_nxt;
	peer->largest_acked_valid = false;
	peer->loss_deadline_us = SRD_NO_DEADLINE;
	peer->retx_head = 0;
	peer->retx_tail = 0;
	peer->rto_backoff = 0;
	peer->tlp_sent = 0;
	for (i = 0; i < peer->eng->cfg.n_paths; i++)
		peer->paths[i].probe_in_flight = false;
}

void srd_peer_flush_qp(struct srd_peer *peer, uint32_t qpn)
{
	uint32_t w = peer->eng->cfg.msg_window, i;
	struct srd_rx_slot *s;

	fail_matching(peer, SRD_COMP_FLUSHED, true, true, qpn & 0xffffff);
	for (i = 0; i < w; i++) {
		s = &peer->rx_slots[i];
		if (s->state == SRD_RXS_ASSEMBLING && s->dst_qpn == (qpn & 0xffffff))
			srd_rx_slot_reject(peer, s, true, SRD_NAK_REMOTE_ABORT);
	}
	srd_peer_update_deadline(peer);
}

int srd_send_msg(struct srd_peer *peer, const struct srd_send_req *req)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	struct srd_tx_msg *m;
	uint64_t now_us;
	int ret;

	if (!req)
		return SRD_SEND_INVAL;
	if (req->kind == SRD_MSG_SEND) {
		if (req->len > cfg->max_msg_bytes)
			return SRD_SEND_TOO_LONG;
	} else if (req->kind == SRD_MSG_WRITE || req->kind == SRD_MSG_READ) {
		if (req->rdma.rdma_len > SRD_MAX_RDMA_BYTES)
			return SRD_SEND_TOO_LONG;
		if ((req->kind == SRD_MSG_WRITE && req->len != req->rdma.length) ||
		    (req->kind == SRD_MSG_READ && req->len) ||
		    req->rdma.rdma_offset > req->rdma.rdma_len ||
		    req->rdma.length > req->rdma.rdma_len - req->rdma.rdma_offset)
			return SRD_SEND_INVAL;
	} else {
		return SRD_SEND_INVAL;	/* responses are the engine's own */
	}
	if (req->kind != SRD_MSG_SEND &&
	    req->rdma.length > SRD_MAX_RDMA_MSG_BYTES) {
		/* Chunks, each a message (rdma_op.c). */
		ret = srd_tx_post_op(peer, req);
		if (ret != SRD_SEND_OK)
			return ret;
	} else {
		if (!srd_tx_queue_has_room(peer, req->src_qpn, 1))
			return SRD_SEND_BUSY;
		m = srd_tx_msg_alloc(peer, req);
		if (!m)
			return SRD_SEND_NOMEM;
		srd_tx_queue_msg(peer, m);
	}
	/* One reading of the clock: a kernel's costs a call to ktime_get(). */
	now_us = srd_now(peer);
	peer->last_active_us = now_us;
	if (peer->state == SRD_PEER_PROBING &&
	    peer->hello_due_us == SRD_NO_DEADLINE) {
		peer->hello_tries = 0;
		peer->hello_start_us = now_us;
		peer->hello_due_us = now_us;	/* at once, below */
		srd_peer_on_timer(peer);
		return SRD_SEND_OK;
	}
	srd_tx_pump(peer, now_us);
	srd_peer_update_deadline(peer);
	return SRD_SEND_OK;
}

/*
 * The responder side of an RDMA read: the request @req was accepted and
 * @in (from rx_begin) says where the bytes come from.
 */
bool srd_tx_queue_resp(struct srd_peer *peer, const struct srd_pkt *req,
		       struct srd_inbound *in)
{
	struct srd_send_req r = {
		.src_qpn = req->dst_qpn,
		.dst_qpn = req->src_qpn,
		.len = req->rdma.length,
		.kind = SRD_MSG_READ_RESP,
	};
	struct srd_tx_msg *m;

	if (srd_tx_queued_msgs(peer) >= peer->eng->cfg.max_pending_msgs)
		return false;
	m = srd_tx_msg_alloc(peer, &r);
	if (!m)
		return false;
	m->resp_src = in;
	m->req_msg_id = req->msg_id;
	m->req_attempt = req->attempt;
	srd_tx_queue_msg(peer, m);
	return true;
}

bool srd_tx_send_data(struct srd_peer *peer, struct srd_tx_msg *m,
		      uint32_t seg, uint32_t w, enum srd_tx_why why,
		      uint32_t last_path, uint64_t now_us)
{
	bool retx = why != SRD_TXW_NEW, retx_rto = why == SRD_TXW_RTO;
	const struct srd_config *cfg = &peer->eng->cfg;
	uint8_t hdr[SRD_HDR_MAX_BYTES];
	struct srd_tx_pkt *e;
	struct srd_pkt ack;
	uint32_t path, hlen, off, len, psn;
	bool probe, ack_now;
	uint8_t flags;

	path = srd_path_select(peer, now_us, retx ? last_path : SRD_PATH_NONE,
			       &probe);
	if (probe)
		peer->paths[path].probe_in_flight = true;
	off = seg * m->seg_bytes;
	len = m->len - off < m->seg_bytes ? m->len - off : m->seg_bytes;
	psn = peer->snd_nxt++;
	/*
	 * A last segment that more DATA follows at once is ACKed with it
	 * (ack_every_pkts, ack_delay_us): it asks only when the pump will
	 * stop after it, and then only if fewer than ack_every_pkts are
	 * unACKed with it: of that many, the receiver's count ACKs one, that
	 * ACK reopens the window, and ack_delay_us bounds the wait of the
	 * rest (docs/protocol.md, "Sender").
	 */
	ack_now = probe || (seg + 1 == m->nsegs &&
			    (retx || (peer->inflight + 1 < cfg->ack_every_pkts &&
				      !srd_tx_could_send(peer, w))));
	flags = (m->solicited ? SRD_WF_DATA_SOLICITED : 0) |
		(m->has_imm ? SRD_WF_DATA_HAS_IMM : 0) |
		(retx ? SRD_WF_DATA_RETRANSMIT : 0) |
		(ack_now ? SRD_WF_DATA_ACK_NOW : 0);
	if (!retx && seg == 0 && m->kind != SRD_MSG_READ_RESP) {
		srd_rx_on_msg_sent(peer, now_us);
		peer->msg_sent = true;
		peer->msg_sent_us = now_us;
	}
	hlen = srd_wire_put_msg(hdr, peer, m, psn, off, flags, (uint8_t)path);
	/*
	 * The ACK we owe rides along if the packet has room for it: a full
	 * segment's packet is the largest the path takes.  One that waits
	 * for an answer goes now if the answer has no room for it: waiting
	 * longer gains nothing.  Only @ack's ACK fields are set and read.
	 */
	if (len + SRD_ACK_BLOCK_BYTES <= m->seg_bytes &&
	    srd_rx_ack_attach(peer, now_us, &ack))
		hlen = srd_wire_put_ack_block(hdr, hlen, &ack);
	else if (peer->ack_for_reply)
		srd_rx_send_ack(peer, now_us);

	e = &peer->ring[psn & srd_tx_ring_mask(peer)];
	e->sent_us = now_us;
	e->psn = psn;
	e->msg_id = m->msg_id;
	e->seg = seg;
	e->path = (uint8_t)path;
	e->attempt = m->attempt;
	e->in_use = true;
	e->is_probe = probe;
	e->is_retx = retx;
	e->is_tlp = false;
	e->ack_now = ack_now;
	e->retx_rto = retx && retx_rto;
	e->lost_path = (uint8_t)(retx ? last_path : path);
	e->weight = (uint16_t)w;
	peer->inflight++;
	peer->inflight_w += w;
	peer->tail_ack_now = ack_now;

	peer->ctr.tx_data_pkts++;
	if (retx) {
		peer->ctr.retransmits++;
		peer->ctr.retrans_bytes += hlen + len;
	} else {
		peer->tlp_base_us = now_us;
	}
	peer->paths[path].tx_pkts++;
	srd_cc_on_send(&peer->cc, cfg, &peer->rtt, w, now_us);
	SRD_TRACE(peer, SRD_EV_DATA_TX, psn, m->msg_id, seg, path, why,
		  m->kind, 0);
	if (srd_peer_transmit(peer, path, hdr, hlen, m, off, len) ==
	    SRD_TX_ABORT &&
	    m->kind == SRD_MSG_READ_RESP) {
		/* The MR was deregistered: nothing more of it is sent. */
		resp_failed(peer, m, SRD_COMP_REMOTE_ACCESS);
		srd_tx_complete(peer, m, SRD_COMP_REMOTE_ACCESS);
		return false;
	}
	return true;
}

static bool retx_pop(struct srd_peer *peer, struct srd_retx *out)
{
	uint32_t mask = srd_tx_ring_mask(peer);
	struct srd_tx_msg *m;

	while (peer->retx_head != peer->retx_tail) {
		*out = peer->retx[peer->retx_head & mask];
		m = srd_tx_msg_by_id(peer, out->msg_id);
		if (m && m->state == SRD_TXM_ACTIVE &&
		    m->attempt == out->attempt && !srd_bit_test(m->acked, out->seg))
			return true;
		peer->retx_head++;	/* stale: finished or ACKed meanwhile */
	}
	return false;
}

/*
 * Round-robin over the messages with segments to send, in rounds: a
 * round visits the ids from the oldest to the newest at its start, one
 * segment each, and a message started during a round waits for the next.
 * Were new messages visited as the cursor reaches them, a stream of new
 * ones (a client that posts one as each completes) would keep the cursor
 * ahead of the older ones behind it, which then wait for seconds (the
 * simulator's incast_depth: a message overtaken by 50 newer ones).  The
 * cursor moves only when the segment is sent (*@rr_end: the round's end
 * for the pump to keep then): a window or pacing that holds the packet
 * back must not cost the message its turn.
 * An RNR probe sends its first segment alone until the receiver took it
 * (rnr.c): refused, the rest would only draw a NAK each.
 */
static struct srd_tx_msg *next_new(struct srd_peer *peer, uint32_t *rr_end)
{
	uint32_t cnt = peer->msg_next - peer->msg_base, pos, end, round;
	struct srd_tx_msg *m;

	if (!cnt || !peer->tx_unsent)
		return NULL;
	/* Offsets from msg_base: ids wrap, and the base moves on. */
	pos = peer->msg_rr - peer->msg_base;
	end = peer->msg_rr_end - peer->msg_base;
	if (end > cnt)
		end = cnt;
	if (pos > end)
		pos = end;
	for (round = 0; round < 2; round++) {
		for (; pos < end; pos++) {
			m = srd_tx_msg_by_id(peer, peer->msg_base + pos);
			if (m && srd_tx_msg_unsent(m)) {
				*rr_end = peer->msg_base + end;
				return m;
			}
		}
		/* The round is over: the next one takes every message now. */
		pos = 0;
		end = cnt;
	}
	return NULL;
}

void srd_tx_pump(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_msg *m;
	struct srd_retx r;
	uint32_t rr_end = 0;

	if (peer->state != SRD_PEER_ESTABLISHED)
		return;
	if (peer->rnr_gates)
		srd_rnr_wake(peer, now_us);
	while ((m = peer->pending_head)) {
		/* A chunk of a failed operation never starts (rdma_op.c). */
		if (m->op && m->op->status != SRD_COMP_OK) {
			srd_tx_unqueue_head(peer);
			if (m->rnr_probe)
				srd_rnr_open(peer, m);
			srd_tx_op_chunk_done(peer, m, SRD_COMP_FLUSHED);
			srd_tx_msg_free(peer, m);
			continue;
		}
		/* A message of QPs whose receiver is not ready waits off it. */
		if (peer->rnr_gates && srd_rnr_gated(peer, m))
			continue;
		if (!srd_tx_msg_activate(peer, m))
			break;
		srd_tx_unqueue_head(peer);
	}
	for (;;) {
		bool have_retx = retx_pop(peer, &r);
		uint32_t w;

		m = have_retx ? srd_tx_msg_by_id(peer, r.msg_id) :
				next_new(peer, &rr_end);
		if (!m)
			break;
		w = srd_tx_pkt_weight(peer, m, have_retx ? r.seg : m->next_seg);
		if (!srd_cc_window_fits(&peer->cc, peer->inflight_w, w) &&
		    !(have_retx && peer->rto_probe)) {
			if (!peer->cc.stalled)
				peer->ctr.cwnd_stalls++;
			peer->cc.stalled = true;
			break;
		}
		if (peer->ring[peer->snd_nxt & srd_tx_ring_mask(peer)].in_use) {
			if (!peer->cc.stalled)
				peer->ctr.tx_window_stalls++;
			peer->cc.stalled = true;
			break;
		}
		if (!srd_cc_pacing_allows(&peer->cc, now_us))
			break;
		peer->cc.stalled = false;
		if (have_retx) {
			peer->retx_head++;
			peer->rto_probe = false;
			srd_tx_send_data(peer, m, r.seg, w,
					 r.timeout ? SRD_TXW_RTO : SRD_TXW_SACK,
					 r.last_path, now_us);
		} else {
			peer->msg_rr = m->msg_id + 1;
			peer->msg_rr_end = rr_end;
			m->next_seg++;
			if (!srd_tx_msg_unsent(m))
				peer->tx_unsent--;
			srd_tx_send_data(peer, m, m->next_seg - 1, w,
					 SRD_TXW_NEW, SRD_PATH_NONE, now_us);
		}
		/* (srd_tx_send_data may have completed m: not used again) */
	}
}
