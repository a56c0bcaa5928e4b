// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf: the server: it does what the client asks, then exits.
 */
#include "perf.h"

/* Sends the client a refusal, then fails. */
static void __attribute__((noreturn)) refuse(struct perf *p, const char *why)
{
	struct wbuf w = {};

	wb_u32(p, &w, 1);
	wb_put(p, &w, why, strlen(why));
	msg_send(p, MSG_WELCOME, &w);
	free(w.b);
	die(p, "refused the client: %s", why);
}

static void server_hello(struct perf *p, struct wbuf *w)
{
	uint32_t i, qpn[PERF_MAX_QPS];
	char s[INET6_ADDRSTRLEN];

	msg_recv(p, MSG_HELLO, w);
	if (wb_get_u32(w) != PERF_VERSION)
		refuse(p, "another version of srd_perf");
	p->o.mode = wb_get_u32(w);
	p->o.flags = wb_get_u32(w);
	p->nqps = wb_get_u32(w);
	p->o.depth = wb_get_u32(w);
	p->o.max_size = wb_get_u32(w);
	wb_get(w, p->peer_gid.raw, 16);
	p->o.op = p->o.flags & F_WRITE ? OP_WRITE : p->o.flags & F_READ ? OP_READ :
		  OP_SEND;
	if (p->nqps < 1 || p->nqps > PERF_MAX_QPS || p->o.depth < 1 ||
	    p->o.depth > 65536 || p->o.mode > MODE_LAT ||
	    (p->o.flags & (F_WRITE | F_READ)) == (F_WRITE | F_READ) ||
	    (p->o.op != OP_SEND && (p->o.flags & (F_UD | F_IMM))))
		refuse(p, "bad parameters");
	for (i = 0; i < p->nqps; i++)
		qpn[i] = wb_get_u32(w);
	msg_check_end(p, w, "HELLO");
	fprintf(cmt, "# client: GID %s, mode %s, %u QPs, depth %u%s%s%s%s%s%s\n",
	       gid_str(&p->peer_gid, s), p->o.mode == MODE_BW ? "bw" : "lat",
	       p->nqps, p->o.depth, p->o.flags & F_IMM ? ", imm" : "",
	       p->o.flags & F_EXPECT_ERR ? ", errors expected" : "",
	       p->o.flags & F_WR_API ? ", ibv_wr_*()" : "",
	       p->o.flags & F_UD ? ", UD" : "",
	       p->o.op != OP_SEND ? ", RDMA " : "",
	       p->o.op != OP_SEND ? op_names[p->o.op] : "");

	pick_gid(p);
	if (p->o.max_size > max_msg(p))
		refuse(p, "a message size beyond the server's limit");
	if (p->o.op != OP_SEND) {
		/* A slot per op the client may have in flight; no receives. */
		p->rslots = p->o.mode == MODE_BW ? p->o.depth : PERF_LAT_SLOTS;
		setup(p, p->rslots, 0);
		p->rslot_size = p->slot_size;
	} else if (p->o.mode == MODE_BW) {
		setup(p, 1, p->o.depth + PERF_RX_EXTRA < (uint32_t)p->dev.max_qp_wr ?
			  p->o.depth + PERF_RX_EXTRA : (uint32_t)p->dev.max_qp_wr);
	} else {
		setup(p, PERF_LAT_SLOTS, PERF_LAT_RECVS);
	}
	for (i = 0; i < p->nqps; i++)
		p->qps[i].peer_qpn = qpn[i];
	make_ah(p);
	p->tx_dir = DIR_REP;
	p->rx_dir = DIR_REQ;

	wb_reset(w);
	wb_u32(p, w, 0);
	wb_put(p, w, p->gid.raw, 16);
	for (i = 0; i < p->nqps; i++)
		wb_u32(p, w, p->qps[i].qp->qp_num);
	if (p->o.op != OP_SEND) {
		wb_u32(p, w, p->rslots);
		wb_u32(p, w, p->rslot_size);
		for (i = 0; i < p->nqps; i++) {
			wb_u64(p, w, (uintptr_t)p->qps[i].tx);
			wb_u32(p, w, p->mr->rkey);
		}
	}
	msg_send(p, MSG_WELCOME, w);
}

/* The client has sent all of a size: count, and answer with the counts. */
static void server_done(struct perf *p, struct wbuf *w)
{
	struct perf_counts c;

	if (p->o.op != OP_SEND) {
		region_check(p, w, &c);
		msg_check_end(p, w, "DONE");
	} else {
		get_bitmaps(p, w);
		msg_check_end(p, w, "DONE");
		tx_drain(p);
		settle(p);
		counts_of(p, &c);
	}
	fprintf(cmt, "# server: size=%u received=%llu corrupt=%llu dup=%llu missing=%llu "
	       "extra=%llu errors=%llu\n", p->size,
	       (unsigned long long)c.received, (unsigned long long)c.corrupt,
	       (unsigned long long)c.dup, (unsigned long long)c.missing,
	       (unsigned long long)c.extra, (unsigned long long)c.errors);
	if (counts_bad(p, &c))
		p->failed = true;
	wb_reset(w);
	put_counts(p, w, &c);
	put_bitmaps(p, w);
	msg_send(p, MSG_RESULT, w);
}

static bool sock_readable(struct perf *p, int timeout_ms)
{
	struct pollfd pfd = { .fd = p->sock, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) > 0;
}

void server(struct perf *p)
{
	uint64_t last, spins = 0;
	struct wbuf w = {};
	bool quit = false;

	open_device(p);
	p->lsock = tcp_listen(p);
	fprintf(cmt, "# server: listening on TCP port %u\n", p->o.port);
	tcp_accept(p);
	server_hello(p, &w);

	last = now_ns();
	while (!quit) {
		int busy = rx_poll(p) + (p->o.mode == MODE_LAT ? tx_poll(p, false) : 0);
		uint64_t idle;

		if (busy)
			last = now_ns();
		/* Look at the socket now and then, and sleep in it when idle. */
		if (busy && ++spins % 64)
			continue;
		idle = now_ns() - last;
		if (!busy)
			cq_sleep(p, p->sock, 100);
		if (!sock_readable(p, !p->chan && idle > 50000000 ? 1 : 0)) {
			if (stalled(p, last))
				die(p, "no completion and no word from the client for %u s",
				    p->o.stall_s);
			continue;
		}
		switch (msg_recv_any(p, &w)) {
		case MSG_START:
			p->size = wb_get_u32(&w);
			msg_check_end(p, &w, "START");
			if (p->size > p->o.max_size)
				die(p, "size %u is beyond the announced %u", p->size,
				    p->o.max_size);
			tx_drain(p);
			reset_size(p);
			memset(p->notes, 0, sizeof(p->notes));
			if (p->o.op != OP_SEND)
				region_prepare(p);
			wb_reset(&w);
			msg_send(p, MSG_READY, &w);
			break;
		case MSG_DONE:
			server_done(p, &w);
			break;
		case MSG_QUIT:
			quit = true;
			break;
		default:
			die(p, "unexpected message from the client");
		}
		last = now_ns();
	}
	free(w.b);
}
