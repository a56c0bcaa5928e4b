// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf: the client: it runs each size, gathers both sides' counts and
 * reports them as a table or JSON.
 */
#include "perf.h"

static bool more_to_send(struct perf *p, struct perf_qp *q, uint64_t deadline)
{
	if (q->dead || q->next_seq >= PERF_MAX_SEQ)
		return false;
	return deadline ? now_ns() < deadline : q->next_seq < p->o.iters;
}

static void die_stalled(struct perf *p)
{
	uint32_t i, out = 0;

	for (i = 0; i < p->nqps; i++)
		out += p->qps[i].nslots - p->qps[i].nfree;
	die(p, "no progress for %u s (size %u, %u sends in flight)",
	    p->o.stall_s, p->size, out);
}

/*
 * Stream on all QPs at once, at most cap in flight on each.  Returns the
 * CPU seconds it took.
 */
static double run_bw(struct perf *p, uint64_t *t_first, uint64_t *t_last,
		     uint32_t cap)
{
	uint64_t deadline = 0, last;
	struct rusage r0, r1;
	uint32_t i, n, room;
	bool busy, done;

	getrusage(RUSAGE_SELF, &r0);
	*t_first = *t_last = last = now_ns();
	if (p->o.secs)
		deadline = *t_first + p->o.secs * NSEC;
	do {
		busy = false;
		done = true;
		for (i = 0; i < p->nqps; i++) {
			struct perf_qp *q = &p->qps[i];

			if (!more_to_send(p, q, deadline)) {
				done &= q->nfree == q->nslots;
				continue;
			}
			done = false;
			room = q->nfree;
			if (cap < q->nslots)
				room = q->nslots - q->nfree < cap ?
				       cap - (q->nslots - q->nfree) : 0;
			n = room < PERF_BATCH ? room : PERF_BATCH;
			if (!deadline && n > p->o.iters - q->next_seq)
				n = p->o.iters - q->next_seq;
			if (n && tx_post(p, q, q->next_seq, n))
				busy = true;
		}
		if (tx_poll(p, true) > 0) {
			*t_last = now_ns();
			busy = true;
		}
		if (busy)
			last = now_ns();
		else if (stalled(p, last))
			die_stalled(p);
		else
			cq_sleep(p, -1, 100);
	} while (!done);
	getrusage(RUSAGE_SELF, &r1);
	return r1.ru_utime.tv_sec - r0.ru_utime.tv_sec +
	       r1.ru_stime.tv_sec - r0.ru_stime.tv_sec +
	       (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec +
		r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
}

/* Ping-pong on every QP, one round trip in flight on each. */
static void run_lat(struct perf *p)
{
	uint64_t deadline = 0, last = now_ns(), t, giveup;
	uint32_t i;
	bool busy, done;

	/* UD loses messages; SRD answers within its retry budget. */
	giveup = (p->o.flags & F_UD ? 1 : 10) * NSEC;
	if (p->o.secs)
		deadline = last + p->o.secs * NSEC;
	do {
		busy = false;
		done = true;
		t = now_ns();
		for (i = 0; i < p->nqps; i++) {
			struct perf_qp *q = &p->qps[i];

			if (q->waiting && q->wait_sent && t - q->wait_t0 > giveup) {
				note(p, NOTE_MISC, "QP %u: no answer to seq %u in %llu s",
				     i, q->wait_seq, (unsigned long long)(giveup / NSEC));
				q->waiting = false;
			}
			if (q->waiting) {
				done = false;
				continue;
			}
			if (!more_to_send(p, q, deadline))
				continue;
			done = false;
			if (q->nfree && tx_post(p, q, q->next_seq, 1)) {
				q->waiting = true;
				q->wait_sent = false;
				q->wait_seq = q->next_seq - 1;
				q->wait_t0 = q->slot_t[q->last_slot];
				busy = true;
			}
		}
		if (rx_poll(p) + tx_poll(p, false) > 0)
			busy = true;
		if (busy)
			last = now_ns();
		else if (stalled(p, last))
			die_stalled(p);
		else
			cq_sleep(p, -1, 100);
	} while (!done);
	tx_drain(p);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The permyriad-th percentile of the sorted samples, in µs, divided. */
static double pct_us(struct perf *p, unsigned int permyriad, unsigned int div)
{
	size_t i;

	if (!p->nsamples)
		return 0;
	i = (p->nsamples * permyriad + 9999) / 10000;
	return p->samples[i ? i - 1 : 0] / 1e3 / div;
}

void put_counts(struct perf *p, struct wbuf *w, const struct perf_counts *c)
{
	wb_u64(p, w, c->received);
	wb_u64(p, w, c->corrupt);
	wb_u64(p, w, c->dup);
	wb_u64(p, w, c->missing);
	wb_u64(p, w, c->extra);
	wb_u64(p, w, c->errors);
}

static void get_counts(struct wbuf *w, struct perf_counts *c)
{
	c->received = wb_get_u64(w);
	c->corrupt = wb_get_u64(w);
	c->dup = wb_get_u64(w);
	c->missing = wb_get_u64(w);
	c->extra = wb_get_u64(w);
	c->errors = wb_get_u64(w);
}

/* Whether a size's counts break the rules. */
bool counts_bad(struct perf *p, const struct perf_counts *c)
{
	return c->corrupt || c->dup || (c->missing && !(p->o.flags & F_UD)) ||
	       (c->errors && !(p->o.flags & F_EXPECT_ERR));
}

/*
 * One size's figures.  bw: n counts successful ops over all QPs, secs runs
 * from the first post to the last completion; lat: n round trips (ops).
 * The times are in microseconds; cpu < 0: no figure (nothing was sent).
 */
struct perf_result {
	uint64_t n;
	double secs, mbps, kmsgps, min, avg, p50, p99, p999, cpu;
	const struct perf_counts *c;
};

/*
 * The table's columns: a heading and a width each (a space between columns
 * included, always printed), the bw or lat set.
 */
struct perf_col {
	const char *name;
	int w;
};

static const struct perf_col bw_cols[] = {
	{ "size", 10 }, { "qps", 4 }, { "depth", 6 }, { "msgs", 10 }, { "secs", 8 },
	{ "MB/s", 9 }, { "kmsg/s", 8 }, { "p50_us", 9 }, { "p99_us", 9 },
	{ "p99.9_us", 9 }, { "cpu_s/GB", 9 },
	{ "errors", 7 }, { "corrupt", 8 }, { "dup", 5 }, { "missing", 8 },
};
static const struct perf_col lat_cols[] = {
	{ "size", 10 }, { "qps", 4 }, { "iters", 8 }, { "min_us", 9 }, { "avg_us", 9 },
	{ "p50_us", 9 }, { "p99_us", 9 }, { "p99.9_us", 9 },
	{ "errors", 7 }, { "corrupt", 8 }, { "dup", 5 }, { "missing", 8 },
};

/* One cell of the table: its text right-aligned in the column. */
static void __attribute__((format(printf, 2, 3)))
cell(const struct perf_col *k, const char *fmt, ...)
{
	char b[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	printf(" %*s", k->w - 1, b);
}

/* The row of one size, under a heading printed before the first. */
static void table_row(struct perf *p, const struct perf_result *r)
{
	bool bw = p->o.mode == MODE_BW;
	const struct perf_col *k = bw ? bw_cols : lat_cols;
	size_t i, ncols = bw ? ARRAY_LEN(bw_cols) : ARRAY_LEN(lat_cols);
	const struct perf_counts *c = r->c;

	if (!p->headed) {
		p->headed = true;
		printf("# %s, %s%s\n", bw ? "bandwidth" : "latency", op_names[p->o.op],
		       bw ? "" : p->o.op == OP_SEND ? " (one way: half the round trip)" :
		       " (post to completion: a round trip)");
		for (i = 0; i < ncols; i++)
			cell(&k[i], "%s", k[i].name);
		printf("\n");
	}
	cell(k++, "%u", p->size);
	cell(k++, "%u", p->nqps);
	if (bw) {
		cell(k++, "%u", p->o.depth);
		cell(k++, "%llu", (unsigned long long)r->n);
		cell(k++, "%.3f", r->secs);
		cell(k++, "%.2f", r->mbps);
		cell(k++, "%.2f", r->kmsgps);
	} else {
		cell(k++, "%llu", (unsigned long long)r->n);
		cell(k++, "%.2f", r->min);
		cell(k++, "%.2f", r->avg);
	}
	cell(k++, "%.2f", r->p50);
	cell(k++, "%.2f", r->p99);
	cell(k++, "%.2f", r->p999);
	if (bw) {
		if (r->cpu >= 0)
			cell(k++, "%.3f", r->cpu);
		else
			cell(k++, "-");
	}
	cell(k++, "%llu", (unsigned long long)c->errors);
	cell(k++, "%llu", (unsigned long long)c->corrupt);
	cell(k++, "%llu", (unsigned long long)c->dup);
	cell(k++, "%llu", (unsigned long long)c->missing);
	printf("\n");
}

/* --json: an object per size, on a line of its own (JSON Lines). */
static void json_row(struct perf *p, const struct perf_result *r)
{
	const struct perf_counts *c = r->c;

	printf("{\"mode\": \"%s\", \"op\": \"%s\", \"size\": %u, \"qps\": %u, ",
	       p->o.mode == MODE_BW ? "bw" : "lat", op_names[p->o.op], p->size, p->nqps);
	if (p->o.mode == MODE_BW) {
		printf("\"depth\": %u, \"msgs\": %llu, \"secs\": %.6f, \"MBps\": %.3f, "
		       "\"kmsgps\": %.3f, ", p->o.depth, (unsigned long long)r->n, r->secs,
		       r->mbps, r->kmsgps);
	} else {
		printf("\"iters\": %llu, \"min_us\": %.3f, \"avg_us\": %.3f, ",
		       (unsigned long long)r->n, r->min, r->avg);
	}
	printf("\"p50_us\": %.3f, \"p99_us\": %.3f, \"p999_us\": %.3f, ",
	       r->p50, r->p99, r->p999);
	if (p->o.mode == MODE_BW) {
		if (r->cpu >= 0)
			printf("\"cpu_s_per_GB\": %.4f, ", r->cpu);
		else
			printf("\"cpu_s_per_GB\": null, ");
	}
	printf("\"errors\": %llu, \"corrupt\": %llu, \"dup\": %llu, \"missing\": %llu}\n",
	       (unsigned long long)c->errors, (unsigned long long)c->corrupt,
	       (unsigned long long)c->dup, (unsigned long long)c->missing);
}

static void report(struct perf *p, const struct perf_result *r)
{
	if (p->o.json)
		json_row(p, r);
	else
		table_row(p, r);
}

static void report_bw(struct perf *p, const struct perf_counts *c,
		      uint64_t ns, double cpu)
{
	struct perf_result r = { .secs = ns / 1e9, .cpu = -1, .c = c };
	uint64_t bytes;
	uint32_t i;

	for (i = 0; i < p->nqps; i++)
		r.n += p->qps[i].tx_ok;
	bytes = r.n * p->size;
	if (bytes)
		r.cpu = cpu / (bytes / 1e9);
	if (r.secs > 0) {
		r.mbps = bytes / r.secs / 1e6;
		r.kmsgps = r.n / r.secs / 1e3;
	}
	r.p50 = pct_us(p, 5000, 1);
	r.p99 = pct_us(p, 9900, 1);
	r.p999 = pct_us(p, 9990, 1);
	report(p, &r);
}

/* Sends: half the ping-pong's round trip; RDMA ops: their whole time. */
static void report_lat(struct perf *p, const struct perf_counts *c)
{
	unsigned int div = p->o.op == OP_SEND ? 2 : 1;
	struct perf_result r = { .n = p->nsamples, .c = c };
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < p->nsamples; i++)
		sum += p->samples[i];
	if (p->nsamples) {
		r.min = p->samples[0] / 1e3 / div;
		r.avg = sum / 1e3 / div / p->nsamples;
	}
	r.p50 = pct_us(p, 5000, div);
	r.p99 = pct_us(p, 9900, div);
	r.p999 = pct_us(p, 9990, div);
	report(p, &r);
}

/* One size, on the client: announce it, run it, compare notes, report. */
static void client_size(struct perf *p, uint32_t size)
{
	struct perf_counts srv, mine;
	uint64_t t0 = 0, t1 = 0;
	struct wbuf w = {};
	double cpu = 0;
	uint32_t i;

	p->size = size;
	reset_size(p);
	memset(p->notes, 0, sizeof(p->notes));
	wb_u32(p, &w, size);
	msg_send(p, MSG_START, &w);
	msg_recv(p, MSG_READY, &w);

	if (p->o.mode == MODE_BW)
		cpu = run_bw(p, &t0, &t1, UINT32_MAX);
	else if (p->o.op != OP_SEND)
		run_bw(p, &t0, &t1, 1);
	else
		run_lat(p);

	/*
	 * Our successful sends for the server's count; its for ours.  RDMA:
	 * what each slot last wrote, for the server's check of its region.
	 */
	wb_reset(&w);
	if (p->o.op == OP_SEND)
		put_bitmaps(p, &w);
	else
		put_slots(p, &w);
	msg_send(p, MSG_DONE, &w);
	msg_recv(p, MSG_RESULT, &w);
	get_counts(&w, &srv);
	get_bitmaps(p, &w);
	msg_check_end(p, &w, "RESULT");
	free(w.b);
	settle(p);
	counts_of(p, &mine);

	if (srv.missing || mine.missing)
		fprintf(cmt, "# missing: %llu of the client's sends, %llu of the server's answers\n",
		       (unsigned long long)srv.missing,
		       (unsigned long long)mine.missing);
	if (srv.extra || mine.extra)
		fprintf(cmt, "# arrived although their send did not complete successfully: %llu\n",
		       (unsigned long long)(srv.extra + mine.extra));
	mine.errors += srv.errors;
	mine.corrupt += srv.corrupt;
	mine.dup += srv.dup;
	mine.missing += srv.missing;
	for (i = 0; i < NOTE_KINDS; i++)
		if (p->notes[i] > PERF_NOTES)
			fprintf(cmt, "# %u more %s not shown\n", p->notes[i] - PERF_NOTES,
			       note_names[i]);

	qsort(p->samples, p->nsamples, sizeof(*p->samples), cmp_u64);
	if (p->o.mode == MODE_BW)
		report_bw(p, &mine, t1 - t0, cpu);
	else
		report_lat(p, &mine);
	if (counts_bad(p, &mine))
		p->failed = true;
}

void client(struct perf *p)
{
	struct wbuf w = {};
	char s[INET6_ADDRSTRLEN];
	uint32_t i, status;

	open_device(p);
	pick_gid(p);
	if (p->o.depth > (uint32_t)p->dev.max_qp_wr) {
		fprintf(cmt, "# depth %u capped to max_qp_wr %d\n", p->o.depth,
		       p->dev.max_qp_wr);
		p->o.depth = p->dev.max_qp_wr;
	}
	if (p->o.mode == MODE_BW)
		setup(p, p->o.depth, 0);
	else
		setup(p, PERF_LAT_SLOTS, p->o.op == OP_SEND ? PERF_LAT_RECVS : 0);
	p->tx_dir = DIR_REQ;
	p->rx_dir = DIR_REP;

	tcp_connect(p);
	wb_u32(p, &w, PERF_VERSION);
	wb_u32(p, &w, p->o.mode);
	wb_u32(p, &w, p->o.flags);
	wb_u32(p, &w, p->nqps);
	wb_u32(p, &w, p->o.depth);
	wb_u32(p, &w, p->o.max_size);
	wb_put(p, &w, p->gid.raw, 16);
	for (i = 0; i < p->nqps; i++)
		wb_u32(p, &w, p->qps[i].qp->qp_num);
	msg_send(p, MSG_HELLO, &w);

	msg_recv(p, MSG_WELCOME, &w);
	status = wb_get_u32(&w);
	if (status) {
		char why[256] = "";

		wb_get(&w, why, w.len - w.pos < sizeof(why) - 1 ?
		       w.len - w.pos : sizeof(why) - 1);
		die(p, "the server refused: %s", why);
	}
	wb_get(&w, p->peer_gid.raw, 16);
	for (i = 0; i < p->nqps; i++)
		p->qps[i].peer_qpn = wb_get_u32(&w);
	if (p->o.op != OP_SEND) {
		p->rslots = wb_get_u32(&w);
		p->rslot_size = wb_get_u32(&w);
		for (i = 0; i < p->nqps; i++) {
			p->qps[i].raddr = wb_get_u64(&w);
			p->qps[i].rkey = wb_get_u32(&w);
		}
	}
	msg_check_end(p, &w, "WELCOME");
	if (p->o.op != OP_SEND &&
	    (p->rslots < p->qps[0].nslots || p->rslot_size < p->o.max_size))
		die(p, "the server's region has %u slots of %u bytes, not %u of %u",
		    p->rslots, p->rslot_size, p->qps[0].nslots, p->o.max_size);
	make_ah(p);
	fprintf(cmt, "# server %s: GID %s, %u QPs from %u\n", p->o.host,
	       gid_str(&p->peer_gid, s), p->nqps, p->qps[0].peer_qpn);
	if (p->o.op != OP_SEND)
		fprintf(cmt, "# server region: %u slots of %u bytes per QP, rkey %#x, QP 0 at %#llx\n",
		       p->rslots, p->rslot_size, p->qps[0].rkey,
		       (unsigned long long)p->qps[0].raddr);
	if (p->o.op == OP_WRITE)
		fprintf(cmt, "# op=write: after each size the server checks the last write of each slot\n");
	if (p->o.op == OP_READ)
		fprintf(cmt, "# op=read: the client checks every read's bytes\n");
	if (p->o.op != OP_SEND && p->o.mode == MODE_LAT)
		fprintf(cmt, "# op=%s lat: one signalled %s at a time per QP, post to completion (%s): a round trip, not halved\n",
		       op_names[p->o.op], op_names[p->o.op], p->o.op == OP_WRITE ?
		       "the data placed and ACKed at the server" :
		       "the data back from the server");

	for (i = 0; i < p->o.nsizes; i++)
		client_size(p, p->o.sizes[i]);

	wb_reset(&w);
	msg_send(p, MSG_QUIT, &w);
	free(w.b);
}
