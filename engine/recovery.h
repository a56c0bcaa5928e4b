/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * aCKs, NAKs and timers (recovery.c): loss recovery, and the deadlines a
 * peer gives the OS.
 */
#ifndef SRD_ENGINE_RECOVERY_H
#define SRD_ENGINE_RECOVERY_H

#include "tx.h"

void srd_tx_on_ack(struct srd_peer *peer, const struct srd_pkt *p,
		   uint64_t now_us);
void srd_tx_on_nak(struct srd_peer *peer, const struct srd_pkt *p,
		   uint64_t now_us);
void srd_tx_on_timer(struct srd_peer *peer, uint64_t now_us);

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

#endif /* SRD_ENGINE_RECOVERY_H */
