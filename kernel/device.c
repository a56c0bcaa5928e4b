// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the ib_device — its attributes, its port, and its life from
 * newlink to dealloc_driver.
 */

#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/srd-abi.h>

#include "srd.h"

static LIST_HEAD(srd_devices);
static DEFINE_SPINLOCK(srd_devices_lock);

static u64 srd_fw_ver(void)
{
	return ((u64)SRD_VERSION_MAJOR << 32) | ((u64)SRD_VERSION_MINOR << 16) |
	       SRD_VERSION_PATCH;
}

static int srd_query_device(struct ib_device *ibdev,
			    struct ib_device_attr *attr, struct ib_udata *udata)
{
	struct srd_dev *sdev = to_sdev(ibdev);

	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = srd_fw_ver();
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->vendor_id = SRD_VENDOR_ID;
	attr->vendor_part_id = SRD_VENDOR_PART_ID;
	attr->max_mr_size = SRD_MAX_MR_BYTES;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = SRD_MAX_QP;
	attr->max_qp_wr = SRD_MAX_QP_WR;
	attr->max_send_sge = sdev->limits.max_send_sge;
	attr->max_recv_sge = sdev->limits.max_recv_sge;
	attr->max_sge_rd = sdev->limits.max_rdma_sge;
	attr->max_cq = SRD_MAX_CQ;
	attr->max_cqe = SRD_MAX_CQE;
	attr->max_mr = SRD_MAX_MR;
	attr->max_pd = SRD_MAX_PD;
	attr->max_ah = SRD_MAX_AH;
	attr->max_pkeys = 1;
	attr->atomic_cap = IB_ATOMIC_NONE;
	/* rdma link del is refused to a device that does not allow it. */
#ifdef HAVE_KERNEL_CAP_FLAGS
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
#else
	attr->device_cap_flags |= IB_DEVICE_ALLOW_USER_UNREG;
#endif
	return 0;
}

/* sdev->ndev's reference: tracked from 6.0 on (HAVE_NETDEV_HOLD). */
static void srd_hold_netdev(struct srd_dev *sdev)
{
#ifdef HAVE_NETDEV_HOLD
	netdev_hold(sdev->ndev, &sdev->ndev_tracker, GFP_KERNEL);
#else
	dev_hold(sdev->ndev);
#endif
}

static void srd_put_netdev(struct srd_dev *sdev)
{
#ifdef HAVE_NETDEV_HOLD
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
#else
	dev_put(sdev->ndev);
#endif
}

static bool srd_port_is_up(const struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev);
}

static int srd_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *attr)
{
	struct srd_dev *sdev = to_sdev(ibdev);
	struct net_device *ndev = sdev->ndev;

	/* ib_core zeroed *attr. */
	attr->gid_tbl_len = SRD_GID_TBL_LEN;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = srd_max_srd_msg_bytes(sdev);
	attr->max_mtu = IB_MTU_4096;
	attr->max_vl_num = 1;
	attr->active_mtu = srd_port_active_mtu(sdev);
	if (srd_port_is_up(ndev)) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	/* active_mtu 0 is not a valid enum: a netdev this small is down. */
	if (!attr->active_mtu) {
		attr->active_mtu = IB_MTU_256;
		attr->state = IB_PORT_DOWN;
	}
	/*
	 * Speed and width follow the netdev's ethtool speed.  While the
	 * netdev is being unregistered ib_core can no longer reach it; the
	 * port is down then and the figures do not matter.
	 */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int srd_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *immutable)
{
	immutable->gid_tbl_len = SRD_GID_TBL_LEN;
	immutable->pkey_tbl_len = 1;
	/*
	 * SRD is neither IB nor RoCE nor iWARP: no core protocol bits.  An
	 * AH needs a GRH, since GIDs are the only addresses.
	 */
	immutable->core_cap_flags = RDMA_CORE_CAP_IB_GRH_REQUIRED;
	return 0;
}

static enum rdma_link_layer srd_get_link_layer(struct ib_device *ibdev,
					       u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int srd_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			  u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static void srd_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", SRD_VERSION);
}

static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SRD_HCA_TYPE);
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t limits_profile_show(struct device *device,
				   struct device_attribute *attr, char *buf)
{
	struct srd_dev *sdev = rdma_device_to_drv_device(device, struct srd_dev,
							 ibdev);

	return sysfs_emit(buf, "%s\n", srd_limits_name(&sdev->limits));
}
static DEVICE_ATTR_RO(limits_profile);

static struct attribute *srd_dev_attributes[] = {
	&dev_attr_hca_type.attr,
	&dev_attr_limits_profile.attr,
	NULL,
};

static const struct attribute_group srd_dev_attr_group = {
	.attrs = srd_dev_attributes,
};

static void srd_dealloc_driver(struct ib_device *ibdev)
{
	struct srd_dev *sdev = to_sdev(ibdev);

	spin_lock_bh(&srd_devices_lock);
	list_del_rcu(&sdev->list);
	spin_unlock_bh(&srd_devices_lock);
	/* The receive path may still be looking at it (srd_dev_get_by_gid). */
	synchronize_rcu();

	cancel_work_sync(&sdev->gid_work);
	srd_transport_fini(sdev);
	/* Every message is gone: the last MRs' unpinning is queued, if any. */
	srd_mr_flush();
	ida_destroy(&sdev->pd_ida);
	/* ib_core destroyed every object before calling us. */
	WARN_ON_ONCE(!xa_empty(&sdev->qps));
	WARN_ON_ONCE(!xa_empty(&sdev->ah_by_num));
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->mrs_by_lkey);
	xa_destroy(&sdev->mrs_by_rkey);
	xa_destroy(&sdev->ah_by_num);
	free_percpu(sdev->traffic);
	if (sdev->snet)
		srd_net_put(sdev->snet);
	srd_put_netdev(sdev);
	/*
	 * ib_core has deleted the ib_device from sysfs (or never added it),
	 * which dropped its references to the parent; ibdev_*() log lines
	 * name the parent, so forget it once it is gone.
	 */
	if (sdev->ibdev.dev.parent) {
		srd_bus_dev_destroy(sdev->ibdev.dev.parent);
		sdev->ibdev.dev.parent = NULL;
	}
}

/*
 * The device goes away, or moves to another network namespace, while a
 * process has it open: ib_core has destroyed the process's objects with
 * the usual destroy verbs and calls this last.  Nothing is left to undo:
 * no kernel state refers to the context, and rings still mapped keep
 * their pages (remap_vmalloc_range holds them) until userspace unmaps
 * them.  That the op exists is what matters: without it ib_core waits
 * for every process to close the device before an unregistration ends,
 * so any process could stall "rdma link del", the netdev's removal and
 * its network namespace's teardown, and devices could not change
 * namespace ("rdma dev set DEV netns NS" in exclusive mode).
 */
static void srd_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * The verbs whose failures EFA's device counters count (alloc_pd_err,
 * ...): each error a verb returns, counted here around it.
 */
static int srd_counted(struct ib_device *ibdev, enum srd_counter c, int err)
{
	if (err)
		srd_count_one(to_sdev(ibdev), c);
	return err;
}

static int srd_alloc_pd_op(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return srd_counted(ibpd->device, SRD_CNT_ALLOC_PD_ERR,
			   srd_alloc_pd(ibpd, udata));
}

static int srd_alloc_ucontext_op(struct ib_ucontext *ibuc,
				 struct ib_udata *udata)
{
	return srd_counted(ibuc->device, SRD_CNT_ALLOC_UCONTEXT_ERR,
			   srd_alloc_ucontext(ibuc, udata));
}

static int srd_create_ah_op(struct ib_ah *ibah,
			    struct rdma_ah_init_attr *init_attr,
			    struct ib_udata *udata)
{
	return srd_counted(ibah->device, SRD_CNT_CREATE_AH_ERR,
			   srd_create_ah(ibah, init_attr, udata));
}

static int srd_create_qp_op(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata)
{
	return srd_counted(ibqp->device, SRD_CNT_CREATE_QP_ERR,
			   srd_create_qp(ibqp, init, udata));
}

static int srd_mmap_op(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	return srd_counted(uctx->device, SRD_CNT_MMAP_ERR,
			   srd_mmap(uctx, vma));
}

/* ib_core passes create_cq an attribute bundle since 6.11 or so. */
#ifdef HAVE_CREATE_CQ_ATTR_BUNDLE
static int srd_create_cq_op(struct ib_cq *ibcq,
			    const struct ib_cq_init_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	return srd_counted(ibcq->device, SRD_CNT_CREATE_CQ_ERR,
			   srd_create_cq(ibcq, attr,
					 attrs ? &attrs->driver_udata : NULL));
}
#else
static int srd_create_cq_op(struct ib_cq *ibcq,
			    const struct ib_cq_init_attr *attr,
			    struct ib_udata *udata)
{
	return srd_counted(ibcq->device, SRD_CNT_CREATE_CQ_ERR,
			   srd_create_cq(ibcq, attr, udata));
}
#endif

const struct ib_device_ops srd_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SRD_UVERBS_ABI_VERSION,

	.alloc_hw_device_stats = srd_alloc_hw_device_stats,
	.alloc_hw_port_stats = srd_alloc_hw_port_stats,
	.alloc_pd = srd_alloc_pd_op,
	.alloc_ucontext = srd_alloc_ucontext_op,
	.create_ah = srd_create_ah_op,
	.create_cq = srd_create_cq_op,
	.create_qp = srd_create_qp_op,
	.create_user_ah = srd_create_ah_op,
	.dealloc_driver = srd_dealloc_driver,
	.dealloc_pd = srd_dealloc_pd,
	.dealloc_ucontext = srd_dealloc_ucontext,
	.dereg_mr = srd_dereg_mr,
	.destroy_ah = srd_destroy_ah,
	.disassociate_ucontext = srd_disassociate_ucontext,
	.destroy_cq = srd_destroy_cq,
	.destroy_qp = srd_destroy_qp,
	.device_group = &srd_dev_attr_group,
	.get_dev_fw_str = srd_get_dev_fw_str,
	.get_hw_stats = srd_get_hw_stats,
	.get_link_layer = srd_get_link_layer,
	.get_port_immutable = srd_get_port_immutable,
	.mmap = srd_mmap_op,
	.mmap_free = srd_mmap_free,
	.modify_qp = srd_modify_qp,
	.post_recv = srd_post_recv,
	.post_send = srd_post_send,
	.query_device = srd_query_device,
	.query_gid = srd_query_gid,
	.query_pkey = srd_query_pkey,
	.query_port = srd_query_port,
	.query_qp = srd_query_qp,
	.reg_user_mr = srd_reg_user_mr_op,
	.req_notify_cq = srd_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, srd_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, srd_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, srd_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, srd_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, srd_ucontext, ibuc),
};

/*
 * The NUMA node of @ndev's NIC: the first of its ancestors that has one
 * (a virtio NIC has none, its PCI function may); NUMA_NO_NODE for a
 * netdev without a device, as a veth.
 */
static int srd_netdev_node(struct net_device *ndev)
{
	struct device *d;

	for (d = ndev->dev.parent; d; d = d->parent)
		if (dev_to_node(d) != NUMA_NO_NODE)
			return dev_to_node(d);
	return NUMA_NO_NODE;
}

static void srd_node_guid(struct srd_dev *sdev, struct net_device *ndev)
{
	u8 *guid = (u8 *)&sdev->ibdev.node_guid;

	if (ndev->addr_len == ETH_ALEN &&
	    is_valid_ether_addr(ndev->dev_addr)) {
		addrconf_addr_eui48(guid, ndev->dev_addr);
		return;
	}
	/* No MAC (an L3 device): a random, locally administered EUI-64. */
	get_random_bytes(guid, sizeof(sdev->ibdev.node_guid));
	guid[0] = (guid[0] & ~0x01) | 0x02;
}

/*
 * Called with srd_link_mutex held.  On success the device is registered,
 * on srd_devices, and owned by ib_core; on failure nothing is left behind.
 */
int srd_dev_add(const char *name, struct net_device *ndev)
{
	struct device *parent;
	struct srd_dev *sdev;
	bool gone;
	int err, cpu;

	sdev = ib_alloc_device(srd_dev, ibdev);
	if (!sdev)
		return -ENOMEM;

	INIT_LIST_HEAD(&sdev->list);
	spin_lock_init(&sdev->gid_lock);
	ida_init(&sdev->pd_ida);
	xa_init_flags(&sdev->qps, XA_FLAGS_LOCK_IRQ);
	srd_qpn_init(sdev);
	xa_init_flags(&sdev->mrs_by_lkey, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->mrs_by_rkey, XA_FLAGS_LOCK_IRQ);
	spin_lock_init(&sdev->ah_lock);
	xa_init_flags(&sdev->ah_by_num, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	hash_init(sdev->ah_by_dgid);
	hash_init(sdev->ah_by_pd);
	srd_limits_init(&sdev->limits);
	sdev->traffic = alloc_percpu(struct srd_pcpu_traffic);
	if (!sdev->traffic) {
		ib_dealloc_device(&sdev->ibdev);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu)
		u64_stats_init(&per_cpu_ptr(sdev->traffic, cpu)->syncp);
	sdev->ndev = ndev;
	srd_hold_netdev(sdev);
	srd_gid_init(sdev);
	/*
	 * The ops first: ib_dealloc_device() undoes the above through
	 * srd_dealloc_driver only once they are set, and every failure
	 * below goes there (without it, a refused "rdma link add" leaked
	 * its hold on the netdev, which then could never unregister).
	 */
	ib_set_device_ops(&sdev->ibdev, &srd_dev_ops);

	err = srd_net_get(dev_net(ndev), &sdev->snet);
	if (err) {
		pr_debug("rdma_srd: no UDP socket in %s's namespace: %d\n",
			 netdev_name(ndev), err);
		goto err_dealloc;
	}
	err = srd_transport_init(sdev);
	if (err)
		goto err_dealloc;

	sdev->ibdev.node_type = RDMA_NODE_UNSPECIFIED;
	sdev->ibdev.phys_port_cnt = 1;
	/*
	 * As rxe and siw: one vector a CPU, all alike, since a completion's
	 * event is raised where the completion is made.  Software that
	 * spreads its CQs over vectors (fabtests' sread tests ask for two)
	 * may; uverbs refuses a vector past the last.
	 */
	sdev->ibdev.num_comp_vectors = num_possible_cpus();
	sdev->ibdev.local_dma_lkey = 0;
	strscpy(sdev->ibdev.node_desc, "softsrd", sizeof(sdev->ibdev.node_desc));
	srd_node_guid(sdev, ndev);
	sdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);

	err = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (err)
		goto err_dealloc;

	parent = srd_bus_dev_create(srd_netdev_node(ndev));
	if (IS_ERR(parent)) {
		err = PTR_ERR(parent);
		goto err_dealloc;
	}
	sdev->ibdev.dev.parent = parent;

	/*
	 * Once registered, a concurrent "rdma link del" may unregister and
	 * free the device: keep its memory until we are done with it.
	 */
	get_device(&sdev->ibdev.dev);
	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err) {
		put_device(&sdev->ibdev.dev);
		/* ib_core reports a name taken as ENFILE. */
		if (err == -ENFILE) {
			pr_info("rdma_srd: an RDMA device named %s already exists\n",
				name);
			err = -EEXIST;
		}
		goto err_dealloc;
	}

	/*
	 * ib_core lets "rdma link del" run as soon as the device is
	 * registered.  A registration reference holds its dealloc back
	 * until the device is on the list and in debugfs, or says that it
	 * is already going (before, a deallocated device could be put on
	 * srd_devices).
	 */
	if (!ib_device_try_get(&sdev->ibdev)) {
		err = -ENODEV;
		goto out_put;
	}
	spin_lock_bh(&srd_devices_lock);
	list_add_tail_rcu(&sdev->list, &srd_devices);
	spin_unlock_bh(&srd_devices_lock);
	srd_transport_debugfs_add(sdev);
	ib_device_put(&sdev->ibdev);

	/*
	 * NETDEV_UNREGISTER may have run before the device was on the list,
	 * where the notifier could not see it.  reg_state changes under rtnl
	 * before that notifier runs, so checking it under rtnl after the
	 * list insertion closes the window.
	 */
	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	rtnl_unlock();
	if (gone) {
		ib_unregister_device(&sdev->ibdev);
		err = -ENODEV;
		goto out_put;
	}

	/* Catch up on address changes made while registering. */
	if (ib_device_try_get(&sdev->ibdev)) {
		srd_gid_schedule_sync(sdev);
		ib_device_put(&sdev->ibdev);
	}
	ibdev_info(&sdev->ibdev, "softsrd %s on netdev %s\n", SRD_VERSION,
		   netdev_name(ndev));
	err = 0;
out_put:
	put_device(&sdev->ibdev.dev);
	return err;

err_dealloc:
	ib_dealloc_device(&sdev->ibdev);	/* calls srd_dealloc_driver */
	return err;
}

/*
 * Find the registered device bound to @ndev and take a registration
 * reference on it; release with ib_device_put().  Safe in atomic context.
 */
struct srd_dev *srd_dev_get_by_netdev(struct net_device *ndev)
{
	struct srd_dev *sdev, *found = NULL;

	spin_lock_bh(&srd_devices_lock);
	list_for_each_entry(sdev, &srd_devices, list) {
		if (sdev->ndev == ndev) {
			if (ib_device_try_get(&sdev->ibdev))
				found = sdev;
			break;
		}
	}
	spin_unlock_bh(&srd_devices_lock);
	return found;
}

/*
 * Find the registered device in @net that owns address @gid, and take a
 * registration reference on it.  Safe in atomic context.  Runs for every
 * received packet, so it walks the list under RCU, not srd_devices_lock.
 */
struct srd_dev *srd_dev_get_by_gid(struct net *net, const union ib_gid *gid)
{
	struct srd_dev *sdev, *found = NULL;
	int i;

	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &srd_devices, list) {
		/* The namespace of its sockets: its netdev's may have moved. */
		if (!net_eq(sdev->snet->net, net))
			continue;
		spin_lock(&sdev->gid_lock);
		for (i = 0; i < SRD_GID_TBL_LEN; i++)
			if (sdev->gids[i].valid &&
			    !memcmp(&sdev->gids[i].gid, gid, sizeof(*gid)))
				break;
		spin_unlock(&sdev->gid_lock);
		if (i < SRD_GID_TBL_LEN) {
			if (ib_device_try_get(&sdev->ibdev))
				found = sdev;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/* Is any device, registered or going away, still bound to @ndev? */
bool srd_netdev_has_dev(struct net_device *ndev)
{
	struct srd_dev *sdev;
	bool found = false;

	spin_lock_bh(&srd_devices_lock);
	list_for_each_entry(sdev, &srd_devices, list) {
		if (sdev->ndev == ndev) {
			found = true;
			break;
		}
	}
	spin_unlock_bh(&srd_devices_lock);
	return found;
}

void srd_dev_port_event(struct srd_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/*
 * Module unload: unregister every device still on the list.  A device may
 * already be on its way out (queued by NETDEV_UNREGISTER or rdma link del);
 * ib_unregister_device() then waits for, or skips, that work.  It runs
 * srd_dealloc_driver(), which takes the device off the list.
 */
static void srd_dev_remove_matching(struct net *net)
{
	struct srd_dev *sdev, *found;

	for (;;) {
		found = NULL;
		spin_lock_bh(&srd_devices_lock);
		list_for_each_entry(sdev, &srd_devices, list) {
			/*
			 * By the namespace of its sockets, which is being
			 * freed, not by its netdev's: a netdev moved to
			 * another namespace leaves its device here.
			 */
			if (!net || net_eq(sdev->snet->net, net)) {
				found = sdev;
				get_device(&sdev->ibdev.dev);
				break;
			}
		}
		spin_unlock_bh(&srd_devices_lock);
		sdev = found;
		if (!sdev)
			break;
		ib_unregister_device(&sdev->ibdev);
		/*
		 * If someone else's unregistration had already run dealloc,
		 * the device is off the list; otherwise ours did it.
		 */
		put_device(&sdev->ibdev.dev);
	}
}

void srd_dev_remove_all(void)
{
	srd_dev_remove_matching(NULL);
}

/* @net is being dismantled: remove its devices, synchronously. */
void srd_dev_remove_net(struct net *net)
{
	srd_dev_remove_matching(net);
}
