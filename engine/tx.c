// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the sender.  Posting, picking the next packet
 * (retransmissions first, then new segments round-robin over the active
 * messages), the in-flight packet table, ACK and NAK processing, loss
 * detection (SACK evidence plus a time threshold per path), the RTO and
 * the retry budget.
 *
 * Every transmission, first or again, takes a fresh PSN: an ACK is never
 * ambiguous, every ACKed packet gives an RTT sample for its path, and the
 * receiver's duplicate detection works on (message id, segment).
 *
 * Sender message states (enum srd_tx_msg_state):
 *
 *   QUEUED --window has room, peer ESTABLISHED--> ACTIVE
 *   ACTIVE --every segment ACKed--> done, send_done(OK)
 *   ACTIVE --RNR NAK, retries left--> RNR_WAIT --backoff over--> ACTIVE (attempt + 1)
 *   ACTIVE --RNR NAK, no retries left / error NAK / retry budget /
 *            peer restart / flush--> done, send_done(error)
 *
 * An RDMA READ is a one-segment request whose completion is its response
 * (a message in the other direction, placed by msg.c):
 *
 *   ACTIVE --response placed--> done, send_done(OK)
 *   ACTIVE --request ACKed--> AWAIT_RESP (out of the window, on
 *            peer->awaiting) --response placed--> done
 *   AWAIT_RESP --no response progress for resp_timeout_us--> UNRESP_REMOTE
 *   AWAIT_RESP --NAK REMOTE_ACCESS / REMOTE_ABORT, failure, flush--> error
 *
 * Leaving the window at its ACK keeps a READ from holding a message id
 * while the other side's response waits for one of its own: two peers
 * reading from each other can never fill both windows with READs.
 */
#include "srd_internal.h"

static uint32_t ring_mask(const struct srd_peer *peer)
{
	return peer->eng->cfg.tx_window_pkts - 1;
}

static struct srd_tx_msg *msg_by_id(struct srd_peer *peer, uint32_t id)
{
	struct srd_tx_msg *m;

	if (!srd_seq_le(peer->msg_base, id) || !srd_seq_lt(id, peer->msg_next))
		return NULL;
	m = peer->tx_slots[id & (peer->eng->cfg.msg_window - 1)];
	return m && m->msg_id == id ? m : NULL;
}

static void release_pkt(struct srd_peer *peer, struct srd_tx_pkt *e)
{
	if (e->is_probe)
		peer->paths[e->path].probe_in_flight = false;
	e->in_use = false;
	peer->inflight--;
}

static void advance_una(struct srd_peer *peer)
{
	struct srd_tx_pkt *e;

	while (peer->snd_una != peer->snd_nxt) {
		e = &peer->ring[peer->snd_una & ring_mask(peer)];
		if (e->in_use && e->psn == peer->snd_una)
			break;
		peer->snd_una++;
	}
}

/* Forget the packets of one message (NAKed, failed): never retransmitted. */
static void abandon_pkts(struct srd_peer *peer, uint32_t msg_id)
{
	struct srd_tx_pkt *e;
	uint32_t psn;

	for (psn = peer->snd_una; psn != peer->snd_nxt; psn++) {
		e = &peer->ring[psn & ring_mask(peer)];
		if (e->in_use && e->psn == psn && e->msg_id == msg_id)
			release_pkt(peer, e);
	}
	advance_una(peer);
}

static void advance_msg_base(struct srd_peer *peer)
{
	uint32_t w = peer->eng->cfg.msg_window;

	while (peer->msg_base != peer->msg_next &&
	       !peer->tx_slots[peer->msg_base & (w - 1)])
		peer->msg_base++;
}

static void finish(struct srd_peer *peer, struct srd_tx_msg *m,
		   enum srd_comp_status st)
{
	if (st == SRD_COMP_OK) {
		peer->ctr.msgs_sent++;
	} else {
		peer->ctr.msgs_failed++;
		SRD_TRACE(peer, SRD_EV_MSG_ERROR, 0, m->msg_id, 0, 0, 0, st, 0);
	}
	if (m->kind == SRD_MSG_READ_RESP)
		peer->eng->ops->resp_done(peer->eng->os, m->cookie, st);
	else
		peer->eng->ops->send_done(peer->eng->os, m->cookie, st);
	srd_tx_msg_free(peer, m);
}

struct srd_tx_msg *srd_tx_read_find(struct srd_peer *peer, uint32_t id)
{
	struct srd_tx_msg *m = msg_by_id(peer, id);

	if (m)
		return m->kind == SRD_MSG_READ && m->state == SRD_TXM_ACTIVE ?
		       m : NULL;
	for (m = peer->awaiting; m; m = m->next)
		if (m->msg_id == id)
			return m;
	return NULL;
}

static void unlink_awaiting(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg **pp;

	for (pp = &peer->awaiting; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			return;
		}
	}
}

/* A READ's request was ACKed: it leaves the window and waits. */
static void await_resp(struct srd_peer *peer, struct srd_tx_msg *m,
		       uint64_t now_us)
{
	peer->tx_slots[m->msg_id & (peer->eng->cfg.msg_window - 1)] = NULL;
	advance_msg_base(peer);
	m->state = SRD_TXM_AWAIT_RESP;
	if (!m->resp_claimed)
		m->resp_deadline_us = now_us + peer->eng->cfg.resp_timeout_us;
	m->next = peer->awaiting;
	peer->awaiting = m;
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

/* m is ACTIVE, RNR_WAIT or AWAIT_RESP: take it out and complete it. */
void srd_tx_complete(struct srd_peer *peer, struct srd_tx_msg *m,
		     enum srd_comp_status st)
{
	if (m->state == SRD_TXM_AWAIT_RESP) {
		unlink_awaiting(peer, m);
		finish(peer, m, st);
		return;
	}
	if (m->state == SRD_TXM_RNR_WAIT)
		peer->rnr_waiting--;
	if (st != SRD_COMP_OK)
		abandon_pkts(peer, m->msg_id);
	peer->tx_slots[m->msg_id & (peer->eng->cfg.msg_window - 1)] = NULL;
	advance_msg_base(peer);
	finish(peer, m, st);
}

static void fail_matching(struct srd_peer *peer, enum srd_comp_status st,
			  bool include_pending, bool by_qpn, uint32_t qpn)
{
	struct srd_tx_msg *m, **pp;
	uint32_t id;

	for (id = peer->msg_base; id != peer->msg_next; id++) {
		m = msg_by_id(peer, id);
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
		*pp = m->next;
		finish(peer, m, st);
	}
	if (!include_pending)
		return;
	pp = &peer->pending_head;
	while ((m = *pp)) {
		if (by_qpn && m->src_qpn != qpn) {
			pp = &m->next;
			continue;
		}
		*pp = m->next;
		peer->pending_count--;
		finish(peer, m, st);
	}
	peer->pending_tail = NULL;
	for (m = peer->pending_head; m; m = m->next)
		peer->pending_tail = m;
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
	peer->snd_una = peer->snd_nxt;
	peer->largest_acked_valid = false;
	peer->loss_deadline_us = SRD_NO_DEADLINE;
	peer->retx_head = peer->retx_tail = 0;
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

/* Posted, not yet given a message id: wait in order for the window. */
static void pending_append(struct srd_peer *peer, struct srd_tx_msg *m)
{
	if (peer->pending_tail)
		peer->pending_tail->next = m;
	else
		peer->pending_head = m;
	peer->pending_tail = m;
	peer->pending_count++;
}

int srd_send_msg(struct srd_peer *peer, const struct srd_send_req *req)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	struct srd_tx_msg *m;

	if (!req)
		return SRD_SEND_INVAL;
	if (req->kind == SRD_MSG_SEND) {
		if (req->len > cfg->max_msg_bytes)
			return SRD_SEND_TOO_LONG;
	} else if (req->kind == SRD_MSG_WRITE || req->kind == SRD_MSG_READ) {
		if (req->rdma.length > SRD_MAX_RDMA_MSG_BYTES)
			return SRD_SEND_TOO_LONG;
		if ((req->kind == SRD_MSG_WRITE && req->len != req->rdma.length) ||
		    req->rdma.rdma_len > SRD_MAX_RDMA_BYTES ||
		    req->rdma.rdma_offset > req->rdma.rdma_len ||
		    req->rdma.length > req->rdma.rdma_len - req->rdma.rdma_offset)
			return SRD_SEND_INVAL;
	} else {
		return SRD_SEND_INVAL;	/* responses are the engine's own */
	}
	if (peer->pending_count >= cfg->max_pending_msgs)
		return SRD_SEND_BUSY;
	peer->last_active_us = srd_now(peer);
	m = srd_tx_msg_alloc(peer, req);
	if (!m)
		return SRD_SEND_NOMEM;
	pending_append(peer, m);
	if (peer->state == SRD_PEER_PROBING &&
	    peer->hello_due_us == SRD_NO_DEADLINE) {
		peer->hello_tries = 0;
		peer->hello_due_us = srd_now(peer);	/* at once, below */
		srd_peer_on_timer(peer);
		return SRD_SEND_OK;
	}
	srd_tx_pump(peer, srd_now(peer));
	srd_peer_update_deadline(peer);
	return SRD_SEND_OK;
}

/*
 * The responder side of an RDMA read: the request @req was accepted and
 * @handle (from rx_begin) says where the bytes come from.
 */
bool srd_tx_queue_resp(struct srd_peer *peer, const struct srd_pkt *req,
		       void *handle)
{
	struct srd_send_req r = {
		.cookie = handle,
		.src_qpn = req->dst_qpn,
		.dst_qpn = req->src_qpn,
		.len = req->rdma.length,
		.kind = SRD_MSG_READ_RESP,
	};
	struct srd_tx_msg *m;

	if (peer->pending_count >= peer->eng->cfg.max_pending_msgs)
		return false;
	m = srd_tx_msg_alloc(peer, &r);
	if (!m)
		return false;
	m->req_msg_id = req->msg_id;
	m->req_attempt = req->attempt;
	pending_append(peer, m);
	return true;
}

static uint32_t put_header(uint8_t *hdr, const struct srd_tx_msg *m,
			   struct srd_pkt *p)
{
	switch (m->kind) {
	case SRD_MSG_WRITE:
		p->rdma = m->rdma;
		return srd_wire_put_rdma(hdr, p, SRD_WOP_WRITE);
	case SRD_MSG_READ:
		p->rdma = m->rdma;
		return srd_wire_put_rdma(hdr, p, SRD_WOP_READ_REQ);
	case SRD_MSG_READ_RESP:
		p->req_msg_id = m->req_msg_id;
		p->req_attempt = m->req_attempt;
		return srd_wire_put_resp(hdr, p);
	default:
		return srd_wire_put_data(hdr, p);
	}
}

/* Returns false when the message was failed instead (its source is gone). */
static bool send_data(struct srd_peer *peer, struct srd_tx_msg *m,
		      uint32_t seg, enum srd_tx_why why, uint32_t last_path,
		      uint64_t now_us)
{
	bool retx = why != SRD_TXW_NEW, retx_rto = why == SRD_TXW_RTO;
	const struct srd_config *cfg = &peer->eng->cfg;
	uint8_t hdr[SRD_HDR_MAX_BYTES];
	struct srd_tx_pkt *e;
	struct srd_pkt p;
	uint32_t path, hlen, off, len;
	bool probe;

	path = srd_path_select(peer, now_us, retx ? last_path : SRD_PATH_NONE,
			       &probe);
	if (probe)
		peer->paths[path].probe_in_flight = true;
	off = seg * m->seg_bytes;
	len = m->len - off < m->seg_bytes ? m->len - off : m->seg_bytes;

	srd_memset(&p, 0, sizeof(p));
	p.src_epoch = peer->local_tag;
	p.dst_epoch = peer->remote_epoch;
	p.psn = peer->snd_nxt++;
	p.msg_id = m->msg_id;
	p.msg_base = peer->msg_base;
	p.dst_qpn = m->dst_qpn;
	p.src_qpn = m->src_qpn;
	p.qkey = m->qkey;
	p.imm_data = m->has_imm ? m->imm_data : 0;
	p.msg_len = m->len;
	p.offset = off;
	p.seg_bytes = (uint16_t)m->seg_bytes;
	p.attempt = m->attempt;
	p.path = (uint8_t)path;
	p.flags = (m->solicited ? SRD_WF_DATA_SOLICITED : 0) |
		  (m->has_imm ? SRD_WF_DATA_HAS_IMM : 0) |
		  (retx ? SRD_WF_DATA_RETRANSMIT : 0) |
		  (probe || seg + 1 == m->nsegs ? SRD_WF_DATA_ACK_NOW : 0);
	hlen = put_header(hdr, m, &p);

	e = &peer->ring[p.psn & ring_mask(peer)];
	e->sent_us = now_us;
	e->psn = p.psn;
	e->msg_id = m->msg_id;
	e->seg = seg;
	e->path = (uint8_t)path;
	e->attempt = m->attempt;
	e->in_use = true;
	e->is_probe = probe;
	e->is_retx = retx;
	e->is_tlp = false;
	e->retx_rto = retx && retx_rto;
	e->lost_path = (uint8_t)(retx ? last_path : path);
	peer->inflight++;

	peer->ctr.tx_data_pkts++;
	if (retx)
		peer->ctr.retransmits++;
	else
		peer->tlp_base_us = now_us;
	peer->paths[path].tx_pkts++;
	srd_cc_on_send(&peer->cc, cfg, &peer->rtt, now_us);
	SRD_TRACE(peer, SRD_EV_DATA_TX, p.psn, p.msg_id, seg, path, why,
		  m->kind, 0);
	if (srd_peer_transmit(peer, path, hdr, hlen, m->cookie, m->kind, off,
			      len) == SRD_TX_ABORT && m->kind == SRD_MSG_READ_RESP) {
		/* The MR was deregistered: nothing more of it is sent. */
		resp_failed(peer, m, SRD_COMP_REMOTE_ACCESS);
		srd_tx_complete(peer, m, SRD_COMP_REMOTE_ACCESS);
		return false;
	}
	return true;
}

static bool retx_pop(struct srd_peer *peer, struct srd_retx *out)
{
	uint32_t mask = ring_mask(peer);
	struct srd_tx_msg *m;

	while (peer->retx_head != peer->retx_tail) {
		*out = peer->retx[peer->retx_head & mask];
		m = msg_by_id(peer, out->msg_id);
		if (m && m->state == SRD_TXM_ACTIVE &&
		    m->attempt == out->attempt && !srd_bit_test(m->acked, out->seg))
			return true;
		peer->retx_head++;	/* stale: finished or ACKed meanwhile */
	}
	return false;
}

static struct srd_tx_msg *next_new(struct srd_peer *peer)
{
	uint32_t cnt = peer->msg_next - peer->msg_base, k, start, id;
	struct srd_tx_msg *m;

	if (!cnt)
		return NULL;
	start = peer->msg_rr - peer->msg_base;
	if (start >= cnt)
		start = 0;
	for (k = 0; k < cnt; k++) {
		id = peer->msg_base + (start + k) % cnt;
		m = msg_by_id(peer, id);
		if (m && m->state == SRD_TXM_ACTIVE && m->next_seg < m->nsegs) {
			peer->msg_rr = id + 1;
			return m;
		}
	}
	return NULL;
}

static void wake_rnr(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_msg *m;
	uint32_t id;

	if (!peer->rnr_waiting)
		return;		/* the pump's common case: skip the scan */
	for (id = peer->msg_base; id != peer->msg_next; id++) {
		m = msg_by_id(peer, id);
		if (m && m->state == SRD_TXM_RNR_WAIT &&
		    now_us >= m->rnr_until_us) {
			m->state = SRD_TXM_ACTIVE;
			peer->rnr_waiting--;
		}
	}
}

void srd_tx_pump(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_msg *m;
	struct srd_retx r;

	if (peer->state != SRD_PEER_ESTABLISHED)
		return;
	while (peer->pending_head && srd_tx_msg_activate(peer, peer->pending_head)) {
		m = peer->pending_head;
		peer->pending_head = m->next;
		if (!peer->pending_head)
			peer->pending_tail = NULL;
		m->next = NULL;
		peer->pending_count--;
	}
	wake_rnr(peer, now_us);
	for (;;) {
		bool have_retx = retx_pop(peer, &r);

		m = have_retx ? msg_by_id(peer, r.msg_id) : next_new(peer);
		if (!m)
			break;
		if (peer->inflight >= srd_cc_window_pkts(&peer->cc)) {
			if (!peer->cc.stalled)
				peer->ctr.cwnd_stalls++;
			peer->cc.stalled = true;
			break;
		}
		if (peer->ring[peer->snd_nxt & ring_mask(peer)].in_use) {
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
			send_data(peer, m, r.seg,
				  r.timeout ? SRD_TXW_RTO : SRD_TXW_SACK,
				  r.last_path, now_us);
		} else {
			send_data(peer, m, m->next_seg++, SRD_TXW_NEW,
				  SRD_PATH_NONE, now_us);
		}
		/* (send_data may have completed m: it is not used again) */
	}
}

/* --- ACKs, NAKs, losses --------------------------------------------- */

/*
 * @blame: the packet's path takes the loss (a timeout if @timeout).  An
 * RTO blames only the path of the oldest packet, the one that timed out:
 * the others are resent, but their paths did nothing known to be wrong.
 */
static void declare_lost(struct srd_peer *peer, struct srd_tx_pkt *e,
			 bool timeout, bool blame, uint64_t now_us)
{
	uint32_t mask = ring_mask(peer);
	struct srd_tx_msg *m = msg_by_id(peer, e->msg_id);
	struct srd_retx *r;
	bool probe = e->is_probe;

	release_pkt(peer, e);
	if (blame)
		srd_path_on_loss(peer, e->path, probe, timeout, now_us);
	if (!m || m->state != SRD_TXM_ACTIVE || m->attempt != e->attempt ||
	    srd_bit_test(m->acked, e->seg))
		return;
	/* queue + in flight never exceed the ring (see docs/protocol.md) */
	if (peer->retx_tail - peer->retx_head > mask)
		return;
	r = &peer->retx[peer->retx_tail++ & mask];
	r->msg_id = e->msg_id;
	r->seg = e->seg;
	r->attempt = e->attempt;
	r->last_path = e->path;
	r->timeout = timeout;
}

static uint64_t loss_delay_us(const struct srd_peer *peer,
			      const struct srd_tx_pkt *e)
{
	uint64_t base = srd_max_u64(peer->paths[e->path].srtt_us,
				    srd_max_u64(peer->rtt.srtt_us,
						peer->rtt.latest_us));

	if (!base)
		return peer->rtt.rto_us;
	return base * 5 / 4 + peer->eng->cfg.reorder_slack_us +
	       peer->reo_wnd_us;
}

static void detect_losses(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_pkt *e;
	uint64_t at;
	uint32_t psn;
	bool lost = false;

	peer->loss_deadline_us = SRD_NO_DEADLINE;
	if (!peer->largest_acked_valid)
		return;
	for (psn = peer->snd_una; srd_seq_lt(psn, peer->largest_acked); psn++) {
		e = &peer->ring[psn & ring_mask(peer)];
		if (!e->in_use || e->psn != psn)
			continue;
		at = e->sent_us + loss_delay_us(peer, e);
		if (peer->largest_acked - psn >= peer->eng->cfg.reorder_pkts ||
		    now_us >= at) {
			declare_lost(peer, e, false, true, now_us);
			peer->ctr.fast_retransmits++;
			lost = true;
		} else if (at < peer->loss_deadline_us) {
			peer->loss_deadline_us = at;
		}
	}
	if (lost)
		srd_cc_on_loss(&peer->cc, &peer->eng->cfg, &peer->rtt, now_us);
	advance_una(peer);
}

static void ack_pkt(struct srd_peer *peer, struct srd_tx_pkt *e,
		    uint32_t rtt_us)
{
	struct srd_tx_msg *m = msg_by_id(peer, e->msg_id);
	bool probe = e->is_probe;

	release_pkt(peer, e);
	srd_path_on_ack(peer, e->path, probe, rtt_us);
	if (!m || m->state != SRD_TXM_ACTIVE || m->attempt != e->attempt ||
	    srd_bit_test(m->acked, e->seg))
		return;
	srd_bit_set(m->acked, e->seg);
	if (++m->segs_acked < m->nsegs)
		return;
	if (m->kind == SRD_MSG_READ)
		await_resp(peer, m, srd_now(peer));
	else
		srd_tx_complete(peer, m, SRD_COMP_OK);
}

/*
 * The receiver says PSN @psn carried data it already had.  If that was
 * our retransmission, the loss that caused it was not one: undo the
 * window cut and the path's penalty (in the spirit of Eifel and DSACK
 * undo, RFC 3522 and RFC 3708).
 */
static void on_dup_ack(struct srd_peer *peer, uint32_t psn)
{
	struct srd_tx_pkt *e = &peer->ring[psn & ring_mask(peer)];

	/* A tail probe's copy is expected to be a duplicate at times. */
	if (!e->in_use || e->psn != psn || !e->is_retx || e->is_tlp)
		return;
	e->is_retx = false;		/* once per retransmission */
	peer->ctr.spurious_retransmits++;
	/*
	 * Reordering beyond what the loss timer allowed (paths of unequal
	 * delay): allow more, as RACK does, up to one smoothed RTT.
	 */
	peer->reo_wnd_us = peer->reo_wnd_us ?
		(uint32_t)srd_min_u64((uint64_t)peer->reo_wnd_us * 2,
				      srd_max_u64(peer->rtt.srtt_us, 1)) :
		srd_max_u64(peer->rtt.srtt_us / 4, 1);
	peer->acks_since_spurious = 0;
	srd_cc_undo(&peer->cc);
	peer->rto_backoff = 0;
	if (e->retx_rto)
		srd_rtt_spurious_rto(&peer->rtt, &peer->eng->cfg);
	if (e->lost_path < peer->eng->cfg.n_paths)
		srd_path_on_spurious_loss(peer, e->lost_path);
}

void srd_tx_on_ack(struct srd_peer *peer, const struct srd_pkt *p,
		   uint64_t now_us)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	uint32_t mask = ring_mask(peer), newly = 0, sample = 0, i, psn, lim;
	struct srd_tx_pkt *e;

	peer->ctr.acks_received++;
	/* A long run without needless retransmissions: tighten again. */
	if ((peer->reo_wnd_us || peer->rtt.floor_us) &&
	    ++peer->acks_since_spurious >= 1024) {
		peer->reo_wnd_us /= 2;
		srd_rtt_relax_floor(&peer->rtt, cfg);
		peer->acks_since_spurious = 0;
	}
	if (!srd_seq_lt(p->ack_psn, peer->snd_nxt) ||
	    peer->snd_nxt - p->ack_psn > cfg->tx_window_pkts + SRD_SACK_WINDOW_PKTS)
		return;		/* never sent, or long gone */
	if (p->flags & SRD_WF_ACK_DUP)
		on_dup_ack(peer, p->dup_psn);
	e = &peer->ring[p->ack_psn & mask];
	if (e->in_use && e->psn == p->ack_psn) {
		uint64_t s = now_us - e->sent_us;

		if (s > p->ack_delay_us)
			s -= p->ack_delay_us;
		sample = s > 0xffffffffu ? 0xffffffffu : (uint32_t)s;
		srd_rtt_sample(&peer->rtt, cfg, sample, now_us);
	}
	/* Only PSNs from snd_una up can be in flight. */
	lim = srd_seq_lt(p->ack_psn, peer->snd_una) ? 0 :
	      p->ack_psn - peer->snd_una + 1;
	if (lim > SRD_SACK_WINDOW_PKTS + 1)
		lim = SRD_SACK_WINDOW_PKTS + 1;
	for (i = 0; i < lim; i++) {
		psn = p->ack_psn - i;
		if (i && !srd_bit_test(p->sack, i - 1))
			continue;
		e = &peer->ring[psn & mask];
		if (!e->in_use || e->psn != psn)
			continue;
		ack_pkt(peer, e, i ? 0 : sample);
		newly++;
	}
	if (!peer->largest_acked_valid ||
	    srd_seq_gt(p->ack_psn, peer->largest_acked)) {
		peer->largest_acked_valid = true;
		peer->largest_acked = p->ack_psn;
	}
	SRD_TRACE(peer, SRD_EV_ACK_RX, p->ack_psn, 0, 0, 0, 0, newly,
		  peer->inflight);
	if (newly) {
		peer->rto_backoff = 0;
		peer->tlp_base_us = now_us;
		peer->tlp_sent = 0;
		srd_cc_on_ack(&peer->cc, cfg, &peer->rtt, newly,
			      sample ? sample : peer->rtt.srtt_us, now_us);
	}
	detect_losses(peer, now_us);
	srd_tx_pump(peer, now_us);
}

static enum srd_comp_status nak_status(uint8_t reason)
{
	switch (reason) {
	case SRD_NAK_BAD_QPN:
		return SRD_COMP_BAD_DEST_QPN;
	case SRD_NAK_BAD_QKEY:
		return SRD_COMP_BAD_QKEY;
	case SRD_NAK_BAD_LENGTH:
		return SRD_COMP_REMOTE_BAD_LENGTH;
	case SRD_NAK_REMOTE_ACCESS:
		return SRD_COMP_REMOTE_ACCESS;
	default:
		return SRD_COMP_REMOTE_ABORT;
	}
}

void srd_tx_on_nak(struct srd_peer *peer, const struct srd_pkt *p,
		   uint64_t now_us)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	struct srd_tx_msg *m;
	uint64_t backoff;
	uint32_t i;

	peer->ctr.naks_received++;
	if (p->nak_reason == SRD_NAK_RNR)
		peer->ctr.rnr_naks_received++;
	SRD_TRACE(peer, SRD_EV_NAK_RX, p->psn, p->msg_id, 0, 0, 0,
		  p->nak_reason, p->attempt);
	m = msg_by_id(peer, p->msg_id);
	if (!m)
		m = srd_tx_read_find(peer, p->msg_id);	/* awaiting */
	/*
	 * A NAK answers one attempt; a later one ignores it.  So does a
	 * message partly accepted, except for REMOTE_ABORT (the receiving
	 * QP failed or went away after taking some segments) and
	 * REMOTE_ACCESS (an RDMA target deregistered mid-operation).
	 */
	if (!m || (m->state != SRD_TXM_ACTIVE &&
		   m->state != SRD_TXM_AWAIT_RESP) ||
	    m->attempt != p->attempt ||
	    (m->segs_acked && p->nak_reason != SRD_NAK_REMOTE_ABORT &&
	     p->nak_reason != SRD_NAK_REMOTE_ACCESS))
		return;
	peer->rto_backoff = 0;	/* the peer is alive */
	if (p->nak_reason != SRD_NAK_RNR) {
		srd_tx_complete(peer, m, nak_status(p->nak_reason));
		srd_tx_pump(peer, now_us);
		return;
	}
	m->rnr_naks++;
	if (m->rnr_retry != SRD_RNR_RETRY_INFINITE && m->rnr_naks > m->rnr_retry) {
		srd_tx_complete(peer, m, SRD_COMP_RNR_RETRY_EXC);
		srd_tx_pump(peer, now_us);
		return;
	}
	abandon_pkts(peer, m->msg_id);
	backoff = cfg->rnr_backoff_min_us;
	for (i = 1; i < m->rnr_naks && backoff < cfg->rnr_backoff_max_us; i++)
		backoff <<= 1;
	if (backoff > cfg->rnr_backoff_max_us)
		backoff = cfg->rnr_backoff_max_us;
	m->rnr_until_us = now_us + backoff;
	m->state = SRD_TXM_RNR_WAIT;
	peer->rnr_waiting++;
	m->attempt++;
	m->next_seg = 0;
	m->segs_acked = 0;
	srd_memset(m->acked, 0, m->acked_bytes);
	srd_tx_pump(peer, now_us);
}

/* --- timers ---------------------------------------------------------- */

static void on_rto(struct srd_peer *peer, uint64_t now_us)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	struct srd_tx_pkt *e;
	bool oldest = true;
	uint32_t psn;

	/*
	 * Everything in flight is lost, not only what is older than the
	 * RTO: packets sent microseconds apart would otherwise expire one
	 * RTO each, and once the backoff reaches rto_max_us those come back
	 * to back, spending the retry budget in a moment.
	 */
	peer->ctr.rto_expired++;
	for (psn = peer->snd_una; psn != peer->snd_nxt; psn++) {
		e = &peer->ring[psn & ring_mask(peer)];
		if (e->in_use && e->psn == psn) {
			declare_lost(peer, e, true, oldest, now_us);
			oldest = false;
		}
	}
	advance_una(peer);
	peer->tlp_sent = 0;
	srd_cc_on_rto(&peer->cc, cfg, peer->rto_backoff == 0, now_us);
	SRD_TRACE(peer, SRD_EV_RTO, peer->snd_una, 0, 0, 0, 0,
		  peer->rto_backoff + 1,
		  srd_rto_backed_off(&peer->rtt, cfg, peer->rto_backoff));
	if (++peer->rto_backoff > cfg->rto_retries_max) {
		peer->ctr.peer_unreachable++;
		srd_tx_fail_all(peer, SRD_COMP_UNRESP_REMOTE, true);
		srd_tx_reset_packets(peer);
	}
}

/*
 * Tail loss probe (as TCP's, RFC 8985): packets are in flight but no ACK
 * came for two smoothed RTTs.  Most often the ACKs of a window's tail were
 * lost (a dead path, in the other direction), or the tail itself; either
 * way the sender would sit until the RTO.  Send the newest in-flight
 * segment once more, on another path, beyond the window: the receiver
 * ACKs it at once, with all it has.  At most SRD_TLP_MAX probes per ACK
 * progress: the ACK of the first may be lost as well.
 */
static uint64_t tlp_deadline(const struct srd_peer *peer)
{
	if (!peer->inflight || peer->tlp_sent >= SRD_TLP_MAX ||
	    !peer->rtt.srtt_us)
		return SRD_NO_DEADLINE;
	/* The second probe two RTTs after the first. */
	return peer->tlp_base_us + (2ull + 2 * peer->tlp_sent) *
	       peer->rtt.srtt_us + peer->eng->cfg.ack_delay_us;
}

static void send_tlp(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_pkt *e = NULL;
	struct srd_tx_msg *m;
	uint32_t psn;

	peer->tlp_sent++;
	if (peer->ring[peer->snd_nxt & ring_mask(peer)].in_use)
		return;
	for (psn = peer->snd_nxt; psn != peer->snd_una; ) {
		psn--;
		e = &peer->ring[psn & ring_mask(peer)];
		if (e->in_use && e->psn == psn)
			break;
		e = NULL;
	}
	if (!e)
		return;
	m = msg_by_id(peer, e->msg_id);
	if (!m || m->state != SRD_TXM_ACTIVE || m->attempt != e->attempt ||
	    srd_bit_test(m->acked, e->seg))
		return;
	peer->ctr.tail_probes++;
	psn = peer->snd_nxt;
	if (send_data(peer, m, e->seg, SRD_TXW_TLP, e->path, now_us))
		peer->ring[psn & ring_mask(peer)].is_tlp = true;
}

static uint64_t rto_deadline(const struct srd_peer *peer)
{
	const struct srd_tx_pkt *e;

	if (!peer->inflight)
		return SRD_NO_DEADLINE;
	e = &peer->ring[peer->snd_una & ring_mask(peer)];
	return e->sent_us + srd_rto_backed_off(&peer->rtt, &peer->eng->cfg,
					       peer->rto_backoff);
}

/* READs whose response made no progress in resp_timeout_us. */
static void await_timeouts(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_msg *m, **pp = &peer->awaiting;

	while ((m = *pp)) {
		if (m->resp_deadline_us > now_us) {
			pp = &m->next;
			continue;
		}
		*pp = m->next;
		peer->ctr.resp_timeouts++;
		finish(peer, m, SRD_COMP_UNRESP_REMOTE);
	}
}

void srd_tx_on_timer(struct srd_peer *peer, uint64_t now_us)
{
	if (peer->state != SRD_PEER_ESTABLISHED)
		return;
	await_timeouts(peer, now_us);
	if (rto_deadline(peer) <= now_us)
		on_rto(peer, now_us);
	else if (tlp_deadline(peer) <= now_us)
		send_tlp(peer, now_us);
	if (peer->loss_deadline_us <= now_us)
		detect_losses(peer, now_us);
	srd_tx_pump(peer, now_us);
}

uint64_t srd_tx_deadline(const struct srd_peer *peer)
{
	uint64_t d = srd_min_u64(srd_min_u64(rto_deadline(peer),
					     tlp_deadline(peer)),
				 peer->loss_deadline_us);
	const struct srd_tx_msg *m;
	uint32_t id, w = peer->eng->cfg.msg_window;
	bool work = peer->retx_head != peer->retx_tail ||
		    (peer->pending_head && peer->msg_next - peer->msg_base < w);

	if (peer->state != SRD_PEER_ESTABLISHED)
		return SRD_NO_DEADLINE;
	for (m = peer->awaiting; m; m = m->next)
		d = srd_min_u64(d, m->resp_deadline_us);
	for (id = peer->msg_base; id != peer->msg_next; id++) {
		if (work && !peer->rnr_waiting)
			break;		/* nothing more to learn */
		m = peer->tx_slots[id & (w - 1)];
		if (!m)
			continue;
		if (m->state == SRD_TXM_RNR_WAIT)
			d = srd_min_u64(d, m->rnr_until_us);
		else if (m->next_seg < m->nsegs)
			work = true;
	}
	/*
	 * Work that neither the window nor the packet table holds back waits
	 * for pacing only.  The gap may have ended since the pump looked
	 * (real clocks move during a call): a deadline in the past makes the
	 * OS call back at once, and the pump then sends.
	 */
	if (work && peer->inflight < srd_cc_window_pkts(&peer->cc) &&
	    !peer->ring[peer->snd_nxt & ring_mask(peer)].in_use)
		d = srd_min_u64(d, srd_cc_pacing_deadline_us(&peer->cc));
	return d;
}
