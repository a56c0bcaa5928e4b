/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the rings libsrd shares with the kernel (SQ, RQ and CQ), as
 * uapi/rdma/srd-abi.h lays them out.
 *
 * prod and cons are always read from the shared page, never from a copy
 * kept here: the kernel writes one of them, and it resets both to 0 when a
 * QP goes to RESET.  Loads are acquire and stores release, so a slot is
 * written before the counter that publishes it, and read before the
 * counter that frees it.
 */
#ifndef SRD_RING_H
#define SRD_RING_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/srd-abi.h>

struct srd_ring {
	void *map;			/* the mapping, NULL if the ring is empty */
	size_t map_size;
	struct srd_ring_ctl *ctl;	/* at offset 0 of the mapping */
	uint8_t *slots;			/* at SRD_RING_SLOTS_OFFSET */
	uint32_t num_entries;		/* a power of two, 0 if no mapping */
	uint32_t stride;		/* bytes per slot */
};

int srd_ring_map(struct srd_ring *ring, int cmd_fd,
		 const struct srd_ring_info *info, size_t min_stride,
		 uint32_t min_entries);
void srd_ring_unmap(struct srd_ring *ring);

static inline void *srd_ring_slot(const struct srd_ring *ring, uint32_t idx)
{
	return ring->slots + (size_t)(idx & (ring->num_entries - 1)) *
			     ring->stride;
}

static inline uint32_t srd_ring_prod(const struct srd_ring *ring)
{
	return __atomic_load_n(&ring->ctl->prod, __ATOMIC_ACQUIRE);
}

static inline uint32_t srd_ring_cons(const struct srd_ring *ring)
{
	return __atomic_load_n(&ring->ctl->cons, __ATOMIC_ACQUIRE);
}

/* The QP state (SQ, RQ) or SRD_CQ_FLAG_* (CQ), written by the kernel. */
static inline uint32_t srd_ring_state(const struct srd_ring *ring)
{
	return __atomic_load_n(&ring->ctl->state, __ATOMIC_ACQUIRE);
}

/* SQ rings: the largest message a WR may carry now, written by the kernel. */
static inline uint32_t srd_ring_max_msg_sz(const struct srd_ring *ring)
{
	return __atomic_load_n(&ring->ctl->max_msg_sz, __ATOMIC_RELAXED);
}

/* Producer: the slots before @prod are filled. */
static inline void srd_ring_publish(struct srd_ring *ring, uint32_t prod)
{
	__atomic_store_n(&ring->ctl->prod, prod, __ATOMIC_RELEASE);
}

/* Consumer: the slots before @cons are read and may be reused. */
static inline void srd_ring_release(struct srd_ring *ring, uint32_t cons)
{
	__atomic_store_n(&ring->ctl->cons, cons, __ATOMIC_RELEASE);
}

#endif /* SRD_RING_H */
