// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf: the datapath: posting, polling, checking every byte of every
 * message, and the server's region for RDMA.
 */
#include "perf.h"

static void sample(struct perf *p, uint64_t ns)
{
	if (p->nsamples == p->samples_cap) {
		size_t cap = p->samples_cap ? 2 * p->samples_cap : 4096;
		uint64_t *s = realloc(p->samples, cap * sizeof(*s));

		if (!s) {
			note(p, NOTE_MISC, "out of memory for samples: some dropped");
			return;
		}
		p->samples = s;
		p->samples_cap = cap;
	}
	p->samples[p->nsamples++] = ns;
}

/*
 * RDMA read: the bytes of a client slot checked, and poisoned before: by
 * the check of its last read when that found it whole, else by tx_post().
 */
static uint32_t read_span(struct perf *p)
{
	return p->size + PERF_GUARD < p->slot_size ? p->size + PERF_GUARD :
						     p->slot_size;
}

/* The server's byte that an op of q in client slot s, seq seq, starts at. */
static uint64_t rdma_raddr(struct perf *p, struct perf_qp *q, uint32_t s,
			   uint32_t seq)
{
	uint32_t k = p->o.op == OP_WRITE ? s : seq % p->rslots;

	return q->raddr + (uint64_t)k * p->rslot_size;
}

/*
 * Post n messages on q, seqs seq0.., from free slots.  Returns how many
 * went; the rest go back.  A failure but ENOMEM (full: retried later)
 * stops sending on q.  RDMA: writes of the message, or reads into a
 * poisoned slot.
 */
uint32_t tx_post(struct perf *p, struct perf_qp *q, uint32_t seq0,
		 uint32_t n)
{
	struct ibv_send_wr wr[PERF_BATCH], *bad = NULL;
	struct ibv_sge sge[PERF_BATCH];
	uint32_t i, s, posted;
	bool imm = use_imm(p);
	uint64_t t;
	int rc;

	for (i = 0; i < n; i++) {
		s = q->free[--q->nfree];
		q->slot_seq[s] = seq0 + i;
		if (p->o.op == OP_READ) {
			if (!q->poisoned[s])
				memset(q->tx + (size_t)s * p->slot_size,
				       PERF_POISON, read_span(p));
			q->poisoned[s] = false;
		} else {
			msg_fill(q->tx + (size_t)s * p->slot_size, p->size,
				 p->tx_dir, q->idx, seq0 + i);
		}
		sge[i] = (struct ibv_sge){ (uintptr_t)(q->tx + (size_t)s * p->slot_size),
					   p->size, p->mr->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = (uint64_t)q->idx << 32 | s, .next = &wr[i + 1],
			.sg_list = &sge[i], .num_sge = p->size ? 1 : 0,
			.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(seq0 + i),
			.wr.ud = { .ah = p->ah, .remote_qpn = q->peer_qpn,
				   .remote_qkey = PERF_QKEY },
		};
		q->last_slot = s;
	}
	wr[n - 1].next = NULL;
	t = now_ns();
	for (i = 0; i < n; i++)
		q->slot_t[wr[i].wr_id & 0xffffffff] = t;

	if (q->qpx) {
		ibv_wr_start(q->qpx);
		for (i = 0; i < n; i++) {
			q->qpx->wr_id = wr[i].wr_id;
			q->qpx->wr_flags = IBV_SEND_SIGNALED;
			s = wr[i].wr_id & 0xffffffff;
			if (p->o.op == OP_WRITE)
				ibv_wr_rdma_write(q->qpx, q->rkey,
						  rdma_raddr(p, q, s, seq0 + i));
			else if (p->o.op == OP_READ)
				ibv_wr_rdma_read(q->qpx, q->rkey,
						 rdma_raddr(p, q, s, seq0 + i));
			else if (imm)
				ibv_wr_send_imm(q->qpx, wr[i].imm_data);
			else
				ibv_wr_send(q->qpx);
			ibv_wr_set_ud_addr(q->qpx, p->ah, q->peer_qpn, PERF_QKEY);
			ibv_wr_set_sge_list(q->qpx, wr[i].num_sge, &sge[i]);
		}
		rc = ibv_wr_complete(q->qpx);
		posted = rc ? 0 : n;
	} else {
		rc = ibv_post_send(q->qp, wr, &bad);
		posted = rc ? (bad ? (uint32_t)(bad - wr) : 0) : n;
	}
	for (i = posted; i < n; i++)
		q->free[q->nfree++] = wr[i].wr_id & 0xffffffff;
	if (rc && rc != ENOMEM) {
		note(p, NOTE_ERR, "%s on QP %u: %s: sending no more on it",
		     q->qpx ? "ibv_wr_complete" : "ibv_post_send", q->idx,
		     strerror(rc));
		q->tx_err++;
		q->dead = true;
	}
	if (posted && seq0 + posted > q->next_seq)
		q->next_seq = seq0 + posted;
	return posted;
}

/* An RDMA read's bytes in client slot s, of seq seq: counted. */
static void read_check(struct perf *p, struct perf_qp *q, uint32_t s,
		       uint32_t seq)
{
	uint8_t *m = q->tx + (size_t)s * p->slot_size;
	uint32_t k = seq % p->rslots;
	/* Poisoned again as checked, for the slot's next read (tx_post()). */
	long bad = msg_check_poison(m, p->size, DIR_REP, q->idx, k);

	if (bad < 0)
		bad = msg_unpoisoned(m, p->size, read_span(p));
	if (bad < 0) {
		q->poisoned[s] = true;
		q->rx_ok++;
		return;
	}
	note(p, NOTE_BAD, "QP %u: read seq %u of the server's slot %u: byte %ld %s",
	     q->idx, seq, k, bad, bad < p->size ? "differs" : "written past the size");
	q->rx_bad++;
}

/*
 * -E: nothing to do.  The first idle pass asks both CQs for their next
 * event and returns, so that the caller polls them once more (a
 * completion that came before the request raises no event); the next
 * sleeps on the channel, and on @fd too when it is not -1, for at most
 * @ms.  Events are acked as they come.  Without -E, returns at once:
 * the caller spins.
 */
void cq_sleep(struct perf *p, int fd, int ms)
{
	struct pollfd pfd[2];
	struct ibv_cq *cq;
	void *ctx;

	if (!p->chan)
		return;
	if (!p->armed) {
		if (ibv_req_notify_cq(p->scq, 0) || ibv_req_notify_cq(p->rcq, 0))
			die(p, "ibv_req_notify_cq: %s", strerror(errno));
		p->armed = true;
		return;
	}
	pfd[0] = (struct pollfd){ .fd = p->chan->fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(pfd, fd < 0 ? 1 : 2, ms) < 0 && errno != EINTR)
		die(p, "poll: %s", strerror(errno));
	while (!ibv_get_cq_event(p->chan, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		p->armed = false;
	}
	if (errno != EAGAIN)
		die(p, "ibv_get_cq_event: %s", strerror(errno));
}

/*
 * Send completions: slots back, successes in the ok bitmap.  RDMA: a
 * write's outcome kept per slot, a read's bytes checked.
 */
int tx_poll(struct perf *p, bool keep_samples)
{
	struct ibv_wc wc[64];
	uint64_t t;
	int n, i;

	n = ibv_poll_cq(p->scq, 64, wc);
	if (n < 0)
		die(p, "ibv_poll_cq (send): %s", strerror(-n));
	t = n ? now_ns() : 0;
	for (i = 0; i < n; i++) {
		uint32_t qpi = wc[i].wr_id >> 32, s = wc[i].wr_id & 0xffffffff;
		struct perf_qp *q;
		uint32_t seq;

		if (qpi >= p->nqps || s >= p->qps[qpi].nslots)
			die(p, "a send completion with a wr_id never posted: %#llx",
			    (unsigned long long)wc[i].wr_id);
		q = &p->qps[qpi];
		seq = q->slot_seq[s];
		if (wc[i].status == IBV_WC_SUCCESS) {
			bm_set(p, &q->ok, seq);
			q->tx_ok++;
			if (keep_samples)
				sample(p, t - q->slot_t[s]);
			if (p->o.op != OP_SEND &&
			    wc[i].opcode != (p->o.op == OP_WRITE ? IBV_WC_RDMA_WRITE :
					     IBV_WC_RDMA_READ)) {
				note(p, NOTE_BAD, "QP %u: the completion of %s seq %u has opcode %d",
				     qpi, op_names[p->o.op], seq, wc[i].opcode);
				q->rx_bad++;
			} else if (p->o.op == OP_READ) {
				read_check(p, q, s, seq);
			}
			q->slot_state[s] = SLOT_OK;
			q->slot_last[s] = seq;
		} else {
			note(p, NOTE_ERR, "error completion: %s (vendor_err %u) QP %u wr_id %#llx (%s seq %u)",
			     ibv_wc_status_str(wc[i].status), wc[i].vendor_err, qpi,
			     (unsigned long long)wc[i].wr_id, op_names[p->o.op], seq);
			q->tx_err++;
			q->slot_state[s] = SLOT_FAILED;
		}
		if (q->waiting && seq == q->wait_seq) {
			q->wait_sent = true;
			if (wc[i].status != IBV_WC_SUCCESS)
				q->waiting = false;	/* no reply will come */
		}
		q->free[q->nfree++] = s;
	}
	return n;
}

static enum rx_verdict rx_check(struct perf *p, struct perf_qp *q,
				const struct ibv_wc *wc, uint32_t *seqp)
{
	const uint8_t *m = q->rx + (size_t)(wc->wr_id & 0xffffffff) * p->rx_stride +
			   p->rx_off;
	bool imm = wc->wc_flags & IBV_WC_WITH_IMM;
	uint32_t seq;
	long bad;

	if (wc->status != IBV_WC_SUCCESS) {
		note(p, NOTE_ERR, "error completion: %s (vendor_err %u) QP %u wr_id %#llx (receive)",
		     ibv_wc_status_str(wc->status), wc->vendor_err, q->idx,
		     (unsigned long long)wc->wr_id);
		return RX_ERR;
	}
	if (wc->opcode != IBV_WC_RECV || wc->src_qp != q->peer_qpn ||
	    wc->byte_len != p->size + p->rx_off || imm != use_imm(p)) {
		note(p, NOTE_BAD, "QP %u: unexpected receive: opcode %d src_qp %u byte_len %u%s (expected RECV from %u, %u bytes%s)",
		     q->idx, wc->opcode, wc->src_qp, wc->byte_len,
		     imm ? " with imm" : "", q->peer_qpn, p->size + p->rx_off,
		     use_imm(p) ? " with imm" : "");
		return RX_BAD;
	}
	if (imm) {
		seq = ntohl(wc->imm_data);
	} else {
		memcpy(&seq, m, 4);
		seq = le32toh(seq);
	}
	*seqp = seq;
	bad = seq < PERF_MAX_SEQ ? msg_check(m, p->size, p->rx_dir, q->idx, seq) : 0;
	if (bad >= 0) {
		note(p, NOTE_BAD, "QP %u: corrupt %u-byte message (seq %u): byte %ld differs",
		     q->idx, p->size, seq, bad);
		return RX_BAD;
	}
	if (bm_test(&q->seen, seq)) {
		note(p, NOTE_DUP, "QP %u: duplicate message seq %u", q->idx, seq);
		return RX_DUP;
	}
	bm_set(p, &q->seen, seq);
	return RX_OK;
}

/* The server's answer to a ping. */
static void reply(struct perf *p, struct perf_qp *q, uint32_t seq)
{
	uint64_t last = now_ns();

	while (!q->nfree && !q->dead) {
		if (tx_poll(p, false))
			last = now_ns();
		else if (stalled(p, last))
			die(p, "no send completion on QP %u for %u s", q->idx,
			    p->o.stall_s);
		else
			cq_sleep(p, -1, 100);
	}
	while (!q->dead && !tx_post(p, q, seq, 1)) {
		if (tx_poll(p, false))
			last = now_ns();
		else if (stalled(p, last))
			die(p, "cannot post on QP %u for %u s", q->idx, p->o.stall_s);
	}
}

/* Receive completions: check, count, repost, and answer or time a ping. */
int rx_poll(struct perf *p)
{
	struct ibv_wc wc[32];
	int n, i;

	n = ibv_poll_cq(p->rcq, 32, wc);
	if (n < 0)
		die(p, "ibv_poll_cq (receive): %s", strerror(-n));
	for (i = 0; i < n; i++) {
		uint32_t qpi = wc[i].wr_id >> 32, seq = 0;
		struct perf_qp *q;

		if (qpi >= p->nqps || (wc[i].wr_id & 0xffffffff) >= p->qps[qpi].nrecv)
			die(p, "a receive completion with a wr_id never posted: %#llx",
			    (unsigned long long)wc[i].wr_id);
		q = &p->qps[qpi];
		switch (rx_check(p, q, &wc[i], &seq)) {
		case RX_OK:
			q->rx_ok++;
			if (p->o.mode != MODE_LAT)
				break;
			if (p->o.server) {
				reply(p, q, seq);
			} else if (q->waiting && seq == q->wait_seq) {
				sample(p, now_ns() - q->wait_t0);
				q->waiting = false;
			}
			break;
		case RX_DUP:
			q->rx_dup++;
			break;
		case RX_BAD:
			q->rx_bad++;
			break;
		case RX_ERR:
			q->rx_err++;
			break;
		}
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
			post_recv(p, q, wc[i].wr_id & 0xffffffff);
	}
	return n;
}

/* Before a size: every QP's counters and bitmaps back to zero. */
void reset_size(struct perf *p)
{
	uint32_t i;

	for (i = 0; i < p->nqps; i++) {
		struct perf_qp *q = &p->qps[i];

		bm_clear(&q->ok);
		bm_clear(&q->seen);
		bm_clear(&q->peer_ok);
		q->next_seq = 0;
		q->tx_ok = q->tx_err = 0;
		q->rx_ok = q->rx_bad = q->rx_dup = q->rx_err = 0;
		q->waiting = false;
		memset(q->slot_state, SLOT_UNUSED, q->nslots);
		memset(q->poisoned, 0, q->nslots * sizeof(*q->poisoned));
	}
	p->nsamples = 0;
}

static bool tx_idle(struct perf *p)
{
	uint32_t i;

	for (i = 0; i < p->nqps; i++)
		if (p->qps[i].nfree != p->qps[i].nslots)
			return false;
	return true;
}

/* Wait for every send in flight to complete. */
void tx_drain(struct perf *p)
{
	uint64_t last = now_ns();

	while (!tx_idle(p)) {
		if (tx_poll(p, false))
			last = now_ns();
		else if (stalled(p, last))
			die(p, "sends in flight got no completion for %u s",
			    p->o.stall_s);
		else
			cq_sleep(p, -1, 100);
	}
}

/* Messages the peer's sends completed for that have not arrived. */
static uint64_t unseen(struct perf *p)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < p->nqps; i++)
		n += bm_minus(&p->qps[i].peer_ok, &p->qps[i].seen);
	return n;
}

/* Give messages the peer has completed a grace time to show up. */
void settle(struct perf *p)
{
	uint64_t last = now_ns(), need = unseen(p);

	while (need) {
		if (rx_poll(p)) {
			need = unseen(p);
			last = now_ns();
		} else if (now_ns() - last > PERF_GRACE_MS * 1000000ull) {
			break;
		}
	}
}

void counts_of(struct perf *p, struct perf_counts *c)
{
	uint32_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < p->nqps; i++) {
		struct perf_qp *q = &p->qps[i];

		c->received += q->rx_ok;
		c->corrupt += q->rx_bad;
		c->dup += q->rx_dup;
		c->errors += q->rx_err + q->tx_err;
		c->extra += bm_minus(&q->seen, &q->peer_ok);
	}
	c->missing = unseen(p);
}

/* The ok bitmaps of our sends, per QP: nbits, then the bytes. */
void put_bitmaps(struct perf *p, struct wbuf *w)
{
	uint32_t i;

	wb_u32(p, w, p->nqps);
	for (i = 0; i < p->nqps; i++) {
		struct perf_qp *q = &p->qps[i];

		bm_reserve(p, &q->ok, q->next_seq);
		wb_u32(p, w, q->next_seq);
		if (q->next_seq)
			wb_put(p, w, q->ok.b, (q->next_seq + 7) / 8);
	}
}

void get_bitmaps(struct perf *p, struct wbuf *w)
{
	uint32_t i, nbits;

	if (wb_get_u32(w) != p->nqps)
		die(p, "the peer's bitmaps are for another number of QPs");
	for (i = 0; i < p->nqps; i++) {
		struct perf_qp *q = &p->qps[i];

		nbits = wb_get_u32(w);
		if (nbits > PERF_MAX_SEQ)
			die(p, "the peer sent a bitmap of %u bits", nbits);
		bm_clear(&q->peer_ok);
		if (!nbits)
			continue;
		bm_reserve(p, &q->peer_ok, nbits);
		wb_get(w, q->peer_ok.b, (nbits + 7) / 8);
	}
}

/* --- RDMA: the server's region -------------------------------------------- */

/* RDMA write: per QP and client slot, its last write's outcome and seq. */
void put_slots(struct perf *p, struct wbuf *w)
{
	uint32_t i, s;

	wb_u32(p, w, p->nqps);
	for (i = 0; i < p->nqps; i++) {
		struct perf_qp *q = &p->qps[i];

		wb_u32(p, w, q->nslots);
		for (s = 0; s < q->nslots; s++) {
			wb_u32(p, w, q->slot_state[s]);
			wb_u32(p, w, q->slot_last[s]);
		}
	}
}

/* Before a size: poison the region; for reads, slot k holds message k. */
void region_prepare(struct perf *p)
{
	uint32_t i, k;

	for (i = 0; i < p->nqps; i++)
		for (k = 0; k < p->rslots; k++) {
			uint8_t *m = p->qps[i].tx + (size_t)k * p->rslot_size;

			memset(m, PERF_POISON, p->rslot_size);
			if (p->o.op == OP_READ)
				msg_fill(m, p->size, DIR_REP, i, k);
		}
}

/*
 * After a size: every slot of the region checked against what the client
 * says its last op there did (see the top of the file).
 */
void region_check(struct perf *p, struct wbuf *w, struct perf_counts *c)
{
	uint32_t i, k, n, state, seq, hseq;
	long bad;

	memset(c, 0, sizeof(*c));
	if (wb_get_u32(w) != p->nqps)
		die(p, "the client's slot tables are for another number of QPs");
	for (i = 0; i < p->nqps; i++) {
		n = wb_get_u32(w);
		if (n > p->rslots || w->bad)
			die(p, "the client has %u slots on QP %u, the server %u", n, i,
			    p->rslots);
		for (k = 0; k < p->rslots; k++) {
			const uint8_t *m = p->qps[i].tx + (size_t)k * p->rslot_size;

			state = k < n ? wb_get_u32(w) : SLOT_UNUSED;
			seq = k < n ? wb_get_u32(w) : 0;
			if (p->o.op == OP_READ) {
				/* Reads leave the region as it was. */
				bad = msg_check(m, p->size, DIR_REP, i, k);
				if (bad < 0)
					bad = msg_unpoisoned(m, p->size, p->rslot_size);
				if (bad >= 0) {
					note(p, NOTE_BAD, "QP %u: slot %u changed under reads at byte %ld",
					     i, k, bad);
					c->corrupt++;
				}
				continue;
			}
			if (state == SLOT_UNUSED) {
				bad = msg_unpoisoned(m, 0, p->rslot_size);
				if (bad >= 0) {
					note(p, NOTE_BAD, "QP %u: slot %u was written, by no write of the client's (byte %ld)",
					     i, k, bad);
					c->corrupt++;
				}
				continue;
			}
			/* Nothing past the size, even of a failed write. */
			bad = msg_unpoisoned(m, p->size, p->rslot_size);
			if (bad >= 0) {
				note(p, NOTE_BAD, "QP %u: slot %u written past the %u bytes, at byte %ld",
				     i, k, p->size, bad);
				c->corrupt++;
				continue;
			}
			if (state != SLOT_OK)
				continue;	/* undefined: the write failed */
			bad = msg_check(m, p->size, DIR_REQ, i, seq);
			if (bad < 0) {
				c->received++;
				continue;
			}
			memcpy(&hseq, m, 4);
			hseq = le32toh(hseq);
			if (p->size && msg_unpoisoned(m, 0, p->size) < 0) {
				note(p, NOTE_MISC, "QP %u: write seq %u to slot %u is not there",
				     i, seq, k);
				c->missing++;
			} else if (p->size >= 4 && hseq < seq &&
				   msg_check(m, p->size, DIR_REQ, i, hseq) < 0) {
				note(p, NOTE_DUP, "QP %u: slot %u holds write seq %u over the later %u",
				     i, k, hseq, seq);
				c->dup++;
			} else {
				note(p, NOTE_BAD, "QP %u: write seq %u to slot %u: byte %ld differs",
				     i, seq, k, bad);
				c->corrupt++;
			}
		}
	}
}
