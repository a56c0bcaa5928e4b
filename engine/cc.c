// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: per-peer congestion control, delay-based in the spirit
 * of Swift: the delay signal is the RTT sample less the receiver's ACK
 * delay; the target is the peer's minimum RTT plus a queue of
 * cc_target_queue_us, or of cc_target_rtt_mult minimum RTTs where that is
 * more: a path whose base RTT is long (many hops, or hosts that run
 * late, such as software NICs and emulated CPUs) has jitter in
 * proportion, which a fixed queue mistakes for congestion, as Swift
 * scales its target with the hop count.  The target also grows as the
 * window shrinks (flow scaling, fs_us()).
 * cc_target_us, when set, replaces all that with one fixed target, the
 * same for every peer (as Swift's base target): flows that share a
 * bottleneck then aim at the same delay whenever each started, where a
 * target built on each flow's own minimum RTT favours the flow that
 * started into a standing queue and took that queue for the base.
 * A peer's minimum RTT is the least sample it has seen, and a peer that
 * starts while others hold a queue at a shared bottleneck takes that
 * queue for its base: its target lies above theirs, and it keeps the
 * queue they back off from (the latecomer problem of LEDBAT and Vegas).
 * So a receiver asks all its senders to drain at once: every
 * cc_drain_interval_us, for the first 1/16 of it, its ACKs carry the flag
 * DRAIN, and a sender that sees it holds its window at cwnd_min_256ths
 * until a packet sent from then on comes back.  The queue into the
 * receiver empties, that packet's RTT is about the base, and a minimum
 * taken above it comes down to it (BBR's ProbeRTT, with the receiver of
 * an incast as the clock that keeps the senders' drains together).
 * The delay compared with the target is the *standing* delay: the least
 * sample of the last window of srtt / 2 (as Copa's standing RTT), so a
 * queue counts only when every packet of that window met it, and a
 * descheduled host or a burst of jitter does not.  Below target the
 * window grows by cc_ai_pkts per RTT; above it, at most once per RTT, it
 * shrinks by beta * (delay - target) / delay, never by more than
 * cc_max_mdf_pct.  A loss found by SACK counts as one above-target event
 * at the largest decrease, and so does the first RTO of a run, but only
 * while a queue stands (above the target, or of a base RTT or more): a
 * loss without a queue is a link's, not congestion (loss_from_queue()).
 * Further RTOs in a row drop the window to its floor.  DATA is paced at cwnd /
 * srtt * pacing_gain.
 *
 * The window counts bytes on the wire, in full packets' worth: a packet
 * takes its weight of it (srd_tx_pkt_weight()), so a 64-byte send is
 * not held to a full packet's share, and is paced by its weight too.
 *
 * All arithmetic is integer: the window is in 1/256 packets.
 */
#include "cc.h"
#include "peer.h"

static uint32_t clamp_cwnd(const struct srd_config *cfg, uint64_t w)
{
	uint64_t lo = cfg->cwnd_min_256ths;
	uint64_t hi = (uint64_t)cfg->cwnd_max_pkts * SRD_CWND_ONE;

	return (uint32_t)(w < lo ? lo : w > hi ? hi : w);
}

void srd_cc_init(struct srd_cc *cc, const struct srd_config *cfg)
{
	srd_memset(cc, 0, sizeof(*cc));
	cc->cwnd = clamp_cwnd(cfg, (uint64_t)cfg->cwnd_init_pkts * SRD_CWND_ONE);
}

static bool can_decrease(const struct srd_cc *cc, const struct srd_rtt *rtt,
			 uint64_t now_us)
{
	return now_us - cc->last_decrease_us >= rtt->srtt_us ||
	       cc->last_decrease_us == 0;
}

/* The integer square root of @v (the largest r with r * r <= v). */
static uint32_t isqrt(uint32_t v)
{
	uint32_t r = 0, bit = 1u << 30;

	while (bit > v)
		bit >>= 2;
	while (bit) {
		if (v >= r + bit) {
			v -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return (uint32_t)r;
}

/*
 * Flow scaling (Swift's): the target grows as the window shrinks, by
 * cc_fs_range_us * (1 / sqrt(w) - 1 / 8) / (1 - 1 / 8) for a window of w
 * packets, from the whole range at one packet to nothing from 64
 * packets on: of flows that share a bottleneck, the
 * smaller ones tolerate more delay, so they grow while the larger ones
 * shrink, and flows whose targets differ a little (a minimum RTT
 * measured a packet high) share instead of the higher taking all.
 * With w = cwnd / 256 and x = sqrt(cwnd) = 16 sqrt(w):
 * range * (128 - x) / (7 x).
 */
static uint64_t fs_us(const struct srd_cc *cc, const struct srd_config *cfg)
{
	uint64_t x;

	/* No root to take for a large window (most ACKs of a bulk flow). */
	if (cc->cwnd >= 128 * 128 || !cfg->cc_fs_range_us)
		return 0;
	x = isqrt(cc->cwnd);
	if (x <= 16)
		return cfg->cc_fs_range_us;
	return (uint64_t)cfg->cc_fs_range_us * (128 - x) / (7 * x);
}

/* The delay target, before flow scaling: see the top of this file. */
static uint64_t target_us(const struct srd_config *cfg,
			  const struct srd_rtt *rtt)
{
	if (cfg->cc_target_us)
		return cfg->cc_target_us;
	return rtt->min_us + srd_max_u64(cfg->cc_target_queue_us,
					 (uint64_t)rtt->min_us * cfg->cc_target_rtt_mult);
}

void srd_cc_on_ack(struct srd_cc *cc, const struct srd_config *cfg,
		   const struct srd_rtt *rtt, uint32_t acked_w,
		   uint32_t delay_us, uint64_t now_us)
{
	uint64_t target, cut_permille, inc;

	if (!acked_w)
		return;
	target = target_us(cfg, rtt);
	/* The standing delay: the least sample of a window of srtt / 2. */
	if (!cc->win_samples || delay_us < cc->win_min_us)
		cc->win_min_us = delay_us;
	cc->win_samples++;
	if (now_us >= cc->win_end_us) {
		cc->standing_us = cc->win_min_us;
		cc->standing_hist_us[cc->standing_hist_next++ %
				     SRD_CC_QUEUE_WINDOWS] = cc->win_min_us;
		cc->win_end_us = now_us + (rtt->srtt_us / 2 ? rtt->srtt_us / 2 : 1);
		cc->win_samples = 0;
	}
	delay_us = cc->standing_us;
	/*
	 * The fair-share allowance only ever raises the target: a root to
	 * take (fs_us()) only when the delay is above the rest of it.
	 */
	if (!cfg->cc_target_us && delay_us > target)
		target += fs_us(cc, cfg);
	/*
	 * New data ACKed and no needless retransmission reported: a cut
	 * before this stands.
	 */
	cc->cwnd_undo = 0;
	if (!rtt->min_us || delay_us <= target) {
		/*
		 * + ai per window's worth of ACKs: ai * n / cwnd packets for n
		 * packets' weight ACKed; below one packet, where an ACK comes
		 * once in 1 / cwnd RTTs, ai * n * cwnd (the two meet at one
		 * packet): a window below a packet doubles at each ACK of a
		 * full one, not + 1 / cwnd packets at once.
		 */
		inc = (uint64_t)cfg->cc_ai_pkts * acked_w;
		inc = cc->cwnd >= SRD_CWND_ONE ?
		      inc * SRD_CWND_ONE / cc->cwnd : inc * cc->cwnd / SRD_CWND_ONE;
		cc->cwnd = clamp_cwnd(cfg, cc->cwnd + inc);
		return;
	}
	if (!can_decrease(cc, rtt, now_us))
		return;
	cut_permille = (uint64_t)cfg->cc_beta_pct * 10 * (delay_us - target) /
		       delay_us;
	if (cut_permille > (uint64_t)cfg->cc_max_mdf_pct * 10)
		cut_permille = (uint64_t)cfg->cc_max_mdf_pct * 10;
	cc->cwnd = clamp_cwnd(cfg, (uint64_t)cc->cwnd * (1000 - cut_permille) /
			      1000);
	cc->last_decrease_us = now_us;
}

/*
 * Was a loss congestion's?  Only where a queue stands: the standing delay
 * above the target, or a standing queue of at least one base RTT (the
 * least of the last SRD_CC_QUEUE_WINDOWS windows and the current one at
 * least twice min_rtt).  A drop-tail queue that overflowed had every
 * packet of a window wait in it; and a window that holds a queue of a
 * base RTT or more still fills the path once halved, so the cut costs no
 * goodput.  The second test catches a shallow buffer that overflows below
 * the target (incast_8_to_1: 200 us of queue against a 2 ms target); the
 * least of several windows keeps paths of unequal delay from passing for
 * a queue: where most packets take a slow path, a window of srtt / 2 can
 * hold samples of slow paths only (over the simulator's loss_patterns,
 * where every link delays most packets by 0.8-1.6 ms, the least of 3
 * windows left 3 of 100 patterns under a third of the loss-free goodput,
 * of 8 none; 16 let incast_8_to_1 overflow in 2 of 20 seeds).
 * A packet lost where no queue stands was lost on a link (corruption, a
 * flaky or black-holed path, a switch's fault), and such a loss hits a
 * sprayed flow on every path it touches, every RTT or so whatever its
 * window: halving the window for each, as TCP's rule would, pins it at
 * its floor (under a third of the loss-free goodput in 8 of the 12
 * patterns of the simulator's loss_patterns, issue 49).  The path's own
 * health (path.c) and the retransmission take care of such a loss; the
 * window stays.  No delay sample yet: counted as congestion, the safe
 * side.
 */
static bool loss_from_queue(const struct srd_cc *cc, const struct srd_config *cfg,
			    const struct srd_rtt *rtt)
{
	uint64_t q = cc->standing_us;
	unsigned int i;

	if (cc->win_samples && cc->win_min_us < q)
		q = cc->win_min_us;
	for (i = 0; i < SRD_CC_QUEUE_WINDOWS; i++)
		if (cc->standing_hist_us[i] && cc->standing_hist_us[i] < q)
			q = cc->standing_hist_us[i];
	return !rtt->min_us || !cc->standing_us || q >= 2ull * rtt->min_us ||
	       cc->standing_us > target_us(cfg, rtt);
}

bool srd_cc_on_loss(struct srd_cc *cc, const struct srd_config *cfg,
		    const struct srd_rtt *rtt, uint64_t now_us)
{
	if (!loss_from_queue(cc, cfg, rtt))
		return false;
	if (!can_decrease(cc, rtt, now_us))
		return true;
	if (!cc->cwnd_undo)
		cc->cwnd_undo = cc->cwnd;
	cc->cwnd = clamp_cwnd(cfg, (uint64_t)cc->cwnd *
			      (100 - cfg->cc_max_mdf_pct) / 100);
	cc->last_decrease_us = now_us;
	return true;
}

/*
 * The first RTO of a run (@first) is one lost tail, or a host that
 * stalled: cut as for a loss, where a queue stood (srd_cc_on_loss()).
 * More in a row mean the path is gone or badly congested: the floor.
 * Returns whether the window was cut.
 */
bool srd_cc_on_rto(struct srd_cc *cc, const struct srd_config *cfg,
		   const struct srd_rtt *rtt, bool first, uint64_t now_us)
{
	if (first && !loss_from_queue(cc, cfg, rtt))
		return false;
	if (!cc->cwnd_undo)
		cc->cwnd_undo = cc->cwnd;
	if (first) {
		cc->cwnd = clamp_cwnd(cfg, (uint64_t)cc->cwnd *
				      (100 - cfg->cc_max_mdf_pct) / 100);
		cc->last_decrease_us = now_us;
		return true;
	}
	cc->cwnd = clamp_cwnd(cfg, 0);
	return true;
}

/*
 * A retransmission turned out needless (the receiver had the data): the
 * loss or RTO cut that came with it was a mistake; take it back.
 */
void srd_cc_undo(struct srd_cc *cc)
{
	if (cc->cwnd_undo > cc->cwnd)
		cc->cwnd = cc->cwnd_undo;
	cc->cwnd_undo = 0;
}

/*
 * Does a receiver's ACK sent now ask its sender to drain?  For the first
 * 1/16 of every interval, and for as long from a newcomer's drain on.
 */
bool srd_cc_drain_asks(const struct srd_engine *eng, uint64_t now_us)
{
	const struct srd_config *cfg = &eng->cfg;
	uint64_t soon = srd_read_once(eng->drain_soon_us);
	uint32_t len = cfg->cc_drain_interval_us / 16;

	if (!srd_cc_drains(cfg))
		return false;
	return now_us % cfg->cc_drain_interval_us < len ||
	       (soon && now_us >= soon && now_us - soon < len);
}

/*
 * A new peer (under the serialisation of peer creation, srd_engine.h;
 * any peer's ACKs read it): its first RTT samples may be of a queue the
 * others built, and theirs of the queue its first window builds, and
 * the lower minimum of one starves it until the next drain, up to an
 * interval later.  A drain an eighth of an interval on lets them all
 * learn the base again once the first windows have reached the queue
 * (at a quarter, the sender starved until then had the tail of
 * incast_depth's latencies), and clear of the interval's own drain (a
 * sender makes one per sixteenth of an interval at most).
 */
void srd_cc_drain_newcomer(struct srd_engine *eng, uint64_t now_us)
{
	if (srd_cc_drains(&eng->cfg))
		srd_write_once(eng->drain_soon_us,
			       now_us + eng->cfg.cc_drain_interval_us / 8);
}

/*
 * An ACK, which @asked for a drain or not.  The first that asks starts
 * one, once per sixteenth of an interval at most, as long as the
 * receiver asks (a drain ends only at an ACK that does not ask, so one
 * asking makes one drain), so a newcomer's drain an eighth of an
 * interval after the interval's own is made too: the window is held at
 * cwnd_min_256ths (pacing keeps a window below one packet); cwnd is kept,
 * and is the window again after.  The drain ends at the first ACK that does not ask,
 * once a packet sent since it began has come back (that packet left when
 * what this peer had in flight was acknowledged), so all the receiver's
 * senders hold back together until its drain is over.  True: one began.
 */
bool srd_cc_drain_ack_any(struct srd_cc *cc, const struct srd_config *cfg,
			  bool asked, uint64_t now_us)
{
	if (cc->drain_start_us) {
		if (!asked && cc->drain_sampled) {
			cc->drain_start_us = 0;
			cc->drain_cwnd = 0;
		}
		return false;
	}
	if (!asked || !srd_cc_drains(cfg) ||
	    (cc->drain_last_us &&
	     now_us - cc->drain_last_us < cfg->cc_drain_interval_us / 16))
		return false;
	cc->drain_start_us = now_us ? now_us : 1;
	cc->drain_last_us = cc->drain_start_us;
	cc->drain_cwnd = cfg->cwnd_min_256ths;
	cc->drain_sampled = false;
	return true;
}

/* srd_cc_on_send() with pacing on and an RTT to pace by. */
void srd_cc_pace(struct srd_cc *cc, const struct srd_config *cfg,
		 const struct srd_rtt *rtt, uint32_t w, uint64_t now_us)
{
	uint64_t gap_ns, credit_ns, now_ns = now_us * 1000;

	/* A full packet's gap. */
	gap_ns = (uint64_t)rtt->srtt_us * 1000 * SRD_CWND_ONE / srd_cc_cwnd(cc) *
		 100 / cfg->pacing_gain_pct;
	/*
	 * A token bucket of pacing_burst_pkts full packets: after a pause,
	 * that many may leave back to back, so an OS timer fires once per
	 * burst, not once per packet; the long-run rate is unchanged.
	 */
	credit_ns = gap_ns * (cfg->pacing_burst_pkts - 1);
	if (now_ns > credit_ns && cc->pace_next_ns < now_ns - credit_ns)
		cc->pace_next_ns = now_ns - credit_ns;
	/*
	 * A packet of half a full one or more takes a full packet's gap;
	 * a smaller one its weight's share (srd_tx_pkt_weight()), so that
	 * small sends are not held to a full packet's spacing each, which
	 * would cap them at the packets of a window per RTT again.  Weighting
	 * the larger ones too made incast_depth's senders, whose 16 KiB
	 * messages are a full and a 7.4 KB packet, less fair (Jain's index
	 * 0.940-0.995 over 12 seeds of its _answered form, against
	 * 0.970-0.996).
	 */
	cc->pace_next_ns += w >= SRD_CWND_ONE / 2 ? gap_ns :
			    gap_ns * w / SRD_CWND_ONE;
}

uint64_t srd_cc_pacing_deadline_us(const struct srd_cc *cc)
{
	return (cc->pace_next_ns + 999) / 1000;
}
