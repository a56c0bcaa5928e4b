// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the RTT estimator and retransmission timeout, in
 * microseconds (Jacobson/Karels as in RFC 6298, without its 1 s floor:
 * rto_min_us and rto_max_us bound it), and the windowed minimum RTT that
 * congestion control uses as its base delay.
 */
#include "rto.h"
#include "util.h"

/*
 * The minimum RTT is re-learnt after this long, so a route change that
 * lengthens every path is eventually accepted as the new base.
 */
#define SRD_MIN_RTT_WINDOW_US	(10u * 1000 * 1000)

static uint32_t clamp_rto(const struct srd_config *cfg, uint64_t v)
{
	if (v < cfg->rto_min_us)
		return cfg->rto_min_us;
	if (v > cfg->rto_max_us)
		return cfg->rto_max_us;
	return (uint32_t)v;
}

static uint32_t rto_of(const struct srd_rtt *r, const struct srd_config *cfg)
{
	uint64_t v = (uint64_t)r->srtt_us +
		     srd_max_u64((uint64_t)r->rttvar_us * 4, 1);

	return clamp_rto(cfg, srd_max_u64(v, r->floor_us));
}

/*
 * An RTO fired though the packet had arrived: the path's delay has a
 * tail the estimator does not see (a busy host, a virtual CPU that was
 * not running).  Raise the floor under the RTO, up to rto_floor_max_us:
 * a needless RTO costs a resent window, which the receiver's DUP undoes,
 * but an RTO too long costs its whole length whenever a tail is lost on
 * a dead path, and ACKs lost on one can make RTOs look needless.
 */
void srd_rtt_spurious_rto(struct srd_rtt *r, const struct srd_config *cfg)
{
	uint64_t f = srd_max_u64(r->floor_us, r->rto_us) * 2;

	r->floor_us = clamp_rto(cfg, srd_min_u64(f, cfg->rto_floor_max_us));
	r->rto_us = rto_of(r, cfg);
}

/* A long run without spurious RTOs: lower the floor by half. */
void srd_rtt_relax_floor(struct srd_rtt *r, const struct srd_config *cfg)
{
	r->floor_us /= 2;
	if (r->floor_us < cfg->rto_min_us)
		r->floor_us = 0;
	r->rto_us = rto_of(r, cfg);
}

void srd_rtt_init(struct srd_rtt *r, const struct srd_config *cfg)
{
	srd_memset(r, 0, sizeof(*r));
	r->rto_us = clamp_rto(cfg, cfg->rto_init_us);
}

void srd_rtt_sample(struct srd_rtt *r, const struct srd_config *cfg,
		    uint32_t s, uint64_t now_us)
{
	uint32_t err;

	if (s == 0)
		s = 1;
	r->latest_us = s;
	if (!r->min_us || s <= r->min_us ||
	    now_us - r->min_stamp_us > SRD_MIN_RTT_WINDOW_US) {
		r->min_us = s;
		r->min_stamp_us = now_us;
	}
	if (!r->srtt_us) {
		r->srtt_us = s;
		r->rttvar_us = s / 2;
	} else {
		err = r->srtt_us > s ? r->srtt_us - s : s - r->srtt_us;
		r->rttvar_us = (uint32_t)(((uint64_t)r->rttvar_us * 3 + err) / 4);
		r->srtt_us = (uint32_t)(((uint64_t)r->srtt_us * 7 + s) / 8);
		if (!r->srtt_us)
			r->srtt_us = 1;
	}
	r->rto_us = rto_of(r, cfg);
}

uint32_t srd_rto_backed_off(const struct srd_rtt *r,
			    const struct srd_config *cfg, uint32_t backoff)
{
	uint64_t v = r->rto_us;

	while (backoff-- && v < cfg->rto_max_us)
		v <<= 1;
	return clamp_rto(cfg, v);
}
