/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the rdma_srd device and its verbs objects.
 *
 * Lifetime and locking, in one place:
 *
 *  - struct srd_dev embeds the ib_device.  ib_core owns its memory: it is
 *    allocated by ib_alloc_device() in newlink and freed by ib_core after
 *    ib_unregister_device*() has called srd_dealloc_driver().  newlink
 *    holds a device kref (get_device) across registration, so a racing
 *    "rdma link del" cannot free it before newlink is done with it.
 *  - srd_devices (list) is guarded by srd_devices_lock, a BH spinlock,
 *    because the inet6addr notifier may run in softirq context.  A device is on the list
 *    from just after ib_register_device() until srd_dealloc_driver().
 *    Lookups take a registration reference with ib_device_try_get() while
 *    holding the lock, and drop it with ib_device_put(); try_get fails once
 *    unregistration has begun, so nothing found that way outlives the device.
 *  - srd_link_mutex serialises newlink so that "one device per netdev" and
 *    "unique name" are checked and acted upon atomically.  It is never taken
 *    by a notifier, so rtnl may be taken under it, never the reverse.
 *  - sdev->ndev is held (netdev_hold) from newlink until
 *    srd_dealloc_driver().  NETDEV_UNREGISTER queues the ib_device's
 *    unregistration, which drops it.
 *  - sdev->gid_lock (BH) guards sdev->gids; the GID work rebuilds the table from
 *    the netdev's addresses and is the only writer after registration.
 */
#ifndef _SRD_H
#define _SRD_H

#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/idr.h>
#include <rdma/ib_verbs.h>

#include "compat.h"

#define SRD_VERSION		"0.1.0"
#define SRD_VERSION_MAJOR	0
#define SRD_VERSION_MINOR	1
#define SRD_VERSION_PATCH	0

/*
 * Bytes the transport adds in front of the payload on the wire, used to
 * derive the port's active MTU from the netdev MTU: the larger IP header
 * (IPv6, 40), UDP (8) and the SRD header (docs/protocol.md).
 */
#define SRD_IP_HDR_MAX_BYTES	40
#define SRD_UDP_HDR_BYTES	8
#define SRD_HDR_MAX_BYTES	64
#define SRD_WIRE_OVERHEAD_BYTES	(SRD_IP_HDR_MAX_BYTES + SRD_UDP_HDR_BYTES + \
				 SRD_HDR_MAX_BYTES)

#define SRD_GID_TBL_LEN		16

/*
 * Device limits advertised by query_device.  They are the limits the
 * driver enforces; objects that are not implemented yet are refused with
 * EOPNOTSUPP whatever their count.
 */
#define SRD_MAX_PD		4096
#define SRD_MAX_QP		4096
#define SRD_MAX_QP_WR		4096
#define SRD_MAX_CQ		4096
#define SRD_MAX_CQE		(64 * 1024)
#define SRD_MAX_MR		(64 * 1024)
#define SRD_MAX_AH		(64 * 1024)
#define SRD_MAX_SEND_SGE	16
#define SRD_MAX_RECV_SGE	16
#define SRD_MAX_RDMA_SGE	16
#define SRD_MAX_INLINE_BYTES	256
#define SRD_MAX_MSG_BYTES	(1U << 20)
#define SRD_MAX_MR_BYTES	(1ULL << 40)

struct srd_gid_entry {
	union ib_gid gid;
	bool valid;
};

struct srd_dev {
	struct ib_device ibdev;

	/* Held from newlink to srd_dealloc_driver(). */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;

	/* On srd_devices, under srd_devices_lock. */
	struct list_head list;

	spinlock_t gid_lock;
	struct srd_gid_entry gids[SRD_GID_TBL_LEN];
	struct work_struct gid_work;
	bool gid_overflow_logged;

	/* PD numbers; the IDA has its own lock. */
	struct ida pd_ida;
};

static inline struct srd_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srd_dev, ibdev);
}

struct srd_ucontext {
	struct ib_ucontext ibuc;
};

struct srd_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct srd_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct srd_pd, ibpd);
}

/* device.c */
extern const struct ib_device_ops srd_dev_ops;
int srd_dev_add(const char *name, struct net_device *ndev);
void srd_dev_remove_all(void);
struct srd_dev *srd_dev_get_by_netdev(struct net_device *ndev);
bool srd_netdev_has_dev(struct net_device *ndev);
void srd_dev_port_event(struct srd_dev *sdev, enum ib_event_type type);

/* gid.c */
void srd_gid_init(struct srd_dev *sdev);
void srd_gid_sync(struct srd_dev *sdev);
void srd_gid_schedule_sync(struct srd_dev *sdev);
int srd_query_gid(struct ib_device *ibdev, u32 port, int index,
		  union ib_gid *gid);

/* verbs.c */
int srd_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void srd_dealloc_ucontext(struct ib_ucontext *ibuc);
int srd_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srd_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* netdev.c */
int srd_netdev_notifiers_register(void);
void srd_netdev_notifiers_unregister(void);
bool srd_netdev_can_carry_ip(const struct net_device *ndev);

/* link.c */
int srd_link_register(void);
void srd_link_unregister(void);

#endif /* _SRD_H */
