// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HAVE_NETDEV_HOLD: netdev references with trackers, netdev_hold/_put (6.0+). */
#include <linux/netdevice.h>

void probe_netdev_hold(struct net_device *dev);
void probe_netdev_hold(struct net_device *dev)
{
	netdevice_tracker tracker;

	netdev_hold(dev, &tracker, GFP_KERNEL);
	netdev_put(dev, &tracker);
}
