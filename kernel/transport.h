/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the transport's structures (transport.c), for the files that
 * look into them: debugfs.c.  Their lifetime and locking rules are
 * transport.c's, at its top.
 */
#ifndef SRD_TRANSPORT_H
#define SRD_TRANSPORT_H

#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>

#include "srd.h"
#include "fault.h"

struct srd_kpeer {
	struct srd_transport *tp;
	struct hlist_node hnode;	/* tp->peers: peers_lock, RCU */
	struct list_head list;		/* tp->peer_list: peers_lock, RCU */
	struct rcu_head rcu;
	atomic_t users;			/* messages holding it: srd_kpeer_get() */
	union ib_gid sgid;		/* ours */
	union ib_gid dgid;		/* the remote device's */
	u16 port_salt;

	spinlock_t lock;		/* (BH) every engine call for it, dead */
	bool dead;
	struct sk_buff_head txq;	/* built under lock, to send after it */
	struct srd_peer *peer;		/* the engine's */
	struct hrtimer timer;
	u64 deadline_us;		/* the engine's next deadline */
	u64 armed_us;			/* when the queued timer fires */
	unsigned int armed_cpu;		/* whose queue it is on: pinned */
};

struct srd_transport {
	struct srd_dev *sdev;
	struct srd_engine *engine;
	u32 n_paths;
	size_t peer_bound_bytes;	/* srd_peer_mem_bound_bytes() */
	spinlock_t peers_lock;		/* (BH) peers, peer_list: see above */
	DECLARE_HASHTABLE(peers, 8);
	u32 hash_seed;			/* of peers' buckets: random */
	struct list_head peer_list;
	unsigned int npeers;
	unsigned long evict_after;	/* jiffies: srd_kpeer_evict() */
	struct dentry *debugfs;
	struct srd_faults faults;	/* debugfs faults: fault.c */
};

static inline u16 srd_kpeer_src_port(const struct srd_kpeer *kp, u32 path)
{
	return srd_wire_src_port(kp->port_salt + path);
}

#endif /* SRD_TRANSPORT_H */
