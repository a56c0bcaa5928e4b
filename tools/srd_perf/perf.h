/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * srd_perf's shared state and the calls its files make in one another:
 * srd_perf.c (options, main), util.c, comm.c (the TCP channel),
 * resources.c (verbs objects), datapath.c, client.c and server.c.
 */
#ifndef SRD_PERF_H
#define SRD_PERF_H

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
extern const char *const op_names[];
/* RDMA write: what a client slot's last write did, for the server's check. */
enum { SLOT_UNUSED, SLOT_OK, SLOT_FAILED };
enum { MSG_HELLO = 1, MSG_WELCOME, MSG_START, MSG_READY, MSG_DONE,
       MSG_RESULT, MSG_QUIT };
enum { NOTE_ERR, NOTE_BAD, NOTE_DUP, NOTE_MISC, NOTE_KINDS };
extern const char *const note_names[NOTE_KINDS];
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

/* Where '#' lines go: stdout beside the table, stderr beside JSON. */
extern FILE *cmt;

struct wbuf {
	uint8_t *b;
	size_t len, cap, pos;
	bool bad;			/* read past the end */
};

/* util.c */
uint64_t now_ns(void);
void __attribute__((noreturn, format(printf, 2, 3)))
die(struct perf *p, const char *fmt, ...);
void __attribute__((format(printf, 3, 4)))
note(struct perf *p, int kind, const char *fmt, ...);
bool stalled(struct perf *p, uint64_t last);
void *zalloc(struct perf *p, size_t n);
const char *gid_str(const union ibv_gid *g, char *s);
void bm_reserve(struct perf *p, struct perf_bm *m, uint32_t nbits);
bool bm_test(const struct perf_bm *m, uint32_t i);
void bm_set(struct perf *p, struct perf_bm *m, uint32_t i);
void bm_clear(struct perf_bm *m);
uint64_t bm_minus(const struct perf_bm *a, const struct perf_bm *b);
bool use_imm(struct perf *p);

/* comm.c */
void wb_put(struct perf *p, struct wbuf *w, const void *d, size_t n);
void wb_u32(struct perf *p, struct wbuf *w, uint32_t v);
void wb_u64(struct perf *p, struct wbuf *w, uint64_t v);
void wb_get(struct wbuf *w, void *d, size_t n);
uint32_t wb_get_u32(struct wbuf *w);
uint64_t wb_get_u64(struct wbuf *w);
void wb_reset(struct wbuf *w);
void msg_send(struct perf *p, uint32_t type, struct wbuf *w);
uint32_t msg_recv_any(struct perf *p, struct wbuf *w);
void msg_recv(struct perf *p, uint32_t type, struct wbuf *w);
void msg_check_end(struct perf *p, struct wbuf *w, const char *what);
int tcp_listen(struct perf *p);
void tcp_accept(struct perf *p);
void tcp_connect(struct perf *p);

/* resources.c */
void open_device(struct perf *p);
void pick_gid(struct perf *p);
uint32_t max_msg(struct perf *p);
void post_recv(struct perf *p, struct perf_qp *q, uint32_t slot);
void setup(struct perf *p, uint32_t nslots, uint32_t nrecv);
void make_ah(struct perf *p);
void perf_cleanup(struct perf *p);

/* datapath.c */
uint32_t tx_post(struct perf *p, struct perf_qp *q, uint32_t seq0,
		 uint32_t n);
void cq_sleep(struct perf *p, int fd, int ms);
int tx_poll(struct perf *p, bool keep_samples);
int rx_poll(struct perf *p);
void reset_size(struct perf *p);
void tx_drain(struct perf *p);
void settle(struct perf *p);
void counts_of(struct perf *p, struct perf_counts *c);
void put_bitmaps(struct perf *p, struct wbuf *w);
void get_bitmaps(struct perf *p, struct wbuf *w);
void put_slots(struct perf *p, struct wbuf *w);
void region_prepare(struct perf *p);
void region_check(struct perf *p, struct wbuf *w, struct perf_counts *c);

/* client.c */
void put_counts(struct perf *p, struct wbuf *w, const struct perf_counts *c);
bool counts_bad(struct perf *p, const struct perf_counts *c);
void client(struct perf *p);

/* server.c */
void server(struct perf *p);

#endif /* SRD_PERF_H */
