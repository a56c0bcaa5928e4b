// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the sender's loss recovery.  ACK and NAK processing,
 * loss detection (SACK evidence plus a time threshold per path), the RTO,
 * tail loss probes, RDMA read response timeouts and the retry budget;
 * the sender itself (posting, the in-flight table, picking packets) is
 * tx.c.
 */
#include "recovery.h"
#include "rnr.h"

/* --- ACKs, NAKs, losses --------------------------------------------- */

/*
 * @blame: the packet's path takes the loss (a timeout if @timeout).  An
 * RTO blames only the path of the oldest packet, the one that timed out:
 * the others are resent, but their paths did nothing known to be wrong.
 */
static void declare_lost(struct srd_peer *peer, struct srd_tx_pkt *e,
			 bool timeout, bool blame, uint64_t now_us)
{
	uint32_t mask = srd_tx_ring_mask(peer);
	struct srd_tx_msg *m = srd_tx_msg_by_id(peer, e->msg_id);
	struct srd_retx *r;
	bool probe = e->is_probe;

	srd_tx_release_pkt(peer, e);
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
		e = &peer->ring[psn & srd_tx_ring_mask(peer)];
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
	if (lost && !srd_cc_on_loss(&peer->cc, &peer->eng->cfg, &peer->rtt, now_us))
		peer->ctr.cc_losses_without_queue++;
	srd_tx_advance_una(peer);
}

static void ack_pkt(struct srd_peer *peer, struct srd_tx_pkt *e,
		    uint32_t rtt_us)
{
	struct srd_tx_msg *m = srd_tx_msg_by_id(peer, e->msg_id);
	bool probe = e->is_probe;

	srd_tx_release_pkt(peer, e);
	srd_path_on_ack(peer, e->path, probe, rtt_us);
	if (!m || m->state != SRD_TXM_ACTIVE || m->attempt != e->attempt ||
	    srd_bit_test(m->acked, e->seg))
		return;
	srd_bit_set(m->acked, e->seg);
	/* The receiver took the probe: its QPs' gate opens, or probes again. */
	if (m->rnr_probe)
		srd_rnr_taken(peer, m, srd_now(peer));
	if (++m->segs_acked < m->nsegs)
		return;
	if (m->kind == SRD_MSG_READ)
		srd_tx_await_resp(peer, m, srd_now(peer));
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
	struct srd_tx_pkt *e = &peer->ring[psn & srd_tx_ring_mask(peer)];

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
	uint32_t mask = srd_tx_ring_mask(peer), newly = 0, newly_w = 0, sample = 0;
	uint32_t i, psn, lim;
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
	/*
	 * An ACK on its own: its sender holds no ACK for an answer now (it
	 * ACKs at once, or its wait ran out).  One on DATA: it answers.
	 */
	peer->remote_waits = p->opcode != SRD_WOP_ACK;
	if (p->ack_flags & SRD_WF_ACK_DUP)
		on_dup_ack(peer, p->dup_psn);
	if (srd_cc_drain_ack(&peer->cc, cfg, p->ack_flags & SRD_WF_ACK_DRAIN,
			     now_us))
		peer->ctr.cc_drains++;
	e = &peer->ring[p->ack_psn & mask];
	if (e->in_use && e->psn == p->ack_psn) {
		uint64_t s = now_us - e->sent_us;

		if (s > p->ack_delay_us)
			s -= p->ack_delay_us;
		/*
		 * Below the clock's resolution counts as 1 us: 0 would be
		 * no sample for the path (ack_pkt()), whose smoothed RTT
		 * would then stay at an old one for good.
		 */
		sample = s > 0xffffffffu ? 0xffffffffu : s ? (uint32_t)s : 1;
		srd_rtt_sample(&peer->rtt, cfg, sample, now_us);
		srd_cc_drain_sample(&peer->cc, e->sent_us);
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
		newly_w += e->weight;
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
		peer->rto_probe = false;
		peer->tlp_base_us = now_us;
		peer->tlp_sent = 0;
		srd_cc_on_ack(&peer->cc, cfg, &peer->rtt, newly_w,
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
	struct srd_tx_msg *m;

	peer->ctr.naks_received++;
	if (p->nak_reason == SRD_NAK_RNR)
		peer->ctr.rnr_naks_received++;
	SRD_TRACE(peer, SRD_EV_NAK_RX, p->psn, p->msg_id, 0, 0, 0,
		  p->nak_reason, p->attempt);
	m = srd_tx_msg_by_id(peer, p->msg_id);
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
	if (m->rnr_naks < 0xff)
		m->rnr_naks++;
	if (m->rnr_retry != SRD_RNR_RETRY_INFINITE && m->rnr_naks > m->rnr_retry) {
		srd_tx_complete(peer, m, SRD_COMP_RNR_RETRY_EXC);
		srd_tx_pump(peer, now_us);
		return;
	}
	/*
	 * It waits on its receiver, not on the network: out of the window,
	 * which every QP shares, into its QPs' gate (rnr.c).
	 */
	srd_tx_abandon_pkts(peer, m->msg_id);
	srd_tx_leave_window(peer, m);
	srd_tx_msg_deactivate(peer, m);
	m->attempt++;
	srd_rnr_park(peer, m, now_us);
	srd_tx_pump(peer, now_us);
}

/* --- timers ---------------------------------------------------------- */

static void on_rto(struct srd_peer *peer, uint64_t now_us)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	bool oldest = true, first = !peer->rto_backoff;
	struct srd_tx_pkt *e;
	uint32_t psn;

	/*
	 * The first RTO of a run resends the oldest packet alone, beyond the
	 * window (F-RTO, RFC 5682, where each send has a PSN of its own): an
	 * ACK of a packet sent before it says the RTO was needless (a
	 * receiver that did not run for a while: tens of milliseconds under
	 * TCG), and the others are not sent twice; an ACK of the resend
	 * alone lets the time threshold find them lost.  A second RTO in a
	 * row loses everything in flight, not only what is older than it:
	 * the next RTO is timed from this one, so packets sent microseconds
	 * apart do not expire one RTO each, back to back, spending the
	 * retry budget in a moment.
	 */
	peer->ctr.rto_expired++;
	for (psn = peer->snd_una; psn != peer->snd_nxt; psn++) {
		e = &peer->ring[psn & srd_tx_ring_mask(peer)];
		if (e->in_use && e->psn == psn) {
			declare_lost(peer, e, true, oldest, now_us);
			oldest = false;
			if (first)
				break;
		}
	}
	srd_tx_advance_una(peer);
	peer->rto_at_us = now_us;
	peer->rto_probe = first;
	/* Tail probes start again from here, not from the last ACK. */
	peer->tlp_base_us = now_us;
	peer->tlp_sent = 0;
	if (!srd_cc_on_rto(&peer->cc, cfg, &peer->rtt, peer->rto_backoff == 0, now_us))
		peer->ctr.cc_losses_without_queue++;
	SRD_TRACE(peer, SRD_EV_RTO, peer->snd_una, 0, 0, 0, 0,
		  peer->rto_backoff + 1,
		  srd_rto_backed_off(&peer->rtt, cfg, peer->rto_backoff));
	if (first)
		peer->rto_run_us = now_us;
	/*
	 * Given up only when silent for peer_timeout_us as well: an RTO of
	 * 200 us spends the count in a second, and a live peer on a busy
	 * host (a virtual CPU descheduled) can be silent for longer.
	 */
	if (++peer->rto_backoff > cfg->rto_retries_max &&
	    now_us - peer->rto_run_us >= cfg->peer_timeout_us) {
		peer->ctr.peer_unreachable++;
		srd_tx_fail_all(peer, SRD_COMP_UNRESP_REMOTE, true);
		srd_tx_reset_packets(peer);
	}
}

/*
 * How long the receiver may hold the ACK of a packet flagged ACK_NOW:
 * the reply wait (srd_reply_wait_us()) while it answers our messages (its
 * last ACK came on an answer: rx.c), else nothing.  Both ends are meant
 * to use the same ack_reply_wait_us, and see about the same RTT.
 */
static uint32_t reply_wait_us(const struct srd_peer *peer)
{
	return peer->remote_waits ?
	       srd_reply_wait_us(peer, SRD_REPLY_WAIT_RTTS + 1) : 0;
}

static inline uint64_t tlp_deadline(const struct srd_peer *peer)
{
	const struct srd_rtt *r = &peer->rtt;

	if (!peer->inflight || peer->tlp_sent >= SRD_TLP_MAX || !r->srtt_us)
		return SRD_NO_DEADLINE;
	/*
	 * Two smoothed RTTs, or the RTT and four mean deviations where that
	 * is more, as the RTO has it: an RTT with a long tail (virtual CPUs
	 * that wait for a host's, as between TCG guests) had one exchange in
	 * seven probed for nothing at 2 x srtt.  The second probe two RTTs
	 * after the first.  A receiver that answers holds the ACK of a
	 * packet flagged ACK_NOW for its answer.
	 */
	return peer->tlp_base_us +
	       srd_max_u64(2ull * r->srtt_us,
			   (uint64_t)r->srtt_us + 4ull * r->rttvar_us) +
	       2ull * peer->tlp_sent * r->srtt_us +
	       peer->eng->cfg.ack_delay_us +
	       (peer->tail_ack_now ? reply_wait_us(peer) : 0);
}

/*
 * Tail loss probe (as TCP's, RFC 8985): packets are in flight but no ACK
 * came for two smoothed RTTs.  Most often the ACKs of a window's tail were
 * lost (a dead path, in the other direction), or the tail itself; either
 * way the sender would sit until the RTO.  Send the newest in-flight
 * segment once more, on another path, beyond the window: the receiver
 * ACKs it at once, with all it has.  At most SRD_TLP_MAX probes per ACK
 * progress or RTO: the ACK of the first may be lost as well.
 */
static void send_tlp(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_pkt *e = NULL;
	struct srd_tx_msg *m;
	uint32_t psn;

	peer->tlp_sent++;
	if (peer->ring[peer->snd_nxt & srd_tx_ring_mask(peer)].in_use)
		return;
	for (psn = peer->snd_nxt; psn != peer->snd_una; ) {
		psn--;
		e = &peer->ring[psn & srd_tx_ring_mask(peer)];
		if (e->in_use && e->psn == psn)
			break;
		e = NULL;
	}
	if (!e)
		return;
	m = srd_tx_msg_by_id(peer, e->msg_id);
	if (!m || m->state != SRD_TXM_ACTIVE || m->attempt != e->attempt ||
	    srd_bit_test(m->acked, e->seg))
		return;
	peer->ctr.tail_probes++;
	psn = peer->snd_nxt;
	if (srd_tx_send_data(peer, m, e->seg, e->weight, SRD_TXW_TLP, e->path,
			     now_us))
		peer->ring[psn & srd_tx_ring_mask(peer)].is_tlp = true;
}

static inline uint64_t rto_deadline(const struct srd_peer *peer)
{
	const struct srd_tx_pkt *e;

	if (!peer->inflight)
		return SRD_NO_DEADLINE;
	e = &peer->ring[peer->snd_una & srd_tx_ring_mask(peer)];
	/*
	 * Its ACK may wait for a reply, as the TLP's.  Without a backoff the
	 * RTO is rto_us, clamped already (struct srd_rtt): no call for it at
	 * every ACK.  After an RTO, from that RTO (on_rto()).
	 */
	return srd_max_u64(e->sent_us, peer->rto_at_us) + (peer->rto_backoff ?
			     srd_rto_backed_off(&peer->rtt, &peer->eng->cfg,
						peer->rto_backoff) :
			     peer->rtt.rto_us) +
	       (e->ack_now ? reply_wait_us(peer) : 0);
}

/* READs whose response made no progress in peer_timeout_us. */
static void await_timeouts(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_msg *m, **pp = &peer->awaiting;

	if (!peer->resp_due_head ||
	    peer->resp_due_head->resp_deadline_us > now_us)
		return;		/* none is due: skip the walk */
	while ((m = *pp)) {
		if (m->resp_deadline_us > now_us) {
			pp = &m->next;
			continue;
		}
		srd_tx_unawait(peer, pp);
		peer->ctr.resp_timeouts++;
		srd_tx_finish(peer, m, SRD_COMP_UNRESP_REMOTE);
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

uint64_t srd_tx_deadline_busy(const struct srd_peer *peer)
{
	uint64_t d = peer->loss_deadline_us;
	/* Neither the RTO nor a tail probe without packets in flight. */
	if (peer->inflight)
		d = srd_min_u64(d, srd_min_u64(rto_deadline(peer),
					       tlp_deadline(peer)));
	if (peer->resp_due_head)
		d = srd_min_u64(d, peer->resp_due_head->resp_deadline_us);
	if (peer->rnr_gates)
		d = srd_min_u64(d, srd_rnr_deadline(peer));
	/*
	 * Work that neither the window nor the packet table holds back waits
	 * for pacing only.  The gap may have ended since the pump looked
	 * (real clocks move during a call): a deadline in the past makes the
	 * OS call back at once, and the pump then sends.
	 */
	if (srd_tx_could_send(peer, 0))
		d = srd_min_u64(d, srd_cc_pacing_deadline_us(&peer->cc));
	return d;
}
