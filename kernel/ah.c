// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: address handles and the device's table of AH numbers.
 *
 * As on EFA, an AH number names a destination for the whole device: every
 * ib_ah to the same (source GID, destination GID) shares one number, which
 * lives as long as one of them does.  Work requests carry the number.  A
 * number only names an address any process could create an AH for, so it
 * is not a capability and needs no per-process check.
 *
 * A receive completion reports in slid the number of an AH to the sender
 * in the receiving QP's PD, or 0xffff when that PD has none (then the
 * sender's GID is what names it, srddv_wc_read_sgid()): an AH of another
 * PD, another process's say, is not one the receiver could use, and EFA
 * reports it as unknown too.
 */

#include <linux/hash.h>
#include <linux/slab.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_user_verbs.h>

#include "srd.h"

static bool srd_gid_is_unicast_ip(const union ib_gid *gid)
{
	const struct in6_addr *a = (const struct in6_addr *)gid->raw;

	if (ipv6_addr_v4mapped(a)) {
		__be32 ip4 = a->s6_addr32[3];

		return !ipv4_is_zeronet(ip4) && !ipv4_is_multicast(ip4) &&
		       !ipv4_is_lbcast(ip4);
	}
	return !ipv6_addr_any(a) && !ipv6_addr_is_multicast(a);
}

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

static struct srd_ah_entry *srd_ah_entry_get(struct srd_dev *sdev,
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

static void srd_ah_entry_put(struct srd_dev *sdev, struct srd_ah_entry *e)
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

int srd_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		  struct ib_udata *udata)
{
	struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct srd_dev *sdev = to_sdev(ibah->device);
	struct srd_create_ah_resp resp = {};
	const struct ib_global_route *grh;
	struct srd_ah *ah = to_sah(ibah);
	union ib_gid sgid;
	int err;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH)) {
		ibdev_dbg(&sdev->ibdev, "create_ah: a GRH (dgid) is required\n");
		return -EINVAL;
	}
	grh = rdma_ah_read_grh(attr);
	if (!srd_gid_is_unicast_ip(&grh->dgid)) {
		ibdev_dbg(&sdev->ibdev, "create_ah: dgid %pI6 is not a unicast IP address\n",
			  grh->dgid.raw);
		return -EINVAL;
	}
	if (grh->sgid_attr)
		sgid = grh->sgid_attr->gid;
	else if (srd_query_gid(ibah->device, 1, grh->sgid_index, &sgid))
		return -EINVAL;

	if (atomic64_inc_return(&sdev->counters[SRD_CNT_AHS]) > SRD_MAX_AH) {
		err = -ENOMEM;
		goto err_count;
	}
	err = srd_route_check(sdev, &sgid, &grh->dgid);
	if (err) {
		ibdev_dbg(&sdev->ibdev, "create_ah: no route to %pI6 in %s's namespace: %d\n",
			  grh->dgid.raw, netdev_name(sdev->ndev), err);
		goto err_count;
	}
	ah->entry = srd_ah_entry_get(sdev, &sgid, &grh->dgid);
	if (IS_ERR(ah->entry)) {
		err = PTR_ERR(ah->entry);
		goto err_count;
	}

	spin_lock_bh(&sdev->ah_lock);
	hash_add(sdev->ah_by_pd, &ah->pd_node,
		 srd_ah_pd_hash(ibah->pd, &grh->dgid));
	spin_unlock_bh(&sdev->ah_lock);

	if (udata && udata->outlen) {
		resp.ahn = ah->entry->ahn;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_entry;
	}
	return 0;

err_entry:
	spin_lock_bh(&sdev->ah_lock);
	hash_del(&ah->pd_node);
	spin_unlock_bh(&sdev->ah_lock);
	srd_ah_entry_put(sdev, ah->entry);
err_count:
	atomic64_dec(&sdev->counters[SRD_CNT_AHS]);
	return err;
}

int srd_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct srd_dev *sdev = to_sdev(ibah->device);
	struct srd_ah *ah = to_sah(ibah);

	spin_lock_bh(&sdev->ah_lock);
	hash_del(&ah->pd_node);
	spin_unlock_bh(&sdev->ah_lock);
	srd_ah_entry_put(sdev, ah->entry);
	atomic64_dec(&sdev->counters[SRD_CNT_AHS]);
	return 0;
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
