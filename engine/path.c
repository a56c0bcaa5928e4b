// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: spraying over the peer's n_paths entropy values, and
 * path health.
 *
 *   ACTIVE --(RTO on it, or path_fail_losses losses in a row)--> AVOIDED
 *   AVOIDED --(avoid_until_us passed, at the next selection)--> PROBING
 *   PROBING --(its one probe packet ACKed)--> ACTIVE   (path_recoveries)
 *   PROBING --(the probe lost or timed out)--> AVOIDED, for twice as long
 *
 * Selection is round-robin, in order of preference: ACTIVE paths that are
 * not slow (smoothed RTT above path_slow_pct of the peer's), with PROBING
 * ones (no probe in flight) taking their turn only for new data while
 * the RTO is not backing off; then any ACTIVE path; then any PROBING one.
 * A retransmission, or a send after an RTO, goes where packets are known
 * to get through: probing a path with it could cost one more RTO, and a
 * run of those the peer's retry budget.
 */
#include "path.h"

static void avoid(struct srd_peer *peer, struct srd_path *p, uint64_t now_us)
{
	const struct srd_config *cfg = &peer->eng->cfg;
	uint64_t d = cfg->path_avoid_us;
	uint32_t i;

	for (i = 0; i < p->avoid_exp && d < cfg->path_avoid_max_us; i++)
		d <<= 1;
	if (d > cfg->path_avoid_max_us)
		d = cfg->path_avoid_max_us;
	if (p->state == SRD_PATH_ACTIVE) {
		peer->ctr.path_switches++;
		p->avoided++;
	}
	p->state = SRD_PATH_AVOIDED;
	SRD_TRACE(peer, SRD_EV_PATH, 0, 0, 0, (uint32_t)(p - peer->paths), 0,
		  SRD_PATH_AVOIDED, 0);
	p->avoid_until_us = now_us + d;
	p->avoid_exp++;
	p->losses_in_row = 0;
}

static bool usable(struct srd_path *p, uint64_t now_us, bool *probe)
{
	if (p->state == SRD_PATH_AVOIDED && now_us >= p->avoid_until_us)
		p->state = SRD_PATH_PROBING;
	*probe = p->state == SRD_PATH_PROBING;
	return p->state == SRD_PATH_ACTIVE ||
	       (p->state == SRD_PATH_PROBING && !p->probe_in_flight);
}

uint32_t srd_path_select_rest(struct srd_peer *peer, uint64_t now_us,
			      uint32_t exclude, uint64_t slow_x100,
			      uint32_t start, uint32_t i, uint32_t idx,
			      bool *is_probe)
{
	uint32_t n = peer->eng->cfg.n_paths, pass, best = 0;
	uint64_t best_until = SRD_NO_DEADLINE;
	bool may_probe = exclude == SRD_PATH_NONE && !peer->rto_backoff;
	struct srd_path *p;
	bool probe;

	for (pass = 0; pass < 3; pass++) {
		for (; i < n; i++, idx = idx + 1 < n ? idx + 1 : 0) {
			p = &peer->paths[idx];
			if (idx == exclude || !usable(p, now_us, &probe))
				continue;
			if (pass == 0 && probe && !may_probe)
				continue;
			if (pass == 0 && !probe &&
			    srd_path_skip_slow(p, slow_x100))
				continue;
			if (pass == 1 && probe)
				continue;
			return srd_path_take(peer, idx, probe, is_probe);
		}
		i = 0;
		idx = start;
	}
	/*
	 * Nothing usable: every path avoided.  Use the one whose avoidance
	 * ends first, as its probe; the alternative is not to send at all.
	 */
	for (i = 0; i < n; i++) {
		if (i == exclude)
			continue;
		if (peer->paths[i].avoid_until_us < best_until) {
			best_until = peer->paths[i].avoid_until_us;
			best = i;
		}
	}
	*is_probe = peer->paths[best].state != SRD_PATH_ACTIVE;
	return best;
}

/*
 * The packet declared lost on @path had arrived after all: forget the
 * loss, and end an avoidance it caused.
 */
void srd_path_on_spurious_loss(struct srd_peer *peer, uint32_t path)
{
	struct srd_path *p = &peer->paths[path];

	if (p->lost_pkts)
		p->lost_pkts--;
	p->losses_in_row = 0;
	if (p->state == SRD_PATH_AVOIDED && p->avoid_exp <= 1) {
		p->state = SRD_PATH_ACTIVE;
		SRD_TRACE(peer, SRD_EV_PATH, 0, 0, 0, path, 0, SRD_PATH_ACTIVE, 0);
		p->avoid_exp = 0;
		p->recovered++;
		peer->ctr.path_recoveries++;
	}
}

void srd_path_on_ack_rest(struct srd_peer *peer, uint32_t path,
			  uint32_t rtt_us)
{
	struct srd_path *p = &peer->paths[path];
	uint32_t err;

	if (p->state != SRD_PATH_ACTIVE) {
		p->state = SRD_PATH_ACTIVE;
		SRD_TRACE(peer, SRD_EV_PATH, 0, 0, 0, path, 0, SRD_PATH_ACTIVE, 0);
		p->recovered++;
		p->avoid_exp = 0;
		peer->ctr.path_recoveries++;
	}
	if (!rtt_us)
		return;
	if (!p->srtt_us) {
		p->srtt_us = rtt_us;
		p->rttvar_us = rtt_us / 2;
		return;
	}
	err = p->srtt_us > rtt_us ? p->srtt_us - rtt_us : rtt_us - p->srtt_us;
	p->rttvar_us = (uint32_t)(((uint64_t)p->rttvar_us * 3 + err) / 4);
	p->srtt_us = (uint32_t)(((uint64_t)p->srtt_us * 7 + rtt_us) / 8);
}

void srd_path_on_loss(struct srd_peer *peer, uint32_t path, bool was_probe,
		      bool timeout, uint64_t now_us)
{
	struct srd_path *p = &peer->paths[path];

	p->lost_pkts++;
	if (timeout)
		p->timeouts++;
	if (was_probe) {
		p->probe_in_flight = false;
		avoid(peer, p, now_us);
		return;
	}
	if (p->state != SRD_PATH_ACTIVE)
		return;
	if (timeout || ++p->losses_in_row >= peer->eng->cfg.path_fail_losses)
		avoid(peer, p, now_us);
}
