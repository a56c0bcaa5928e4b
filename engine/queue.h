/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * messages waiting for an id (queue.c).
 */
#ifndef SRD_ENGINE_QUEUE_H
#define SRD_ENGINE_QUEUE_H

#include "rdma_op.h"

/*
 * queue.c: messages waiting for an id, a FIFO per local QP served in
 * turn: last in its QP's, first of all (an RNR probe), the next to start
 * taken off, the queued ones failed, and how many a QP has queued.
 */
void srd_tx_queue_msg(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_tx_queue_msg_front(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_tx_unqueue_head(struct srd_peer *peer);
void srd_tx_queue_fail(struct srd_peer *peer, enum srd_comp_status st,
		       bool by_qpn, uint32_t qpn);
uint32_t srd_tx_queued_of(struct srd_peer *peer, uint32_t src_qpn);
/*
 * May local QP @src_qpn queue @n more messages?  Within max_pending_msgs,
 * and one QP within three quarters of it: the others keep a quarter.
 */
static inline bool srd_tx_queue_has_room(struct srd_peer *peer,
					 uint32_t src_qpn, uint32_t n)
{
	uint32_t max = peer->eng->cfg.max_pending_msgs;
	uint32_t queued = srd_tx_queued_msgs(peer);

	/*
	 * A QP queues no more than the peer does: below three quarters in
	 * all, the walk of the flows (per post) is not needed.
	 */
	return queued + n <= max &&
	       (queued + n <= max - max / 4 ||
		srd_tx_queued_of(peer, src_qpn) + n <= max - max / 4);
}

#endif /* SRD_ENGINE_QUEUE_H */
