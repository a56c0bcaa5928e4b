// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the simulator's OS layer and network (see sim.h).
 *
 * Events (packet at switch, packet delivered, message posted, restart,
 * receive refill) live in one binary heap ordered by (time, sequence);
 * peer timers in a second heap with lazy invalidation.  Nothing depends
 * on wall time or addresses, so a seed replays exactly.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../srd_internal.h"	/* the forger writes headers */
#include "sim.h"

/* --- deterministic randomness ---------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(splitmix(s) % n) : 0;
}

/* --- structures ------------------------------------------------------ */

enum ev_type { EV_SWITCH, EV_DELIVER, EV_POST, EV_RESTART, EV_REFILL };

struct event {
	uint64_t t_ns, seq;
	enum ev_type type;
	int src, dst;
	uint32_t path, len;
	uint8_t *data;
	uint32_t msg;
};

struct timer_ev {
	uint64_t t_ns, seq;
	int node, remote;
	uint64_t gen;
};

struct heap {
	char *v;
	size_t len, cap, elem_size;
};

struct sim;

struct sim_peer {
	struct sim *s;
	int node, remote;
	struct srd_peer *peer;
	uint64_t gen;		/* bumped when the timer is re-set or the peer replaced */
};

struct sim_qp {
	int credits;		/* -1: unlimited */
};

struct sim_node {
	struct sim *s;
	int id;
	struct srd_engine *eng;
	struct sim_peer *peers;	/* by remote node */
	struct sim_qp *qps;
	size_t live_bytes, peak_bytes;
	long live_allocs;
	uint64_t link_free_ns;	/* downlink */
	uint64_t queued_bytes_hint;
	int incarnation;
	struct srd_counters ctr_sum;	/* of dead incarnations */
};

enum expect { EXP_OK, EXP_BAD_QPN, EXP_BAD_QKEY, EXP_RNR_MAYBE };

/* A message as its sender's OS posted it (engine/srd_engine.h). */
struct srd_outbound {
	uint32_t idx;			/* in sim.msgs */
};

struct msg_rec {
	struct srd_outbound out;
	bool is_answer;			/* sim_params.answer: posted on delivery */
	int src, dst, src_qp, dst_qp;
	uint32_t len;
	uint8_t rnr_retry;
	enum expect expect;
	int src_incarnation;
	bool posted, done;
	enum srd_comp_status status;
	int delivered;
	uint64_t done_us;
};

/* A message its receiver's OS accepted (engine/srd_engine.h). */
struct srd_inbound {
	uint32_t msg;
	uint32_t len;
	uint8_t *buf;
	int node, src;
};

struct sim {
	const struct sim_params *p;
	struct sim_result *r;
	uint64_t rng;
	uint64_t now_ns, seq;
	struct heap events;		/* struct event */
	struct heap timers;		/* struct timer_ev */
	struct sim_node *nodes;
	struct msg_rec *msgs;
	uint32_t nmsgs;
	uint32_t nrequests;		/* msgs[0..nrequests): the workload */
	struct srd_config cfg;
	int failed;
};

static void fail(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (s->failed++)
		return;
	va_start(ap, fmt);
	vsnprintf(s->r->why, sizeof(s->r->why), fmt, ap);
	va_end(ap);
}

/* --- heaps ----------------------------------------------------------- */

/*
 * Binary min-heaps of fixed-size elements ordered by (t_ns, seq): the
 * first two fields of struct event and struct timer_ev.  seq, stamped at
 * push, keeps equal times in push order, so a run replays exactly.
 */
struct heap_key {
	uint64_t t_ns, seq;
};

static bool heap_before(const void *a, const void *b)
{
	struct heap_key x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x.t_ns < y.t_ns || (x.t_ns == y.t_ns && x.seq < y.seq);
}

static void *heap_at(const struct heap *h, size_t i)
{
	return h->v + i * h->elem_size;
}

static void heap_push(struct sim *s, struct heap *h, void *e)
{
	struct heap_key k;
	size_t i;

	memcpy(&k, e, sizeof(k));
	k.seq = s->seq++;
	memcpy(e, &k, sizeof(k));
	if (h->len == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 1024;
		h->v = realloc(h->v, h->cap * h->elem_size);
	}
	i = h->len++;
	while (i && heap_before(e, heap_at(h, (i - 1) / 2))) {
		memcpy(heap_at(h, i), heap_at(h, (i - 1) / 2), h->elem_size);
		i = (i - 1) / 2;
	}
	memcpy(heap_at(h, i), e, h->elem_size);
}

static uint64_t heap_top_t_ns(const struct heap *h)
{
	struct heap_key k;

	memcpy(&k, heap_at(h, 0), sizeof(k));
	return k.t_ns;
}

/* Take the earliest element into @out.  The heap must not be empty. */
static void heap_pop(struct heap *h, void *out)
{
	const void *last;
	size_t i = 0, c;

	memcpy(out, heap_at(h, 0), h->elem_size);
	last = heap_at(h, --h->len);	/* stays put: the loop stays below len */
	for (;;) {
		c = 2 * i + 1;
		if (c >= h->len)
			break;
		if (c + 1 < h->len && heap_before(heap_at(h, c + 1), heap_at(h, c)))
			c++;
		if (!heap_before(heap_at(h, c), last))
			break;
		memcpy(heap_at(h, i), heap_at(h, c), h->elem_size);
		i = c;
	}
	if (h->len)
		memcpy(heap_at(h, i), last, h->elem_size);
}

static void ev_push(struct sim *s, struct event e)
{
	heap_push(s, &s->events, &e);
}

static struct event ev_pop(struct sim *s)
{
	struct event e;

	heap_pop(&s->events, &e);
	return e;
}

static void t_push(struct sim *s, struct timer_ev t)
{
	heap_push(s, &s->timers, &t);
}

static struct timer_ev t_pop(struct sim *s)
{
	struct timer_ev t;

	heap_pop(&s->timers, &t);
	return t;
}

/* --- payload pattern ------------------------------------------------- */

static uint8_t pat(uint32_t msg, uint32_t i)
{
	uint32_t x = msg * 2654435761u ^ (i >> 2) * 40503u;

	return (uint8_t)(x >> ((i & 3) * 8));
}

/* --- srd_ops --------------------------------------------------------- */

/*
 * The clock moves on a little at every reading, as a real one does during
 * a call: the engine must not assume time stands still while it works.
 */
#define SIM_CLOCK_READ_NS	300

static uint64_t o_now(void *os)
{
	struct sim *s = ((struct sim_node *)os)->s;

	s->now_ns += SIM_CLOCK_READ_NS;
	return s->now_ns / 1000;
}

static uint32_t o_rand(void *os)
{
	return (uint32_t)splitmix(&((struct sim_node *)os)->s->rng);
}

static void *o_alloc(void *os, size_t n)
{
	struct sim_node *nd = os;

	nd->live_bytes += n;
	nd->live_allocs++;
	if (nd->live_bytes > nd->peak_bytes)
		nd->peak_bytes = nd->live_bytes;
	return calloc(1, n);
}

static void o_free(void *os, void *p, size_t n)
{
	struct sim_node *nd = os;

	if (nd->live_bytes < n || nd->live_allocs <= 0)
		fail(nd->s, "node %d: free of %zu bytes with %zu live", nd->id, n,
		     nd->live_bytes);
	nd->live_bytes -= n;
	nd->live_allocs--;
	free(p);
}

static void o_timer(void *os, void *peer_os, uint64_t d)
{
	struct sim_peer *sp = peer_os;
	struct sim *s = ((struct sim_node *)os)->s;
	struct timer_ev t = { .node = sp->node, .remote = sp->remote };

	t.gen = ++sp->gen;
	if (d == SRD_NO_DEADLINE)
		return;
	t.t_ns = d * 1000;
	if (t.t_ns < s->now_ns)
		t.t_ns = s->now_ns;
	t_push(s, t);
}

static bool path_down(struct sim *s, int a, int b, uint32_t path)
{
	const struct sim_params *p = s->p;
	uint64_t now_us = s->now_ns / 1000;

	if ((int)path < p->blackhole_paths)
		return true;
	if (p->outage_len_us && ((a == p->outage_a && b == p->outage_b) ||
				 (a == p->outage_b && b == p->outage_a)) &&
	    now_us >= p->outage_from_us &&
	    now_us < (uint64_t)p->outage_from_us + p->outage_len_us)
		return true;
	return false;
}

static uint32_t path_delay_us(struct sim *s, int a, int b, uint32_t path)
{
	const struct sim_params *p = s->p;
	uint64_t h = s->p->seed ^ ((uint64_t)a << 40) ^ ((uint64_t)b << 20) ^ path;

	return p->delay_min_us + (uint32_t)(splitmix(&h) %
					    (p->delay_max_us - p->delay_min_us + 1));
}

/*
 * One forged packet to @dst that claims to come from @src, as an off-path
 * attacker makes them (docs/protocol.md, "Threat model"): it cannot see
 * the traffic, but knows what is predictable (QPNs, Q_Keys, small message
 * ids) and what it learned with its own address (the tag @dst gave it),
 * and guesses the rest.  The oracle is the run's: every message still
 * completes as expected and OK means delivered once.
 */
static void forge(struct sim *s, int src, int dst)
{
	static const uint8_t ops[] = { SRD_WOP_DATA, SRD_WOP_ACK, SRD_WOP_NAK,
				       SRD_WOP_HELLO, SRD_WOP_WRITE,
				       SRD_WOP_READ_REQ, SRD_WOP_READ_RESP };
	struct event e = { .type = EV_SWITCH, .src = src, .dst = dst };
	struct sim_node *nd = &s->nodes[dst];
	uint8_t hdr[SRD_HDR_MAX_BYTES];
	uint32_t i, n, op = ops[rnd_below(&s->rng, sizeof(ops))];
	struct srd_pkt p;

	if (!nd->eng)
		return;
	memset(&p, 0, sizeof(p));
	p.src_epoch = (uint32_t)splitmix(&s->rng) | 1;
	switch (rnd_below(&s->rng, 3)) {
	case 0:
		p.dst_epoch = srd_engine_tag(nd->eng, "forger", 6);
		break;
	case 1:
		p.dst_epoch = (uint32_t)splitmix(&s->rng) | 1;
		break;
	default:
		p.dst_epoch = op == SRD_WOP_HELLO ? 0 : 1;
		break;
	}
	p.psn = (uint32_t)splitmix(&s->rng);
	p.msg_id = rnd_below(&s->rng, 2000) +
		   (rnd_below(&s->rng, 2) ? 1u << 30 : 0);
	p.msg_base = p.msg_id - rnd_below(&s->rng, 64);
	p.dst_qpn = 1 + rnd_below(&s->rng, s->p->qps);
	p.src_qpn = 1 + rnd_below(&s->rng, s->p->qps);
	p.qkey = 0x1000 + p.dst_qpn;
	p.imm_data = (uint32_t)splitmix(&s->rng);
	p.seg_bytes = 64;
	p.attempt = (uint8_t)rnd_below(&s->rng, 3);
	p.ack_psn = (uint32_t)splitmix(&s->rng);
	for (i = 0; i < sizeof(p.sack); i++)
		p.sack[i] = (uint8_t)splitmix(&s->rng);
	p.nak_reason = (uint8_t)(1 + rnd_below(&s->rng, SRD_NAK_REMOTE_ACCESS));
	p.req_msg_id = rnd_below(&s->rng, 2000);
	p.rdma.rkey = (uint32_t)splitmix(&s->rng);
	switch (op) {
	case SRD_WOP_DATA:
		n = srd_wire_put_data(hdr, &p);
		break;
	case SRD_WOP_ACK:
		n = srd_wire_put_ack(hdr, &p);
		break;
	case SRD_WOP_NAK:
		n = srd_wire_put_nak(hdr, &p);
		break;
	case SRD_WOP_HELLO:
		n = srd_wire_put_hello(hdr, &p);
		break;
	case SRD_WOP_READ_RESP:
		n = srd_wire_put_resp(hdr, &p);
		break;
	default:
		n = srd_wire_put_rdma(hdr, &p, (uint8_t)op);
		break;
	}
	e.len = n;
	e.data = malloc(n);
	memcpy(e.data, hdr, n);
	e.t_ns = s->now_ns + 1000ull * rnd_below(&s->rng, 50);
	s->r->forged++;
	ev_push(s, e);
}

static int o_tx(void *os, void *peer_os, const struct srd_tx_desc *d)
{
	struct sim_node *nd = os;
	struct sim_peer *sp = peer_os;
	struct sim *s = nd->s;
	const struct sim_params *p = s->p;
	struct event e = { .type = EV_SWITCH, .src = nd->id, .dst = sp->remote };
	uint32_t msg = 0, i, copies = 1, c;

	s->r->pkts_sent++;
	if (p->forge_permille && rnd_below(&s->rng, 1000) < (uint32_t)p->forge_permille)
		forge(s, nd->id, sp->remote);
	if (d->out)
		msg = d->out->idx;
	if (d->payload_len && (msg >= s->nmsgs ||
			       d->payload_off + d->payload_len > s->msgs[msg].len)) {
		fail(s, "transmit outside message %u: off %u len %u", msg,
		     d->payload_off, d->payload_len);
		return -1;
	}
	if (d->path >= (uint32_t)p->n_paths) {
		fail(s, "transmit on path %u of %d", d->path, p->n_paths);
		return -1;
	}
	if (path_down(s, nd->id, sp->remote, d->path) ||
	    rnd_below(&s->rng, 1000) < (uint32_t)p->loss_permille) {
		s->r->pkts_dropped_net++;
		return 0;
	}
	if (rnd_below(&s->rng, 1000) < (uint32_t)p->dup_permille) {
		copies = 2;
		s->r->pkts_duped++;
	}
	for (c = 0; c < copies; c++) {
		e.path = d->path;
		e.len = d->hdr_len + d->payload_len;
		e.data = malloc(e.len);
		memcpy(e.data, d->hdr, d->hdr_len);
		for (i = 0; i < d->payload_len; i++)
			e.data[d->hdr_len + i] = pat(msg, d->payload_off + i);
		e.t_ns = s->now_ns + 1000ull * (path_delay_us(s, nd->id, sp->remote, d->path) +
					       rnd_below(&s->rng, p->jitter_us + 1));
		ev_push(s, e);
	}
	return 0;
}

static enum srd_rx_verdict o_rx_begin(void *os, void *peer_os,
				      const struct srd_rx_msg_info *info,
				      struct srd_inbound **in)
{
	struct sim_node *nd = os;
	struct sim_peer *sp = peer_os;
	struct sim *s = nd->s;
	struct srd_inbound *h;
	struct sim_qp *qp;
	struct msg_rec *m;

	if (info->kind != SRD_MSG_SEND) {
		fail(s, "an RDMA message, but the simulator posts none");
		return SRD_RX_QP_ERROR;
	}
	if (info->dst_qpn < 1 || info->dst_qpn > (uint32_t)s->p->qps)
		return SRD_RX_BAD_QPN;
	if (info->qkey != 0x1000 + info->dst_qpn)
		return SRD_RX_BAD_QKEY;
	qp = &nd->qps[info->dst_qpn - 1];
	if (qp->credits == 0)
		return SRD_RX_RNR;
	if (!info->has_imm || info->imm_data >= s->nmsgs) {
		fail(s, "message without a valid imm %u", info->imm_data);
		return SRD_RX_QP_ERROR;
	}
	m = &s->msgs[info->imm_data];
	if (m->src != sp->remote || m->dst != nd->id || m->len != info->msg_len ||
	    (uint32_t)m->src_qp + 1 != info->src_qpn) {
		fail(s, "msg %u arrived from %d at %d len %u, sent %d->%d len %u",
		     info->imm_data, sp->remote, nd->id, info->msg_len, m->src, m->dst,
		     m->len);
		return SRD_RX_QP_ERROR;
	}
	if (qp->credits > 0)
		qp->credits--;
	h = calloc(1, sizeof(*h));
	h->msg = info->imm_data;
	h->len = info->msg_len;
	h->buf = malloc(info->msg_len + 1);
	h->node = nd->id;
	h->src = sp->remote;
	*in = h;
	return SRD_RX_ACCEPT;
}

static int o_rx_data(void *os, struct srd_inbound *h, uint32_t off,
		     const uint8_t *d, uint32_t len)
{

	if ((uint64_t)off + len > h->len) {
		fail(((struct sim_node *)os)->s, "rx_data outside msg %u", h->msg);
		return 0;
	}
	memcpy(h->buf + off, d, len);
	return 0;
}

static void o_rx_done(void *os, struct srd_inbound *h)
{
	struct sim *s = ((struct sim_node *)os)->s;
	struct msg_rec *m = &s->msgs[h->msg];
	uint32_t i;

	for (i = 0; i < h->len; i++) {
		if (h->buf[i] != pat(h->msg, i)) {
			fail(s, "msg %u corrupt at byte %u", h->msg, i);
			break;
		}
	}
	if (++m->delivered > 1)
		fail(s, "msg %u delivered %d times", h->msg, m->delivered);
	s->r->delivered++;
	s->r->bytes_delivered += h->len;
	/* Answer it: a post, not from inside the engine's upcall. */
	if (s->p->answer && h->msg < s->nrequests && m->delivered == 1) {
		struct event e = { .type = EV_POST, .msg = s->nrequests + h->msg,
				   .t_ns = s->now_ns + 1000ull * s->p->answer_us };

		s->r->answers++;
		s->r->msgs++;
		ev_push(s, e);
	}
	free(h->buf);
	free(h);
}

static void o_rx_abort(void *os, struct srd_inbound *h)
{
	struct sim_node *nd = os;
	struct sim *s = nd->s;

	/* The receive goes back to its QP, as the kernel would re-post it. */
	if (s->msgs[h->msg].dst_qp >= 0 && nd->qps[s->msgs[h->msg].dst_qp].credits >= 0)
		nd->qps[s->msgs[h->msg].dst_qp].credits++;
	free(h->buf);
	free(h);
}

static void o_send_done(void *os, struct srd_outbound *out,
			enum srd_comp_status st)
{
	struct sim *s = ((struct sim_node *)os)->s;
	uint32_t idx = out->idx;
	struct msg_rec *m;

	if (idx >= s->nmsgs) {
		fail(s, "completion for an unknown message");
		return;
	}
	m = &s->msgs[idx];
	if (m->done) {
		fail(s, "msg %u completed twice (%s, then %s)", idx,
		     srd_comp_status_name(m->status), srd_comp_status_name(st));
		return;
	}
	m->done = true;
	m->status = st;
	m->done_us = s->now_ns / 1000;
	if (st == SRD_COMP_OK) {
		s->r->ok_sends++;
		if (m->done_us > s->r->last_ok_completion_us)
			s->r->last_ok_completion_us = m->done_us;
		if (m->delivered != 1)
			fail(s, "msg %u completed OK but delivered %d times", idx,
			     m->delivered);
	} else {
		s->r->failed_sends++;
	}
}

static const struct srd_ops sim_ops = {
	.now_us = o_now, .random_u32 = o_rand, .alloc = o_alloc, .free = o_free,
	.timer_set = o_timer, .transmit = o_tx, .rx_begin = o_rx_begin,
	.rx_data = o_rx_data, .rx_done = o_rx_done, .rx_abort = o_rx_abort,
	.send_done = o_send_done,
};

/* --- nodes ----------------------------------------------------------- */

static void node_up(struct sim *s, struct sim_node *nd)
{
	int j;

	nd->eng = srd_engine_create(&s->cfg, &sim_ops, nd);
	if (!nd->eng) {
		fail(s, "engine_create failed");
		return;
	}
	for (j = 0; j < s->p->nodes; j++) {
		if (j == nd->id)
			continue;
		nd->peers[j].gen++;
		nd->peers[j].peer = srd_peer_create(nd->eng, &nd->peers[j], &j, sizeof(j));
	}
}

static void add_counters(struct srd_counters *sum, const struct srd_counters *c)
{
	const uint64_t *a = (const uint64_t *)c;
	uint64_t *b = (uint64_t *)sum;
	size_t i;

	for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		b[i] += a[i];
}

static void node_down(struct sim *s, struct sim_node *nd)
{
	int j;

	if (!nd->eng)
		return;
	struct srd_counters c;

	srd_engine_counters(nd->eng, &c);
	add_counters(&nd->ctr_sum, &c);
	srd_engine_destroy(nd->eng);
	nd->eng = NULL;
	for (j = 0; j < s->p->nodes; j++) {
		nd->peers[j].peer = NULL;
		nd->peers[j].gen++;
	}
	if (nd->live_allocs || nd->live_bytes)
		fail(s, "node %d: %ld allocations (%zu bytes) left after destroy",
		     nd->id, nd->live_allocs, nd->live_bytes);
}

/* --- workload -------------------------------------------------------- */

static void make_workload(struct sim *s)
{
	const struct sim_params *p = s->p;
	uint32_t i = 0, n = 0;
	int a, k;

	for (a = 0; a < p->nodes; a++)
		if (p->incast_to < 0 || a != p->incast_to)
			n += p->msgs_per_node;
	/* With answers, message n + i answers message i, if it arrives. */
	s->msgs = calloc(p->answer ? 2 * n : n, sizeof(*s->msgs));
	s->nmsgs = p->answer ? 2 * n : n;
	s->nrequests = n;
	for (a = 0; a < p->nodes; a++) {
		if (p->incast_to >= 0 && a == p->incast_to)
			continue;
		for (k = 0; k < p->msgs_per_node; k++, i++) {
			struct msg_rec *m = &s->msgs[i];
			struct event e = { .type = EV_POST, .msg = i };
			uint32_t roll = rnd_below(&s->rng, 1000);

			m->out.idx = i;
			m->src = a;
			do
				m->dst = p->incast_to >= 0 ? p->incast_to :
					 (int)rnd_below(&s->rng, p->nodes);
			while (m->dst == a);
			m->src_qp = (int)rnd_below(&s->rng, p->qps);
			m->dst_qp = (int)rnd_below(&s->rng, p->qps);
			if ((int)rnd_below(&s->rng, 100) < p->big_pct)
				m->len = p->max_msg_bytes - rnd_below(&s->rng, p->max_msg_bytes / 8);
			else
				m->len = rnd_below(&s->rng, 3 * p->seg_bytes);
			m->rnr_retry = 7;
			m->expect = EXP_OK;
			if (roll < (uint32_t)p->bad_dst_permille) {
				m->expect = EXP_BAD_QPN;
			} else if (roll < (uint32_t)(p->bad_dst_permille + p->bad_qkey_permille)) {
				m->expect = EXP_BAD_QKEY;
			} else if (m->dst_qp == p->rnr_qp) {
				m->rnr_retry = (uint8_t)rnd_below(&s->rng, 8);
				m->expect = EXP_RNR_MAYBE;
			}
			e.t_ns = 1000ull * rnd_below(&s->rng, p->post_window_us + 1);
			ev_push(s, e);
			if (p->answer) {
				struct msg_rec *an = &s->msgs[n + i];

				an->out.idx = n + i;
				an->is_answer = true;
				an->src = m->dst;
				an->dst = m->src;
				an->src_qp = m->dst_qp;
				an->dst_qp = m->src_qp;
				an->len = 1 + rnd_below(&s->rng, 256);
				an->rnr_retry = 7;
				/* Answers go to QPs that may run out of receives. */
				an->expect = an->dst_qp == p->rnr_qp ? EXP_RNR_MAYBE : EXP_OK;
			}
		}
	}
	s->r->msgs = n;
}

static void post(struct sim *s, uint32_t idx)
{
	struct msg_rec *m = &s->msgs[idx];
	struct sim_node *nd = &s->nodes[m->src];
	struct srd_send_req req = {
		.out = &m->out, .src_qpn = m->src_qp + 1,
		.dst_qpn = m->dst_qp + 1, .qkey = 0x1000 + m->dst_qp + 1,
		.imm_data = idx, .has_imm = true, .len = m->len,
		.rnr_retry = m->rnr_retry,
	};
	int rc;

	if (m->expect == EXP_BAD_QPN)
		req.dst_qpn = s->p->qps + 7;
	if (m->expect == EXP_BAD_QKEY)
		req.qkey ^= 0x5a5a;
	m->posted = true;
	m->src_incarnation = nd->incarnation;
	rc = srd_send_msg(nd->peers[m->dst].peer, &req);
	if (rc)
		fail(s, "post of msg %u failed: %d", idx, rc);
}

/* --- the run --------------------------------------------------------- */

static void deliver(struct sim *s, struct event *e)
{
	struct sim_node *nd = &s->nodes[e->dst];
	const struct sim_params *p = s->p;
	uint64_t ser_ns, start;

	if (e->type == EV_SWITCH) {
		/* The destination's downlink: FIFO, finite rate, drop-tail. */
		ser_ns = p->link_bytes_per_us ?
			 (uint64_t)(e->len + 60) * 1000 / p->link_bytes_per_us : 0;
		start = nd->link_free_ns > s->now_ns ? nd->link_free_ns : s->now_ns;
		if (p->link_bytes_per_us &&
		    (start - s->now_ns) * p->link_bytes_per_us / 1000 > p->buffer_bytes) {
			s->r->pkts_dropped_queue++;
			free(e->data);
			return;
		}
		if (p->link_bytes_per_us &&
		    (start - s->now_ns) * p->link_bytes_per_us / 1000 > s->r->max_queue_bytes)
			s->r->max_queue_bytes = (start - s->now_ns) * p->link_bytes_per_us / 1000;
		nd->link_free_ns = start + ser_ns;
		e->type = EV_DELIVER;
		e->t_ns = start + ser_ns;
		ev_push(s, *e);
		return;
	}
	if (nd->eng && nd->peers[e->src].peer)
		srd_peer_on_packet(nd->peers[e->src].peer, e->data, e->len);
	free(e->data);
}

static void check_outcomes(struct sim *s)
{
	const struct sim_params *p = s->p;
	uint32_t i;

	for (i = 0; i < s->nmsgs && !s->failed; i++) {
		struct msg_rec *m = &s->msgs[i];
		bool restart_involved = p->restart_node >= 0 &&
			(m->src == p->restart_node || m->dst == p->restart_node);
		bool outage_involved = p->outage_len_us &&
			((m->src == p->outage_a && m->dst == p->outage_b) ||
			 (m->src == p->outage_b && m->dst == p->outage_a));
		bool ok;

		if (m->is_answer && !m->posted)
			continue;	/* its request never arrived */
		if (!m->done) {
			fail(s, "msg %u (%d->%d, %u bytes) never completed", i, m->src,
			     m->dst, m->len);
			break;
		}
		if (m->delivered > 1)
			fail(s, "msg %u delivered %d times", i, m->delivered);
		switch (m->expect) {
		case EXP_OK:
			ok = m->status == SRD_COMP_OK;
			break;
		case EXP_BAD_QPN:
			ok = m->status == SRD_COMP_BAD_DEST_QPN;
			break;
		case EXP_BAD_QKEY:
			ok = m->status == SRD_COMP_BAD_QKEY;
			break;
		default:
			ok = m->status == SRD_COMP_OK ||
			     (m->status == SRD_COMP_RNR_RETRY_EXC && m->rnr_retry < 7);
			break;
		}
		if (!ok && restart_involved)
			ok = m->status == SRD_COMP_PEER_RESTARTED ||
			     m->status == SRD_COMP_FLUSHED ||
			     m->status == SRD_COMP_UNRESP_REMOTE;
		if (!ok && outage_involved)
			ok = m->status == SRD_COMP_UNRESP_REMOTE;
		if (!ok)
			fail(s, "msg %u (%d->%d qp %d->%d, %u bytes, expect %d) completed %s",
			     i, m->src, m->dst, m->src_qp, m->dst_qp, m->len, m->expect,
			     srd_comp_status_name(m->status));
		if (m->status != SRD_COMP_OK && m->expect != EXP_OK)
			s->r->expected_fail++;
	}
}

void sim_default_params(struct sim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "basic";
	p->seed = 1;
	p->nodes = 4;
	p->qps = 4;
	p->n_paths = 16;
	p->seg_bytes = 4096;
	p->msgs_per_node = 200;
	p->max_msg_bytes = 256 * 1024;
	p->big_pct = 5;
	p->post_window_us = 20000;
	p->delay_min_us = 5;
	p->delay_max_us = 40;
	p->jitter_us = 10;
	p->restart_node = -1;
	p->rnr_qp = -1;
	p->incast_to = -1;
	p->link_bytes_per_us = 1250;	/* 10 Gb/s */
	p->buffer_bytes = 1 << 20;
	p->time_limit_us = 60ull * 1000 * 1000;
}

void sim_run(const struct sim_params *p, struct sim_result *r)
{
	uint64_t same_time_fires = 0;
	struct sim s;
	int a, q;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	s.events.elem_size = sizeof(struct event);
	s.timers.elem_size = sizeof(struct timer_ev);
	s.p = p;
	s.r = r;
	s.rng = p->seed;
	srd_config_default(&s.cfg);
	s.cfg.n_paths = p->n_paths;
	s.cfg.seg_bytes = p->seg_bytes;
	s.cfg.max_msg_bytes = p->max_msg_bytes > s.cfg.max_msg_bytes ?
			      p->max_msg_bytes : s.cfg.max_msg_bytes;
	s.cfg.max_pending_msgs = 1u << 16;
	if (p->rto_retries_max)
		s.cfg.rto_retries_max = p->rto_retries_max;

	s.nodes = calloc(p->nodes, sizeof(*s.nodes));
	for (a = 0; a < p->nodes; a++) {
		struct sim_node *nd = &s.nodes[a];

		nd->s = &s;
		nd->id = a;
		nd->peers = calloc(p->nodes, sizeof(*nd->peers));
		nd->qps = calloc(p->qps, sizeof(*nd->qps));
		for (q = 0; q < p->nodes; q++) {
			nd->peers[q].s = &s;
			nd->peers[q].node = a;
			nd->peers[q].remote = q;
		}
		for (q = 0; q < p->qps; q++)
			nd->qps[q].credits = q == p->rnr_qp ? 1 : -1;
		node_up(&s, nd);
	}
	r->bound_bytes_per_node = (p->nodes - 1) * srd_peer_mem_bound_bytes(&s.cfg) + 4096;
	make_workload(&s);
	if (p->restart_node >= 0) {
		struct event e = { .type = EV_RESTART, .dst = p->restart_node,
				   .t_ns = 1000ull * p->restart_at_us };
		ev_push(&s, e);
	}
	if (p->rnr_qp >= 0) {
		struct event e = { .type = EV_REFILL, .t_ns = 1000ull * p->rnr_refill_us };
		ev_push(&s, e);
	}

	while (!s.failed) {
		/* At equal times, timers go first. */
		bool timer = s.timers.len &&
			     (!s.events.len ||
			      heap_top_t_ns(&s.timers) <= heap_top_t_ns(&s.events));

		if (!timer && !s.events.len)
			break;
		if (timer) {
			struct timer_ev t = t_pop(&s);
			struct sim_peer *sp = &s.nodes[t.node].peers[t.remote];

			if (t.gen != sp->gen || !sp->peer)
				continue;
			if (t.t_ns <= s.now_ns && ++same_time_fires > 100000) {
				fail(&s, "timer storm at %llu us (node %d peer %d)",
				     (unsigned long long)(s.now_ns / 1000), t.node, t.remote);
				break;
			}
			if (t.t_ns > s.now_ns) {
				same_time_fires = 0;
				s.now_ns = t.t_ns;
			}
			srd_peer_on_timer(sp->peer);
		} else {
			struct event e = ev_pop(&s);
			bool more = false;
			uint32_t i;

			if (e.t_ns > s.now_ns)
				s.now_ns = e.t_ns;
			switch (e.type) {
			case EV_SWITCH:
			case EV_DELIVER:
				deliver(&s, &e);
				break;
			case EV_POST:
				post(&s, e.msg);
				break;
			case EV_RESTART:
				node_down(&s, &s.nodes[e.dst]);
				s.nodes[e.dst].incarnation++;
				node_up(&s, &s.nodes[e.dst]);
				break;
			case EV_REFILL:
				for (a = 0; a < p->nodes; a++)
					if (s.nodes[a].qps[p->rnr_qp].credits < 4)
						s.nodes[a].qps[p->rnr_qp].credits++;
				for (i = 0; i < s.nmsgs && !more; i++)
					more = !s.msgs[i].done &&
					       (s.msgs[i].posted || !s.msgs[i].is_answer);
				if (more) {
					e.t_ns += 1000ull * p->rnr_refill_us;
					ev_push(&s, e);
				}
				break;
			}
		}
		r->events++;
		if (s.now_ns / 1000 > p->time_limit_us) {
			fail(&s, "time limit %llu us reached",
			     (unsigned long long)p->time_limit_us);
			break;
		}
	}
	r->sim_time_us = s.now_ns / 1000;
	if (!s.failed)
		check_outcomes(&s);
	for (a = 0; a < p->nodes; a++) {
		struct sim_node *nd = &s.nodes[a];

		if (nd->peak_bytes > r->peak_bytes_per_node)
			r->peak_bytes_per_node = nd->peak_bytes;
		node_down(&s, nd);
		r->retransmits += nd->ctr_sum.retransmits;
		r->rto_expired += nd->ctr_sum.rto_expired;
		r->fast_retransmits += nd->ctr_sum.fast_retransmits;
		r->spurious_retransmits += nd->ctr_sum.spurious_retransmits;
		r->duplicates += nd->ctr_sum.duplicates;
		r->rnr_naks += nd->ctr_sum.rnr_naks_sent;
		r->peer_restarts += nd->ctr_sum.peer_restarts;
		r->path_switches += nd->ctr_sum.path_switches;
		r->path_recoveries += nd->ctr_sum.path_recoveries;
		r->stale_drops += nd->ctr_sum.rx_drop_stale_epoch;
		r->acks_piggybacked += nd->ctr_sum.acks_piggybacked;
		r->ack_reply_timeouts += nd->ctr_sum.ack_reply_timeouts;
		free(nd->peers);
		free(nd->qps);
	}
	if (!s.failed && r->peak_bytes_per_node > r->bound_bytes_per_node)
		fail(&s, "peak %zu bytes per node above the bound %zu",
		     r->peak_bytes_per_node, r->bound_bytes_per_node);
	while (s.events.len) {
		struct event e = ev_pop(&s);

		if (e.type == EV_SWITCH || e.type == EV_DELIVER)
			free(e.data);
	}
	free(s.events.v);
	free(s.timers.v);
	free(s.nodes);
	free(s.msgs);
	r->ok = !s.failed;
}
