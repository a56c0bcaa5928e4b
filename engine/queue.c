// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the queue of posted messages waiting for a message id
 * (docs/protocol.md, "Sender"): one FIFO per local QP, served
 * round-robin, so that no QP, however much it posts, can keep another's
 * messages from the window shared by every QP of the peer.
 *
 * Each QP's FIFO is a chain of its messages on ->next; its first message
 * (the flow's head) also carries the chain's tail and length, and links
 * the flows on ->flow_next, from peer->pending_head to peer->pending_tail.
 * The pump takes the first flow's head; the rest of that flow then goes
 * to the back of the flows: each QP with messages waiting starts one in
 * turn.  Nothing is allocated: a flow is its messages.
 *
 * Order within a QP is kept, as verbs keeps a QP's order of posting; a
 * probe of an RNR gate (rnr.c) goes first in its QP's FIFO and its flow
 * first of all.
 */
#include "queue.h"
#include "tx.h"

/* The head of @src_qpn's flow, and the link to it; NULL when it has none. */
static struct srd_tx_msg **flow_find(struct srd_peer *peer, uint32_t src_qpn,
				     struct srd_tx_msg **prev)
{
	struct srd_tx_msg **pp, *before = NULL;

	for (pp = &peer->pending_head; *pp; pp = &(*pp)->flow_next) {
		if ((*pp)->src_qpn == src_qpn) {
			*prev = before;
			return pp;
		}
		before = *pp;
	}
	return NULL;
}

/* Link flow head @h last among the flows. */
static void flow_append(struct srd_peer *peer, struct srd_tx_msg *h)
{
	h->flow_next = NULL;
	if (peer->pending_tail)
		peer->pending_tail->flow_next = h;
	else
		peer->pending_head = h;
	peer->pending_tail = h;
}

uint32_t srd_tx_queued_of(struct srd_peer *peer, uint32_t src_qpn)
{
	struct srd_tx_msg *prev, **pp = flow_find(peer, src_qpn & 0xffffff, &prev);

	return pp ? (*pp)->flow_queued : 0;
}

/* Posted, not yet given a message id: last in its QP's FIFO. */
void srd_tx_queue_msg(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg *prev, **pp = flow_find(peer, m->src_qpn, &prev), *h;

	m->next = NULL;
	peer->pending_count++;
	if (!pp) {
		m->flow_tail = m;
		m->flow_queued = 1;
		flow_append(peer, m);
		return;
	}
	h = *pp;
	h->flow_tail->next = m;
	h->flow_tail = m;
	h->flow_queued++;
}

/* First in its QP's FIFO, and its QP's flow first of all. */
void srd_tx_queue_msg_front(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg *prev, **pp = flow_find(peer, m->src_qpn, &prev), *h;

	peer->pending_count++;
	m->next = NULL;
	m->flow_tail = m;
	m->flow_queued = 1;
	if (pp) {
		/* m heads the flow in h's place, which it leaves. */
		h = *pp;
		*pp = h->flow_next;
		if (peer->pending_tail == h)
			peer->pending_tail = prev;
		m->next = h;
		m->flow_tail = h->flow_tail;
		m->flow_queued = h->flow_queued + 1;
	}
	m->flow_next = peer->pending_head;
	peer->pending_head = m;
	if (!peer->pending_tail)
		peer->pending_tail = m;
}

/* Take the first flow's head off the queue; its flow goes to the back. */
void srd_tx_unqueue_head(struct srd_peer *peer)
{
	struct srd_tx_msg *h = peer->pending_head, *s = h->next;

	peer->pending_head = h->flow_next;
	if (!peer->pending_head)
		peer->pending_tail = NULL;
	peer->pending_count--;
	if (s) {
		s->flow_tail = h->flow_tail;
		s->flow_queued = h->flow_queued - 1;
		flow_append(peer, s);
	}
	h->next = NULL;
}

/* Fail with @st every queued message (of local QP @qpn only, if @by_qpn). */
void srd_tx_queue_fail(struct srd_peer *peer, enum srd_comp_status st,
		       bool by_qpn, uint32_t qpn)
{
	struct srd_tx_msg *h = peer->pending_head, *m, *next, *next_h;

	/* The flows that stay are linked again, in their order. */
	peer->pending_head = NULL;
	peer->pending_tail = NULL;
	peer->pending_count = 0;
	for (; h; h = next_h) {
		next_h = h->flow_next;
		if (by_qpn && h->src_qpn != qpn) {
			flow_append(peer, h);
			peer->pending_count += h->flow_queued;
			continue;
		}
		for (m = h; m; m = next) {
			next = m->next;
			m->next = NULL;
			srd_tx_finish(peer, m, st);
		}
	}
}
