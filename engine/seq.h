/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * the receiver's PSN window and the SACK bitmap (seq.c).
 */
#ifndef SRD_ENGINE_SEQ_H
#define SRD_ENGINE_SEQ_H

#include "srd_engine.h"

/*
 * What the receiver knows of the PSNs it has accepted: the largest, and
 * a bitmap of the SRD_SACK_WINDOW_PKTS below it (bit i: largest - 1 - i,
 * in below[i / 64] bit i % 64: a 128-bit number, shifted once per new
 * largest PSN).  srd_rcv_sack() writes it as the wire's bytes.
 */
struct srd_rcv_window {
	bool valid;
	uint32_t largest;
	uint64_t below[SRD_SACK_WINDOW_PKTS / 64];
};

enum srd_rcv_result {
	SRD_RCV_NEW_IN_ORDER,	/* largest + 1 (or the first) */
	SRD_RCV_NEW_OUT_OF_ORDER,
	SRD_RCV_DUPLICATE,
	SRD_RCV_TOO_OLD,	/* below the window: cannot be recorded */
};

enum srd_rcv_result srd_rcv_record_any(struct srd_rcv_window *w,
				       uint32_t psn);

/*
 * Record @psn.  Inline: every DATA packet comes here, and nearly every
 * one is the next PSN, for which the map shifts up by one and the old
 * largest becomes its bit 0.  srd_rcv_record_any() takes every case (the
 * unit tests check that both agree).
 */
static inline enum srd_rcv_result srd_rcv_record(struct srd_rcv_window *w,
						 uint32_t psn)
{
	if (w->valid && psn == w->largest + 1) {
		w->below[1] = w->below[1] << 1 | w->below[0] >> 63;
		w->below[0] = w->below[0] << 1 | 1;
		w->largest = psn;
		return SRD_RCV_NEW_IN_ORDER;
	}
	return srd_rcv_record_any(w, psn);
}

bool srd_rcv_has(const struct srd_rcv_window *w, uint32_t psn);
/* The SACK bitmap of an ACK (docs/protocol.md: byte i / 8, bit i % 8). */
static inline void srd_rcv_sack(const struct srd_rcv_window *w,
				uint8_t sack[SRD_SACK_WINDOW_PKTS / 8])
{
	srd_put_le64(sack, w->below[0]);
	srd_put_le64(sack + 8, w->below[1]);
}

/* Does an ACK (ack_psn, sack) cover psn? */
bool srd_sack_covers(uint32_t ack_psn, const uint8_t *sack, uint32_t psn);

#endif /* SRD_ENGINE_SEQ_H */
