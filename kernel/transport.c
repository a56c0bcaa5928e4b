// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the SRD engine's OS layer in the kernel.  One engine per
 * device, and the struct srd_ops the engine calls: time, randomness,
 * allocation, timers, packet transmit, and the message upcalls of
 * requester.c (what we send) and responder.c (what arrives); the SRD
 * packets the sockets receive, handed to their peer's engine; a QP's
 * flush at every peer; the engine's counters.  The peers themselves,
 * their table, locks and timers, are peer.c's.
 *
 * Lifetime: struct srd_transport lives from srd_transport_init()
 * (newlink) to srd_transport_fini() (dealloc_driver, after every QP is
 * gone and no receive path can find the device).  Every srd_ops call is
 * made under the peer's kp->lock (peer.c has the order of locks), with BH
 * off.
 */

#include <linux/debugfs.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/skbuff.h>
#include <net/ipv6.h>

#include "srd.h"
#include "transport.h"
#include "trace.h"

/* --- the OS services the engine asks for ------------------------------ */

static u64 srd_os_now_us(void *os)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

static u32 srd_os_random_u32(void *os)
{
	return get_random_u32();
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
	srd_kpeer_queue_tx(kp, skb, d->path);
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
 * that it receives at its address (srd_kpeer_for_packet()).
 * The engine reads the header alone, which is pulled into the linear
 * part; a payload in page fragments (a virtio-net or GRO packet larger
 * than a page) stays there, and is copied once, to its MR.
 */
void srd_transport_recv(struct srd_dev *sdev, struct sk_buff *skb,
			int hdr_offset, const union ib_gid *sgid,
			const union ib_gid *dgid)
{
	struct srd_transport *tp = sdev->transport;
	struct srd_rx_skb rs = { .skb = skb, .hdr_offset = hdr_offset };
	u8 reply[SRD_HDR_MAX_BYTES];
	struct srd_kpeer *kp;
	size_t len, head_len;
	const u8 *buf;
	u32 rlen;

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
	kp = srd_kpeer_for_packet(tp, dgid, sgid, buf, len, reply, &rlen);
	if (!kp) {
		rcu_read_unlock();
		if (rlen)
			srd_transport_reply(sdev, dgid, sgid, reply, rlen);
		return;
	}
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
	srd_kpeers_init(tp);
	srd_faults_init(&tp->faults);

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

	if (!tp)
		return;
	debugfs_remove_recursive(tp->debugfs);
	srd_kpeers_stop(tp);
	/* Nothing is in flight: no QP is left to have sent or to receive. */
	srd_engine_destroy(tp->engine);
	srd_kpeers_free(tp);
	kfree(tp);
	sdev->transport = NULL;
}
