// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: `rdma link add NAME type srd netdev DEV`.
 */

#include <rdma/rdma_netlink.h>

#include "srd.h"

static DEFINE_MUTEX(srd_link_mutex);

static int srd_newlink(const char *name, struct net_device *ndev)
{
	int err;

	/*
	 * A name already taken is found by ib_register_device() itself
	 * (srd_dev_add()): ib_device_get_by_name() is no longer exported
	 * from 7.0 on.
	 */
	mutex_lock(&srd_link_mutex);
	if (srd_netdev_has_dev(ndev)) {
		pr_info("rdma_srd: netdev %s already has an srd device\n",
			netdev_name(ndev));
		err = -EBUSY;
		goto out;
	}
	if (!srd_netdev_can_carry_ip(ndev)) {
		pr_info("rdma_srd: netdev %s (type %u) cannot carry IP\n",
			netdev_name(ndev), ndev->type);
		err = -EPROTONOSUPPORT;
		goto out;
	}
	err = srd_dev_add(name, ndev);
out:
	mutex_unlock(&srd_link_mutex);
	return err;
}

static struct rdma_link_ops srd_link_ops = {
	.type = "srd",
	.newlink = srd_newlink,
};

int srd_link_register(void)
{
	rdma_link_register(&srd_link_ops);
	return 0;
}

void srd_link_unregister(void)
{
	rdma_link_unregister(&srd_link_ops);
}
