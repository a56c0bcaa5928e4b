// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf: bandwidth and latency of SRD QPs, with every byte checked.
 *
 * The options, the output and the exit status are in srd_perf(1)
 * (man/srd_perf.1.md) and `srd_perf --help`.  How it works:
 *
 * The client decides everything and tells the server over TCP, which may
 * run over another link than the RDMA traffic.  Each side sends its GID and
 * QP numbers; the AH is made from the peer's GID.  The server serves one
 * client and exits.
 *
 * Every message is a function of (direction, QP index, sequence number,
 * offset): a 16-byte header {seq, size, qp index and direction, magic},
 * cut to the message size, then 64-bit words from a per-message seed.  The
 * receiver checks every byte and keeps the sequence numbers it saw per QP
 * in a bitmap.  Messages shorter than 4 bytes have no room for the
 * sequence number and always go as SEND_WITH_IMM.  After each size the
 * client sends the bitmap of its sends that completed successfully; the
 * server answers with what it received, and a message whose send completed
 * successfully but that never arrived is missing.  The payload is made for
 * each message, which the CPU figure includes.
 *
 * -o write and -o read: the client posts RDMA writes or reads (the
 * ibv_wr_*() API: ibv_post_send() cannot carry an AH and an rkey) into a
 * region of the server's per QP: one slot of the largest size per op the
 * client may have in flight, registered for remote read and write, whose
 * address and rkey the server sends over TCP.  The server takes no part in
 * the data path.  write: client slot s always writes server slot s, which
 * it reuses only after the write completed, so no two writes overlap.  The
 * server poisons its region before each size; after it, the client tells
 * which seq each slot last wrote successfully, and the server checks every
 * slot: the message of that seq (else missing if still poisoned, dup if an
 * older write's message, corrupt otherwise), and its poison past the size
 * untouched.  So the last write of each slot is checked, not every write.
 * read: the server fills slot k with the message (server to client, QP,
 * seq k) before each size; read seq n reads slot n mod slots into a
 * client slot poisoned first, and every read's bytes are checked, and the
 * poison after them; after the size the server checks that its region is
 * unchanged.  Latency for RDMA ops is not a ping-pong: one signalled op at
 * a time per QP, timed from post to completion (write: the data placed and
 * ACKed at the target; read: the data back), which is a whole round trip
 * and reported as such, not halved.
 *
 * Output: per size, a row of a table, or with --json a JSON object on a
 * line of its own (report()); '#' lines are comments, on stderr with
 * --json.  bw: msgs counts successful sends (ops) over all QPs, secs runs
 * from the first post to the last completion, MB are 10^6 bytes, the
 * percentiles are of post-to-completion times, cpu_s_per_GB is the
 * client's user+system time per 10^9 bytes.  lat: one-way figures, half
 * the round trip; RDMA ops: the whole post-to-completion time of one op.
 * errors counts error completions and failed posts on both sides.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#ifdef SRD_HAVE_SRDDV
#include <infiniband/srddv.h>
#endif
/* Devices, GIDs, QPs, AHs: the setup the selftests share; errors are ours to report. */
#include "srd_setup.h"
#include "msg.h"

#define PERF_PORT	18600
#define PERF_VERSION	2
#define PERF_MAX_QPS	1024
#define PERF_MAX_SIZES	32
#define PERF_MAX_SEQ	(1u << 28)	/* per QP and size: 32 MB of bitmap */
#define PERF_QKEY	0x11111111u
#define PERF_BATCH	32		/* WRs per post */
#define PERF_LAT_SLOTS	4
#define PERF_LAT_RECVS	8
#define PERF_RX_EXTRA	16		/* receives per QP beyond the depth */
#define PERF_GRACE_MS	3000		/* for late arrivals, once all is sent */
#define PERF_NOTES	10		/* '#' lines per kind of problem */
#define PERF_MAX_MSG	(1u << 30)	/* a TCP message */
#define PERF_GUARD	64		/* RDMA read: poison checked past it */
#define NSEC		1000000000ull
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))
#ifdef SRD_HAVE_SRDDV
#define PERF_SRD_QP	SRD_QP_SRDDV	/* made as efadv programs make theirs */
#else
#define PERF_SRD_QP	SRD_QP_SRD	/* plain ibv_create_qp_ex: the same QP */
#endif

enum { DIR_REQ = 1, DIR_REP = 2 };
enum { MODE_BW, MODE_LAT };
enum { F_IMM = 1, F_EXPECT_ERR = 2, F_WR_API = 4, F_UD = 8, F_WRITE = 16,
       F_READ = 32, F_EVENTS = 64 };
enum { OP_SEND, OP_WRITE, OP_READ };
static const char *const op_names[] = { "send", "write", "read" };
/* RDMA write: what a client slot's last write did, for the server's check. */
enum { SLOT_UNUSED, SLOT_OK, SLOT_FAILED };
enum { MSG_HELLO = 1, MSG_WELCOME, MSG_START, MSG_READY, MSG_DONE,
       MSG_RESULT, MSG_QUIT };
enum { NOTE_ERR, NOTE_BAD, NOTE_DUP, NOTE_MISC, NOTE_KINDS };
static const char *const note_names[NOTE_KINDS] = {
	"errors", "corrupt messages", "duplicates", "other notes",
};
enum rx_verdict { RX_OK, RX_DUP, RX_BAD, RX_ERR };

struct perf_opts {
	bool server;
	const char *dev, *host;
	int gidx;
	unsigned int port, stall_s;
	int mode, op;
	uint32_t sizes[PERF_MAX_SIZES], nsizes, max_size;
	uint32_t nqps, depth, iters, secs, rnr, flags;
	bool json;			/* --json: JSON Lines, comments on stderr */
};

struct perf_bm {
	uint8_t *b;
	uint32_t cap;			/* bits; a multiple of 8 */
};

struct perf_qp {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	uint32_t idx, peer_qpn;
	/* Sending: slots hold messages until their completion. */
	uint8_t *tx;
	uint32_t nslots, nfree, last_slot;
	uint32_t *free, *slot_seq;
	uint64_t *slot_t;		/* CLOCK_MONOTONIC ns at post */
	uint32_t next_seq;		/* sent: seqs below it */
	bool dead;			/* a post failed: send no more */
	struct perf_bm ok;		/* sends that completed successfully */
	uint64_t tx_ok, tx_err;
	/* Receiving. */
	uint8_t *rx;
	uint32_t nrecv;
	struct perf_bm seen;		/* intact messages received */
	struct perf_bm peer_ok;		/* the peer's successful sends */
	uint64_t rx_ok, rx_bad, rx_dup, rx_err;
	/* Client ping-pong: the round trip in progress. */
	bool waiting, wait_sent;
	uint32_t wait_seq;
	uint64_t wait_t0;
	/* RDMA, client: the server's region, and per slot its last write. */
	uint64_t raddr;
	uint32_t rkey;
	uint8_t *slot_state;
	uint32_t *slot_last;
	/* RDMA read, client: the slot holds poison over read_span() still. */
	bool *poisoned;
};

struct perf_counts {
	uint64_t received, corrupt, dup, missing, extra, errors;
};

struct perf {
	struct perf_opts o;
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	union ibv_gid gid, peer_gid;
	int gid_index;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_comp_channel *chan;	/* -E: both CQs report here */
	bool armed;			/* both CQs asked for their next event */
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf;
	size_t buf_len;
	struct perf_qp *qps;
	uint32_t nqps, slot_size, rx_stride, rx_off;
	uint32_t rslots, rslot_size;	/* RDMA: the server's region per QP */
	uint32_t tx_dir, rx_dir, size;
	int lsock, sock;
	uint64_t *samples;
	size_t nsamples, samples_cap;
	unsigned int notes[NOTE_KINDS];
	bool failed;			/* some size broke the rules */
	bool headed;			/* the table's heading is out */
};

static struct perf perf = { .lsock = -1, .sock = -1 };
/* Where '#' lines go: stdout beside the table, stderr beside JSON. */
static FILE *cmt;

/* --- small helpers -------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static void perf_cleanup(struct perf *p);

static void __attribute__((noreturn, format(printf, 2, 3)))
die(struct perf *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(cmt, "# FAIL: ");
	va_start(ap, fmt);
	vfprintf(cmt, fmt, ap);
	va_end(ap);
	fprintf(cmt, "\n");
	perf_cleanup(p);
	exit(1);
}

/* A problem worth a '#' line: the first PERF_NOTES of each kind. */
static void __attribute__((format(printf, 3, 4)))
note(struct perf *p, int kind, const char *fmt, ...)
{
	va_list ap;

	if (p->notes[kind]++ >= PERF_NOTES)
		return;
	fprintf(cmt, "# ");
	va_start(ap, fmt);
	vfprintf(cmt, fmt, ap);
	va_end(ap);
	fprintf(cmt, "%s\n", p->notes[kind] == PERF_NOTES ? " (no more of these)" : "");
}

static bool stalled(struct perf *p, uint64_t last)
{
	return p->o.stall_s && now_ns() - last > p->o.stall_s * NSEC;
}

static void *zalloc(struct perf *p, size_t n)
{
	void *m = calloc(1, n ? n : 1);

	if (!m)
		die(p, "out of memory (%zu bytes)", n);
	return m;
}

static const char *gid_str(const union ibv_gid *g, char *s)
{
	return inet_ntop(AF_INET6, g->raw, s, INET6_ADDRSTRLEN);
}

/* --- bitmaps of sequence numbers ------------------------------------------ */

static void bm_reserve(struct perf *p, struct perf_bm *m, uint32_t nbits)
{
	uint32_t cap = m->cap ? m->cap : 1024;
	uint8_t *b;

	if (nbits <= m->cap)
		return;
	while (cap < nbits)
		cap *= 2;
	b = realloc(m->b, cap / 8);
	if (!b)
		die(p, "out of memory for a bitmap of %u bits", cap);
	memset(b + m->cap / 8, 0, (cap - m->cap) / 8);
	m->b = b;
	m->cap = cap;
}

static bool bm_test(const struct perf_bm *m, uint32_t i)
{
	return i < m->cap && (m->b[i / 8] >> (i % 8) & 1);
}

static void bm_set(struct perf *p, struct perf_bm *m, uint32_t i)
{
	bm_reserve(p, m, i + 1);
	m->b[i / 8] |= 1 << (i % 8);
}

static void bm_clear(struct perf_bm *m)
{
	if (m->b)
		memset(m->b, 0, m->cap / 8);
}

/* Bits set in a but not in b. */
static uint64_t bm_minus(const struct perf_bm *a, const struct perf_bm *b)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < a->cap / 8; i++)
		n += __builtin_popcount(a->b[i] & ~(i < b->cap / 8 ? b->b[i] : 0));
	return n;
}

static bool use_imm(struct perf *p)
{
	return (p->o.flags & F_IMM) || p->size < 4;
}

/* --- the TCP channel ------------------------------------------------------ */

struct wbuf {
	uint8_t *b;
	size_t len, cap, pos;
	bool bad;			/* read past the end */
};

static void wb_put(struct perf *p, struct wbuf *w, const void *d, size_t n)
{
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;

		while (cap < w->len + n)
			cap *= 2;
		w->b = realloc(w->b, cap);
		if (!w->b)
			die(p, "out of memory for a %zu-byte message", cap);
		w->cap = cap;
	}
	memcpy(w->b + w->len, d, n);
	w->len += n;
}

static void wb_u32(struct perf *p, struct wbuf *w, uint32_t v)
{
	v = htonl(v);
	wb_put(p, w, &v, 4);
}

static void wb_u64(struct perf *p, struct wbuf *w, uint64_t v)
{
	wb_u32(p, w, v >> 32);
	wb_u32(p, w, v);
}

static void wb_get(struct wbuf *w, void *d, size_t n)
{
	if (w->bad || w->pos + n > w->len) {
		w->bad = true;
		memset(d, 0, n);
		return;
	}
	memcpy(d, w->b + w->pos, n);
	w->pos += n;
}

static uint32_t wb_get_u32(struct wbuf *w)
{
	uint32_t v;

	wb_get(w, &v, 4);
	return ntohl(v);
}

static uint64_t wb_get_u64(struct wbuf *w)
{
	uint64_t hi = wb_get_u32(w);

	return hi << 32 | wb_get_u32(w);
}

static void wb_reset(struct wbuf *w)
{
	w->len = w->pos = 0;
	w->bad = false;
}

/* Move len bytes over the socket, waiting at most the stall time for each. */
static void sock_io(struct perf *p, bool out, void *buf, size_t len)
{
	struct pollfd pfd = { .fd = p->sock, .events = out ? POLLOUT : POLLIN };
	int timeout = p->o.stall_s ? (int)p->o.stall_s * 1000 : -1;
	uint8_t *b = buf;
	ssize_t n;
	int rc;

	while (len) {
		rc = poll(&pfd, 1, timeout);
		if (rc == 0)
			die(p, "nothing from the peer over TCP for %u s", p->o.stall_s);
		if (rc < 0 && errno != EINTR)
			die(p, "poll: %s", strerror(errno));
		if (rc < 0)
			continue;
		n = out ? send(p->sock, b, len, MSG_NOSIGNAL) : recv(p->sock, b, len, 0);
		if (n == 0)
			die(p, "the peer closed the TCP connection");
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			die(p, "TCP %s: %s", out ? "send" : "recv", strerror(errno));
		if (n > 0) {
			b += n;
			len -= n;
		}
	}
}

static void msg_send(struct perf *p, uint32_t type, struct wbuf *w)
{
	uint32_t h[2] = { htonl(type), htonl(w->len) };

	sock_io(p, true, h, sizeof(h));
	sock_io(p, true, w->b, w->len);
}

/* The next message into w; its type. */
static uint32_t msg_recv_any(struct perf *p, struct wbuf *w)
{
	uint32_t h[2], len;

	sock_io(p, false, h, sizeof(h));
	len = ntohl(h[1]);
	if (len > PERF_MAX_MSG)
		die(p, "a %u-byte message from the peer: out of sync", len);
	wb_reset(w);
	if (len > w->cap) {
		w->b = realloc(w->b, len);
		if (!w->b)
			die(p, "out of memory for a %u-byte message", len);
		w->cap = len;
	}
	sock_io(p, false, w->b, len);
	w->len = len;
	return ntohl(h[0]);
}

static void msg_recv(struct perf *p, uint32_t type, struct wbuf *w)
{
	uint32_t t = msg_recv_any(p, w);

	if (t != type)
		die(p, "expected message %u from the peer, got %u", type, t);
}

static void msg_check_end(struct perf *p, struct wbuf *w, const char *what)
{
	if (w->bad || w->pos != w->len)
		die(p, "malformed %s message from the peer", what);
}

static int tcp_listen(struct perf *p)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(p->o.port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(p->o.port) };
	int fd, one = 1, zero = 0;

	/* One dual-stack socket takes both IPv4 and IPv6 clients. */
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd >= 0) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0)
			goto bound;
		close(fd);
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die(p, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a4, sizeof(a4)))
		die(p, "bind to TCP port %u: %s", p->o.port, strerror(errno));
bound:
	if (listen(fd, 1))
		die(p, "listen: %s", strerror(errno));
	return fd;
}

static void tcp_accept(struct perf *p)
{
	struct pollfd pfd = { .fd = p->lsock, .events = POLLIN };
	int rc = poll(&pfd, 1, p->o.stall_s ? (int)p->o.stall_s * 1000 : -1);

	if (rc == 0)
		die(p, "no client connected within %u s", p->o.stall_s);
	p->sock = rc > 0 ? accept(p->lsock, NULL, NULL) : -1;
	if (p->sock < 0)
		die(p, "accept: %s", strerror(errno));
}

static void tcp_connect(struct perf *p)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	struct timeval tv = { .tv_sec = p->o.stall_s };
	char port[16];
	int rc, err = 0;

	snprintf(port, sizeof(port), "%u", p->o.port);
	rc = getaddrinfo(p->o.host, port, &hints, &res);
	if (rc)
		die(p, "%s: %s", p->o.host, gai_strerror(rc));
	for (ai = res; ai; ai = ai->ai_next) {
		p->sock = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (p->sock < 0)
			continue;
		/* Bounds connect() too. */
		setsockopt(p->sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!connect(p->sock, ai->ai_addr, ai->ai_addrlen))
			break;
		err = errno;
		close(p->sock);
		p->sock = -1;
	}
	freeaddrinfo(res);
	if (p->sock < 0)
		die(p, "cannot connect to %s port %u: %s", p->o.host, p->o.port,
		    strerror(err));
}

/* --- verbs resources ------------------------------------------------------ */

static void open_device(struct perf *p)
{
	struct ibv_device **list, *dev = NULL;
	int i, n, nsrd = 0;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++) {
		if (!srd_device_is_srd(list[i]))
			continue;
		nsrd++;
		/* Without -d, the first srd device, but one of this namespace first. */
		if (!p->o.dev &&
		    (!dev || (!srd_device_is_local(ibv_get_device_name(dev)) &&
			      srd_device_is_local(ibv_get_device_name(list[i])))))
			dev = list[i];
	}
	if (p->o.dev && list)
		dev = srd_device_by_name(list, p->o.dev);
	if (!nsrd) {
		fprintf(cmt, "SKIP: no srd device\n");
		exit(4);
	}
	if (!dev || !srd_device_is_srd(dev))
		die(p, "%s: %s", p->o.dev, dev ? "not an srd device" : "no such device");
	p->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!p->ctx)
		die(p, "ibv_open_device(%s): %s", p->o.dev ? p->o.dev : "srd",
		    strerror(errno));
	if (ibv_query_device(p->ctx, &p->dev))
		die(p, "ibv_query_device: %s", strerror(errno));
	if (ibv_query_port(p->ctx, 1, &p->port))
		die(p, "ibv_query_port: %s", strerror(errno));
}

static void pick_gid(struct perf *p)
{
	char s[INET6_ADDRSTRLEN];

	if (p->o.gidx >= 0) {
		if (ibv_query_gid(p->ctx, 1, p->o.gidx, &p->gid))
			die(p, "ibv_query_gid(%d): %s", p->o.gidx, strerror(errno));
		p->gid_index = p->o.gidx;
	} else {
		p->gid_index = srd_find_v4_gid(p->ctx, p->port.gid_tbl_len, &p->gid);
		if (p->gid_index < 0)
			die(p, "%s has no IPv4 GID: use -g",
			    ibv_get_device_name(p->ctx->device));
	}
	fprintf(cmt, "# %s: device %s, GID %d %s, %s QPs\n", p->o.server ? "server" : "client",
	       ibv_get_device_name(p->ctx->device), p->gid_index, gid_str(&p->gid, s),
	       p->o.flags & F_UD ? "UD" : "SRD");
}

/*
 * The largest RDMA op the client may post: max_rdma_size, once the device
 * says it has the op (without the direct verbs, max_msg_sz).
 */
static uint32_t max_rdma(struct perf *p)
{
#ifdef SRD_HAVE_SRDDV
	uint32_t cap = p->o.op == OP_WRITE ? SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE :
					     SRDDV_DEVICE_ATTR_CAPS_RDMA_READ;
	struct srddv_device_attr a = {};
	int rc = srddv_query_device(p->ctx, &a, sizeof(a));

	if (rc)
		die(p, "srddv_query_device: %s", strerror(rc));
	if (!(a.device_caps & cap))
		die(p, "%s has no RDMA %s (device_caps %#x)",
		    ibv_get_device_name(p->ctx->device), op_names[p->o.op],
		    a.device_caps);
	return a.max_rdma_size;
#else
	return p->port.max_msg_sz;
#endif
}

/* The largest message a QP of ours may carry (RDMA: the client's op). */
static uint32_t max_msg(struct perf *p)
{
	uint32_t mtu = 128u << p->port.active_mtu;

	if (p->o.op != OP_SEND)
		return p->o.server ? UINT32_MAX : max_rdma(p);
	return p->o.flags & F_UD ? mtu : p->port.max_msg_sz;
}

/* One of our QPs (UD with -U, else SRD), in RESET; *cap: asked, then granted. */
static struct ibv_qp *create_qp(struct perf *p, struct ibv_qp_cap *cap)
{
	enum srd_qp_kind kind = p->o.flags & F_UD ? SRD_QP_UD : PERF_SRD_QP;
	uint64_t ops = 0;
	struct ibv_qp *qp;

	if (p->o.flags & F_WR_API) {
		ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
		if (!p->o.server && p->o.op == OP_WRITE)
			ops |= IBV_QP_EX_WITH_RDMA_WRITE;
		if (!p->o.server && p->o.op == OP_READ)
			ops |= IBV_QP_EX_WITH_RDMA_READ;
	}
	qp = srd_qp_new(p->pd, p->scq, p->rcq, kind, ops, cap);
	if (!qp)
		die(p, "creating a%s QP%s: %s", p->o.flags & F_UD ? " UD" : "n SRD",
		    !p->o.server && p->o.op != OP_SEND ?
		    (p->o.op == OP_WRITE ? " for RDMA writes" : " for RDMA reads") : "",
		    strerror(errno));
	return qp;
}

static void qp_to_rts(struct perf *p, struct ibv_qp *qp)
{
	/* The client's SRD QPs retry RNR -r times; the rest keep the default. */
	int rc = srd_qp_to_rts_rnr(qp, PERF_QKEY, !p->o.server && !(p->o.flags & F_UD) ?
				   (int)p->o.rnr : -1);

	if (rc)
		die(p, "moving QP %u to RTS: %s", qp->qp_num, strerror(rc));
}

static void post_recv(struct perf *p, struct perf_qp *q, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(q->rx + (size_t)slot * p->rx_stride),
		.length = p->rx_stride, .lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)q->idx << 32 | slot,
				  .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = ibv_post_recv(q->qp, &wr, &bad);

	if (rc) {
		note(p, NOTE_ERR, "ibv_post_recv on QP %u: %s", q->idx, strerror(rc));
		q->rx_err++;
	}
}

/*
 * Everything but the AH: nslots send slots and nrecv posted receives per
 * QP, in one registered buffer.  The server of RDMA ops registers it for
 * remote access: its send slots are the region the client's ops target.
 */
static void setup(struct perf *p, uint32_t nslots, uint32_t nrecv)
{
	struct ibv_qp_cap cap = { .max_send_wr = nslots, .max_recv_wr = nrecv,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	uint32_t i, s, cqe_s = p->nqps * nslots, cqe_r = p->nqps * nrecv;
	size_t per_qp;
	uint8_t *m;

	if (nslots > (uint32_t)p->dev.max_qp_wr || nrecv > (uint32_t)p->dev.max_qp_wr)
		die(p, "%u WRs per queue asked for, the device has %d", nslots > nrecv ?
		    nslots : nrecv, p->dev.max_qp_wr);
	if (cqe_s > (uint32_t)p->dev.max_cqe || cqe_r > (uint32_t)p->dev.max_cqe)
		die(p, "CQs of %u entries needed, the device has %d", cqe_s > cqe_r ?
		    cqe_s : cqe_r, p->dev.max_cqe);
	if (p->o.max_size > max_msg(p))
		die(p, "a %u-byte message is beyond the %u bytes of %s",
		    p->o.max_size, max_msg(p), p->o.flags & F_UD ? "the MTU" :
		    p->o.op != OP_SEND ? "max_rdma_size" : "max_msg_sz");
	p->rx_off = p->o.flags & F_UD ? SRD_GRH : 0;
	p->slot_size = (p->o.max_size + 63) & ~63u;
	p->rx_stride = (p->o.max_size + p->rx_off + 63) & ~63u;
	if (!p->slot_size)
		p->slot_size = 64;
	per_qp = (size_t)nslots * p->slot_size + (size_t)nrecv * p->rx_stride;
	p->buf_len = (p->nqps * per_qp + 4095) & ~(size_t)4095;
	p->buf = aligned_alloc(4096, p->buf_len);
	if (!p->buf)
		die(p, "cannot allocate %zu bytes of buffers", p->buf_len);
	memset(p->buf, 0, p->buf_len);

	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		die(p, "ibv_alloc_pd: %s", strerror(errno));
	p->mr = ibv_reg_mr(p->pd, p->buf, p->buf_len, IBV_ACCESS_LOCAL_WRITE |
			   (p->o.server && p->o.op != OP_SEND ?
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ : 0));
	if (!p->mr)
		die(p, "ibv_reg_mr of %zu bytes: %s", p->buf_len, strerror(errno));
	if (p->o.flags & F_EVENTS) {
		p->chan = ibv_create_comp_channel(p->ctx);
		if (!p->chan)
			die(p, "ibv_create_comp_channel: %s", strerror(errno));
		if (fcntl(p->chan->fd, F_SETFL,
			  fcntl(p->chan->fd, F_GETFL) | O_NONBLOCK))
			die(p, "O_NONBLOCK on the completion channel: %s",
			    strerror(errno));
	}
	p->scq = ibv_create_cq(p->ctx, cqe_s ? cqe_s : 1, NULL, p->chan, 0);
	p->rcq = ibv_create_cq(p->ctx, cqe_r ? cqe_r : 1, NULL, p->chan, 0);
	if (!p->scq || !p->rcq)
		die(p, "ibv_create_cq of %u and %u entries: %s", cqe_s, cqe_r,
		    strerror(errno));
	p->armed = false;

	p->qps = zalloc(p, p->nqps * sizeof(*p->qps));
	for (i = 0, m = p->buf; i < p->nqps; i++, m += per_qp) {
		struct perf_qp *q = &p->qps[i];
		struct ibv_qp_cap c = cap;

		q->idx = i;
		q->qp = create_qp(p, &c);
		if (p->o.flags & F_WR_API)
			q->qpx = ibv_qp_to_qp_ex(q->qp);
		qp_to_rts(p, q->qp);
		q->tx = m;
		q->nslots = q->nfree = nslots;
		q->free = zalloc(p, nslots * sizeof(*q->free));
		q->slot_seq = zalloc(p, nslots * sizeof(*q->slot_seq));
		q->slot_t = zalloc(p, nslots * sizeof(*q->slot_t));
		q->slot_state = zalloc(p, nslots * sizeof(*q->slot_state));
		q->slot_last = zalloc(p, nslots * sizeof(*q->slot_last));
		q->poisoned = zalloc(p, nslots * sizeof(*q->poisoned));
		for (s = 0; s < nslots; s++)
			q->free[s] = s;
		q->rx = m + (size_t)nslots * p->slot_size;
		q->nrecv = nrecv;
		for (s = 0; s < nrecv; s++)
			post_recv(p, q, s);
	}
}

static void make_ah(struct perf *p)
{
	char s[INET6_ADDRSTRLEN];

	p->ah = srd_ah_new(p->pd, p->gid_index, &p->peer_gid);
	if (!p->ah)
		die(p, "ibv_create_ah to %s: %s", gid_str(&p->peer_gid, s),
		    strerror(errno));
}

static void perf_cleanup(struct perf *p)
{
	uint32_t i;

	for (i = 0; p->qps && i < p->nqps; i++) {
		struct perf_qp *q = &p->qps[i];

		if (q->qp)
			ibv_destroy_qp(q->qp);
		free(q->free);
		free(q->slot_seq);
		free(q->slot_t);
		free(q->slot_state);
		free(q->poisoned);
		free(q->slot_last);
		free(q->ok.b);
		free(q->seen.b);
		free(q->peer_ok.b);
	}
	free(p->qps);
	p->qps = NULL;
	if (p->ah)
		ibv_destroy_ah(p->ah);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->rcq)
		ibv_destroy_cq(p->rcq);
	if (p->chan)
		ibv_destroy_comp_channel(p->chan);
	p->chan = NULL;
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
	p->ah = NULL, p->mr = NULL, p->scq = p->rcq = NULL, p->pd = NULL;
	p->ctx = NULL;
	free(p->buf);
	free(p->samples);
	p->buf = NULL, p->samples = NULL;
	if (p->sock >= 0)
		close(p->sock);
	if (p->lsock >= 0)
		close(p->lsock);
	p->sock = p->lsock = -1;
}

/* --- the datapath --------------------------------------------------------- */

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
static uint32_t tx_post(struct perf *p, struct perf_qp *q, uint32_t seq0,
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
static void cq_sleep(struct perf *p, int fd, int ms)
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
static int tx_poll(struct perf *p, bool keep_samples)
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
static int rx_poll(struct perf *p)
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
static void reset_size(struct perf *p)
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
static void tx_drain(struct perf *p)
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
static void settle(struct perf *p)
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

static void counts_of(struct perf *p, struct perf_counts *c)
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
static void put_bitmaps(struct perf *p, struct wbuf *w)
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

static void get_bitmaps(struct perf *p, struct wbuf *w)
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
static void put_slots(struct perf *p, struct wbuf *w)
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
static void region_prepare(struct perf *p)
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
static void region_check(struct perf *p, struct wbuf *w, struct perf_counts *c)
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

/* --- the client ----------------------------------------------------------- */

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

static void put_counts(struct perf *p, struct wbuf *w, const struct perf_counts *c)
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
static bool counts_bad(struct perf *p, const struct perf_counts *c)
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

static void client(struct perf *p)
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

/* --- the server ----------------------------------------------------------- */

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

static void server(struct perf *p)
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

/* --- options -------------------------------------------------------------- */

/* -h, --help: to stdout, exit 0; a wrong command line: to stderr, exit 2. */
static void __attribute__((noreturn)) usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: srd_perf -S [-d DEV] [-g GIDX] [-p PORT] [-W SECS] [-E] [--json]\n"
		"       srd_perf [-d DEV] [-g GIDX] [-p PORT] [-W SECS] [-t bw|lat]\n"
		"                [-o send|write|read] [-s SIZES] [-q NQPS] [-D DEPTH]\n"
		"                [-n ITERS | -T SECS] [-r RNR] [-I] [-e] [-x] [-E] [--json]\n"
		"                SERVER_ADDR\n");
	if (status) {
		fprintf(stderr, "Try 'srd_perf --help' for more.\n");
		exit(status);
	}
	printf("Bandwidth and latency of softsrd's SRD QPs, every byte checked.\n"
	       "  -S         be the server (serves one client, then exits)\n"
	       "  -d DEV     device (default: the first srd device)\n"
	       "  -g GIDX    GID index (default: the first IPv4-mapped GID)\n"
	       "  -p PORT    TCP port of the control connection (default %u)\n"
	       "  -W SECS    give up after SECS without progress (default 60, 0: never)\n"
	       "  -t MODE    bw (streaming, default) or lat (ping-pong; RDMA: one op\n"
	       "             at a time, post to completion, not halved)\n"
	       "  -o OP      send (default), or RDMA write or read of the server's memory\n"
	       "  -s SIZES   message sizes, comma separated (default 4096)\n"
	       "  -q NQPS    QPs per side (default 1, at most %u)\n"
	       "  -D DEPTH   sends (ops) in flight per QP, bw mode (default 16)\n"
	       "  -n ITERS   messages (lat: round trips) per size and QP (default 1000)\n"
	       "  -T SECS    run each size for SECS seconds instead\n"
	       "  -r RNR     rnr_retry of the client QPs, 0-7 (default 7: forever)\n"
	       "  -I         SEND_WITH_IMM, the immediate being the sequence number\n"
	       "  -e         error completions are expected: report, do not fail\n"
	       "  -x         post with the ibv_wr_*() API\n"
	       "  -E         sleep on a completion channel when idle (default: spin)\n"
	       "  -J, --json a JSON object per size on stdout, '#' lines on stderr\n"
	       "             (default: a table, '#' lines among it)\n"
	       "  -h, --help this text\n"
	       "Exit status: 0 all checks passed, 1 a failure ('# FAIL:' says which),\n"
	       "2 a wrong command line, 4 no srd device.  See srd_perf(1).\n",
	       PERF_PORT, PERF_MAX_QPS);
	exit(0);
}

static uint32_t num(const char *s, const char *what, uint32_t lo, uint32_t hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "srd_perf: %s must be %u to %u, not '%s'\n", what,
			lo, hi, s);
		exit(2);
	}
	return v;
}

static void parse_sizes(struct perf_opts *o, char *arg)
{
	char *tok, *save = NULL;

	o->nsizes = 0;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == PERF_MAX_SIZES) {
			fprintf(stderr, "srd_perf: at most %u sizes\n", PERF_MAX_SIZES);
			exit(2);
		}
		o->sizes[o->nsizes++] = num(tok, "a size", 0, 1u << 30);
	}
	if (!o->nsizes)
		usage(2);
}

static void parse_opts(struct perf_opts *o, int argc, char **argv)
{
	char defsize[] = "4096";
	int opt;
	uint32_t i;

	*o = (struct perf_opts){ .gidx = -1, .port = PERF_PORT, .stall_s = 60,
				 .nqps = 1, .depth = 16, .iters = 1000, .rnr = 7 };
	parse_sizes(o, defsize);
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'J' },
		{}
	};

	while ((opt = getopt_long(argc, argv, "Sd:g:p:W:t:o:s:q:D:n:T:r:IexEJUh",
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'S': o->server = true; break;
		case 'd': o->dev = optarg; break;
		case 'g': o->gidx = num(optarg, "-g", 0, 255); break;
		case 'p': o->port = num(optarg, "-p", 1, 65535); break;
		case 'W': o->stall_s = num(optarg, "-W", 0, 86400); break;
		case 't':
			if (strcmp(optarg, "bw") && strcmp(optarg, "lat")) {
				fprintf(stderr, "srd_perf: -t is bw or lat, not '%s'\n", optarg);
				usage(2);
			}
			o->mode = strcmp(optarg, "bw") ? MODE_LAT : MODE_BW;
			break;
		case 'o':
			for (i = 0; i < 3 && strcmp(optarg, op_names[i]); i++)
				;
			if (i == 3) {
				fprintf(stderr, "srd_perf: -o is send, write or read, not '%s'\n",
					optarg);
				usage(2);
			}
			o->op = i;
			break;
		case 's': parse_sizes(o, optarg); break;
		case 'q': o->nqps = num(optarg, "-q", 1, PERF_MAX_QPS); break;
		case 'D': o->depth = num(optarg, "-D", 1, 65536); break;
		case 'n': o->iters = num(optarg, "-n", 1, PERF_MAX_SEQ); break;
		case 'T': o->secs = num(optarg, "-T", 1, 86400); break;
		case 'r': o->rnr = num(optarg, "-r", 0, 7); break;
		case 'I': o->flags |= F_IMM; break;
		case 'e': o->flags |= F_EXPECT_ERR; break;
		case 'x': o->flags |= F_WR_API; break;
		case 'E': o->flags |= F_EVENTS; break;
		case 'U': o->flags |= F_UD; break;	/* testing without SRD */
		case 'J': o->json = true; break;
		case 'h': usage(0);
		default: usage(2);
		}
	}
	if (o->server ? optind != argc : optind != argc - 1)
		usage(2);
	if (!o->server)
		o->host = argv[optind];
	if (o->op != OP_SEND) {
		if (o->server || (o->flags & (F_IMM | F_UD))) {
			fprintf(stderr, "srd_perf: -o %s is the client's, and goes with neither -I nor -U\n",
				op_names[o->op]);
			exit(2);
		}
		/* Only the ibv_wr_*() API carries an AH and an rkey. */
		o->flags |= F_WR_API | (o->op == OP_WRITE ? F_WRITE : F_READ);
	}
	for (i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > o->max_size)
			o->max_size = o->sizes[i];
}

int main(int argc, char **argv)
{
	struct perf *p = &perf;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(&p->o, argc, argv);
	cmt = p->o.json ? stderr : stdout;
	p->nqps = p->o.nqps;
	if (p->o.server)
		server(p);
	else
		client(p);
	perf_cleanup(p);
	if (p->failed)
		fprintf(cmt, "# FAIL: errors, corrupt, duplicate or missing messages (see above)\n");
	return p->failed ? 1 : 0;
}
