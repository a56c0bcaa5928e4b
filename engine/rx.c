// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the receive path.  srd_peer_on_packet_head() parses and
 * validates a datagram, applies the tag rules, and hands it to the one
 * function for its type: DATA here (placement through msg.c, then ACK or
 * NAK), ACK and NAK to the sender (tx.c), HELLO to the tag handshake.
 * Everything in a datagram is untrusted: each check that bad input can
 * fail is counted, never asserted.
 */
#include "rx.h"
#include "tag.h"
#include "recovery.h"

/*
 * ACKs and NAKs rotate over the paths this side, as a sender, believes
 * healthy (ACTIVE): the receiver learns nothing of ACK losses itself, and
 * an ACK lost on a dead path would make the sender blame its data path.
 */
static uint32_t ctl_path(struct srd_peer *peer)
{
	uint32_t n = peer->eng->cfg.n_paths, i, idx;

	for (i = 0; i < n; i++) {
		idx = (peer->ack_rr + i) % n;
		if (peer->paths[idx].state == SRD_PATH_ACTIVE) {
			peer->ack_rr = idx + 1;
			return idx;
		}
	}
	return peer->ack_rr++ % n;
}

/* No ACK is owed any more: it went, alone or on a DATA packet. */
static void ack_settled(struct srd_peer *peer)
{
	peer->ack_pending = 0;
	peer->ack_due_us = SRD_NO_DEADLINE;
	peer->ack_for_reply = false;
}

/*
 * The flags of the ACK we send now, and the PSN it reports as a
 * duplicate (with SRD_WF_ACK_DUP, else 0): reported once.
 */
static uint8_t ack_flags(struct srd_peer *peer, uint64_t now_us,
			 uint32_t *dup_psn)
{
	uint8_t flags = srd_cc_drain_asks(peer->eng, now_us) ?
			SRD_WF_ACK_DRAIN : 0;

	*dup_psn = 0;
	if (peer->ack_dup) {
		flags |= SRD_WF_ACK_DUP;
		*dup_psn = peer->ack_dup_psn;
		peer->ack_dup = false;
	}
	return flags;
}

/* How long the largest PSN received has waited for this ACK. */
static uint32_t ack_delay(const struct srd_peer *peer, uint64_t now_us)
{
	uint64_t delay = now_us - peer->rcv_largest_us;

	return delay > 0xffffffffu ? 0xffffffffu : (uint32_t)delay;
}

/*
 * @copies > 1 sends the same ACK on that many paths: for a message's last
 * segment, after which nothing may come to ACK again, so that one dead
 * path cannot cost the sender a retransmission timeout.
 */
static void send_ack(struct srd_peer *peer, uint64_t now_us, uint32_t copies)
{
	uint8_t hdr[SRD_HDR_MAX_BYTES];
	uint32_t hlen, dup_psn;
	uint8_t flags;

	ack_settled(peer);
	if (!peer->rcv.valid || peer->state != SRD_PEER_ESTABLISHED)
		return;
	flags = ack_flags(peer, now_us, &dup_psn);
	hlen = srd_wire_put_ack_win(hdr, peer->local_tag, peer->remote_tag,
				    flags, &peer->rcv, ack_delay(peer, now_us),
				    dup_psn);
	while (copies--) {
		peer->ctr.acks_sent++;
		srd_peer_transmit(peer, ctl_path(peer), hdr, hlen, NULL, 0, 0);
	}
}

void srd_rx_send_ack(struct srd_peer *peer, uint64_t now_us)
{
	send_ack(peer, now_us, 1);
}

/*
 * How many copies of a tail ACK: two, on two paths, but only while the
 * sender has lately resent data we had (its ACK was lost or late, in
 * the last SRD_ACK_LOSS_MEMORY_US), and such data was at least one in
 * SRD_ACK_LOSS_SHARE of the last SRD_ACK_LOSS_WINDOW DATA packets or so
 * (both counts halved as the window fills): a clean network, or small
 * messages that are all tails, pay nothing for it, and neither does a
 * late ACK now and then (a receiver host that did not run for a while:
 * one or two in a thousand packets between TCG guests, each of which
 * doubled every tail ACK for a second), where a dead path the ACKs take
 * loses a share of them.
 */
#define SRD_ACK_LOSS_MEMORY_US	1000000
#define SRD_ACK_LOSS_WINDOW	256
#define SRD_ACK_LOSS_SHARE	100

static uint32_t tail_ack_copies(const struct srd_peer *peer, uint64_t now_us)
{
	return peer->eng->cfg.n_paths > 1 && peer->ack_loss_seen &&
	       now_us - peer->ack_loss_us < SRD_ACK_LOSS_MEMORY_US ? 2 : 1;
}

/*
 * The delayed ACK is due: nothing arrived since, so this ACK may be the
 * last the sender gets for a while (a window's tail).  Two copies, on
 * two paths, as for ACK_NOW.  If it waited for a reply, none came in
 * time: this peer's messages are not answered now, and their ACKs go at
 * once again until we answer one.
 */
void srd_rx_send_delayed_ack(struct srd_peer *peer, uint64_t now_us)
{
	if (peer->ack_for_reply) {
		peer->ctr.ack_reply_timeouts++;
		peer->interactive = false;
	}
	send_ack(peer, now_us, tail_ack_copies(peer, now_us));
}

/*
 * Piggybacking (docs/protocol.md, "Receiver"): a DATA packet to the peer
 * carries the ACK we owe it, which then is not sent on its own.  The
 * caller checks that the packet has room for the block.
 */
bool srd_rx_ack_attach(struct srd_peer *peer, uint64_t now_us,
		       struct srd_pkt *p)
{
	if (!peer->ack_pending || !peer->rcv.valid)
		return false;
	ack_settled(peer);
	p->ack_psn = peer->rcv.largest;
	p->ack_delay_us = ack_delay(peer, now_us);
	srd_rcv_sack(&peer->rcv, p->sack);
	p->ack_flags = ack_flags(peer, now_us, &p->dup_psn);
	peer->ctr.acks_piggybacked++;
	return true;
}

/*
 * We start a message to the peer.  Within the reply wait
 * (srd_reply_wait_us()) of its last DATA it is an answer (as TCP's
 * delayed-ACK "pingpong" mode reads it): from now on, the ACK of its
 * messages flagged ACK_NOW waits for ours.
 */
void srd_rx_on_msg_sent(struct srd_peer *peer, uint64_t now_us)
{
	uint32_t wait = srd_reply_wait_us(peer, SRD_REPLY_WAIT_RTTS);

	if (wait && peer->rcv.valid && now_us - peer->rx_data_us <= wait)
		peer->interactive = true;
}

/*
 * Does the ACK of @p, flagged ACK_NOW, wait for a reply?  When we answer
 * the peer's messages (interactive), or @p is a READ request (its response
 * leaves at once), and it is the only packet owed an ACK, new and in
 * order: a gap, a duplicate or a retransmission is ACKed at once, since
 * the sender is recovering.
 */
static bool ack_waits_for_reply(const struct srd_peer *peer,
				const struct srd_pkt *p,
				enum srd_rx_data_verdict v,
				enum srd_rcv_result r)
{
	return peer->eng->cfg.ack_reply_wait_us &&
	       (peer->interactive || p->opcode == SRD_WOP_READ_REQ) &&
	       peer->ack_pending == 1 && v == SRD_RXD_PLACED &&
	       r == SRD_RCV_NEW_IN_ORDER &&
	       !(p->flags & SRD_WF_DATA_RETRANSMIT);
}

void srd_rx_send_nak(struct srd_peer *peer, uint32_t psn, uint32_t msg_id,
		     uint8_t attempt, uint8_t reason)
{
	uint8_t hdr[SRD_HDR_MAX_BYTES];
	struct srd_pkt p;
	uint32_t hlen;

	srd_memset(&p, 0, sizeof(p));
	p.src_tag = peer->local_tag;
	p.dst_tag = peer->remote_tag;
	p.psn = psn;
	p.msg_id = msg_id;
	p.attempt = attempt;
	p.nak_reason = reason;
	hlen = srd_wire_put_nak(hdr, &p);
	peer->ctr.naks_sent++;
	if (reason == SRD_NAK_RNR)
		peer->ctr.rnr_naks_sent++;
	SRD_TRACE(peer, SRD_EV_NAK_TX, psn, msg_id, 0, 0, 0, reason, attempt);
	srd_peer_transmit(peer, ctl_path(peer), hdr, hlen, NULL, 0, 0);
}

static void send_nak(struct srd_peer *peer, const struct srd_pkt *d,
		     uint8_t reason)
{
	srd_rx_send_nak(peer, d->psn, d->msg_id, d->attempt, reason);
}

void srd_rx_reset(struct srd_peer *peer)
{
	uint32_t i;

	for (i = 0; i < peer->eng->cfg.msg_window; i++)
		srd_rx_slot_release(peer, &peer->rx_slots[i], true);
	srd_memset(&peer->rcv, 0, sizeof(peer->rcv));
	ack_settled(peer);
	peer->interactive = false;
	peer->rx_base_valid = false;
	peer->rx_msg_base = 0;
}

static void rx_on_data(struct srd_peer *peer, const struct srd_pkt *p,
		       uint64_t now_us)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	uint32_t wait = srd_reply_wait_us(peer, SRD_REPLY_WAIT_RTTS);
	enum srd_rx_data_verdict v;
	enum srd_rcv_result r;
	uint8_t reason = 0;

	peer->ctr.rx_data_pkts++;
	v = srd_rx_msg_on_data(peer, p, now_us, &reason);
	if (v == SRD_RXD_DROP)
		return;
	if (v == SRD_RXD_NAK) {
		send_nak(peer, p, reason);
		return;
	}
	if (v == SRD_RXD_DUPLICATE)
		peer->ctr.duplicates++;
	r = srd_rcv_record(&peer->rcv, p->psn);
	if (r == SRD_RCV_NEW_OUT_OF_ORDER)
		peer->ctr.out_of_order++;
	if (r == SRD_RCV_TOO_OLD) {
		/*
		 * Placed but not ACKable: the sender retransmits under a
		 * new PSN and that copy is ACKed as a duplicate.
		 */
		peer->ctr.rx_drop_out_of_window++;
		return;
	}
	if (peer->rcv.largest == p->psn && r != SRD_RCV_DUPLICATE)
		peer->rcv_largest_us = now_us;
	/*
	 * Data we had, under a new PSN: its sender retransmitted needlessly,
	 * its ACK lost or late.  Not lost if we held it for an answer lately:
	 * the sender's probe then came of the wait, not of a dead path; nor
	 * if such data is a small share of what came (tail_ack_copies()).
	 */
	if (++peer->ack_ev_pkts >= SRD_ACK_LOSS_WINDOW) {
		peer->ack_ev_pkts /= 2;
		peer->ack_ev_dups /= 2;
	}
	if (v == SRD_RXD_DUPLICATE && r != SRD_RCV_DUPLICATE) {
		peer->ack_dup = true;
		peer->ack_dup_psn = p->psn;
		if (!peer->ack_for_reply &&
		    (!peer->ack_held ||
		     now_us - peer->ack_held_us > wait +
		     2ull * peer->rtt.srtt_us) &&
		    ++peer->ack_ev_dups * SRD_ACK_LOSS_SHARE >=
		    peer->ack_ev_pkts) {
			peer->ack_loss_seen = true;
			peer->ack_loss_us = now_us;
		}
	}
	peer->ack_pending++;
	peer->rx_data_us = now_us;
	/*
	 * A message of the peer's began within a wait and a round trip of
	 * ours: it answers (as we detect it of ourselves in
	 * srd_rx_on_msg_sent), and holds our ACKs for its answers.
	 */
	if (p->offset == 0 && v == SRD_RXD_PLACED &&
	    p->opcode != SRD_WOP_READ_RESP && cfg->ack_reply_wait_us &&
	    peer->msg_sent &&
	    now_us - peer->msg_sent_us <= wait + 2ull * peer->rtt.srtt_us)
		peer->remote_waits = true;
	if (p->flags & SRD_WF_DATA_ACK_NOW) {
		if (ack_waits_for_reply(peer, p, v, r)) {
			peer->ack_for_reply = true;
			peer->ack_held = true;
			peer->ack_held_us = now_us;
			peer->ack_due_us = now_us + wait;
		} else {
			send_ack(peer, now_us, tail_ack_copies(peer, now_us));
		}
	} else if (r != SRD_RCV_NEW_IN_ORDER || v == SRD_RXD_DUPLICATE ||
		   peer->ack_pending >= cfg->ack_every_pkts || !cfg->ack_delay_us) {
		srd_rx_send_ack(peer, now_us);
	} else if (peer->ack_due_us == SRD_NO_DEADLINE) {
		peer->ack_due_us = now_us + cfg->ack_delay_us;
	}
}

/*
 * A src_tag that is not the remote tag we know, from a sender that, if it
 * is the remote, will believe our answer: the claim of a new incarnation,
 * challenged (0 when nothing is claimed).
 */
static uint32_t claim_challenge(const struct srd_peer *peer,
				const struct srd_pkt *p, uint64_t now_us)
{
	if (peer->state != SRD_PEER_ESTABLISHED ||
	    p->src_tag == peer->remote_tag ||
	    srd_peer_tag_retired(peer, p->src_tag))
		return 0;
	return srd_peer_challenge(peer, p->src_tag, now_us);
}

/*
 * A packet that does not name our tag: for an older incarnation of us, a
 * HELLO asking for our tag, or forged.  Answer with our tag, to the
 * address (only its owner reads it), naming the packet's own src_tag so
 * that a sender which has it believes the answer, and challenging that
 * tag if it is new (a restarted remote's first HELLO): its echo, with our
 * tag, is the proof rule 3 of "Tags and peer restart" wants.  The answer
 * echoes the tag the packet named, which only a sender that heard from
 * us (at our address) knows: to a remote that sends to our old
 * incarnation, that proves this one lives at our address.  A HELLO is
 * answered each time; anything else at most once per hello_interval_us.
 * Nothing here changes the peer.
 */
static void answer_untagged(struct srd_peer *peer, const struct srd_pkt *p,
			    uint64_t now_us)
{
	if (p->dst_tag) {
		peer->ctr.rx_drop_stale_tag++;
		if (peer->unsolicited_hello_sent &&
		    now_us - peer->last_unsolicited_hello_us <
		    peer->eng->cfg.hello_interval_us)
			return;
		peer->unsolicited_hello_sent = true;
		peer->last_unsolicited_hello_us = now_us;
	} else {
		peer->ctr.hellos_received++;
	}
	srd_peer_send_hello(peer, p->src_tag, claim_challenge(peer, p, now_us),
			    p->dst_tag);
}

/*
 * A packet naming our tag with a new remote tag, while we know one: a
 * restart, or a forgery with a lucky guess of our tag.  Believed only
 * from a HELLO that echoes what went only to the remote's address, so
 * that its sender receives there: our challenge to that tag, or the
 * remote tag we know (our packets to the old incarnation name it, and
 * the new one echoes it in its answer).
 */
static bool claim_proven(const struct srd_peer *peer, const struct srd_pkt *p,
			 uint64_t now_us)
{
	return p->opcode == SRD_WOP_HELLO &&
	       (p->echo == peer->remote_tag ||
		srd_peer_challenge_ok(peer, p->src_tag, p->echo, now_us));
}

/*
 * Not proven: drop it, and challenge the claim at the address, at most
 * once per hello_interval_us (a flood of claims costs a hash each and
 * one HELLO a millisecond).  The remote tag we know stays, and with it
 * the traffic of the remote we know.  A HELLO's own challenge is echoed,
 * so that two sides that challenge each other finish in one round trip.
 */
static void challenge_claim(struct srd_peer *peer, const struct srd_pkt *p,
			    uint64_t now_us)
{
	peer->ctr.rx_drop_stale_tag++;
	if (peer->challenge_sent &&
	    now_us - peer->last_challenge_us < peer->eng->cfg.hello_interval_us)
		return;
	peer->challenge_sent = true;
	peer->last_challenge_us = now_us;
	srd_peer_send_hello(peer, p->src_tag,
			    srd_peer_challenge(peer, p->src_tag, now_us),
			    p->challenge);
}

void srd_peer_on_packet_head(struct srd_peer *peer, const uint8_t *head,
			     size_t head_len, size_t len, const void *pkt)
{
	uint64_t now_us = srd_now(peer);
	struct srd_pkt p;

	peer->ctr.rx_pkts++;
	peer->ctr.rx_bytes += len;
	/* The parser reads no further (srd_wire_parse()). */
	if (head_len < srd_min_u64(len, SRD_HDR_MAX_BYTES) ||
	    srd_wire_parse(head, len, &p) != SRD_PARSE_OK) {
		peer->ctr.rx_drop_bad_hdr++;
		goto out;
	}
	p.os_pkt = pkt;
	if (p.dst_tag != peer->local_tag) {
		answer_untagged(peer, &p, now_us);
		goto out;
	}
	/*
	 * Its sender knows our tag for the remote's address: a first remote
	 * tag is believed, a new one (a restart) only with the proof that
	 * its sender receives there; a retired one never.  The remote tag
	 * we know is never among the retired ones: it was not when learnt,
	 * and only a tag replaced is retired.
	 */
	if (peer->state != SRD_PEER_ESTABLISHED ||
	    p.src_tag != peer->remote_tag) {
		if (srd_peer_tag_retired(peer, p.src_tag)) {
			peer->ctr.rx_drop_stale_tag++;
			goto out;
		}
		if (peer->state == SRD_PEER_ESTABLISHED &&
		    !claim_proven(peer, &p, now_us)) {
			challenge_claim(peer, &p, now_us);
			goto out;
		}
		srd_peer_learn_tag(peer, p.src_tag);
	}
	peer->last_active_us = now_us;

	/* A DATA packet's ACK block is an ACK, taken before its data. */
	if (p.opcode != SRD_WOP_ACK && p.has_ack)
		srd_tx_on_ack(peer, &p, now_us);
	switch ((enum srd_engine_wire_op)p.opcode) {
	case SRD_WOP_DATA:
	case SRD_WOP_WRITE:
	case SRD_WOP_READ_RESP:
	case SRD_WOP_READ_REQ:
		/* One call of rx_on_data(): it is inlined. */
		rx_on_data(peer, &p, now_us);
		if (p.opcode == SRD_WOP_READ_REQ)
			srd_tx_pump(peer, now_us);	/* the response, if queued */
		break;
	case SRD_WOP_ACK:
		srd_tx_on_ack(peer, &p, now_us);
		break;
	case SRD_WOP_NAK:
		srd_tx_on_nak(peer, &p, now_us);
		break;
	case SRD_WOP_HELLO:
		peer->ctr.hellos_received++;
		/* The remote asks us to prove our address: echo. */
		if (p.challenge)
			srd_peer_send_hello(peer, p.src_tag, 0, p.challenge);
		srd_tx_pump(peer, now_us);
		break;
	}
out:
	srd_peer_update_deadline(peer);
}
