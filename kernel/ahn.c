// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the device's table of AH numbers (see ah.c for what a number
 * names and who may use it), kept by create_ah and destroy_ah, and its
 * lookups on the data path: the addresses a send's AH number stands for,
 * the number a receive completion reports.  Calls nothing of the device.
 */

#include <linux/hash.h>
#include <linux/slab.h>

#include "srd.h"

/* Under ah_lock. */
static struct srd_ah_entry *srd_ah_entry_find(struct srd_dev *sdev,
					      const union ib_gid *sgid,
					      const union ib_gid *dgid)
{
	struct srd_ah_entry *e;

	lockdep_assert_held(&sdev->ah_lock);

	hash_for_each_possible(sdev->ah_by_dgid, e, node, srd_gid_hash(dgid, 0))
		if (!memcmp(&e->dgid, dgid, sizeof(*dgid)) &&
		    !memcmp(&e->sgid, sgid, sizeof(*sgid)))
			return e;
	return NULL;
}

static u32 srd_ah_pd_hash(const struct ib_pd *pd, const union ib_gid *dgid)
{
	return srd_gid_hash(dgid, hash_ptr(pd, 32));
}

/*
 * The entry of (@sgid, @dgid), made with a new number if there is none,
 * its users counted; an ERR_PTR if there is no memory or number left.
 */
struct srd_ah_entry *srd_ah_entry_get(struct srd_dev *sdev,
				      const union ib_gid *sgid,
				      const union ib_gid *dgid)
{
	struct srd_ah_entry *e, *fresh;
	u32 ahn;
	int err;

	/* Allocate and number outside the lock; most calls find an entry. */
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return ERR_PTR(-ENOMEM);
	fresh->sgid = *sgid;
	fresh->dgid = *dgid;
	fresh->users = 1;
	/* Reserved, so that publishing it below cannot fail. */
	err = xa_alloc_bh(&sdev->ah_by_num, &ahn, XA_ZERO_ENTRY,
			  XA_LIMIT(0, SRD_MAX_AH - 1), GFP_KERNEL);
	if (err) {
		kfree(fresh);
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}
	fresh->ahn = ahn;

	spin_lock_bh(&sdev->ah_lock);
	e = srd_ah_entry_find(sdev, sgid, dgid);
	if (e) {
		e->users++;
	} else {
		e = fresh;
		xa_store_bh(&sdev->ah_by_num, ahn, e, GFP_ATOMIC);
		hash_add(sdev->ah_by_dgid, &e->node, srd_gid_hash(dgid, 0));
		fresh = NULL;
	}
	spin_unlock_bh(&sdev->ah_lock);

	if (fresh) {
		xa_erase_bh(&sdev->ah_by_num, ahn);
		kfree(fresh);
	}
	return e;
}

/* A user of @e gone; the last one's leaving frees its number. */
void srd_ah_entry_put(struct srd_dev *sdev, struct srd_ah_entry *e)
{
	bool last;

	spin_lock_bh(&sdev->ah_lock);
	last = --e->users == 0;
	if (last) {
		hash_del(&e->node);
		xa_erase_bh(&sdev->ah_by_num, e->ahn);
	}
	spin_unlock_bh(&sdev->ah_lock);
	if (last)
		kfree(e);
}

/*
 * @ah in the table of its PD's AHs by destination, for srd_ah_find_ahn(),
 * and out of it.
 */
void srd_ah_pd_add(struct srd_dev *sdev, struct srd_ah *ah)
{
	spin_lock_bh(&sdev->ah_lock);
	hash_add(sdev->ah_by_pd, &ah->pd_node,
		 srd_ah_pd_hash(ah->ibah.pd, &ah->entry->dgid));
	spin_unlock_bh(&sdev->ah_lock);
}

void srd_ah_pd_del(struct srd_dev *sdev, struct srd_ah *ah)
{
	spin_lock_bh(&sdev->ah_lock);
	hash_del(&ah->pd_node);
	spin_unlock_bh(&sdev->ah_lock);
}

/* The addresses AH number @ahn stands for.  Any context. */
bool srd_ah_lookup(struct srd_dev *sdev, u32 ahn, union ib_gid *sgid,
		   union ib_gid *dgid)
{
	struct srd_ah_entry *e;
	bool found = false;

	spin_lock_bh(&sdev->ah_lock);
	e = xa_load(&sdev->ah_by_num, ahn);
	if (e) {
		*sgid = e->sgid;
		*dgid = e->dgid;
		found = true;
	}
	spin_unlock_bh(&sdev->ah_lock);
	return found;
}

/*
 * The number of an AH of @pd to @dgid, or 0xffff if @pd has none: what a
 * receive completion of a QP of @pd reports for its sender.
 */
u16 srd_ah_find_ahn(struct srd_dev *sdev, const struct ib_pd *pd,
		    const union ib_gid *dgid)
{
	struct srd_ah *ah;
	u16 ahn = 0xffff;

	spin_lock_bh(&sdev->ah_lock);
	hash_for_each_possible(sdev->ah_by_pd, ah, pd_node,
			       srd_ah_pd_hash(pd, dgid)) {
		if (ah->ibah.pd == pd &&
		    !memcmp(&ah->entry->dgid, dgid, sizeof(*dgid))) {
			ahn = ah->entry->ahn;
			break;
		}
	}
	spin_unlock_bh(&sdev->ah_lock);
	return ahn;
}
