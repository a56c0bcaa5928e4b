/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * serial-number arithmetic (RFC 1982 style, 32 and 8 bits), min and max,
 * bitmaps: what every file of the engine uses.
 */
#ifndef SRD_ENGINE_UTIL_H
#define SRD_ENGINE_UTIL_H

#include "srd_engine.h"

static inline bool srd_seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool srd_seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static inline bool srd_seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline bool srd_seq8_lt(uint8_t a, uint8_t b)
{
	return (int8_t)(uint8_t)(a - b) < 0;
}

static inline uint64_t srd_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t srd_max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* --- bitmaps --------------------------------------------------------- */

static inline bool srd_bit_test(const uint8_t *map, uint32_t i)
{
	return map[i >> 3] & (1u << (i & 7));
}

static inline void srd_bit_set(uint8_t *map, uint32_t i)
{
	map[i >> 3] |= (uint8_t)(1u << (i & 7));
}

#endif /* SRD_ENGINE_UTIL_H */
