// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HAVE_IB_DEVICE_GET_NETDEV: ib_device_get_netdev() is exported. */
#include <rdma/ib_verbs.h>

struct net_device *probe_get(struct ib_device *ibdev);
struct net_device *probe_get(struct ib_device *ibdev)
{
	return ib_device_get_netdev(ibdev, 1);
}
