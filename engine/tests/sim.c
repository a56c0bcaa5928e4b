// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: the simulator's OS layer and network (see sim.h).
 *
 * Events (packet at switch, packet delivered, message posted, restart,
 * receive refill) live in one binary heap ordered by (time, sequence);
 * peer timers in a second heap with lazy invalidation.  Nothing depends
 * on wall time or addresses, so a seed replays exactly.
 *
 * RDMA ("RDMA: registered memory" below): every node registers one
 * region; WRITEs land in it and READs are answered from it, each request
 * in a range of its own, so that the end state of every byte is known.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../wire.h"	/* the forger writes headers */
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

enum ev_type { EV_SWITCH, EV_DELIVER, EV_POST, EV_RESTART, EV_REFILL, EV_STUCK_CHECK };

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
	size_t engine_bytes;	/* live after srd_engine_create(), before peers */
	uint64_t clock_ns;	/* its own: o_now() */
	long live_allocs;
	uint64_t link_free_ns;	/* downlink */
	uint64_t queued_bytes_hint;
	int incarnation;
	struct srd_counters ctr_sum;	/* of dead incarnations */
	/* RDMA: the node's region (an MR), which outlives its restarts */
	uint8_t *mem;
	uint8_t *written;	/* a bit per byte: placed there by a WRITE */
	uint64_t mem_len;
	uint32_t *ranges;	/* requests with a range in it, by address */
	uint32_t nranges;
	long live_in;		/* inbound objects not yet given back */
	uint64_t fair_bytes;	/* sent by it, delivered in the fair window */
	uint32_t next_post, end_post;	/* sim_params.depth: its messages */
	uint64_t stall_from_ns, stall_to_ns, stall_rng;	/* stall_max_us */
};

enum expect { EXP_OK, EXP_BAD_QPN, EXP_BAD_QKEY, EXP_RNR_MAYBE, EXP_BAD_ACCESS,
	      EXP_STUCK };

/* How an RDMA request with EXP_BAD_ACCESS fails the responder's check. */
enum bad_access { BAD_NONE, BAD_RKEY, BAD_BELOW, BAD_PAST_END, BAD_WRAPS };

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
	uint64_t post_us, done_us;
	/* RDMA: what was posted (remote_addr, rkey; rdma_len = len) ... */
	enum srd_msg_kind kind;		/* SEND, WRITE or READ */
	bool imm;			/* WRITE with immediate data */
	enum bad_access bad;
	uint64_t addr;
	uint32_t rkey;
	uint64_t roff;			/* its range in the target's region */
	/* ... and what became of it. */
	uint32_t placed;		/* WRITE: bytes placed; READ: read back */
	uint32_t chunks_done;		/* WRITE: chunks wholly placed */
	uint32_t resps_ok;		/* READ: chunks whose response went through */
	uint8_t *seen;			/* READ: a bit per byte read back */
};

/*
 * A message its receiver's OS accepted (engine/srd_engine.h): a SEND's
 * receive, or one chunk of a WRITE's or READ's target.
 */
struct srd_inbound {
	uint32_t msg;
	uint32_t len;			/* this message's (an RDMA chunk's) bytes */
	uint8_t *buf;			/* SEND */
	int node, src;
	enum srd_msg_kind kind;
	uint64_t roff;			/* RDMA: its first byte in node's region */
	bool has_recv;			/* took a receive: SEND, WRITE with imm */
};

/*
 * Packets in flight: buffers of a size class each (256 bytes apart),
 * kept on a free list per class, and freed at the end.  A thousand
 * nodes' all-to-all has millions in flight, of many sizes: glibc's
 * malloc spent 85 % of such a run looking through its free chunks.
 * Under ASan every packet is malloc'd to its size, so that a read past
 * its end is caught.
 */
#define SIM_PKT_CLASS_BYTES	256
#define SIM_PKT_CLASSES		((SRD_HDR_MAX_BYTES + SRD_MAX_SEG_BYTES) / \
				 SIM_PKT_CLASS_BYTES + 1)
#if defined(__SANITIZE_ADDRESS__)
#define SIM_PKT_POOL		0
#else
#define SIM_PKT_POOL		1
#endif

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
	bool stop;			/* sim_params.stuck_qp: the rest is done */
	void *pkt_pool[SIM_PKT_CLASSES];	/* pkt_alloc() */
	uint32_t link_reorder_last[2][SIM_MAX_LINKS];	/* corr_draw() */
};

static uint8_t *pkt_alloc(struct sim *s, uint32_t len)
{
	uint32_t c = len / SIM_PKT_CLASS_BYTES;
	void *b;

	if (!SIM_PKT_POOL || c >= SIM_PKT_CLASSES)
		return malloc(len ? len : 1);
	b = s->pkt_pool[c];
	if (!b)
		return malloc((c + 1) * SIM_PKT_CLASS_BYTES);
	memcpy(&s->pkt_pool[c], b, sizeof(void *));
	return b;
}

static void pkt_free(struct sim *s, uint8_t *b, uint32_t len)
{
	uint32_t c = len / SIM_PKT_CLASS_BYTES;

	if (!SIM_PKT_POOL || c >= SIM_PKT_CLASSES) {
		free(b);
		return;
	}
	memcpy(b, &s->pkt_pool[c], sizeof(void *));
	s->pkt_pool[c] = b;
}

static void pkt_pool_drain(struct sim *s)
{
	void *b;
	uint32_t c;

	for (c = 0; c < SIM_PKT_CLASSES; c++) {
		while ((b = s->pkt_pool[c])) {
			memcpy(&s->pkt_pool[c], b, sizeof(void *));
			free(b);
		}
	}
}

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

/* pat(@msg, @i ...) for @len bytes into @dst, a word made at a time. */
static void pat_fill(uint8_t *dst, uint32_t msg, uint32_t i, uint32_t len)
{
	uint32_t end = i + len, x;

	while (i != end && (i & 3))
		*dst++ = pat(msg, i++);
	while (end - i >= 4) {
		x = msg * 2654435761u ^ (i >> 2) * 40503u;
		dst[0] = (uint8_t)x;
		dst[1] = (uint8_t)(x >> 8);
		dst[2] = (uint8_t)(x >> 16);
		dst[3] = (uint8_t)(x >> 24);
		dst += 4;
		i += 4;
	}
	while (i != end)
		*dst++ = pat(msg, i++);
}

/* The first of the @len bytes at @p that is not pat(@msg, @i ...), or @len. */
static uint64_t pat_mismatch(const uint8_t *p, uint32_t msg, uint32_t i, uint64_t len)
{
	uint8_t want[4096];
	uint64_t done, n, k;

	for (done = 0; done < len; done += n) {
		n = len - done < sizeof(want) ? len - done : sizeof(want);
		pat_fill(want, msg, (uint32_t)(i + done), (uint32_t)n);
		if (memcmp(p + done, want, n)) {
			for (k = 0; p[done + k] == want[k]; k++)
				;
			return done + k;
		}
	}
	return len;
}

/* --- RDMA: registered memory ----------------------------------------- */

/*
 * Every node that is the target of RDMA registers one region of the
 * size its workload needs (nothing more: the chunked requests alone are
 * tens of MiB), at an address of its own and with an rkey of its own,
 * for both REMOTE_WRITE and REMOTE_READ.  It starts as the background
 * pattern bg().  Each WRITE and READ with bytes has a range of its own in
 * its target's region, a few bytes from the others: a WRITE's bytes must
 * end there, each placed once, as the request's pat(); a READ's range
 * and every gap keep the background, which is what a READ must bring
 * back.  A bitmap of placed bytes tells a byte placed twice, and, for a
 * failed WRITE, which of its bytes may have changed.
 */
#define SIM_REGION_VA(node)	((((uint64_t)(node) + 1) << 40) | 0x1000)
#define SIM_RKEY(node)		(0x52000000u + (uint32_t)(node) * 0x10001u)
/*
 * Zero-length operations have no range: their address is here, plus the
 * request's index, and their rkey bogus, since the responder must check
 * nothing of them (IBA C9-88).  The address names the request.
 */
#define SIM_NOWHERE_VA		0xdead000000000000ull

/* The background of @node's region is pat(bg_seed(node), offset ...). */
static uint32_t bg_seed(int node)
{
	return 0xb5000000u + (uint32_t)node;
}

static const char *kind_name(const struct msg_rec *m)
{
	switch (m->kind) {
	case SRD_MSG_WRITE:
		return m->imm ? "WRITE_IMM" : "WRITE";
	case SRD_MSG_READ:
		return "READ";
	default:
		return "SEND";
	}
}

/* The messages (chunks) the engine cuts an RDMA request of @len into. */
static uint32_t rdma_chunks(uint32_t len)
{
	return len ? (len - 1) / SRD_MAX_RDMA_MSG_BYTES + 1 : 1;
}

static bool bm_test(const uint8_t *map, uint64_t i)
{
	return map[i / 8] & (1u << (i % 8));
}

static void bm_set(uint8_t *map, uint64_t i)
{
	map[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* How many of the @len bits from @i are set. */
static uint64_t bm_count(const uint8_t *map, uint64_t i, uint64_t len)
{
	uint64_t n = 0, end = i + len;

	while (i != end && i % 8)
		n += bm_test(map, i++);
	for (; end - i >= 8; i += 8)
		n += (uint64_t)__builtin_popcount(map[i / 8]);
	while (i != end)
		n += bm_test(map, i++);
	return n;
}

/* Sets the @len bits from @i, which are clear; false if one was not. */
static bool bm_claim(uint8_t *map, uint64_t i, uint64_t len)
{
	uint64_t end = i + len;

	if (bm_count(map, i, len))
		return false;
	while (i != end && i % 8)
		bm_set(map, i++);
	if (end - i >= 8)
		memset(map + i / 8, 0xff, (end - i) / 8);
	i += (end - i) / 8 * 8;
	while (i != end)
		bm_set(map, i++);
	return true;
}

/* --- srd_ops --------------------------------------------------------- */

/*
 * The clock moves on a little at every reading, as a real one does during
 * a call: the engine must not assume time stands still while it works.
 * Each node's clock moves so, as its own CPU's would: a thousand nodes'
 * readings on one clock made time run ahead of every packet, as though
 * one CPU ran them all.
 */
#define SIM_CLOCK_READ_NS	300

static uint64_t node_now_ns(struct sim_node *nd)
{
	if (nd->clock_ns < nd->s->now_ns)
		nd->clock_ns = nd->s->now_ns;
	return nd->clock_ns;
}

static uint64_t o_now(void *os)
{
	struct sim_node *nd = os;

	nd->clock_ns = node_now_ns(nd) + SIM_CLOCK_READ_NS;
	return nd->clock_ns / 1000;
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

/* sim_params.links: the link the fabric's ECMP hash puts a flow on. */
static uint32_t link_of(const struct sim *s, int a, int b, uint32_t path)
{
	uint64_t h = s->p->seed ^ 0xecb1ecb1ull ^ ((uint64_t)a << 44) ^
		     ((uint64_t)b << 24) ^ path;

	return (uint32_t)(splitmix(&h) % (uint64_t)s->p->links);
}

/*
 * A netem draw correlated with the last one (netem's get_crandom()):
 * @corr_pct of the last value kept, the rest fresh; 0 to 999.
 */
static uint32_t corr_draw(struct sim *s, uint32_t *last, int corr_pct)
{
	uint32_t v = rnd_below(&s->rng, 1000);

	v = (v * (uint32_t)(100 - corr_pct) + *last * (uint32_t)corr_pct) / 100;
	*last = v;
	return v;
}

/*
 * A packet from @a to @b on @path crosses its link: false if the link
 * drops it (lost or corrupt); else *@copies doubles if it is duplicated
 * and *@delay_us is what the link adds.
 */
static bool link_shape(struct sim *s, int a, int b, uint32_t path,
		       uint32_t *copies, uint32_t *delay_us)
{
	uint32_t l = link_of(s, a, b, path);
	const struct sim_link_dir *ld = a < b ? &s->p->up[l] : &s->p->down[l];
	uint32_t *last = &s->link_reorder_last[a < b][l];

	if (rnd_below(&s->rng, 1000) < (uint32_t)ld->loss_permille) {
		s->r->pkts_dropped_net++;
		return false;
	}
	if (rnd_below(&s->rng, 1000) < (uint32_t)ld->corrupt_permille) {
		s->r->pkts_corrupted++;
		return false;
	}
	if (rnd_below(&s->rng, 1000) < (uint32_t)ld->dup_permille) {
		*copies *= 2;
		s->r->pkts_duped++;
	}
	*delay_us = ld->delay_us;
	if (ld->reorder_pct &&
	    corr_draw(s, last, ld->reorder_corr_pct) < (uint32_t)ld->reorder_pct * 10) {
		*delay_us = 0;
		s->r->pkts_reordered++;
	}
	return true;
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
	p.src_tag = (uint32_t)splitmix(&s->rng) | 1;
	switch (rnd_below(&s->rng, 3)) {
	case 0:
		p.dst_tag = srd_engine_tag(nd->eng, "forger", 6);
		break;
	case 1:
		p.dst_tag = (uint32_t)splitmix(&s->rng) | 1;
		break;
	default:
		p.dst_tag = op == SRD_WOP_HELLO ? 0 : 1;
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
	e.data = pkt_alloc(s, n);
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
	const struct srd_inbound *h = d->resp_src;
	uint32_t msg = 0, copies = 1, c, link_us = 0;

	s->r->pkts_sent++;
	if (p->forge_permille && rnd_below(&s->rng, 1000) < (uint32_t)p->forge_permille)
		forge(s, nd->id, sp->remote);
	if (d->out)
		msg = d->out->idx;
	if (d->kind == SRD_MSG_READ_RESP) {
		/* The bytes come from our region, where the READ's chunk is. */
		if (d->out || !h || h->kind != SRD_MSG_READ || h->node != nd->id ||
		    h->src != sp->remote ||
		    (uint64_t)d->payload_off + d->payload_len > h->len) {
			fail(s, "READ_RESP to %d outside its READ (msg %u): off %u len %u",
			     sp->remote, h ? h->msg : 0, d->payload_off, d->payload_len);
			return -1;
		}
		msg = h->msg;
	} else if (h || (d->out && (msg >= s->nmsgs || d->kind != s->msgs[msg].kind)) ||
		   (d->payload_len &&
		    (!d->out || d->kind == SRD_MSG_READ ||
		     (uint64_t)d->payload_off + d->payload_len > s->msgs[msg].len))) {
		fail(s, "transmit outside message %u (kind %d): off %u len %u", msg,
		     d->kind, d->payload_off, d->payload_len);
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
	if (p->links && !link_shape(s, nd->id, sp->remote, d->path, &copies, &link_us))
		return 0;
	for (c = 0; c < copies; c++) {
		e.path = d->path;
		e.len = d->hdr_len + d->payload_len;
		e.data = pkt_alloc(s, e.len);
		memcpy(e.data, d->hdr, d->hdr_len);
		if (h && d->payload_len)
			memcpy(e.data + d->hdr_len, nd->mem + h->roff + d->payload_off,
			       d->payload_len);
		else if (!h)
			pat_fill(e.data + d->hdr_len, msg, d->payload_off, d->payload_len);
		e.t_ns = node_now_ns(nd) +
			 1000ull * (path_delay_us(s, nd->id, sp->remote, d->path) + link_us +
				    rnd_below(&s->rng, p->jitter_us + 1));
		ev_push(s, e);
	}
	return 0;
}

static struct srd_inbound *in_new(struct sim_node *nd, struct sim_peer *sp,
				  uint32_t msg, uint32_t len, enum srd_msg_kind kind)
{
	struct srd_inbound *h = calloc(1, sizeof(*h));

	h->msg = msg;
	h->len = len;
	h->node = nd->id;
	h->src = sp->remote;
	h->kind = kind;
	nd->live_in++;
	return h;
}

/* @h is given back: by rx_done, rx_abort or resp_done, once. */
static void in_end(struct sim_node *nd, struct srd_inbound *h)
{
	if (--nd->live_in < 0)
		fail(nd->s, "node %d: more inbound objects given back than taken",
		     nd->id);
	free(h->buf);
	free(h);
}

/* The request with its range at @roff in @nd's region, or NULL. */
static struct msg_rec *range_find(struct sim *s, const struct sim_node *nd,
				  uint64_t roff)
{
	uint32_t lo = 0, hi = nd->nranges, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->msgs[nd->ranges[mid]].roff < roff)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nd->nranges && s->msgs[nd->ranges[lo]].roff == roff)
		return &s->msgs[nd->ranges[lo]];
	return NULL;
}

/* The kernel's check of an rkey and range: inside the region, no wrap. */
static bool rkey_ok(const struct sim_node *nd, const struct srd_rdma_info *r)
{
	uint64_t va = SIM_REGION_VA(nd->id);

	return r->rkey == SIM_RKEY(nd->id) && r->remote_addr >= va &&
	       r->remote_addr + r->rdma_len >= r->remote_addr &&
	       r->remote_addr + r->rdma_len <= va + nd->mem_len;
}

/* The bytes of the chunk at @off of a request of @len (rdma_op.c). */
static uint32_t chunk_len(uint32_t len, uint32_t off)
{
	return len - off < SRD_MAX_RDMA_MSG_BYTES ? len - off : SRD_MAX_RDMA_MSG_BYTES;
}

/*
 * The first packet of a WRITE or READ message, one chunk of a request:
 * the kernel's checks in the order docs/protocol.md gives ("Responder
 * checks"; QPN and Q_Key are done), then the simulator's own: it is a
 * chunk of a request posted to this node, as it was posted.
 */
static enum srd_rx_verdict rdma_begin(struct sim_node *nd, struct sim_peer *sp,
				      const struct srd_rx_msg_info *info,
				      struct sim_qp *qp, struct srd_inbound **in)
{
	const struct srd_rdma_info *r = &info->rdma;
	struct sim *s = nd->s;
	struct srd_inbound *h;
	struct msg_rec *m = NULL;
	uint32_t idx;

	if (r->rdma_len && !rkey_ok(nd, r))
		return SRD_RX_BAD_ACCESS;
	if (r->rdma_len)
		m = range_find(s, nd, r->remote_addr - SIM_REGION_VA(nd->id));
	else if (r->remote_addr - SIM_NOWHERE_VA < s->nmsgs)
		m = &s->msgs[r->remote_addr - SIM_NOWHERE_VA];
	if (!m || m->kind == SRD_MSG_SEND) {
		fail(s, "RDMA %s from %d at %d: addr %#llx len %u names no request to it",
		     info->kind == SRD_MSG_READ ? "READ" : "WRITE", sp->remote, nd->id,
		     (unsigned long long)r->remote_addr, r->rdma_len);
		return SRD_RX_QP_ERROR;
	}
	idx = (uint32_t)(m - s->msgs);
	if (m->kind != info->kind || m->src != sp->remote || m->dst != nd->id ||
	    (uint32_t)m->src_qp + 1 != info->src_qpn ||
	    (uint32_t)m->dst_qp + 1 != info->dst_qpn ||
	    m->addr != r->remote_addr || m->len != r->rdma_len ||
	    r->rdma_offset % SRD_MAX_RDMA_MSG_BYTES ||
	    (m->len ? r->rdma_offset >= m->len : r->rdma_offset != 0) ||
	    r->length != chunk_len(m->len, r->rdma_offset) ||
	    info->msg_len != (info->kind == SRD_MSG_WRITE ? r->length : 0) ||
	    info->has_imm != (m->imm && r->rdma_offset + r->length == m->len) ||
	    (info->has_imm && info->imm_data != idx)) {
		fail(s, "RDMA %d %d->%d: %#llx+%u, %u/%u (len %u, imm %d %u) not as %s %u",
		     info->kind, sp->remote, nd->id, (unsigned long long)r->remote_addr,
		     r->rdma_len, r->rdma_offset, r->length, info->msg_len,
		     info->has_imm, info->imm_data, kind_name(m), idx);
		return SRD_RX_QP_ERROR;
	}
	/*
	 * A WRITE with imm's last chunk, the one with the immediate, starts
	 * only once the others are in place: its receive completion says
	 * every byte is.
	 */
	if (info->has_imm && m->chunks_done != rdma_chunks(m->len) - 1) {
		fail(s, "write %u: its immediate's chunk began with %u of the other %u placed",
		     idx, m->chunks_done, rdma_chunks(m->len) - 1);
		return SRD_RX_QP_ERROR;
	}
	/* With imm it takes a receive, as a send does (its buffers unused). */
	if (info->has_imm) {
		if (qp->credits == 0)
			return SRD_RX_RNR;
		if (qp->credits > 0)
			qp->credits--;
	}
	h = in_new(nd, sp, idx, r->length, info->kind);
	h->roff = m->roff + r->rdma_offset;
	h->has_recv = info->has_imm;
	*in = h;
	return SRD_RX_ACCEPT;
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

	if (info->dst_qpn < 1 || info->dst_qpn > (uint32_t)s->p->qps)
		return SRD_RX_BAD_QPN;
	if (info->qkey != 0x1000 + info->dst_qpn)
		return SRD_RX_BAD_QKEY;
	qp = &nd->qps[info->dst_qpn - 1];
	if (info->kind != SRD_MSG_SEND)
		return rdma_begin(nd, sp, info, qp, in);
	if (qp->credits == 0)
		return SRD_RX_RNR;
	if (!info->has_imm || info->imm_data >= s->nmsgs) {
		fail(s, "message without a valid imm %u", info->imm_data);
		return SRD_RX_QP_ERROR;
	}
	m = &s->msgs[info->imm_data];
	if (m->src != sp->remote || m->dst != nd->id || m->len != info->msg_len ||
	    (uint32_t)m->src_qp + 1 != info->src_qpn || m->kind != SRD_MSG_SEND) {
		fail(s, "msg %u arrived from %d at %d len %u, sent %d->%d len %u kind %d",
		     info->imm_data, sp->remote, nd->id, info->msg_len, m->src, m->dst,
		     m->len, m->kind);
		return SRD_RX_QP_ERROR;
	}
	if (qp->credits > 0)
		qp->credits--;
	h = in_new(nd, sp, info->imm_data, info->msg_len, SRD_MSG_SEND);
	h->buf = malloc(info->msg_len + 1);
	h->has_recv = true;
	*in = h;
	return SRD_RX_ACCEPT;
}

static int o_rx_data(void *os, struct srd_inbound *h, uint32_t off,
		     const struct srd_rx_payload *pl)
{
	const uint8_t *d = (const uint8_t *)pl->pkt + pl->off;
	uint32_t len = pl->len;
	struct sim_node *nd = os;
	struct sim *s = nd->s;

	if ((uint64_t)off + len > h->len || h->kind == SRD_MSG_READ) {
		fail(s, "rx_data outside msg %u: off %u len %u of %u", h->msg, off,
		     len, h->len);
		return 0;
	}
	if (h->kind == SRD_MSG_SEND) {
		memcpy(h->buf + off, d, len);
		return 0;
	}
	/* A WRITE: into the region, each byte once. */
	if (!bm_claim(nd->written, h->roff + off, len)) {
		fail(s, "write %u: its bytes %llu..%llu placed again", h->msg,
		     (unsigned long long)(h->roff + off - s->msgs[h->msg].roff),
		     (unsigned long long)(h->roff + off - s->msgs[h->msg].roff + len - 1));
		return 0;
	}
	memcpy(nd->mem + h->roff + off, d, len);
	s->msgs[h->msg].placed += len;
	return 0;
}

/* Message @idx was delivered, of @bytes: once. */
static void delivered(struct sim *s, uint32_t idx, uint32_t bytes)
{
	struct msg_rec *m = &s->msgs[idx];

	if (++m->delivered > 1)
		fail(s, "msg %u arrived %d times", idx, m->delivered);
	s->r->delivered++;
	s->r->bytes_delivered += bytes;
	if (s->now_ns >= s->p->fair_from_us * 1000 &&
	    s->now_ns < s->p->fair_to_us * 1000)
		s->nodes[m->src].fair_bytes += bytes;
	/*
	 * Answer it: a post, not from inside the engine's upcall.  Only what
	 * completes a receive is, a SEND or a WRITE with imm: a plain WRITE
	 * or a READ is never seen by the responder's application.
	 */
	if (s->p->answer && idx < s->nrequests && m->delivered == 1 &&
	    (m->kind == SRD_MSG_SEND || m->imm)) {
		struct event e = { .type = EV_POST, .msg = s->nrequests + idx,
				   .t_ns = s->now_ns + 1000ull * s->p->answer_us };

		s->r->answers++;
		s->r->msgs++;
		ev_push(s, e);
	}
}

static void o_rx_done(void *os, struct srd_inbound *h)
{
	struct sim_node *nd = os;
	struct sim *s = nd->s;
	struct msg_rec *m = &s->msgs[h->msg];
	uint32_t i;

	switch (h->kind) {
	case SRD_MSG_SEND:
		for (i = 0; i < h->len; i++) {
			if (h->buf[i] != pat(h->msg, i)) {
				fail(s, "msg %u corrupt at byte %u", h->msg, i);
				break;
			}
		}
		delivered(s, h->msg, h->len);
		break;
	case SRD_MSG_WRITE:
		/* Delivered when its last chunk is done, every byte placed. */
		if (++m->chunks_done < rdma_chunks(m->len))
			break;
		if (m->placed != m->len)
			fail(s, "write %u: %u of its %u bytes placed when done", h->msg,
			     m->placed, m->len);
		delivered(s, h->msg, m->len);
		break;
	default:
		fail(s, "rx_done of msg %u, a READ", h->msg);
		break;
	}
	in_end(nd, h);
}

static void o_rx_abort(void *os, struct srd_inbound *h)
{
	struct sim_node *nd = os;
	struct sim_qp *qp = &nd->qps[nd->s->msgs[h->msg].dst_qp];

	/* A receive it took goes back to its QP, as the kernel would re-post it. */
	if (h->has_recv && qp->credits >= 0)
		qp->credits++;
	in_end(nd, h);
}

/*
 * Requester: bytes of a READ's response, at @off in the request.  Each
 * comes once, before the READ completes, and is what the responder's
 * region holds there: the background, as nothing writes a READ's range
 * (check_regions() makes sure of that at the end).
 */
static void o_read_data(void *os, struct srd_outbound *out, uint32_t off,
			const struct srd_rx_payload *pl)
{
	const uint8_t *d = (const uint8_t *)pl->pkt + pl->off;
	uint32_t len = pl->len;
	struct sim_node *nd = os;
	struct sim *s = nd->s;
	struct msg_rec *m = out->idx < s->nmsgs ? &s->msgs[out->idx] : NULL;
	uint64_t bad;

	if (!m || m->kind != SRD_MSG_READ || m->src != nd->id || m->done ||
	    (uint64_t)off + len > m->len) {
		fail(s, "read_data at %d outside msg %u: off %u len %u", nd->id,
		     out->idx, off, len);
		return;
	}
	if (!bm_claim(m->seen, off, len)) {
		fail(s, "read %u: its bytes %u..%u came back again", out->idx, off,
		     off + len - 1);
		return;
	}
	bad = pat_mismatch(d, bg_seed(m->dst), (uint32_t)(m->roff + off), len);
	if (bad < len) {
		fail(s, "read %u (%d<-%d, %u bytes) byte %llu is %#x, responder has %#x",
		     out->idx, m->src, m->dst, m->len,
		     (unsigned long long)(off + bad), d[bad],
		     pat(bg_seed(m->dst), (uint32_t)(m->roff + off + bad)));
		return;
	}
	m->placed += len;
}

/* Responder: the response to a READ's chunk is over, as its sender saw it. */
static void o_resp_done(void *os, struct srd_inbound *h, enum srd_comp_status st)
{
	struct sim_node *nd = os;
	struct sim *s = nd->s;
	struct msg_rec *m = &s->msgs[h->msg];

	if (h->kind != SRD_MSG_READ)
		fail(s, "resp_done of msg %u, not a READ", h->msg);
	else if (st == SRD_COMP_OK && ++m->resps_ok > rdma_chunks(m->len))
		fail(s, "read %u: %u responses went through for its %u chunks", h->msg,
		     m->resps_ok, rdma_chunks(m->len));
	in_end(nd, h);
}

/* An RDMA request completed OK: count it by kind. */
static void rdma_ok(struct sim *s, const struct msg_rec *m)
{
	if (m->kind == SRD_MSG_SEND)
		return;
	if (m->kind == SRD_MSG_READ)
		s->r->rdma_reads_ok++;
	else if (m->imm)
		s->r->rdma_writes_imm_ok++;
	else
		s->r->rdma_writes_ok++;
	if (m->len > SRD_MAX_RDMA_MSG_BYTES)
		s->r->rdma_chunked_ok++;
	s->r->rdma_bytes += m->len;
}

static void o_send_done(void *os, struct srd_outbound *out,
			enum srd_comp_status st)
{
	struct sim_node *nd = os;
	struct sim *s = nd->s;
	uint32_t idx = out->idx;
	struct msg_rec *m;

	if (idx >= s->nmsgs || s->msgs[idx].src != nd->id) {
		fail(s, "completion at %d for an unknown message", nd->id);
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
		/* A READ is delivered when its response is wholly placed. */
		if (m->kind == SRD_MSG_READ) {
			if (m->placed != m->len)
				fail(s, "read %u completed OK with %u of its %u bytes",
				     idx, m->placed, m->len);
			delivered(s, idx, m->len);
		}
		if (m->delivered != 1)
			fail(s, "msg %u completed OK but delivered %d times", idx,
			     m->delivered);
		rdma_ok(s, m);
	} else {
		s->r->failed_sends++;
	}
	/* A closed loop: the sender's next message, now. */
	if (s->p->depth && !m->is_answer && nd->next_post < nd->end_post) {
		struct event e = { .type = EV_POST, .msg = nd->next_post++,
				   .t_ns = s->now_ns };

		ev_push(s, e);
	}
}

static const struct srd_ops sim_ops = {
	.now_us = o_now, .random_u32 = o_rand, .alloc = o_alloc, .free = o_free,
	.timer_set = o_timer, .transmit = o_tx, .rx_begin = o_rx_begin,
	.rx_data = o_rx_data, .rx_done = o_rx_done, .rx_abort = o_rx_abort,
	.send_done = o_send_done, .read_data = o_read_data,
	.resp_done = o_resp_done,
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
	nd->engine_bytes = nd->live_bytes;
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

/*
 * Message @m of the workload becomes RDMA: a WRITE, a WRITE with imm or
 * a READ of the size drawn for it, or now and then of none.
 */
static void rdma_pick(struct sim *s, struct msg_rec *m)
{
	uint32_t k = rnd_below(&s->rng, 3);

	m->kind = k == 2 ? SRD_MSG_READ : SRD_MSG_WRITE;
	m->imm = k == 1;
	if (!rnd_below(&s->rng, 50))
		m->len = 0;
}

/* Message @n + @i: the answer to message @i, if it arrives. */
static void make_answer(struct sim *s, uint32_t n, uint32_t i)
{
	struct msg_rec *m = &s->msgs[i], *an = &s->msgs[n + i];

	an->out.idx = n + i;
	an->is_answer = true;
	an->src = m->dst;
	an->dst = m->src;
	an->src_qp = m->dst_qp;
	an->dst_qp = m->src_qp;
	an->len = 1 + rnd_below(&s->rng, 256);
	an->rnr_retry = 7;
	/* Answers go to QPs that may run out of receives. */
	an->expect = an->dst_qp == s->p->rnr_qp ? EXP_RNR_MAYBE : EXP_OK;
}

/*
 * Every RDMA request with bytes gets its range in its target's region,
 * in the order of the requests, 0 to 63 bytes after the one before (odd
 * addresses, and gaps that must stay untouched); then each region is
 * made, of just the size its ranges need.  The requests that must fail
 * the rkey check get their address and rkey last, against those sizes.
 */
static void rdma_layout(struct sim *s)
{
	const struct sim_params *p = s->p;
	struct sim_node *nd;
	struct msg_rec *m;
	uint64_t va;
	uint32_t k;
	int a;

	for (a = 0; a < p->nodes; a++)
		s->nodes[a].ranges = calloc(s->nrequests + 1, sizeof(uint32_t));
	for (k = 0; k < s->nrequests; k++) {
		m = &s->msgs[k];
		if (m->kind == SRD_MSG_SEND || m->bad != BAD_NONE)
			continue;
		if (!m->len) {
			m->addr = SIM_NOWHERE_VA + k;
			m->rkey = (uint32_t)splitmix(&s->rng);
			continue;
		}
		nd = &s->nodes[m->dst];
		m->roff = nd->mem_len + rnd_below(&s->rng, 64);
		nd->mem_len = m->roff + m->len;
		m->addr = SIM_REGION_VA(m->dst) + m->roff;
		m->rkey = SIM_RKEY(m->dst);
		nd->ranges[nd->nranges++] = k;
	}
	for (a = 0; a < p->nodes; a++) {
		nd = &s->nodes[a];
		if (!nd->mem_len)
			continue;
		nd->mem = malloc(nd->mem_len);
		nd->written = calloc(nd->mem_len / 8 + 1, 1);
		pat_fill(nd->mem, bg_seed(a), 0, (uint32_t)nd->mem_len);
	}
	for (k = 0; k < s->nrequests; k++) {
		m = &s->msgs[k];
		va = SIM_REGION_VA(m->dst);
		switch (m->bad) {
		case BAD_NONE:
			break;
		case BAD_RKEY:
			/* Another node's: the right address, but not its region. */
			m->rkey = SIM_RKEY((m->dst + 1) % p->nodes);
			m->addr = va;
			break;
		case BAD_BELOW:
			m->rkey = SIM_RKEY(m->dst);
			m->addr = va - 1 - rnd_below(&s->rng, m->len);
			break;
		case BAD_PAST_END:
			m->rkey = SIM_RKEY(m->dst);
			m->addr = va + s->nodes[m->dst].mem_len - rnd_below(&s->rng, m->len);
			break;
		case BAD_WRAPS:
			m->rkey = SIM_RKEY(m->dst);
			m->addr = ~0ull - rnd_below(&s->rng, m->len);
			break;
		}
	}
}

/*
 * sim_params.fanout: node @a's destinations into @dst, in the order its
 * messages take them; how many.  All-to-all starts each node at the one
 * after it, so that the nodes' first messages go to different nodes.
 */
static int pick_dests(struct sim *s, int a, int *dst)
{
	const struct sim_params *p = s->p;
	int d, k, j, t;

	for (k = 0, j = 0; j < p->nodes; j++)
		if (j != a)
			dst[k++] = j;
	d = p->fanout < 0 || p->fanout > k ? k : p->fanout;
	if (p->fanout < 0) {
		for (k = 0; k < d; k++)
			dst[k] = (a + 1 + k) % p->nodes;
		return d;
	}
	/* A partial Fisher-Yates: d of the others, drawn from the seed. */
	for (k = 0; k < d; k++) {
		j = k + (int)rnd_below(&s->rng, (uint32_t)(p->nodes - 1 - k));
		t = dst[k];
		dst[k] = dst[j];
		dst[j] = t;
	}
	return d;
}

static void make_workload(struct sim *s)
{
	const struct sim_params *p = s->p;
	uint32_t i = 0, n = 0;
	uint64_t start_ns;
	int a, k, sender, ndst = 0;
	int *dsts = p->fanout ? calloc(p->nodes, sizeof(*dsts)) : NULL;

	for (a = 0; a < p->nodes; a++)
		if (p->incast_to < 0 || a != p->incast_to)
			n += p->msgs_per_node;
	n += p->rdma_big_ops;
	if (p->stuck_qp >= 0)
		n += p->stuck_msgs;
	/* With answers, message n + i answers message i, if it arrives. */
	s->msgs = calloc(p->answer ? 2 * n : n, sizeof(*s->msgs));
	s->nmsgs = p->answer ? 2 * n : n;
	s->nrequests = n;
	for (a = 0, sender = 0; a < p->nodes; a++) {
		if (p->incast_to >= 0 && a == p->incast_to)
			continue;
		start_ns = 1000ull * p->start_stagger_us * sender++;
		s->nodes[a].next_post = i + (p->depth < p->msgs_per_node ?
					     p->depth : p->msgs_per_node);
		s->nodes[a].end_post = i + p->msgs_per_node;
		if (dsts)
			ndst = pick_dests(s, a, dsts);
		for (k = 0; k < p->msgs_per_node; k++, i++) {
			struct msg_rec *m = &s->msgs[i];
			struct event e = { .type = EV_POST, .msg = i };
			uint32_t roll = rnd_below(&s->rng, 1000);

			m->out.idx = i;
			m->src = a;
			m->dst = dsts ? dsts[k % ndst] : a;
			while (m->dst == a)
				m->dst = p->incast_to >= 0 ? p->incast_to :
					 (int)rnd_below(&s->rng, p->nodes);
			do {
				m->src_qp = (int)rnd_below(&s->rng, p->qps);
				m->dst_qp = (int)rnd_below(&s->rng, p->qps);
			} while (p->stuck_qp >= 0 && (m->src_qp == p->stuck_qp ||
						     m->dst_qp == p->stuck_qp));
			if (p->uniform_len)
				m->len = 1 + rnd_below(&s->rng, p->max_msg_bytes);
			else if ((int)rnd_below(&s->rng, 100) < p->big_pct)
				m->len = p->max_msg_bytes - rnd_below(&s->rng, p->max_msg_bytes / 8);
			else
				m->len = rnd_below(&s->rng, 3 * p->seg_bytes);
			m->rnr_retry = 7;
			m->expect = EXP_OK;
			/* Drawn only with RDMA on: runs without it stay as they were. */
			if (p->rdma_pct && (int)rnd_below(&s->rng, 100) < p->rdma_pct)
				rdma_pick(s, m);
			if (roll < (uint32_t)p->bad_dst_permille) {
				m->expect = EXP_BAD_QPN;
			} else if (roll < (uint32_t)(p->bad_dst_permille + p->bad_qkey_permille)) {
				m->expect = EXP_BAD_QKEY;
			} else if (m->kind != SRD_MSG_SEND && m->len && p->bad_rkey_permille &&
				   rnd_below(&s->rng, 1000) < (uint32_t)p->bad_rkey_permille) {
				m->expect = EXP_BAD_ACCESS;
				m->bad = (enum bad_access)(BAD_RKEY + rnd_below(&s->rng, 4));
			} else if (m->dst_qp == p->rnr_qp) {
				m->rnr_retry = (uint8_t)rnd_below(&s->rng, 8);
				/* What takes no receive must never meet RNR. */
				m->expect = m->kind == SRD_MSG_SEND || m->imm ? EXP_RNR_MAYBE :
					    EXP_OK;
			}
			e.t_ns = start_ns + 1000ull * rnd_below(&s->rng, p->post_window_us + 1);
			/* A closed loop posts the rest as these complete. */
			if (!p->depth || k < p->depth)
				ev_push(s, e);
			if (p->answer)
				make_answer(s, n, i);
		}
	}
	free(dsts);
	/* The chunked ones: node k to node k + 1, a WRITE with imm, a READ, ... */
	for (k = 0; k < p->rdma_big_ops; k++, i++) {
		struct msg_rec *m = &s->msgs[i];
		struct event e = { .type = EV_POST, .msg = i };

		m->out.idx = i;
		m->src = k % p->nodes;
		m->dst = (k + 1) % p->nodes;
		m->src_qp = (int)rnd_below(&s->rng, p->qps);
		m->dst_qp = (int)rnd_below(&s->rng, p->qps);
		m->kind = k % 2 ? SRD_MSG_READ : SRD_MSG_WRITE;
		m->imm = !(k % 2);
		/* Two chunks, the second of 1 byte to 1 MiB: memory is dear here. */
		m->len = SRD_MAX_RDMA_MSG_BYTES + 1 + rnd_below(&s->rng, 1u << 20);
		m->rnr_retry = 7;
		m->expect = EXP_OK;
		e.t_ns = 1000ull * rnd_below(&s->rng, p->post_window_us + 1);
		ev_push(s, e);
		if (p->answer)
			make_answer(s, n, i);
	}
	/* The stuck QP's sends, posted before everything else. */
	for (k = 0; p->stuck_qp >= 0 && k < p->stuck_msgs; k++, i++) {
		struct msg_rec *m = &s->msgs[i];
		struct event e = { .type = EV_POST, .msg = i };

		m->out.idx = i;
		m->src = p->incast_to == 0 ? 1 : 0;
		m->dst = p->incast_to >= 0 ? p->incast_to : !m->src;
		m->src_qp = m->dst_qp = p->stuck_qp;
		m->len = 1 + rnd_below(&s->rng, 2 * p->seg_bytes);
		m->rnr_retry = 7;
		m->expect = EXP_STUCK;
		ev_push(s, e);
		if (p->answer)
			make_answer(s, n, i);
	}
	for (i = 0; i < n; i++) {
		if (s->msgs[i].kind != SRD_MSG_SEND)
			s->r->rdma_msgs++;
		if (s->msgs[i].expect == EXP_BAD_ACCESS)
			s->r->rdma_bad_access++;
	}
	if (s->r->rdma_msgs)
		rdma_layout(s);
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

	if (m->kind != SRD_MSG_SEND) {
		req.kind = m->kind;
		req.has_imm = m->imm;
		req.len = m->kind == SRD_MSG_WRITE ? m->len : 0;
		req.rdma.remote_addr = m->addr;
		req.rdma.rkey = m->rkey;
		req.rdma.rdma_len = m->len;
		req.rdma.length = m->len;
	}
	if (m->kind == SRD_MSG_READ)
		m->seen = calloc(m->len / 8 + 1, 1);
	if (m->expect == EXP_BAD_QPN)
		req.dst_qpn = s->p->qps + 7;
	if (m->expect == EXP_BAD_QKEY)
		req.qkey ^= 0x5a5a;
	m->posted = true;
	m->post_us = s->now_ns / 1000;
	m->src_incarnation = nd->incarnation;
	rc = srd_send_msg(nd->peers[m->dst].peer, &req);
	if (rc)
		fail(s, "post of msg %u failed: %d", idx, rc);
}

/* --- the run --------------------------------------------------------- */

/*
 * sim_params.stall_max_us: when node @nd, stalled at @t_ns, runs again;
 * 0 if it is running.  Its stalls come from a generator of its own, so
 * that the schedule is the same whatever else the run draws.
 */
static uint64_t stall_end(const struct sim *s, struct sim_node *nd,
			  uint64_t t_ns)
{
	const struct sim_params *p = s->p;
	uint64_t freeze_ns = 1000ull * p->freeze_from_us;

	if (p->freeze_len_us && nd->id == p->freeze_node &&
	    t_ns >= freeze_ns && t_ns < freeze_ns + 1000ull * p->freeze_len_us)
		return freeze_ns + 1000ull * p->freeze_len_us;
	if (!p->stall_max_us)
		return 0;
	while (t_ns >= nd->stall_to_ns) {
		nd->stall_from_ns = nd->stall_to_ns + 1000ull *
			rnd_below(&nd->stall_rng, 2 * p->stall_gap_us + 1);
		nd->stall_to_ns = nd->stall_from_ns + 1000ull *
			(1 + rnd_below(&nd->stall_rng, p->stall_max_us));
	}
	return t_ns >= nd->stall_from_ns ? nd->stall_to_ns : 0;
}

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
			pkt_free(s, e->data, e->len);
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
	start = stall_end(s, nd, s->now_ns);
	if (start) {
		e->t_ns = start;
		ev_push(s, *e);
		return;
	}
	if (nd->eng && nd->peers[e->src].peer) {
		/*
		 * As the kernel hands a packet over: the engine sees the
		 * header in a buffer of its own, of no more bytes than it
		 * may read (ASan builds check), and rx_data copies the
		 * payload from the packet.
		 */
		size_t hl = e->len < SRD_HDR_MAX_BYTES ? e->len : SRD_HDR_MAX_BYTES;
		uint8_t *head = malloc(hl ? hl : 1);

		memcpy(head, e->data, hl);
		srd_peer_on_packet_head(nd->peers[e->src].peer, head, hl,
					e->len, e->data);
		free(head);
	}
	pkt_free(s, e->data, e->len);
}

/*
 * Every region at the end: a WRITE's range holds its bytes where they
 * were placed, every one if it completed OK, and the background where
 * not; a READ's range and the gaps hold the background, untouched.
 */
static void check_regions(struct sim *s)
{
	struct sim_node *nd;
	struct msg_rec *m;
	uint64_t pos, end, i, o, placed;
	uint32_t k, idx;
	bool w;
	int a;

	for (a = 0; a < s->p->nodes && !s->failed; a++) {
		nd = &s->nodes[a];
		pos = 0;
		for (k = 0; k <= nd->nranges && !s->failed; k++) {
			m = k < nd->nranges ? &s->msgs[nd->ranges[k]] : NULL;
			end = m ? m->roff : nd->mem_len;
			i = pat_mismatch(nd->mem + pos, bg_seed(a), (uint32_t)pos, end - pos);
			if (i < end - pos || bm_count(nd->written, pos, end - pos)) {
				fail(s, "node %d: region bytes %llu..%llu (no range) written",
				     a, (unsigned long long)pos,
				     (unsigned long long)end - 1);
				break;
			}
			if (!m)
				break;
			idx = nd->ranges[k];
			pos = m->roff + m->len;
			placed = bm_count(nd->written, m->roff, m->len);
			if (m->kind == SRD_MSG_WRITE && placed == m->len)
				i = pat_mismatch(nd->mem + m->roff, idx, 0, m->len);
			else if (!placed && (m->kind != SRD_MSG_WRITE ||
					     m->status != SRD_COMP_OK))
				i = pat_mismatch(nd->mem + m->roff, bg_seed(a),
						 (uint32_t)m->roff, m->len);
			else if (m->kind != SRD_MSG_WRITE || m->status == SRD_COMP_OK)
				i = 0;
			else
				/* A WRITE that failed part way: byte by byte. */
				for (i = 0, o = m->roff; i < m->len; i++, o++) {
					w = bm_test(nd->written, o);
					if (nd->mem[o] != (w ? pat(idx, (uint32_t)i) :
							   pat(bg_seed(a), (uint32_t)o)))
						break;
				}
			if (i < m->len)
				fail(s, "%s %u (%d->%d, %u B, %s, %llu in): byte %llu at %d: %#x",
				     kind_name(m), idx, m->src, m->dst,
				     m->len, srd_comp_status_name(m->status),
				     (unsigned long long)placed, (unsigned long long)i, a,
				     nd->mem[m->roff + i]);
		}
	}
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
		if (m->expect == EXP_STUCK) {
			if (m->done || m->delivered)
				fail(s, "msg %u to the QP with no receive: %s, delivered %d times",
				     i, m->done ? srd_comp_status_name(m->status) :
				     "not done", m->delivered);
			continue;
		}
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
		case EXP_BAD_ACCESS:
			ok = m->status == SRD_COMP_REMOTE_ACCESS;
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
			fail(s, "msg %u (%s %d->%d qp %d->%d, %u bytes, expect %d) completed %s",
			     i, kind_name(m), m->src, m->dst, m->src_qp, m->dst_qp, m->len,
			     m->expect, srd_comp_status_name(m->status));
		/*
		 * The responder of a READ that went through saw each chunk's
		 * response through too, unless the two lost touch after it.
		 */
		if (m->kind == SRD_MSG_READ && m->status == SRD_COMP_OK &&
		    !restart_involved && !outage_involved &&
		    m->resps_ok != rdma_chunks(m->len))
			fail(s, "read %u OK, but its responder saw %u of %u responses",
			     i, m->resps_ok, rdma_chunks(m->len));
		if (m->status != SRD_COMP_OK && m->expect != EXP_OK)
			s->r->expected_fail++;
	}
	if (!s->failed)
		check_regions(s);
}

/* Jain's index of what the senders delivered in the fair window. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* sim_params.depth: each sender's post-to-completion times; the worst. */
static void latencies(struct sim *s)
{
	const struct sim_params *p = s->p;
	uint64_t *v = calloc(p->msgs_per_node, sizeof(*v));
	uint32_t i, n;
	int a;

	for (a = 0; a < p->nodes && v; a++) {
		if (!s->nodes[a].end_post)
			continue;	/* not a sender */
		n = 0;
		for (i = s->nodes[a].end_post - p->msgs_per_node;
		     i < s->nodes[a].end_post; i++)
			if (s->msgs[i].done && s->msgs[i].status == SRD_COMP_OK)
				v[n++] = s->msgs[i].done_us - s->msgs[i].post_us;
		if (!n)
			continue;
		qsort(v, n, sizeof(*v), cmp_u64);
		if (v[(n - 1) / 2] > s->r->lat_p50_us)
			s->r->lat_p50_us = v[(n - 1) / 2];
		if (v[(n * 99 + 99) / 100 - 1] > s->r->lat_p99_us)
			s->r->lat_p99_us = v[(n * 99 + 99) / 100 - 1];
		if (v[n - 1] > s->r->lat_max_us)
			s->r->lat_max_us = v[n - 1];
	}
	free(v);
}

/*
 * Every OK message of the workload, all senders together: its post-to-
 * completion time (sim_result.msg_*); each sender's goodput, and Jain's
 * index of those (sim_result.goodput_*).
 */
static void message_times(struct sim *s)
{
	const struct sim_params *p = s->p;
	uint64_t *v = calloc(s->nrequests + 1, sizeof(*v));
	uint64_t from, to, bytes, bps;
	double sum = 0, sq = 0;
	uint32_t i, n = 0, senders = 0;
	int a;

	for (a = 0; a < p->nodes && v; a++) {
		struct sim_node *nd = &s->nodes[a];

		if (!nd->end_post)
			continue;	/* not a sender */
		from = ~0ull;
		to = 0;
		bytes = 0;
		for (i = nd->end_post - p->msgs_per_node; i < nd->end_post; i++) {
			const struct msg_rec *m = &s->msgs[i];

			if (!m->done || m->status != SRD_COMP_OK)
				continue;
			v[n++] = m->done_us - m->post_us;
			bytes += m->len;
			if (m->post_us < from)
				from = m->post_us;
			if (m->done_us > to)
				to = m->done_us;
		}
		bps = to > from ? bytes * 1000000 / (to - from) : 0;
		if (!senders++ || bps < s->r->goodput_min_bps)
			s->r->goodput_min_bps = bps;
		if (bps > s->r->goodput_max_bps)
			s->r->goodput_max_bps = bps;
		sum += (double)bps;
		sq += (double)bps * (double)bps;
	}
	if (n) {
		qsort(v, n, sizeof(*v), cmp_u64);
		s->r->msg_p50_us = v[(n - 1) / 2];
		s->r->msg_p99_us = v[((uint64_t)n * 99 + 99) / 100 - 1];
		s->r->msg_max_us = v[n - 1];
	}
	s->r->goodput_jain_permille = sq ? (uint32_t)(1000 * sum * sum / (senders * sq)) : 0;
	free(v);
}

static void fairness(struct sim *s)
{
	const struct sim_params *p = s->p;
	double sum = 0, sq = 0;
	int a, n = 0;

	for (a = 0; a < p->nodes; a++) {
		uint64_t b = s->nodes[a].fair_bytes;

		if (p->incast_to >= 0 && a == p->incast_to)
			continue;
		if (!n || b < s->r->fair_min_bytes)
			s->r->fair_min_bytes = b;
		if (b > s->r->fair_max_bytes)
			s->r->fair_max_bytes = b;
		sum += (double)b;
		sq += (double)b * (double)b;
		n++;
	}
	s->r->jain_permille = sq ? (uint32_t)(1000 * sum * sum / (n * sq)) : 0;
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
	p->stuck_qp = -1;
	p->incast_to = -1;
	p->link_bytes_per_us = 1250;	/* 10 Gb/s */
	p->buffer_bytes = 1 << 20;
	p->time_limit_us = 60ull * 1000 * 1000;
}

void sim_run(const struct sim_params *p, struct sim_result *r)
{
	uint64_t same_time_fires = 0;
	uint64_t storm_fires = 100000 + 4ull * p->nodes * p->nodes;
	struct sim s;
	uint32_t k;
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
	if (p->tx_window_pkts) {
		/* The window's limits follow it down (srd_config_check()). */
		s.cfg.tx_window_pkts = p->tx_window_pkts;
		if (s.cfg.cwnd_max_pkts > p->tx_window_pkts)
			s.cfg.cwnd_max_pkts = p->tx_window_pkts;
		if (s.cfg.cwnd_init_pkts > p->tx_window_pkts)
			s.cfg.cwnd_init_pkts = p->tx_window_pkts;
		if (s.cfg.pacing_burst_pkts > s.cfg.cwnd_max_pkts)
			s.cfg.pacing_burst_pkts = s.cfg.cwnd_max_pkts;
	}
	if (p->msg_window)
		s.cfg.msg_window = p->msg_window;
	if (p->rto_retries_max)
		s.cfg.rto_retries_max = p->rto_retries_max;
	if (p->no_drain)
		s.cfg.cc_drain_interval_us = 0;

	if (p->links < 0 || p->links > SIM_MAX_LINKS) {
		snprintf(r->why, sizeof(r->why), "links %d: 0 to %d", p->links, SIM_MAX_LINKS);
		return;
	}
	s.nodes = calloc(p->nodes, sizeof(*s.nodes));
	for (a = 0; a < p->nodes; a++) {
		struct sim_node *nd = &s.nodes[a];

		nd->s = &s;
		nd->id = a;
		nd->stall_rng = p->seed ^ (0x5851f42d4c957f2dull * (a + 1));
		nd->peers = calloc(p->nodes, sizeof(*nd->peers));
		nd->qps = calloc(p->qps, sizeof(*nd->qps));
		for (q = 0; q < p->nodes; q++) {
			nd->peers[q].s = &s;
			nd->peers[q].node = a;
			nd->peers[q].remote = q;
		}
		for (q = 0; q < p->qps; q++)
			nd->qps[q].credits = q == p->stuck_qp ? 0 :
					     q == p->rnr_qp ? 1 :
					     p->slow_rx_us && a == p->incast_to ? 1 : -1;
		node_up(&s, nd);
	}
	r->bound_bytes_per_node = (p->nodes - 1) * srd_peer_mem_bound_bytes(&s.cfg) + 4096;
	if (p->nodes > 1)
		r->idle_bytes_per_peer = (s.nodes[0].live_bytes - s.nodes[0].engine_bytes) /
					 (size_t)(p->nodes - 1);
	make_workload(&s);
	if (p->restart_node >= 0) {
		struct event e = { .type = EV_RESTART, .dst = p->restart_node,
				   .t_ns = 1000ull * p->restart_at_us };
		ev_push(&s, e);
	}
	if (p->rnr_qp >= 0 || p->slow_rx_us) {
		struct event e = { .type = EV_REFILL,
				   .t_ns = 1000ull * (p->slow_rx_us ? p->slow_rx_us :
							       p->rnr_refill_us) };
		ev_push(&s, e);
	}
	if (p->stuck_qp >= 0) {
		struct event e = { .type = EV_STUCK_CHECK, .t_ns = 1000000 };
		ev_push(&s, e);
	}

	while (!s.failed && !s.stop) {
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
			/*
			 * A storm: timers that fire again at the time they
			 * fired, far more than every peer's once or twice.
			 */
			if (t.t_ns <= s.now_ns && ++same_time_fires > storm_fires) {
				fail(&s, "timer storm at %llu us (node %d peer %d)",
				     (unsigned long long)(s.now_ns / 1000), t.node, t.remote);
				break;
			}
			if (t.t_ns > s.now_ns) {
				same_time_fires = 0;
				s.now_ns = t.t_ns;
			}
			t.t_ns = stall_end(&s, &s.nodes[t.node], s.now_ns);
			if (t.t_ns) {
				t_push(&s, t);
				continue;
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
				for (a = 0; a < p->nodes && p->rnr_qp >= 0; a++)
					if (s.nodes[a].qps[p->rnr_qp].credits < 4)
						s.nodes[a].qps[p->rnr_qp].credits++;
				for (q = 0; q < p->qps && p->slow_rx_us; q++)
					if (s.nodes[p->incast_to].qps[q].credits < 1)
						s.nodes[p->incast_to].qps[q].credits++;
				for (i = 0; i < s.nmsgs && !more; i++)
					more = !s.msgs[i].done &&
					       (s.msgs[i].posted || !s.msgs[i].is_answer);
				if (more) {
					e.t_ns += 1000ull * (p->slow_rx_us ? p->slow_rx_us :
								    p->rnr_refill_us);
					ev_push(&s, e);
				}
				break;
			case EV_STUCK_CHECK:
				/* Every 1 ms: is all but the stuck done? */
				for (i = 0; i < s.nmsgs && !more; i++)
					more = !s.msgs[i].done &&
					       s.msgs[i].expect != EXP_STUCK &&
					       (s.msgs[i].posted || !s.msgs[i].is_answer);
				s.stop = !more;
				e.t_ns += 1000000;
				ev_push(&s, e);
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
		r->tail_probes += nd->ctr_sum.tail_probes;
		r->duplicates += nd->ctr_sum.duplicates;
		r->rnr_naks += nd->ctr_sum.rnr_naks_sent;
		r->rnr_probes += nd->ctr_sum.rnr_probes;
		r->peer_restarts += nd->ctr_sum.peer_restarts;
		r->path_switches += nd->ctr_sum.path_switches;
		r->path_recoveries += nd->ctr_sum.path_recoveries;
		r->stale_drops += nd->ctr_sum.rx_drop_stale_tag;
		r->acks_piggybacked += nd->ctr_sum.acks_piggybacked;
		r->ack_reply_timeouts += nd->ctr_sum.ack_reply_timeouts;
		r->rdma_writes_in += nd->ctr_sum.rdma_writes_in;
		r->rdma_reads_in += nd->ctr_sum.rdma_reads_in;
		r->rdma_access_naks += nd->ctr_sum.rdma_access_naks;
		r->cc_drains += nd->ctr_sum.cc_drains;
		/* Destroyed, the engine gave back every inbound object. */
		if (nd->live_in)
			fail(&s, "node %d: %ld inbound objects never given back", a,
			     nd->live_in);
		free(nd->peers);
		free(nd->qps);
		free(nd->mem);
		free(nd->written);
		free(nd->ranges);
	}
	if (p->fair_to_us)
		fairness(&s);
	if (p->depth)
		latencies(&s);
	message_times(&s);
	if (!s.failed && r->peak_bytes_per_node > r->bound_bytes_per_node)
		fail(&s, "peak %zu bytes per node above the bound %zu",
		     r->peak_bytes_per_node, r->bound_bytes_per_node);
	while (s.events.len) {
		struct event e = ev_pop(&s);

		if (e.type == EV_SWITCH || e.type == EV_DELIVER)
			pkt_free(&s, e.data, e.len);
	}
	pkt_pool_drain(&s);
	free(s.events.v);
	free(s.timers.v);
	free(s.nodes);
	for (k = 0; k < s.nmsgs; k++)
		free(s.msgs[k].seen);
	free(s.msgs);
	r->ok = !s.failed;
}
