// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf's message check (msg.h), on the host: a message as filled
 * passes; any one byte changed, anywhere, is reported at its offset; so
 * is the message of another seq, QP or direction, and one cut short.
 * msg_check_poison() finds the same, and leaves poison where it found
 * the message: all of it on success, so that a next read which writes
 * nothing fails its check.  TAP output; exit 1 on a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

static int n_tests, n_failed;

static void ok(int cond, const char *what, uint32_t size, long want, long got)
{
	n_tests++;
	if (cond)
		return;
	n_failed++;
	printf("# %s, size %u: wanted %ld, got %ld\n", what, size, want, got);
}

int main(void)
{
	static const uint32_t sizes[] = { 1, 7, 8, 15, 16, 17, 23, 24, 25, 31,
					  64, 4095, 4096, 65535, 65536 };
	uint32_t i, size, pos;
	uint8_t *m = malloc(65536), *ref = malloc(65536);
	long got;

	if (!m || !ref)
		return 1;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size = sizes[i];
		msg_fill(m, size, 1, 3, 77);
		got = msg_check(m, size, 1, 3, 77);
		ok(got == -1, "as filled", size, -1, got);
		/* Every byte of small messages, a spread of the large ones'. */
		for (pos = 0; pos < size; pos += size > 256 ? 97 : 1) {
			m[pos] ^= 0x40;
			got = msg_check(m, size, 1, 3, 77);
			ok(got == pos, "one byte changed", size, pos, got);
			m[pos] ^= 0x40;
		}
		m[size - 1] ^= 1;
		got = msg_check(m, size, 1, 3, 77);
		ok(got == size - 1, "last byte changed", size, size - 1, got);
		m[size - 1] ^= 1;
		/*
		 * Another message: its header differs, as far as the message
		 * holds one (seq in bytes 0-3, QP and direction in 8-11).
		 */
		got = msg_check(m, size, 1, 3, 78);
		ok(got == 0, "another seq", size, 0, got);
		if (size > 8) {
			got = msg_check(m, size, 1, 4, 77);
			ok(got == 9, "another QP", size, 9, got);
			got = msg_check(m, size, 2, 3, 77);
			ok(got == 8, "another direction", size, 8, got);
		}
		/* Checked and poisoned: all poison, and no longer passes. */
		got = msg_check_poison(m, size, 1, 3, 77);
		ok(got == -1, "poisoned as checked", size, -1, got);
		got = msg_unpoisoned(m, 0, size);
		ok(got == -1, "poison left behind", size, -1, got);
		got = msg_check(m, size, 1, 3, 77);
		ok(got == 0, "poison checked", size, 0, got);
		/*
		 * A byte changed: found where msg_check() finds it, and the
		 * message from that byte on left as it was, for the report.
		 */
		msg_fill(ref, size, 1, 3, 77);
		for (pos = 0; pos < size; pos += size > 256 ? 97 : 1) {
			memcpy(m, ref, size);
			m[pos] ^= 0x40;
			got = msg_check_poison(m, size, 1, 3, 77);
			ok(got == pos, "one byte changed, poisoning", size, pos,
			   got);
			m[pos] ^= 0x40;
			got = memcmp(m + pos, ref + pos, size - pos) ? (long)pos : -1;
			ok(got == -1, "the rest kept", size, -1, got);
		}
		if (size > PERF_HDR) {
			/* Words of another message behind a right header. */
			msg_fill(m, size, 1, 3, 78);
			msg_header(m, 1, 3, 77, size);
			got = msg_check(m, size, 1, 3, 77);
			ok(got == PERF_HDR, "another message's words", size,
			   PERF_HDR, got);
		}
	}
	/* Checked as longer than it was filled: the size differs. */
	msg_fill(m, 100, 1, 3, 77);
	got = msg_check(m, 200, 1, 3, 77);
	ok(got == 4, "size in the header", 200, 4, got);
	free(m);
	free(ref);
	printf("1..1\n%s 1 - srd_perf message check: %d checks, %d failed\n",
	       n_failed ? "not ok" : "ok", n_tests, n_failed);
	return n_failed ? 1 : 0;
}
