// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: unit tests, one behaviour per test, TAP output.
 * A two-engine harness (struct pair) stands in for the OS: packets are
 * captured in a queue and delivered by the test, time moves when the
 * test says so.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tag.h"
#include "../rdma_op.h"
#include "../tx.h"

static int failures_in_test;

/* The engine's summed counters; a few buffers, so one CHECK may use two. */
static const struct srd_counters *ectr(const struct srd_engine *eng)
{
	static struct srd_counters buf[4];
	static unsigned int next;
	struct srd_counters *c = &buf[next++ % 4];

	srd_engine_counters(eng, c);
	return c;
}

#define CHECK(cond, ...)                                                \
	do {                                                            \
		if (!(cond)) {                                          \
			printf("# %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                            \
			printf("\n");                                   \
			failures_in_test++;                             \
		}                                                       \
	} while (0)

/* --- the two-engine harness ----------------------------------------- */

#define MAXQ 8192

struct qpkt {
	int to;			/* 0 or 1 */
	uint32_t path;
	uint32_t len;
	uint8_t *data;
};

struct node;

#define MARKED_SEED	100000

struct pair {
	uint64_t now;
	uint32_t rnd;
	struct node *n[2];
	struct qpkt q[MAXQ];
	int qlen;
	long live_allocs;
	size_t live_bytes;
	long total_allocs;
	uint32_t max_pkt;	/* the largest datagram sent */
	bool early_fires;	/* fire_timers() also fires timers not due */
	long early_fired;
};

/*
 * This OS's objects (engine/srd_engine.h).  An inbound message is the
 * first member of a struct rxbuf (a receive) or of a struct rhandle (an
 * RDMA target), as in the kernel; an outbound one is allocated per
 * request and freed at its one send_done.
 */
struct srd_inbound {
	bool rdma;		/* in a struct rhandle, else in a struct rxbuf */
};

struct rdbuf;

struct srd_outbound {
	uint32_t seed;		/* SEND, WRITE: the payload's pattern */
	struct rdbuf *rd;	/* READ: where the response goes */
};

struct rxbuf {
	struct srd_inbound in;
	uint8_t *data;
	uint32_t len;
	uint32_t imm;
	int done, aborted;
};

struct node {
	struct pair *pr;
	int id;
	struct srd_engine *eng;
	struct srd_peer *peer;	/* to the other node */
	uint64_t deadline;
	int recvs_posted;	/* -1: unlimited */
	uint32_t qpn, qkey;
	/* Sends of seed >= MARKED_SEED: how many done, and ndone before
	 * the first and the last of them. */
	int marked_done, ndone_at_first_marked, ndone_at_last_marked;
	/* A second QP (0: none), with receives of its own: never -1 */
	uint32_t qpn2;
	int recvs_posted2;
	struct rxbuf rx[64];
	int nrx;
	int sends_done[SRD_COMP_NR];
	enum srd_comp_status last_status[64];
	int ndone;
	/* RDMA: one registered region, [MEM_VA, MEM_VA + MEM_LEN) */
	uint8_t *mem;
	uint32_t rkey;
	bool no_remote_read, no_remote_write, mem_gone;
	int live_handles;
	int resps_done[SRD_COMP_NR];
	int resp_pkts;		/* READ_RESP packets sent */
	int rdma_done;		/* incoming WRITE/READ messages completed */
	int imm_begun_after;	/* rdma_done when a WRITE_WITH_IMM began */
	uint64_t last_done_us;	/* when send_done was last called */
};

#define MEM_VA		0x100000ull
#define MEM_LEN		(40u << 20)	/* room for an operation of 3 chunks */

/* An RDMA target, WRITE's and READ's inbound object. */
struct rhandle {
	struct srd_inbound in;	/* .rdma = true */
	struct node *n;
	uint64_t addr;		/* remote_addr + rdma_offset */
	struct rxbuf *imm;	/* WRITE with imm: the receive it took */
};

/* A READ's destination. */
struct rdbuf {
	uint8_t *buf;
	uint32_t len;
};

static uint64_t h_now(void *os)
{
	return ((struct node *)os)->pr->now;
}

static uint32_t h_rand(void *os)
{
	struct pair *pr = ((struct node *)os)->pr;

	pr->rnd = pr->rnd * 1103515245u + 12345u;
	return pr->rnd ? pr->rnd : 1;
}

static void *h_alloc(void *os, size_t n)
{
	struct pair *pr = ((struct node *)os)->pr;

	pr->live_allocs++;
	pr->total_allocs++;
	pr->live_bytes += n;
	return calloc(1, n);
}

static void h_free(void *os, void *p, size_t n)
{
	struct pair *pr = ((struct node *)os)->pr;

	pr->live_allocs--;
	pr->live_bytes -= n;
	free(p);
}

static void h_timer(void *os, void *peer_os, uint64_t d)
{
	(void)peer_os;
	((struct node *)os)->deadline = d;
}

/*
 * Message payload: byte i of a message with imm x is (x * 131 + i +
 * i / 251) & 0xff, not periodic in any power of 2 (chunk offsets).
 */
static uint8_t pat(uint32_t imm, uint32_t i)
{
	return (uint8_t)(imm * 131 + i + i / 251);
}

static int h_tx(void *os, void *peer_os, const struct srd_tx_desc *d)
{
	struct node *n = os;
	struct pair *pr = n->pr;
	struct rhandle *rh = (struct rhandle *)d->resp_src;
	struct qpkt *q;
	uint32_t i, imm = d->out ? d->out->seed : 0;

	(void)peer_os;
	if (d->kind == SRD_MSG_READ_RESP && n->mem_gone)
		return SRD_TX_ABORT;
	if (pr->qlen == MAXQ)
		return -1;
	q = &pr->q[pr->qlen++];
	q->to = !n->id;
	q->path = d->path;
	q->len = d->hdr_len + d->payload_len;
	if (q->len > pr->max_pkt)
		pr->max_pkt = q->len;
	q->data = malloc(q->len + 1);
	memcpy(q->data, d->hdr, d->hdr_len);
	if (d->kind == SRD_MSG_READ_RESP) {
		n->resp_pkts++;
		memcpy(q->data + d->hdr_len,
		       n->mem + (rh->addr - MEM_VA) + d->payload_off,
		       d->payload_len);
		return 0;
	}
	for (i = 0; i < d->payload_len; i++)
		q->data[d->hdr_len + i] = pat(imm, d->payload_off + i);
	return 0;
}

static bool rkey_ok(const struct node *n, const struct srd_rx_msg_info *info)
{
	const struct srd_rdma_info *r = &info->rdma;

	if (r->rkey != n->rkey)
		return false;
	if (info->kind == SRD_MSG_WRITE ? n->no_remote_write : n->no_remote_read)
		return false;
	return r->remote_addr >= MEM_VA &&
	       r->remote_addr + r->rdma_len >= r->remote_addr &&
	       r->remote_addr + r->rdma_len <= MEM_VA + MEM_LEN;
}

static enum srd_rx_verdict h_rx_begin(void *os, void *peer_os,
				      const struct srd_rx_msg_info *info,
				      struct srd_inbound **in)
{
	struct node *n = os;
	struct rxbuf *b;
	struct rhandle *rh;

	(void)peer_os;
	if (n->qpn2 && info->dst_qpn == n->qpn2) {
		if (n->recvs_posted2 == 0 || n->nrx == 64 ||
		    info->kind != SRD_MSG_SEND)
			return SRD_RX_RNR;
		n->recvs_posted2--;
		goto take;
	}
	if (info->dst_qpn != n->qpn)
		return SRD_RX_BAD_QPN;
	if (info->qkey != n->qkey)
		return SRD_RX_BAD_QKEY;
	if (info->kind != SRD_MSG_SEND) {
		if (info->rdma.rdma_len && !rkey_ok(n, info))
			return SRD_RX_BAD_ACCESS;
		rh = calloc(1, sizeof(*rh));
		rh->in.rdma = true;
		rh->n = n;
		rh->addr = info->rdma.remote_addr + info->rdma.rdma_offset;
		if (info->has_imm) {
			if (n->recvs_posted == 0 || n->nrx == 64) {
				free(rh);
				return SRD_RX_RNR;
			}
			if (n->recvs_posted > 0)
				n->recvs_posted--;
			rh->imm = &n->rx[n->nrx++];
			rh->imm->imm = info->imm_data;
			n->imm_begun_after = n->rdma_done;
		}
		n->live_handles++;
		*in = &rh->in;
		return SRD_RX_ACCEPT;
	}
	if (n->recvs_posted == 0 || n->nrx == 64)
		return SRD_RX_RNR;
	if (n->recvs_posted > 0)
		n->recvs_posted--;
take:
	b = &n->rx[n->nrx++];
	b->data = calloc(1, info->msg_len + 1);
	b->len = info->msg_len;
	b->imm = info->imm_data;
	*in = &b->in;
	return SRD_RX_ACCEPT;
}

static int h_rx_data(void *os, struct srd_inbound *in, uint32_t off,
		     const struct srd_rx_payload *pl)
{
	struct rxbuf *b = (struct rxbuf *)in;
	struct rhandle *rh = (struct rhandle *)in;
	const uint8_t *d = (const uint8_t *)pl->pkt + pl->off;
	uint32_t len = pl->len;

	(void)os;
	if (in->rdma) {
		if (rh->n->mem_gone)
			return -1;
		memcpy(rh->n->mem + (rh->addr - MEM_VA) + off, d, len);
		return 0;
	}
	memcpy(b->data + off, d, len);
	return 0;
}

static void rhandle_end(struct rhandle *rh, bool done)
{
	if (done)
		rh->n->rdma_done++;
	if (rh->imm && done)
		rh->imm->done++;
	else if (rh->imm)
		rh->imm->aborted++;
	rh->n->live_handles--;
	free(rh);
}

static void h_rx_done(void *os, struct srd_inbound *in)
{
	(void)os;
	if (in->rdma)
		rhandle_end((struct rhandle *)in, true);
	else
		((struct rxbuf *)in)->done++;
}

static void h_rx_abort(void *os, struct srd_inbound *in)
{
	(void)os;
	if (in->rdma)
		rhandle_end((struct rhandle *)in, false);
	else
		((struct rxbuf *)in)->aborted++;
}

static void h_read_data(void *os, struct srd_outbound *out, uint32_t off,
			const struct srd_rx_payload *pl)
{
	struct rdbuf *r = out->rd;
	const uint8_t *d = (const uint8_t *)pl->pkt + pl->off;
	uint32_t len = pl->len;

	(void)os;
	if (off <= r->len && len <= r->len - off)
		memcpy(r->buf + off, d, len);
}

static void h_resp_done(void *os, struct srd_inbound *in,
			enum srd_comp_status st)
{
	struct node *n = os;

	n->resps_done[st]++;
	rhandle_end((struct rhandle *)in, false);
}

static struct srd_outbound *outbound_new(uint32_t seed, struct rdbuf *rd)
{
	struct srd_outbound *out = calloc(1, sizeof(*out));

	out->seed = seed;
	out->rd = rd;
	return out;
}

static void h_send_done(void *os, struct srd_outbound *out,
			enum srd_comp_status st)
{
	struct node *n = os;

	if (out->seed >= MARKED_SEED && n->marked_done++ == 0)
		n->ndone_at_first_marked = n->ndone;
	if (out->seed >= MARKED_SEED)
		n->ndone_at_last_marked = n->ndone;
	free(out);
	n->sends_done[st]++;
	n->last_done_us = n->pr->now;
	if (n->ndone < 64)
		n->last_status[n->ndone] = st;
	n->ndone++;
}

/* Tracing: off unless a test turns it on; events counted by type. */
static bool h_trace_on;
static int h_events[SRD_EV_NR], h_retx_events, h_bad_events;

static void h_event(void *os, void *peer_os, const struct srd_event *ev)
{
	struct node *n = os;

	(void)peer_os;
	if ((unsigned int)ev->type >= SRD_EV_NR ||
	    (ev->type == SRD_EV_DATA_TX &&
	     (ev->path >= n->eng->cfg.n_paths || ev->why > SRD_TXW_TLP)) ||
	    (ev->type == SRD_EV_NAK_RX && (ev->value < SRD_NAK_RNR ||
					   ev->value > SRD_NAK_REMOTE_ACCESS))) {
		h_bad_events++;
		return;
	}
	h_events[ev->type]++;
	if (ev->type == SRD_EV_DATA_TX && ev->why != SRD_TXW_NEW)
		h_retx_events++;
}

static const struct srd_ops h_ops = {
	.now_us = h_now, .random_u32 = h_rand, .alloc = h_alloc,
	.free = h_free, .timer_set = h_timer, .transmit = h_tx,
	.rx_begin = h_rx_begin, .rx_data = h_rx_data, .rx_done = h_rx_done,
	.rx_abort = h_rx_abort, .send_done = h_send_done,
	.read_data = h_read_data, .resp_done = h_resp_done,
	.trace_on = &h_trace_on, .event = h_event,
};

static void node_start(struct pair *pr, int id, const struct srd_config *cfg)
{
	struct node *n = pr->n[id];

	n->eng = srd_engine_create(cfg, &h_ops, n);
	n->peer = srd_peer_create(n->eng, n, "peer", 4);
	n->deadline = SRD_NO_DEADLINE;
}

static void node_stop(struct pair *pr, int id)
{
	struct node *n = pr->n[id];
	int i;

	srd_engine_destroy(n->eng);
	n->eng = NULL;
	n->peer = NULL;
	for (i = 0; i < n->nrx; i++)
		free(n->rx[i].data);
	n->nrx = 0;
}

/* Destroy both nodes' engines: nothing they allocated may be left. */
static void stop_both_no_leak(struct pair *pr)
{
	node_stop(pr, 0);
	node_stop(pr, 1);
	CHECK(pr->live_allocs == 0 && pr->live_bytes == 0,
	      "%ld allocations (%zu bytes) left after destroy",
	      pr->live_allocs, pr->live_bytes);
}

static void start_both(struct pair *pr, const struct srd_config *cfg)
{
	node_start(pr, 0, cfg);
	node_start(pr, 1, cfg);
}

static struct pair *pair_new(const struct srd_config *cfg)
{
	struct pair *pr = calloc(1, sizeof(*pr));
	int i;

	pr->now = 1000;
	pr->rnd = 42;
	for (i = 0; i < 2; i++) {
		pr->n[i] = calloc(1, sizeof(struct node));
		pr->n[i]->pr = pr;
		pr->n[i]->id = i;
		pr->n[i]->recvs_posted = -1;
		pr->n[i]->qpn = 100 + i;
		pr->n[i]->qkey = 0x1234;
		pr->n[i]->mem = calloc(1, MEM_LEN);
		pr->n[i]->rkey = 0xabc0 + i;
		node_start(pr, i, cfg);
	}
	return pr;
}

static void q_drop(struct pair *pr, int i)
{
	free(pr->q[i].data);
	memmove(&pr->q[i], &pr->q[i + 1], sizeof(pr->q[0]) * (pr->qlen - i - 1));
	pr->qlen--;
}

static void pair_free(struct pair *pr)
{
	node_stop(pr, 0);
	node_stop(pr, 1);
	while (pr->qlen)
		q_drop(pr, 0);
	free(pr->n[0]->mem);
	free(pr->n[1]->mem);
	free(pr->n[0]);
	free(pr->n[1]);
	free(pr);
}

/* Deliver queued packet i (time advances by delay_us first). */
static void q_deliver(struct pair *pr, int i, uint64_t delay_us)
{
	struct qpkt q = pr->q[i];
	struct node *n = pr->n[q.to];

	pr->q[i].data = NULL;
	memmove(&pr->q[i], &pr->q[i + 1], sizeof(pr->q[0]) * (pr->qlen - i - 1));
	pr->qlen--;
	pr->now += delay_us;
	if (n->peer)
		srd_peer_on_packet(n->peer, q.data, q.len);
	free(q.data);
}

/*
 * Fire the timers that are due; with pr->early_fires, the others too,
 * as the kernel's lazy timer does (a timer left queued for an earlier
 * deadline, or for none).
 */
static void fire_timers(struct pair *pr)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!pr->n[i]->peer)
			continue;
		if (pr->n[i]->deadline <= pr->now) {
			pr->n[i]->deadline = SRD_NO_DEADLINE;	/* fired */
			srd_peer_on_timer(pr->n[i]->peer);
		} else if (pr->early_fires) {
			pr->early_fired++;
			srd_peer_on_timer(pr->n[i]->peer);
		}
	}
}

/*
 * Run until quiet: deliver packets in order (or reversed batches when
 * `reverse`), with `drop(pkt)` deciding losses, firing timers by jumping
 * time to the next deadline when the queue is empty.
 */
typedef bool (*drop_fn)(struct pair *pr, struct qpkt *q, void *arg);

static void pair_run(struct pair *pr, uint64_t until_us, bool reverse,
		     drop_fn drop, void *arg)
{
	uint64_t d;
	int i;

	while (pr->now < until_us) {
		if (pr->qlen) {
			i = reverse ? pr->qlen - 1 : 0;
			if (drop && drop(pr, &pr->q[i], arg))
				q_drop(pr, i);
			else
				q_deliver(pr, i, 5);
			fire_timers(pr);
			continue;
		}
		d = pr->n[0]->deadline < pr->n[1]->deadline ?
		    pr->n[0]->deadline : pr->n[1]->deadline;
		if (d == SRD_NO_DEADLINE || d >= until_us)
			break;
		if (d > pr->now)
			pr->now = d;
		fire_timers(pr);
	}
}

static int send_one(struct pair *pr, int from, uint32_t len, uint32_t imm,
		    uint8_t rnr_retry)
{
	struct node *n = pr->n[from], *o = pr->n[!from];
	struct srd_send_req r = {
		.out = outbound_new(imm, NULL), .src_qpn = n->qpn,
		.dst_qpn = o->qpn, .qkey = o->qkey, .imm_data = imm,
		.has_imm = true, .len = len, .rnr_retry = rnr_retry,
	};
	int ret = srd_send_msg(n->peer, &r);

	if (ret != SRD_SEND_OK)
		free(r.out);
	return ret;
}

static bool rx_intact(const struct rxbuf *b)
{
	uint32_t i;

	for (i = 0; i < b->len; i++)
		if (b->data[i] != pat(b->imm, i))
			return false;
	return true;
}

static struct srd_config small_cfg(void)
{
	struct srd_config c;

	srd_config_default(&c);
	c.seg_bytes = 1024;
	c.n_paths = 4;
	/*
	 * The clock starts inside a drain (1000 us): the tests of other
	 * mechanisms count packets and timers that a drain would change;
	 * the drain's own tests turn it on.
	 */
	c.cc_drain_interval_us = 0;
	return c;
}

/* --- tests ----------------------------------------------------------- */

static void test_seq_wraparound(void)
{
	CHECK(srd_seq_lt(0xffffffffu, 0), "0xffffffff < 0 across the wrap");
	CHECK(srd_seq_gt(5, 0xfffffff0u), "5 > 0xfffffff0");
	CHECK(!srd_seq_lt(7, 7) && srd_seq_le(7, 7), "equality");
	CHECK(srd_seq_lt(0x7ffffffe, 0x7fffffff + 0u), "mid-range");
	CHECK(srd_seq8_lt(250, 3), "attempt 250 < 3 (8-bit wrap)");
	CHECK(!srd_seq8_lt(3, 250), "attempt 3 > 250");
}

/*
 * srd_rcv_record()'s inline next-PSN case against srd_rcv_record_any(),
 * which takes every case: the same results and the same window, over
 * runs of next PSNs broken by jumps, holes filled late and duplicates,
 * across the 32-bit wrap.
 */
static void test_rcv_record_fast_path_agrees(void)
{
	struct srd_rcv_window a, b;
	uint32_t psn = 0xfffffe00u, rnd = 12345, i, step, late;
	uint32_t in_order = 0;
	enum srd_rcv_result ra, rb;
	bool same;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (i = 0; i < 20000; i++) {
		rnd = rnd * 1103515245u + 12345u;
		step = rnd >> 16;
		if (step % 8 < 5)
			psn++;				/* the next PSN */
		else if (step % 8 == 5)
			psn += 2 + step / 8 % 140;	/* a jump */
		/* else the same PSN again, or one late: */
		late = step % 8 == 6 ? psn - step / 8 % 150 : psn;
		ra = srd_rcv_record(&a, late);
		rb = srd_rcv_record_any(&b, late);
		same = ra == rb && a.valid == b.valid &&
		       a.largest == b.largest && a.below[0] == b.below[0] &&
		       a.below[1] == b.below[1];
		CHECK(same, "psn %u: %d/%d largest %u/%u", late, ra, rb,
		      a.largest, b.largest);
		if (!same)
			return;	/* one report, not thousands */
		in_order += ra == SRD_RCV_NEW_IN_ORDER;
	}
	CHECK(in_order > 5000, "the next-PSN case taken %u times", in_order);
}

/*
 * The path selection as it was written before srd_path_select() took
 * pass 0's ACTIVE paths apart: three passes from the cursor, one rule
 * list.  The test below checks that both pick the same path, probe or
 * not, and leave the same state behind.
 */
static uint32_t ref_path_select(struct srd_peer *peer, uint64_t now_us,
				uint32_t exclude, bool *is_probe)
{
	uint32_t n = peer->eng->cfg.n_paths, i, idx, pass, best = 0;
	uint64_t best_until = SRD_NO_DEADLINE, slow_x100 = ~(uint64_t)0;
	bool may_probe = exclude == SRD_PATH_NONE && !peer->rto_backoff;
	struct srd_path *p;
	bool probe;

	if (peer->eng->cfg.path_slow_pct && peer->rtt.srtt_us)
		slow_x100 = (uint64_t)peer->rtt.srtt_us *
			    peer->eng->cfg.path_slow_pct;
	if (n == 1)
		exclude = SRD_PATH_NONE;
	for (pass = 0; pass < 3; pass++) {
		idx = peer->path_rr % n;
		for (i = 0; i < n; i++, idx = idx + 1 < n ? idx + 1 : 0) {
			p = &peer->paths[idx];
			if (idx == exclude)
				continue;
			if (p->state == SRD_PATH_AVOIDED &&
			    now_us >= p->avoid_until_us)
				p->state = SRD_PATH_PROBING;
			probe = p->state == SRD_PATH_PROBING;
			if (p->state != SRD_PATH_ACTIVE &&
			    (!probe || p->probe_in_flight))
				continue;
			if (pass == 0 && probe && !may_probe)
				continue;
			if (pass == 0 && !probe && p->srtt_us &&
			    (uint64_t)p->srtt_us * 100 > slow_x100 &&
			    p->slow_skips++ < 16)
				continue;
			if (pass == 1 && probe)
				continue;
			p->slow_skips = 0;
			peer->path_rr = idx + 1;
			*is_probe = probe;
			return idx;
		}
	}
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

static uint32_t below(uint32_t *rnd, uint32_t m)
{
	*rnd = *rnd * 1103515245u + 12345u;
	return (*rnd >> 8) % m;
}

static void test_path_select_agrees(void)
{
	static struct srd_path pa[SRD_MAX_PATHS], pb[SRD_MAX_PATHS];
	static struct srd_engine eng;
	static struct srd_peer a, b;
	uint32_t rnd = 777, i, j, n, exclude, ra, rb, probes = 0, rests = 0;
	uint64_t now_us = 1000000;
	bool qa, qb, same;

	srd_config_default(&eng.cfg);
	a.eng = b.eng = &eng;
	a.paths = pa;
	b.paths = pb;
	for (i = 0; i < 20000; i++) {
		n = 1 + below(&rnd, SRD_MAX_PATHS);
		eng.cfg.n_paths = n;
		eng.cfg.path_slow_pct = below(&rnd, 4) ? 300 : 0;
		a.rtt.srtt_us = below(&rnd, 4) ? 100 + below(&rnd, 100) : 0;
		a.rto_backoff = below(&rnd, 8) == 0;
		a.path_rr = below(&rnd, n + 1);
		for (j = 0; j < n; j++) {
			struct srd_path *p = &pa[j];

			memset(p, 0, sizeof(*p));
			p->state = below(&rnd, 4) ? SRD_PATH_ACTIVE :
				   below(&rnd, 2) ? SRD_PATH_AVOIDED :
						    SRD_PATH_PROBING;
			p->avoid_until_us = now_us - 50 + below(&rnd, 100);
			p->probe_in_flight = below(&rnd, 2);
			p->srtt_us = below(&rnd, 4) ? 50 + below(&rnd, 700) : 0;
			p->slow_skips = below(&rnd, 2) ? 14 + below(&rnd, 4) :
							 below(&rnd, 14);
		}
		exclude = below(&rnd, 3) ? SRD_PATH_NONE : below(&rnd, n);
		b.rtt = a.rtt;
		b.rto_backoff = a.rto_backoff;
		b.path_rr = a.path_rr;
		memcpy(pb, pa, n * sizeof(*pa));
		ra = srd_path_select(&a, now_us, exclude, &qa);
		rb = ref_path_select(&b, now_us, exclude, &qb);
		same = ra == rb && qa == qb && a.path_rr == b.path_rr &&
		       !memcmp(pa, pb, n * sizeof(*pa));
		CHECK(same, "round %u: path %u/%u probe %d/%d", i, ra, rb,
		      qa, qb);
		if (!same)
			return;	/* one report, not thousands */
		probes += qa;
		rests += pa[ra].state != SRD_PATH_ACTIVE || ra == exclude;
	}
	CHECK(probes > 500 && rests > 500, "probes %u, other picks %u",
	      probes, rests);
}

/*
 * The receiver encodes its ACKs from its window (srd_wire_put_ack_win());
 * they must be byte for byte what srd_wire_put_ack() writes of the same
 * fields in a struct srd_pkt, which the wire vectors check.
 */
static void test_wire_ack_encoder_agrees(void)
{
	uint8_t a[SRD_HDR_MAX_BYTES], b[SRD_HDR_MAX_BYTES];
	struct srd_rcv_window w;
	uint32_t rnd = 4242, i, na, nb, dup;
	struct srd_pkt p;
	uint8_t flags;
	bool same;

	memset(&w, 0, sizeof(w));
	srd_rcv_record(&w, 0xfffffff0u);
	for (i = 0; i < 400; i++) {
		srd_rcv_record(&w, w.largest + 1 + below(&rnd, 3));
		srd_rcv_record(&w, w.largest - below(&rnd, 130));
		flags = (below(&rnd, 2) ? SRD_WF_ACK_DUP : 0) |
			(below(&rnd, 2) ? SRD_WF_ACK_DRAIN : 0);
		dup = below(&rnd, 2) ? w.largest - 7 : 0;
		memset(a, 0xee, sizeof(a));
		memset(b, 0xee, sizeof(b));
		na = srd_wire_put_ack_win(a, 0xaabbccdd, 0x11223344, flags, &w,
					  i * 1000003u, dup);
		memset(&p, 0, sizeof(p));
		p.src_tag = 0xaabbccdd;
		p.dst_tag = 0x11223344;
		p.flags = flags;
		p.ack_psn = w.largest;
		p.ack_delay_us = i * 1000003u;
		srd_rcv_sack(&w, p.sack);
		p.dup_psn = dup;
		nb = srd_wire_put_ack(b, &p);
		same = na == nb && !memcmp(a, b, sizeof(a));
		CHECK(same, "ack %u, flags %#x: %u/%u bytes", i, flags, na, nb);
		if (!same)
			return;	/* one report, not hundreds */
	}
}

/*
 * srd_cc_drain_ack()'s inline case (no drain asked, none under way)
 * against srd_cc_drain_ack_any(), which takes every case: the same
 * answer and the same state, from random states and ACKs.
 */
static void test_cc_drain_fast_path_agrees(void)
{
	struct srd_cc a, b;
	struct srd_config c;
	uint32_t rnd = 99, i, fast = 0;
	uint64_t now_us;
	bool asked, ra, rb, same;

	srd_config_default(&c);
	for (i = 0; i < 5000; i++) {
		memset(&a, 0, sizeof(a));
		now_us = 1000000 + below(&rnd, 1000000);
		a.cwnd = 64 * SRD_CWND_ONE;
		a.drain_start_us = below(&rnd, 2) ? now_us - below(&rnd, 9000) :
						   0;
		a.drain_last_us = below(&rnd, 2) ? now_us - below(&rnd, 20000) :
						   0;
		a.drain_cwnd = a.drain_start_us ? c.cwnd_min_256ths : 0;
		a.drain_sampled = below(&rnd, 2);
		asked = below(&rnd, 2);
		c.cc_target_us = below(&rnd, 4) ? 0 : 50;
		b = a;
		fast += !asked && !a.drain_start_us;
		ra = srd_cc_drain_ack(&a, &c, asked, now_us);
		rb = srd_cc_drain_ack_any(&b, &c, asked, now_us);
		same = ra == rb && !memcmp(&a, &b, sizeof(a));
		CHECK(same, "round %u: %d/%d", i, ra, rb);
		if (!same)
			return;	/* one report, not thousands */
	}
	CHECK(fast > 500 && fast < 4500, "the inline case %u times", fast);
}

static void test_sack_bitmap(void)
{
	struct srd_rcv_window w;
	uint32_t base = 0xffffffc0u, i;
	uint8_t sack[SRD_SACK_WINDOW_PKTS / 8] = { 0 };

	memset(&w, 0, sizeof(w));
	CHECK(srd_rcv_record(&w, base) == SRD_RCV_NEW_IN_ORDER, "first");
	CHECK(srd_rcv_record(&w, base + 1) == SRD_RCV_NEW_IN_ORDER, "next");
	CHECK(srd_rcv_record(&w, base + 1) == SRD_RCV_DUPLICATE, "dup of largest");
	CHECK(srd_rcv_record(&w, base + 100) == SRD_RCV_NEW_OUT_OF_ORDER,
	      "jump across the 32-bit wrap");
	CHECK(srd_rcv_has(&w, base) && srd_rcv_has(&w, base + 1), "kept after shift");
	CHECK(!srd_rcv_has(&w, base + 50), "hole");
	CHECK(srd_rcv_record(&w, base + 50) == SRD_RCV_NEW_OUT_OF_ORDER, "fill hole");
	CHECK(srd_rcv_record(&w, base + 50) == SRD_RCV_DUPLICATE, "dup in bitmap");
	/* The bitmap covers exactly 128 below the largest. */
	CHECK(srd_rcv_record(&w, base + 100 + 128) == SRD_RCV_NEW_OUT_OF_ORDER, "far");
	CHECK(srd_rcv_has(&w, base + 100), "largest - 128 still covered");
	CHECK(!srd_rcv_has(&w, base + 50), "largest - 178 no longer covered");
	CHECK(srd_rcv_record(&w, base + 99) == SRD_RCV_TOO_OLD, "below window");
	CHECK(srd_rcv_record(&w, base + 100 + 128 + 1000) == SRD_RCV_NEW_OUT_OF_ORDER,
	      "shift beyond the window");
	for (i = 1; i <= 128; i++)
		CHECK(!srd_rcv_has(&w, base + 1228 - i), "cleared after big shift: %u", i);
	CHECK(srd_sack_covers(10, sack, 10), "ack_psn itself");
	CHECK(!srd_sack_covers(10, sack, 11), "above ack_psn");
	/* The wire's bytes: bit i of the map is byte i / 8, bit i % 8. */
	memset(&w, 0, sizeof(w));
	srd_rcv_record(&w, 1000);
	for (i = 0; i < 128; i += 9)
		srd_rcv_record(&w, 999 - i);
	srd_rcv_sack(&w, sack);
	for (i = 0; i < 128; i++)
		CHECK(!!(sack[i / 8] & (1u << (i % 8))) == (i % 9 == 0) &&
		      srd_sack_covers(1000, sack, 999 - i) == (i % 9 == 0),
		      "sack bit %u", i);
}

static void test_wire_roundtrip_and_rejects(void)
{
	uint8_t b[SRD_HDR_MAX_BYTES + 1024];
	struct srd_pkt p, q;
	uint32_t n;

	memset(&p, 0, sizeof(p));
	p.src_tag = 0xaabbccdd;
	p.dst_tag = 0x11223344;
	p.psn = 0xfffffffe;
	p.msg_id = 9;
	p.msg_base = 7;
	p.dst_qpn = 0xabcdef;
	p.src_qpn = 0x12;
	p.qkey = 0x80000001;
	p.imm_data = 0xdeadbeef;
	p.msg_len = 3000;
	p.offset = 2048;
	p.seg_bytes = 1024;
	p.attempt = 3;
	p.path = 63;
	p.flags = SRD_WF_DATA_HAS_IMM;
	n = srd_wire_put_data(b, &p);
	CHECK(n == 52 && b[0] == SRD_WIRE_VERSION && b[1] == SRD_WOP_DATA && b[3] == 13,
	      "data header %u bytes, words %u", n, b[3]);
	memset(b + n, 0x5a, 952);
	CHECK(srd_wire_parse(b, n + 952, &q) == 0, "parse data");
	CHECK(q.psn == p.psn && q.msg_id == 9 && q.msg_base == 7 &&
	      q.dst_qpn == 0xabcdef && q.qkey == p.qkey && q.imm_data == p.imm_data &&
	      q.msg_len == 3000 && q.offset == 2048 && q.seg_bytes == 1024 &&
	      q.attempt == 3 && q.path == 63 && q.payload_len == 952 &&
	      q.src_tag == p.src_tag && q.dst_tag == p.dst_tag, "fields");
	CHECK(srd_wire_parse(b, n + 951, &q) == SRD_PARSE_FIELD, "payload length must match");
	b[0] = 1;	/* version 1 had public epochs: never accepted */
	CHECK(srd_wire_parse(b, n + 952, &q) == SRD_PARSE_VERSION, "version");
	b[0] = SRD_WIRE_VERSION;
	b[3] = 12;
	CHECK(srd_wire_parse(b, n + 952, &q) == SRD_PARSE_HDR_LEN, "hdr too short");
	b[3] = 14;	/* a longer header: the extra word is skipped */
	CHECK(srd_wire_parse(b, n + 952, &q) == SRD_PARSE_FIELD, "extension eats payload");
	CHECK(srd_wire_parse(b, n + 956, &q) == 0 && q.hdr_len * 4 == 56 &&
	      q.payload_len == 952, "extension skipped");
	b[3] = 13;
	b[1] = 1;
	CHECK(srd_wire_parse(b, n, &q) == SRD_PARSE_OPCODE, "UD opcode is not SRD");
	b[1] = SRD_WOP_DATA;
	CHECK(srd_wire_parse(b, 3, &q) == SRD_PARSE_SHORT, "short");
	CHECK(srd_wire_parse(b, 40, &q) == SRD_PARSE_SHORT, "truncated header");

	memset(&p, 0, sizeof(p));
	p.src_tag = 5;
	p.dst_tag = 6;
	p.ack_psn = 77;
	p.ack_delay_us = 12;
	p.sack[0] = 0x81;
	p.sack[15] = 0x80;
	n = srd_wire_put_ack(b, &p);
	CHECK(n == 40 && srd_wire_parse(b, n, &q) == 0 && q.ack_psn == 77 &&
	      q.ack_delay_us == 12 && !memcmp(q.sack, p.sack, 16), "ack roundtrip");
	CHECK(srd_sack_covers(77, q.sack, 76) && srd_sack_covers(77, q.sack, 69) &&
	      srd_sack_covers(77, q.sack, 77 - 128) && !srd_sack_covers(77, q.sack, 75),
	      "sack bit order");
	p.psn = 3;
	p.msg_id = 4;
	p.attempt = 1;
	p.nak_reason = SRD_NAK_RNR;
	n = srd_wire_put_nak(b, &p);
	CHECK(n == 24 && srd_wire_parse(b, n, &q) == 0 && q.nak_reason == SRD_NAK_RNR &&
	      q.msg_id == 4 && q.attempt == 1, "nak roundtrip");
	b[21] = 9;
	CHECK(srd_wire_parse(b, n, &q) == SRD_PARSE_FIELD, "unknown nak reason");
	p.dst_tag = 0;
	p.challenge = 0xc4a11e9e;
	p.echo = 0xec40ec40;
	n = srd_wire_put_hello(b, &p);
	CHECK(n == 20 && srd_wire_parse(b, n, &q) == 0 && q.dst_tag == 0 &&
	      q.challenge == 0xc4a11e9e && q.echo == 0xec40ec40 &&
	      b[12] == 0xc4 && b[19] == 0x40, "hello, its challenge and echo");
	CHECK(srd_wire_parse(b, 12, &q) == SRD_PARSE_SHORT, "a hello cut to 12 bytes");
	p.challenge = p.echo = 0;
	p.dst_tag = 6;
	n = srd_wire_put_nak(b, &p);
	CHECK(srd_wire_parse(b, n, &q) == 0 && !q.challenge && !q.echo,
	      "no challenge or echo but in a hello");
	p.dst_tag = 0;
	n = srd_wire_put_ack(b, &p);
	CHECK(srd_wire_parse(b, n, &q) == SRD_PARSE_FIELD, "ack needs dst_tag");
}

/*
 * The sender encodes its DATA headers from the message itself
 * (srd_wire_put_msg()); they must be byte for byte what the encoders of
 * a struct srd_pkt write, which the wire vectors check.
 */
static void test_wire_msg_encoder_agrees(void)
{
	static const enum srd_msg_kind kinds[] = {
		SRD_MSG_SEND, SRD_MSG_WRITE, SRD_MSG_READ, SRD_MSG_READ_RESP,
	};
	uint8_t a[SRD_HDR_MAX_BYTES], b[SRD_HDR_MAX_BYTES];
	static struct srd_peer peer;
	struct srd_tx_msg m;
	struct srd_pkt p;
	uint32_t i, na, nb;

	peer.local_tag = 0xaabbccdd;
	peer.remote_tag = 0x11223344;
	peer.msg_base = 0xfffffff0;
	for (i = 0; i < 2 * sizeof(kinds) / sizeof(*kinds); i++) {
		memset(&m, 0, sizeof(m));
		m.kind = kinds[i / 2];
		m.msg_id = 0xfffffff3;
		m.dst_qpn = 0xabcdef;
		m.src_qpn = 0x123456;
		m.qkey = 0x80000001;
		m.imm_data = 0xdeadbeef;
		m.has_imm = i & 1;
		m.len = 3000;
		m.seg_bytes = 1024;
		m.attempt = 5;
		m.rdma.remote_addr = 0x0102030405060708ull;
		m.rdma.rkey = 0x99;
		m.rdma.rdma_len = 8000;
		m.rdma.rdma_offset = 100;
		m.rdma.length = 3000;
		m.req_msg_id = 0x77665544;
		m.req_attempt = 2;
		memset(a, 0xee, sizeof(a));
		memset(b, 0xee, sizeof(b));
		na = srd_wire_put_msg(a, &peer, &m, 0x80000000, 2048,
				      SRD_WF_DATA_ACK_NOW, 63);

		memset(&p, 0, sizeof(p));
		p.src_tag = peer.local_tag;
		p.dst_tag = peer.remote_tag;
		p.psn = 0x80000000;
		p.msg_id = m.msg_id;
		p.msg_base = peer.msg_base;
		p.dst_qpn = m.dst_qpn;
		p.src_qpn = m.src_qpn;
		p.qkey = m.qkey;
		p.imm_data = m.has_imm ? m.imm_data : 0;
		p.msg_len = m.len;
		p.offset = 2048;
		p.seg_bytes = (uint16_t)m.seg_bytes;
		p.attempt = m.attempt;
		p.path = 63;
		p.flags = SRD_WF_DATA_ACK_NOW;
		p.rdma = m.rdma;
		p.req_msg_id = m.req_msg_id;
		p.req_attempt = m.req_attempt;
		switch (m.kind) {
		case SRD_MSG_WRITE:
			nb = srd_wire_put_rdma(b, &p, SRD_WOP_WRITE);
			break;
		case SRD_MSG_READ:
			nb = srd_wire_put_rdma(b, &p, SRD_WOP_READ_REQ);
			break;
		case SRD_MSG_READ_RESP:
			nb = srd_wire_put_resp(b, &p);
			break;
		default:
			nb = srd_wire_put_data(b, &p);
			break;
		}
		CHECK(na == nb && !memcmp(a, b, sizeof(a)),
		      "kind %d imm %u: the message's header is the packet's",
		      (int)m.kind, i & 1);
	}
}

/* The UD header: what the kernel's UD path sends and parses. */
static void test_ud_header_roundtrip_and_rejects(void)
{
	struct srd_ud_hdr h = {
		.opcode = SRD_OP_UD_SEND_WITH_IMM, .flags = SRD_WF_UD_SOLICITED,
		.dst_qpn = 0xabcdef, .src_qpn = 0x123456, .qkey = 0x80000011,
		.imm_data = 0xdeadbeef,
	}, q;
	static const uint8_t want[SRD_HDR_UD_BYTES] = {
		SRD_WIRE_VERSION, 2, 1, 6, 0, 0xab, 0xcd, 0xef, 0, 0x12, 0x34, 0x56,
		0x80, 0, 0, 0x11, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0,
	};
	uint8_t b[64];
	uint32_t n;

	memset(b, 0xee, sizeof(b));
	n = srd_wire_put_ud(b, &h);
	CHECK(n == SRD_HDR_UD_BYTES && !memcmp(b, want, n), "ud layout");
	CHECK(srd_wire_parse_ud(b, 30, &q) == 0 && q.hdr_len == 24 &&
	      q.opcode == h.opcode && q.flags == h.flags &&
	      q.dst_qpn == h.dst_qpn && q.src_qpn == h.src_qpn &&
	      q.qkey == h.qkey && q.imm_data == h.imm_data, "ud roundtrip");
	CHECK(!srd_wire_is_transport(b), "ud is not the engine's");
	h.opcode = SRD_OP_UD_SEND;
	n = srd_wire_put_ud(b, &h);
	CHECK(srd_get_be32(b + 16) == 0 && srd_wire_parse_ud(b, n, &q) == 0 &&
	      q.imm_data == 0, "no immediate without the opcode");
	/* A receiver ignores flags and reserved bytes it does not know. */
	b[2] = 0xff;
	b[20] = 0x55;
	b[4] = 0x7f;
	CHECK(srd_wire_parse_ud(b, n, &q) == 0 && q.flags == SRD_WF_UD_SOLICITED &&
	      q.dst_qpn == 0xabcdef, "unknown bits ignored, qpn masked");
	b[3] = 8;
	CHECK(srd_wire_parse_ud(b, 40, &q) == 0 && q.hdr_len == 32,
	      "longer header skipped");
	CHECK(srd_wire_parse_ud(b, 31, &q) == SRD_PARSE_SHORT, "header past the end");
	b[3] = 5;
	CHECK(srd_wire_parse_ud(b, 40, &q) == SRD_PARSE_HDR_LEN, "header too short");
	b[3] = 6;
	CHECK(srd_wire_parse_ud(b, 23, &q) == SRD_PARSE_SHORT, "short datagram");
	b[0] = SRD_WIRE_VERSION - 1;
	CHECK(srd_wire_parse_ud(b, 24, &q) == SRD_PARSE_VERSION, "version");
	b[0] = SRD_WIRE_VERSION;
	b[1] = 3;
	CHECK(srd_wire_parse_ud(b, 24, &q) == SRD_PARSE_OPCODE, "opcode 3");
	b[1] = SRD_WOP_DATA;
	CHECK(srd_wire_parse_ud(b, 24, &q) == SRD_PARSE_OPCODE &&
	      srd_wire_is_transport(b), "SRD opcodes are the engine's");
	b[1] = SRD_WOP_LAST + 1;
	CHECK(!srd_wire_is_transport(b), "past the last SRD opcode");
}

static void test_rto_estimator(void)
{
	struct srd_config c;
	struct srd_rtt r;
	int i;

	srd_config_default(&c);
	srd_rtt_init(&r, &c);
	CHECK(r.rto_us == c.rto_init_us, "initial rto %u", r.rto_us);
	srd_rtt_sample(&r, &c, 100, 1);
	CHECK(r.srtt_us == 100 && r.rttvar_us == 50 && r.rto_us == 300,
	      "first sample: srtt %u rttvar %u rto %u", r.srtt_us, r.rttvar_us, r.rto_us);
	for (i = 0; i < 200; i++)
		srd_rtt_sample(&r, &c, 100, 2 + i);
	CHECK(r.srtt_us == 100 && r.rto_us == c.rto_min_us,
	      "steady 100us: srtt %u rto %u (floor %u)", r.srtt_us, r.rto_us, c.rto_min_us);
	srd_rtt_sample(&r, &c, 1000, 300);
	CHECK(r.srtt_us == 212 && r.rto_us > 1000, "spike: srtt %u rto %u", r.srtt_us, r.rto_us);
	CHECK(r.min_us == 100, "min rtt %u", r.min_us);
	CHECK(srd_rto_backed_off(&r, &c, 1) == 2 * r.rto_us, "backoff x2");
	CHECK(srd_rto_backed_off(&r, &c, 40) == c.rto_max_us, "backoff capped");
	srd_rtt_sample(&r, &c, 4000000, 400);
	CHECK(r.rto_us == c.rto_max_us, "ceiling %u", r.rto_us);
}

/*
 * The target's queue is cc_target_queue_us or cc_target_rtt_mult minimum
 * RTTs, whichever is more (flow scaling off, tested below): on a path
 * whose base RTT is 2 ms, a standing delay of 5.5 ms is within the target
 * (2 + 2 x 2 ms), while with the multiple off (2 + 2 ms) it is a queue; on
 * a 100 us path the fixed 2 ms still rules (100 + 2000: 2300 us is above
 * it).
 */
static void test_cc_target_scales_with_min_rtt(void)
{
	struct srd_config c;
	struct srd_rtt r;
	struct srd_cc cc;
	uint32_t mult, w0;

	srd_config_default(&c);
	CHECK(c.cc_target_queue_us == 2000 && c.cc_target_rtt_mult == 2,
	      "defaults %u us, %u RTTs", c.cc_target_queue_us, c.cc_target_rtt_mult);
	c.cc_fs_range_us = 0;
	for (mult = 0; mult <= 2; mult += 2) {
		c.cc_target_rtt_mult = mult;
		srd_rtt_init(&r, &c);
		srd_rtt_sample(&r, &c, 2000, 1);
		srd_cc_init(&cc, &c);
		w0 = cc.cwnd;
		srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 5500, 10);	/* a window of one */
		if (mult)
			CHECK(cc.cwnd > w0, "x%u: 5.5 ms on a 2 ms path grows (%u -> %u)",
			      mult, w0, cc.cwnd);
		else
			CHECK(cc.cwnd < w0, "x%u: 5.5 ms on a 2 ms path cuts (%u -> %u)",
			      mult, w0, cc.cwnd);
	}
	srd_rtt_init(&r, &c);
	srd_rtt_sample(&r, &c, 100, 1);
	srd_cc_init(&cc, &c);
	w0 = cc.cwnd;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 2300, 10);
	CHECK(cc.cwnd < w0, "x2: 2.3 ms on a 100 us path cuts (%u -> %u)", w0, cc.cwnd);
	c.cc_target_rtt_mult = 65;
	CHECK(srd_config_validate(&c) < 0, "a multiple over 64 is refused");
}

/*
 * A configuration that breaks a rule is refused with the rule, naming
 * its fields (the kernel logs it): the defaults break none, rto_min_us
 * above rto_max_us breaks the RTO rule, a window not a power of 2 its.
 */
static void test_config_check_names_the_rule(void)
{
	struct srd_config c;
	const char *rule;

	srd_config_default(&c);
	CHECK(!srd_config_check(&c) && srd_config_validate(&c) == 0, "the defaults pass");
	c.rto_min_us = c.rto_max_us + 1;
	rule = srd_config_check(&c);
	CHECK(rule && !strncmp(rule, "rto_min_us: ", 12) && srd_config_validate(&c) < 0,
	      "rto_min_us above rto_max_us: %s", rule ? rule : "(none)");
	srd_config_default(&c);
	c.msg_window = 48;
	rule = srd_config_check(&c);
	CHECK(rule && !strncmp(rule, "msg_window: ", 12), "msg_window 48: %s",
	      rule ? rule : "(none)");
}

/*
 * cc_target_us: one target for every peer, whatever its minimum RTT.  Two
 * flows through one queue, one that measured the base RTT (100 us) and a
 * latecomer that took a standing queue for it (8 ms): at 2.5 ms of delay
 * both grow under a 3 ms target, at 4 ms both cut.  By their own minimum
 * RTTs the first would cut at 2.5 ms and the latecomer grow at 4 ms,
 * which is how the latecomer starves the other.
 */
static void test_cc_fixed_target(void)
{
	static const uint32_t min_rtt[] = { 100, 8000 };
	struct srd_config c;
	struct srd_rtt r;
	struct srd_cc cc;
	uint32_t i, w0;

	srd_config_default(&c);
	CHECK(c.cc_target_us == 0, "off by default (%u)", c.cc_target_us);
	c.cc_fs_range_us = 0;		/* the targets below assume it */
	for (i = 0; i < 2; i++) {
		srd_rtt_init(&r, &c);
		srd_rtt_sample(&r, &c, min_rtt[i], 1);
		srd_cc_init(&cc, &c);
		w0 = cc.cwnd;
		srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, i ? 9000 : 2500, 10);
		CHECK(i ? cc.cwnd > w0 : cc.cwnd < w0,
		      "own min %u us, no fixed target: %s (%u -> %u)", min_rtt[i],
		      i ? "9 ms grows" : "2.5 ms cuts", w0, cc.cwnd);
	}
	c.cc_target_us = 3000;
	CHECK(srd_config_validate(&c) == 0, "3 ms is a valid target");
	for (i = 0; i < 2; i++) {
		srd_rtt_init(&r, &c);
		srd_rtt_sample(&r, &c, min_rtt[i], 1);
		srd_cc_init(&cc, &c);
		w0 = cc.cwnd;
		srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 2500, 10);
		CHECK(cc.cwnd > w0, "min %u us: 2.5 ms under a 3 ms target grows (%u -> %u)",
		      min_rtt[i], w0, cc.cwnd);
		srd_cc_init(&cc, &c);
		w0 = cc.cwnd;
		srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 4000, 10);
		CHECK(cc.cwnd < w0, "min %u us: 4 ms over a 3 ms target cuts (%u -> %u)",
		      min_rtt[i], w0, cc.cwnd);
	}
	c.cc_target_us = SRD_CC_TARGET_MAX_US + 1;
	CHECK(srd_config_validate(&c) < 0, "a target over a second is refused");
}

/*
 * Flow scaling: the whole range at a window of one packet, nothing from
 * 64 on, less and less between.  Two flows through one queue with the
 * same minimum RTT, at 16 and at 2 packets: a standing delay between
 * their targets cuts the larger and grows the smaller.
 */
static void test_cc_flow_scaling(void)
{
	static const uint32_t wins[] = { 1, 2, 4, 16, 63, 64, 512, 0 };
	uint32_t i, w0, last = ~0u, t16 = 0, t2 = 0;
	struct srd_config c;
	struct srd_rtt r;
	struct srd_cc cc;

	srd_config_default(&c);
	CHECK(c.cc_fs_range_us == 2000, "default range %u us", c.cc_fs_range_us);
	c.cc_target_rtt_mult = 0;
	srd_rtt_init(&r, &c);
	srd_rtt_sample(&r, &c, 100, 1);
	for (i = 0; wins[i]; i++) {
		uint32_t lo = 0, hi = 20000, mid;

		/*
		 * The target: the most standing delay that does not cut (a
		 * cut rounds to nothing within 1/800 of the target).
		 */
		while (lo + 1 < hi) {
			mid = (lo + hi) / 2;
			srd_cc_init(&cc, &c);
			cc.cwnd = wins[i] * SRD_CWND_ONE;
			w0 = cc.cwnd;
			srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, mid, 10);
			if (cc.cwnd < w0 || (w0 == SRD_CWND_ONE && cc.cwnd == w0))
				hi = mid;
			else
				lo = mid;
		}
		if (wins[i] == 1)
			CHECK(lo == 100 + 2000 + 2000, "1 packet: target %u", lo);
		if (wins[i] >= 64)
			CHECK(lo >= 100 + 2000 && lo <= 100 + 2000 + 3,
			      "%u packets: target %u", wins[i], lo);
		CHECK(lo <= last, "%u packets: target %u, above %u", wins[i], lo, last);
		if (wins[i] == 2)
			t2 = lo;
		if (wins[i] == 16)
			t16 = lo;
		last = lo;
	}
	CHECK(t2 > t16 + 500, "2 packets' target %u, 16's %u", t2, t16);
	srd_cc_init(&cc, &c);
	cc.cwnd = 16 * SRD_CWND_ONE;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, (t2 + t16) / 2, 10);
	CHECK(cc.cwnd < 16 * SRD_CWND_ONE, "the larger cuts (%u)", cc.cwnd);
	srd_cc_init(&cc, &c);
	cc.cwnd = 2 * SRD_CWND_ONE;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, (t2 + t16) / 2, 10);
	CHECK(cc.cwnd > 2 * SRD_CWND_ONE, "the smaller grows (%u)", cc.cwnd);
	c.cc_fs_range_us = SRD_CC_TARGET_MAX_US + 1;
	CHECK(srd_config_validate(&c) < 0, "a range over a second is refused");
}

/*
 * The drain (cc.c): a receiver's ACKs ask for it in the first 1/16 of
 * each interval; the first that asks holds the sender's window at its
 * floor, and the drain ends at an ACK that no longer asks once a packet
 * sent since it began has come back; one drain per sixteenth of an
 * interval.
 */
static void test_cc_drain(void)
{
	struct srd_engine eng = { .drain_soon_us = 0 };
	struct srd_config c;
	struct srd_cc cc;
	uint64_t t = 5000000;		/* an interval's start */

	srd_config_default(&c);
	eng.cfg = c;
	CHECK(c.cc_drain_interval_us == 1000000, "1 s by default (%u)",
	      c.cc_drain_interval_us);
	CHECK(srd_cc_drain_asks(&eng, t) && srd_cc_drain_asks(&eng, t + 62499) &&
	      !srd_cc_drain_asks(&eng, t + 62500) && !srd_cc_drain_asks(&eng, t - 1),
	      "the receiver asks in [0, 62.5 ms) of each second");
	/* A newcomer: a drain of as long, an eighth of an interval on. */
	srd_cc_drain_newcomer(&eng, t + 300000);
	CHECK(!srd_cc_drain_asks(&eng, t + 424999) &&
	      srd_cc_drain_asks(&eng, t + 425000) &&
	      srd_cc_drain_asks(&eng, t + 487499) &&
	      !srd_cc_drain_asks(&eng, t + 487500),
	      "a newcomer's drain in [425, 487.5) ms");
	eng.drain_soon_us = 0;
	srd_cc_init(&cc, &c);
	cc.cwnd = 40 * SRD_CWND_ONE;
	CHECK(!srd_cc_drain_ack(&cc, &c, false, t), "an ACK that does not ask");
	CHECK(srd_cc_drain_ack(&cc, &c, true, t + 10), "one that does: a drain");
	CHECK(srd_cc_cwnd(&cc) == c.cwnd_min_256ths && srd_cc_window_pkts(&cc) == 1,
	      "window %u/256 while it lasts", srd_cc_cwnd(&cc));
	CHECK(!srd_cc_drain_ack(&cc, &c, true, t + 20), "no second at once");
	srd_cc_drain_sample(&cc, t + 5);	/* sent before it began */
	CHECK(!srd_cc_drain_ack(&cc, &c, false, t + 30) &&
	      srd_cc_cwnd(&cc) == c.cwnd_min_256ths,
	      "an older packet's sample does not end it");
	srd_cc_drain_sample(&cc, t + 15);
	CHECK(srd_cc_cwnd(&cc) == c.cwnd_min_256ths,
	      "a newer one's does not while the receiver still asks");
	srd_cc_drain_ack(&cc, &c, true, t + 40);
	CHECK(srd_cc_cwnd(&cc) == c.cwnd_min_256ths, "still asked");
	srd_cc_drain_ack(&cc, &c, false, t + 62600);
	CHECK(srd_cc_window_pkts(&cc) == 40, "over: the window is cwnd again (%u)",
	      srd_cc_window_pkts(&cc));
	CHECK(srd_cc_drain_ack(&cc, &c, true, t + 125000),
	      "a newcomer's, an eighth of an interval after the interval's");
	srd_cc_drain_sample(&cc, t + 125001);
	srd_cc_drain_ack(&cc, &c, false, t + 130000);
	CHECK(!srd_cc_drain_ack(&cc, &c, true, t + 187499),
	      "none again within a sixteenth of an interval of its start");
	CHECK(srd_cc_drain_ack(&cc, &c, true, t + 187500), "but after it");
	srd_cc_drain_sample(&cc, t + 187501);
	srd_cc_drain_ack(&cc, &c, false, t + 190000);
	CHECK(srd_cc_drain_ack(&cc, &c, true, t + 1000000), "the next interval's");
	srd_cc_drain_sample(&cc, t + 1000001);
	srd_cc_drain_ack(&cc, &c, false, t + 1062600);
	c.cc_target_us = 3000;
	eng.cfg = c;
	srd_cc_init(&cc, &c);
	srd_cc_drain_newcomer(&eng, t);
	CHECK(!srd_cc_drain_asks(&eng, t) && !srd_cc_drain_ack(&cc, &c, true, t) &&
	      !eng.drain_soon_us,
	      "none with a fixed target (no minimum RTT to learn)");
	c.cc_target_us = 0;
	c.cc_drain_interval_us = 0;
	eng.cfg = c;
	CHECK(!srd_cc_drain_asks(&eng, t) && !srd_cc_drain_ack(&cc, &c, true, t),
	      "none when off");
	c.cc_drain_interval_us = SRD_CC_DRAIN_INTERVAL_MAX_US + 1;
	CHECK(srd_config_validate(&c) < 0, "an interval over a minute is refused");
}

/*
 * A loss cuts the window only where a queue stands (cc.c,
 * loss_from_queue()): a link's loss under a sprayed flow comes every RTT
 * whatever the window, and cutting for it pinned the window at its floor
 * (issue 49).  Without a delay sample yet, a loss counts as congestion.
 */
static void test_cc_loss_needs_queue(void)
{
	struct srd_config c;
	struct srd_rtt r;
	struct srd_cc cc;
	uint32_t w0, i;

	srd_config_default(&c);
	c.cc_target_queue_us = 50;	/* target: 100 + 50 us */
	c.cc_target_rtt_mult = 0;
	c.cc_fs_range_us = 0;
	srd_rtt_init(&r, &c);
	srd_cc_init(&cc, &c);
	w0 = cc.cwnd;
	CHECK(srd_cc_on_loss(&cc, &c, &r, 1000) && cc.cwnd == w0 / 2,
	      "no RTT sample yet: a loss cuts (%u -> %u)", w0, cc.cwnd);
	srd_rtt_sample(&r, &c, 100, 1);
	srd_cc_init(&cc, &c);
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 120, 10);	/* a window of 120 us closes */
	w0 = cc.cwnd;
	CHECK(cc.standing_us == 120 && !srd_cc_on_loss(&cc, &c, &r, 2000) &&
	      cc.cwnd == w0, "standing %u us, below the 150 us target: window kept "
	      "(%u -> %u)", cc.standing_us, w0, cc.cwnd);
	CHECK(!srd_cc_on_loss(&cc, &c, &r, 4000) && cc.cwnd == w0,
	      "and at every loss after (%u -> %u)", w0, cc.cwnd);
	cc.standing_us = 151;			/* a queue stands */
	CHECK(srd_cc_on_loss(&cc, &c, &r, 6000) && cc.cwnd == w0 / 2,
	      "standing 151 us, above target: cut by max_mdf (%u -> %u)", w0, cc.cwnd);
	w0 = cc.cwnd;
	CHECK(srd_cc_on_loss(&cc, &c, &r, 6050) && cc.cwnd == w0,
	      "congestive, but once per RTT (%u -> %u)", w0, cc.cwnd);
	/*
	 * A buffer shallower than the target: a queue of one base RTT in
	 * every recent window is congestion; a lower window among the last
	 * SRD_CC_QUEUE_WINDOWS says the high ones took slow paths.
	 */
	c.cc_target_queue_us = 5000;
	srd_cc_init(&cc, &c);
	for (i = 0; i < SRD_CC_QUEUE_WINDOWS; i++)
		srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, i == 0 ? 120 : 200, 20000 + 1000 * i);
	w0 = cc.cwnd;
	CHECK(cc.standing_us == 200 && !srd_cc_on_loss(&cc, &c, &r, 30000) &&
	      cc.cwnd == w0, "%u windows of 200 us after one of 120 us: window kept "
	      "(%u -> %u)", SRD_CC_QUEUE_WINDOWS - 1, w0, cc.cwnd);
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 200, 30000);	/* the 120 leaves */
	w0 = cc.cwnd;
	CHECK(srd_cc_on_loss(&cc, &c, &r, 40000) && cc.cwnd == w0 / 2,
	      "%u windows of 2 x min_rtt under a 5 ms target: cut (%u -> %u)",
	      SRD_CC_QUEUE_WINDOWS, w0, cc.cwnd);
}

static void test_cc_window(void)
{
	struct srd_config c;
	struct srd_rtt r;
	struct srd_cc cc;
	uint32_t w0, i;

	srd_config_default(&c);
	c.cc_target_queue_us = 50;	/* the figures below assume it */
	c.cc_target_rtt_mult = 0;
	c.cc_fs_range_us = 0;
	srd_rtt_init(&r, &c);
	srd_rtt_sample(&r, &c, 100, 1);
	srd_cc_init(&cc, &c);
	w0 = cc.cwnd;
	CHECK(srd_cc_window_pkts(&cc) == c.cwnd_init_pkts, "init %u", srd_cc_window_pkts(&cc));
	/* Below target: +1 packet per window of ACKs. */
	srd_cc_on_ack(&cc, &c, &r, 16 * SRD_CWND_ONE, 110, 10);
	CHECK(cc.cwnd == w0 + SRD_CWND_ONE, "AI: %u -> %u", w0, cc.cwnd);
	/* Far above target: cut by at most max_mdf, once per RTT. */
	w0 = cc.cwnd;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 10000, 1000);
	CHECK(cc.cwnd == w0 / 2, "MD capped at 50%%: %u -> %u", w0, cc.cwnd);
	w0 = cc.cwnd;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 10000, 1050);
	CHECK(cc.cwnd == w0, "no second cut within an RTT");
	/* Slightly above target (150 + 30): cut by 0.8 * 30/180 = 13.3%. */
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 180, 1200);
	CHECK(cc.cwnd == (uint32_t)((uint64_t)w0 * (1000 - 133) / 1000),
	      "proportional cut %u -> %u", w0, cc.cwnd);
	for (i = 0; i < 100; i++)
		srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 100000, 2000 + 1000 * i);
	CHECK(cc.cwnd == c.cwnd_min_256ths, "floor %u", cc.cwnd);
	for (i = 0; i < 100000; i++)
		srd_cc_on_ack(&cc, &c, &r, 64 * SRD_CWND_ONE, 100, 300000);
	CHECK(cc.cwnd == c.cwnd_max_pkts * SRD_CWND_ONE, "ceiling %u", cc.cwnd);
	/*
	 * The first RTO of a run cuts as a loss, where a queue stands (the
	 * standing delay above the 150 us target); the next one, to the
	 * floor, queue or not.
	 */
	w0 = cc.cwnd;
	CHECK(!srd_cc_on_rto(&cc, &c, &r, true, 400000) && cc.cwnd == w0,
	      "first rto, no queue (standing %u us): window kept %u -> %u",
	      cc.standing_us, w0, cc.cwnd);
	cc.standing_us = 1000;
	CHECK(srd_cc_on_rto(&cc, &c, &r, true, 400000) && cc.cwnd == w0 / 2,
	      "first rto with a queue halves: %u -> %u", w0, cc.cwnd);
	cc.standing_us = 100;
	CHECK(srd_cc_on_rto(&cc, &c, &r, false, 401000) &&
	      cc.cwnd == c.cwnd_min_256ths && srd_cc_window_pkts(&cc) == 1,
	      "second rto -> floor, queue or not");
	/*
	 * The standing delay: one high sample among low ones in a window
	 * (jitter, a stalled host) is not a queue; a window of high ones is.
	 */
	srd_cc_init(&cc, &c);
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 100, 500000);	/* closes a window */
	w0 = cc.cwnd;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 5000, 500010);
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 100, 500020);
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 100, 500060);	/* closes: min 100 */
	CHECK(cc.cwnd > w0, "a spike in a window: no cut (%u -> %u)", w0, cc.cwnd);
	w0 = cc.cwnd;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 5000, 500070);
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 4000, 500110);	/* closes: min 4000 */
	CHECK(cc.cwnd < w0, "a window of high delay: cut (%u -> %u)", w0, cc.cwnd);
	srd_cc_on_rto(&cc, &c, &r, false, 500200);	/* the floor ... */
	CHECK(cc.cwnd == c.cwnd_min_256ths, "floor after two RTOs");
	cc.cwnd = SRD_CWND_ONE;			/* ... but 1, for the pacing */
	/*
	 * Pacing: cwnd 1, srtt 100 us, gain 125% -> 80 us between packets.
	 * After a pause, a burst of pacing_burst_pkts leaves back to back,
	 * then the gap holds.
	 */
	cc.pace_next_ns = 0;
	for (i = 0; i < c.pacing_burst_pkts; i++) {
		CHECK(srd_cc_pacing_allows(&cc, 5000), "burst packet %u allowed", i);
		srd_cc_on_send(&cc, &c, &r, SRD_CWND_ONE, 5000);
	}
	CHECK(cc.pace_next_ns == 5000 * 1000 + 80000, "pace gap %lld",
	      (long long)(cc.pace_next_ns - 5000000));
	CHECK(!srd_cc_pacing_allows(&cc, 5079) && srd_cc_pacing_allows(&cc, 5080),
	      "pacing gate");
	srd_cc_on_send(&cc, &c, &r, SRD_CWND_ONE, 5080);
	CHECK(!srd_cc_pacing_allows(&cc, 5159) && srd_cc_pacing_allows(&cc, 5160),
	      "steady gap after the burst");
	/* Half a packet: one packet in flight, twice the gap. */
	CHECK(c.cwnd_min_256ths == 3 * SRD_CWND_ONE / 4, "floor 3/4 (%u/256)",
	      c.cwnd_min_256ths);
	cc.cwnd = SRD_CWND_ONE / 2;
	CHECK(srd_cc_window_pkts(&cc) == 1, "window 1 below one packet");
	srd_cc_on_send(&cc, &c, &r, SRD_CWND_ONE, 5160);
	CHECK(!srd_cc_pacing_allows(&cc, 5160 + 159) &&
	      srd_cc_pacing_allows(&cc, 5160 + 160), "gap 160 us at 1/2");
	/*
	 * By weight: a packet of half a full one or more takes the whole
	 * gap, a lighter one its share (a quarter: 40 us).
	 */
	srd_cc_on_send(&cc, &c, &r, SRD_CWND_ONE / 2, 5320);
	CHECK(!srd_cc_pacing_allows(&cc, 5320 + 159) &&
	      srd_cc_pacing_allows(&cc, 5320 + 160), "half a packet: 160 us");
	srd_cc_on_send(&cc, &c, &r, SRD_CWND_ONE / 4, 5480);
	CHECK(!srd_cc_pacing_allows(&cc, 5480 + 39) &&
	      srd_cc_pacing_allows(&cc, 5480 + 40), "a quarter: 40 us");
	/* Below target, a window below a packet doubles at an ACK. */
	cc.cwnd = 3 * SRD_CWND_ONE / 4;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 100, 600000);
	CHECK(cc.cwnd == 3 * SRD_CWND_ONE / 2, "3/4 -> %u/256", cc.cwnd);
	cc.cwnd = SRD_CWND_ONE;
	srd_cc_on_ack(&cc, &c, &r, SRD_CWND_ONE, 100, 600100);
	CHECK(cc.cwnd == 2 * SRD_CWND_ONE, "1 -> %u/256", cc.cwnd);
}

/* A slow path is skipped, but not starved: it is measured again. */
static void test_slow_path_not_starved(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct srd_peer *p = pr->n[0]->peer;
	uint32_t i, sel;
	bool probe;
	int uses[4] = { 0 };

	p->rtt.srtt_us = 100;
	p->paths[1].srtt_us = 10000;		/* one bad sample long ago */
	for (i = 0; i < 300; i++) {
		sel = srd_path_select(p, 1000, SRD_PATH_NONE, &probe);
		uses[sel]++;
	}
	CHECK(uses[1] > 0 && uses[1] < uses[0] / 4,
	      "the slow path carries a little: %d/%d/%d/%d", uses[0], uses[1],
	      uses[2], uses[3]);
	pair_free(pr);
}

/*
 * An ACK within the clock's microsecond is a sample of 1 us for its path
 * too: a path's smoothed RTT left at an old value would keep it slow.
 */
static void test_path_sample_below_resolution(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr;
	struct srd_peer *p;
	uint32_t i;

	c.ack_reply_wait_us = 0;
	pr = pair_new(&c);
	p = pr->n[0]->peer;
	for (i = 0; i < c.n_paths; i++)
		p->paths[i].srtt_us = 10000;	/* one old sample each */
	for (i = 0; i < 8; i++) {
		CHECK(send_one(pr, 0, 64, i, 7) == SRD_SEND_OK, "send %u", i);
		while (pr->qlen)
			q_deliver(pr, 0, 0);	/* no time passes */
	}
	CHECK(pr->n[1]->nrx == 8, "delivered %d", pr->n[1]->nrx);
	for (i = 0; i < c.n_paths; i++)
		CHECK(p->paths[i].srtt_us < 10000,
		      "path %u: sampled, srtt %u us", i, p->paths[i].srtt_us);
	pair_free(pr);
}

/*
 * A message's segment bitmaps live in its structs up to
 * SRD_MSG_BITS_INLINE bytes: one allocation per message (its struct at
 * the sender), three beyond (and the two bitmaps), all given back.
 */
static void test_message_bitmaps_inline(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	/* A send's segment carries seg_bytes (srd_msg_seg_bytes()). */
	uint32_t lens[] = { 64, SRD_MSG_BITS_INLINE * 8 * c.seg_bytes,
			    SRD_MSG_BITS_INLINE * 8 * c.seg_bytes + 1 };
	/*
	 * The first send allocates its message, which the sender then keeps
	 * (SRD_TX_MSG_CACHE); the later ones reuse it.
	 */
	long want[] = { 1, 0, 2 }, kept[] = { 1, 0, 0 }, live, total;
	int i;

	for (i = 0; i < 3; i++) {
		live = pr->live_allocs;
		total = pr->total_allocs;
		CHECK(send_one(pr, 0, lens[i], i, 7) == SRD_SEND_OK,
		      "send %u B", lens[i]);
		pair_run(pr, pr->now + 1000000, false, NULL, NULL);
		CHECK(pr->n[1]->nrx == i + 1 && rx_intact(&pr->n[1]->rx[i]) &&
		      pr->n[1]->rx[i].len == lens[i],
		      "%u B delivered intact", lens[i]);
		CHECK(pr->total_allocs - total == want[i],
		      "%u B: %ld allocations, want %ld", lens[i],
		      pr->total_allocs - total, want[i]);
		CHECK(pr->live_allocs - live == kept[i] &&
		      pr->n[0]->peer->msg_cache_n == 1,
		      "%u B: %ld left allocated, want %ld, %u kept", lens[i],
		      pr->live_allocs - live, kept[i], pr->n[0]->peer->msg_cache_n);
	}
	pair_free(pr);
}

/*
 * The peer keeps at most SRD_TX_MSG_CACHE freed messages, reuses them for
 * its next sends, and gives them back when it is destroyed.
 */
static void test_message_cache_bounded(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct srd_peer *p = pr->n[0]->peer;
	long live, total;
	int i;

	live = pr->live_allocs;
	for (i = 0; i < 10; i++)
		CHECK(send_one(pr, 0, 64, i, 7) == SRD_SEND_OK, "send %d", i);
	pair_run(pr, pr->now + 1000000, false, NULL, NULL);
	CHECK(pr->n[1]->nrx == 10, "10 delivered, %d", pr->n[1]->nrx);
	CHECK(p->msg_cache_n == SRD_TX_MSG_CACHE &&
	      pr->live_allocs - live == SRD_TX_MSG_CACHE,
	      "%u kept, %ld left allocated, want %d", p->msg_cache_n,
	      pr->live_allocs - live, SRD_TX_MSG_CACHE);
	/* As many again, one at a time: each reuses a kept message. */
	total = pr->total_allocs;
	for (i = 0; i < 10; i++) {
		CHECK(send_one(pr, 0, 64, 10 + i, 7) == SRD_SEND_OK, "send %d",
		      10 + i);
		pair_run(pr, pr->now + 1000000, false, NULL, NULL);
	}
	CHECK(pr->n[1]->nrx == 20 && rx_intact(&pr->n[1]->rx[19]),
	      "20 delivered intact, %d", pr->n[1]->nrx);
	CHECK(pr->total_allocs == total && p->msg_cache_n == SRD_TX_MSG_CACHE,
	      "%ld allocations for 10 sends, %u kept",
	      pr->total_allocs - total, p->msg_cache_n);
	stop_both_no_leak(pr);
	start_both(pr, &c);
	pair_free(pr);
}

static void test_path_avoid_and_probe_back(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct srd_peer *p = pr->n[0]->peer;
	uint32_t i, sel;
	bool probe;
	int uses[4] = { 0 };

	srd_path_on_loss(p, 2, false, true, 1000);
	CHECK(p->paths[2].state == SRD_PATH_AVOIDED, "timeout avoids the path");
	for (i = 0; i < 30; i++) {
		sel = srd_path_select(p, 1000 + i, SRD_PATH_NONE, &probe);
		uses[sel]++;
	}
	CHECK(!uses[2] && uses[0] == 10 && uses[1] == 10 && uses[3] == 10,
	      "spread %d/%d/%d/%d over the healthy paths", uses[0], uses[1], uses[2], uses[3]);
	/* After path_avoid_us: exactly one probe at a time. */
	memset(uses, 0, sizeof(uses));
	for (i = 0; i < 8; i++) {
		sel = srd_path_select(p, 1000 + c.path_avoid_us, SRD_PATH_NONE, &probe);
		if (probe) {
			p->paths[sel].probe_in_flight = true;
			uses[sel]++;
		}
	}
	CHECK(uses[2] == 1 && p->paths[2].state == SRD_PATH_PROBING, "one probe, got %d", uses[2]);
	/* The probe is lost: avoided again, for twice as long. */
	srd_path_on_loss(p, 2, true, true, 2000 + c.path_avoid_us);
	CHECK(p->paths[2].state == SRD_PATH_AVOIDED &&
	      p->paths[2].avoid_until_us == 2000 + 3ull * c.path_avoid_us,
	      "backoff: until %llu", (unsigned long long)p->paths[2].avoid_until_us);
	/* Probe again later, this time ACKed: back to ACTIVE. */
	sel = 99;
	for (i = 0; i < 4 && sel != 2; i++)
		sel = srd_path_select(p, 3000 + 3ull * c.path_avoid_us, SRD_PATH_NONE, &probe);
	CHECK(sel == 2 && probe, "probed again");
	srd_path_on_ack(p, 2, true, 50);
	CHECK(p->paths[2].state == SRD_PATH_ACTIVE && p->paths[2].recovered == 1 &&
	      ectr(p->eng)->path_recoveries == 1, "recovered");
	/* Losses in a row avoid; an ACK in between resets the count. */
	srd_path_on_loss(p, 1, false, false, 5000);
	srd_path_on_loss(p, 1, false, false, 5000);
	srd_path_on_ack(p, 1, false, 0);
	srd_path_on_loss(p, 1, false, false, 5000);
	CHECK(p->paths[1].state == SRD_PATH_ACTIVE, "2 losses, ACK, 1 loss: still active");
	srd_path_on_loss(p, 1, false, false, 5000);
	srd_path_on_loss(p, 1, false, false, 5000);
	CHECK(p->paths[1].state == SRD_PATH_AVOIDED, "3 in a row: avoided");
	/* A retransmission never takes the excluded path. */
	for (i = 0; i < 20; i++)
		CHECK(srd_path_select(p, 5001, 0, &probe) != 0, "excluded path chosen");
	/* Every path avoided: still sends, on the one whose avoidance ends first. */
	for (i = 0; i < 4; i++)
		srd_path_on_loss(p, i, false, true, 6000 + i);
	sel = srd_path_select(p, 6010, SRD_PATH_NONE, &probe);
	CHECK(probe, "fallback is a probe (path %u)", sel);
	pair_free(pr);
}

static bool no_drop(struct pair *pr, struct qpkt *q, void *arg)
{
	(void)pr; (void)q; (void)arg;
	return false;
}

static void test_segmentation_reassembly_out_of_order(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 5000, 1u << 20 };
	unsigned int i, j;

	CHECK(srd_msg_nsegs(0, 1024) == 1 && srd_msg_nsegs(1024, 1024) == 1 &&
	      srd_msg_nsegs(1025, 1024) == 2 && srd_msg_nsegs(1u << 20, 1024) == 1024,
	      "segment counts");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		CHECK(send_one(pr, 0, sizes[i], 1000 + i, 7) == 0, "post %u", sizes[i]);
	CHECK(send_one(pr, 0, (1u << 20) + 1, 1, 7) == SRD_SEND_TOO_LONG, "too long refused");
	/* Deliver newest first: everything arrives reversed. */
	pair_run(pr, 10000000, true, no_drop, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 7, "7 sends OK, got %d",
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	CHECK(pr->n[1]->nrx == 7, "7 messages received, got %d", pr->n[1]->nrx);
	for (i = 0; i < (unsigned int)pr->n[1]->nrx; i++) {
		struct rxbuf *b = &pr->n[1]->rx[i];

		for (j = 0; j < 7 && b->imm != 1000 + j; j++)
			;
		CHECK(j < 7 && b->len == sizes[j] && b->done == 1 && rx_intact(b),
		      "message imm %u: len %u done %d intact %d", b->imm, b->len,
		      b->done, rx_intact(b));
	}
	CHECK(ectr(pr->n[1]->eng)->out_of_order > 0, "reordering seen");
	pair_free(pr);
}

static bool dup_all(struct pair *pr, struct qpkt *q, void *arg)
{
	int *budget = arg;

	/* Duplicate every packet once, before delivering it. */
	if (*budget > 0 && pr->qlen < MAXQ) {
		struct qpkt *c = &pr->q[pr->qlen++];

		(*budget)--;
		*c = *q;
		c->data = malloc(q->len);
		memcpy(c->data, q->data, q->len);
	}
	return false;
}

static void test_duplicates_suppressed(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	int budget = 2000, i;

	for (i = 0; i < 5; i++)
		send_one(pr, 0, 3000, 50 + i, 7);
	pair_run(pr, 10000000, false, dup_all, &budget);
	CHECK(pr->n[1]->nrx == 5, "5 received, got %d", pr->n[1]->nrx);
	for (i = 0; i < pr->n[1]->nrx; i++)
		CHECK(pr->n[1]->rx[i].done == 1 && rx_intact(&pr->n[1]->rx[i]),
		      "delivered once");
	CHECK(ectr(pr->n[1]->eng)->duplicates > 0, "duplicates counted: %llu",
	      (unsigned long long)ectr(pr->n[1]->eng)->duplicates);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 5, "5 OK");
	pair_free(pr);
}

/* ACKs vanish until *arg (a time in us): the DATA itself arrives. */
static bool drop_acks_until(struct pair *pr, struct qpkt *q, void *arg)
{
	return q->data[1] == SRD_WOP_ACK && pr->now < *(uint64_t *)arg;
}

/* Drops every 5th packet it is asked about (a count in *arg). */
static bool drop_every_5th(struct pair *pr, struct qpkt *q, void *arg)
{
	(void)pr;
	(void)q;
	return ++*(int *)arg % 5 == 0;
}

/*
 * Ping-pongs both ways, small and multi-packet, then a burst, losing
 * every 5th packet: RTOs, tail probes, held and delayed ACKs.
 */
static void early_fire_traffic(struct pair *pr)
{
	int i, n = 0;

	for (i = 0; i < 24; i++) {
		send_one(pr, i & 1, i % 3 ? 100 : 5000, 10 + i, 7);
		pair_run(pr, pr->now + 300000, false, drop_every_5th, &n);
	}
	for (i = 0; i < 8; i++)
		send_one(pr, 0, 3000, 40 + i, 7);
	pair_run(pr, pr->now + 10000000, false, drop_every_5th, &n);
}

/*
 * The kernel leaves a peer's timer queued for an earlier deadline than
 * the engine's (and for none), so srd_peer_on_timer() often comes early:
 * it must change nothing.  The same traffic with a timer call on each
 * node at every step where its own is not due gives the same packets,
 * counters and completions.
 */
static void test_early_timer_changes_nothing(void)
{
	struct srd_config c = small_cfg();
	struct pair *a = pair_new(&c), *b = pair_new(&c);
	struct srd_counters ca, cb;
	int i;

	b->early_fires = true;
	early_fire_traffic(a);
	early_fire_traffic(b);
	CHECK(b->early_fired > 200, "early timer calls made: %ld",
	      b->early_fired);
	CHECK(ectr(a->n[0]->eng)->retransmits > 0 &&
	      ectr(a->n[1]->eng)->retransmits > 0, "losses recovered both ways");
	for (i = 0; i < 2; i++) {
		const struct srd_counters *e = ectr(a->n[i]->eng);

		/* Each packet sent again, its header at least (EFA's). */
		CHECK(e->retrans_bytes >= e->retransmits * SRD_HDR_DATA_BYTES,
		      "node %d: retrans_bytes %llu for %llu retransmits", i,
		      (unsigned long long)e->retrans_bytes,
		      (unsigned long long)e->retransmits);
	}
	for (i = 0; i < 2; i++) {
		srd_engine_counters(a->n[i]->eng, &ca);
		srd_engine_counters(b->n[i]->eng, &cb);
		CHECK(!memcmp(&ca, &cb, sizeof(ca)),
		      "node %d: tx_pkts %llu / %llu, retransmits %llu / %llu",
		      i,
		      (unsigned long long)ca.tx_pkts,
		      (unsigned long long)cb.tx_pkts,
		      (unsigned long long)ca.retransmits,
		      (unsigned long long)cb.retransmits);
		CHECK(a->n[i]->nrx == b->n[i]->nrx &&
		      a->n[i]->ndone == b->n[i]->ndone &&
		      b->n[i]->sends_done[SRD_COMP_OK] == b->n[i]->ndone,
		      "node %d: received %d / %d, completed %d / %d", i,
		      a->n[i]->nrx, b->n[i]->nrx, a->n[i]->ndone,
		      b->n[i]->ndone);
	}
	CHECK(a->now == b->now, "ended at %llu and %llu us",
	      (unsigned long long)a->now, (unsigned long long)b->now);
	pair_free(a);
	pair_free(b);
}

static void test_spurious_retransmit_undone(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct srd_peer_info before, after;
	uint64_t until;

	/* Warm up: the handshake and an RTT sample. */
	send_one(pr, 0, 100, 1, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	srd_peer_get_info(pr->n[0]->peer, &before);

	/* The data arrives but its ACKs are lost for 5 ms: the RTO fires
	 * and retransmits what the receiver already has. */
	send_one(pr, 0, 8 * 1024, 2, 7);
	until = pr->now + 5000;
	pair_run(pr, pr->now + 1000000, false, drop_acks_until, &until);
	srd_peer_get_info(pr->n[0]->peer, &after);

	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 2 && pr->n[1]->nrx == 2 &&
	      pr->n[1]->rx[1].done == 1 && rx_intact(&pr->n[1]->rx[1]),
	      "delivered once and completed OK");
	CHECK(ectr(pr->n[0]->eng)->rto_expired > 0, "the RTO fired");
	CHECK(ectr(pr->n[0]->eng)->spurious_retransmits > 0,
	      "the receiver reported the needless retransmission");
	/* The RTOs dropped it to 1; the undo brought it back.  Delay-based
	 * cuts for the late ACKs may follow (their RTT samples span two
	 * standing-delay windows, and the tail probe's ACK adds samples),
	 * but not back to the floor. */
	CHECK(after.cwnd_pkts_x256 >= before.cwnd_pkts_x256 / 4 &&
	      after.cwnd_pkts_x256 >= 4 * SRD_CWND_ONE,
	      "window restored: %u before, %u after (x256)",
	      before.cwnd_pkts_x256, after.cwnd_pkts_x256);
	CHECK(pr->n[0]->peer->rtt.floor_us > c.rto_min_us,
	      "the RTO floor learnt the delay: %u", pr->n[0]->peer->rtt.floor_us);
	pair_free(pr);
}

/* Count DATA packets delivered; after *arg of them, drop nothing more
 * but stop the run (the caller acts mid-message). */
static bool data_budget(struct pair *pr, struct qpkt *q, void *arg)
{
	int *left = arg;

	(void)pr;
	/* DATA, WRITE and READ_RESP: the packets that carry bytes */
	if ((q->data[1] == SRD_WOP_DATA || q->data[1] == SRD_WOP_WRITE ||
	     q->data[1] == SRD_WOP_READ_RESP) && *left > 0)
		(*left)--;
	return false;
}

static void test_receiver_qp_gone_mid_message(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	int left = 10;

	/* 64 segments; the receiving QP goes away after about 10. */
	send_one(pr, 0, 64 * 1024, 9, 7);
	while (left > 0 && pr->qlen)
		pair_run(pr, pr->now + 10, false, data_budget, &left);
	CHECK(pr->n[1]->nrx == 1 && !pr->n[1]->rx[0].done,
	      "the message is being received");
	srd_peer_flush_qp(pr->n[1]->peer, pr->n[1]->qpn);
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(pr->n[1]->rx[0].aborted == 1 && !pr->n[1]->rx[0].done,
	      "the receive was aborted, not completed");
	CHECK(pr->n[0]->sends_done[SRD_COMP_REMOTE_ABORT] == 1,
	      "the send failed REMOTE_ABORT, got %d done, last %s",
	      pr->n[0]->ndone, srd_comp_status_name(pr->n[0]->last_status[0]));
	CHECK(ectr(pr->n[0]->eng)->peer_unreachable == 0,
	      "the peer was not declared unreachable");
	pair_free(pr);
}

/* Everything node 0 sends is lost once its byte budget is spent. */
static bool sender_cut_off(struct pair *pr, struct qpkt *q, void *arg)
{
	int *left = arg;

	data_budget(pr, q, arg);
	return q->to == 1 && *left <= 0;
}

static void test_receive_aborted_when_sender_stops(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr;
	struct node *a, *b;
	uint64_t t0;
	int left = 10;

	c.peer_timeout_us = 100000;
	pr = pair_new(&c);
	a = pr->n[0];
	b = pr->n[1];
	/* 64 segments; nothing of node 0 arrives after about 10. */
	send_one(pr, 0, 64 * 1024, 11, 7);
	t0 = pr->now;
	pair_run(pr, t0 + 50000, false, sender_cut_off, &left);
	CHECK(b->nrx == 1 && !b->rx[0].done && !b->rx[0].aborted,
	      "the message is being received: %d receives", b->nrx);
	CHECK(ectr(b->eng)->rx_msg_timeouts == 0, "no timeout before peer_timeout_us");
	pair_run(pr, t0 + 1000000, false, sender_cut_off, &left);
	CHECK(b->rx[0].aborted == 1 && !b->rx[0].done,
	      "the stalled receive was aborted, not completed");
	CHECK(ectr(b->eng)->rx_msg_timeouts == 1, "counted in rx_msg_timeouts: %llu",
	      (unsigned long long)ectr(b->eng)->rx_msg_timeouts);
	CHECK(a->ndone == 1 && a->sends_done[SRD_COMP_OK] == 0,
	      "the send did not succeed: %d done, first %s", a->ndone,
	      srd_comp_status_name(a->last_status[0]));
	/* The link is back: the next message goes through. */
	pair_run(pr, pr->now + 3000000, false, no_drop, NULL);
	send_one(pr, 0, 5000, 12, 7);
	pair_run(pr, pr->now + 3000000, false, no_drop, NULL);
	CHECK(b->nrx == 2 && b->rx[1].done && rx_intact(&b->rx[1]),
	      "the next message is delivered intact: %d receives", b->nrx);
	CHECK(ectr(b->eng)->rx_msg_timeouts == 1 && b->rx[0].aborted == 1,
	      "and nothing else timed out");
	pair_free(pr);
}

/*
 * An aborted receive leaves no deadline of its own behind: the next
 * message's receive, its sender stopped in turn, is aborted about
 * peer_timeout_us after, not when the first one's hold limit
 * (peer_timeout_us x (1 + 2n) from its start, 12.9 s here) comes.
 */
static void test_receive_after_an_abort_times_out(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr;
	struct node *b;
	uint64_t t1;
	int left = 10;

	c.peer_timeout_us = 100000;
	pr = pair_new(&c);
	b = pr->n[1];
	send_one(pr, 0, 64 * 1024, 11, 7);
	pair_run(pr, pr->now + 1000000, false, sender_cut_off, &left);
	CHECK(b->nrx == 1 && b->rx[0].aborted == 1,
	      "the first receive was aborted: %d receives", b->nrx);
	/* The link is back; a second message, cut off in turn. */
	pair_run(pr, pr->now + 3000000, false, no_drop, NULL);
	left = 10;
	send_one(pr, 0, 64 * 1024, 12, 7);
	pair_run(pr, pr->now + 50000, false, sender_cut_off, &left);
	t1 = pr->now;
	CHECK(b->nrx == 2 && !b->rx[1].done && !b->rx[1].aborted,
	      "the second message is being received: %d receives", b->nrx);
	pair_run(pr, t1 + 3 * c.peer_timeout_us, false, sender_cut_off, &left);
	CHECK(b->rx[1].aborted == 1 && !b->rx[1].done,
	      "aborted within 3 x peer_timeout_us of its sender's stop");
	CHECK(ectr(b->eng)->rx_msg_timeouts == 2,
	      "both counted in rx_msg_timeouts: %llu",
	      (unsigned long long)ectr(b->eng)->rx_msg_timeouts);
	pair_free(pr);
}

/* Node 0's DATA gets through at most once per *arg microseconds. */
struct gate {
	uint64_t every_us, next_us;
};

static bool slow_gate(struct pair *pr, struct qpkt *q, void *arg)
{
	struct gate *g = arg;

	if (q->to != 1 || q->data[1] != SRD_WOP_DATA)
		return false;
	if (pr->now < g->next_us)
		return true;
	g->next_us = pr->now + g->every_us;
	return false;
}

/* Records the (message id, offset) of node 0's first sends of DATA. */
struct send_log {
	uint32_t id[64], off[64];
	int n;
};

static bool log_sends(struct pair *pr, struct qpkt *q, void *arg)
{
	struct send_log *l = arg;
	struct srd_pkt p;
	int i;

	(void)pr;
	if (q->to != 1 || srd_wire_parse(q->data, q->len, &p) != SRD_PARSE_OK ||
	    p.opcode != SRD_WOP_DATA)
		return false;
	for (i = 0; i < l->n; i++)
		if (l->id[i] == p.msg_id && l->off[i] == p.offset)
			return false;		/* a retransmission */
	if (l->n < 64) {
		l->id[l->n] = p.msg_id;
		l->off[l->n++] = p.offset;
	}
	return false;
}

/*
 * Round-robin in rounds, at a window of one packet: 8 messages of two
 * segments go out as every first segment in order, then every second,
 * though most pumps find the window full; a message posted meanwhile
 * waits for the next round.  (A cursor that moved on a pump the window
 * held back skipped messages, and one that took new messages as it came
 * to them let them overtake older ones.)
 */
static void test_round_robin_rounds(void)
{
	struct srd_config c = small_cfg();
	struct send_log l = { .n = 0 };
	struct pair *pr;
	uint32_t id0;
	int i, ok = 1;

	c.cwnd_init_pkts = c.cwnd_max_pkts = 1;
	c.cwnd_min_256ths = SRD_CWND_ONE;
	c.pacing_burst_pkts = 1;
	pr = pair_new(&c);
	id0 = pr->n[0]->peer->msg_next;
	for (i = 0; i < 8; i++)
		CHECK(send_one(pr, 0, 2 * 1024, 300 + i, 7) == 0, "post %d", i);
	/* Until the first round is under way, then a ninth message. */
	while (l.n < 3 && pr->now < 1000000) {
		pair_run(pr, pr->now + 10, false, log_sends, &l);
		pr->now += 10;
	}
	CHECK(send_one(pr, 0, 2 * 1024, 308, 7) == 0, "post the ninth");
	pair_run(pr, pr->now + 1000000, false, log_sends, &l);
	CHECK(l.n == 18, "18 segments sent: %d", l.n);
	for (i = 0; i < 16 && i < l.n; i++)
		ok &= l.id[i] == id0 + (uint32_t)(i % 8) &&
		      l.off[i] == (i < 8 ? 0u : 1024u);
	CHECK(ok, "the 8 first segments in order, then the 8 second ones");
	CHECK(l.n == 18 && l.id[16] == id0 + 8 && l.id[17] == id0 + 8,
	      "the ninth after the round it was posted in");
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 9, "9 sends OK: %d",
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	pair_free(pr);
}

/*
 * A live sender starved to a packet per 25 ms, with 8 messages under way
 * at once: each gets a segment per round of 8, 200 ms apart, twice the
 * receiver's stall timeout.  It is slow, not stopped: nothing is aborted.
 */
static void test_slow_sender_keeps_receives(void)
{
	struct srd_config c = small_cfg();
	struct gate g = { .every_us = 25000 };
	struct pair *pr;
	struct node *b;
	int i, done = 0;

	c.peer_timeout_us = 100000;
	c.rto_max_us = 20000;	/* a retry at least every 45 ms: never silent */
	c.msg_window = 8;
	pr = pair_new(&c);
	b = pr->n[1];
	for (i = 0; i < 8; i++)
		CHECK(send_one(pr, 0, 8 * 1024, 100 + i, 7) == 0, "post %d", i);
	pair_run(pr, pr->now + 60000000, false, slow_gate, &g);
	for (i = 0; i < b->nrx; i++)
		done += b->rx[i].done && rx_intact(&b->rx[i]);
	CHECK(b->nrx == 8 && done == 8, "all 8 delivered intact: %d of %d receives",
	      done, b->nrx);
	CHECK(ectr(b->eng)->rx_msg_timeouts == 0, "none aborted: %llu",
	      (unsigned long long)ectr(b->eng)->rx_msg_timeouts);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 8, "8 sends OK, %d",
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	pair_free(pr);
}

/*
 * A sender that trickles: 8 messages under way, a packet through every
 * 40 ms, so each message gets a segment per round of 320 ms, more than
 * three times the receiver's stall timeout.  It is never silent and
 * leaves no message behind for eight rounds, so the stall rules keep its
 * receives; the hold limit does not: each is aborted once held
 * peer_timeout_us * (1 + 2 * 8) (8 segments of 1 KiB), before its sender
 * could finish it (8 rounds, 2.56 s), and the sender's sends fail
 * REMOTE_ABORT.  (Without the limit all 8 are delivered, in about 3 s.)
 */
static void test_trickling_sender_loses_receives(void)
{
	struct srd_config c = small_cfg();
	struct gate g = { .every_us = 40000 };
	uint64_t limit, t0;
	struct pair *pr;
	struct node *b;
	int i, aborted = 0;

	c.peer_timeout_us = 100000;
	c.rto_max_us = 20000;
	c.msg_window = 8;
	limit = (uint64_t)c.peer_timeout_us * (1 + 2 * 8);
	pr = pair_new(&c);
	b = pr->n[1];
	for (i = 0; i < 8; i++)
		CHECK(send_one(pr, 0, 8 * 1024, 100 + i, 7) == 0, "post %d", i);
	t0 = pr->now;
	/* Claimed after t0: none may go before t0 + limit. */
	pair_run(pr, t0 + limit - 1000, false, slow_gate, &g);
	CHECK(b->nrx == 8 && b->peer->rx_assembling == 8 &&
	      ectr(b->eng)->rx_msg_overdue + ectr(b->eng)->rx_msg_timeouts == 0,
	      "8 held until their limit: %d claimed, %u held, %llu overdue, %llu timeouts",
	      b->nrx, b->peer->rx_assembling,
	      (unsigned long long)ectr(b->eng)->rx_msg_overdue,
	      (unsigned long long)ectr(b->eng)->rx_msg_timeouts);
	/* The gate drops first segments too: the last claim comes later. */
	pair_run(pr, t0 + 2 * limit, false, slow_gate, &g);
	for (i = 0; i < b->nrx; i++)
		aborted += b->rx[i].aborted && !b->rx[i].done;
	CHECK(b->nrx == 8 && aborted == 8,
	      "all 8 receives aborted: %d of %d", aborted, b->nrx);
	/*
	 * The first by the limit; once most are gone, the sender's few
	 * packets left may leave it silent long enough for the stall rule.
	 */
	CHECK(ectr(b->eng)->rx_msg_overdue >= 1 &&
	      ectr(b->eng)->rx_msg_overdue + ectr(b->eng)->rx_msg_timeouts == 8,
	      "by the hold limit first: %llu overdue, %llu timeouts",
	      (unsigned long long)ectr(b->eng)->rx_msg_overdue,
	      (unsigned long long)ectr(b->eng)->rx_msg_timeouts);
	CHECK(b->peer->rx_assembling == 0, "none held: %u",
	      b->peer->rx_assembling);
	pair_run(pr, pr->now + 2000000, false, slow_gate, &g);
	CHECK(pr->n[0]->sends_done[SRD_COMP_REMOTE_ABORT] == 8,
	      "8 sends REMOTE_ABORT: %d (OK %d)",
	      pr->n[0]->sends_done[SRD_COMP_REMOTE_ABORT],
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	pair_free(pr);
}

/*
 * Every DATA of message msg_id but its first segment is lost, until the
 * receiver aborted that receive.
 */
struct starve {
	uint32_t msg_id;
	struct rxbuf *rx;
};

static bool starve_msg(struct pair *pr, struct qpkt *q, void *arg)
{
	struct starve *st = arg;
	struct srd_pkt p;

	(void)pr;
	return q->to == 1 && !st->rx->aborted &&
	       srd_wire_parse(q->data, q->len, &p) == SRD_PARSE_OK &&
	       p.opcode == SRD_WOP_DATA && p.msg_id == st->msg_id && p.offset;
}

/*
 * A live sender that sends its other messages but not the rest of one
 * (a bug, or a peer that means to hold the receive): once more than
 * eight rounds of others arrived and peer_timeout_us passed, that
 * receive is aborted while the others still flow (the peer is not
 * silent), and they are delivered.
 */
static void test_left_behind_receive_aborted(void)
{
	struct srd_config c = small_cfg();
	struct starve st;
	struct pair *pr;
	struct node *b;
	uint64_t t0;
	int i, done = 0;

	c.peer_timeout_us = 2000;
	c.msg_window = 4;	/* eight rounds: 32 segments */
	/*
	 * A window that losses do not shrink, and room in the packet table
	 * past the lost packets: this sender keeps sending the others (as
	 * far as the receiver's SACK window lets it).
	 */
	c.tx_window_pkts = SRD_MAX_TX_WINDOW_PKTS;
	c.cwnd_init_pkts = c.cwnd_max_pkts = 512;
	c.cwnd_min_256ths = 512 * SRD_CWND_ONE;
	pr = pair_new(&c);
	b = pr->n[1];
	st.msg_id = pr->n[0]->peer->msg_next;
	st.rx = &b->rx[0];
	/* 8 segments, then 3 x 1024 of them. */
	for (i = 0; i < 4; i++)
		CHECK(send_one(pr, 0, i ? 1024 * 1024 : 8 * 1024, 200 + i, 7) == 0,
		      "post %d", i);
	t0 = pr->now;
	while (!b->rx[0].aborted && pr->now < t0 + 1000000)
		pair_run(pr, pr->now + 100, false, starve_msg, &st);
	for (i = 1; i < b->nrx; i++)
		done += b->rx[i].done;
	CHECK(b->nrx == 4 && b->rx[0].aborted == 1 && done < 3 &&
	      pr->now < b->peer->rx_progress_us + c.peer_timeout_us,
	      "aborted while the others flow: %d receives, aborted %d, %d done",
	      b->nrx, b->rx[0].aborted, done);
	/*
	 * The others wait (the receiver's SACK window) until the next
	 * retransmission of the aborted one is NAKed: a timeout longer than
	 * the sender's backed-off RTO from here on.
	 */
	b->eng->cfg.peer_timeout_us = 1000000;
	pair_run(pr, t0 + 3000000, false, starve_msg, &st);
	for (i = 1, done = 0; i < b->nrx; i++)
		done += b->rx[i].done && rx_intact(&b->rx[i]);
	CHECK(done == 3 && ectr(b->eng)->rx_msg_timeouts == 1,
	      "the others delivered intact: %d, %llu timeouts", done,
	      (unsigned long long)ectr(b->eng)->rx_msg_timeouts);
	CHECK(pr->n[0]->sends_done[SRD_COMP_REMOTE_ABORT] == 1 &&
	      pr->n[0]->sends_done[SRD_COMP_OK] == 3,
	      "the sender: 1 REMOTE_ABORT, 3 OK (%d, %d)",
	      pr->n[0]->sends_done[SRD_COMP_REMOTE_ABORT],
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	pair_free(pr);
}

static void rnr_case(uint8_t rnr_retry, int expect_naks, bool infinite)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	uint64_t naks;

	pr->n[1]->recvs_posted = 0;
	send_one(pr, 0, 2500, 7, rnr_retry);
	pair_run(pr, infinite ? 3000000 : 100000000, false, no_drop, NULL);
	naks = ectr(pr->n[0]->eng)->rnr_naks_received;
	if (!infinite) {
		CHECK(pr->n[0]->sends_done[SRD_COMP_RNR_RETRY_EXC] == 1,
		      "rnr_retry %u: RNR_RETRY_EXC, got %d done", rnr_retry, pr->n[0]->ndone);
		/*
		 * 2500 bytes = 3 segments: the first attempt draws 3 RNR
		 * NAKs, each after it 1 (a probe sends its first segment
		 * alone until the receiver takes it).
		 */
		CHECK(naks == 3ull + expect_naks - 1,
		      "rnr_retry %u: %d attempts expected, got %llu NAKs",
		      rnr_retry, expect_naks, (unsigned long long)naks);
		CHECK(pr->n[1]->nrx == 0, "nothing received");
	} else {
		CHECK(pr->n[0]->ndone == 0 && naks >= 20,
		      "rnr_retry 7: still retrying after %llu NAKs", (unsigned long long)naks);
		/* A receive is posted: the next retry lands. */
		pr->n[1]->recvs_posted = 1;
		pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
		CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 1 && pr->n[1]->nrx == 1 &&
		      rx_intact(&pr->n[1]->rx[0]), "delivered after the receive was posted");
	}
	pair_free(pr);
}

static void test_rnr_retry_counting(void)
{
	rnr_case(0, 1, false);
	rnr_case(3, 4, false);
	rnr_case(6, 7, false);
	rnr_case(1, 2, false);
	rnr_case(7, 0, true);
}

/*
 * No QP can stall another (rnr.c): a QP whose receiver posts nothing
 * holds no message id, however many sends it has posted, and costs one
 * probe per backoff, not one per message; another QP's sends to the same
 * peer go on at once.  Once receives are posted, the stuck sends deliver,
 * each once.
 */
static void test_rnr_waits_off_the_window(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	const int stuck = 2 * (int)c.msg_window, good = 40;
	struct srd_peer *p = a->peer;
	struct srd_send_req r = {
		.src_qpn = a->qpn + 1, .dst_qpn = 200, .qkey = b->qkey,
		.has_imm = true, .len = 2500, .rnr_retry = 7,
	};
	uint64_t probes;
	int i, intact = 0;

	b->qpn2 = 200;
	for (i = 0; i < stuck; i++) {
		r.out = outbound_new(1000 + i, NULL);
		r.imm_data = 1000 + i;
		CHECK(srd_send_msg(p, &r) == SRD_SEND_OK, "stuck send %d posted", i);
	}
	pair_run(pr, pr->now + 2000, false, no_drop, NULL);
	CHECK(p->rnr_waiting == (uint32_t)stuck && p->msg_base == p->msg_next,
	      "every stuck send waits off the window: %u of %d waiting, %u ids held",
	      p->rnr_waiting, stuck, p->msg_next - p->msg_base);
	for (i = 0; i < good; i++)
		CHECK(send_one(pr, 0, 2500, i, 7) == SRD_SEND_OK, "send %d posted", i);
	pair_run(pr, pr->now + 20000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == good && b->nrx == good,
	      "the other QP's %d sends done within 20 ms: %d done, %d received",
	      good, a->sends_done[SRD_COMP_OK], b->nrx);
	/* Two seconds stuck: a probe per backoff, the backoff doubling to
	 * rnr_backoff_max_us (100 ms), so about 30, not one per send. */
	probes = ectr(a->eng)->rnr_probes;
	pair_run(pr, pr->now + 2000000, false, no_drop, NULL);
	probes = ectr(a->eng)->rnr_probes - probes;
	CHECK(probes >= 10 && probes <= 40 && a->ndone == good,
	      "2 s of RNR: 10..40 probes, none done: %llu probes, %d done",
	      (unsigned long long)probes, a->ndone - good);
	b->recvs_posted2 = 20;
	pair_run(pr, pr->now + 300000, false, no_drop, NULL);
	for (i = good; i < b->nrx; i++)
		intact += b->rx[i].done == 1 && rx_intact(&b->rx[i]) &&
			  b->rx[i].imm >= 1000;
	CHECK(a->sends_done[SRD_COMP_OK] == good + 20 && b->nrx == good + 20 &&
	      intact == 20,
	      "20 receives posted: 20 stuck sends delivered once, intact (%d done, %d received, %d intact)",
	      a->sends_done[SRD_COMP_OK] - good, b->nrx - good, intact);
	CHECK(p->rnr_waiting == (uint32_t)stuck - 20,
	      "the rest wait again: %u of %d", p->rnr_waiting, stuck - 20);
	pair_free(pr);
}

/*
 * The RNR gate is paced by its receiver (rnr.c): eight sends of 3 segments
 * to a QP with no receive wait in one gate.  One receive posted: one
 * message taken, and the gate does not open for the others, whose next
 * probe meets no receive; every probe NAKed draws one NAK (its first
 * segment goes alone).  Eight receives posted: two probes taken in a row
 * open the gate, and the seven go, each once and intact.
 */
static void test_rnr_gate_paced_by_its_receiver(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct srd_peer *p = a->peer;
	uint64_t naks, probes, t0, t;
	int i, intact = 0;

	b->recvs_posted = 0;
	for (i = 0; i < 8; i++)
		CHECK(send_one(pr, 0, 2500, i, 7) == SRD_SEND_OK, "send %d posted", i);
	pair_run(pr, pr->now + 2000, false, no_drop, NULL);
	CHECK(p->rnr_waiting == 8 && !b->nrx, "8 wait in the gate: %u, %d received",
	      p->rnr_waiting, b->nrx);
	b->recvs_posted = 1;
	for (t0 = pr->now, t = t0; !b->nrx && t < t0 + 300000;) {
		t += 100;
		pair_run(pr, t, false, no_drop, NULL);
		if (pr->now < t)
			pr->now = t;	/* nothing due before t */
	}
	/* The others do not all go to the receive just used: 7 x 3 NAKs. */
	naks = ectr(a->eng)->rnr_naks_received;
	pair_run(pr, pr->now + 1000, false, no_drop, NULL);
	naks = ectr(a->eng)->rnr_naks_received - naks;
	CHECK(b->nrx == 1 && naks <= 6, "the probe taken: %d received, then %llu NAKs in 1 ms",
	      b->nrx, (unsigned long long)naks);
	pair_run(pr, pr->now + 300000, false, no_drop, NULL);
	CHECK(b->nrx == 1 && a->sends_done[SRD_COMP_OK] == 1 && p->rnr_waiting == 7,
	      "one receive, one message: %d received, %d done, %u still wait",
	      b->nrx, a->sends_done[SRD_COMP_OK], p->rnr_waiting);
	naks = ectr(a->eng)->rnr_naks_received;
	probes = ectr(a->eng)->rnr_probes;
	pair_run(pr, pr->now + 300000, false, no_drop, NULL);
	naks = ectr(a->eng)->rnr_naks_received - naks;
	probes = ectr(a->eng)->rnr_probes - probes;
	CHECK(probes >= 2 && naks == probes,
	      "a probe refused draws one NAK: %llu probes, %llu NAKs",
	      (unsigned long long)probes, (unsigned long long)naks);
	b->recvs_posted = 8;
	pair_run(pr, pr->now + 300000, false, no_drop, NULL);
	for (i = 0; i < b->nrx; i++)
		intact += b->rx[i].done == 1 && rx_intact(&b->rx[i]);
	CHECK(b->nrx == 8 && intact == 8 && a->sends_done[SRD_COMP_OK] == 8 &&
	      !p->rnr_waiting, "eight receives: all 8 once and intact (%d received, %d intact, %u wait)",
	      b->nrx, intact, p->rnr_waiting);
	pair_free(pr);
}

/*
 * The queue serves local QPs in turn (queue.c): one QP's 300 queued RDMA
 * writes do not keep another's 10 sends, posted after them, waiting for
 * all 300; and one QP queues at most three quarters of max_pending_msgs.
 */
static void test_queue_serves_qps_in_turn(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct srd_send_req w = {
		.src_qpn = a->qpn + 1, .dst_qpn = b->qpn, .qkey = b->qkey,
		.len = 4096, .rnr_retry = 7, .kind = SRD_MSG_WRITE,
		.rdma = { .remote_addr = MEM_VA, .rkey = b->rkey,
			  .rdma_len = 4096, .length = 4096 },
	};
	int i, posted;

	for (i = 0; i < 300; i++) {
		w.out = outbound_new(i, NULL);
		CHECK(srd_send_msg(a->peer, &w) == SRD_SEND_OK, "write %d posted", i);
	}
	for (i = 0; i < 10; i++)
		CHECK(send_one(pr, 0, 2500, MARKED_SEED + i, 7) == SRD_SEND_OK,
		      "send %d posted", i);
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 310 && a->marked_done == 10,
	      "all done: %d of 310, %d of the 10 sends", a->sends_done[SRD_COMP_OK],
	      a->marked_done);
	/* In turn: the 10 start among the first 64 + 2 x 10 to start. */
	CHECK(a->ndone_at_last_marked < 100,
	      "the other QP's 10 sends done before the 100th completion: "
	      "the last after %d (the first after %d)", a->ndone_at_last_marked,
	      a->ndone_at_first_marked);
	pair_free(pr);

	c = small_cfg();
	c.max_pending_msgs = 16;
	pr = pair_new(&c);
	a = pr->n[0];
	b = pr->n[1];
	w.rdma.rkey = b->rkey;
	for (posted = 0; posted < 200; posted++) {
		w.out = outbound_new(posted, NULL);
		if (srd_send_msg(a->peer, &w) != SRD_SEND_OK) {
			free(w.out);
			break;
		}
	}
	/* All queued: the peer is new, and starts nothing before its HELLO. */
	CHECK(posted == 12, "one QP: 12 of 16 queued, %d posted", posted);
	for (i = 0; i < 5 && send_one(pr, 0, 100, i, 7) == SRD_SEND_OK; i++)
		;
	CHECK(i == 4, "another QP: the other 4 queued, %d posted", i);
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == posted + 4, "all done: %d of %d",
	      a->sends_done[SRD_COMP_OK], posted + 4);
	pair_free(pr);
}

static void test_error_naks(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct srd_send_req r = {
		.out = outbound_new(5, NULL), .src_qpn = a->qpn, .dst_qpn = 999,
		.qkey = b->qkey, .len = 3000, .rnr_retry = 7,
	};

	srd_send_msg(a->peer, &r);
	r.out = outbound_new(5, NULL);
	r.dst_qpn = b->qpn;
	r.qkey = 0xbad;
	srd_send_msg(a->peer, &r);
	send_one(pr, 0, 3000, 9, 7);	/* a good one between the same devices */
	pair_run(pr, 10000000, false, no_drop, NULL);
	CHECK(a->ndone == 3 && a->last_status[0] == SRD_COMP_BAD_DEST_QPN &&
	      a->last_status[1] == SRD_COMP_BAD_QKEY && a->last_status[2] == SRD_COMP_OK,
	      "statuses %s %s %s", srd_comp_status_name(a->last_status[0]),
	      srd_comp_status_name(a->last_status[1]), srd_comp_status_name(a->last_status[2]));
	CHECK(b->nrx == 1 && rx_intact(&b->rx[0]), "the good one arrived");
	pair_free(pr);
}

static bool drop_all_data(struct pair *pr, struct qpkt *q, void *arg)
{
	(void)pr; (void)arg;
	return q->data[1] == SRD_WOP_DATA || q->data[1] == SRD_WOP_HELLO;
}

/*
 * The retry budget: a peer is unreachable after more than rto_retries_max
 * expiries (or unanswered HELLOs) in a row, the first of them at least
 * peer_timeout_us ago; the count alone, spent in well under a second at
 * these RTOs, must not give up a peer silent for less than that.
 */
static void test_retry_budget_unreachable(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	uint64_t t0, rtos;

	c.rto_retries_max = 4;
	c.peer_timeout_us = 2000000;
	node_stop(pr, 0);
	node_start(pr, 0, &c);
	/* The handshake never completes: posted sends fail, not before. */
	send_one(pr, 0, 100, 1, 7);
	t0 = pr->now;
	pair_run(pr, t0 + c.peer_timeout_us - 1000, false, drop_all_data, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_UNRESP_REMOTE] == 0 &&
	      ectr(pr->n[0]->eng)->hellos_sent > c.rto_retries_max + 1,
	      "handshake: %llu HELLOs, no failure before peer_timeout_us",
	      (unsigned long long)ectr(pr->n[0]->eng)->hellos_sent);
	pair_run(pr, t0 + 100000000, false, drop_all_data, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_UNRESP_REMOTE] == 1, "handshake: UNRESP_REMOTE");
	/* Established, then DATA black-holed. */
	send_one(pr, 0, 100, 2, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 1, "reachable again");
	send_one(pr, 0, 5000, 3, 7);
	t0 = pr->now;
	pair_run(pr, t0 + c.peer_timeout_us - 1000, false, drop_all_data, NULL);
	rtos = ectr(pr->n[0]->eng)->rto_expired;
	CHECK(pr->n[0]->sends_done[SRD_COMP_UNRESP_REMOTE] == 1 &&
	      rtos > c.rto_retries_max + 1,
	      "data: %llu RTOs, no failure before peer_timeout_us",
	      (unsigned long long)rtos);
	pair_run(pr, t0 + c.peer_timeout_us + 2 * c.rto_max_us + 1000, false,
		 drop_all_data, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_UNRESP_REMOTE] == 2,
	      "data: UNRESP_REMOTE once silent for peer_timeout_us");
	/* The device keeps working. */
	send_one(pr, 0, 100, 4, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 2, "works after the failure");
	/* A short peer_timeout_us: the count rules, rto_retries_max + 1. */
	pr->n[0]->eng->cfg.peer_timeout_us = 1;
	rtos = ectr(pr->n[0]->eng)->rto_expired;
	send_one(pr, 0, 5000, 5, 7);
	pair_run(pr, pr->now + 100000000, false, drop_all_data, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_UNRESP_REMOTE] == 3 &&
	      ectr(pr->n[0]->eng)->rto_expired - rtos == c.rto_retries_max + 1,
	      "data: UNRESP_REMOTE after %u RTOs, got %llu", c.rto_retries_max + 1,
	      (unsigned long long)(ectr(pr->n[0]->eng)->rto_expired - rtos));
	pair_free(pr);
}

static void test_tag_mismatch_and_restart(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct qpkt old_from_a, old_from_b;
	uint32_t old_b_tag;
	uint64_t stale;
	int i;

	send_one(pr, 0, 100, 1, 7);
	send_one(pr, 1, 100, 2, 7);
	pair_run(pr, 1000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 1 && b->sends_done[SRD_COMP_OK] == 1,
	      "established both ways");
	/* Capture a DATA from each side, then let them go. */
	send_one(pr, 0, 100, 3, 7);
	send_one(pr, 1, 100, 4, 7);
	old_from_a.len = old_from_b.len = 0;
	for (i = 0; i < pr->qlen; i++) {
		struct qpkt *q = &pr->q[i], *keep;

		if (q->data[1] != SRD_WOP_DATA)
			continue;
		keep = q->to == 1 ? &old_from_a : &old_from_b;
		*keep = *q;
		keep->data = malloc(q->len);
		memcpy(keep->data, q->data, q->len);
	}
	CHECK(old_from_a.len && old_from_b.len, "captured");
	/* b restarts with the packets still in the network: a's send to b
	 * is in flight. */
	old_b_tag = b->peer->local_tag;
	q_drop(pr, 0);
	while (pr->qlen)
		q_drop(pr, 0);
	node_stop(pr, 1);
	node_start(pr, 1, &c);
	CHECK(b->peer->local_tag != old_b_tag, "new tag");
	/* The old packet from a reaches the new b: dropped, b says hello. */
	stale = ectr(b->eng)->rx_drop_stale_tag;
	srd_peer_on_packet(b->peer, old_from_a.data, old_from_a.len);
	CHECK(ectr(b->eng)->rx_drop_stale_tag == stale + 1 && b->nrx == 0,
	      "stale data for the old incarnation dropped");
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(ectr(a->eng)->peer_restarts == 1, "a saw the restart");
	CHECK(a->sends_done[SRD_COMP_PEER_RESTARTED] == 1, "in-flight send failed PEER_RESTARTED");
	/* The old packet from the old b reaches a: its tag is retired. */
	stale = ectr(a->eng)->rx_drop_stale_tag;
	srd_peer_on_packet(a->peer, old_from_b.data, old_from_b.len);
	CHECK(ectr(a->eng)->rx_drop_stale_tag == stale + 1 && a->nrx == 1,
	      "stale data from the old incarnation dropped (nrx %d)", a->nrx);
	/* New traffic flows both ways. */
	send_one(pr, 0, 3000, 5, 7);
	send_one(pr, 1, 3000, 6, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	/* b's own send 4 died with the old b (FLUSHED); its send 6 is new. */
	CHECK(a->sends_done[SRD_COMP_OK] == 2 && b->sends_done[SRD_COMP_OK] == 2 &&
	      b->sends_done[SRD_COMP_FLUSHED] == 1 &&
	      b->nrx == 1 && rx_intact(&b->rx[0]) && b->rx[0].imm == 5,
	      "after restart: a ok %d, b ok %d, b nrx %d", a->sends_done[SRD_COMP_OK],
	      b->sends_done[SRD_COMP_OK], b->nrx);
	free(old_from_a.data);
	free(old_from_b.data);
	pair_free(pr);
}

/* Inject @len bytes into node @to as if from the other node's address. */
static void inject(struct pair *pr, int to, const uint8_t *b, uint32_t len)
{
	srd_peer_on_packet(pr->n[to]->peer, b, len);
}

/*
 * A packet handed over as an OS that keeps payloads in fragments does
 * (srd_peer_on_packet_head()): the engine reads the header from a buffer
 * of just SRD_HDR_MAX_BYTES, the payload reaches rx_data from the
 * packet, and a header shown short of that is dropped, not read past.
 */
static void test_packet_head_only(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *b = pr->n[1];
	uint64_t bad0;
	int i, split = 0;

	send_one(pr, 0, 100, 1, 7);		/* the handshake */
	pair_run(pr, pr->now + 100000, false, no_drop, NULL);
	send_one(pr, 0, 3000, 9, 7);		/* three packets of 1024 */
	bad0 = ectr(b->eng)->rx_drop_bad_hdr;
	for (i = 0; i < pr->qlen; i++) {
		struct qpkt *q = &pr->q[i];
		uint8_t *head;

		if (q->to != 1 || q->len <= SRD_HDR_MAX_BYTES)
			continue;
		head = malloc(SRD_HDR_MAX_BYTES);
		memcpy(head, q->data, SRD_HDR_MAX_BYTES);
		if (!split)	/* one byte short: dropped */
			srd_peer_on_packet_head(b->peer, head, SRD_HDR_MAX_BYTES - 1,
						q->len, q->data);
		srd_peer_on_packet_head(b->peer, head, SRD_HDR_MAX_BYTES,
					q->len, q->data);
		free(head);
		split++;
		q_drop(pr, i--);
	}
	CHECK(split == 3, "three DATA packets handed over in part: %d", split);
	CHECK(ectr(b->eng)->rx_drop_bad_hdr == bad0 + 1,
	      "a header shown short is dropped: %llu",
	      (unsigned long long)(ectr(b->eng)->rx_drop_bad_hdr - bad0));
	pair_run(pr, pr->now + 100000, false, no_drop, NULL);
	CHECK(b->nrx == 2 && b->rx[1].done == 1 && b->rx[1].imm == 9 &&
	      b->rx[1].len == 3000 && rx_intact(&b->rx[1]),
	      "the message placed from the packets' payloads: nrx %d", b->nrx);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 2, "both sends completed: %d",
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	pair_free(pr);
}

/* srd_counter_descs names each counter of struct srd_counters once. */
static void test_counter_descs_cover_the_struct(void)
{
	unsigned char seen[SRD_ENGINE_NUM_COUNTERS] = { 0 };
	uint32_t i, j, slot;

	for (i = 0; i < SRD_ENGINE_NUM_COUNTERS; i++) {
		const struct srd_counter_desc *d = &srd_counter_descs[i];

		CHECK(d->name && d->name[0], "counter %u has no name", i);
		CHECK(d->offset % sizeof(uint64_t) == 0 &&
		      d->offset < sizeof(struct srd_counters),
		      "%s: offset %u", d->name, d->offset);
		slot = d->offset / sizeof(uint64_t);
		CHECK(slot < SRD_ENGINE_NUM_COUNTERS && !seen[slot]++,
		      "%s: a field named twice", d->name);
		for (j = 0; j < i; j++)
			CHECK(strcmp(d->name, srd_counter_descs[j].name),
			      "%s named twice", d->name);
	}
	/* The struct's order, which is the order tools show them in. */
	for (i = 0; i < SRD_ENGINE_NUM_COUNTERS; i++)
		CHECK(srd_counter_descs[i].offset == i * sizeof(uint64_t),
		      "%s out of the struct's order", srd_counter_descs[i].name);
	CHECK(srd_counter_descs[0].offset ==
	      offsetof(struct srd_counters, tx_pkts) &&
	      srd_counter_descs[SRD_ENGINE_NUM_COUNTERS - 1].offset ==
	      offsetof(struct srd_counters, rx_msg_overdue),
	      "first and last");
}

static void test_siphash_vectors(void)
{
	uint8_t key[16], m[15];
	int i;

	for (i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (i = 0; i < 15; i++)
		m[i] = (uint8_t)i;
	/* The reference vectors of the SipHash paper, appendix A. */
	CHECK(srd_siphash24(key, m, 15) == 0xa129ca6149be45e5ull, "15 bytes");
	CHECK(srd_siphash24(key, m, 0) == 0x726fdb47dd0e0e31ull, "empty");
}

/*
 * Issue 14, C1: one HELLO with a random src_tag and dst_tag 0, from the
 * remote's address, changes nothing: no restart, nothing fails, traffic
 * in flight completes OK and is delivered.
 */
static void test_forged_hello_no_restart(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	uint8_t h[SRD_HDR_MAX_BYTES];
	struct srd_pkt p;
	uint32_t n, i;

	send_one(pr, 0, 100, 1, 7);
	pair_run(pr, 1000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 1, "established");
	for (i = 0; i < 5; i++)
		send_one(pr, 0, 3000, 10 + i, 7);
	for (i = 0; i < 200; i++) {
		memset(&p, 0, sizeof(p));
		p.src_tag = 0x1000 + i * 7919;
		n = srd_wire_put_hello(h, &p);
		inject(pr, 1, h, n);
		/* ... and with a guessed dst_tag, as a DATA-less restart */
		p.dst_tag = 0x5a5a0000 + i;
		n = srd_wire_put_hello(h, &p);
		inject(pr, 1, h, n);
	}
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(ectr(b->eng)->peer_restarts == 0 && ectr(a->eng)->peer_restarts == 0,
	      "no restart (b %llu, a %llu)",
	      (unsigned long long)ectr(b->eng)->peer_restarts,
	      (unsigned long long)ectr(a->eng)->peer_restarts);
	CHECK(a->sends_done[SRD_COMP_OK] == 6 && b->nrx == 6,
	      "all delivered: ok %d, b received %d", a->sends_done[SRD_COMP_OK], b->nrx);
	for (i = 0; i < (uint32_t)b->nrx; i++)
		CHECK(rx_intact(&b->rx[i]), "message %u intact", i);
	pair_free(pr);
}

/*
 * Issue 46, M1 (the review's test_poc_one_guess_partition): one forged
 * HELLO that names b's tag for a (a lucky guess) with a random src_tag
 * must not make b believe a restart: b keeps a's tag, challenges the
 * claim at a's address, and traffic keeps flowing both ways.  Before the
 * challenge, b retired a's real tag and the two were cut off for good.
 */
static void test_poc_one_guess_partition(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	uint8_t h[SRD_HDR_MAX_BYTES];
	uint32_t n, i, real_a_tag;
	struct srd_pkt p;

	send_one(pr, 0, 100, 1, 7);
	send_one(pr, 1, 100, 2, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 1 && b->sends_done[SRD_COMP_OK] == 1,
	      "established both ways");
	real_a_tag = b->peer->remote_tag;
	memset(&p, 0, sizeof(p));
	p.src_tag = 0x5eed1234;
	p.dst_tag = b->peer->local_tag;
	n = srd_wire_put_hello(h, &p);
	inject(pr, 1, h, n);
	CHECK(b->peer->remote_tag == real_a_tag,
	      "b still knows a's tag: %#x, was %#x", b->peer->remote_tag,
	      real_a_tag);
	for (i = 0; i < 5; i++) {
		send_one(pr, 0, 3000, 10 + i, 7);
		send_one(pr, 1, 3000, 20 + i, 7);
		pair_run(pr, pr->now + 20000000, false, no_drop, NULL);
	}
	CHECK(a->sends_done[SRD_COMP_OK] == 6 && b->sends_done[SRD_COMP_OK] == 6,
	      "after one forged HELLO: a->b OK %d of 6 (unresp %d), b->a OK %d of 6 (unresp %d)",
	      a->sends_done[SRD_COMP_OK], a->sends_done[SRD_COMP_UNRESP_REMOTE],
	      b->sends_done[SRD_COMP_OK], b->sends_done[SRD_COMP_UNRESP_REMOTE]);
	CHECK(ectr(b->eng)->peer_restarts == 0 && ectr(a->eng)->peer_restarts == 0,
	      "no restart believed (b %llu, a %llu)",
	      (unsigned long long)ectr(b->eng)->peer_restarts,
	      (unsigned long long)ectr(a->eng)->peer_restarts);
	CHECK(ectr(b->eng)->restart_challenges == 1,
	      "the claim was challenged once: %llu",
	      (unsigned long long)ectr(b->eng)->restart_challenges);
	CHECK(b->nrx == 6 && a->nrx == 6, "delivered: b %d, a %d", b->nrx, a->nrx);
	pair_free(pr);
}

/*
 * A flood of claims with b's tag (random src_tags, random echoes, HELLO
 * and DATA alike) is not believed, costs b at most one challenge per
 * hello_interval_us, and stops no traffic; a HELLO that echoes the
 * challenge of another claimed tag, or of the right one from another
 * peer's secret, proves nothing.
 */
static void test_restart_claims_bounded(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	uint8_t h[SRD_HDR_MAX_BYTES + 1024];
	uint32_t n, i, real_a_tag;
	uint64_t t0, chal0;
	int nrx0;
	struct srd_pkt p;

	send_one(pr, 0, 100, 1, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	real_a_tag = b->peer->remote_tag;
	nrx0 = b->nrx;
	chal0 = ectr(b->eng)->restart_challenges;
	t0 = pr->now;
	for (i = 0; i < 1000; i++) {
		memset(&p, 0, sizeof(p));
		p.src_tag = 0x10000 + i * 7919;
		p.dst_tag = b->peer->local_tag;
		/* ... echoing the challenge of another claimed tag */
		p.echo = srd_peer_challenge(b->peer, p.src_tag + 1, pr->now);
		n = srd_wire_put_hello(h, &p);
		inject(pr, 1, h, n);
		p.seg_bytes = 1024;
		p.msg_len = 100;
		p.payload_len = 100;
		p.msg_id = p.msg_base = 5;
		p.dst_qpn = b->qpn;
		p.qkey = b->qkey;
		n = srd_wire_put_data(h, &p);
		memset(h + n, 0, 100);
		inject(pr, 1, h, n + 100);
		pr->now += 10;		/* 10 ms of claims in all */
	}
	CHECK(b->peer->remote_tag == real_a_tag && b->nrx == nrx0 &&
	      ectr(b->eng)->peer_restarts == 0, "no claim believed");
	CHECK(ectr(b->eng)->restart_challenges - chal0 <=
	      (pr->now - t0) / c.hello_interval_us + 1,
	      "challenges %llu in %llu us",
	      (unsigned long long)(ectr(b->eng)->restart_challenges - chal0),
	      (unsigned long long)(pr->now - t0));
	while (pr->qlen)	/* b's challenges: a drops them, answers */
		q_drop(pr, 0);
	send_one(pr, 0, 3000, 7, 7);
	send_one(pr, 1, 3000, 8, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 2 && b->sends_done[SRD_COMP_OK] == 1 &&
	      b->nrx == nrx0 + 1 && a->nrx == 1, "traffic flows: a ok %d, b ok %d",
	      a->sends_done[SRD_COMP_OK], b->sends_done[SRD_COMP_OK]);
	pair_free(pr);
}

/*
 * How long a real restart takes to recover: b restarts, then @sender
 * (0: the survivor a, 1: the new b) posts a send at once, and again
 * whenever one fails (PEER_RESTARTED, for a send to the old b); the time
 * from the restart to the first OK.
 */
static uint64_t restart_recovery_us(int sender)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *s;
	uint64_t t0, took;
	int tries = 0;

	send_one(pr, 0, 100, 1, 7);
	send_one(pr, 1, 100, 2, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	node_stop(pr, 1);
	node_start(pr, 1, &c);
	s = pr->n[sender];
	memset(s->sends_done, 0, sizeof(s->sends_done));
	t0 = pr->now;
	while (!s->sends_done[SRD_COMP_OK] && tries++ < 4) {
		send_one(pr, sender, 100, 10 + tries, 7);
		pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	}
	took = s->sends_done[SRD_COMP_OK] ? s->last_done_us - t0 : ~0ull;
	CHECK(ectr(pr->n[0]->eng)->peer_restarts == 1 &&
	      s->sends_done[SRD_COMP_OK] == 1,
	      "sender %d: restart seen %llu, OK after %d tries", sender,
	      (unsigned long long)ectr(pr->n[0]->eng)->peer_restarts, tries);
	pair_free(pr);
	return took;
}

static void test_restart_recovery_time(void)
{
	uint64_t a_first = restart_recovery_us(0), b_first = restart_recovery_us(1);

	printf("# restart recovery: survivor first %llu us, restarted first %llu us\n",
	       (unsigned long long)a_first, (unsigned long long)b_first);
	/*
	 * Before the challenge (issue 46, M1): 20 and 20 us.  The survivor's
	 * side is as fast (the new incarnation's answer echoes the old tag);
	 * the restarted side's echo HELLO goes out with its DATA, one packet
	 * (5 us here) but no round trip more.
	 */
	CHECK(a_first <= 20 && b_first <= 25,
	      "recovery took %llu / %llu us", (unsigned long long)a_first,
	      (unsigned long long)b_first);
}

/*
 * Issue 14, C2: a DATA whose msg_base is 2^30 ahead, even with both
 * right tags (an on-path forger), never turns into OK completions for
 * messages the receiver did not place: every later send either is
 * delivered or fails.
 */
static void test_forged_slide_never_acks_undelivered(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr;
	struct node *a, *b;
	uint8_t h[SRD_HDR_MAX_BYTES + 64];
	struct srd_pkt p;
	uint32_t n, i;

	c.rto_retries_max = 3;
	pr = pair_new(&c);
	a = pr->n[0];
	b = pr->n[1];
	send_one(pr, 0, 100, 1, 7);
	pair_run(pr, 1000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 1 && b->nrx == 1, "established");
	memset(&p, 0, sizeof(p));
	p.src_tag = a->peer->local_tag;
	p.dst_tag = b->peer->local_tag;
	p.psn = 12345;
	p.msg_id = p.msg_base = a->peer->msg_next + (1u << 30);
	p.dst_qpn = 77;
	p.seg_bytes = 64;
	n = srd_wire_put_data(h, &p);
	inject(pr, 1, h, n);
	for (i = 0; i < 5; i++)
		send_one(pr, 0, 2000, 20 + i, 7);
	pair_run(pr, pr->now + 100000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] - 1 <= b->nrx - 1,
	      "OK implies delivered: %d OK, %d delivered",
	      a->sends_done[SRD_COMP_OK] - 1, b->nrx - 1);
	CHECK(a->sends_done[SRD_COMP_OK] + a->sends_done[SRD_COMP_UNRESP_REMOTE] == 6,
	      "each send completed once: ok %d, unresp %d",
	      a->sends_done[SRD_COMP_OK], a->sends_done[SRD_COMP_UNRESP_REMOTE]);
	CHECK(ectr(b->eng)->duplicates == 0, "nothing ACKed as a duplicate");
	pair_free(pr);
}

/*
 * Issue 14, H1: a remote with no peer is answered from the tag alone;
 * only a packet naming that tag, with work in it, is accepted; replies
 * without a peer are rate limited.
 */
static void test_stray_stateless(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct srd_engine *eng = pr->n[1]->eng;
	uint8_t b[SRD_HDR_MAX_BYTES + 64], r[SRD_HDR_MAX_BYTES];
	uint32_t n, rlen = 0, tag = srd_engine_tag(eng, "mallory", 7), i;
	struct srd_pkt p, q;
	int replies = 0;
	long allocs = pr->live_allocs;
	uint64_t rx0;

	CHECK(tag && tag != srd_engine_tag(eng, "mallorz", 7) &&
	      tag == srd_engine_tag(eng, "mallory", 7), "tags per address, stable");
	CHECK(srd_engine_tag(pr->n[0]->eng, "mallory", 7) != tag, "tags per engine");
	memset(&p, 0, sizeof(p));
	p.src_tag = 0xabcd;
	n = srd_wire_put_hello(b, &p);
	CHECK(srd_engine_on_stray(eng, "mallory", 7, b, n, r, &rlen) == SRD_STRAY_REPLY &&
	      srd_wire_parse(r, rlen, &q) == 0 && q.opcode == SRD_WOP_HELLO &&
	      q.src_tag == tag && q.dst_tag == 0xabcd, "HELLO answered with the tag");
	p.dst_tag = tag;
	n = srd_wire_put_hello(b, &p);
	CHECK(srd_engine_on_stray(eng, "mallory", 7, b, n, r, &rlen) == SRD_STRAY_DROP,
	      "a tagged HELLO needs nothing");
	n = srd_wire_put_ack(b, &p);
	CHECK(srd_engine_on_stray(eng, "mallory", 7, b, n, r, &rlen) == SRD_STRAY_DROP,
	      "a tagged ACK for no peer is dropped");
	p.seg_bytes = 64;
	p.dst_tag = tag ^ 1;
	n = srd_wire_put_data(b, &p);
	CHECK(srd_engine_on_stray(eng, "mallory", 7, b, n, r, &rlen) == SRD_STRAY_REPLY,
	      "DATA with a wrong tag: answered, not accepted");
	p.dst_tag = tag;
	n = srd_wire_put_data(b, &p);
	rx0 = ectr(eng)->rx_pkts;
	CHECK(srd_engine_on_stray(eng, "mallory", 7, b, n, r, &rlen) == SRD_STRAY_ACCEPT,
	      "DATA naming the tag is accepted");
	CHECK(ectr(eng)->rx_pkts == rx0, "... and left for its new peer to count");
	CHECK(srd_engine_on_stray(eng, "mallorz", 7, b, n, r, &rlen) == SRD_STRAY_REPLY,
	      "... only from its own address");
	CHECK(pr->live_allocs == allocs, "no state for any of it");
	p.dst_tag = 0;
	n = srd_wire_put_hello(b, &p);
	for (i = 0; i < 1000; i++)
		replies += srd_engine_on_stray(eng, "x", 1, b, n, r, &rlen) == SRD_STRAY_REPLY;
	CHECK(replies <= SRD_STRAY_BURST, "replies limited: %d of 1000", replies);
	pr->now += 1000;
	CHECK(srd_engine_on_stray(eng, "x", 1, b, n, r, &rlen) == SRD_STRAY_REPLY,
	      "the budget comes back");
	pair_free(pr);
}

/* Idle time is what an OS may evict on; busy peers are never idle. */
static void test_peer_idle(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);

	send_one(pr, 0, 100000, 1, 7);
	pair_run(pr, 1000 + 50, false, no_drop, NULL);
	CHECK(srd_peer_idle_us(pr->n[0]->peer) == 0, "busy sender is not idle");
	pair_run(pr, 1000000, false, no_drop, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 1, "sent");
	pr->now += 5000000;
	CHECK(srd_peer_idle_us(pr->n[0]->peer) >= 5000000 &&
	      srd_peer_idle_us(pr->n[1]->peer) >= 5000000, "idle afterwards");
	pair_free(pr);
}

/* Lets the first DATA packet to node 1 through, drops the rest until *arg. */
struct drop_after_first {
	uint64_t until;
	int data_seen;
};

static bool drop_data_after_first(struct pair *pr, struct qpkt *q, void *arg)
{
	struct drop_after_first *d = arg;

	if (q->to != 1 || q->data[1] != SRD_WOP_DATA)
		return false;
	return ++d->data_seen > 1 && pr->now < d->until;
}

/*
 * A receive in progress keeps a peer busy (counted, not scanned for), and
 * a peer whose remote never answered says so: it may be evicted at once.
 */
static void test_peer_idle_receiving_and_unanswered(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct drop_after_first d = { .until = pr->now + 200000 };
	struct srd_peer *rx = pr->n[1]->peer;

	CHECK(srd_peer_unanswered(pr->n[0]->peer), "a new peer is unanswered");
	send_one(pr, 0, 100000, 1, 7);
	pair_run(pr, d.until - 1000, false, drop_data_after_first, &d);
	CHECK(rx->rx_assembling == 1 && !rx->ack_pending && !rx->inflight,
	      "the receiver has one message half-received, its ACKs sent: %u",
	      rx->rx_assembling);
	CHECK(srd_peer_idle_us(rx) == 0, "a receiver in the middle of a message is busy");
	pair_run(pr, pr->now + 2000000, false, no_drop, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 1 && rx->rx_assembling == 0,
	      "delivered; nothing assembling: %u", rx->rx_assembling);
	CHECK(!srd_peer_unanswered(pr->n[0]->peer) && !srd_peer_unanswered(rx),
	      "both answered");
	pair_free(pr);

	/* A remote that never answers: its peer is unanswered, and idle once failed. */
	pr = pair_new(&c);
	send_one(pr, 0, 1000, 1, 7);
	pair_run(pr, pr->now + 1000, false, drop_all_data, NULL);
	CHECK(srd_peer_idle_us(pr->n[0]->peer) == 0, "busy while it tries");
	pair_run(pr, pr->now + 30000000, false, drop_all_data, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_UNRESP_REMOTE] == 1, "the send failed");
	pr->now += 1;
	CHECK(srd_peer_idle_us(pr->n[0]->peer) > 0 &&
	      srd_peer_unanswered(pr->n[0]->peer), "idle and unanswered");
	pair_free(pr);
}

static void test_no_leak_after_destroy(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	long before;
	int i;

	for (i = 0; i < 20; i++)
		send_one(pr, 0, 70000, i, 7);
	pair_run(pr, 2000, false, no_drop, NULL);	/* stop mid-transfer */
	before = pr->live_allocs;
	CHECK(before > 0, "something allocated");
	CHECK(pr->live_bytes <= 2 * srd_peer_mem_bound_bytes(&c) + 2 * 4096,
	      "live %zu within bound %zu", pr->live_bytes, srd_peer_mem_bound_bytes(&c));
	stop_both_no_leak(pr);
	CHECK(pr->n[0]->sends_done[SRD_COMP_FLUSHED] + pr->n[0]->sends_done[SRD_COMP_OK] == 20,
	      "every send completed");
	start_both(pr, &c);
	pair_free(pr);
}

/* --- RDMA ------------------------------------------------------------ */

/*
 * Post one RDMA message from @from: a WRITE (@what: the pattern seed)
 * or a READ (@what: an rdbuf).
 */
static int rdma_one(struct pair *pr, int from, enum srd_msg_kind kind,
		    uint64_t addr, uint32_t rkey, uint32_t rdma_len,
		    uint32_t off, uint32_t len, void *what, bool imm)
{
	struct node *n = pr->n[from], *o = pr->n[!from];
	struct srd_outbound *out = kind == SRD_MSG_READ ?
		outbound_new(0, what) : outbound_new((uint32_t)(uintptr_t)what, NULL);
	struct srd_send_req r = {
		.out = out, .src_qpn = n->qpn, .dst_qpn = o->qpn,
		.qkey = o->qkey, .imm_data = 77, .has_imm = imm,
		.len = kind == SRD_MSG_WRITE ? len : 0, .rnr_retry = 7,
		.kind = kind,
		.rdma = { .remote_addr = addr, .rkey = rkey, .rdma_len = rdma_len,
			  .rdma_offset = off, .length = len },
	};
	int ret = srd_send_msg(n->peer, &r);

	if (ret != SRD_SEND_OK)
		free(out);
	return ret;
}

static struct rdbuf *rdbuf_new(uint32_t len)
{
	struct rdbuf *r = calloc(1, sizeof(*r));

	r->buf = malloc(len + 1);
	memset(r->buf, 0xee, len + 1);
	r->len = len;
	return r;
}

static void rdbuf_free(struct rdbuf *r)
{
	free(r->buf);
	free(r);
}

static bool all_byte(const uint8_t *p, uint32_t len, uint8_t v)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

static void test_rdma_write_read(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct rdbuf *rd = rdbuf_new(150000);
	uint32_t i;
	bool ok = true;

	for (i = 0; i < MEM_LEN; i++)
		b->mem[i] = (uint8_t)(i * 7 + 1);
	/* A write at an odd place: exactly its bytes change. */
	CHECK(rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA + 5000, b->rkey, 100000,
		       0, 100000, (void *)3, false) == SRD_SEND_OK, "posted");
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 1, "write OK, %d done", a->ndone);
	for (i = 0; i < MEM_LEN; i++) {
		uint8_t want = i >= 5000 && i < 105000 ? pat(3, i - 5000) :
			       (uint8_t)(i * 7 + 1);

		if (b->mem[i] != want)
			ok = false;
	}
	CHECK(ok, "the written range holds the data, the rest is untouched");
	CHECK(ectr(b->eng)->rdma_writes_in == 1, "rdma_writes_in");
	/* A read of another range: the bytes come back, nothing else. */
	CHECK(rdma_one(pr, 0, SRD_MSG_READ, MEM_VA + 1, b->rkey, 150000, 0,
		       150000, rd, false) == SRD_SEND_OK, "posted");
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 2, "read OK, %d done", a->ndone);
	CHECK(!memcmp(rd->buf, b->mem + 1, 150000) && rd->buf[150000] == 0xee,
	      "the read brought the bytes");
	CHECK(ectr(b->eng)->rdma_reads_in == 1 && b->resps_done[SRD_COMP_OK] == 1,
	      "the responder answered once");
	/* Write with imm: takes a receive, completes it with the imm. */
	rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA, b->rkey, 3000, 0, 3000,
		 (void *)5, true);
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 3 && b->nrx == 1 &&
	      b->rx[0].done == 1 && b->rx[0].imm == 77,
	      "write with imm: %d done, nrx %d", a->ndone, b->nrx);
	/* Two chunks of one operation, each checked against the whole. */
	rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA + 200000, b->rkey, 8000, 0, 4000,
		 (void *)8, false);
	rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA + 200000, b->rkey, 8000, 4000,
		 4000, (void *)9, false);
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 5 && b->mem[200000] == pat(8, 0) &&
	      b->mem[204000] == pat(9, 0) && b->mem[207999] == pat(9, 3999),
	      "two chunks landed where they belong");
	/* Zero length: no rkey check, nothing touched (IBA C9-88). */
	rdma_one(pr, 0, SRD_MSG_WRITE, 1, 0xdead, 0, 0, 0, (void *)1, false);
	rdma_one(pr, 0, SRD_MSG_READ, 1, 0xdead, 0, 0, 0, rd, false);
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 7 &&
	      ectr(b->eng)->rdma_access_naks == 0, "zero length: OK, unchecked");
	CHECK(b->live_handles == 0, "no handle left: %d", b->live_handles);
	/* Every packet, whatever its header, fits what a DATA packet may be. */
	CHECK(pr->max_pkt == c.seg_bytes + SRD_HDR_DATA_BYTES,
	      "largest datagram %u, the MTU allows %u", pr->max_pkt,
	      c.seg_bytes + SRD_HDR_DATA_BYTES);
	rdbuf_free(rd);
	pair_free(pr);
}

/*
 * Operations longer than one message: chunks of SRD_MAX_RDMA_MSG_BYTES,
 * offsets within the operation, a WRITE_WITH_IMM's last chunk only after
 * the others, one completion, the first failure.
 */
static void test_rdma_chunks(void)
{
	const uint32_t len = 2 * SRD_MAX_RDMA_MSG_BYTES + 5000;
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct rdbuf *rd = rdbuf_new(len);
	uint64_t sent;
	uint32_t i;
	bool ok = true;

	b->recvs_posted = 1;
	sent = ectr(a->eng)->msgs_sent;
	CHECK(rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA + 3, b->rkey, len, 0, len,
		       (void *)9, true) == SRD_SEND_OK, "a 3-chunk write posted");
	pair_run(pr, pr->now + 60000000, false, no_drop, NULL);
	CHECK(a->ndone == 1 && a->sends_done[SRD_COMP_OK] == 1,
	      "one completion for the operation: %d", a->ndone);
	CHECK(ectr(a->eng)->msgs_sent - sent == 3 &&
	      ectr(b->eng)->rdma_writes_in == 3, "three messages: %llu",
	      (unsigned long long)(ectr(a->eng)->msgs_sent - sent));
	for (i = 0; i < len && ok; i++)
		ok = b->mem[3 + i] == pat(9, i);
	CHECK(ok, "byte %u is the operation's byte %u", i - 1, i - 1);
	CHECK(b->nrx == 1 && b->rx[0].done == 1 && b->rx[0].imm == 77 &&
	      b->imm_begun_after == 2,
	      "the immediate's chunk began after the other %d", b->imm_begun_after);

	/* A READ of the same bytes comes back whole, in place. */
	CHECK(rdma_one(pr, 0, SRD_MSG_READ, MEM_VA + 3, b->rkey, len, 0, len,
		       rd, false) == SRD_SEND_OK, "a 3-chunk read posted");
	pair_run(pr, pr->now + 60000000, false, no_drop, NULL);
	CHECK(a->ndone == 2 && a->sends_done[SRD_COMP_OK] == 2 &&
	      !memcmp(rd->buf, b->mem + 3, len) && rd->buf[len] == 0xee,
	      "the read brought the bytes, once: %d", a->ndone);

	/* Refused: the first failure completes it; the immediate never goes. */
	b->no_remote_write = true;
	b->recvs_posted = 1;
	rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA, b->rkey, len, 0, len,
		 (void *)4, true);
	pair_run(pr, pr->now + 60000000, false, no_drop, NULL);
	CHECK(a->ndone == 3 && a->last_status[2] == SRD_COMP_REMOTE_ACCESS,
	      "one completion, REMOTE_ACCESS: %d, %s", a->ndone,
	      srd_comp_status_name(a->last_status[2]));
	CHECK(b->nrx == 1, "no receive claimed for the immediate");
	b->no_remote_write = false;

	/* Room for every chunk, or none is taken. */
	CHECK(srd_tx_queued_msgs(a->peer) == 0, "nothing left queued");
	CHECK(b->live_handles == 0, "no handle left: %d", b->live_handles);
	rdbuf_free(rd);
	pair_free(pr);

	c = small_cfg();
	c.max_pending_msgs = 2;
	pr = pair_new(&c);
	CHECK(rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA, pr->n[1]->rkey, len, 0, len,
		       (void *)4, false) == SRD_SEND_BUSY,
	      "3 chunks do not fit 2 pending");
	CHECK(rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA, pr->n[1]->rkey,
		       SRD_MAX_RDMA_BYTES + 1u, 0, 100, (void *)4, false) ==
	      SRD_SEND_TOO_LONG, "longer than SRD_MAX_RDMA_BYTES");
	pair_free(pr);
}

static void test_rdma_access_refused(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct rdbuf *rd = rdbuf_new(4096);
	uint8_t *snap = malloc(MEM_LEN);
	static const struct {
		const char *what;
		enum srd_msg_kind kind;
		uint64_t addr;
		uint32_t len;
		bool bad_rkey, no_read, no_write;
	} cases[] = {
		{ "write, wrong rkey", SRD_MSG_WRITE, MEM_VA, 4096, true },
		{ "read, wrong rkey", SRD_MSG_READ, MEM_VA, 4096, true },
		{ "write below the region", SRD_MSG_WRITE, MEM_VA - 1, 16 },
		{ "read past its end", SRD_MSG_READ, MEM_VA + MEM_LEN - 10, 11 },
		{ "write that wraps", SRD_MSG_WRITE, ~0ull - 5, 100 },
		{ "write without REMOTE_WRITE", SRD_MSG_WRITE, MEM_VA, 64, false,
		  false, true },
		{ "read without REMOTE_READ", SRD_MSG_READ, MEM_VA, 64, false,
		  true, false },
	};
	unsigned int i;

	for (i = 0; i < MEM_LEN; i++)
		b->mem[i] = (uint8_t)i;
	memcpy(snap, b->mem, MEM_LEN);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int before = a->sends_done[SRD_COMP_REMOTE_ACCESS];
		uint64_t naks = ectr(b->eng)->rdma_access_naks;
		int resp = b->resp_pkts;

		b->no_remote_read = cases[i].no_read;
		b->no_remote_write = cases[i].no_write;
		memset(rd->buf, 0xee, rd->len);
		rdma_one(pr, 0, cases[i].kind, cases[i].addr,
			 cases[i].bad_rkey ? b->rkey + 1 : b->rkey,
			 cases[i].len, 0, cases[i].len,
			 cases[i].kind == SRD_MSG_READ ? (void *)rd : (void *)4,
			 false);
		pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
		CHECK(a->sends_done[SRD_COMP_REMOTE_ACCESS] == before + 1,
		      "%s: REMOTE_ACCESS", cases[i].what);
		CHECK(ectr(b->eng)->rdma_access_naks == naks + 1,
		      "%s: counted", cases[i].what);
		CHECK(!memcmp(snap, b->mem, MEM_LEN) && b->resp_pkts == resp &&
		      all_byte(rd->buf, rd->len, 0xee),
		      "%s: nothing written or disclosed", cases[i].what);
	}
	/* The QP carries on: a good write succeeds (the positive control). */
	b->no_remote_read = b->no_remote_write = false;
	rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA, b->rkey, 64, 0, 64, (void *)2,
		 false);
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 1 && b->mem[0] == pat(2, 0),
	      "a good write after the refusals lands");
	CHECK(b->live_handles == 0, "no handle left: %d", b->live_handles);
	free(snap);
	rdbuf_free(rd);
	pair_free(pr);
}

static void test_rdma_target_gone_mid_operation(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct rdbuf *rd = rdbuf_new(64 * 1024);
	int left = 10;
	uint32_t i, written = 0;

	/* A 64-segment write; the MR goes after about 10 segments. */
	rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA, b->rkey, 64 * 1024, 0, 64 * 1024,
		 (void *)6, false);
	while (left > 0 && pr->qlen)
		pair_run(pr, pr->now + 10, false, data_budget, &left);
	b->mem_gone = true;
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_REMOTE_ACCESS] == 1,
	      "the write failed REMOTE_ACCESS: %d done, first %s", a->ndone,
	      srd_comp_status_name(a->last_status[0]));
	for (i = 0; i < 64 * 1024; i++)
		written += b->mem[i] != 0;
	CHECK(written > 0 && written <= 12 * 1024,
	      "nothing written after the MR went: %u bytes", written);
	CHECK(b->live_handles == 0, "the write's handle was released");
	/* The same for a read: its response stops, the requester hears. */
	b->mem_gone = false;
	left = 10;
	rdma_one(pr, 0, SRD_MSG_READ, MEM_VA, b->rkey, 64 * 1024, 0, 64 * 1024,
		 rd, false);
	while (left > 0 && pr->qlen)
		pair_run(pr, pr->now + 10, false, data_budget, &left);
	b->mem_gone = true;
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_REMOTE_ACCESS] == 2 &&
	      b->resps_done[SRD_COMP_REMOTE_ACCESS] == 1,
	      "the read failed REMOTE_ACCESS at both ends: %d done, last %s",
	      a->ndone, srd_comp_status_name(a->last_status[a->ndone - 1]));
	CHECK(ectr(a->eng)->resp_timeouts == 0, "not by a timeout");
	CHECK(b->live_handles == 0, "the read's handle was released");
	rdbuf_free(rd);
	pair_free(pr);
}

static bool drop_resp(struct pair *pr, struct qpkt *q, void *arg)
{
	(void)pr;
	(void)arg;
	return q->data[1] == SRD_WOP_READ_RESP;
}

static void test_rdma_read_response_timeout(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0];
	struct rdbuf *rd = rdbuf_new(8192);
	uint64_t t0;

	c.peer_timeout_us = 100000;
	node_stop(pr, 0);
	node_start(pr, 0, &c);
	t0 = pr->now;
	rdma_one(pr, 0, SRD_MSG_READ, MEM_VA, pr->n[1]->rkey, 8192, 0, 8192, rd,
		 false);
	pair_run(pr, t0 + 5000000, false, drop_resp, NULL);
	CHECK(a->sends_done[SRD_COMP_UNRESP_REMOTE] == 1 &&
	      ectr(a->eng)->resp_timeouts == 1,
	      "the read failed UNRESP_REMOTE by its timeout: %d done", a->ndone);
	CHECK(a->last_done_us - t0 >= 100000 && a->last_done_us - t0 < 200000,
	      "after peer_timeout_us: %llu us",
	      (unsigned long long)(a->last_done_us - t0));
	CHECK(all_byte(rd->buf, rd->len, 0xee), "nothing placed");
	rdbuf_free(rd);
	pair_free(pr);
}

static void test_rdma_reads_both_ways(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct rdbuf *rd[2][300];
	int i, k, bad = 0;

	/* More READs each way than msg_window: they must not deadlock. */
	for (k = 0; k < 2; k++)
		for (i = 0; i < 300; i++)
			pr->n[k]->mem[i * 800] = (uint8_t)(i + k);
	for (i = 0; i < 300; i++) {
		for (k = 0; k < 2; k++) {
			rd[k][i] = rdbuf_new(800);
			rdma_one(pr, k, SRD_MSG_READ, MEM_VA + i * 800,
				 pr->n[!k]->rkey, 800, 0, 800, rd[k][i], false);
		}
	}
	pair_run(pr, pr->now + 30000000, false, no_drop, NULL);
	for (k = 0; k < 2; k++) {
		CHECK(pr->n[k]->sends_done[SRD_COMP_OK] == 300,
		      "side %d: %d of 300 reads OK (%d done)", k,
		      pr->n[k]->sends_done[SRD_COMP_OK], pr->n[k]->ndone);
		for (i = 0; i < 300; i++) {
			bad += memcmp(rd[k][i]->buf, pr->n[!k]->mem + i * 800, 800) != 0;
			rdbuf_free(rd[k][i]);
		}
	}
	CHECK(!bad, "%d reads brought wrong bytes", bad);
	pair_free(pr);
}

/*
 * The requester's indexes of its READs (msg.h, peer.h): the deadline list
 * holds exactly the awaiting READs, earliest first, and a response's slot
 * names its READ only while that lives.  Pointers are compared against
 * the live READs before any is followed: a stale one is reported, not
 * read.
 */
struct read_index_run {
	uint64_t stop_us;	/* drop the starved responses until then */
	int bad;
	int orphans;		/* response slots seen after their READ went */
};

static bool read_live(struct srd_peer *peer, const struct srd_tx_msg *r)
{
	const struct srd_tx_msg *m;
	uint32_t id;

	for (m = peer->awaiting; m; m = m->next)
		if (m == r)
			return true;
	for (id = peer->msg_base; id != peer->msg_next; id++)
		if (srd_tx_msg_by_id(peer, id) == r)
			return r->kind == SRD_MSG_READ;
	return false;
}

static const char *read_index_stale(struct srd_peer *peer, int *orphans)
{
	const struct srd_tx_msg *m, *prev = NULL;
	uint32_t i, n = 0, due = 0;
	struct srd_rx_slot *s;

	for (m = peer->awaiting; m; m = m->next) {
		if (m->state != SRD_TXM_AWAIT_RESP)
			return "a READ on awaiting is not AWAIT_RESP";
		n++;
	}
	for (m = peer->resp_due_head; m; prev = m, m = m->due_next) {
		if (!read_live(peer, m) || m->state != SRD_TXM_AWAIT_RESP)
			return "the deadline list holds a READ not awaiting";
		if (m->due_prev != prev)
			return "the deadline list's links disagree";
		if (prev && prev->resp_deadline_us > m->resp_deadline_us)
			return "the deadline list is out of order";
		if (++due > n)
			return "the deadline list is longer than awaiting";
	}
	if (due != n || peer->resp_due_tail != prev)
		return "the deadline list misses an awaiting READ";
	for (i = 0; i < peer->eng->cfg.msg_window; i++) {
		s = &peer->rx_slots[i];
		if (s->read && !read_live(peer, s->read))
			return "a response slot names a READ that is gone";
		if (s->read && (!s->is_resp || s->state != SRD_RXS_ASSEMBLING))
			return "a slot names a READ but places no response";
		if (s->is_resp && s->state == SRD_RXS_ASSEMBLING && !s->read)
			(*orphans)++;
	}
	return NULL;
}

/* Checks node 0's indexes before every delivery; starves some responses. */
static bool read_index_drop(struct pair *pr, struct qpkt *q, void *arg)
{
	struct read_index_run *run = arg;
	const char *why = read_index_stale(pr->n[0]->peer, &run->orphans);
	struct srd_pkt p;

	/* At once: the engine may follow the stale pointer next. */
	if (why && !run->bad++) {
		CHECK(!why, "before a delivery: %s", why);
		fflush(stdout);
	}
	/* The response to READ 5 stops after its first packet. */
	return pr->now < run->stop_us && q->to == 0 &&
	       srd_wire_parse(q->data, q->len, &p) == SRD_PARSE_OK &&
	       p.opcode == SRD_WOP_READ_RESP && p.offset && p.req_msg_id == 5;
}

static void test_rdma_read_index(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct read_index_run run = { 0 };
	struct rdbuf *rd[30];
	const char *why;
	int i, timed_out;

	c.peer_timeout_us = 100000;
	node_stop(pr, 0);
	node_start(pr, 0, &c);
	for (i = 0; i < 20; i++) {
		rd[i] = rdbuf_new(8000);
		rdma_one(pr, 0, SRD_MSG_READ, MEM_VA + i * 8000, b->rkey, 8000,
			 0, 8000, rd[i], false);
	}
	/*
	 * READ 5 times out with its response half placed, and others with
	 * it: the responder's window sits at its floor, retrying.  The rest
	 * of their responses comes after, and is refused.
	 */
	run.stop_us = pr->now + 300000;
	pair_run(pr, pr->now + 10000000, false, read_index_drop, &run);
	timed_out = a->sends_done[SRD_COMP_UNRESP_REMOTE];
	CHECK(timed_out && a->sends_done[SRD_COMP_OK] + timed_out == 20,
	      "READs timed out, the rest OK: %d OK, %d timed out",
	      a->sends_done[SRD_COMP_OK], timed_out);
	CHECK(b->resps_done[SRD_COMP_REMOTE_ABORT] == timed_out,
	      "their responses' late packets were refused: %d",
	      b->resps_done[SRD_COMP_REMOTE_ABORT]);
	CHECK(run.orphans > 0, "no response outlived its READ");
	/* READs flushed while awaiting, their responses under way. */
	for (i = 20; i < 30; i++) {
		rd[i] = rdbuf_new(8000);
		rdma_one(pr, 0, SRD_MSG_READ, MEM_VA + i * 8000, b->rkey, 8000,
			 0, 8000, rd[i], false);
	}
	run.stop_us = SRD_NO_DEADLINE;
	pair_run(pr, pr->now + 200, false, read_index_drop, &run);
	CHECK(a->peer->awaiting, "READs await their responses");
	srd_peer_flush_qp(a->peer, a->qpn);
	why = read_index_stale(a->peer, &run.orphans);
	CHECK(!why, "after the flush: %s", why);
	CHECK(!a->peer->resp_due_head && !a->peer->resp_due_tail,
	      "the deadline list is empty");
	pair_run(pr, pr->now + 10000000, false, read_index_drop, &run);
	CHECK(!run.bad, "%d checks failed", run.bad);
	CHECK(a->ndone == 30, "every READ completed once: %d", a->ndone);
	for (i = 0; i < 30; i++)
		rdbuf_free(rd[i]);
	pair_free(pr);
}

static bool drop_some(struct pair *pr, struct qpkt *q, void *arg)
{
	(void)q;
	(void)arg;
	pr->rnd = pr->rnd * 1103515245u + 12345u;
	return (pr->rnd >> 16) % 100 < 10;
}

/*
 * Trace events: none while tracing is off; with it on, one per decision,
 * matching the counters (DATA sent and retransmitted, ACKs, RTOs), and
 * every field in range.
 */
static void test_trace_events(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct srd_counters ca, cb;
	int i, total = 0;

	memset(h_events, 0, sizeof(h_events));
	h_retx_events = h_bad_events = 0;
	h_trace_on = false;
	send_one(pr, 0, 3000, 1, 7);
	pair_run(pr, 1000000, false, no_drop, NULL);
	for (i = 0; i < SRD_EV_NR; i++)
		total += h_events[i];
	CHECK(total == 0, "no event while off: %d", total);
	h_trace_on = true;
	srd_engine_counters(pr->n[0]->eng, &ca);
	srd_engine_counters(pr->n[1]->eng, &cb);
	for (i = 0; i < 30; i++)
		send_one(pr, i & 1, 20000, 10 + i, 7);
	pair_run(pr, pr->now + 60000000, false, drop_some, NULL);
	h_trace_on = false;
	{
		struct srd_counters a2, b2;
		uint64_t data, retx, acks, rtos, naks;

		srd_engine_counters(pr->n[0]->eng, &a2);
		srd_engine_counters(pr->n[1]->eng, &b2);
		data = a2.tx_data_pkts + b2.tx_data_pkts - ca.tx_data_pkts - cb.tx_data_pkts;
		retx = a2.retransmits + b2.retransmits - ca.retransmits - cb.retransmits;
		acks = a2.acks_received + b2.acks_received - ca.acks_received -
		       cb.acks_received;
		rtos = a2.rto_expired + b2.rto_expired - ca.rto_expired - cb.rto_expired;
		naks = a2.naks_sent + b2.naks_sent - ca.naks_sent - cb.naks_sent;
		CHECK(h_bad_events == 0, "%d events with fields out of range", h_bad_events);
		CHECK((uint64_t)h_events[SRD_EV_DATA_TX] == data && data > 0,
		      "DATA_TX %d, tx_data_pkts %llu", h_events[SRD_EV_DATA_TX],
		      (unsigned long long)data);
		CHECK((uint64_t)h_retx_events == retx && retx > 0,
		      "retransmissions traced %d, counted %llu", h_retx_events,
		      (unsigned long long)retx);
		CHECK((uint64_t)h_events[SRD_EV_ACK_RX] == acks,
		      "ACK_RX %d, acks_received %llu", h_events[SRD_EV_ACK_RX],
		      (unsigned long long)acks);
		CHECK((uint64_t)h_events[SRD_EV_RTO] == rtos,
		      "RTO %d, rto_expired %llu", h_events[SRD_EV_RTO],
		      (unsigned long long)rtos);
		CHECK((uint64_t)h_events[SRD_EV_NAK_TX] == naks,
		      "NAK_TX %d, naks_sent %llu", h_events[SRD_EV_NAK_TX],
		      (unsigned long long)naks);
	}
	pair_free(pr);
}

static void test_rdma_under_loss(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct rdbuf *rd = rdbuf_new(100000);
	uint32_t i;
	bool ok = true;

	for (i = 0; i < MEM_LEN; i++)
		b->mem[i] = (uint8_t)(i * 3);
	rdma_one(pr, 0, SRD_MSG_READ, MEM_VA + 100, b->rkey, 100000, 0, 100000,
		 rd, false);
	rdma_one(pr, 0, SRD_MSG_WRITE, MEM_VA + 150000, b->rkey, 100000, 0,
		 100000, (void *)11, true);
	pair_run(pr, pr->now + 60000000, false, drop_some, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 2, "both OK under 10%% loss: %d done",
	      a->ndone);
	CHECK(!memcmp(rd->buf, b->mem + 100, 100000), "the read's bytes");
	for (i = 0; i < 100000; i++)
		ok &= b->mem[150000 + i] == pat(11, i);
	CHECK(ok && b->nrx == 1 && b->rx[0].done == 1,
	      "the write's bytes, and its receive once");
	rdbuf_free(rd);
	pair_free(pr);
}

static void test_rdma_requester_gone(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct rdbuf *rd = rdbuf_new(64 * 1024);
	int left = 10;

	rdma_one(pr, 0, SRD_MSG_READ, MEM_VA, b->rkey, 64 * 1024, 0, 64 * 1024,
		 rd, false);
	while (left > 0 && pr->qlen)
		pair_run(pr, pr->now + 10, false, data_budget, &left);
	srd_peer_flush_qp(a->peer, a->qpn);
	CHECK(a->sends_done[SRD_COMP_FLUSHED] == 1, "the read was flushed");
	pair_run(pr, pr->now + 10000000, false, no_drop, NULL);
	CHECK(b->resps_done[SRD_COMP_REMOTE_ABORT] == 1 && b->live_handles == 0,
	      "the response ended REMOTE_ABORT: ok %d abort %d",
	      b->resps_done[SRD_COMP_OK], b->resps_done[SRD_COMP_REMOTE_ABORT]);
	CHECK(ectr(b->eng)->peer_unreachable == 0, "no unreachable peer");
	rdbuf_free(rd);
	pair_free(pr);
}

/* Drop the ACKs to node 0 while *arg > 0. */
static bool drop_acks(struct pair *pr, struct qpkt *q, void *arg)
{
	int *left = arg;

	(void)pr;
	if (q->to == 0 && q->data[1] == SRD_WOP_ACK && *left > 0) {
		(*left)--;
		return true;
	}
	return false;
}

/* --- ACKs on DATA, and the wait for a reply (docs/protocol.md) -------- */

/*
 * One step of a hand-driven run: deliver the oldest packet (5 us later)
 * unless @drop says to lose it, or jump to the next deadline.  Counts the
 * ACK packets delivered to each node in acks[] and the DATA packets that
 * carried an ACK block in blocks[].  False when nothing is left to do.
 */
struct pp_stats {
	int acks[2], blocks[2];
};

static bool pp_step(struct pair *pr, struct pp_stats *st, drop_fn drop,
		    void *arg)
{
	uint64_t d;

	if (pr->qlen) {
		struct qpkt *q = &pr->q[0];

		if (drop && drop(pr, q, arg)) {
			q_drop(pr, 0);
		} else {
			if (q->data[1] == SRD_WOP_ACK)
				st->acks[q->to]++;
			else if (q->data[2] & SRD_WF_DATA_HAS_ACK)
				st->blocks[q->to]++;
			q_deliver(pr, 0, 5);
		}
		fire_timers(pr);
		return true;
	}
	d = pr->n[0]->deadline < pr->n[1]->deadline ?
	    pr->n[0]->deadline : pr->n[1]->deadline;
	if (d == SRD_NO_DEADLINE)
		return false;
	if (d > pr->now)
		pr->now = d;
	fire_timers(pr);
	return true;
}

/*
 * A ping-pong of @rounds: node 0 sends, node 1 answers each message the
 * moment it is delivered, node 0 sends the next the moment the answer is.
 */
static void pingpong(struct pair *pr, int rounds, uint32_t len,
		     struct pp_stats *st, drop_fn drop, void *arg)
{
	struct node *a = pr->n[0], *b = pr->n[1];
	int sent = 0, answered = 0, a0 = a->nrx, b0 = b->nrx;

	while (answered < rounds) {
		if (sent == answered && a->nrx - a0 == answered &&
		    (!answered || a->rx[a0 + answered - 1].done)) {
			send_one(pr, 0, len, 1000 + a0 + sent, 7);
			sent++;
		}
		if (b->nrx - b0 > answered && b->rx[b0 + answered].done) {
			send_one(pr, 1, len, 2000 + b0 + answered, 7);
			answered++;
		}
		if (!pp_step(pr, st, drop, arg))
			break;
	}
	/* The last answer's delivery. */
	while (a->nrx - a0 < answered || !a->rx[a0 + answered - 1].done)
		if (!pp_step(pr, st, drop, arg))
			break;
}

/*
 * In an exchange of answers every ACK rides on the answer: after the first
 * round (each side learns that the other answers), no ACK packet at all.
 * A message then left unanswered is ACKed ack_reply_wait_us later, once,
 * and the next at once again.
 */
static void test_acks_ride_on_answers(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct pp_stats warm = { 0 }, st = { 0 };
	uint64_t t0, took;
	int i;

	pingpong(pr, 1, 64, &warm, no_drop, NULL);
	CHECK(warm.acks[0] == 1 && warm.blocks[0] == 0,
	      "first round: the answer's ACK on its own (%d), no block (%d)",
	      warm.acks[0], warm.blocks[0]);
	pingpong(pr, 20, 64, &st, no_drop, NULL);
	CHECK(a->nrx == 21 && b->nrx == 21, "every message arrived: %d %d",
	      a->nrx, b->nrx);
	for (i = 0; i < 21; i++)
		CHECK(rx_intact(&a->rx[i]) && rx_intact(&b->rx[i]) &&
		      a->rx[i].done == 1 && b->rx[i].done == 1, "message %d", i);
	CHECK(st.acks[0] == 0 && st.acks[1] <= 1,
	      "no ACK packets in 20 rounds (but maybe the last answer's): %d and %d",
	      st.acks[0], st.acks[1]);
	CHECK(st.blocks[0] == 20 && st.blocks[1] >= 19,
	      "ACK blocks on the answers: %d and %d", st.blocks[0], st.blocks[1]);
	CHECK(ectr(b->eng)->acks_piggybacked == 20 &&
	      ectr(a->eng)->acks_piggybacked >= 19,
	      "acks_piggybacked %llu and %llu",
	      (unsigned long long)ectr(b->eng)->acks_piggybacked,
	      (unsigned long long)ectr(a->eng)->acks_piggybacked);
	CHECK(a->sends_done[SRD_COMP_OK] == 21, "sends completed: %d",
	      a->sends_done[SRD_COMP_OK]);
	/* The RTT samples are the network's: the wait is taken out. */
	CHECK(a->peer->rtt.srtt_us < 100, "srtt %u us", a->peer->rtt.srtt_us);

	/* Unanswered: its ACK after the wait, the next one's at once. */
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	t0 = pr->now;
	send_one(pr, 0, 64, 7, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	took = a->last_done_us - t0;
	CHECK(took >= c.ack_reply_wait_us && took < c.ack_reply_wait_us + 100,
	      "completed after the wait: %llu us", (unsigned long long)took);
	CHECK(ectr(b->eng)->ack_reply_timeouts == 1 && !b->peer->interactive,
	      "one wait in vain, and no more waiting");
	t0 = pr->now;
	send_one(pr, 0, 64, 8, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	took = a->last_done_us - t0;
	CHECK(took < 100, "then ACKed at once: %llu us", (unsigned long long)took);
	CHECK(ectr(a->eng)->rto_expired == 0 && ectr(a->eng)->tail_probes == 0 &&
	      ectr(b->eng)->rto_expired == 0 && ectr(b->eng)->tail_probes == 0,
	      "no timer fired for a waiting ACK");

	/*
	 * Answers of full segments only (3 x 1024) have no room for the
	 * block: the ACK goes alone as the answer starts, not after the wait.
	 */
	memset(&st, 0, sizeof(st));
	pingpong(pr, 5, 64, &st, no_drop, NULL);
	t0 = ectr(b->eng)->ack_reply_timeouts;
	for (i = 0; i < 5; i++) {
		uint64_t start = pr->now;
		int done = a->sends_done[SRD_COMP_OK];

		send_one(pr, 0, 64, 30 + i, 7);
		while (a->sends_done[SRD_COMP_OK] == done && pp_step(pr, &st, no_drop, NULL))
			if (b->nrx && b->rx[b->nrx - 1].done &&
			    b->rx[b->nrx - 1].imm == 30 + (uint32_t)i) {
				send_one(pr, 1, 3072, 40 + i, 7);
				b->rx[b->nrx - 1].imm = 0;	/* answered */
			}
		CHECK(pr->now - start < 200, "request %d complete in %llu us", i,
		      (unsigned long long)(pr->now - start));
	}
	CHECK(ectr(b->eng)->ack_reply_timeouts == t0, "no wait ran out");
	pair_free(pr);

	/* With the wait off, every message is ACKed on its own. */
	c.ack_reply_wait_us = 0;
	pr = pair_new(&c);
	memset(&st, 0, sizeof(st));
	pingpong(pr, 10, 64, &st, no_drop, NULL);
	CHECK(st.acks[0] == 10 && st.acks[1] >= 9 && st.blocks[0] == 0,
	      "ack_reply_wait_us 0: %d and %d ACK packets, %d blocks",
	      st.acks[0], st.acks[1], st.blocks[0]);
	pair_free(pr);
}

/*
 * Node 0 sends a message over a path of smoothed RTT @srtt_us (both ends'
 * estimate, set); node 1 answers it @late_us after it arrived.  The
 * packets themselves still take 5 us.
 */
static void late_answer(struct pair *pr, uint32_t srtt_us, uint64_t late_us,
			uint32_t imm)
{
	struct node *a = pr->n[0], *b = pr->n[1];
	struct pp_stats st = { 0 };
	int nrx = b->nrx, done = a->sends_done[SRD_COMP_OK];
	uint64_t answer_at;

	a->peer->rtt.srtt_us = srtt_us;
	b->peer->rtt.srtt_us = srtt_us;
	send_one(pr, 0, 64, imm, 7);
	while (b->nrx == nrx || !b->rx[nrx].done)
		if (!pp_step(pr, &st, no_drop, NULL))
			break;
	answer_at = pr->now + late_us;
	pair_run(pr, answer_at, false, no_drop, NULL);
	if (pr->now < answer_at)
		pr->now = answer_at;
	send_one(pr, 1, 64, imm + 1, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(b->nrx == nrx + 1 && a->sends_done[SRD_COMP_OK] == done + 1,
	      "message %u delivered and complete", imm);
}

/*
 * The reply wait follows the RTT (srd_reply_wait_us()): over a path of
 * 600 us the receiver holds an ACK 1800 us for its answer, and the
 * sender allows for it before it probes; over a fast path the same
 * answer, 1500 us late, finds the 500 us wait run out.
 */
static void test_reply_wait_follows_rtt(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct pp_stats st = { 0 };
	uint64_t pig, vain;

	CHECK(c.ack_reply_wait_us == 500, "the default wait: %u us",
	      c.ack_reply_wait_us);
	pingpong(pr, 3, 64, &st, no_drop, NULL);
	CHECK(b->peer->interactive && a->peer->remote_waits,
	      "an exchange of answers");
	pig = ectr(b->eng)->acks_piggybacked;
	vain = ectr(b->eng)->ack_reply_timeouts;
	b->peer->rtt.srtt_us = 600;
	CHECK(srd_reply_wait_us(b->peer, SRD_REPLY_WAIT_RTTS) == 1800,
	      "three RTTs of 600 us: %u us",
	      srd_reply_wait_us(b->peer, SRD_REPLY_WAIT_RTTS));
	late_answer(pr, 600, 1500, 50);
	CHECK(ectr(b->eng)->ack_reply_timeouts == vain &&
	      ectr(b->eng)->acks_piggybacked == pig + 1,
	      "slow path: the ACK rode on the late answer (%llu waits in vain, %llu on answers)",
	      (unsigned long long)(ectr(b->eng)->ack_reply_timeouts - vain),
	      (unsigned long long)(ectr(b->eng)->acks_piggybacked - pig));
	CHECK(ectr(a->eng)->tail_probes == 0 && ectr(a->eng)->rto_expired == 0,
	      "slow path: the sender waited for it: %llu probes, %llu RTOs",
	      (unsigned long long)ectr(a->eng)->tail_probes,
	      (unsigned long long)ectr(a->eng)->rto_expired);

	late_answer(pr, 10, 1500, 60);
	CHECK(ectr(b->eng)->ack_reply_timeouts == vain + 1,
	      "fast path: the 500 us wait ran out (%llu)",
	      (unsigned long long)(ectr(b->eng)->ack_reply_timeouts - vain));
	CHECK(ectr(a->eng)->tail_probes == 0 && ectr(a->eng)->rto_expired == 0,
	      "fast path: the ACK came before any probe: %llu probes, %llu RTOs",
	      (unsigned long long)ectr(a->eng)->tail_probes,
	      (unsigned long long)ectr(a->eng)->rto_expired);
	pair_free(pr);

	/* The wait grows to SRD_REPLY_WAIT_MAX times the setting, no more. */
	pr = pair_new(&c);
	pr->n[1]->peer->rtt.srtt_us = 100000;
	CHECK(srd_reply_wait_us(pr->n[1]->peer, SRD_REPLY_WAIT_RTTS) ==
	      SRD_REPLY_WAIT_MAX * c.ack_reply_wait_us, "capped: %u us",
	      srd_reply_wait_us(pr->n[1]->peer, SRD_REPLY_WAIT_RTTS));
	pr->n[1]->peer->rtt.srtt_us = 0;
	CHECK(srd_reply_wait_us(pr->n[1]->peer, SRD_REPLY_WAIT_RTTS) ==
	      c.ack_reply_wait_us, "no RTT yet: the setting");
	pair_free(pr);
	c.ack_reply_wait_us = 0;
	pr = pair_new(&c);
	pr->n[1]->peer->rtt.srtt_us = 600;
	CHECK(srd_reply_wait_us(pr->n[1]->peer, SRD_REPLY_WAIT_RTTS) == 0,
	      "off stays off");
	pair_free(pr);
}

/* Lose the DATA packets that carry an ACK block to node @arg, once each. */
static bool drop_blocks_once(struct pair *pr, struct qpkt *q, void *arg)
{
	int *left = arg;

	(void)pr;
	if (q->to == 0 && q->data[1] == SRD_WOP_DATA &&
	    (q->data[2] & SRD_WF_DATA_HAS_ACK) && *left > 0) {
		(*left)--;
		return true;
	}
	return false;
}

/*
 * An answer carrying the ACK is lost: both its data and the ACK come back
 * (the sender's tail probe is ACKed at once; the answer is retransmitted),
 * every message is delivered once and completes OK.
 */
static void test_lost_answer_loses_no_ack(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0], *b = pr->n[1];
	struct pp_stats st = { 0 };
	int drop = 3, i;

	pingpong(pr, 2, 64, &st, no_drop, NULL);
	pingpong(pr, 10, 64, &st, drop_blocks_once, &drop);
	pair_run(pr, pr->now + 2000000, false, no_drop, NULL);
	CHECK(drop == 0, "three answers lost");
	CHECK(a->nrx == 12 && b->nrx == 12, "all arrived: %d %d", a->nrx, b->nrx);
	for (i = 0; i < 12; i++)
		CHECK(a->rx[i].done == 1 && b->rx[i].done == 1 &&
		      rx_intact(&a->rx[i]) && rx_intact(&b->rx[i]),
		      "message %d once and intact", i);
	CHECK(a->sends_done[SRD_COMP_OK] == 12 && b->sends_done[SRD_COMP_OK] == 12,
	      "all completed OK: %d %d", a->sends_done[SRD_COMP_OK],
	      b->sends_done[SRD_COMP_OK]);
	CHECK(ectr(b->eng)->retransmits >= 3, "the answers went again: %llu",
	      (unsigned long long)ectr(b->eng)->retransmits);
	pair_free(pr);
}

/*
 * A READ's response carries the ACK of its request: the responder sends
 * no ACK packet of its own.
 */
static void test_read_response_carries_ack(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *b = pr->n[1];
	struct rdbuf *rd = rdbuf_new(512);
	struct pp_stats st = { 0 };

	send_one(pr, 0, 64, 1, 7);		/* the handshake */
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	memset(b->mem, 0x5a, 512);
	CHECK(rdma_one(pr, 0, SRD_MSG_READ, MEM_VA, b->rkey, 512, 0, 512, rd,
		       false) == SRD_SEND_OK, "posted");
	while (pp_step(pr, &st, no_drop, NULL))
		;
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 2 && all_byte(rd->buf, 512, 0x5a),
	      "read done, bytes right");
	CHECK(st.acks[0] == 0 && st.blocks[0] == 1,
	      "the response carried the ACK: %d ACK packets, %d blocks",
	      st.acks[0], st.blocks[0]);
	rdbuf_free(rd);
	pair_free(pr);
}

/*
 * The tail loss probe waits two smoothed RTTs, or the RTT and four mean
 * deviations where that is more, as the RTO does: on a path whose RTT
 * has a long tail (TCG guests, a busy host), not a probe for every late
 * ACK.  Its ACKs lost, a message is probed once that much has passed.
 */
static void test_tlp_follows_rtt_variance(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0];
	uint64_t t0;
	int drop;

	send_one(pr, 0, 64, 1, 7);		/* the handshake */
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 1 && !a->peer->remote_waits,
	      "warm-up");
	a->peer->rtt.srtt_us = 1000;
	a->peer->rtt.rttvar_us = 1000;		/* srtt + 4 rttvar: 5000 us */
	a->peer->rtt.rto_us = 50000;		/* out of the way */
	t0 = pr->now;
	drop = 100;				/* every ACK from here */
	send_one(pr, 0, 64, 2, 7);
	pair_run(pr, t0 + 2 * 1000 + c.ack_delay_us + 500, false, drop_acks,
		 &drop);
	CHECK(ectr(a->eng)->tail_probes == 0,
	      "no probe at 2 srtt: %llu",
	      (unsigned long long)ectr(a->eng)->tail_probes);
	pair_run(pr, t0 + 5000 + c.ack_delay_us + 100, false, drop_acks, &drop);
	CHECK(ectr(a->eng)->tail_probes == 1 && ectr(a->eng)->rto_expired == 0,
	      "a probe at srtt + 4 rttvar: probes %llu, RTOs %llu",
	      (unsigned long long)ectr(a->eng)->tail_probes,
	      (unsigned long long)ectr(a->eng)->rto_expired);
	pair_free(pr);
}

/*
 * The ACKs of a window's tail are lost (a dead path the other way): a
 * tail loss probe brings an ACK within a few RTTs, not an RTO later.
 */
static void test_tail_ack_lost_probe(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct node *a = pr->n[0];
	uint64_t t0, rto;
	int drop;

	send_one(pr, 0, 4000, 1, 7);		/* an RTT estimate first */
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(a->sends_done[SRD_COMP_OK] == 1, "warm-up");
	rto = srd_rto_backed_off(&a->peer->rtt, &c, 0);
	t0 = pr->now;
	drop = 3;				/* every ACK of the next message */
	send_one(pr, 0, 3000, 2, 7);
	pair_run(pr, pr->now + 1000000, false, drop_acks, &drop);
	CHECK(a->sends_done[SRD_COMP_OK] == 2, "delivered");
	CHECK(ectr(a->eng)->tail_probes >= 1 && ectr(a->eng)->rto_expired == 0,
	      "a probe, no RTO: probes %llu rtos %llu",
	      (unsigned long long)ectr(a->eng)->tail_probes,
	      (unsigned long long)ectr(a->eng)->rto_expired);
	CHECK(a->last_done_us - t0 < rto, "done in %llu us, before the %llu us RTO",
	      (unsigned long long)(a->last_done_us - t0), (unsigned long long)rto);
	CHECK(ectr(a->eng)->spurious_retransmits == 0,
	      "a probe's duplicate is not a needless retransmission");
	pair_free(pr);

	/* A clean network: one ACK per one-packet message, no copies. */
	pr = pair_new(&c);
	for (drop = 0; drop < 10; drop++) {
		send_one(pr, 0, 64, drop, 7);
		pair_run(pr, pr->now + 100000, false, no_drop, NULL);
	}
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 10 &&
	      ectr(pr->n[1]->eng)->acks_sent == 10,
	      "10 messages, %llu ACKs",
	      (unsigned long long)ectr(pr->n[1]->eng)->acks_sent);
	pair_free(pr);
}

/*
 * @n one-packet messages, one at a time, every @every-th one's ACK lost;
 * the receiver's application takes each as it comes.
 */
static void lone_msgs(struct pair *pr, int n, int every)
{
	struct node *r = pr->n[1];
	int i, drop;

	for (i = 0; i < n; i++) {
		drop = every && i % every == every - 1;
		send_one(pr, 0, 64, i, 7);
		pair_run(pr, pr->now + 100000, false, drop_acks, &drop);
		while (r->nrx)
			free(r->rx[--r->nrx].data);
	}
}

/*
 * Tail ACKs go twice while ACKs are being lost: while the data that came
 * again (its sender had no ACK in time) is more than a share of what
 * came.  A late ACK now and then, as a busy receiver has, is not that.
 */
/* The ACKs of 20 clean messages sent after lone_msgs(@n, @every). */
static uint64_t acks_after(struct pair *pr, int n, int every)
{
	uint64_t acks;

	lone_msgs(pr, n, every);
	acks = ectr(pr->n[1]->eng)->acks_sent;
	lone_msgs(pr, 20, 0);
	return ectr(pr->n[1]->eng)->acks_sent - acks;
}

static void test_tail_ack_copies(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	uint64_t acks;

	acks = acks_after(pr, 300, 150);	/* two ACKs lost in 300 */
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 320 && acks == 20,
	      "2 in 300 lost: one ACK a message after (%llu for 20)",
	      (unsigned long long)acks);
	acks = acks_after(pr, 100, 10);		/* one in ten */
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 440 && acks == 40,
	      "1 in 10 lost: two copies after (%llu for 20)",
	      (unsigned long long)acks);
	pair_free(pr);
}

/* First sends of DATA to node 1: how many, and which asked for an ACK. */
struct ack_now_log {
	int n;
	uint32_t flagged;	/* bit i: the i-th asked */
};

static bool log_ack_now(struct pair *pr, struct qpkt *q, void *arg)
{
	struct ack_now_log *l = arg;
	struct srd_pkt p;

	(void)pr;
	if (q->to != 1 || srd_wire_parse(q->data, q->len, &p) != SRD_PARSE_OK ||
	    p.opcode != SRD_WOP_DATA || p.flags & SRD_WF_DATA_RETRANSMIT)
		return false;
	if (l->n < 32 && p.flags & SRD_WF_DATA_ACK_NOW)
		l->flagged |= 1u << l->n;
	l->n++;
	return false;
}

/*
 * A message's last segment asks for an ACK at once only when no DATA
 * follows it and fewer than ack_every_pkts (4) are unACKed with it:
 * eight one-segment messages sent in one go make the ACKs of every
 * fourth packet, and none asks; the last of three asks; a message alone,
 * as in a ping-pong, asks; so does one that fills a window of two.
 */
static void test_ack_now_ends_a_burst(void)
{
	struct srd_config c = small_cfg();
	struct ack_now_log l = { .n = 0 };
	struct pair *pr = pair_new(&c);
	uint64_t acks;
	int i;

	/* Queued until the peers have met, then sent in one pump. */
	for (i = 0; i < 8; i++)
		CHECK(send_one(pr, 0, 512, 400 + i, 7) == 0, "post %d", i);
	acks = ectr(pr->n[1]->eng)->acks_sent;
	pair_run(pr, pr->now + 1000000, false, log_ack_now, &l);
	acks = ectr(pr->n[1]->eng)->acks_sent - acks;
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 8, "8 sends OK: %d",
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	CHECK(l.n == 8 && l.flagged == 0,
	      "none of 8 asks, the receiver's count ACKs: %d packets, asked %#x",
	      l.n, l.flagged);
	CHECK(acks == 2, "an ACK for the fourth and the eighth: %llu",
	      (unsigned long long)acks);

	l = (struct ack_now_log){ .n = 0 };
	CHECK(send_one(pr, 0, 512, 408, 7) == 0, "post alone");
	pair_run(pr, pr->now + 1000000, false, log_ack_now, &l);
	CHECK(l.n == 1 && l.flagged == 1, "a message alone asks: %#x",
	      l.flagged);

	pair_free(pr);

	/* Again queued until the peers meet. */
	pr = pair_new(&c);
	l = (struct ack_now_log){ .n = 0 };
	for (i = 0; i < 3; i++)
		CHECK(send_one(pr, 0, 512, 409 + i, 7) == 0, "post %d", i);
	acks = ectr(pr->n[1]->eng)->acks_sent;
	pair_run(pr, pr->now + 1000000, false, log_ack_now, &l);
	acks = ectr(pr->n[1]->eng)->acks_sent - acks;
	CHECK(l.n == 3 && l.flagged == 1u << 2,
	      "the last of three asks: %d packets, asked %#x", l.n, l.flagged);
	CHECK(acks == 1, "one ACK for three: %llu", (unsigned long long)acks);
	pair_free(pr);

	/*
	 * A window of 2 packets: each second full packet fills it, and
	 * asks (smaller ones weigh less: test_window_counts_bytes).
	 */
	c.cwnd_init_pkts = c.cwnd_max_pkts = 2;
	c.cwnd_min_256ths = 2 * SRD_CWND_ONE;
	c.pacing_burst_pkts = 2;
	pr = pair_new(&c);
	l = (struct ack_now_log){ .n = 0 };
	for (i = 0; i < 4; i++)
		CHECK(send_one(pr, 0, c.seg_bytes, 410 + i, 7) == 0, "post %d", i);
	pair_run(pr, pr->now + 1000000, false, log_ack_now, &l);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 4, "4 sends OK: %d",
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	CHECK(l.n == 4 && l.flagged == 0xa,
	      "the window's second packets ask: %d packets, asked %#x", l.n,
	      l.flagged);
	pair_free(pr);
}

/* DATA packets queued for node 1. */
static int queued_data(const struct pair *pr)
{
	int i, n = 0;

	for (i = 0; i < pr->qlen; i++)
		n += pr->q[i].to == 1 && pr->q[i].data[1] == SRD_WOP_DATA;
	return n;
}

/*
 * The window counts bytes on the wire, in full packets' worth: a window
 * of two packets lets two full segments go, and sixteen 64-byte sends
 * (116 bytes with the header, 27/256 of a packet each), which before
 * went two at a time, each pair waiting for an ACK.
 */
static void test_window_counts_bytes(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr;
	uint64_t stalls;
	int i;

	c.cwnd_init_pkts = c.cwnd_max_pkts = 2;
	c.cwnd_min_256ths = 2 * SRD_CWND_ONE;
	c.pacing_burst_pkts = 2;
	c.pacing_gain_pct = 0;		/* the window alone */
	pr = pair_new(&c);
	send_one(pr, 0, 100, 1, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	stalls = ectr(pr->n[0]->eng)->cwnd_stalls;

	for (i = 0; i < 16; i++)
		CHECK(send_one(pr, 0, 64, 10 + i, 7) == 0, "post %d", i);
	CHECK(queued_data(pr) == 16 &&
	      ectr(pr->n[0]->eng)->cwnd_stalls == stalls,
	      "16 small sends in flight at once: %d, window stalls %llu",
	      queued_data(pr),
	      (unsigned long long)(ectr(pr->n[0]->eng)->cwnd_stalls - stalls));
	CHECK(pr->n[0]->peer->inflight_w == 16 * 27,
	      "their weight %u (16 x 27)", pr->n[0]->peer->inflight_w);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 17 &&
	      pr->n[0]->peer->inflight_w == 0, "all completed, %u in flight",
	      pr->n[0]->peer->inflight_w);

	for (i = 0; i < 4; i++)
		CHECK(send_one(pr, 0, c.seg_bytes, 30 + i, 7) == 0, "post %d", i);
	CHECK(queued_data(pr) == 2 &&
	      ectr(pr->n[0]->eng)->cwnd_stalls == stalls + 1,
	      "full segments: 2 in flight, then the window holds: %d",
	      queued_data(pr));
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 21, "all 21 completed: %d",
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	pair_free(pr);
}

static bool drop_until(struct pair *pr, struct qpkt *q, void *arg)
{
	(void)q;
	return pr->now < *(uint64_t *)arg;
}

/*
 * 300 ms of total loss is well within the retry budget (about a second
 * at the smallest RTO).  It used to run out: an RTO lost only the packets
 * older than itself, so packets sent microseconds apart expired one RTO
 * each, back to back once the backoff reached rto_max_us.
 */
static void test_outage_300ms_within_budget(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	uint64_t until;
	int i;

	for (i = 0; i < 20; i++)
		send_one(pr, 0, 16384, i, 7);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	for (i = 0; i < 20; i++)
		send_one(pr, 0, 16384, 100 + i, 7);
	until = pr->now + 300000;
	pair_run(pr, pr->now + 10000000, false, drop_until, &until);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 40 &&
	      ectr(pr->n[0]->eng)->peer_unreachable == 0,
	      "all delivered, no unreachable peer: ok %d unresp %d, %llu RTOs",
	      pr->n[0]->sends_done[SRD_COMP_OK],
	      pr->n[0]->sends_done[SRD_COMP_UNRESP_REMOTE],
	      (unsigned long long)ectr(pr->n[0]->eng)->rto_expired);
	pair_free(pr);
}

/*
 * An RTO blames only the path of the oldest packet (the others' paths did
 * nothing known to be wrong), and spurious RTOs raise the RTO floor no
 * higher than rto_floor_max_us.
 */
static void test_rto_blame_and_floor_cap(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	struct srd_peer *p = pr->n[0]->peer;
	uint64_t tmo0 = 0, tmo1 = 0, tx0[4], used = 0;
	struct srd_rtt r;
	int i;

	send_one(pr, 0, 100, 1, 7);		/* the handshake, an RTT */
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	for (i = 0; i < 4; i++) {
		tmo0 += p->paths[i].timeouts;
		tx0[i] = p->paths[i].tx_pkts;
	}
	send_one(pr, 0, 6 * 1024, 2, 7);	/* six packets, on every path */
	for (i = 0; i < 200000 && !ectr(pr->n[0]->eng)->rto_expired; i++) {
		pair_run(pr, pr->now + 10, false, drop_all_data, NULL);
		pr->now += 10;
		fire_timers(pr);
	}
	for (i = 0; i < 4; i++) {
		tmo1 += p->paths[i].timeouts;
		used += p->paths[i].tx_pkts > tx0[i];
	}
	CHECK(ectr(pr->n[0]->eng)->rto_expired == 1 && used >= 2 && tmo1 - tmo0 == 1,
	      "one RTO over %llu paths in flight blames one: %llu timeouts",
	      (unsigned long long)used, (unsigned long long)(tmo1 - tmo0));
	pair_free(pr);

	srd_rtt_init(&r, &c);
	srd_rtt_sample(&r, &c, 100, 1);
	for (i = 0; i < 20; i++)
		srd_rtt_spurious_rto(&r, &c);
	CHECK(r.floor_us == c.rto_floor_max_us && r.rto_us == c.rto_floor_max_us,
	      "the floor stops at %u us: %u", c.rto_floor_max_us, r.floor_us);
}

/* Node 0's timers, as time passes, its packets held (a stalled receiver). */
static void hold_until_rto(struct pair *pr, uint64_t rtos)
{
	int i;

	for (i = 0; i < 200000 && ectr(pr->n[0]->eng)->rto_expired < rtos; i++) {
		pr->now += 10;
		fire_timers(pr);
	}
}

/*
 * The first RTO of a run resends the oldest packet alone (F-RTO): a
 * receiver that only stalled then ACKs the originals, and nothing else
 * is sent twice.  A second RTO in a row resends all that is in flight.
 */
static void test_first_rto_resends_oldest(void)
{
	struct srd_config c = small_cfg();
	struct pair *pr = pair_new(&c);
	const struct srd_counters *k;
	struct srd_peer *p;
	uint64_t retx0, retx1;

	send_one(pr, 0, 100, 1, 7);		/* the handshake, an RTT */
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	send_one(pr, 0, 8 * 1024, 2, 7);	/* eight packets, held */
	hold_until_rto(pr, 1);
	k = ectr(pr->n[0]->eng);
	retx0 = k->retransmits - k->tail_probes;
	CHECK(k->rto_expired == 1 && retx0 == 1,
	      "the first RTO resent one packet: %llu (and %llu tail probes)",
	      (unsigned long long)retx0, (unsigned long long)k->tail_probes);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	k = ectr(pr->n[0]->eng);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 2 &&
	      k->retransmits - k->tail_probes == 1 && k->rto_expired == 1 &&
	      k->spurious_retransmits >= 1,
	      "the stalled receiver's ACKs: no more resent (%llu), the resend found needless (%llu)",
	      (unsigned long long)(k->retransmits - k->tail_probes),
	      (unsigned long long)k->spurious_retransmits);

	send_one(pr, 0, 8 * 1024, 3, 7);
	retx1 = k->retransmits - k->tail_probes;
	hold_until_rto(pr, 2);
	k = ectr(pr->n[0]->eng);
	CHECK(k->retransmits - k->tail_probes == retx1 + 1,
	      "again one at the first RTO: %llu",
	      (unsigned long long)(k->retransmits - k->tail_probes - retx1));
	hold_until_rto(pr, 3);
	p = pr->n[0]->peer;
	CHECK(p->inflight + (p->retx_tail - p->retx_head) >= 8 &&
	      p->inflight <= 1,
	      "the second lost all in flight: %u resent at the floor's window, %u queued",
	      p->inflight, p->retx_tail - p->retx_head);
	pair_run(pr, pr->now + 1000000, false, no_drop, NULL);
	CHECK(pr->n[0]->sends_done[SRD_COMP_OK] == 3, "delivered: %d",
	      pr->n[0]->sends_done[SRD_COMP_OK]);
	pair_free(pr);
}

static void test_config_validate(void)
{
	struct srd_config c;

	srd_config_default(&c);
	CHECK(srd_config_validate(&c) == 0, "default valid");
	c.tx_window_pkts = 300;
	CHECK(srd_config_validate(&c) < 0, "window not a power of 2");
	srd_config_default(&c);
	c.n_paths = 0;
	CHECK(srd_config_validate(&c) < 0, "0 paths");
	c.n_paths = 64;
	CHECK(srd_config_validate(&c) == 0, "64 paths");
}

struct test {
	const char *name;
	void (*fn)(void);
};

static const struct test tests[] = {
	{ "seq_wraparound", test_seq_wraparound },
	{ "sack_bitmap_128", test_sack_bitmap },
	{ "wire_roundtrip_and_rejects", test_wire_roundtrip_and_rejects },
	{ "wire_msg_encoder_agrees", test_wire_msg_encoder_agrees },
	{ "rcv_record_fast_path_agrees", test_rcv_record_fast_path_agrees },
	{ "wire_ack_encoder_agrees", test_wire_ack_encoder_agrees },
	{ "path_select_agrees", test_path_select_agrees },
	{ "ud_header_roundtrip_and_rejects", test_ud_header_roundtrip_and_rejects },
	{ "rto_estimator", test_rto_estimator },
	{ "cc_window_aimd_floor_ceiling_pacing", test_cc_window },
	{ "cc_loss_cuts_only_where_a_queue_stands", test_cc_loss_needs_queue },
	{ "cc_target_scales_with_min_rtt", test_cc_target_scales_with_min_rtt },
	{ "config_check_names_the_rule", test_config_check_names_the_rule },
	{ "cc_fixed_target", test_cc_fixed_target },
	{ "cc_flow_scaling", test_cc_flow_scaling },
	{ "cc_drain", test_cc_drain },
	{ "cc_drain_fast_path_agrees", test_cc_drain_fast_path_agrees },
	{ "path_avoid_and_probe_back", test_path_avoid_and_probe_back },
	{ "segmentation_reassembly_out_of_order", test_segmentation_reassembly_out_of_order },
	{ "duplicates_suppressed", test_duplicates_suppressed },
	{ "spurious_retransmit_undone", test_spurious_retransmit_undone },
	{ "early_timer_changes_nothing", test_early_timer_changes_nothing },
	{ "slow_path_not_starved", test_slow_path_not_starved },
	{ "path_sample_below_resolution", test_path_sample_below_resolution },
	{ "message_bitmaps_inline", test_message_bitmaps_inline },
	{ "message_cache_bounded", test_message_cache_bounded },
	{ "receiver_qp_gone_mid_message", test_receiver_qp_gone_mid_message },
	{ "receive_aborted_when_sender_stops", test_receive_aborted_when_sender_stops },
	{ "receive_after_an_abort_times_out",
	  test_receive_after_an_abort_times_out },
	{ "slow_sender_keeps_receives", test_slow_sender_keeps_receives },
	{ "round_robin_rounds", test_round_robin_rounds },
	{ "left_behind_receive_aborted", test_left_behind_receive_aborted },
	{ "trickling_sender_loses_receives", test_trickling_sender_loses_receives },
	{ "rnr_retry_counting_7_infinite", test_rnr_retry_counting },
	{ "rnr_waits_off_the_window", test_rnr_waits_off_the_window },
	{ "rnr_gate_paced_by_its_receiver", test_rnr_gate_paced_by_its_receiver },
	{ "queue_serves_qps_in_turn", test_queue_serves_qps_in_turn },
	{ "error_naks_bad_qpn_qkey", test_error_naks },
	{ "retry_budget_unreachable", test_retry_budget_unreachable },
	{ "tag_mismatch_and_restart", test_tag_mismatch_and_restart },
	{ "siphash_vectors", test_siphash_vectors },
	{ "counter_descs_cover_the_struct", test_counter_descs_cover_the_struct },
	{ "forged_hello_no_restart", test_forged_hello_no_restart },
	{ "poc_one_guess_partition", test_poc_one_guess_partition },
	{ "restart_claims_bounded", test_restart_claims_bounded },
	{ "restart_recovery_time", test_restart_recovery_time },
	{ "forged_slide_never_acks_undelivered", test_forged_slide_never_acks_undelivered },
	{ "stray_stateless", test_stray_stateless },
	{ "peer_idle", test_peer_idle },
	{ "peer_idle_receiving_and_unanswered", test_peer_idle_receiving_and_unanswered },
	{ "no_leak_after_destroy", test_no_leak_after_destroy },
	{ "rdma_write_read", test_rdma_write_read },
	{ "rdma_chunks", test_rdma_chunks },
	{ "rdma_access_refused", test_rdma_access_refused },
	{ "rdma_target_gone_mid_operation", test_rdma_target_gone_mid_operation },
	{ "rdma_read_response_timeout", test_rdma_read_response_timeout },
	{ "rdma_reads_both_ways_no_deadlock", test_rdma_reads_both_ways },
	{ "rdma_read_index", test_rdma_read_index },
	{ "rdma_under_loss", test_rdma_under_loss },
	{ "trace_events", test_trace_events },
	{ "rdma_requester_qp_gone", test_rdma_requester_gone },
	{ "tail_ack_lost_probe_not_rto", test_tail_ack_lost_probe },
	{ "tlp_follows_rtt_variance", test_tlp_follows_rtt_variance },
	{ "tail_ack_copies_on_loss_not_lateness", test_tail_ack_copies },
	{ "ack_now_ends_a_burst", test_ack_now_ends_a_burst },
	{ "window_counts_bytes", test_window_counts_bytes },
	{ "acks_ride_on_answers", test_acks_ride_on_answers },
	{ "reply_wait_follows_rtt", test_reply_wait_follows_rtt },
	{ "lost_answer_loses_no_ack", test_lost_answer_loses_no_ack },
	{ "read_response_carries_ack", test_read_response_carries_ack },
	{ "outage_300ms_within_budget", test_outage_300ms_within_budget },
	{ "rto_blame_and_floor_cap", test_rto_blame_and_floor_cap },
	{ "first_rto_resends_oldest", test_first_rto_resends_oldest },
	{ "config_validate", test_config_validate },
	{ "packet_head_only", test_packet_head_only },
};

int main(void)
{
	unsigned int i, n = sizeof(tests) / sizeof(tests[0]);
	int failed = 0;

	printf("TAP version 13\n1..%u\n", n);
	for (i = 0; i < n; i++) {
		failures_in_test = 0;
		tests[i].fn();
		printf("%sok %u - engine_unit_%s\n", failures_in_test ? "not " : "",
		       i + 1, tests[i].name);
		failed += !!failures_in_test;
	}
	return failed ? 1 : 0;
}
