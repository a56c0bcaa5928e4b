/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared helpers for softsrd's datapath selftests: open a device by name,
 * find a GID by IP address, build an endpoint (context, PD, CQs, a buffer
 * with its MR, a UD QP in RTS), address a peer, post and poll with
 * timeouts, and read the device's hw_counters.  The setup itself (devices,
 * GIDs, QPs, AHs) is common/srd_setup.h's, which srd_perf shares: those
 * return errors, and the wrappers here fail the test on them.  A test that
 * is a table of cases includes srd_case.h, its runner and checks, instead.
 *
 * The tests use two srd devices on the two ends of a veth pair, each end in
 * its own network namespace (see two_hosts in lib.sh).  ib_core runs in
 * shared namespace mode, so one process in any namespace opens both
 * devices; each device sends through the UDP socket of its netdev's
 * namespace.  Two devices in one namespace would talk over that
 * namespace's local routes (lo), not over the veth, which is not what a
 * fabric looks like.
 */
#ifndef SRD_TEST_H
#define SRD_TEST_H

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "ksft.h"
#include "srd_setup.h"

#ifdef SRD_HAVE_SRDDV
#include <infiniband/srddv.h>
#endif

#define SRD_QKEY	0x11111111u	/* high bit clear: the WR's qkey is used */
#define SRD_BUF_SIZE	(1u << 20)	/* per endpoint, registered as ep->mr */
#define SRD_TIMEOUT_MS	3000		/* for a completion that must come */
#define SRD_QUIET_MS	300		/* for one that must not */
#define SRD_NO_AH_SLID	0xffff

struct srd_ep {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	unsigned int mtu;		/* active MTU, bytes */
	union ibv_gid gid;
	int gid_index;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;		/* what create_qp granted */
	uint8_t *buf;
	struct ibv_mr *mr;
};

static inline long long srd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline void srd_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static inline struct ibv_context *srd_open(const char *name)
{
	struct ibv_device **list, *d;
	struct ibv_context *ctx = NULL;

	list = ibv_get_device_list(NULL);
	if (!list)
		ksft_skip("no RDMA devices: %s", strerror(errno));
	d = srd_device_by_name(list, name);
	if (!d) {
		printf("FAIL: libibverbs does not list %s\n", name);
		exit(KSFT_FAIL);
	}
	ctx = ibv_open_device(d);
	if (!ctx) {
		printf("FAIL: ibv_open_device(%s): %s\n", name, strerror(errno));
		exit(KSFT_FAIL);
	}
	ibv_free_device_list(list);
	return ctx;
}

/*
 * hw_counters/<name> of a device, or -1 when it cannot be read.  ib_core
 * caches a device's counters for hw_counters/lifespan ms (10 by default):
 * wait that out first, so the value is never older than the call.
 */
static inline long long srd_counter(const char *dev, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hw_counters/lifespan", dev);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1 || v < 0 || v > 2000)
			v = 10;
		fclose(f);
	}
	srd_sleep_ms((v < 0 ? 10 : v) + 15);
	v = -1;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hw_counters/%s",
		 dev, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * srd_counter() until it reaches at least @min, or @ms pass: its last
 * value.  For a count that need not be made before a completion the test
 * already saw.
 */
static inline long long srd_counter_wait(const char *dev, const char *name,
					 long long min, int ms)
{
	long long end = srd_now_ms() + ms, v;

	do {
		v = srd_counter(dev, name);
	} while (v >= 0 && v < min && srd_now_ms() < end);
	return v;
}

/* The first line of a sysfs file, without its newline; false if unreadable. */
static inline bool srd_read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, len, f);
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok;
}

/* An error number in words, "success" for 0. */
static inline const char *srd_err_str(int rc)
{
	return rc ? strerror(rc) : "success";
}

static inline void srd_die(const char *what, int err)
{
	printf("FAIL: %s: %s (%d)\n", what, strerror(err), err);
	exit(KSFT_FAIL);
}

/*
 * A UD QP on ep's CQs, in RTS, with ep->cap filled in.  Through
 * ibv_create_qp, the verb most programs call, so that every endpoint's QP
 * goes through it; srd_qp_new is ibv_create_qp_ex's.
 */
static inline struct ibv_qp *srd_ud_qp(struct srd_ep *ep, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr a = {
		.send_cq = ep->scq, .recv_cq = ep->rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 0,
	};
	struct ibv_qp *qp;
	int rc;

	if (cap)
		a.cap = *cap;
	qp = ibv_create_qp(ep->pd, &a);
	if (!qp)
		srd_die("ibv_create_qp (UD)", errno);
	rc = srd_qp_to_rts(qp, SRD_QKEY);
	if (rc)
		srd_die("UD QP RESET->INIT->RTR->RTS", rc);
	ep->cap = a.cap;
	return qp;
}

/* Open ep on device name, using the GID of ip; CQs of 256, a QP in RTS. */
static inline void srd_ep_open(struct srd_ep *ep, const char *name, const char *ip)
{
	memset(ep, 0, sizeof(*ep));
	ep->name = name;
	ep->ctx = srd_open(name);
	if (ibv_query_device(ep->ctx, &ep->dev))
		srd_die("ibv_query_device", errno);
	if (ibv_query_port(ep->ctx, 1, &ep->port))
		srd_die("ibv_query_port", errno);
	ep->mtu = 128u << ep->port.active_mtu;
	ep->gid_index = srd_find_gid(ep->ctx, ip, &ep->gid);
	if (ep->gid_index < 0) {
		printf("FAIL: %s has no GID for %s\n", name, ip);
		exit(KSFT_FAIL);
	}
	ep->pd = ibv_alloc_pd(ep->ctx);
	if (!ep->pd)
		srd_die("ibv_alloc_pd", errno);
	ep->scq = ibv_create_cq(ep->ctx, 256, NULL, NULL, 0);
	ep->rcq = ibv_create_cq(ep->ctx, 256, NULL, NULL, 0);
	if (!ep->scq || !ep->rcq)
		srd_die("ibv_create_cq", errno);
	ep->buf = aligned_alloc(4096, SRD_BUF_SIZE);
	if (!ep->buf)
		srd_die("aligned_alloc", ENOMEM);
	memset(ep->buf, 0, SRD_BUF_SIZE);
	ep->mr = ibv_reg_mr(ep->pd, ep->buf, SRD_BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!ep->mr)
		srd_die("ibv_reg_mr", errno);
	ep->qp = srd_ud_qp(ep, NULL);
}

static inline void srd_ep_close(struct srd_ep *ep)
{
	if (ep->qp)
		ibv_destroy_qp(ep->qp);
	if (ep->mr)
		ibv_dereg_mr(ep->mr);
	if (ep->scq)
		ibv_destroy_cq(ep->scq);
	if (ep->rcq)
		ibv_destroy_cq(ep->rcq);
	if (ep->pd)
		ibv_dealloc_pd(ep->pd);
	if (ep->ctx)
		ibv_close_device(ep->ctx);
	free(ep->buf);
	memset(ep, 0, sizeof(*ep));
}

/*
 * srd_ep_open, for a test that makes its own QPs: no UD QP, CQs of
 * cq_depth, and *buf, len bytes of zeroes, registered as *mr with access.
 */
static inline void srd_ep_open_big(struct srd_ep *ep, const char *name, const char *ip,
				   int cq_depth, size_t len, int access, uint8_t **buf,
				   struct ibv_mr **mr)
{
	srd_ep_open(ep, name, ip);
	ibv_destroy_qp(ep->qp);
	ep->qp = NULL;
	ibv_destroy_cq(ep->scq);
	ibv_destroy_cq(ep->rcq);
	ep->scq = ibv_create_cq(ep->ctx, cq_depth, NULL, NULL, 0);
	ep->rcq = ibv_create_cq(ep->ctx, cq_depth, NULL, NULL, 0);
	if (!ep->scq || !ep->rcq)
		srd_die("ibv_create_cq", errno);
	*buf = aligned_alloc(4096, len);
	if (!*buf)
		srd_die("aligned_alloc", ENOMEM);
	memset(*buf, 0, len);
	*mr = ibv_reg_mr(ep->pd, *buf, len, access);
	if (!*mr)
		srd_die("ibv_reg_mr", errno);
}

/* srd_ep_open_big's endpoint, its MR and buffer. */
static inline void srd_ep_close_big(struct srd_ep *ep, uint8_t *buf, struct ibv_mr *mr)
{
	ibv_dereg_mr(mr);
	srd_ep_close(ep);
	free(buf);
}

/* An AH on from's PD to to's GID; NULL with errno on failure. */
static inline struct ibv_ah *srd_ah_to_gid(struct srd_ep *from, const union ibv_gid *dgid)
{
	return srd_ah_new(from->pd, from->gid_index, dgid);
}

/*
 * a's AH to b, for a test whose cases each say what they cannot do
 * without one: says which GIDs the two use, and why there is no AH.
 */
static inline struct ibv_ah *srd_ah_said(struct srd_ep *a, const char *ip_a,
					 struct srd_ep *b, const char *ip_b)
{
	struct ibv_ah *ah;

	printf("# %s (%s, GID %d) -> %s (%s, GID %d)\n", a->name, ip_a, a->gid_index,
	       b->name, ip_b, b->gid_index);
	errno = 0;
	ah = srd_ah_to_gid(a, &b->gid);
	if (!ah)
		printf("# no AH from %s to %s: %s\n", a->name, b->name, strerror(errno));
	return ah;
}

/*
 * a's AH to b, a check of its own, for a test whose later checks all
 * send: NULL when there is none, and they are not run.
 */
static inline struct ibv_ah *srd_ah_checked(struct srd_ep *a, struct srd_ep *b)
{
	struct ibv_ah *ah;

	errno = 0;
	ah = srd_ah_to_gid(a, &b->gid);
	ksft_check(ah, "ibv_create_ah from %s to %s (errno %d)", a->name, b->name,
		   ah ? 0 : errno);
	if (!ah)
		printf("# no AH: the tests that send are not run\n");
	return ah;
}

static inline struct ibv_ah *srd_ah(struct srd_ep *from, struct srd_ep *to)
{
	struct ibv_ah *ah = srd_ah_to_gid(from, &to->gid);

	if (!ah)
		srd_die("ibv_create_ah", errno);
	return ah;
}

/*
 * The AH number srddv_query_ah reports, or -1 (with a failed check) when
 * libsrd's direct verbs were not available when the tests were built.
 */
static inline int srd_ahn(struct ibv_ah *ah)
{
#ifdef SRD_HAVE_SRDDV
	struct srddv_ah_attr attr = {};
	int rc = srddv_query_ah(ah, &attr, sizeof(attr));

	ksft_check(rc == 0, "srddv_query_ah: rc %d", rc);
	return rc ? -1 : attr.ahn;
#else
	(void)ah;
	ksft_check(0, "srddv_query_ah: <infiniband/srddv.h> and libsrd.so.1 "
		   "were not found when the selftests were built");
	return -1;
#endif
}

static inline int srd_post_recv_sge(struct ibv_qp *qp, uint64_t wr_id,
				    struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = n };
	struct ibv_recv_wr *bad;

	return srd_err(ibv_post_recv(qp, &wr, &bad));
}

static inline int srd_post_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr,
				uint32_t len, uint32_t lkey)
{
	struct ibv_sge sg = { (uintptr_t)addr, len, lkey };

	return srd_post_recv_sge(qp, wr_id, &sg, 1);
}

struct srd_dest {
	struct ibv_ah *ah;
	uint32_t qpn;
	uint32_t qkey;
};

static inline int srd_post_send_sge(struct ibv_qp *qp, uint64_t wr_id,
				    struct srd_dest d, struct ibv_sge *sg, int n,
				    enum ibv_wr_opcode op, uint32_t imm,
				    unsigned int flags)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sg, .num_sge = n, .opcode = op,
		.send_flags = flags, .imm_data = htonl(imm),
		.wr.ud = { .ah = d.ah, .remote_qpn = d.qpn, .remote_qkey = d.qkey },
	};
	struct ibv_send_wr *bad;

	return srd_err(ibv_post_send(qp, &wr, &bad));
}

static inline int srd_post_send(struct ibv_qp *qp, uint64_t wr_id, struct srd_dest d,
				void *addr, uint32_t len, uint32_t lkey,
				unsigned int flags)
{
	struct ibv_sge sg = { (uintptr_t)addr, len, lkey };

	return srd_post_send_sge(qp, wr_id, d, &sg, 1, IBV_WR_SEND, 0, flags);
}

static inline struct srd_dest srd_dest(struct ibv_ah *ah, struct ibv_qp *qp)
{
	return (struct srd_dest){ ah, qp->qp_num, SRD_QKEY };
}

/* Poll one completion: 1 got one, 0 timed out, -1 poll_cq failed. */
static inline int srd_poll(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
	long long end = srd_now_ms() + timeout_ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
	} while (srd_now_ms() < end);
	return 0;
}

/* A completion that must come: failed check and zeroed wc if not. */
static inline bool srd_expect_wc(struct ibv_cq *cq, struct ibv_wc *wc,
				 const char *what)
{
	int rc = srd_poll(cq, wc, SRD_TIMEOUT_MS);

	if (rc != 1) {
		ksft_check(0, "%s: expected a completion within %d ms, %s", what,
			   SRD_TIMEOUT_MS, rc ? "ibv_poll_cq failed" : "saw none");
		memset(wc, 0, sizeof(*wc));
		wc->status = IBV_WC_GENERAL_ERR;
		return false;
	}
	return true;
}

/* Send-side completion of a successful send. */
static inline void srd_expect_send_ok(struct ibv_cq *cq, uint64_t wr_id,
				      const char *what)
{
	struct ibv_wc wc;

	if (!srd_expect_wc(cq, &wc, what))
		return;
	ksft_check(wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id &&
		   wc.opcode == IBV_WC_SEND,
		   "%s: send completion: expected SUCCESS wr_id %llu opcode SEND, "
		   "saw %s wr_id %llu opcode %d vendor_err %u", what,
		   (unsigned long long)wr_id, ibv_wc_status_str(wc.status),
		   (unsigned long long)wc.wr_id, wc.opcode, wc.vendor_err);
}

/* Drain a CQ without looking (after a failed step). */
static inline void srd_drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
}

/* Deterministic payload: byte i of message seq. */
static inline uint8_t srd_pattern(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + (i >> 8) + 1);
}

static inline void srd_fill(void *p, uint32_t len, uint32_t seq)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		((uint8_t *)p)[i] = srd_pattern(seq, i);
}

/* -1 if p holds seq's pattern, else the first differing offset. */
static inline long srd_check_fill(const void *p, uint32_t len, uint32_t seq)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (((const uint8_t *)p)[i] != srd_pattern(seq, i))
			return i;
	return -1;
}

static inline bool srd_fd_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static inline const char *srd_opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "other";
	}
}

#endif
