// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: rings shared with userspace, and mmap.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "srd.h"

static void srd_ring_free_pages(struct srd_ring *ring, u32 n)
{
	while (n--)
		__free_page(ring->pages[n]);
	kvfree(ring->pages);
}

/*
 * Allocate a zeroed ring of @num_entries (a power of two) slots of
 * @stride bytes and offer it to @uctx for mmap.  Its pages, and the
 * array of them, are charged to the caller's memory cgroup: userspace
 * decides how many rings there are and how large.
 */
struct srd_ring *srd_ring_create(struct ib_ucontext *uctx, u32 num_entries,
				 u32 stride)
{
	struct srd_ring *ring;
	size_t size;
	u32 i;
	int err;

	if (!is_power_of_2(num_entries))
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(SRD_RING_SLOTS_OFFSET + (size_t)num_entries * stride);
	if (size > U32_MAX)
		return ERR_PTR(-EINVAL);

	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return ERR_PTR(-ENOMEM);
	ring->npages = size >> PAGE_SHIFT;
	ring->pages = kvcalloc(ring->npages, sizeof(*ring->pages),
			       GFP_KERNEL_ACCOUNT);
	if (!ring->pages) {
		err = -ENOMEM;
		goto err_free_ring;
	}
	for (i = 0; i < ring->npages; i++) {
		ring->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!ring->pages[i]) {
			err = -ENOMEM;
			goto err_free_pages;
		}
	}
	ring->buf = vmap(ring->pages, ring->npages, VM_MAP, PAGE_KERNEL);
	if (!ring->buf) {
		err = -ENOMEM;
		goto err_free_pages;
	}
	ring->size = size;
	ring->ctl = ring->buf;
	ring->num_entries = num_entries;
	ring->stride = stride;

	err = rdma_user_mmap_entry_insert(uctx, &ring->mmap_entry, size);
	if (err)
		goto err_unmap;
	return ring;

err_unmap:
	vunmap(ring->buf);
err_free_pages:
	srd_ring_free_pages(ring, i);
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
	/* The entry's key is vm_pgoff: the pages are mapped from the first. */
	err = vm_map_pages_zero(vma, ring->pages, ring->npages);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void srd_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct srd_ring *ring = container_of(entry, struct srd_ring,
					     mmap_entry);

	vunmap(ring->buf);
	srd_ring_free_pages(ring, ring->npages);
	kfree(ring);
}
