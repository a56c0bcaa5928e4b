/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine: the only header through which the engine sees its
 * environment.  The engine proper uses fixed-width integers, bool, size_t
 * and the memory helpers below, nothing else: no libc calls, no floating
 * point, no allocation except through struct srd_ops, no global state.
 * The kernel module builds the same .c files with __KERNEL__ defined.
 */
#ifndef SRD_OS_H
#define SRD_OS_H

#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

#define srd_memcpy(d, s, n)	__builtin_memcpy((d), (s), (n))
#define srd_memset(d, c, n)	__builtin_memset((d), (c), (n))
#define srd_offsetof(t, m)	__builtin_offsetof(t, m)
/* One access, neither torn nor merged, of a word another peer's call may write. */
#ifdef __KERNEL__
#define srd_read_once(x)	READ_ONCE(x)
#define srd_write_once(x, v)	WRITE_ONCE(x, v)
#else
#define srd_read_once(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define srd_write_once(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#endif
#define SRD_STATIC_ASSERT(cond, msg)	_Static_assert(cond, msg)

/* Big-endian loads and stores, byte by byte: no alignment assumptions. */
static inline uint16_t srd_get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t srd_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void srd_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void srd_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Little-endian, for the SACK bitmap's bytes (the compiler merges them). */
static inline void srd_put_le64(uint8_t *p, uint64_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	p[4] = (uint8_t)(v >> 32);
	p[5] = (uint8_t)(v >> 40);
	p[6] = (uint8_t)(v >> 48);
	p[7] = (uint8_t)(v >> 56);
}

#endif /* SRD_OS_H */
