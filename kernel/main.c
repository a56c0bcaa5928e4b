// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: an open software implementation of the Scalable Reliable
 * Datagram RDMA transport, carried over UDP on any netdev.
 */

#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "srd.h"

/*
 * The work of QPs (sq_work): destroyed, so
 * drained, at unload, after the last device is gone.
 */
struct workqueue_struct *srd_wq;

static int __init srd_init(void)
{
	int err;

	srd_wq = alloc_workqueue("srd", WQ_UNBOUND, 0);
	if (!srd_wq)
		return -ENOMEM;
	err = srd_mr_init();
	if (err)
		goto err_wq;
	err = srd_txbuf_init();
	if (err)
		goto err_mr;
	err = srd_socket_init();
	if (err)
		goto err_txbuf;
	srd_debugfs_init();
	srd_counters_init();
	err = srd_bus_init();
	if (err)
		goto err_socket;
	err = srd_netdev_notifiers_register();
	if (err)
		goto err_bus;
	err = srd_link_register();
	if (err)
		goto err_notifiers;
	pr_info("rdma_srd: softsrd %s loaded, UDP port %u\n", SRD_VERSION,
		srd_udp_port);
	return 0;

err_notifiers:
	srd_netdev_notifiers_unregister();
err_bus:
	srd_bus_exit();
err_socket:
	srd_debugfs_exit();
	srd_socket_exit();
err_txbuf:
	srd_txbuf_exit();
err_mr:
	srd_mr_exit();
err_wq:
	destroy_workqueue(srd_wq);
	return err;
}

static void __exit srd_exit(void)
{
	/* No new devices (waits for a newlink in flight), ... */
	srd_link_unregister();
	/* ... then remove the ones there are; their dealloc stops their work. */
	srd_dev_remove_all();
	srd_netdev_notifiers_unregister();
	srd_bus_exit();
	srd_debugfs_exit();
	srd_socket_exit();
	srd_txbuf_exit();
	srd_mr_exit();
	destroy_workqueue(srd_wq);
	pr_info("rdma_srd: unloaded\n");
}

module_init(srd_init);
module_exit(srd_exit);

MODULE_AUTHOR("The softsrd developers");
MODULE_DESCRIPTION("softsrd: Scalable Reliable Datagram RDMA transport over UDP");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(SRD_VERSION);
MODULE_ALIAS_RDMA_LINK("srd");
