/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * the paths a peer sprays over (path.c), and the choice of one for each
 * DATA packet.
 */
#ifndef SRD_ENGINE_PATH_H
#define SRD_ENGINE_PATH_H

#include "peer.h"

struct srd_path {
	enum srd_path_state state;
	uint32_t srtt_us, rttvar_us;
	uint32_t losses_in_row;
	uint32_t slow_skips;	/* turns skipped as slow since last used */
	uint32_t avoid_exp;	/* avoidances without a recovery */
	uint64_t avoid_until_us;
	bool probe_in_flight;
	uint64_t tx_pkts, acked_pkts, lost_pkts, timeouts, avoided, recovered;
};

#define SRD_PATH_NONE	0xffffffffu

/*
 * srd_path_select()'s every pass, pass 0 resumed at its @i-th path, @idx
 * (srd_path_select() took the paths before it); the passes after it
 * start again at @start.
 */
uint32_t srd_path_select_rest(struct srd_peer *peer, uint64_t now_us,
			      uint32_t exclude, uint64_t slow_x100,
			      uint32_t start, uint32_t i, uint32_t idx,
			      bool *is_probe);
/* The rest of srd_path_on_ack(): a recovery, and the RTT sample. */
void srd_path_on_ack_rest(struct srd_peer *peer, uint32_t path,
			  uint32_t rtt_us);
void srd_path_on_loss(struct srd_peer *peer, uint32_t path, bool was_probe,
		      bool timeout, uint64_t now_us);
void srd_path_on_spurious_loss(struct srd_peer *peer, uint32_t path);

/*
 * A path skipped as slow gets no new RTT samples, so one bad sample would
 * keep it out for good and spraying would shrink to a few paths.  After
 * this many skipped turns it carries a packet anyway and is measured
 * again.
 */
#define SRD_SLOW_SKIPS_MAX	16

/*
 * The smoothed RTT above which a path is slow, times 100 (the path's is
 * compared times 100): none (the largest value) while the peer has none
 * or the test is off.  Against the peer's smoothed RTT, not its minimum:
 * on a busy host every path's RTT is far above the best sample ever
 * seen, and a minimum-based test would call them all slow.
 */
static inline uint64_t srd_path_slow_above(const struct srd_peer *peer)
{
	uint32_t pct = peer->eng->cfg.path_slow_pct;

	return pct && peer->rtt.srtt_us ? (uint64_t)peer->rtt.srtt_us * pct :
	       ~(uint64_t)0;
}

/* Does a usable path, not a probe, skip its turn as slow?  Counted. */
static inline bool srd_path_skip_slow(struct srd_path *p, uint64_t slow_x100)
{
	return p->srtt_us && (uint64_t)p->srtt_us * 100 > slow_x100 &&
	       p->slow_skips++ < SRD_SLOW_SKIPS_MAX;
}

static inline uint32_t srd_path_take(struct srd_peer *peer, uint32_t idx,
				     bool probe, bool *is_probe)
{
	peer->paths[idx].slow_skips = 0;
	peer->path_rr = idx + 1;
	*is_probe = probe;
	return idx;
}

/*
 * A path for the next DATA packet, not @exclude if another exists.
 * *@is_probe says the packet is its path's probe.  Inline: every DATA
 * packet comes here.  Pass 0 over ACTIVE paths, the common case, is done
 * here with as little as it needs: such a path is usable and not a
 * probe, so only the slow test applies.  At the first path that is not
 * ACTIVE srd_path_select_rest() (path.c) takes over where this left
 * off.  The cursor is at most n (peer.c draws it below n; a selection
 * sets it to the next index), so no division is needed to start from
 * it.  The unit tests check this against the three passes written as
 * one loop.
 */
static inline uint32_t srd_path_select(struct srd_peer *peer,
				       uint64_t now_us, uint32_t exclude,
				       bool *is_probe)
{
	uint32_t n = peer->eng->cfg.n_paths, i, idx, start;
	uint64_t slow_x100 = srd_path_slow_above(peer);
	struct srd_path *p;

	/* One path: it is taken even if excluded. */
	if (n == 1)
		exclude = SRD_PATH_NONE;
	start = peer->path_rr < n ? peer->path_rr : 0;
	for (i = 0, idx = start; i < n;
	     i++, idx = idx + 1 < n ? idx + 1 : 0) {
		p = &peer->paths[idx];
		if (idx == exclude)
			continue;
		if (p->state != SRD_PATH_ACTIVE)
			break;
		if (srd_path_skip_slow(p, slow_x100))
			continue;
		return srd_path_take(peer, idx, false, is_probe);
	}
	return srd_path_select_rest(peer, now_us, exclude, slow_x100, start,
				    i, idx, is_probe);
}

/*
 * A packet sent on @path was ACKed.  Inline: every packet ACKed comes
 * here, and for most the path is ACTIVE and there is no RTT sample (an
 * ACK gives one only for its largest PSN).
 */
static inline void srd_path_on_ack(struct srd_peer *peer, uint32_t path,
				   bool was_probe, uint32_t rtt_us)
{
	struct srd_path *p = &peer->paths[path];

	p->acked_pkts++;
	p->losses_in_row = 0;
	if (was_probe)
		p->probe_in_flight = false;
	if (p->state != SRD_PATH_ACTIVE || rtt_us)
		srd_path_on_ack_rest(peer, path, rtt_us);
}

#endif /* SRD_ENGINE_PATH_H */
