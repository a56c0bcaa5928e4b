// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: following the netdev — link state, addresses, and its removal.
 */

#include <linux/if_arp.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>

#include "srd.h"

/*
 * SRD rides on UDP/IP, so the netdev must be one the IP stack runs on: a
 * link type that carries IP, with IPv4 or IPv6 enabled on it.
 */
bool srd_netdev_can_carry_ip(const struct net_device *ndev)
{
	switch (ndev->type) {
	case ARPHRD_ETHER:
	case ARPHRD_LOOPBACK:
	case ARPHRD_NONE:	/* L3 devices: tun, wireguard */
	case ARPHRD_RAWIP:
	case ARPHRD_INFINIBAND:	/* IPoIB */
	case ARPHRD_TUNNEL:
	case ARPHRD_TUNNEL6:
	case ARPHRD_SIT:
	case ARPHRD_IPGRE:
	case ARPHRD_IP6GRE:
		break;
	default:
		return false;
	}
	return rcu_access_pointer(ndev->ip_ptr) ||
	       rcu_access_pointer(ndev->ip6_ptr);
}

static int srd_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct srd_dev *sdev;

	sdev = srd_dev_get_by_netdev(ndev);
	if (!sdev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		ibdev_info(&sdev->ibdev, "netdev %s is going away\n",
			   netdev_name(ndev));
		ib_unregister_device_queued(&sdev->ibdev);
		break;
	case NETDEV_CHANGEMTU:
		srd_qps_mtu_changed(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		srd_dev_port_event(sdev,
				   netif_running(ndev) && netif_carrier_ok(ndev) ?
				   IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
		break;
	default:
		break;
	}
	ib_device_put(&sdev->ibdev);
	return NOTIFY_DONE;
}

static void srd_netdev_addr_changed(struct net_device *ndev)
{
	struct srd_dev *sdev = srd_dev_get_by_netdev(ndev);

	if (!sdev)
		return;
	srd_gid_schedule_sync(sdev);
	ib_device_put(&sdev->ibdev);
}

static int srd_inetaddr_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct in_ifaddr *ifa = ptr;

	srd_netdev_addr_changed(ifa->ifa_dev->dev);
	return NOTIFY_DONE;
}

/* Atomic notifier chain: must not sleep. */
static int srd_inet6addr_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct inet6_ifaddr *ifa6 = ptr;

	srd_netdev_addr_changed(ifa6->idev->dev);
	return NOTIFY_DONE;
}

static struct notifier_block srd_netdev_nb = {
	.notifier_call = srd_netdev_event,
};

static struct notifier_block srd_inetaddr_nb = {
	.notifier_call = srd_inetaddr_event,
};

static struct notifier_block srd_inet6addr_nb = {
	.notifier_call = srd_inet6addr_event,
};

int srd_netdev_notifiers_register(void)
{
	int err;

	err = register_netdevice_notifier(&srd_netdev_nb);
	if (err)
		return err;
	err = register_inetaddr_notifier(&srd_inetaddr_nb);
	if (err)
		goto err_netdev;
	err = register_inet6addr_notifier(&srd_inet6addr_nb);
	if (err)
		goto err_inet;
	return 0;

err_inet:
	unregister_inetaddr_notifier(&srd_inetaddr_nb);
err_netdev:
	unregister_netdevice_notifier(&srd_netdev_nb);
	return err;
}

void srd_netdev_notifiers_unregister(void)
{
	unregister_inet6addr_notifier(&srd_inet6addr_nb);
	unregister_inetaddr_notifier(&srd_inetaddr_nb);
	unregister_netdevice_notifier(&srd_netdev_nb);
}
