/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the transport's structures, for the files that look into
 * them: transport.c (the engine's OS layer), peer.c (the peers) and
 * debugfs.c.  Their lifetime and locking rules are at the top of each
 * of the first two.
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
	bool remote_made;		/* by its remote's handshake: a prefix's */

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
	unsigned long prefix_evict_after; /* the same, within a prefix */
	struct dentry *debugfs;
	struct srd_faults faults;	/* debugfs faults: fault.c */
};

/*
 * Memory the engine takes for a process's post (its messages, their
 * bitmaps, a new peer) is charged to that process's memory cgroup, as
 * the message's own srd_outbound is: so one user's posts count against
 * its container's limit.  Posts reach the engine in process context with
 * bottom halves off; what the receive path and the timers take (in
 * softirq) is for no one process, and is bounded per peer instead
 * (docs/protocol.md, "Memory bounds").
 */
static inline gfp_t srd_engine_gfp(void)
{
	return GFP_ATOMIC | __GFP_NOWARN | (in_task() ? __GFP_ACCOUNT : 0);
}

/* peer.c */
void srd_kpeers_init(struct srd_transport *tp);
void srd_kpeers_stop(struct srd_transport *tp);
void srd_kpeers_free(struct srd_transport *tp);
struct srd_kpeer *srd_kpeer_for_packet(struct srd_transport *tp,
				       const union ib_gid *lgid,
				       const union ib_gid *rgid,
				       const u8 *buf, size_t len,
				       u8 *reply, u32 *rlen);
void srd_kpeer_queue_tx(struct srd_kpeer *kp, struct sk_buff *skb, u32 path);
void srd_kpeer_unlock(struct srd_kpeer *kp) __releases(&kp->lock);
void srd_kpeer_unlock_bh(struct srd_kpeer *kp) __releases(&kp->lock);

static inline u16 srd_kpeer_src_port(const struct srd_kpeer *kp, u32 path)
{
	return srd_wire_src_port(kp->port_salt + path);
}

#endif /* SRD_TRANSPORT_H */
