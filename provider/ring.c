// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: mapping the rings a create response describes, and checking
 * that they hold what the provider will put in them.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "ring.h"

/*
 * What an absent ring (a queue of 0 work requests, mmap_size 0) reads as:
 * empty, with state 0 (IBV_QPS_RESET).  Only ever read.
 */
static struct srd_ring_ctl srd_ring_absent_ctl;

static bool is_pow2(uint32_t n)
{
	return n && !(n & (n - 1));
}

/*
 * Map the ring @info describes.  It must hold at least @min_entries slots
 * of at least @min_stride bytes; a kernel that says otherwise breaks the
 * ABI: EPROTO.  Returns 0 or an errno value.
 */
int srd_ring_map(struct srd_ring *ring, int cmd_fd,
		 const struct srd_ring_info *info, size_t min_stride,
		 uint32_t min_entries)
{
	uint64_t need;
	void *map;

	*ring = (struct srd_ring){ .ctl = &srd_ring_absent_ctl };

	if (!info->mmap_size) {
		if (min_entries)
			return EPROTO;
		return 0;
	}

	need = SRD_RING_SLOTS_OFFSET +
	       (uint64_t)info->num_entries * info->stride;
	if (!is_pow2(info->num_entries) || info->num_entries < min_entries ||
	    info->stride < min_stride || info->stride % 8 ||
	    need > info->mmap_size)
		return EPROTO;

	map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   cmd_fd, (off_t)info->mmap_key);
	if (map == MAP_FAILED)
		return errno;

	ring->map = map;
	ring->map_size = info->mmap_size;
	ring->ctl = map;
	ring->slots = (uint8_t *)map + SRD_RING_SLOTS_OFFSET;
	ring->num_entries = info->num_entries;
	ring->stride = info->stride;

	return 0;
}

void srd_ring_unmap(struct srd_ring *ring)
{
	if (ring->map)
		munmap(ring->map, ring->map_size);
	*ring = (struct srd_ring){ .ctl = &srd_ring_absent_ctl };
}
