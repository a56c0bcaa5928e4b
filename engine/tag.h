/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * tags, their secret and the restart challenge (tag.c).
 */
#ifndef SRD_ENGINE_TAG_H
#define SRD_ENGINE_TAG_H

#include "peer.h"

uint64_t srd_siphash24(const uint8_t key[16], const uint8_t *m, size_t len);
void srd_tag_init(struct srd_engine *eng);

/* The challenge to a claim of a new remote tag, and its check (tag.c). */
uint32_t srd_peer_challenge(const struct srd_peer *peer, uint32_t claimed,
			    uint64_t now_us);
bool srd_peer_challenge_ok(const struct srd_peer *peer, uint32_t claimed,
			   uint32_t echo, uint64_t now_us);

#endif /* SRD_ENGINE_TAG_H */
