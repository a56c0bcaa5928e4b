// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: libFuzzer target on the receive path.
 *
 * One engine, one peer, established with a known remote tag.  The
 * input is a script of records [op][len_hi][len_lo][bytes...]:
 *   0  a raw datagram from the peer
 *   1  a DATA packet built from the bytes, with the right tags (so the
 *      fuzzer reaches reassembly without guessing 64 bits of tags)
 *   2  time passes (bytes give the microseconds), timers fire
 *   3  a send is posted (bytes give the length)
 *   4  a local QP is flushed
 *   5  a forged datagram from the peer's address: the bytes, with the
 *      tags an off-path attacker can have (dst_tag 0, the tag the engine
 *      gives the attacker's own address, or any value but the peer's)
 *   6  the bytes from an address with no peer (srd_engine_on_stray)
 *   7  a datagram as the OS's receive path takes it: the peer's if
 *      srd_wire_is_transport() says so, else the UD header parser's
 * Datagrams from the peer or from no peer reach the engine as from an OS
 * that does not make packets contiguous: their first
 * min(len, SRD_HDR_MAX_BYTES) bytes in a buffer of just that size (ASan
 * checks that the engine reads no further), the payload through rx_data.
 * The harness checks the engine's promises as it goes: every send
 * completes exactly once, placement stays inside the message, a forged
 * datagram changes nothing (no completion, no receive, no restart, no
 * window moved), a stray one allocates nothing and is accepted only
 * with its address's tag, a UD header parses only inside the datagram
 * and to fields that encode back to themselves, and nothing allocated is
 * left after the peer is destroyed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../msg.h"

#define REMOTE_TAG	0xa0a0a0a0u
#define LOCAL_TAG	0x5eed5eedu
#define MAX_SENDS	64

/* This OS's objects (engine/srd_engine.h). */
struct srd_outbound {
	uint32_t idx;			/* the send's number */
};

struct srd_inbound {
	uint32_t msg_len;
};

struct fz {
	struct srd_outbound outs[MAX_SENDS];
	uint64_t now;
	long live;
	uint64_t deadline;
	bool accept;
	int completions[MAX_SENDS];
	uint32_t rx_len[16];
	int rx_open;
	int done;		/* send completions, all of them */
	int rx_begun;
};

static uint64_t f_now(void *os)
{
	return ((struct fz *)os)->now;
}

static uint32_t f_rand(void *os)
{
	(void)os;
	return LOCAL_TAG;
}

static void *f_alloc(void *os, size_t n)
{
	((struct fz *)os)->live++;
	return calloc(1, n);
}

static void f_free(void *os, void *p, size_t n)
{
	(void)n;
	((struct fz *)os)->live--;
	free(p);
}

static void f_timer(void *os, void *peer_os, uint64_t d)
{
	(void)peer_os;
	((struct fz *)os)->deadline = d;
}

static int f_tx(void *os, void *peer_os, const struct srd_tx_desc *d)
{
	struct srd_pkt p;

	(void)os;
	(void)peer_os;
	/* What we send must parse as what we meant. */
	if (srd_wire_parse(d->hdr, d->hdr_len, &p) != SRD_PARSE_OK &&
	    !((p.opcode == SRD_WOP_DATA || p.opcode == SRD_WOP_WRITE ||
	       p.opcode == SRD_WOP_READ_RESP) && d->payload_len))
		abort();
	return 0;
}

static void f_rx_end(void *os, struct srd_inbound *in)
{
	((struct fz *)os)->rx_open--;
	free(in);
}

static enum srd_rx_verdict f_rx_begin(void *os, void *peer_os,
				      const struct srd_rx_msg_info *info,
				      struct srd_inbound **in)
{
	struct fz *f = os;
	struct srd_inbound *h;

	(void)peer_os;
	if (!f->accept || info->dst_qpn == 0)
		return info->dst_qpn & 1 ? SRD_RX_RNR : SRD_RX_BAD_QPN;
	if (info->kind != SRD_MSG_SEND && (info->rdma.rkey & 3) == 1)
		return SRD_RX_BAD_ACCESS;
	h = malloc(sizeof(*h));
	h->msg_len = info->msg_len;
	f->rx_open++;
	f->rx_begun++;
	*in = h;
	return SRD_RX_ACCEPT;
}

static int f_rx_data(void *os, struct srd_inbound *in, uint32_t off,
		     const struct srd_rx_payload *pl)
{
	const uint8_t *d = (const uint8_t *)pl->pkt + pl->off;
	uint32_t len = pl->len;
	volatile uint8_t sink = 0;
	uint32_t i;

	(void)os;
	if ((uint64_t)off + len > in->msg_len)
		abort();
	for (i = 0; i < len; i++)
		sink ^= d[i];	/* touch every byte: ASan checks the bounds */
	(void)sink;
	/* Now and then the target is gone (an MR deregistered). */
	return len % 7 == 3 ? -1 : 0;
}

/* The fuzzer posts no READ: no response can be for us. */
static void f_read_data(void *os, struct srd_outbound *out, uint32_t off,
			const struct srd_rx_payload *pl)
{
	(void)os;
	(void)out;
	(void)off;
	(void)pl;
	abort();
}

static void f_resp_done(void *os, struct srd_inbound *in,
			enum srd_comp_status st)
{
	if (st >= SRD_COMP_NR)
		abort();
	f_rx_end(os, in);
}


static void f_send_done(void *os, struct srd_outbound *out,
			enum srd_comp_status st)
{
	struct fz *f = os;
	uint32_t i = out->idx;

	if (i >= MAX_SENDS || st >= SRD_COMP_NR || f->completions[i]++)
		abort();
	f->done++;
}

static uint32_t get32(const uint8_t *b, size_t n, size_t i)
{
	uint32_t v = 0;
	size_t k;

	for (k = 0; k < 4; k++)
		v = v << 8 | (i + k < n ? b[i + k] : 0);
	return v;
}

/* Op 5: the bytes as a packet with forged tags; it must change nothing. */
static void forged(struct fz *f, struct srd_peer *peer, const uint8_t *b,
		   size_t n)
{
	uint8_t pkt[2048];
	uint32_t dst, base = peer->rx_msg_base, restarts = peer->ctr.peer_restarts;
	uint32_t remote = peer->remote_tag, una = peer->snd_una;
	int done = f->done, begun = f->rx_begun, open = f->rx_open;

	if (n < 12 || n > sizeof(pkt))
		return;
	memcpy(pkt, b, n);
	switch (b[0] % 3) {
	case 0:
		dst = 0;
		break;
	case 1:
		dst = srd_engine_tag(peer->eng, "forger", 6);
		break;
	default:
		dst = get32(b, n, 8);
		break;
	}
	if (dst == peer->local_tag)
		dst ^= 1;
	srd_put_be32(pkt + 8, dst);
	srd_peer_on_packet(peer, pkt, n);
	if (f->done != done || f->rx_begun != begun || f->rx_open != open ||
	    peer->ctr.peer_restarts != restarts || peer->remote_tag != remote ||
	    peer->rx_msg_base != base || peer->snd_una != una)
		abort();
}

/*
 * A copy of the first min(@n, SRD_HDR_MAX_BYTES) bytes of @b, in a buffer
 * of that size: what an OS that does not linearise packets shows the
 * engine, and all it may read (ASan checks).  Freed by the caller.
 */
static uint8_t *head_of(const uint8_t *b, size_t n, size_t *head_len)
{
	*head_len = n < SRD_HDR_MAX_BYTES ? n : SRD_HDR_MAX_BYTES;
	return memcpy(malloc(*head_len ? *head_len : 1), b, *head_len);
}

/* A datagram from the peer, its payload left in @b (rx_data reads it). */
static void deliver(struct srd_peer *peer, const uint8_t *b, size_t n)
{
	size_t hl;
	uint8_t *h = head_of(b, n, &hl);

	srd_peer_on_packet_head(peer, h, hl, n, b);
	free(h);
}

/* The receives in progress, counted the slow way. */
static uint32_t assembling(const struct srd_peer *peer)
{
	uint32_t i, n = 0;

	for (i = 0; i < peer->eng->cfg.msg_window; i++)
		n += peer->rx_slots[i].state == SRD_RXS_ASSEMBLING;
	return n;
}

/* Op 6: from an address with no peer. */
static void stray(struct fz *f, struct srd_engine *eng, const uint8_t *b,
		  size_t n)
{
	uint8_t reply[SRD_HDR_MAX_BYTES], *h;
	uint32_t rlen = 0;
	long live = f->live;
	struct srd_pkt p;
	enum srd_stray_verdict v;
	size_t hl;

	h = head_of(b, n, &hl);
	v = srd_engine_on_stray(eng, "stray", 5, h, n, reply, &rlen);
	free(h);
	if (f->live != live)
		abort();	/* no state for a remote with no peer */
	if (v == SRD_STRAY_ACCEPT &&
	    (srd_wire_parse(b, n, &p) != SRD_PARSE_OK ||
	     p.dst_tag != srd_engine_tag(eng, "stray", 5)))
		abort();
	if (v == SRD_STRAY_REPLY &&
	    (srd_wire_parse(reply, rlen, &p) != SRD_PARSE_OK || p.opcode != SRD_WOP_HELLO))
		abort();
}

static const struct srd_ops f_ops = {
	.now_us = f_now, .random_u32 = f_rand, .alloc = f_alloc, .free = f_free,
	.timer_set = f_timer, .transmit = f_tx, .rx_begin = f_rx_begin,
	.rx_data = f_rx_data, .rx_done = f_rx_end, .rx_abort = f_rx_end,
	.send_done = f_send_done, .read_data = f_read_data,
	.resp_done = f_resp_done,
};


static void built_data(struct srd_peer *peer, const uint8_t *b, size_t n)
{
	uint8_t pkt[SRD_HDR_MAX_BYTES + 4096];
	struct srd_pkt p;
	uint32_t h, plen;

	memset(&p, 0, sizeof(p));
	p.src_tag = REMOTE_TAG;
	p.dst_tag = peer->local_tag;
	p.psn = get32(b, n, 0);
	p.msg_id = get32(b, n, 4) & 0x1ff;
	p.msg_base = p.msg_id - (get32(b, n, 8) & 0x7f);
	p.dst_qpn = get32(b, n, 12) & 0xffffff;
	p.qkey = 7;
	p.seg_bytes = (uint16_t)(64 + (get32(b, n, 16) & 0x3ff));
	p.msg_len = get32(b, n, 20) % (8 * p.seg_bytes + 1);
	p.offset = p.msg_len ? (get32(b, n, 24) % ((p.msg_len + p.seg_bytes - 1) /
						  p.seg_bytes)) * p.seg_bytes : 0;
	p.attempt = (uint8_t)get32(b, n, 28);
	p.flags = (uint8_t)get32(b, n, 32);
	h = srd_wire_put_data(pkt, &p);
	plen = p.msg_len - p.offset < p.seg_bytes ? p.msg_len - p.offset : p.seg_bytes;
	memset(pkt + h, 0xab, plen);
	deliver(peer, pkt, h + plen);
}

/*
 * A datagram the OS does not give the engine: the UD parser.  What it
 * accepts lies inside the datagram and encodes back to the same fields.
 */
static void ud_datagram(const uint8_t *b, size_t len)
{
	uint8_t again[SRD_HDR_UD_BYTES];
	struct srd_ud_hdr h, h2;

	if (srd_wire_parse_ud(b, len, &h) != SRD_PARSE_OK)
		return;
	if (h.hdr_len < SRD_HDR_UD_BYTES || h.hdr_len > len ||
	    (h.dst_qpn | h.src_qpn) >> 24 || h.flags & ~SRD_WF_UD_SOLICITED ||
	    (h.opcode != SRD_OP_UD_SEND_WITH_IMM && h.imm_data))
		abort();
	if (srd_wire_put_ud(again, &h) != SRD_HDR_UD_BYTES ||
	    srd_wire_parse_ud(again, sizeof(again), &h2) != SRD_PARSE_OK ||
	    h2.opcode != h.opcode || h2.flags != h.flags ||
	    h2.dst_qpn != h.dst_qpn || h2.src_qpn != h.src_qpn ||
	    h2.qkey != h.qkey || h2.imm_data != h.imm_data ||
	    h2.hdr_len != SRD_HDR_UD_BYTES)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	struct srd_config cfg;
	struct srd_engine *eng;
	struct srd_peer *peer;
	uint8_t hello[SRD_HDR_MAX_BYTES];
	struct srd_pkt hp;
	int sends = 0, i;
	size_t pos = 1;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < MAX_SENDS; i++)
		f.outs[i].idx = (uint32_t)i;
	f.now = 1000;
	f.accept = size && (data[0] & 1);
	srd_config_default(&cfg);
	cfg.n_paths = 4;
	cfg.seg_bytes = 256;
	cfg.msg_window = 16;
	cfg.tx_window_pkts = 64;
	cfg.cwnd_max_pkts = 64;
	cfg.max_msg_bytes = 64 * 1024;
	eng = srd_engine_create(&cfg, &f_ops, &f);
	peer = srd_peer_create(eng, &f, "peer", 4);
	memset(&hp, 0, sizeof(hp));
	hp.src_tag = REMOTE_TAG;
	hp.dst_tag = peer->local_tag;
	srd_peer_on_packet(peer, hello, srd_wire_put_hello(hello, &hp));

	while (pos + 3 <= size) {
		uint8_t op = data[pos] % 8;
		size_t len = (size_t)data[pos + 1] << 8 | data[pos + 2];
		const uint8_t *b = data + pos + 3;

		pos += 3;
		if (len > size - pos)
			len = size - pos;
		pos += len;
		switch (op) {
		case 0:
			deliver(peer, b, len);
			break;
		case 1:
			built_data(peer, b, len);
			break;
		case 2:
			f.now += 1 + (get32(b, len, 0) & 0xfffff);
			if (f.deadline <= f.now) {
				f.deadline = SRD_NO_DEADLINE;
				srd_peer_on_timer(peer);
			}
			break;
		case 3:
			if (sends < MAX_SENDS) {
				struct srd_send_req r = {
					.out = &f.outs[sends],
					.src_qpn = 1, .dst_qpn = 2, .qkey = 7,
					.len = get32(b, len, 0) % (cfg.max_msg_bytes + 2),
					.rnr_retry = (uint8_t)(get32(b, len, 4) & 7),
				};
				if (srd_send_msg(peer, &r) == SRD_SEND_OK)
					sends++;
			}
			break;
		case 4:
			srd_peer_flush_qp(peer, get32(b, len, 0) & 3);
			break;
		case 5:
			forged(&f, peer, b, len);
			break;
		case 6:
			stray(&f, eng, b, len);
			break;
		case 7:
			if (len >= 4 && srd_wire_is_transport(b))
				deliver(peer, b, len);
			else
				ud_datagram(b, len);
			break;
		}
		if (peer->rx_assembling != assembling(peer))
			abort();	/* srd_peer_idle_us() counts, not scans */
	}
	srd_engine_destroy(eng);
	for (i = 0; i < sends; i++)
		if (f.completions[i] != 1)
			abort();	/* every send completes exactly once */
	if (f.live || f.rx_open)
		abort();	/* nothing leaked */
	return 0;
}
