// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: address handles, the verbs; their numbers are ahn.c's.
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

	srd_ah_pd_add(sdev, ah);

	if (udata && udata->outlen) {
		resp.ahn = ah->entry->ahn;
		err = ib_copy_to_udata(udata, &resp,
				       min(udata->outlen, sizeof(resp)));
		if (err)
			goto err_entry;
	}
	return 0;

err_entry:
	srd_ah_pd_del(sdev, ah);
	srd_ah_entry_put(sdev, ah->entry);
err_count:
	atomic64_dec(&sdev->counters[SRD_CNT_AHS]);
	return err;
}

int srd_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct srd_dev *sdev = to_sdev(ibah->device);
	struct srd_ah *ah = to_sah(ibah);

	srd_ah_pd_del(sdev, ah);
	srd_ah_entry_put(sdev, ah->entry);
	atomic64_dec(&sdev->counters[SRD_CNT_AHS]);
	return 0;
}
