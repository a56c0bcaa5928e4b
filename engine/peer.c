// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: engines and peers.  Configuration, creation and
 * destruction, remote tags (restart detection), the HELLO handshake,
 * the peer's single deadline, and the timer event.
 *
 * Peer states (enum srd_peer_state), docs/protocol.md "Tags and peer
 * restart":
 *
 *   PROBING --a packet naming our tag for this remote--> ESTABLISHED
 *   ESTABLISHED --a HELLO naming our tag, with a new remote tag and the
 *                 echo of our challenge to that tag--> ESTABLISHED
 *       (the old remote tag retired; sends in progress fail PEER_RESTARTED,
 *        receives in progress are aborted, all packet state reset)
 *
 * Our tag for a remote is srd_engine_tag() of its address, so only a
 * sender that receives at that address can name it, short of a lucky
 * guess: nothing else changes a peer's state.  One guess must not cut the
 * remote off, so a new remote tag (a restart) is believed only when its
 * claimant echoes a challenge we sent to the address (tag.c): until then
 * the known tag stays, and its traffic flows.  While PROBING with sends posted, a HELLO goes out at
 * once and again after each backed-off RTO; after rto_retries_max the
 * posted sends fail UNRESP_REMOTE.
 */
#include "peer.h"
#include "tag.h"
#include "recovery.h"
#include "rx.h"

#define SRD_CONFIG_DEFAULT(name, def)	.name = (def),
static const struct srd_config srd_config_defaults = {
	SRD_CONFIG_FIELDS(SRD_CONFIG_DEFAULT)
};

void srd_config_default(struct srd_config *c)
{
	*c = srd_config_defaults;
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

const char *srd_config_check(const struct srd_config *c)
{
	if (!c->n_paths || c->n_paths > SRD_MAX_PATHS)
		return "n_paths: 1 to SRD_MAX_PATHS";
	/* RDMA packets carry seg_bytes less their longer header. */
	if (c->seg_bytes < SRD_MIN_SEG_BYTES + SRD_HDR_RDMA_BYTES - SRD_HDR_DATA_BYTES ||
	    c->seg_bytes > SRD_MAX_SEG_BYTES)
		return "seg_bytes: SRD_MIN_SEG_BYTES past an RDMA header, to SRD_MAX_SEG_BYTES";
	if (c->max_msg_bytes > SRD_MAX_MSG_BYTES)
		return "max_msg_bytes: at most SRD_MAX_MSG_BYTES";
	if (!pow2(c->tx_window_pkts) || c->tx_window_pkts > SRD_MAX_TX_WINDOW_PKTS)
		return "tx_window_pkts: a power of 2, at most SRD_MAX_TX_WINDOW_PKTS";
	if (!pow2(c->msg_window) || c->msg_window > SRD_MAX_MSG_WINDOW)
		return "msg_window: a power of 2, at most SRD_MAX_MSG_WINDOW";
	if (!c->max_pending_msgs)
		return "max_pending_msgs: not 0";
	if (!c->rto_min_us || c->rto_min_us > c->rto_max_us ||
	    c->rto_floor_max_us > c->rto_max_us)
		return "rto_min_us: not 0; rto_min_us and rto_floor_max_us at most rto_max_us";
	if (!c->reorder_pkts)
		return "reorder_pkts: not 0";
	if (!c->ack_every_pkts || c->ack_reply_wait_us > c->rto_max_us)
		return "ack_every_pkts: not 0; ack_reply_wait_us at most rto_max_us";
	if (!c->cwnd_min_256ths ||
	    c->cwnd_min_256ths > (uint64_t)c->cwnd_max_pkts * SRD_CWND_ONE ||
	    c->cwnd_max_pkts > c->tx_window_pkts)
		return "cwnd_min_256ths: 1 to cwnd_max_pkts, at most tx_window_pkts";
	if (c->cc_beta_pct > 100 || c->cc_max_mdf_pct >= 100)
		return "cc_beta_pct: at most 100; cc_max_mdf_pct: below 100";
	if (c->cc_target_rtt_mult > 64)
		return "cc_target_rtt_mult: at most 64";
	if (c->cc_target_us > SRD_CC_TARGET_MAX_US || c->cc_fs_range_us > SRD_CC_TARGET_MAX_US)
		return "cc_target_us, cc_fs_range_us: at most SRD_CC_TARGET_MAX_US";
	if (c->cc_drain_interval_us > SRD_CC_DRAIN_INTERVAL_MAX_US)
		return "cc_drain_interval_us: at most SRD_CC_DRAIN_INTERVAL_MAX_US";
	if (!c->path_fail_losses || !c->path_avoid_us ||
	    c->path_avoid_us > c->path_avoid_max_us)
		return "path_fail_losses, path_avoid_us: not 0; path_avoid_us to path_avoid_max_us";
	if (!c->rnr_backoff_min_us || c->rnr_backoff_min_us > c->rnr_backoff_max_us)
		return "rnr_backoff_min_us: not 0, at most rnr_backoff_max_us";
	if (!c->pacing_burst_pkts || c->pacing_burst_pkts > c->cwnd_max_pkts)
		return "pacing_burst_pkts: not 0, at most cwnd_max_pkts";
	if (!c->peer_timeout_us || c->peer_timeout_us > SRD_PEER_TIMEOUT_MAX_US)
		return "peer_timeout_us: not 0, at most SRD_PEER_TIMEOUT_MAX_US";
	return NULL;
}

int srd_config_validate(const struct srd_config *c)
{
	return srd_config_check(c) ? -1 : 0;
}

size_t srd_peer_mem_bound_bytes(const struct srd_config *c)
{
	uint32_t max_msg = c->max_msg_bytes > SRD_MAX_RDMA_MSG_BYTES ?
			   c->max_msg_bytes : SRD_MAX_RDMA_MSG_BYTES;
	size_t seg_map = (srd_msg_nsegs(max_msg, c->seg_bytes) + 7) / 8;
	size_t rx_map = (srd_msg_nsegs(max_msg, SRD_MIN_SEG_BYTES) + 7) / 8;

	/* READs awaiting their response are bounded by what the OS posts. */
	return sizeof(struct srd_peer) +
	       c->tx_window_pkts * (sizeof(struct srd_tx_pkt) + sizeof(struct srd_retx)) +
	       c->msg_window * (sizeof(struct srd_tx_msg *) + sizeof(struct srd_rx_slot)) +
	       c->n_paths * sizeof(struct srd_path) +
	       c->msg_window * (seg_map + rx_map) +
	       (size_t)(c->msg_window + c->max_pending_msgs) *
	       (sizeof(struct srd_tx_msg) + sizeof(struct srd_tx_op)) +
	       SRD_TX_MSG_CACHE * sizeof(struct srd_tx_msg);
}

const char *srd_comp_status_name(enum srd_comp_status st)
{
#define SRD_COMP_NAME(n)	[SRD_COMP_##n] = #n
	static const char *const names[SRD_COMP_NR] = {
		SRD_COMP_STATUSES(SRD_COMP_NAME, SRD_LIST_COMMA)
	};
#undef SRD_COMP_NAME

	return (unsigned int)st < SRD_COMP_NR ? names[st] : "?";
}

const char *srd_path_state_name(enum srd_path_state st)
{
#define SRD_PATH_NAME(n, name)	[SRD_PATH_##n] = #name
	static const char *const names[SRD_PATH_NR] = {
		SRD_PATH_STATES(SRD_PATH_NAME, SRD_LIST_COMMA)
	};
#undef SRD_PATH_NAME

	return (unsigned int)st < SRD_PATH_NR ? names[st] : "?";
}

/* --- engines --------------------------------------------------------- */

struct srd_engine *srd_engine_create(const struct srd_config *cfg,
				     const struct srd_ops *ops, void *os)
{
	struct srd_engine *eng;

	if (srd_config_validate(cfg))
		return NULL;
	eng = ops->alloc(os, sizeof(*eng));
	if (!eng)
		return NULL;
	eng->cfg = *cfg;
	eng->ops = ops;
	eng->os = os;
	srd_tag_init(eng);
	return eng;
}

void srd_engine_destroy(struct srd_engine *eng)
{
	while (eng->peers)
		srd_peer_destroy(eng->peers);
	eng->ops->free(eng->os, eng, sizeof(*eng));
}

#define SRD_COUNTER_DESC(f) { #f, srd_offsetof(struct srd_counters, f) }

const struct srd_counter_desc srd_counter_descs[] = {
	SRD_COUNTERS(SRD_COUNTER_DESC, SRD_LIST_COMMA)
};

SRD_STATIC_ASSERT(sizeof(struct srd_counters) ==
		  SRD_ENGINE_NUM_COUNTERS * sizeof(uint64_t),
		  "every counter is a uint64_t");

static void counters_add(struct srd_counters *sum, const struct srd_counters *c)
{
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *v = (const uint64_t *)c;
	size_t i;

	for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		d[i] += v[i];
}

void srd_engine_own_counters(const struct srd_engine *eng, struct srd_counters *out)
{
	*out = eng->ctr;
}

void srd_peer_counters_add(const struct srd_peer *peer, struct srd_counters *sum)
{
	counters_add(sum, &peer->ctr);
}

void srd_engine_counters(const struct srd_engine *eng, struct srd_counters *out)
{
	const struct srd_peer *peer;

	srd_engine_own_counters(eng, out);
	for (peer = eng->peers; peer; peer = peer->next)
		srd_peer_counters_add(peer, out);
}

/* --- peers ----------------------------------------------------------- */

static void peer_free_arrays(struct srd_peer *peer)
{
	const struct srd_config *c = &peer->eng->cfg;
	const struct srd_ops *ops = peer->eng->ops;
	void *os = peer->eng->os;

	if (peer->ring)
		ops->free(os, peer->ring, c->tx_window_pkts * sizeof(*peer->ring));
	if (peer->retx)
		ops->free(os, peer->retx, c->tx_window_pkts * sizeof(*peer->retx));
	if (peer->tx_slots)
		ops->free(os, peer->tx_slots, c->msg_window * sizeof(*peer->tx_slots));
	if (peer->rx_slots)
		ops->free(os, peer->rx_slots, c->msg_window * sizeof(*peer->rx_slots));
	if (peer->paths)
		ops->free(os, peer->paths, c->n_paths * sizeof(*peer->paths));
}

struct srd_peer *srd_peer_create(struct srd_engine *eng, void *peer_os,
				 const void *addr, size_t addr_len)
{
	const struct srd_config *c = &eng->cfg;
	struct srd_peer *peer = eng->ops->alloc(eng->os, sizeof(*peer));

	if (!peer) {
		eng->ctr.alloc_failures++;
		return NULL;
	}
	peer->eng = eng;
	peer->os = peer_os;
	peer->local_tag = srd_engine_tag(eng, addr, addr_len);
	peer->last_active_us = eng->ops->now_us(eng->os);
	peer->ring = eng->ops->alloc(eng->os, c->tx_window_pkts * sizeof(*peer->ring));
	peer->retx = eng->ops->alloc(eng->os, c->tx_window_pkts * sizeof(*peer->retx));
	peer->tx_slots = eng->ops->alloc(eng->os, c->msg_window * sizeof(*peer->tx_slots));
	peer->rx_slots = eng->ops->alloc(eng->os, c->msg_window * sizeof(*peer->rx_slots));
	peer->paths = eng->ops->alloc(eng->os, c->n_paths * sizeof(*peer->paths));
	if (!peer->ring || !peer->retx || !peer->tx_slots || !peer->rx_slots ||
	    !peer->paths) {
		eng->ctr.alloc_failures++;
		peer_free_arrays(peer);
		eng->ops->free(eng->os, peer, sizeof(*peer));
		return NULL;
	}
	peer->state = SRD_PEER_PROBING;
	peer->hello_due_us = SRD_NO_DEADLINE;
	peer->ack_due_us = SRD_NO_DEADLINE;
	peer->loss_deadline_us = SRD_NO_DEADLINE;
	peer->rx_stall_check_us = SRD_NO_DEADLINE;
	peer->deadline_us = SRD_NO_DEADLINE;
	peer->snd_una = eng->ops->random_u32(eng->os);
	peer->snd_nxt = peer->snd_una;
	peer->path_rr = eng->ops->random_u32(eng->os) % c->n_paths;
	srd_rtt_init(&peer->rtt, c);
	srd_cc_init(&peer->cc, c);
	srd_cc_drain_newcomer(eng, peer->last_active_us);
	peer->next = eng->peers;
	eng->peers = peer;
	return peer;
}

void srd_peer_destroy(struct srd_peer *peer)
{
	struct srd_engine *eng = peer->eng;
	struct srd_peer **pp;

	srd_tx_fail_all(peer, SRD_COMP_FLUSHED, true);
	srd_rx_reset(peer);
	if (peer->deadline_us != SRD_NO_DEADLINE)
		eng->ops->timer_set(eng->os, peer->os, SRD_NO_DEADLINE);
	for (pp = &eng->peers; *pp; pp = &(*pp)->next) {
		if (*pp == peer) {
			*pp = peer->next;
			break;
		}
	}
	counters_add(&eng->ctr, &peer->ctr);
	srd_tx_msg_cache_drain(peer);
	peer_free_arrays(peer);
	eng->ops->free(eng->os, peer, sizeof(*peer));
}

/* --- remote tags and restarts ----------------------------------------- */

bool srd_peer_tag_retired(const struct srd_peer *peer, uint32_t tag)
{
	uint32_t i;

	for (i = 0; i < SRD_RETIRED_TAGS; i++)
		if (peer->retired[i] == tag)
			return true;
	return false;
}

void srd_peer_learn_tag(struct srd_peer *peer, uint32_t tag)
{
	if (peer->state == SRD_PEER_ESTABLISHED) {
		if (tag == peer->remote_tag)
			return;
		/*
		 * The remote restarted: nothing of its old incarnation
		 * survives, in either direction.
		 */
		peer->ctr.peer_restarts++;
		SRD_TRACE(peer, SRD_EV_RESTART, 0, 0, 0, 0, 0, tag,
			  peer->remote_tag);
		peer->retired[peer->retired_next++ % SRD_RETIRED_TAGS] =
			peer->remote_tag;
		srd_tx_fail_all(peer, SRD_COMP_PEER_RESTARTED, false);
		srd_tx_reset_packets(peer);
		peer->snd_una = peer->eng->ops->random_u32(peer->eng->os);
		peer->snd_nxt = peer->snd_una;
		srd_rx_reset(peer);
		srd_cc_init(&peer->cc, &peer->eng->cfg);
	}
	peer->remote_tag = tag;
	peer->state = SRD_PEER_ESTABLISHED;
	peer->hello_due_us = SRD_NO_DEADLINE;
	peer->hello_tries = 0;
}

void srd_trace_emit(struct srd_peer *peer, enum srd_event_type type,
		    uint32_t psn, uint32_t msg_id, uint32_t seg, uint32_t path,
		    uint32_t why, uint32_t value, uint32_t value2)
{
	struct srd_event ev = {
		.type = type, .psn = psn, .msg_id = msg_id, .seg = seg,
		.path = path, .why = why, .value = value, .value2 = value2,
	};

	peer->eng->ops->event(peer->eng->os, peer->os, &ev);
}

void srd_peer_send_hello(struct srd_peer *peer, uint32_t dst_tag,
			 uint32_t challenge, uint32_t echo)
{
	uint8_t hdr[SRD_HDR_MAX_BYTES];
	struct srd_pkt p;
	uint32_t hlen;

	srd_memset(&p, 0, sizeof(p));
	p.src_tag = peer->local_tag;
	p.dst_tag = dst_tag;
	p.challenge = challenge;
	p.echo = echo;
	hlen = srd_wire_put_hello(hdr, &p);
	peer->ctr.hellos_sent++;
	if (challenge)
		peer->ctr.restart_challenges++;
	srd_peer_transmit(peer, peer->ack_rr++ % peer->eng->cfg.n_paths, hdr,
			  hlen, NULL, 0, 0);
}

static void on_hello_timer(struct srd_peer *peer, uint64_t now_us)
{
	const struct srd_config *c = &peer->eng->cfg;

	if (!peer->pending_head) {
		peer->hello_due_us = SRD_NO_DEADLINE;
		return;
	}
	if (peer->hello_tries > c->rto_retries_max &&
	    now_us - peer->hello_start_us >= c->peer_timeout_us) {
		peer->ctr.peer_unreachable++;
		peer->hello_due_us = SRD_NO_DEADLINE;
		peer->hello_tries = 0;
		srd_tx_fail_all(peer, SRD_COMP_UNRESP_REMOTE, true);
		return;
	}
	srd_peer_send_hello(peer, 0, 0, 0);
	peer->hello_due_us = now_us + srd_rto_backed_off(&peer->rtt, c,
							 peer->hello_tries);
	peer->hello_tries++;
}

void srd_peer_on_timer(struct srd_peer *peer)
{
	uint64_t now_us = srd_now(peer);

	peer->deadline_us = SRD_NO_DEADLINE;	/* the OS timer has fired */
	if (peer->ack_pending && peer->ack_due_us <= now_us)
		srd_rx_send_delayed_ack(peer, now_us);
	if (peer->state == SRD_PEER_PROBING && peer->hello_due_us <= now_us)
		on_hello_timer(peer, now_us);
	srd_tx_on_timer(peer, now_us);
	srd_rx_msg_on_timer(peer, now_us);
	srd_peer_update_deadline(peer);
}

int srd_peer_path_stats(const struct srd_peer *peer, uint32_t path,
			struct srd_path_stats *out)
{
	const struct srd_path *p;

	if (path >= peer->eng->cfg.n_paths)
		return -1;
	p = &peer->paths[path];
	out->state = p->state;
	out->srtt_us = p->srtt_us;
	out->tx_pkts = p->tx_pkts;
	out->acked_pkts = p->acked_pkts;
	out->lost_pkts = p->lost_pkts;
	out->timeouts = p->timeouts;
	out->avoided = p->avoided;
	out->recovered = p->recovered;
	return 0;
}

void srd_peer_get_info(const struct srd_peer *peer, struct srd_peer_info *out)
{
	uint32_t id, active = 0;

	for (id = peer->msg_base; id != peer->msg_next; id++)
		if (peer->tx_slots[id & (peer->eng->cfg.msg_window - 1)])
			active++;
	out->state = peer->state;
	out->local_tag = peer->local_tag;
	out->remote_tag = peer->remote_tag;
	out->cwnd_pkts_x256 = peer->cc.cwnd;
	out->srtt_us = peer->rtt.srtt_us;
	out->rto_us = srd_rto_backed_off(&peer->rtt, &peer->eng->cfg,
					 peer->rto_backoff);
	out->min_rtt_us = peer->rtt.min_us;
	out->inflight_pkts = peer->inflight;
	out->pending_msgs = peer->pending_count;
	out->active_msgs = active;
	out->rx_assembling = peer->rx_assembling;
}

uint64_t srd_peer_idle_us(const struct srd_peer *peer)
{
	if (peer->pending_head || peer->awaiting || peer->rnr_gates ||
	    peer->inflight || peer->rx_assembling ||
	    peer->msg_base != peer->msg_next || peer->ack_pending ||
	    peer->retx_head != peer->retx_tail)
		return 0;
	return srd_now(peer) - peer->last_active_us;
}

uint64_t srd_peer_evict_min_idle_us(const struct srd_engine *eng)
{
	const struct srd_config *c = &eng->cfg;
	uint64_t budget;

	/*
	 * A run of expiries starts at most rto_max_us after the last ACK
	 * progress and ends at the first expiry past both the count and
	 * peer_timeout_us, up to rto_max_us later.
	 */
	budget = srd_max_u64(c->peer_timeout_us,
			     (uint64_t)c->rto_max_us * (c->rto_retries_max + 1)) +
		 2ull * c->rto_max_us;
	return srd_max_u64(budget, SRD_PEER_EVICT_MIN_IDLE_US);
}

bool srd_peer_unanswered(const struct srd_peer *peer)
{
	return peer->state == SRD_PEER_PROBING;
}
