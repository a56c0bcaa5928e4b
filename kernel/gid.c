// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the GID table.  Each IPv4 address of the netdev appears as an
 * IPv4-mapped IPv6 GID (::ffff:a.b.c.d) and each IPv6 address as itself.
 * An address keeps its index for as long as it exists; a new one takes the
 * lowest free index.  ib_core caches the table (the port is not RoCE, so it
 * asks query_gid) and re-reads it on IB_EVENT_GID_CHANGE.
 */

#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>

#include "srd.h"

/* Collect the netdev's addresses as GIDs; returns how many were found. */
static int srd_gid_collect(struct net_device *ndev, union ib_gid *out,
			   int max)
{
	struct inet6_ifaddr *ifp;
	struct in_ifaddr *ifa;
	struct inet6_dev *idev;
	struct in_device *in_dev;
	int n = 0;

	rcu_read_lock();
	in_dev = __in_dev_get_rcu(ndev);
	if (in_dev) {
		in_dev_for_each_ifa_rcu(ifa, in_dev) {
			if (n < max)
				ipv6_addr_set_v4mapped(ifa->ifa_local,
						       (struct in6_addr *)out[n].raw);
			n++;
		}
	}
	idev = __in6_dev_get(ndev);
	if (idev) {
		read_lock_bh(&idev->lock);
		list_for_each_entry(ifp, &idev->addr_list, if_list) {
			if (n < max)
				memcpy(out[n].raw, &ifp->addr, sizeof(out[n]));
			n++;
		}
		read_unlock_bh(&idev->lock);
	}
	rcu_read_unlock();
	return n;
}

static bool srd_gid_in(const union ib_gid *gid, const union ib_gid *set,
		       int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!memcmp(gid, &set[i], sizeof(*gid)))
			return true;
	return false;
}

/* Rebuild the table from the addresses; returns true if it changed. */
static bool srd_gid_rebuild(struct srd_dev *sdev)
{
	union ib_gid addrs[SRD_GID_TBL_LEN * 2];
	bool changed = false, overflow;
	int n, i, j;

	n = srd_gid_collect(sdev->ndev, addrs, ARRAY_SIZE(addrs));
	overflow = n > ARRAY_SIZE(addrs);
	n = min_t(int, n, ARRAY_SIZE(addrs));

	spin_lock_bh(&sdev->gid_lock);
	/* Drop entries whose address is gone. */
	for (i = 0; i < SRD_GID_TBL_LEN; i++) {
		struct srd_gid_entry *e = &sdev->gids[i];

		if (e->valid && !srd_gid_in(&e->gid, addrs, n)) {
			memset(e, 0, sizeof(*e));
			changed = true;
		}
	}
	/* Add new addresses at the lowest free index. */
	for (j = 0; j < n; j++) {
		int free_idx = -1;
		bool present = false;

		for (i = 0; i < SRD_GID_TBL_LEN; i++) {
			struct srd_gid_entry *e = &sdev->gids[i];

			if (e->valid && !memcmp(&e->gid, &addrs[j],
						sizeof(addrs[j]))) {
				present = true;
				break;
			}
			if (!e->valid && free_idx < 0)
				free_idx = i;
		}
		if (present)
			continue;
		if (free_idx < 0) {
			overflow = true;
			continue;
		}
		sdev->gids[free_idx].gid = addrs[j];
		sdev->gids[free_idx].valid = true;
		changed = true;
	}
	spin_unlock_bh(&sdev->gid_lock);

	if (overflow && !sdev->gid_overflow_logged) {
		sdev->gid_overflow_logged = true;
		pr_warn("rdma_srd: %s has more than %d addresses; the extra ones get no GID\n",
			netdev_name(sdev->ndev), SRD_GID_TBL_LEN);
	}
	return changed;
}

void srd_gid_sync(struct srd_dev *sdev)
{
	if (srd_gid_rebuild(sdev))
		srd_dev_port_event(sdev, IB_EVENT_GID_CHANGE);
}

static void srd_gid_work(struct work_struct *work)
{
	struct srd_dev *sdev = container_of(work, struct srd_dev, gid_work);

	/*
	 * Hold a registration reference while dispatching, so that the
	 * device cannot pass disable_device() (and ib_core's cache teardown)
	 * under us.  Failing to get one means it is going away.
	 */
	if (!ib_device_try_get(&sdev->ibdev))
		return;
	srd_gid_sync(sdev);
	ib_device_put(&sdev->ibdev);
}

/* Before registration: fill the table, no event. */
void srd_gid_init(struct srd_dev *sdev)
{
	INIT_WORK(&sdev->gid_work, srd_gid_work);
	srd_gid_rebuild(sdev);
}

/* Any context; the caller holds a registration reference. */
void srd_gid_schedule_sync(struct srd_dev *sdev)
{
	queue_work(system_unbound_wq, &sdev->gid_work);
}

int srd_query_gid(struct ib_device *ibdev, u32 port, int index,
		  union ib_gid *gid)
{
	struct srd_dev *sdev = to_sdev(ibdev);

	if (index < 0 || index >= SRD_GID_TBL_LEN)
		return -EINVAL;

	spin_lock_bh(&sdev->gid_lock);
	if (sdev->gids[index].valid)
		*gid = sdev->gids[index].gid;
	else
		memset(gid, 0, sizeof(*gid));
	spin_unlock_bh(&sdev->gid_lock);
	return 0;
}
