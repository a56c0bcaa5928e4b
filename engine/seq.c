// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the receiver's record of accepted PSNs and the SACK
 * bitmap built from it.  PSNs are never reused (a retransmission gets a
 * new PSN), so the record only needs the largest PSN seen and the
 * SRD_SACK_WINDOW_PKTS below it; it serves the ACK and the duplicate
 * counter, while duplicate *data* is caught by the message state.
 */
#include "seq.h"
#include "util.h"

#define WBITS	SRD_SACK_WINDOW_PKTS

SRD_STATIC_ASSERT(WBITS == 128, "the window is two 64-bit words");

/* Shift the 128-bit map up by n PSNs (0 < n <= WBITS): bit i to i + n. */
static void shift_up(uint64_t *map, uint32_t n)
{
	if (n >= 64) {
		map[1] = n < 128 ? map[0] << (n - 64) : 0;
		map[0] = 0;
	} else {
		map[1] = (map[1] << n) | (map[0] >> (64 - n));
		map[0] <<= n;
	}
}

static bool word_test(const uint64_t *map, uint32_t i)
{
	return map[i >> 6] >> (i & 63) & 1;
}

static void word_set(uint64_t *map, uint32_t i)
{
	map[i >> 6] |= 1ull << (i & 63);
}

enum srd_rcv_result srd_rcv_record_any(struct srd_rcv_window *w,
				       uint32_t psn)
{
	uint32_t d;

	if (!w->valid) {
		w->valid = true;
		w->largest = psn;
		w->below[0] = 0;
		w->below[1] = 0;
		return SRD_RCV_NEW_IN_ORDER;
	}
	if (psn == w->largest)
		return SRD_RCV_DUPLICATE;
	if (srd_seq_gt(psn, w->largest)) {
		d = psn - w->largest;
		if (d >= WBITS + 1) {
			w->below[0] = 0;
			w->below[1] = 0;
		} else {
			shift_up(w->below, d);
			word_set(w->below, d - 1);	/* the old largest */
		}
		w->largest = psn;
		return d == 1 ? SRD_RCV_NEW_IN_ORDER : SRD_RCV_NEW_OUT_OF_ORDER;
	}
	d = w->largest - psn - 1;
	if (d >= WBITS)
		return SRD_RCV_TOO_OLD;
	if (word_test(w->below, d))
		return SRD_RCV_DUPLICATE;
	word_set(w->below, d);
	return SRD_RCV_NEW_OUT_OF_ORDER;
}

bool srd_rcv_has(const struct srd_rcv_window *w, uint32_t psn)
{
	uint32_t d;

	if (!w->valid)
		return false;
	if (psn == w->largest)
		return true;
	if (!srd_seq_lt(psn, w->largest))
		return false;
	d = w->largest - psn - 1;
	return d < WBITS && word_test(w->below, d);
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
