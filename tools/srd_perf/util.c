// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf: small helpers (time, errors and notes, allocation, GIDs) and
 * the bitmaps of sequence numbers.
 */
#include "perf.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

void __attribute__((noreturn, format(printf, 2, 3)))
die(struct perf *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(cmt, "# FAIL: ");
	va_start(ap, fmt);
	vfprintf(cmt, fmt, ap);
	va_end(ap);
	fprintf(cmt, "\n");
	perf_cleanup(p);
	exit(1);
}

/* A problem worth a '#' line: the first PERF_NOTES of each kind. */
void __attribute__((format(printf, 3, 4)))
note(struct perf *p, int kind, const char *fmt, ...)
{
	va_list ap;

	if (p->notes[kind]++ >= PERF_NOTES)
		return;
	fprintf(cmt, "# ");
	va_start(ap, fmt);
	vfprintf(cmt, fmt, ap);
	va_end(ap);
	fprintf(cmt, "%s\n", p->notes[kind] == PERF_NOTES ? " (no more of these)" : "");
}

bool stalled(struct perf *p, uint64_t last)
{
	return p->o.stall_s && now_ns() - last > p->o.stall_s * NSEC;
}

void *zalloc(struct perf *p, size_t n)
{
	void *m = calloc(1, n ? n : 1);

	if (!m)
		die(p, "out of memory (%zu bytes)", n);
	return m;
}

const char *gid_str(const union ibv_gid *g, char *s)
{
	return inet_ntop(AF_INET6, g->raw, s, INET6_ADDRSTRLEN);
}

/* --- bitmaps of sequence numbers ------------------------------------------ */

void bm_reserve(struct perf *p, struct perf_bm *m, uint32_t nbits)
{
	uint32_t cap = m->cap ? m->cap : 1024;
	uint8_t *b;

	if (nbits <= m->cap)
		return;
	while (cap < nbits)
		cap *= 2;
	b = realloc(m->b, cap / 8);
	if (!b)
		die(p, "out of memory for a bitmap of %u bits", cap);
	memset(b + m->cap / 8, 0, (cap - m->cap) / 8);
	m->b = b;
	m->cap = cap;
}

bool bm_test(const struct perf_bm *m, uint32_t i)
{
	return i < m->cap && (m->b[i / 8] >> (i % 8) & 1);
}

void bm_set(struct perf *p, struct perf_bm *m, uint32_t i)
{
	bm_reserve(p, m, i + 1);
	m->b[i / 8] |= 1 << (i % 8);
}

void bm_clear(struct perf_bm *m)
{
	if (m->b)
		memset(m->b, 0, m->cap / 8);
}

/* Bits set in a but not in b. */
uint64_t bm_minus(const struct perf_bm *a, const struct perf_bm *b)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < a->cap / 8; i++)
		n += __builtin_popcount(a->b[i] & ~(i < b->cap / 8 ? b->b[i] : 0));
	return n;
}

bool use_imm(struct perf *p)
{
	return (p->o.flags & F_IMM) || p->size < 4;
}
