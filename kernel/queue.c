// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: rings shared with userspace, and mmap.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "srd.h"

/*
 * Allocate a zeroed ring of @num_entries (a power of two) slots of
 * @stride bytes and offer it to @uctx for mmap.
 */
struct srd_ring *srd_ring_create(struct ib_ucontext *uctx, u32 num_entries,
				 u32 stride)
{
	struct srd_ring *ring;
	size_t size;
	int err;

	if (!is_power_of_2(num_entries))
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(SRD_RING_SLOTS_OFFSET + (size_t)num_entries * stride);
	if (size > U32_MAX)
		return ERR_PTR(-EINVAL);

	ring = kzalloc(sizeof(*ring), GFP_KERNEL);
	if (!ring)
		return ERR_PTR(-ENOMEM);
	ring->buf = vmalloc_user(size);
	if (!ring->buf) {
		err = -ENOMEM;
		goto err_free_ring;
	}
	ring->size = size;
	ring->ctl = ring->buf;
	ring->num_entries = num_entries;
	ring->stride = stride;

	err = rdma_user_mmap_entry_insert(uctx, &ring->mmap_entry, size);
	if (err)
		goto err_free_buf;
	return ring;

err_free_buf:
	vfree(ring->buf);
err_free_ring:
	kfree(ring);
	return ERR_PTR(err);
}

/*
 * The owner is done with the ring.  Its memory goes when userspace has
 * unmapped it too (srd_mmap_free).
 */
void srd_ring_destroy(struct srd_ring *ring)
{
	rdma_user_mmap_entry_remove(&ring->mmap_entry);
}

void srd_ring_info(struct srd_ring *ring, struct srd_ring_info *info)
{
	info->mmap_key = rdma_user_mmap_get_offset(&ring->mmap_entry);
	info->mmap_size = ring->size;
	info->num_entries = ring->num_entries;
	info->stride = ring->stride;
	info->reserved = 0;
}

int srd_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct srd_ring *ring;
	int err;

	/* Checks that the length matches the entry's. */
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	ring = container_of(entry, struct srd_ring, mmap_entry);
	err = remap_vmalloc_range(vma, ring->buf, 0);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void srd_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct srd_ring *ring = container_of(entry, struct srd_ring,
					     mmap_entry);

	vfree(ring->buf);
	kfree(ring);
}
