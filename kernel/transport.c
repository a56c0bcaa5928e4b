// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the SRD engine's OS layer in the kernel.  One engine per
 * device, one peer per (local GID, remote GID), a softirq hrtimer per
 * peer, and the struct srd_ops the engine calls: time, randomness,
 * allocation, timers, packet transmit, and the message upcalls of
 * requester.c (what we send) and responder.c (what arrives).
 *
 * Lifetime and locking:
 *  - struct srd_transport lives from srd_transport_init() (newlink) to
 *    srd_transport_fini() (dealloc_driver, after every QP is gone and no
 *    receive path can find the device).
 *  - Peers are created on first use (a send, or a packet from a remote
 *    that proved it receives at its address: srd_engine_on_stray()), at
 *    most SRD_MAX_PEERS.  When the table is full, a peer that no message
 *    holds (kp->users, taken by srd_kpeer_get() and dropped by
 *    srd_kpeer_put()) and whose remote never answered, or that has been
 *    idle for peer_idle_s seconds, is destroyed to make room
 *    (srd_kpeer_evict()); otherwise a peer lives as long as the device.
 *    peers_lock (BH) guards the hash, the list's writers and every call
 *    that creates or destroys peers or sums counters (the engine's
 *    serialisation of peer creation).  Readers (the receive path, flushes,
 *    debugfs) look up and walk under RCU, take kp->lock and check kp->dead;
 *    an evicted peer is freed after a grace period.
 *  - kp->lock (BH) serialises every engine call for the peer.  Upcalls run
 *    under it.  Order: sq_mutex, then kp->lock, then a QP's rq_lock, then
 *    a CQ's lock.
 *  - Packets are built under kp->lock (their payload is gathered from
 *    the message there) but sent after it is dropped: the engine's
 *    transmit queues them on kp->txq, and whoever drops the lock sends
 *    what is queued (srd_kpeer_unlock), still with BH off.  So a doorbell
 *    does not wait for a softirq's ACK to cross the IP stack and the NIC,
 *    nor the softirq for the doorbell's data; a vCPU descheduled while
 *    sending holds no lock.  kp->txq is empty whenever kp->lock is free.
 *  - kp->dead is set under kp->lock at teardown; the timer then does
 *    nothing and is cancelled for good.
 */

#include <linux/debugfs.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/skbuff.h>
#include <net/ipv6.h>

#include "srd.h"
#include "transport.h"
#include "trace.h"

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
static void srd_kpeer_unlock(struct srd_kpeer *kp)
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

static void srd_kpeer_unlock_bh(struct srd_kpeer *kp)
	__releases(&kp->lock)
{
	srd_kpeer_unlock(kp);
	local_bh_enable();
}

/* --- the OS services the engine asks for ------------------------------ */

static u64 srd_os_now_us(void *os)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

static u32 srd_os_random_u32(void *os)
{
	return get_random_u32();
}

/*
 * Memory the engine takes for a process's post (its messages, their
 * bitmaps, a new peer) is charged to that process's memory cgroup, as
 * the message's own srd_outbound is: so one user's posts count against
 * its container's limit.  Posts reach the engine in process context with
 * bottom halves off; what the receive path and the timers take (in
 * softirq) is for no one process, and is bounded per peer instead
 * (docs/protocol.md, "Memory bounds").
 */
static gfp_t srd_engine_gfp(void)
{
	return GFP_ATOMIC | __GFP_NOWARN | (in_task() ? __GFP_ACCOUNT : 0);
}

/* The engine allocates under a peer's lock, with BHs off. */
static void *srd_os_alloc(void *os, size_t bytes)
{
	struct srd_dev *sdev = os;
	void *ptr = kzalloc(bytes, srd_engine_gfp());

	if (ptr)
		atomic64_add(bytes, &sdev->engine_bytes);
	return ptr;
}

static void srd_os_free(void *os, void *ptr, size_t bytes)
{
	struct srd_dev *sdev = os;

	if (ptr)
		atomic64_sub(bytes, &sdev->engine_bytes);
	kfree(ptr);
}

/*
 * Under kp->lock, but for a dead peer.  Lazy: a timer already queued to
 * fire no later than @deadline_us stays as it is, and one no longer
 * needed is not cancelled.  Its callback then finds nothing due (the
 * engine treats an early srd_peer_on_timer() as a no-op) and the engine
 * asks again.  The deadline moves with nearly every packet (each ACK
 * moves the RTO, and an idle peer has none); this way the hrtimer, and
 * the clock event device under it, is reprogrammed about once per
 * timeout instead.
 *
 * A deadline that jumps later by more than SRD_TIMER_LATE_SLACK_US is
 * a new exchange (a ping-pong: the wait for our answer gave way to the
 * answer's RTO), and a timer left behind would fire once per round trip
 * for nothing: it is moved, but only off this CPU's own queue.  hrtimer
 * reprograms only its own CPU's clock event device, so a timer moved off
 * another CPU's queue leaves that device set for the old expiry, whose
 * interrupt then finds nothing.  Left there, the timer fires early once
 * instead, and the engine re-arms it on that CPU, whose later moves are
 * then local: in a ping-pong between two guests this halved the
 * hrtimer_start() calls (docs/performance.md).  The timer is pinned, so
 * that it is queued where it was started and armed_cpu says whose queue
 * holds it.
 */
#define SRD_TIMER_LATE_SLACK_US	100
static void srd_os_timer_set(void *os, void *peer_os, u64 deadline_us)
{
	struct srd_kpeer *kp = peer_os;
	unsigned int cpu;

	/* The engine's teardown cancels dead peers' timers without it. */
	lockdep_assert(kp->dead || lockdep_is_held(&kp->lock));

	kp->deadline_us = deadline_us;
	if (deadline_us == SRD_NO_DEADLINE || kp->dead)
		return;
	/* kp->lock keeps us on this CPU until hrtimer_start() queues it. */
	cpu = smp_processor_id();
	if (hrtimer_is_queued(&kp->timer) && kp->armed_us <= deadline_us &&
	    (deadline_us - kp->armed_us < SRD_TIMER_LATE_SLACK_US ||
	     kp->armed_cpu != cpu))
		return;
	kp->armed_us = deadline_us;
	kp->armed_cpu = cpu;
	hrtimer_start(&kp->timer, ns_to_ktime(deadline_us * NSEC_PER_USEC),
		      HRTIMER_MODE_ABS_PINNED_SOFT);
}

/* The UDP source port of a path: docs/protocol.md, "Transport and entropy". */
static int srd_os_transmit(void *os, void *peer_os,
			   const struct srd_tx_desc *d)
{
	struct srd_kpeer *kp = peer_os;
	struct srd_dev *sdev = kp->tp->sdev;
	struct sk_buff *skb;
	int err;

	/* Lost on the way, as far as the engine knows. */
	if (srd_fault_drop(&kp->tp->faults, &kp->dgid, false))
		return 0;
	skb = srd_xmit_alloc(sdev, d->hdr_len + d->payload_len,
			     GFP_ATOMIC | __GFP_NOWARN);
	if (!skb) {
		srd_count_one(sdev, SRD_CNT_TX_ERRORS);
		return -ENOMEM;
	}
	skb_put_data(skb, d->hdr, d->hdr_len);
	if (d->payload_len) {
		if (d->kind == SRD_MSG_READ_RESP)
			err = srd_responder_gather(d->resp_src, d->payload_off,
						   skb_put(skb, d->payload_len),
						   d->payload_len);
		else
			err = srd_requester_gather(d->out, d->payload_off,
						   skb_put(skb, d->payload_len),
						   d->payload_len);
		if (err) {
			kfree_skb(skb);
			if (err != SRD_TX_ABORT)
				srd_count_one(sdev, SRD_CNT_TX_ERRORS);
			return err;
		}
	}
	/* Sent once kp->lock is dropped: srd_kpeer_unlock(). */
	srd_xmit_cb(skb)->src_port = srd_kpeer_src_port(kp, d->path);
	__skb_queue_tail(&kp->txq, skb);
	return 0;
}

static enum srd_rx_verdict srd_os_rx_begin(void *os, void *peer_os,
					   const struct srd_rx_msg_info *info,
					   struct srd_inbound **in)
{
	struct srd_kpeer *kp = peer_os;
	enum srd_rx_verdict v;

	v = srd_fault_rx_begin(&kp->tp->faults, info);
	if (v != SRD_RX_ACCEPT)
		return v;
	return srd_responder_begin(kp->tp->sdev, &kp->dgid, info, in);
}

/*
 * A received packet as srd_transport_recv() hands it to the engine, and
 * the engine back to rx_data and read_data: the payload is copied from
 * the skb's fragments where they are, never made contiguous first.
 */
struct srd_rx_skb {
	const struct sk_buff *skb;
	int hdr_offset;			/* of the SRD header */
};

static int srd_os_rx_data(void *os, struct srd_inbound *in, u32 offset,
			  const struct srd_rx_payload *pl)
{
	const struct srd_rx_skb *rs = pl->pkt;

	return srd_responder_data(in, offset, rs->skb, rs->hdr_offset + pl->off,
				  pl->len);
}

static void srd_os_rx_done(void *os, struct srd_inbound *in)
{
	srd_responder_done(in);
}

static void srd_os_rx_abort(void *os, struct srd_inbound *in)
{
	srd_responder_abort(in);
}

static void srd_os_send_done(void *os, struct srd_outbound *out,
			     enum srd_comp_status st)
{
	srd_requester_done(out, st);
}

static void srd_os_read_data(void *os, struct srd_outbound *out, u32 offset,
			     const struct srd_rx_payload *pl)
{
	const struct srd_rx_skb *rs = pl->pkt;

	srd_requester_read_data(out, offset, rs->skb, rs->hdr_offset + pl->off,
				pl->len);
}

static void srd_os_resp_done(void *os, struct srd_inbound *in,
			     enum srd_comp_status st)
{
	srd_responder_resp_done(in, st);
}

/* Called only while an rdma_srd trace event is enabled (trace.h). */
static void srd_os_event(void *os, void *peer_os, const struct srd_event *ev)
{
	const u8 *dgid = ((struct srd_kpeer *)peer_os)->dgid.raw;

	switch (ev->type) {
	case SRD_EV_DATA_TX:
		trace_srd_data_tx(dgid, ev);
		break;
	case SRD_EV_ACK_RX:
		trace_srd_ack_rx(dgid, ev);
		break;
	case SRD_EV_NAK_RX:
		trace_srd_nak_rx(dgid, ev);
		break;
	case SRD_EV_NAK_TX:
		trace_srd_nak_tx(dgid, ev);
		break;
	case SRD_EV_RTO:
		trace_srd_rto(dgid, ev);
		break;
	case SRD_EV_PATH:
		trace_srd_path(dgid, ev);
		break;
	case SRD_EV_RESTART:
		trace_srd_peer_restart(dgid, ev);
		break;
	case SRD_EV_MSG_ERROR:
		trace_srd_msg_error(dgid, ev);
		break;
	default:
		break;
	}
}

static const struct srd_ops srd_kernel_ops = {
	.now_us = srd_os_now_us,
	.random_u32 = srd_os_random_u32,
	.alloc = srd_os_alloc,
	.free = srd_os_free,
	.timer_set = srd_os_timer_set,
	.transmit = srd_os_transmit,
	.rx_begin = srd_os_rx_begin,
	.rx_data = srd_os_rx_data,
	.rx_done = srd_os_rx_done,
	.rx_abort = srd_os_rx_abort,
	.send_done = srd_os_send_done,
	.read_data = srd_os_read_data,
	.resp_done = srd_os_resp_done,
	.trace_on = &srd_trace_on,
	.event = srd_os_event,
};

/* --- peers ------------------------------------------------------------- */

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
 * Make room in a full table: destroy a peer no message holds (kp->users)
 * and the engine has nothing for, preferring one whose remote never
 * answered (srd_peer_unanswered(): it delivered nothing, so it may go at
 * once), else the one idle longest if idle for peer_idle_s (never less
 * than srd_peer_evict_min_idle_us(), the retry budget).  Under peers_lock.
 * Nothing of an evicted peer can arrive any more (srd_peer_idle_us());
 * should its remote come back, it finds no peer and is answered as any
 * new remote is.
 *
 * A scan costs a lock round trip per peer, under peers_lock with BH off,
 * and a full table of busy peers stays so for a while: after a scan that
 * found nothing, the next is SRD_PEER_EVICT_RETRY later, whatever asks
 * meanwhile (new remotes, a flood of them, or local sends) being refused.
 */
#define SRD_PEER_EVICT_RETRY	(HZ / 10)

static bool srd_kpeer_evict(struct srd_transport *tp)
{
	u64 idle, best = 0, min = (u64)srd_tunables_peer_idle_s() * USEC_PER_SEC;
	struct srd_kpeer *kp, *victim = NULL;

	lockdep_assert_held(&tp->peers_lock);
	if (time_before(jiffies, tp->evict_after))
		return false;
	min = max_t(u64, min, srd_peer_evict_min_idle_us(tp->engine));
	list_for_each_entry(kp, &tp->peer_list, list) {
		if (atomic_read(&kp->users))
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
		tp->evict_after = jiffies + SRD_PEER_EVICT_RETRY;
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
	if (tp->npeers >= SRD_MAX_PEERS && !srd_kpeer_evict(tp))
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

/* Start a message to @kp's remote device.  Process context. */
/*
 * Give @req, of a message @qp built at flush generation @flush_gen, to
 * the engine; refused if @qp was flushed since (under kp->lock, which the
 * flush takes after bumping the generation, so nothing slips past it).
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
 * The engine's answer to a remote with no peer (srd_engine_on_stray()):
 * from our @sgid to its @dgid, on any path.  Softirq context.
 */
static void srd_transport_reply(struct srd_dev *sdev, const union ib_gid *sgid,
				const union ib_gid *dgid, const u8 *hdr, u32 len)
{
	struct sk_buff *skb;

	if (srd_fault_drop(&sdev->transport->faults, dgid, false))
		return;
	skb = srd_xmit_alloc(sdev, len, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb) {
		srd_count_one(sdev, SRD_CNT_TX_ERRORS);
		return;
	}
	skb_put_data(skb, hdr, len);
	if (srd_xmit(sdev, skb, sgid, dgid, srd_wire_src_port(get_random_u16())))
		srd_count_one(sdev, SRD_CNT_TX_ERRORS);
}

/*
 * A transport packet (SRD_WOP_FIRST..SRD_WOP_LAST) for @sdev, from the remote @sgid to
 * our @dgid, its SRD header at @hdr_offset.  Softirq context; the caller
 * frees the skb.  A remote with no peer gets one only once it has shown
 * that it receives at its address: the engine decides, keeping nothing.
 * The engine reads the header alone, which is pulled into the linear
 * part; a payload in page fragments (a virtio-net or GRO packet larger
 * than a page) stays there, and is copied once, to its MR.
 */
void srd_transport_recv(struct srd_dev *sdev, struct sk_buff *skb,
			int hdr_offset, const union ib_gid *sgid,
			const union ib_gid *dgid)
{
	struct srd_transport *tp = sdev->transport;
	enum srd_stray_verdict v = SRD_STRAY_DROP;
	u32 hash = srd_kpeer_hash(tp, sgid), rlen = 0;
	struct srd_rx_skb rs = { .skb = skb, .hdr_offset = hdr_offset };
	u8 reply[SRD_HDR_MAX_BYTES];
	struct srd_kpeer_addr addr;
	struct srd_kpeer *kp;
	size_t len, head_len;
	const u8 *buf;

	if (srd_fault_drop(&tp->faults, sgid, true))
		return;
	/* All the engine reads: srd_peer_on_packet_head(). */
	len = skb->len - hdr_offset;
	if (!pskb_may_pull(skb, hdr_offset + min_t(size_t, len, SRD_HDR_MAX_BYTES))) {
		srd_count_one(sdev, SRD_CNT_RX_DROP_BAD_HDR);
		return;
	}
	buf = skb->data + hdr_offset;
	head_len = skb_headlen(skb) - hdr_offset;
	rcu_read_lock();
	kp = srd_kpeer_find(tp, hash, dgid, sgid);
	if (kp)
		goto found;
	spin_lock_bh(&tp->peers_lock);
	kp = srd_kpeer_find(tp, hash, dgid, sgid);
	if (!kp) {
		srd_kpeer_addr(&addr, dgid, sgid);
		v = srd_engine_on_stray(tp->engine, addr.raw, sizeof(addr.raw),
					buf, len, reply, &rlen);
		if (v == SRD_STRAY_ACCEPT) {
			kp = srd_kpeer_create(tp, hash, dgid, sgid);
			if (!kp)
				srd_count_one(sdev, SRD_CNT_SRD_RX_DROP_NO_PEER);
		}
	}
	spin_unlock_bh(&tp->peers_lock);
	if (!kp) {
		rcu_read_unlock();
		if (v == SRD_STRAY_REPLY)
			srd_transport_reply(sdev, dgid, sgid, reply, rlen);
		return;
	}
found:
	spin_lock(&kp->lock);
	if (!kp->dead)
		srd_peer_on_packet_head(kp->peer, buf, head_len, len, &rs);
	srd_kpeer_unlock(kp);
	rcu_read_unlock();
}

/*
 * Local SRD QP @qp is going to ERR, RESET or away: its sends in flight
 * complete FLUSHED and its receives in progress are aborted, at every
 * peer, and a message of it built but not yet submitted is refused from
 * now on.  Process context, under sq_mutex or after sq_dead was set.
 */
void srd_transport_flush_qp(struct srd_qp *qp)
{
	struct srd_transport *tp = qp->sdev->transport;
	u32 qpn = qp->ibqp.qp_num;
	struct srd_kpeer *kp;

	WRITE_ONCE(qp->flush_gen, qp->flush_gen + 1);
	rcu_read_lock();
	list_for_each_entry_rcu(kp, &tp->peer_list, list) {
		spin_lock_bh(&kp->lock);
		if (!kp->dead)
			srd_peer_flush_qp(kp->peer, qpn);
		srd_kpeer_unlock_bh(kp);
	}
	rcu_read_unlock();
}

void srd_transport_counters(struct srd_dev *sdev, struct srd_counters *out)
{
	struct srd_transport *tp = sdev->transport;
	struct srd_kpeer *kp;

	/*
	 * No peer is created or destroyed meanwhile (so none is counted
	 * twice or not at all), and each peer's counters are read under
	 * the lock they change under.
	 */
	spin_lock_bh(&tp->peers_lock);
	srd_engine_own_counters(tp->engine, out);
	list_for_each_entry(kp, &tp->peer_list, list) {
		spin_lock(&kp->lock);
		if (!kp->dead)
			srd_peer_counters_add(kp->peer, out);
		spin_unlock(&kp->lock);
	}
	spin_unlock_bh(&tp->peers_lock);
}

/* --- a device's transport ---------------------------------------------- */

int srd_transport_init(struct srd_dev *sdev)
{
	struct srd_transport *tp;
	struct srd_config cfg;
	const char *rule;

	/*
	 * The tunables were checked when set (tunables.c); what can still be
	 * refused is what the netdev gives, a segment too small for its MTU.
	 */
	srd_tunables_config(&cfg);
	/* What the netdev's MTU leaves, fixed at creation (protocol.md). */
	cfg.seg_bytes = srd_wire_seg_bytes(READ_ONCE(sdev->ndev->mtu));
	cfg.max_msg_bytes = SRD_DEV_MAX_MSG_BYTES;
	rule = srd_config_check(&cfg);
	if (rule) {
		pr_warn("rdma_srd: the SRD configuration for netdev %s (MTU %u) is inconsistent (%s)\n",
			netdev_name(sdev->ndev), READ_ONCE(sdev->ndev->mtu), rule);
		return -EINVAL;
	}
	tp = kzalloc(sizeof(*tp), GFP_KERNEL);
	if (!tp)
		return -ENOMEM;
	tp->sdev = sdev;
	tp->n_paths = cfg.n_paths;
	tp->peer_bound_bytes = srd_peer_mem_bound_bytes(&cfg);
	spin_lock_init(&tp->peers_lock);
	srd_faults_init(&tp->faults);
	hash_init(tp->peers);
	tp->hash_seed = get_random_u32();
	INIT_LIST_HEAD(&tp->peer_list);

	tp->engine = srd_engine_create(&cfg, &srd_kernel_ops, sdev);
	if (!tp->engine) {
		kfree(tp);
		return -ENOMEM;
	}
	sdev->transport = tp;
	return 0;
}

/*
 * Every QP is gone and no receive path can reach the device: stop the
 * timers, then destroy the peers and the engine.
 */
void srd_transport_fini(struct srd_dev *sdev)
{
	struct srd_transport *tp = sdev->transport;
	struct srd_kpeer *kp, *tmp;

	if (!tp)
		return;
	debugfs_remove_recursive(tp->debugfs);
	list_for_each_entry(kp, &tp->peer_list, list) {
		spin_lock_bh(&kp->lock);
		kp->dead = true;
		spin_unlock_bh(&kp->lock);
		hrtimer_cancel(&kp->timer);
	}
	/* Nothing is in flight: no QP is left to have sent or to receive. */
	srd_engine_destroy(tp->engine);
	list_for_each_entry_safe(kp, tmp, &tp->peer_list, list) {
		WARN_ON_ONCE(!skb_queue_empty(&kp->txq));
		__skb_queue_purge(&kp->txq);
		kfree(kp);
	}
	kfree(tp);
	sdev->transport = NULL;
}
