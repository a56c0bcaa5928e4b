// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: a device's SRD peers, one per (local GID, remote GID): the
 * table that finds them, their creation and eviction, the lock that
 * serialises the engine's calls for one, the packets built under it and
 * sent after it, and the timer of each.  What the engine does for a peer
 * is the engine's; what it calls back is transport.c's (struct srd_ops).
 *
 * Lifetime and locking:
 *  - Peers are created on first use (a send, or a packet from a remote
 *    that proved it receives at its address: srd_engine_on_stray()), at
 *    most SRD_MAX_PEERS, and of those the remotes made, at most
 *    peers_per_prefix from one address prefix (srd_kpeer_prefix_full()).
 *    When the table (or a prefix's share) is full, a peer that no message
 *    holds (kp->users, taken by srd_kpeer_get() and dropped by
 *    srd_kpeer_put()) and whose remote never answered, or that has been
 *    idle for peer_idle_s seconds, is destroyed to make room
 *    (srd_kpeer_evict()); otherwise a peer lives as long as the device
 *    (srd_kpeers_stop(), srd_kpeers_free()).
 *  - peers_lock (BH) guards the hash, the list's writers and every call
 *    that creates or destroys peers or sums counters (the engine's
 *    serialisation of peer creation).  Readers (the receive path, flushes,
 *    debugfs) look up and walk under RCU, take kp->lock and check kp->dead;
 *    an evicted peer is freed after a grace period.
 *  - kp->lock (BH) serialises every engine call for the peer.  Upcalls run
 *    under it.  Order: sq_mutex, then kp->lock, then a QP's rq_lock, then
 *    a CQ's lock.
 *  - Packets are built under kp->lock (their payload is gathered from
 *    the message there) but sent after it is dropped: the engine's
 *    transmit queues them on kp->txq (srd_kpeer_queue_tx()), and whoever
 *    drops the lock sends what is queued (srd_kpeer_unlock()), still with
 *    BH off.  So a doorbell does not wait for a softirq's ACK to cross the
 *    IP stack and the NIC, nor the softirq for the doorbell's data; a vCPU
 *    descheduled while sending holds no lock.  kp->txq is empty whenever
 *    kp->lock is free.
 *  - kp->dead is set under kp->lock at teardown; the timer then does
 *    nothing and is cancelled for good.
 */

#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/skbuff.h>
#include <net/ipv6.h>

#include "srd.h"
#include "transport.h"

/* What a queued packet still needs: its UDP source port (the path). */
struct srd_xmit_cb {
	u16 src_port;
};

static struct srd_xmit_cb *srd_xmit_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct srd_xmit_cb) > sizeof(skb->cb));
	return (struct srd_xmit_cb *)skb->cb;
}

/*
 * Drop kp->lock, taken with spin_lock_bh() (or with spin_lock() in
 * softirq context), and send what the engine queued under it, in order.
 * BH stays off until the packets are on their way, as when they were
 * sent under the lock.
 */
void srd_kpeer_unlock(struct srd_kpeer *kp)
	__releases(&kp->lock)
{
	struct srd_dev *sdev = kp->tp->sdev;
	struct sk_buff_head q;
	struct sk_buff *skb;
	int err;

	__skb_queue_head_init(&q);
	skb_queue_splice_init(&kp->txq, &q);
	spin_unlock(&kp->lock);
	while ((skb = __skb_dequeue(&q))) {
		err = srd_xmit(sdev, skb, &kp->sgid, &kp->dgid,
			       srd_xmit_cb(skb)->src_port);
		if (err) {
			srd_count_one(sdev, SRD_CNT_TX_ERRORS);
			ibdev_dbg_ratelimited(&sdev->ibdev, "SRD send to %pI6 failed: %d\n",
					      kp->dgid.raw, err);
		}
	}
}

void srd_kpeer_unlock_bh(struct srd_kpeer *kp)
	__releases(&kp->lock)
{
	srd_kpeer_unlock(kp);
	local_bh_enable();
}

/* Queue @skb, built under kp->lock, to be sent on @path once it is dropped. */
void srd_kpeer_queue_tx(struct srd_kpeer *kp, struct sk_buff *skb, u32 path)
{
	lockdep_assert_held(&kp->lock);
	srd_xmit_cb(skb)->src_port = srd_kpeer_src_port(kp, path);
	__skb_queue_tail(&kp->txq, skb);
}

static enum hrtimer_restart srd_kpeer_timer(struct hrtimer *timer)
{
	struct srd_kpeer *kp = container_of(timer, struct srd_kpeer, timer);

	spin_lock_bh(&kp->lock);
	if (!kp->dead) {
		kp->deadline_us = SRD_NO_DEADLINE;
		kp->armed_us = SRD_NO_DEADLINE;
		srd_peer_on_timer(kp->peer);
	}
	srd_kpeer_unlock_bh(kp);
	return HRTIMER_NORESTART;
}

/* What the engine's tags name: our GID, then the remote's. */
struct srd_kpeer_addr {
	u8 raw[2 * sizeof(union ib_gid)];
};

static void srd_kpeer_addr(struct srd_kpeer_addr *a, const union ib_gid *sgid,
			   const union ib_gid *dgid)
{
	memcpy(a->raw, sgid->raw, sizeof(sgid->raw));
	memcpy(a->raw + sizeof(sgid->raw), dgid->raw, sizeof(dgid->raw));
}

/*
 * A peer's bucket, by its remote GID alone: our own GIDs are few, and
 * the lookup compares both.  Seeded at random, so that which addresses
 * share a bucket cannot be worked out ahead of time.
 */
static u32 srd_kpeer_hash(const struct srd_transport *tp,
			  const union ib_gid *remote)
{
	return srd_gid_hash(remote, tp->hash_seed);
}

static struct srd_kpeer *srd_kpeer_find(struct srd_transport *tp, u32 hash,
					const union ib_gid *sgid,
					const union ib_gid *dgid)
{
	struct srd_kpeer *kp;

	hash_for_each_possible_rcu(tp->peers, kp, hnode, hash)
		if (!memcmp(&kp->dgid, dgid, sizeof(*dgid)) &&
		    !memcmp(&kp->sgid, sgid, sizeof(*sgid)))
			return kp;
	return NULL;
}

/*
 * A remote's address prefix, what one party is taken to hold: an IPv6
 * /64 (one subnet, the least a site is given), or for an IPv4 address
 * (a v4-mapped GID) its /24.
 */
static bool srd_gid_same_prefix(const union ib_gid *a, const union ib_gid *b)
{
	bool v4 = ipv6_addr_v4mapped((const struct in6_addr *)a->raw);

	if (v4 != ipv6_addr_v4mapped((const struct in6_addr *)b->raw))
		return false;
	return !memcmp(a->raw, b->raw, v4 ? 15 : 8);
}

/*
 * Make room in a full table, or among the peers the remotes of
 * @in_prefix's prefix made (NULL: the whole table): destroy a peer no
 * message holds (kp->users) and the engine has nothing for, preferring
 * one whose remote never answered (srd_peer_unanswered(): it delivered
 * nothing, so it may go at once), else the one idle longest if idle for
 * peer_idle_s (never less than srd_peer_evict_min_idle_us(), the retry
 * budget).  Under peers_lock.  Nothing of an evicted peer can arrive any
 * more (srd_peer_idle_us()); should its remote come back, it finds no
 * peer and is answered as any new remote is.
 *
 * A scan costs a lock round trip per peer, under peers_lock with BH off,
 * and a full table of busy peers stays so for a while: after a scan that
 * found nothing, the next is SRD_PEER_EVICT_RETRY later, whatever asks
 * meanwhile (new remotes, a flood of them, or local sends) being refused.
 * Scans of a prefix have their own pause, so that a prefix knocking at
 * its quota cannot hold off the table's.
 */
#define SRD_PEER_EVICT_RETRY	(HZ / 10)

static bool srd_kpeer_evict(struct srd_transport *tp,
			    const union ib_gid *in_prefix)
{
	u64 idle, best = 0, min = (u64)srd_tunables_peer_idle_s() * USEC_PER_SEC;
	unsigned long *after = in_prefix ? &tp->prefix_evict_after :
					   &tp->evict_after;
	struct srd_kpeer *kp, *victim = NULL;

	lockdep_assert_held(&tp->peers_lock);
	if (time_before(jiffies, *after))
		return false;
	min = max_t(u64, min, srd_peer_evict_min_idle_us(tp->engine));
	list_for_each_entry(kp, &tp->peer_list, list) {
		if (atomic_read(&kp->users))
			continue;
		if (in_prefix && (!kp->remote_made ||
				  !srd_gid_same_prefix(&kp->dgid, in_prefix)))
			continue;
		spin_lock(&kp->lock);
		idle = kp->dead ? 0 : srd_peer_idle_us(kp->peer);
		if (idle && srd_peer_unanswered(kp->peer))
			idle = U64_MAX;
		spin_unlock(&kp->lock);
		if (idle >= min && idle > best) {
			best = idle;
			victim = kp;
			if (idle == U64_MAX)
				break;
		}
	}
	if (!victim) {
		srd_count_one(tp->sdev, SRD_CNT_SRD_PEER_EVICT_MISSES);
		*after = jiffies + SRD_PEER_EVICT_RETRY;
		return false;
	}
	spin_lock(&victim->lock);
	victim->dead = true;
	spin_unlock(&victim->lock);
	/*
	 * Not RT: waiting for a running callback only spins; it takes no
	 * lock we hold, and finds the peer dead.
	 */
	hrtimer_cancel(&victim->timer);
	hash_del_rcu(&victim->hnode);
	list_del_rcu(&victim->list);
	tp->npeers--;
	srd_peer_destroy(victim->peer);
	WARN_ON_ONCE(!skb_queue_empty(&victim->txq));
	kfree_rcu(victim, rcu);
	srd_count_one(tp->sdev, SRD_CNT_SRD_PEERS_EVICTED);
	return true;
}

/* A new peer, in the table.  Under peers_lock.  NULL: full, or no memory. */
static struct srd_kpeer *srd_kpeer_create(struct srd_transport *tp, u32 hash,
					  const union ib_gid *sgid,
					  const union ib_gid *dgid)
{
	struct srd_kpeer_addr addr;
	struct srd_kpeer *kp;

	lockdep_assert_held(&tp->peers_lock);
	if (tp->npeers >= SRD_MAX_PEERS && !srd_kpeer_evict(tp, NULL))
		return NULL;
	kp = kzalloc(sizeof(*kp), srd_engine_gfp());
	if (!kp)
		return NULL;
	kp->tp = tp;
	kp->sgid = *sgid;
	kp->dgid = *dgid;
	kp->port_salt = get_random_u16();
	kp->deadline_us = SRD_NO_DEADLINE;
	kp->armed_us = SRD_NO_DEADLINE;
	spin_lock_init(&kp->lock);
	__skb_queue_head_init(&kp->txq);
#ifdef HAVE_HRTIMER_SETUP
	hrtimer_setup(&kp->timer, srd_kpeer_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_SOFT);
#else
	hrtimer_init(&kp->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	kp->timer.function = srd_kpeer_timer;
#endif
	srd_kpeer_addr(&addr, sgid, dgid);
	kp->peer = srd_peer_create(tp->engine, kp, addr.raw, sizeof(addr.raw));
	if (!kp->peer) {
		kfree(kp);
		return NULL;
	}
	hash_add_rcu(tp->peers, &kp->hnode, hash);
	list_add_tail_rcu(&kp->list, &tp->peer_list);
	tp->npeers++;
	srd_count_one(tp->sdev, SRD_CNT_SRD_PEERS);
	return kp;
}

/*
 * The peer for traffic between our @sgid and the remote @dgid, created if
 * need be (a local send needs it), held for the caller until
 * srd_kpeer_put().  Any context.  NULL when the peer table is full of
 * busy peers or memory is short.
 */
struct srd_kpeer *srd_kpeer_get(struct srd_dev *sdev, const union ib_gid *sgid,
				const union ib_gid *dgid)
{
	struct srd_transport *tp = sdev->transport;
	u32 hash = srd_kpeer_hash(tp, dgid);
	struct srd_kpeer *kp;

	spin_lock_bh(&tp->peers_lock);
	kp = srd_kpeer_find(tp, hash, sgid, dgid);
	if (!kp)
		kp = srd_kpeer_create(tp, hash, sgid, dgid);
	if (kp)
		atomic_inc(&kp->users);
	spin_unlock_bh(&tp->peers_lock);
	return kp;
}

/* Any context.  The peer may be evicted once idle (srd_kpeer_evict()). */
void srd_kpeer_put(struct srd_kpeer *kp)
{
	atomic_dec(&kp->users);
}

/*
 * Start a message to @kp's remote device: give @req, of a message @qp
 * built at flush generation @flush_gen, to the engine; refused if @qp was
 * flushed since (under kp->lock, which the flush takes after bumping the
 * generation, so nothing slips past it).  Process context.
 */
int srd_kpeer_send(struct srd_kpeer *kp, const struct srd_send_req *req,
		   const struct srd_qp *qp, u32 flush_gen)
{
	int ret;

	spin_lock_bh(&kp->lock);
	if (kp->dead || READ_ONCE(qp->flush_gen) != flush_gen)
		ret = SRD_SEND_INVAL;
	else
		ret = srd_send_msg(kp->peer, req);
	srd_kpeer_unlock_bh(kp);
	return ret;
}

/*
 * Whether the remotes of @rgid's prefix have made their share of the
 * table, peers_per_prefix peers (SRD_MAX_PEERS / 2 by default), with
 * none of theirs to make room: then a remote of that prefix gets no new
 * peer, so that one party with a subnet of addresses, each proving it
 * receives (an IPv6 /64 has 2^64), cannot hold the whole table by keeping
 * its peers busy.  Peers made by our own sends are the local users'
 * choice and count for no prefix.  Above a quota lowered meanwhile, one
 * of the prefix's idle peers still goes each time one knocks.  A count
 * is a walk of the table without its peers' locks (an address and
 * remote_made never change), only for a remote that has just proved its
 * address.  Under peers_lock.
 */
static bool srd_kpeer_prefix_full(struct srd_transport *tp,
				  const union ib_gid *rgid)
{
	unsigned int n = 0, quota = srd_tunables_peers_per_prefix();
	struct srd_kpeer *kp;

	lockdep_assert_held(&tp->peers_lock);
	list_for_each_entry(kp, &tp->peer_list, list)
		if (kp->remote_made && srd_gid_same_prefix(&kp->dgid, rgid))
			n++;
	if (n < quota)
		return false;
	return !srd_kpeer_evict(tp, rgid) || n - 1 >= quota;
}

/*
 * The peer of a packet from the remote @rgid to our @lgid, under the
 * caller's rcu_read_lock(); NULL if it has none.  A remote with no peer
 * gets one only once it has shown that it receives at its address: the
 * engine decides from the packet (@buf, @len), keeping nothing, and may
 * leave an answer in @reply (*@rlen bytes, else 0) for the caller to send
 * to @rgid.  Softirq context.
 */
struct srd_kpeer *srd_kpeer_for_packet(struct srd_transport *tp,
				       const union ib_gid *lgid,
				       const union ib_gid *rgid,
				       const u8 *buf, size_t len,
				       u8 *reply, u32 *rlen)
{
	u32 hash = srd_kpeer_hash(tp, rgid);
	enum srd_stray_verdict v;
	struct srd_kpeer_addr addr;
	struct srd_kpeer *kp;

	*rlen = 0;
	kp = srd_kpeer_find(tp, hash, lgid, rgid);
	if (kp)
		return kp;
	spin_lock_bh(&tp->peers_lock);
	kp = srd_kpeer_find(tp, hash, lgid, rgid);
	if (!kp) {
		srd_kpeer_addr(&addr, lgid, rgid);
		v = srd_engine_on_stray(tp->engine, addr.raw, sizeof(addr.raw),
					buf, len, reply, rlen);
		if (v == SRD_STRAY_ACCEPT) {
			if (!srd_kpeer_prefix_full(tp, rgid))
				kp = srd_kpeer_create(tp, hash, lgid, rgid);
			if (kp)
				kp->remote_made = true;
			else
				srd_count_one(tp->sdev, SRD_CNT_SRD_RX_DROP_NO_PEER);
		}
		if (v != SRD_STRAY_REPLY)
			*rlen = 0;
	}
	spin_unlock_bh(&tp->peers_lock);
	return kp;
}

void srd_kpeers_init(struct srd_transport *tp)
{
	spin_lock_init(&tp->peers_lock);
	hash_init(tp->peers);
	tp->hash_seed = get_random_u32();
	INIT_LIST_HEAD(&tp->peer_list);
	tp->evict_after = jiffies;
	tp->prefix_evict_after = jiffies;
}

/* No QP is left to send or receive: no peer's timer runs again. */
void srd_kpeers_stop(struct srd_transport *tp)
{
	struct srd_kpeer *kp;

	list_for_each_entry(kp, &tp->peer_list, list) {
		spin_lock_bh(&kp->lock);
		kp->dead = true;
		spin_unlock_bh(&kp->lock);
		hrtimer_cancel(&kp->timer);
	}
}

/* After srd_kpeers_stop() and the engine's destruction, which took their peers. */
void srd_kpeers_free(struct srd_transport *tp)
{
	struct srd_kpeer *kp, *tmp;

	list_for_each_entry_safe(kp, tmp, &tp->peer_list, list) {
		WARN_ON_ONCE(!skb_queue_empty(&kp->txq));
		__skb_queue_purge(&kp->txq);
		kfree(kp);
	}
	INIT_LIST_HEAD(&tp->peer_list);
	tp->npeers = 0;
}
