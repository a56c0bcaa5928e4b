/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * congestion control and pacing (cc.c).
 */
#ifndef SRD_ENGINE_CC_H
#define SRD_ENGINE_CC_H

#include "rto.h"

#define SRD_CWND_ONE	256u	/* cwnd fixed point: packets * 256 */

/*
 * How many standing-delay windows (srtt / 2 each) a loss looks back over
 * to tell a queue from paths of unequal delay (cc.c, loss_from_queue()).
 */
#define SRD_CC_QUEUE_WINDOWS	8

struct srd_cc {
	uint32_t cwnd;		/* packets * SRD_CWND_ONE */
	uint32_t cwnd_undo;	/* before the last loss/RTO cut; 0: none */
	uint64_t last_decrease_us;
	uint64_t pace_next_ns;	/* earliest next DATA send */
	uint32_t standing_us;	/* least delay of the last window */
	/* ... of the last SRD_CC_QUEUE_WINDOWS windows (0: none yet) */
	uint32_t standing_hist_us[SRD_CC_QUEUE_WINDOWS];
	uint32_t standing_hist_next;
	uint32_t win_min_us;	/* ... of the current one */
	uint32_t win_samples;
	uint64_t win_end_us;
	uint64_t drain_start_us; /* a drain under way since; 0: none */
	uint64_t drain_last_us;	/* the last one's start */
	uint32_t drain_cwnd;	/* the window while one is; 0: none */
	bool drain_sampled;	/* ... and a packet sent since came back */
	bool stalled;		/* counted once per stall */
};

/* Are drains asked for and made (cc.c)?  Not with a fixed target. */
static inline bool srd_cc_drains(const struct srd_config *cfg)
{
	return cfg->cc_drain_interval_us && !cfg->cc_target_us;
}

void srd_cc_init(struct srd_cc *cc, const struct srd_config *cfg);
void srd_cc_on_ack(struct srd_cc *cc, const struct srd_config *cfg,
		   const struct srd_rtt *rtt, uint32_t acked_w,
		   uint32_t delay_us, uint64_t now_us);
bool srd_cc_on_loss(struct srd_cc *cc, const struct srd_config *cfg,
		    const struct srd_rtt *rtt, uint64_t now_us);
void srd_cc_undo(struct srd_cc *cc);
bool srd_cc_on_rto(struct srd_cc *cc, const struct srd_config *cfg,
		   const struct srd_rtt *rtt, bool first, uint64_t now_us);
bool srd_cc_drain_asks(const struct srd_engine *eng, uint64_t now_us);
void srd_cc_drain_newcomer(struct srd_engine *eng, uint64_t now_us);
bool srd_cc_drain_ack_any(struct srd_cc *cc, const struct srd_config *cfg,
			  bool asked, uint64_t now_us);

/*
 * An ACK that asks for a drain (@asked) or not (cc.c).  Inline: every ACK
 * comes here, and nearly every one neither asks nor finds a drain under
 * way, which changes nothing.  srd_cc_drain_ack_any() takes every case
 * (the unit tests check that both agree).
 */
static inline bool srd_cc_drain_ack(struct srd_cc *cc,
				    const struct srd_config *cfg, bool asked,
				    uint64_t now_us)
{
	if (!asked && !cc->drain_start_us)
		return false;
	return srd_cc_drain_ack_any(cc, cfg, asked, now_us);
}

/*
 * An RTT sample (already taken, srd_rtt_sample(): the minimum comes down
 * to it if it is less) of a packet sent at @sent_us.  Inline: every ACK
 * with a sample comes here.
 */
static inline void srd_cc_drain_sample(struct srd_cc *cc, uint64_t sent_us)
{
	if (cc->drain_start_us && sent_us >= cc->drain_start_us)
		cc->drain_sampled = true;
}

/* The window in force, in 1/256 packets: cwnd, or a drain's (cc.c). */
static inline uint32_t srd_cc_cwnd(const struct srd_cc *cc)
{
	return cc->drain_cwnd && cc->drain_cwnd < cc->cwnd ? cc->drain_cwnd :
	       cc->cwnd;
}

/*
 * Does a packet of weight @w (srd_tx_pkt_weight()) fit in the window
 * with @inflight_w in flight?  Inline: the pump and the deadline ask at
 * every packet.  A window below one packet holds one full packet, and
 * pacing keeps it (srd_cc_on_send()).
 */
static inline bool srd_cc_window_fits(const struct srd_cc *cc,
				      uint32_t inflight_w, uint32_t w)
{
	uint32_t c = srd_cc_cwnd(cc);

	return inflight_w + w <= (c > SRD_CWND_ONE ? c : SRD_CWND_ONE);
}

/* The window in whole packets of a full segment (at least one). */
static inline uint32_t srd_cc_window_pkts(const struct srd_cc *cc)
{
	uint32_t w = srd_cc_cwnd(cc) / SRD_CWND_ONE;

	return w ? w : 1;
}

static inline bool srd_cc_pacing_allows(const struct srd_cc *cc,
					uint64_t now_us)
{
	return cc->pace_next_ns <= now_us * 1000;
}

void srd_cc_pace(struct srd_cc *cc, const struct srd_config *cfg,
		 const struct srd_rtt *rtt, uint32_t w, uint64_t now_us);

/*
 * A DATA packet of weight @w leaves: pacing, with pacing on and an RTT
 * to pace by (srd_cc_pace()).  Inline: every DATA packet comes here.
 */
static inline void srd_cc_on_send(struct srd_cc *cc,
				  const struct srd_config *cfg,
				  const struct srd_rtt *rtt, uint32_t w,
				  uint64_t now_us)
{
	if (cfg->pacing_gain_pct && rtt->srtt_us)
		srd_cc_pace(cc, cfg, rtt, w, now_us);
}

uint64_t srd_cc_pacing_deadline_us(const struct srd_cc *cc);

#endif /* SRD_ENGINE_CC_H */
