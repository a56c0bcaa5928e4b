// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: messages that wait on their receiver, not on the
 * network (docs/protocol.md, "Receiver not ready").
 *
 * A message NAKed for RNR gives its message id back at once: it leaves
 * the window (as an ACKed READ does to await its response) and waits off
 * it, so that the window, which every QP of the peer shares, holds only
 * messages the network is moving.  It waits in a gate: one per pair of
 * local and remote QP that met RNR, holding every message of that pair
 * which met it or came after it.  The gate's head is the message to try
 * next; at its backoff's end it goes back to the front of the queue as
 * the gate's probe, takes a new message id when the window has room, and
 * is sent from its first segment, which goes alone until the receiver
 * takes it (its first ACK): refused, the rest would each draw a NAK.
 * Meanwhile the gate keeps the others: a new message of the pair joins it
 * instead of taking an id.
 *
 *   probe NAKed RNR again --> head again, a longer backoff
 *   probe ACKed (the receiver took it), the first time in a row
 *            --> the gate's next message goes at once as its probe;
 *   probe ACKed the second time in a row, or finished in any way
 *            --> the gate opens: every message of it is queued again
 *
 * The backoff is the gate's: it doubles with each probe NAKed in a row
 * and starts again from rnr_backoff_min_us once a probe is taken.  A
 * message's own NAKs say nothing of the receiver now: behind a receiver
 * with one receive, each message is NAKed again and again while the
 * others go first, and a backoff grown from them slept for a receive
 * posted long before.  And a gate opens only when two probes in a row
 * were taken: opened at the first, it sent every message behind it to a
 * receiver that had just used its one receive, each to be NAKed, and
 * their packets took the link from the next probe.
 *
 * So a receiver that posts no receive costs the peer one probe per
 * backoff, and its sender's other messages nothing; every other pair of
 * QPs goes on as before.  A message keeps its rnr_naks across attempts:
 * rnr_retry counts the NAKs each message itself drew, as before.
 *
 * Exactly once: an RNR NAK says the receiver took nothing of that attempt
 * and claims no receive for it later (msg.c: the slot stays RNR for the
 * attempt, and a packet of an id below the sender's base is dropped
 * unACKed), so the message may go again under a new id.
 *
 * Memory: a gate is its messages (the head's links), nothing allocated.
 * The gates, and the messages in them, are bounded by what the OS
 * posted (for the kernel, every QP's send queue), not by
 * max_pending_msgs: a QP stuck on RNR must not fill the peer's queue for
 * the others.
 */
#include "rnr.h"
#include "queue.h"
#include "tx.h"

static bool same_pair(const struct srd_tx_msg *a, const struct srd_tx_msg *b)
{
	return a->src_qpn == b->src_qpn && a->dst_qpn == b->dst_qpn;
}

/* The gate of @m's pair of QPs, and the link that points to it. */
static struct srd_tx_msg **gate_find(struct srd_peer *peer,
				     const struct srd_tx_msg *m)
{
	struct srd_tx_msg **pp;

	for (pp = &peer->rnr_gates; *pp; pp = &(*pp)->next)
		if (same_pair(*pp, m))
			return pp;
	return NULL;
}

/* Append @m behind gate @g's head. */
static void gate_append(struct srd_tx_msg *g, struct srd_tx_msg *m)
{
	m->next = NULL;
	if (g->rnr_behind_tail)
		g->rnr_behind_tail->next = m;
	else
		g->rnr_behind = m;
	g->rnr_behind_tail = m;
}

static void park(struct srd_peer *peer, struct srd_tx_msg *m)
{
	m->state = SRD_TXM_RNR_WAIT;
	m->rnr_probe = false;
	m->rnr_gate_naks = 0;
	m->rnr_gate_taken = 0;
	peer->rnr_waiting++;
}

/* When a gate whose probes were NAKed @naks times in a row probes next. */
static uint64_t gate_until(const struct srd_peer *peer, uint32_t naks,
			   uint64_t now_us)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	uint64_t backoff = cfg->rnr_backoff_min_us;

	while (--naks && backoff < cfg->rnr_backoff_max_us)
		backoff <<= 1;
	return now_us + srd_min_u64(backoff, cfg->rnr_backoff_max_us);
}

/* @m: NAKed RNR at @now_us and out of the window; wait in its gate. */
void srd_rnr_park(struct srd_peer *peer, struct srd_tx_msg *m, uint64_t now_us)
{
	struct srd_tx_msg **pp = gate_find(peer, m), *g;
	bool probe = m->rnr_probe;
	/* The gate's NAKs in a row: one more for its probe, else the first. */
	uint8_t naks = !probe ? 1 : m->rnr_gate_naks < 0x7f ? m->rnr_gate_naks + 1 : 0x7f;

	park(peer, m);
	m->rnr_gate_naks = naks;
	if (!pp) {
		m->rnr_until_us = gate_until(peer, m->rnr_gate_naks, now_us);
		m->rnr_behind = NULL;
		m->rnr_behind_tail = NULL;
		m->next = peer->rnr_gates;
		peer->rnr_gates = m;
		return;
	}
	g = *pp;
	if (!probe) {
		/* One of several in the window when the receiver ran out. */
		gate_append(g, m);
		return;
	}
	/*
	 * The probe met RNR again: it heads the gate once more, with its
	 * longer backoff, and the head that waited for its fate (with those
	 * behind it) waits behind it.
	 */
	m->rnr_until_us = gate_until(peer, m->rnr_gate_naks, now_us);
	m->next = g->next;
	m->rnr_behind = g;
	m->rnr_behind_tail = g->rnr_behind_tail ? g->rnr_behind_tail : g;
	g->next = g->rnr_behind;
	*pp = m;
}

/*
 * Before @m, the queue's head, takes an id: a message of a pair of QPs
 * that has a gate joins it (taken off the queue), unless it is the
 * gate's probe.
 */
bool srd_rnr_gated(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg **pp;

	if (m->rnr_probe)
		return false;
	pp = gate_find(peer, m);
	if (!pp)
		return false;
	srd_tx_unqueue_head(peer);
	park(peer, m);
	gate_append(*pp, m);
	return true;
}

/* Take gate *@pp off the list: @g, then those behind it, on ->next. */
static struct srd_tx_msg *gate_take(struct srd_tx_msg **pp)
{
	struct srd_tx_msg *g = *pp;

	*pp = g->next;
	g->next = g->rnr_behind;
	return g;
}

/* Queue again every message of the chain @m (gate_take()'s). */
static void requeue_chain(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg *next;

	for (; m; m = next) {
		next = m->next;
		m->next = NULL;
		m->state = SRD_TXM_QUEUED;
		peer->rnr_waiting--;
		srd_tx_queue_msg(peer, m);
	}
}

/*
 * The gates whose backoff is over send their heads as probes, first in
 * the queue; the next message of each gate heads it meanwhile, with no
 * deadline of its own (it waits for the probe's fate).
 */
void srd_rnr_wake(struct srd_peer *peer, uint64_t now_us)
{
	struct srd_tx_msg **pp = &peer->rnr_gates, *g, *f;

	while ((g = *pp)) {
		if (g->rnr_until_us > now_us) {
			pp = &g->next;
			continue;
		}
		f = g->rnr_behind;
		if (f) {
			f->rnr_behind = f->next;
			f->rnr_behind_tail = f->next ? g->rnr_behind_tail : NULL;
			f->rnr_until_us = SRD_NO_DEADLINE;
			f->next = g->next;
			*pp = f;
			pp = &f->next;
		} else {
			*pp = g->next;
		}
		peer->rnr_waiting--;
		peer->ctr.rnr_probes++;
		g->state = SRD_TXM_QUEUED;
		g->rnr_probe = true;
		g->next = NULL;
		srd_tx_queue_msg_front(peer, g);
	}
}

/*
 * Probe @m was taken by the receiver (its first ACK) at @now_us.  The
 * first probe taken in a row sends the gate's head at once as the next
 * (its backoff starts again); the second opens the gate.
 */
void srd_rnr_taken(struct srd_peer *peer, struct srd_tx_msg *m, uint64_t now_us)
{
	struct srd_tx_msg **pp = gate_find(peer, m), *g;
	bool held = !srd_tx_msg_unsent(m);

	m->rnr_probe = false;
	/* The rest of it goes now. */
	if (held && srd_tx_msg_unsent(m))
		peer->tx_unsent++;
	if (!pp)
		return;
	g = *pp;
	if (m->rnr_gate_taken) {
		requeue_chain(peer, gate_take(pp));
		return;
	}
	g->rnr_until_us = now_us;
	g->rnr_gate_naks = 0;
	g->rnr_gate_taken = 1;
}

/*
 * Probe @m finished without being taken (failed, flushed): its gate
 * opens, and every message of it goes back to the queue.
 */
void srd_rnr_open(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg **pp;

	m->rnr_probe = false;
	pp = gate_find(peer, m);
	if (pp)
		requeue_chain(peer, gate_take(pp));
}

/*
 * Fail with @st every waiting message (of local QP @qpn only, if
 * @by_qpn); with @requeue, queue them again instead (the remote
 * restarted: a message it refused whole may go to its new incarnation,
 * as a queued one does).
 */
void srd_rnr_fail(struct srd_peer *peer, enum srd_comp_status st,
		  bool requeue, bool by_qpn, uint32_t qpn)
{
	struct srd_tx_msg **pp = &peer->rnr_gates, *m, *next;

	while (*pp) {
		/* Every message of a gate is of the same pair of QPs. */
		if (by_qpn && (*pp)->src_qpn != qpn) {
			pp = &(*pp)->next;
			continue;
		}
		m = gate_take(pp);
		if (requeue) {
			requeue_chain(peer, m);
			continue;
		}
		for (; m; m = next) {
			next = m->next;
			peer->rnr_waiting--;
			srd_tx_finish(peer, m, st);
		}
	}
}

/* The earliest end of a gate's backoff (SRD_NO_DEADLINE: none). */
uint64_t srd_rnr_deadline(const struct srd_peer *peer)
{
	const struct srd_tx_msg *g;
	uint64_t d = SRD_NO_DEADLINE;

	for (g = peer->rnr_gates; g; g = g->next)
		d = srd_min_u64(d, g->rnr_until_us);
	return d;
}
