// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: packets per second per core of the engine alone.
 *
 *   bench [-s SIZE] [-b SEG] [-n MSGS] [-q DEPTH] [-k KIND] [-c]
 *
 * Two engines in one thread exchange messages through an in-memory
 * queue: no network, no loss, no simulator.  Every DATA packet is
 * encoded by the sender, parsed, placed and ACKed by the receiver, and
 * every ACK processed by the sender, as in the kernel; the OS layer here
 * does only what the kernel's must (copy the header and the payload into
 * a packet buffer, copy the payload out on receipt).  The figure is
 * engine packets (DATA and ACK, both directions) per CPU second of this
 * one thread, which runs both engines: packets per second per core.
 *
 *   -s SIZE   message bytes (default 65536)
 *   -b SEG    payload bytes per DATA packet (default 1400, as on a
 *             1500-byte netdev)
 *   -n MSGS   messages (default 20000)
 *   -q DEPTH  messages kept posted (default 64; 1: one at a time, as
 *             a ping-pong's each side)
 *   -k KIND   send, write or read (default send)
 *   -c        do not copy payloads: the engine's own cost only
 *
 * Prints one line: "engine_bench: kind=K size=S seg=B msgs=N pkts=P
 * data_pkts=D cpu_s=T pkts_per_s=R data_pkts_per_s=R2 MB_per_s=M".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util.h"

#define QCAP	8192		/* packets in the queue: above the window */

/*
 * A packet buffer, of a header and one segment: taken from a free list
 * and given back once received, last freed first used, as the kernel's
 * slab recycles skbs; no buffer goes cold between uses.
 */
struct pkt {
	struct pkt *next_free;
	int to;
	uint32_t len;
	uint8_t data[];
};

struct bnode;

struct bench {
	struct bnode *n[2];
	struct pkt **q;		/* the wire: QCAP packets in order */
	uint32_t head, tail;
	struct pkt *free;
	uint64_t clock_us;
	uint32_t rnd;
	bool copy;
	uint8_t *src;		/* what every message carries */
	uint8_t *dst;		/* where the receiver puts it */
	uint32_t size;
	uint64_t done, failed, delivered;
};

struct bnode {
	struct bench *b;
	int id;
	struct srd_engine *eng;
	struct srd_peer *peer;
};

static uint64_t b_now(void *os)
{
	/* A clock that moves with the work, so timers never fire. */
	return ((struct bnode *)os)->b->clock_us;
}

static uint32_t b_rand(void *os)
{
	struct bench *b = ((struct bnode *)os)->b;

	b->rnd = b->rnd * 1103515245u + 12345u;
	return b->rnd ? b->rnd : 1;
}

static void *b_alloc(void *os, size_t n)
{
	(void)os;
	return calloc(1, n);
}

static void b_free(void *os, void *p, size_t n)
{
	(void)os;
	(void)n;
	free(p);
}

static void b_timer(void *os, void *peer_os, uint64_t d)
{
	(void)os;
	(void)peer_os;
	(void)d;
}

static int b_tx(void *os, void *peer_os, const struct srd_tx_desc *d)
{
	struct bnode *n = os;
	struct bench *b = n->b;
	struct pkt *p;

	(void)peer_os;
	if (b->tail - b->head == QCAP || !b->free)
		return -1;
	p = b->free;
	b->free = p->next_free;
	b->q[b->tail++ % QCAP] = p;
	p->to = !n->id;
	p->len = d->hdr_len + d->payload_len;
	memcpy(p->data, d->hdr, d->hdr_len);
	if (b->copy && d->payload_len)
		memcpy(p->data + d->hdr_len, b->src + d->payload_off,
		       d->payload_len);
	return 0;
}

/*
 * This OS's objects (engine/srd_engine.h): every message reads from src
 * and lands in dst, so there is nothing to tell apart.
 */
struct srd_inbound {
	char unused;
};

static struct srd_inbound b_inbound;

static enum srd_rx_verdict b_rx_begin(void *os, void *peer_os,
				      const struct srd_rx_msg_info *info,
				      struct srd_inbound **in)
{
	(void)os;
	(void)peer_os;
	(void)info;
	*in = &b_inbound;
	return SRD_RX_ACCEPT;
}

static void b_place(void *os, uint32_t off, const uint8_t *d, uint32_t len)
{
	struct bench *b = ((struct bnode *)os)->b;

	if (b->copy)
		memcpy(b->dst + off, d, len);
}

static int b_rx_data(void *os, struct srd_inbound *in, uint32_t off,
		     const struct srd_rx_payload *pl)
{
	(void)in;
	b_place(os, off, (const uint8_t *)pl->pkt + pl->off, pl->len);
	return 0;
}

static void b_rx_done(void *os, struct srd_inbound *in)
{
	(void)in;
	((struct bnode *)os)->b->delivered++;
}

static void b_rx_abort(void *os, struct srd_inbound *in)
{
	(void)os;
	(void)in;
}

static void b_send_done(void *os, struct srd_outbound *out,
			enum srd_comp_status st)
{
	struct bench *b = ((struct bnode *)os)->b;

	(void)out;
	if (st == SRD_COMP_OK)
		b->done++;
	else
		b->failed++;
}

static void b_read_data(void *os, struct srd_outbound *out, uint32_t off,
			const struct srd_rx_payload *pl)
{
	(void)out;
	b_place(os, off, (const uint8_t *)pl->pkt + pl->off, pl->len);
}

static void b_resp_done(void *os, struct srd_inbound *in,
			enum srd_comp_status st)
{
	(void)os;
	(void)in;
	(void)st;
}

static const struct srd_ops b_ops = {
	.now_us = b_now, .random_u32 = b_rand, .alloc = b_alloc,
	.free = b_free, .timer_set = b_timer, .transmit = b_tx,
	.rx_begin = b_rx_begin, .rx_data = b_rx_data, .rx_done = b_rx_done,
	.rx_abort = b_rx_abort, .send_done = b_send_done,
	.read_data = b_read_data, .resp_done = b_resp_done,
};

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-s SIZE] [-b SEG] [-n MSGS] [-q DEPTH]\n"
		"	[-k send|write|read] [-c]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	struct srd_send_req req = { .src_qpn = 1, .dst_qpn = 2, .qkey = 7,
				    .rnr_retry = 7 };
	uint32_t seg = 1400, nmsgs = 20000, depth = 64, posted = 0, i;
	enum srd_msg_kind kind = SRD_MSG_SEND;
	uint64_t pkts = 0, data_pkts = 0;
	struct srd_config cfg;
	struct bench b = { .copy = true, .size = 65536, .rnd = 1 };
	struct bnode nodes[2];
	uint8_t *pool;
	size_t stride;
	double t0, t;
	int opt;

	while ((opt = getopt(argc, argv, "s:b:n:q:k:c")) != -1) {
		switch (opt) {
		case 's':
			b.size = strtoul(optarg, NULL, 0);
			break;
		case 'b':
			seg = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			nmsgs = strtoul(optarg, NULL, 0);
			break;
		case 'q':
			depth = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			if (!strcmp(optarg, "send"))
				kind = SRD_MSG_SEND;
			else if (!strcmp(optarg, "write"))
				kind = SRD_MSG_WRITE;
			else if (!strcmp(optarg, "read"))
				kind = SRD_MSG_READ;
			else
				usage(argv[0]);
			break;
		case 'c':
			b.copy = false;
			break;
		default:
			usage(argv[0]);
		}
	}
	if (b.size > SRD_MAX_RDMA_MSG_BYTES || !nmsgs || seg > 9000 || !depth)
		usage(argv[0]);

	srd_config_default(&cfg);
	cfg.seg_bytes = seg;
	cfg.max_msg_bytes = b.size > cfg.max_msg_bytes ? b.size : cfg.max_msg_bytes;
	cfg.pacing_gain_pct = 0;	/* no network to pace for */
	cfg.tx_window_pkts = 1024;
	cfg.cwnd_init_pkts = 256;
	cfg.cwnd_max_pkts = 1024;
	if (srd_config_validate(&cfg)) {
		fprintf(stderr, "bad config %d\n", srd_config_validate(&cfg));
		return 2;
	}
	b.q = calloc(QCAP, sizeof(*b.q));
	/* Cache-line-sized strides: a buffer's tail shares no line. */
	stride = (sizeof(struct pkt) + SRD_HDR_MAX_BYTES + seg + 63) & ~63u;
	pool = aligned_alloc(64, (size_t)QCAP * stride);
	for (i = QCAP; i--;) {
		struct pkt *p = (struct pkt *)(pool + (size_t)i * stride);

		p->next_free = b.free;
		b.free = p;
	}
	b.src = malloc(b.size + 1);
	b.dst = malloc(b.size + 1);
	for (i = 0; i < b.size; i++)
		b.src[i] = (uint8_t)(i * 131);
	for (i = 0; i < 2; i++) {
		nodes[i].b = &b;
		nodes[i].id = (int)i;
		b.n[i] = &nodes[i];
		nodes[i].eng = srd_engine_create(&cfg, &b_ops, &nodes[i]);
		nodes[i].peer = srd_peer_create(nodes[i].eng, &nodes[i], "peer", 4);
	}
	/* The handshake, before the clock starts. */
	req.kind = kind;
	req.len = kind == SRD_MSG_READ ? 0 : b.size;
	req.rdma.rkey = 1;
	req.rdma.rdma_len = b.size;
	req.rdma.length = b.size;

	t0 = cpu_seconds();
	while (b.done + b.failed < nmsgs) {
		/* Keep the engine's queue fed, depth messages ahead. */
		while (posted < nmsgs && posted - (b.done + b.failed) < depth) {
			if (srd_send_msg(nodes[0].peer, &req) != SRD_SEND_OK)
				break;
			posted++;
		}
		if (b.head == b.tail) {
			/* Nothing moving: let time pass (delayed ACKs). */
			b.clock_us += 1000;
			srd_peer_on_timer(nodes[0].peer);
			srd_peer_on_timer(nodes[1].peer);
			continue;
		}
		while (b.head != b.tail) {
			struct pkt *p = b.q[b.head++ % QCAP];
			uint8_t op = p->data[1];

			pkts++;
			data_pkts += op == SRD_WOP_DATA || op == SRD_WOP_WRITE ||
				     op == SRD_WOP_READ_RESP;
			srd_peer_on_packet(nodes[p->to].peer, p->data, p->len);
			p->next_free = b.free;
			b.free = p;
		}
		b.clock_us++;
	}
	t = cpu_seconds() - t0;
	if (b.failed || (kind != SRD_MSG_READ && b.delivered != nmsgs)) {
		fprintf(stderr, "engine_bench: %llu failed, %llu delivered of %u\n",
			(unsigned long long)b.failed,
			(unsigned long long)b.delivered, nmsgs);
		return 1;
	}
	if (b.copy && kind != SRD_MSG_READ && memcmp(b.src, b.dst, b.size)) {
		fprintf(stderr, "engine_bench: the data arrived wrong\n");
		return 1;
	}
	printf("engine_bench: kind=%s size=%u seg=%u msgs=%u pkts=%llu data_pkts=%llu cpu_s=%.3f pkts_per_s=%.0f data_pkts_per_s=%.0f MB_per_s=%.1f copy=%d\n",
	       kind == SRD_MSG_SEND ? "send" : kind == SRD_MSG_WRITE ? "write" : "read",
	       b.size, seg, nmsgs, (unsigned long long)pkts,
	       (unsigned long long)data_pkts, t, pkts / t, data_pkts / t,
	       (double)b.size * nmsgs / t / 1e6, b.copy);
	for (i = 0; i < 2; i++)
		srd_engine_destroy(nodes[i].eng);
	free(b.q);
	free(pool);
	free(b.src);
	free(b.dst);
	return 0;
}
