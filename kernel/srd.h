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
 *    because the inet6addr notifier may run in softirq context; the
 *    per-packet lookup by GID walks it under RCU instead, and
 *    srd_dealloc_driver() waits for such walkers.  A device is on the list
 *    from just after ib_register_device() until srd_dealloc_driver().
 *    Lookups take a registration reference with ib_device_try_get() while
 *    holding the lock, and drop it with ib_device_put(); try_get fails once
 *    unregistration has begun, so nothing found that way outlives the device.
 *  - srd_link_mutex serialises newlink so that "one device per netdev" and
 *    "unique name" are checked and acted upon atomically.  It is never taken
 *    by a notifier, so rtnl may be taken under it, never the reverse.
 *  - sdev->ndev is held (srd_hold_netdev) from newlink until
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
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/xarray.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <linux/hrtimer.h>
#include <linux/sizes.h>
#include <linux/u64_stats_sync.h>
#include <rdma/srd-abi.h>

#include "compat.h"
#include "engine/srd_engine.h"

/*
 * Kernel API differences the probes settled (scripts/kernel-probes.sh,
 * kernel/probes/) are bridged where they are used; this one in two files.
 */
#ifndef HAVE_GET_RANDOM_U16
#define get_random_u16()	((u16)get_random_u32())
#endif

#define SRD_VERSION		"0.1.0"
#define SRD_VERSION_MAJOR	0
#define SRD_VERSION_MINOR	1
#define SRD_VERSION_PATCH	0

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
#define SRD_MAX_AH		0xffff	/* AH numbers 0..0xfffe; 0xffff is "none" */
#define SRD_MAX_SEND_SGE	16
#define SRD_MAX_RECV_SGE	16
#define SRD_MAX_RDMA_SGE	16
#define SRD_MAX_INLINE_BYTES	256
#define SRD_DEV_MAX_MSG_BYTES	SZ_1M
/*
 * The SRD message EFA reports as its port's max_msg_sz (its MTU, 8928 on
 * current hardware), whatever the host's MTU: the efa profiles report it
 * too and segment below it (docs/protocol.md, "Limits profiles").
 */
#define SRD_EFA_MAX_MSG_BYTES	8928
#define SRD_MAX_MR_BYTES	SZ_1T

/*
 * What ibv_query_device reports as the vendor: softsrd's own numbers, not
 * Amazon's (EFA software reads vendor_part_id 0xefa0/0xefa1 as hardware
 * generations), so nothing mistakes an srd device for an EFA NIC.  The
 * vendor_id is "srd" in ASCII, as siw's is "bmt".
 */
#define SRD_VENDOR_ID		0x737264
#define SRD_VENDOR_PART_ID	0x5344

/* The UDP port SRD listens on and sends to (module parameter udp_port). */
extern unsigned short srd_udp_port;

/* Peers (remote devices) one device keeps transport state for. */
#define SRD_MAX_PEERS		1024

/* Device counters, one per line of counters.h: SRD_CNT_TX_ERRORS, ... */
enum srd_counter {
#define SRD_COUNTER(id)	SRD_CNT_##id,
#include "counters.h"
#undef SRD_COUNTER
	SRD_NUM_COUNTERS
};

/*
 * The UDP sockets of one network namespace, shared by every srd device
 * whose netdev lives there.  They are made with the namespace (or at
 * module load, for the namespaces there are then) and held until its
 * exit, so that no user can bind softsrd's port while no device exists.
 * References: the namespace's, from its init to its exit, and each
 * device's from newlink to dealloc_driver; the namespace's exit removes
 * the devices first, so the sockets never outlive the namespace.  A
 * socket is NULL while the port is taken (only in a namespace older than
 * the module; srd_net_get() tries again) and sock6 is NULL for good when
 * IPv6 is disabled (no_ipv6).
 */
struct srd_net {
	struct list_head list;		/* srd_nets, under srd_nets_mutex */
	struct net *net;		/* not counted: see above */
	refcount_t users;
	struct socket *sock4;		/* set under srd_nets_mutex */
	struct socket *sock6;
	bool no_ipv6;
};

/* What a device's verbs allow (limits.c); fixed at creation. */
struct srd_limits {
	enum srd_limits_profile profile;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_rdma_sge;
	u32 max_inline_bytes;
	u32 max_srd_msg_bytes;		/* SRD QPs, whatever the MTU */
	u32 max_qpn;			/* QP numbers are 2..max_qpn */
	u32 device_caps;		/* enum srd_device_caps */
	/* EFA's completion conventions (srd_profile_cqe()) */
	bool efa_completions;
};

struct srd_gid_entry {
	union ib_gid gid;
	bool valid;
};

struct srd_dev {
	struct ib_device ibdev;

	/* Held from newlink to srd_dealloc_driver(). */
	struct net_device *ndev;
#ifdef HAVE_NETDEV_HOLD
	netdevice_tracker ndev_tracker;	/* before 6.0: no trackers */
#endif

	/* On srd_devices, under srd_devices_lock. */
	struct list_head list;

	spinlock_t gid_lock;		/* (BH) gids[] */
	struct srd_gid_entry gids[SRD_GID_TBL_LEN];
	struct work_struct gid_work;
	bool gid_overflow_logged;

	struct srd_limits limits;

	/* PD numbers; the IDA has its own lock. */
	struct ida pd_ida;

	/* The namespace's sockets; held from newlink to dealloc_driver. */
	struct srd_net *snet;

	/*
	 * QPs by number.  The xarray's lock guards lookups that take a QP
	 * reference, so a destroyed QP is never found (see srd_qp).  A QP
	 * is inserted only once its creation can no longer fail.
	 *
	 * The lock is of the IRQ flavour (XA_FLAGS_LOCK_IRQ), as lookups may
	 * come from any context: they take it with xa_lock_irqsave(), and
	 * process context (create, destroy, the MTU notifier) with the _irq
	 * calls.  Never with the _bh ones: an insert that needs memory
	 * drops and retakes the lock the xarray's flavour's way (lib/xarray.c,
	 * __xas_nomem()), so xa_insert_bh() here would allocate with
	 * GFP_KERNEL while bottom halves stay off, and return with IRQs off.
	 */
	struct xarray qps;
	/*
	 * QP numbers (qp.c): qpn_lock guards next_qpn; qp_slots has a bit
	 * per qpn % SRD_MAX_QP in use, set and cleared atomically.
	 */
	spinlock_t qpn_lock;
	u32 next_qpn;
	DECLARE_BITMAP(qp_slots, SRD_MAX_QP);
	atomic_t next_cqn;		/* CQ numbers: names for logs only */

	/* MRs by lkey and by rkey, same rule as qps. */
	struct xarray mrs_by_lkey;
	struct xarray mrs_by_rkey;

	/*
	 * Address handles are per device and per destination (as EFA does
	 * it): every ib_ah to the same (sgid, dgid) shares one struct
	 * srd_ah_entry and its AH number.  ah_lock (BH) guards the indexes:
	 * entries by number (sends) and by destination GID (create_ah), and
	 * each srd_ah by (PD, destination GID): a receive reports in slid
	 * the number of an AH of the receiving QP's PD only (ah.c).
	 */
	spinlock_t ah_lock;
	struct xarray ah_by_num;
	DECLARE_HASHTABLE(ah_by_dgid, 8);
	DECLARE_HASHTABLE(ah_by_pd, 8);

	atomic64_t counters[SRD_NUM_COUNTERS];
	/*
	 * TX_PKTS, TX_BYTES, RX_PKTS and RX_BYTES, counted for every packet
	 * each way: per CPU, so that no packet pays a shared atomic; summed
	 * when read (srd_get_hw_stats), their counters[] slots unused.
	 */
	struct srd_pcpu_traffic __percpu *traffic;

	/* The SRD transport (transport.c): one engine, its peers. */
	struct srd_transport *transport;
	/*
	 * The bytes the engine holds through srd_os_alloc() (engine and
	 * peers: docs/protocol.md, "Memory bounds"), for debugfs' mem file.
	 */
	atomic64_t engine_bytes;
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

static inline void srd_count(struct srd_dev *sdev, enum srd_counter c, s64 n)
{
	atomic64_add(n, &sdev->counters[c]);
}

static inline void srd_count_one(struct srd_dev *sdev, enum srd_counter c)
{
	atomic64_inc(&sdev->counters[c]);
}

/*
 * A CPU's share of the device's packets and bytes each way.  Updated in
 * process and softirq context alike: the irqsave form keeps a 32-bit
 * kernel's sequence whole (on 64-bit it is a local add, no lock).
 */
struct srd_pcpu_traffic {
	u64_stats_t tx_pkts, tx_bytes, rx_pkts, rx_bytes;
	struct u64_stats_sync syncp;
};

/* One packet of @len bytes each way: @tx, or received. */
static inline void srd_count_traffic(struct srd_dev *sdev, bool tx, u32 len)
{
	struct srd_pcpu_traffic *t = get_cpu_ptr(sdev->traffic);
	unsigned long flags;

	flags = u64_stats_update_begin_irqsave(&t->syncp);
	u64_stats_inc(tx ? &t->tx_pkts : &t->rx_pkts);
	u64_stats_add(tx ? &t->tx_bytes : &t->rx_bytes, len);
	u64_stats_update_end_irqrestore(&t->syncp, flags);
	put_cpu_ptr(sdev->traffic);
}

/*
 * A ring shared with userspace (uapi/rdma/srd-abi.h).  Its memory belongs
 * to the mmap entry: rdma_user_mmap_entry_remove() by the owning object
 * drops the driver's reference, and srd_mmap_free() frees the ring once
 * userspace has unmapped it too, so a live mapping never sees freed pages.
 */
struct srd_ring {
	struct rdma_user_mmap_entry mmap_entry;
	void *buf;			/* vmap() of pages, size bytes */
	struct page **pages;		/* charged to the creator's memcg */
	u32 npages;
	size_t size;
	struct srd_ring_ctl *ctl;	/* == buf */
	u32 num_entries;		/* power of two */
	u32 stride;
};

static inline void *srd_ring_slot(struct srd_ring *ring, u32 index)
{
	return ring->buf + SRD_RING_SLOTS_OFFSET +
	       (size_t)(index & (ring->num_entries - 1)) * ring->stride;
}

/*
 * A memory region.  Found by key under the device's xarray lock, which
 * takes a reference.  Work requests and the messages they become hold a
 * reference for their whole life, which a remote peer can make long (RNR
 * forever, a sender that stops mid-message), so dereg never waits for
 * them: it removes both keys and marks the MR dead, and the last
 * reference unpins the pages (from srd_mr_wq when that is not dereg's
 * own).  A message copying while dereg runs may finish its copy; after
 * that nothing is written to a dead MR's pages (srd_mr_live()), as
 * hardware whose translation is gone writes nothing.
 */
struct srd_mr {
	struct ib_mr ibmr;
	struct srd_dev *sdev;
	refcount_t ref;
	bool dead;			/* deregistered; WRITE_ONCE */
	struct work_struct release_work;
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	unsigned int page_offset;	/* of iova in pages[0] */
	u64 iova;
	u64 length;
	int access;			/* enum ib_access_flags */
};

/* Not deregistered: its pages may still be written. */
static inline bool srd_mr_live(const struct srd_mr *mr)
{
	return !READ_ONCE(mr->dead);
}

static inline struct srd_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srd_mr, ibmr);
}

/*
 * A completion queue.  lock (irqsave: ib_core may call req_notify from
 * any context) guards prod, notify and overflowed, and serialises the
 * kernel's writes to the ring.
 */
struct srd_cq {
	struct ib_cq ibcq;
	struct srd_dev *sdev;
	spinlock_t lock;		/* irqsave: see above */
	struct srd_ring *ring;
	u32 prod;			/* the kernel's copy, authoritative */
	u32 cqn;
	enum ib_cq_notify_flags notify;	/* 0, NEXT_COMP or SOLICITED */
	bool overflowed;
};

static inline struct srd_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct srd_cq, ibcq);
}

/* An entry in the device's AH table: one per destination. */
struct srd_ah_entry {
	struct hlist_node node;		/* sdev->ah_by_dgid, under ah_lock */
	unsigned int users;		/* ib_ahs using it, under ah_lock */
	u16 ahn;
	union ib_gid sgid;
	union ib_gid dgid;
};

struct srd_ah {
	struct ib_ah ibah;
	struct srd_ah_entry *entry;
	struct hlist_node pd_node;	/* sdev->ah_by_pd, under ah_lock */
};

static inline struct srd_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct srd_ah, ibah);
}

/*
 * One work queue of a QP.  The kernel's consumer index (cons) is its own
 * copy; the ring's prod is the provider's and is read, never trusted.
 * wqe is a kernel copy of the slot being processed, stride bytes.
 */
struct srd_wq {
	struct srd_ring *ring;
	u32 cons;
	void *wqe;
	u32 max_sge;
};

struct srd_outbound;
struct srd_recv_msg;

/*
 * A queue pair.
 *
 * Lifetime: the QP is in sdev->qps from create to destroy.  Lookups (the
 * receive path) take a reference under the xarray lock; destroy erases it,
 * drops the initial reference and waits for the rest.
 *
 * Locking, outermost first:
 *  - sq_mutex serialises SQ processing: the doorbell, modify_qp, destroy.
 *  - rq_lock (BH) serialises RQ consumption: packet receive and flushes.
 *  - the CQs' locks.
 * state is written with rq_lock held (and sq_mutex too, except when the
 * receive path moves the QP to ERR); readers without rq_lock use
 * READ_ONCE() and tolerate a concurrent move to ERR.
 *
 * SRD QPs (is_srd) hand each send to the transport, which completes it
 * later from any context (requester.c).  A send in flight holds a QP reference
 * and counts in sq_inflight; the doorbell stops consuming the SQ while
 * sq_inflight is at the SQ's size (or the peer is busy), sets sq_blocked,
 * and sq_work resumes it when a send completes.  The SQ's published
 * consumer index counts a slot free only once its send completed
 * (srd_sq_publish()).  sq_dead (set under sq_mutex) stops sq_work once
 * destroy has begun, and from then on nothing of the QP reaches a CQ.
 */
struct srd_qp {
	struct ib_qp ibqp;
	struct srd_dev *sdev;
	refcount_t ref;
	struct completion released;

	struct mutex sq_mutex;		/* the SQ's processing: see above */
	spinlock_t rq_lock;		/* (BH) the RQ's consumption, state */
	enum ib_qp_state state;
	u32 qkey;
	bool sq_sig_all;
	u32 max_inline;
	struct srd_cq *scq;
	struct srd_cq *rcq;
	struct srd_wq sq;
	struct srd_wq rq;

	bool is_srd;
	/*
	 * Set at creation (SRD_QP_FLAG_UNSOLICITED_WRITE_RECV): a write with
	 * immediate to this QP consumes no receive (responder.c).
	 */
	bool unsolicited_write_recv;
	u8 rnr_retry;			/* 0..7, 7 = infinite */
	u32 sq_psn;			/* as modify_qp set it, for query_qp */
	spinlock_t sq_pub_lock;		/* irqsave; guards sq_pub */
	u32 sq_pub;			/* the SQ cons the provider sees */
	atomic_t sq_inflight;
	bool sq_blocked;
	bool sq_dead;
	/*
	 * Bumped by each transport flush (srd_transport_flush_qp()) before it
	 * takes any peer's lock: a message built before the flush and
	 * submitted after it is refused under that lock (srd_kpeer_send()).
	 */
	u32 flush_gen;
	struct delayed_work sq_work;
	/*
	 * The last SRD send and receive message objects freed, kept for the
	 * next (srd_outbound_alloc(), srd_recv_msg_alloc()); taken with
	 * xchg(), given back with cmpxchg(), freed by srd_destroy_qp().
	 */
	struct srd_outbound *spare_out;
	struct srd_recv_msg *spare_recv;
};

static inline struct srd_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct srd_qp, ibqp);
}

/* The largest SRD message: the limits profile's. */
static inline u32 srd_max_srd_msg_bytes(const struct srd_dev *sdev)
{
	return sdev->limits.max_srd_msg_bytes;
}

/* bus.c: the parent device every srd ib_device hangs from */
int srd_bus_init(void);
void srd_bus_exit(void);
struct device *srd_bus_dev_create(int node);
void srd_bus_dev_destroy(struct device *dev);

/* device.c */
extern const struct ib_device_ops srd_dev_ops;
int srd_dev_add(const char *name, struct net_device *ndev);
void srd_dev_remove_all(void);
struct srd_dev *srd_dev_get_by_netdev(struct net_device *ndev);
bool srd_netdev_has_dev(struct net_device *ndev);
void srd_dev_port_event(struct srd_dev *sdev, enum ib_event_type type);

struct srd_dev *srd_dev_get_by_gid(struct net *net, const union ib_gid *gid);
void srd_dev_remove_net(struct net *net);

/* gid.c */
/* A GID's hash-table key: the AH table's (seed 0), a peer's (random). */
static inline u32 srd_gid_hash(const union ib_gid *gid, u32 seed)
{
	BUILD_BUG_ON(sizeof(gid->raw) != 4 * sizeof(u32));
	return jhash2((const u32 *)gid->raw, 4, seed);
}

void srd_gid_init(struct srd_dev *sdev);
void srd_gid_sync(struct srd_dev *sdev);
void srd_gid_schedule_sync(struct srd_dev *sdev);
int srd_query_gid(struct ib_device *ibdev, u32 port, int index,
		  union ib_gid *gid);

/* ucontext.c */
int srd_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void srd_dealloc_ucontext(struct ib_ucontext *ibuc);
int srd_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srd_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* limits.c */
void srd_limits_init(struct srd_limits *limits);
/* The port's active MTU (0 if the netdev's is too small for any) ... */
enum ib_mtu srd_port_active_mtu(struct srd_dev *sdev);
/* ... and in bytes: the largest UD payload. */
u32 srd_port_mtu_bytes(struct srd_dev *sdev);
const char *srd_limits_name(const struct srd_limits *limits);
void srd_profile_cqe(const struct srd_limits *limits, struct srd_cqe *cqe);

/* ring.c */
struct srd_ring *srd_ring_create(struct ib_ucontext *uctx, u32 num_entries,
				 u32 stride);
void srd_ring_destroy(struct srd_ring *ring);
void srd_ring_info(struct srd_ring *ring, struct srd_ring_info *info);
int srd_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void srd_mmap_free(struct rdma_user_mmap_entry *entry);

/* main.c */
extern struct workqueue_struct *srd_wq;

/* mr.c */
int srd_mr_init(void);
void srd_mr_exit(void);
void srd_mr_flush(void);
struct ib_mr *srd_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			      u64 iova, int access, struct ib_udata *udata);
#ifdef HAVE_REG_USER_MR_DMAH
struct ib_mr *srd_reg_user_mr_op(struct ib_pd *ibpd, u64 start, u64 length,
				 u64 iova, int access, struct ib_dmah *dmah,
				 struct ib_udata *udata);
#else
#define srd_reg_user_mr_op	srd_reg_user_mr
#endif
int srd_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct srd_mr *srd_mr_get(struct srd_dev *sdev, u32 lkey);
void srd_mr_put(struct srd_mr *mr);
struct srd_mr *srd_mr_get_rkey(struct srd_dev *sdev, u32 rkey);
/* Why a remote's RDMA request may not use an rkey's MR, if it may not. */
enum srd_rkey_verdict {
	SRD_RKEY_OK = 0,
	SRD_RKEY_INVALID,	/* no live MR has the rkey */
	SRD_RKEY_PD,		/* the MR is not in the QP's PD */
	SRD_RKEY_ACCESS,	/* it lacks REMOTE_READ or REMOTE_WRITE */
	SRD_RKEY_RANGE,		/* outside the MR, or wrapping */
};

enum srd_rkey_verdict srd_mr_check_remote(struct srd_mr *mr,
					  struct ib_pd *pd, u64 iova,
					  u64 len, int access);
void srd_mr_count_refusal(struct srd_dev *sdev, enum srd_rkey_verdict why);
u32 srd_mr_check(struct srd_mr *mr, struct ib_pd *pd, u64 iova, u32 len,
		 int access);
void srd_mr_read(struct srd_mr *mr, u64 iova, void *dst, u32 len);
int srd_mr_write(struct srd_mr *mr, u64 iova, const void *src, u32 len);
int srd_mr_write_skb(struct srd_mr *mr, u64 iova, const struct sk_buff *skb,
		     int offset, u32 len);

/* cq.c */
int srd_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct ib_udata *udata);
int srd_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int srd_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
/* A receive's sender, as its completion reports it. */
struct srd_recv_from {
	const union ib_gid *sgid;
	u32 src_qpn;
	__be32 imm_data;	/* with SRD_CQE_WITH_IMM */
	u16 flags;		/* SRD_CQE_GRH, _WITH_IMM, _SOLICITED,
				 * _UNSOLICITED
				 */
};

void srd_complete(struct srd_cq *cq, struct srd_qp *qp, u64 wr_id,
		  u8 opcode, u8 status, u32 verr, u32 byte_len);
void srd_complete_flags(struct srd_cq *cq, struct srd_qp *qp, u64 wr_id,
			u8 opcode, u8 status, u32 verr, u16 flags);
void srd_complete_recv(struct srd_qp *qp, u64 wr_id, u8 opcode,
		       u32 byte_len, const struct srd_recv_from *from);

/* ah.c: the verbs */
int srd_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		  struct ib_udata *udata);
int srd_destroy_ah(struct ib_ah *ibah, u32 flags);

/* ahn.c: the device's table of AH numbers, and the data path's lookups */
struct srd_ah_entry *srd_ah_entry_get(struct srd_dev *sdev,
				      const union ib_gid *sgid,
				      const union ib_gid *dgid);
void srd_ah_entry_put(struct srd_dev *sdev, struct srd_ah_entry *e);
void srd_ah_pd_add(struct srd_dev *sdev, struct srd_ah *ah);
void srd_ah_pd_del(struct srd_dev *sdev, struct srd_ah *ah);
bool srd_ah_lookup(struct srd_dev *sdev, u32 ahn, union ib_gid *sgid,
		   union ib_gid *dgid);
u16 srd_ah_find_ahn(struct srd_dev *sdev, const struct ib_pd *pd,
		    const union ib_gid *dgid);

/* qp.c */
void srd_qpn_init(struct srd_dev *sdev);
int srd_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata);
int srd_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int srd_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int srd_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void srd_qps_mtu_changed(struct srd_dev *sdev);
int srd_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);

/* wq.c: a QP's work queues, as the data path uses them */
struct srd_qp *srd_qp_get(struct srd_dev *sdev, u32 qpn);
void srd_qp_put(struct srd_qp *qp);
void srd_qp_set_state(struct srd_qp *qp, enum ib_qp_state state);
void srd_sq_publish(struct srd_qp *qp);
int srd_rq_peek(struct srd_qp *qp);
void srd_rq_consume(struct srd_qp *qp);
int srd_rq_claim(struct srd_qp *qp);
void srd_qp_set_error(struct srd_qp *qp);
void srd_qp_flush_rq(struct srd_qp *qp);
void srd_qp_flush_sq(struct srd_qp *qp);

/* sq.c: the send queue's doorbell */
int srd_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);

/* sq.c, SRD QPs */
void srd_sq_work(struct work_struct *work);

/* tunables.c: the transport's module parameters, checked when written */
void srd_tunables_config(struct srd_config *cfg);
unsigned int srd_tunables_peer_idle_s(void);
unsigned int srd_tunables_peers_per_prefix(void);

/* transport.c: the engine's OS layer */
struct srd_kpeer;
int srd_transport_init(struct srd_dev *sdev);
void srd_transport_fini(struct srd_dev *sdev);
struct srd_kpeer *srd_kpeer_get(struct srd_dev *sdev,
				const union ib_gid *sgid,
				const union ib_gid *dgid);
void srd_kpeer_put(struct srd_kpeer *kp);
void srd_transport_recv(struct srd_dev *sdev, struct sk_buff *skb,
			int hdr_offset, const union ib_gid *sgid,
			const union ib_gid *dgid);
void srd_transport_flush_qp(struct srd_qp *qp);
int srd_kpeer_send(struct srd_kpeer *kp, const struct srd_send_req *req,
		   const struct srd_qp *qp, u32 flush_gen);
void srd_transport_counters(struct srd_dev *sdev, struct srd_counters *out);

/* debugfs.c: /sys/kernel/debug/rdma_srd */
int srd_debugfs_init(void);
void srd_debugfs_exit(void);
void srd_transport_debugfs_add(struct srd_dev *sdev);

/* requester.c: SRD sends and RDMA requests, to the engine */
struct srd_outbound;
struct srd_send_result {
	u8 status;		/* enum ib_wc_status */
	bool keep_qp;		/* a failure of this work request only */
	u32 vendor_err;		/* enum srd_vendor_err */
	u32 byte_len;
};

/* A send WQE fails locally, with @status and @verr (UD's and the SQ's). */
static inline void srd_send_fail(struct srd_send_result *res, u8 status,
				 u32 verr)
{
	res->status = status;
	res->vendor_err = verr;
}

/* wqe.c: the checks and fields every send WQE shares, UD or SRD */
bool srd_wqe_check(struct srd_qp *qp, const struct srd_send_wqe *wqe,
		   struct srd_wqe_rule *rule, u32 *len,
		   struct srd_send_result *res);
u32 srd_wqe_qkey(const struct srd_qp *qp, const struct srd_send_wqe *wqe);
void srd_count_sq_wr(struct srd_dev *sdev, u8 wqe_opcode, u8 status, u32 len);
int srd_requester_post(struct srd_qp *qp, const struct srd_send_wqe *wqe,
		       struct srd_wqe_rule rule, u32 len,
		       struct srd_send_result *res);
int srd_requester_gather(struct srd_outbound *msg, u32 offset, u8 *dst,
			 u32 len);
void srd_requester_done(struct srd_outbound *msg, enum srd_comp_status st);
void srd_requester_read_data(struct srd_outbound *msg, u32 offset,
			     const struct sk_buff *skb, int skb_off, u32 len);

/* responder.c: every incoming message, the engine's receive upcalls */
struct srd_inbound;
enum srd_rx_verdict srd_responder_begin(struct srd_dev *sdev,
					const union ib_gid *remote,
					const struct srd_rx_msg_info *info,
					struct srd_inbound **inp);
int srd_responder_data(struct srd_inbound *in, u32 offset,
		       const struct sk_buff *skb, int skb_off, u32 len);
void srd_responder_done(struct srd_inbound *in);
void srd_responder_abort(struct srd_inbound *in);
/* ... and a READ's response */
int srd_responder_gather(struct srd_inbound *in, u32 offset, u8 *dst,
			 u32 len);
void srd_responder_resp_done(struct srd_inbound *in, enum srd_comp_status st);

/* ud.c */
void srd_ud_send(struct srd_qp *qp, const struct srd_send_wqe *wqe,
		 struct srd_wqe_rule rule, u32 len, struct srd_send_result *res);
void srd_ud_recv(struct srd_dev *sdev, struct sk_buff *skb, int hdr_offset,
		 const union ib_gid *sgid, const union ib_gid *dgid,
		 u8 hop_limit);

/* socket.c */
int srd_net_get(struct net *net, struct srd_net **snetp);
void srd_net_put(struct srd_net *snet);
int srd_socket_init(void);
void srd_socket_exit(void);

/* route.c */
int srd_xmit(struct srd_dev *sdev, struct sk_buff *skb,
	     const union ib_gid *sgid, const union ib_gid *dgid, u16 src_port);
int srd_route_check(struct srd_dev *sdev, const union ib_gid *sgid,
		    const union ib_gid *dgid);

/* txbuf.c */
struct sk_buff *srd_xmit_alloc(struct srd_dev *sdev, u32 len, gfp_t gfp);
int srd_txbuf_init(void);
void srd_txbuf_exit(void);

/* counters.c */
void srd_counters_init(void);
struct rdma_hw_stats *srd_alloc_hw_device_stats(struct ib_device *ibdev);
struct rdma_hw_stats *srd_alloc_hw_port_stats(struct ib_device *ibdev,
					      u32 port);
int srd_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		     u32 port, int index);

/* netdev.c */
int srd_netdev_notifiers_register(void);
void srd_netdev_notifiers_unregister(void);
bool srd_netdev_can_carry_ip(const struct net_device *ndev);

/* link.c */
int srd_link_register(void);
void srd_link_unregister(void);

#endif /* _SRD_H */
