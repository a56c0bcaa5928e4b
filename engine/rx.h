/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * the receiver (rx.c): ACKs and NAKs, and what a DATA packet does.
 */
#ifndef SRD_ENGINE_RX_H
#define SRD_ENGINE_RX_H

#include "peer.h"
#include "wire.h"

void srd_rx_send_ack(struct srd_peer *peer, uint64_t now_us);
void srd_rx_send_delayed_ack(struct srd_peer *peer, uint64_t now_us);
/* The pending ACK, if any, into @p's ACK fields for a DATA packet. */
bool srd_rx_ack_attach(struct srd_peer *peer, uint64_t now_us,
		       struct srd_pkt *p);
/* A new message to the peer leaves now: an answer, if it follows its data. */
void srd_rx_on_msg_sent(struct srd_peer *peer, uint64_t now_us);
/* NAK message @msg_id, attempt @attempt (psn: the packet refused, or 0). */
void srd_rx_send_nak(struct srd_peer *peer, uint32_t psn, uint32_t msg_id,
		     uint8_t attempt, uint8_t reason);
void srd_rx_reset(struct srd_peer *peer);

#endif /* SRD_ENGINE_RX_H */
