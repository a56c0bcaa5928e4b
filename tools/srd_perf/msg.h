/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * srd_perf: what a message holds, so that its receiver can tell it is the
 * one sent and whole.  A 16-byte header (seq, size, QP index and
 * direction, magic, little-endian), then 8-byte words that follow from a
 * seed of (direction, QP, seq): no two messages share a word, so one
 * delivered in another's place, or a segment of one in another, is
 * caught.  Every received message is checked in full (msg_check()), so
 * the check is on the benchmark's path: it goes a word at a time.
 * msg_test.c checks that it finds every changed byte.
 */
#ifndef SRD_PERF_MSG_H
#define SRD_PERF_MSG_H

#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PERF_HDR	16
#define PERF_MAGIC	0x50445253u	/* "SRDP" */
#define PERF_POISON	0x5a		/* RDMA: bytes no op should write */

static inline uint64_t msg_seed(uint32_t dir, uint32_t qpi, uint32_t seq)
{
	uint64_t x = (uint64_t)dir << 56 ^ (uint64_t)qpi << 32 ^ seq;

	/* splitmix64's finaliser: neighbouring messages share no words. */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Word k (bytes 8k..8k+7) of a message, as stored. */
static inline uint64_t msg_word(uint64_t seed, uint64_t k)
{
	return htole64(seed ^ (k * 0xd1342543de82ef95ull));
}

static inline void msg_header(uint8_t *h, uint32_t dir, uint32_t qpi,
			      uint32_t seq, uint32_t size)
{
	uint32_t w[4] = { htole32(seq), htole32(size), htole32(qpi << 8 | dir),
			  htole32(PERF_MAGIC) };

	memcpy(h, w, PERF_HDR);
}

static inline void msg_fill(uint8_t *m, uint32_t size, uint32_t dir,
			    uint32_t qpi, uint32_t seq)
{
	uint64_t seed = msg_seed(dir, qpi, seq), w;
	uint8_t h[PERF_HDR];
	uint32_t off;

	msg_header(h, dir, qpi, seq, size);
	memcpy(m, h, size < PERF_HDR ? size : PERF_HDR);
	for (off = PERF_HDR; off + 8 <= size; off += 8) {
		w = msg_word(seed, off / 8);
		memcpy(m + off, &w, 8);
	}
	if (off < size) {
		w = msg_word(seed, off / 8);
		memcpy(m + off, &w, size - off);
	}
}

/*
 * -1 when m holds the message, else the first offset that differs.  A
 * whole word is compared at a time, loaded as the compiler likes (memcpy
 * of a constant 8 bytes is one load), and bytes only where one differs:
 * the receiver checks every byte of every message, and a call to memcmp
 * per word took a fifth of the receiving guest's busy time in make bench
 * (64 KiB sends).
 *
 * With @repoison, each part of the message found right is then
 * overwritten with PERF_POISON, in the same pass: on -1 all of [0, size)
 * holds poison again, ready for the next RDMA read into it; on a
 * difference, only what lay before it does.  It replaces a memset() of
 * the buffer before each read, which cost the reader more than this
 * check in make bench (docs/performance.md).
 */
static inline long msg_verify(uint8_t *m, uint32_t size, uint32_t dir,
			      uint32_t qpi, uint32_t seq, bool repoison)
{
	uint64_t seed = msg_seed(dir, qpi, seq), w, v, pw;
	uint8_t h[PERF_HDR], *e = (uint8_t *)&w;
	uint32_t off, i, n;

	memset(&pw, PERF_POISON, sizeof(pw));
	msg_header(h, dir, qpi, seq, size);
	for (i = 0; i < size && i < PERF_HDR; i++)
		if (m[i] != h[i])
			return i;
	if (repoison)
		memset(m, PERF_POISON, i);
	for (off = PERF_HDR; off + 8 <= size; off += 8) {
		memcpy(&v, m + off, 8);
		if (v != msg_word(seed, off / 8))
			break;
		if (repoison)
			memcpy(m + off, &pw, 8);
	}
	if (off >= size)
		return -1;
	n = size - off < 8 ? size - off : 8;
	w = msg_word(seed, off / 8);
	for (i = 0; i < n; i++)
		if (m[off + i] != e[i])
			return off + i;
	if (repoison)
		memset(m + off, PERF_POISON, n);
	return -1;
}

static inline long msg_check(const uint8_t *m, uint32_t size, uint32_t dir,
			     uint32_t qpi, uint32_t seq)
{
	/* Without repoison nothing is written: m is only read. */
	return msg_verify((uint8_t *)m, size, dir, qpi, seq, false);
}

/* msg_check(), and m poisoned again where it held the message. */
static inline long msg_check_poison(uint8_t *m, uint32_t size, uint32_t dir,
				    uint32_t qpi, uint32_t seq)
{
	return msg_verify(m, size, dir, qpi, seq, true);
}

/* The first byte of m[from, to) that is not PERF_POISON, or -1. */
static inline long msg_unpoisoned(const uint8_t *m, uint32_t from,
				  uint32_t to)
{
	uint32_t i;

	for (i = from; i < to; i++)
		if (m[i] != PERF_POISON)
			return i;
	return -1;
}

#endif /* SRD_PERF_MSG_H */
