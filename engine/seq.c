// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the receiver's record of accepted PSNs and the SACK
 * bitmap built from it.  PSNs are never reused (a retransmission gets a
 * new PSN), so the record only needs the largest PSN seen and the
 * SRD_SACK_WINDOW_PKTS below it; it serves the ACK and the duplicate
 * counter, while duplicate *data* is caught by the message state.
 */
#include "srd_internal.h"

#define WBITS	SRD_SACK_WINDOW_PKTS

/*
 * Shift the bitmap up by n PSNs (0 < n <= WBITS): bit i moves to bit
 * i + n.  The map is a 128-bit little-endian number (bit i in byte i / 8),
 * shifted left as two 64-bit halves: this runs for every in-order packet.
 */
static void shift_up(uint8_t *map, uint32_t n)
{
	uint64_t lo = 0, hi = 0;
	uint32_t i;

	for (i = 0; i < 8; i++) {
		lo |= (uint64_t)map[i] << (8 * i);
		hi |= (uint64_t)map[8 + i] << (8 * i);
	}
	if (n >= 64) {
		hi = n < 128 ? lo << (n - 64) : 0;
		lo = 0;
	} else {
		hi = (hi << n) | (lo >> (64 - n));
		lo <<= n;
	}
	for (i = 0; i < 8; i++) {
		map[i] = (uint8_t)(lo >> (8 * i));
		map[8 + i] = (uint8_t)(hi >> (8 * i));
	}
}

enum srd_rcv_result srd_rcv_record(struct srd_rcv_window *w, uint32_t psn)
{
	uint32_t d;

	if (!w->valid) {
		w->valid = true;
		w->largest = psn;
		srd_memset(w->below, 0, sizeof(w->below));
		return SRD_RCV_NEW_IN_ORDER;
	}
	if (psn == w->largest)
		return SRD_RCV_DUPLICATE;
	if (srd_seq_gt(psn, w->largest)) {
		d = psn - w->largest;
		if (d >= WBITS + 1) {
			srd_memset(w->below, 0, sizeof(w->below));
		} else {
			shift_up(w->below, d);
			srd_bit_set(w->below, d - 1);	/* the old largest */
		}
		w->largest = psn;
		return d == 1 ? SRD_RCV_NEW_IN_ORDER : SRD_RCV_NEW_OUT_OF_ORDER;
	}
	d = w->largest - psn - 1;
	if (d >= WBITS)
		return SRD_RCV_TOO_OLD;
	if (srd_bit_test(w->below, d))
		return SRD_RCV_DUPLICATE;
	srd_bit_set(w->below, d);
	return SRD_RCV_NEW_OUT_OF_ORDER;
}

bool srd_rcv_has(const struct srd_rcv_window *w, uint32_t psn)
{
	return w->valid && srd_sack_covers(w->largest, w->below, psn);
}

bool srd_sack_covers(uint32_t ack_psn, const uint8_t *sack, uint32_t psn)
{
	uint32_t d;

	if (psn == ack_psn)
		return true;
	if (!srd_seq_lt(psn, ack_psn))
		return false;
	d = ack_psn - psn - 1;
	return d < WBITS && srd_bit_test(sack, d);
}
