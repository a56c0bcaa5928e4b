/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * rTT estimation and the retransmission timeout (rto.c).
 */
#ifndef SRD_ENGINE_RTO_H
#define SRD_ENGINE_RTO_H

#include "srd_engine.h"

struct srd_rtt {
	uint32_t srtt_us;	/* 0: no sample yet */
	uint32_t rttvar_us;
	uint32_t latest_us;
	uint32_t min_us;	/* 0: none */
	uint64_t min_stamp_us;	/* when min_us was taken */
	/*
	 * Before backoff, and always within [rto_min_us, rto_max_us] (every
	 * writer clamps it): srd_rto_backed_off() of no backoff is rto_us.
	 */
	uint32_t rto_us;
	uint32_t floor_us;	/* adaptive floor: grows on spurious RTOs; 0: rto_min_us */
};

void srd_rtt_init(struct srd_rtt *r, const struct srd_config *cfg);
void srd_rtt_spurious_rto(struct srd_rtt *r, const struct srd_config *cfg);
void srd_rtt_relax_floor(struct srd_rtt *r, const struct srd_config *cfg);
void srd_rtt_sample(struct srd_rtt *r, const struct srd_config *cfg,
		    uint32_t sample_us, uint64_t now_us);
uint32_t srd_rto_backed_off(const struct srd_rtt *r,
			    const struct srd_config *cfg, uint32_t backoff);

#endif /* SRD_ENGINE_RTO_H */
