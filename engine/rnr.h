/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * messages whose receiver was not ready (rnr.c).
 */
#ifndef SRD_ENGINE_RNR_H
#define SRD_ENGINE_RNR_H

#include "msg.h"

void srd_rnr_park(struct srd_peer *peer, struct srd_tx_msg *m, uint64_t now_us);
bool srd_rnr_gated(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_rnr_wake(struct srd_peer *peer, uint64_t now_us);
void srd_rnr_taken(struct srd_peer *peer, struct srd_tx_msg *m, uint64_t now_us);
void srd_rnr_open(struct srd_peer *peer, struct srd_tx_msg *m);
void srd_rnr_fail(struct srd_peer *peer, enum srd_comp_status st,
		  bool requeue, bool by_qpn, uint32_t qpn);
uint64_t srd_rnr_deadline(const struct srd_peer *peer);

#endif /* SRD_ENGINE_RNR_H */
