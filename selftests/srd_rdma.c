// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA read and write on SRD QPs between two srd devices (docs/protocol.md,
 * "RDMA read and write").  A is the requester, B the responder.  One case
 * a behaviour, one TAP line a case:
 *
 *   1 (a) srddv_query_device: the RDMA caps and max_rdma_size; ibv_post_send
 *         refuses RDMA opcodes; libsrd's length limit for RDMA
 *   2 (b) RDMA_WRITE, RDMA_WRITE_WITH_IMM and RDMA_READ of 0 B to 40 MiB
 *         (three 16 MiB chunks), unaligned, over several SGEs, every byte
 *         and the guards around checked; then 60 of them in flight at once
 *   3 (c) the responder's checks: unknown rkey, another PD, deregistered,
 *         access missing, out of range (start, end, too long, wrapping),
 *         zero length; each counted once, nothing moved, the QP carries on
 *   4 (d) MRs deregistered in the middle of a large write and read
 *   5 (e) an unprivileged process (uid 65534, RLIMIT_MEMLOCK 64 KiB)
 *         against this one's QP and MRs
 *
 *   srd_rdma [-c CASE[,CASE...]] [-m MAX_BYTES] DEV_A IP_A DEV_B IP_B
 *   srd_rdma --probe DEV
 *   srd_rdma --unpriv DEV_A IP_A DEV_B IP_B    (case 5's other side)
 *
 * CASE is 1..5 or a..e.  -m leaves out the sizes of case 2 above
 * MAX_BYTES.  --probe opens DEV and exits 0 if it could.  --unpriv is
 * what case 5 starts, through setpriv(1), with fds 3 (in) and 4 (out)
 * to this process.
 *
 * The checks of a case are "# " lines; a failed one says what was
 * expected and what was seen.  Exit 0 when every case chosen passed.
 */
#define _GNU_SOURCE		/* pipe2 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "srd_case.h"

#define KiB		1024u
#define MiB		(1024u * 1024u)
#define BIG		(40u * MiB)	/* the largest op: three chunks */
#define BUF_BYTES	(BIG + 4 * MiB)	/* abuf and bbuf */
#define GUARD		4096		/* poisoned bytes checked around a range */
#define GAP		1031		/* poisoned bytes between a WR's SGEs */
#define POISON		0xa5		/* requester memory nothing may write */
#define RPOISON		0x5a		/* responder memory nothing may write */
#define MARK		0x3c		/* case 4: pages after their dereg */
#define CQ_DEPTH	1024
#define SEND_WR		128
#define RECV_WR		128
#define MAX_SGE		3
#define WC_TIMEOUT_MS	10000
#define MANY		60		/* case 2: ops in flight at once */
#define UNPRIV_UID	65534
#define UNPRIV_MEMLOCK	(64 * KiB)

/* The contract (uapi srd-abi.h, docs/protocol.md). */
enum {
	VERR_BAD_LKEY = 1,
	VERR_LKEY_PD = 2,
	VERR_LKEY_RANGE = 3,
	VERR_REMOTE_ACCESS = 20,
};

/* The responder's counters of refused rkeys (hw_counters/NAME). */
enum { C_INVALID, C_PD, C_ACCESS, C_RANGE, NCTR };
static const char *const ctr_name[NCTR] = {
	"rdma_rkey_invalid", "rdma_rkey_pd", "rdma_rkey_access", "rdma_rkey_range",
};

enum rop { R_WRITE, R_WRITE_IMM, R_READ };
static const char *const rop_name[] = { "RDMA_WRITE", "RDMA_WRITE_WITH_IMM", "RDMA_READ" };

static struct srd_ep A, B;
static uint8_t *abuf, *bbuf;		/* BUF_BYTES each */
static struct ibv_mr *amr, *bmr;	/* amr local; bmr remote read and write */
static struct ibv_ah *ah_ab;
static struct ibv_qp *qa, *qb;		/* the requester's and the responder's */
static struct ibv_qp_ex *qx;		/* qa's ibv_wr_* */
static int rdma_sge = 1;		/* SGEs of an RDMA WR, at most MAX_SGE */
static uint64_t max_bytes = BIG;	/* -m */
static const char *ip_a, *ip_b;

static void make_qps(bool loud);

/* --- completions --------------------------------------------------------- */

/* A completion in words (two buffers: two calls may share a printf). */
static const char *wc_str(const struct ibv_wc *wc)
{
	static char s[2][192];
	static int k;

	k ^= 1;
	snprintf(s[k], sizeof(s[k]), "wr_id %llu %s (%d) vendor_err %u opcode %s (%d) "
		 "byte_len %u", (unsigned long long)wc->wr_id,
		 ibv_wc_status_str(wc->status), wc->status, wc->vendor_err,
		 srd_opcode_str(wc->opcode), wc->opcode, wc->byte_len);
	return s[k];
}

/* --- data ------------------------------------------------------------------
 *
 * Payloads are slices of one pseudo-random reference: op seq carries
 * ref[shift(seq) + i] at its byte i, so filling and checking are memcpy and
 * memcmp (TCG is slow), every op's bytes differ from another's, and a byte
 * placed at the wrong offset is seen.
 */
static uint8_t *ref;
static size_t ref_len;
#define REF_SHIFT_MAX	(4093u * 13u)

static void ref_init(size_t max_len)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i;

	ref_len = max_len + REF_SHIFT_MAX + 8;
	ref = malloc(ref_len);
	if (!ref)
		srd_die("malloc (reference pattern)", ENOMEM);
	for (i = 0; i + 8 <= ref_len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(ref + i, &x, 8);
	}
}

static const uint8_t *pat(uint32_t seq)
{
	return ref + (seq % 4093) * 13;
}

/* p gets bytes [off, off + len) of seq's payload. */
static void fill(void *p, size_t len, uint32_t seq, size_t off)
{
	memcpy(p, pat(seq) + off, len);
}

/* -1 if p holds bytes [off, off + len) of seq's payload, else the first bad offset. */
static long mismatch(const void *p, size_t len, uint32_t seq, size_t off)
{
	const uint8_t *a = p, *b = pat(seq) + off;
	size_t i;

	if (!memcmp(a, b, len))
		return -1;
	for (i = 0; i < len && a[i] == b[i]; i++)
		;
	return i;
}

/* -1 if the len bytes at p are all b, else the first other one's offset. */
static long not_byte(const void *p, size_t len, uint8_t b)
{
	static uint8_t blk[4096];
	const uint8_t *q = p;
	size_t done = 0, n, i;

	memset(blk, b, sizeof(blk));
	while (done < len) {
		n = len - done < sizeof(blk) ? len - done : sizeof(blk);
		if (memcmp(q + done, blk, n))
			for (i = 0; i < n; i++)
				if (q[done + i] != b)
					return done + i;
		done += n;
	}
	return -1;
}

/* --- counters ------------------------------------------------------------- */

/*
 * The rkey counters of dev (hw_counters/NAME, -1 if unreadable), after
 * ib_core's cache (hw_counters/lifespan ms) has expired once.
 */
static void ctrs_read(const char *dev, long long v[NCTR])
{
	char path[256], buf[64];
	long long life = 10;
	int i;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hw_counters/lifespan", dev);
	if (srd_read_sysfs(path, buf, sizeof(buf)))
		life = atoll(buf);
	if (life < 0 || life > 2000)
		life = 10;
	srd_sleep_ms(life + 15);
	for (i = 0; i < NCTR; i++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hw_counters/%s",
			 dev, ctr_name[i]);
		v[i] = srd_read_sysfs(path, buf, sizeof(buf)) ? atoll(buf) : -1;
	}
}

/* Since before: counter which (C_*, or -1 for none) went up by one, the others not. */
static bool ctrs_expect(const char *what, const char *dev, const long long before[NCTR],
			int which)
{
	long long after[NCTR];
	char seen[256];
	size_t n = 0;
	bool ok = true;
	int i;

	ctrs_read(dev, after);
	for (i = 0; i < NCTR; i++) {
		if (before[i] < 0 || after[i] < 0)
			ok = false;
		else if (after[i] - before[i] != (i == which))
			ok = false;
		n += snprintf(seen + n, sizeof(seen) - n, "%s%s %+lld", i ? ", " : "",
			      ctr_name[i], after[i] - before[i]);
	}
	return expect(ok, "%s: %s's counters: expected %s%s and no other change, saw %s",
		      what, dev, which < 0 ? "none" : ctr_name[which],
		      which < 0 ? "" : " +1", ok ? "that" : seen);
}

/* After a failed case: the device's non-zero counters, to say where it went wrong. */
static void dump_counters(const char *dev)
{
	char path[512], buf[64], line[4096];
	size_t n = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hw_counters", dev);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) && n < sizeof(line) - 128) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan"))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hw_counters/%s", dev,
			 e->d_name);
		if (srd_read_sysfs(path, buf, sizeof(buf)) && atoll(buf))
			n += snprintf(line + n, sizeof(line) - n, " %s=%lld", e->d_name,
				      atoll(buf));
	}
	closedir(d);
	printf("#   %s:%s\n", dev, n ? line : " (all zero)");
}

/* --- QPs ------------------------------------------------------------------ */

/*
 * An SRD QP (IBV_QPT_DRIVER through plain ibv_create_qp_ex) on pd and cq,
 * with the RDMA ibv_wr_* ops when rdma; in RTS.  NULL with errno if not.
 */
static struct ibv_qp *srd_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
			     bool rdma, struct ibv_qp_cap *granted)
{
	struct ibv_qp_cap cap = { .max_send_wr = SEND_WR, .max_recv_wr = RECV_WR,
				  .max_send_sge = MAX_SGE, .max_recv_sge = 1 };
	uint64_t ops = rdma ? IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
			      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			      IBV_QP_EX_WITH_RDMA_READ : 0;
	struct ibv_qp *qp;
	int rc;

	qp = srd_qp_new(pd, scq, rcq, SRD_QP_SRD, ops, &cap);
	if (!qp)
		return NULL;
	rc = srd_qp_to_rts(qp, SRD_QKEY);
	if (rc) {
		ibv_destroy_qp(qp);
		errno = rc;
		return NULL;
	}
	if (granted)
		*granted = cap;
	return qp;
}

/* --- posting ---------------------------------------------------------------- */

struct op {
	enum rop op;
	uint64_t wr_id;
	struct ibv_ah *ah;
	uint32_t qpn;			/* the responder's QP */
	uint32_t rkey;
	uint64_t raddr;
	uint32_t imm;
	int nsge;
	struct ibv_sge sge[MAX_SGE];
};

static void wr_build(struct ibv_qp_ex *x, const struct op *o)
{
	x->wr_id = o->wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	switch (o->op) {
	case R_WRITE:
		ibv_wr_rdma_write(x, o->rkey, o->raddr);
		break;
	case R_WRITE_IMM:
		ibv_wr_rdma_write_imm(x, o->rkey, o->raddr, htonl(o->imm));
		break;
	case R_READ:
		ibv_wr_rdma_read(x, o->rkey, o->raddr);
		break;
	}
	ibv_wr_set_ud_addr(x, o->ah, o->qpn, SRD_QKEY);
	ibv_wr_set_sge_list(x, o->nsge, o->sge);
}

/* Post n ops in one ibv_wr_start .. ibv_wr_complete; its result. */
static int post_ops(struct ibv_qp_ex *x, const struct op *ops, int n)
{
	int i;

	ibv_wr_start(x);
	for (i = 0; i < n; i++)
		wr_build(x, &ops[i]);
	return ibv_wr_complete(x);
}

/*
 * o's local side: len bytes over up to nsge SGEs from base (of lkey's MR),
 * GAP bytes apart.  Returns the bytes spanned.
 */
static size_t spread(struct op *o, uint8_t *base, uint32_t lkey, uint32_t len, int nsge)
{
	uint32_t off = 0, piece;
	int i;

	if (len < (uint32_t)nsge)
		nsge = len ? 1 : 0;
	o->nsge = nsge;
	for (i = 0; i < nsge; i++) {
		piece = len / nsge + (i == nsge - 1 ? len % nsge : 0);
		o->sge[i] = (struct ibv_sge){ (uintptr_t)(base + off + (size_t)i * GAP),
					      piece, lkey };
		off += piece;
	}
	return len + (nsge > 1 ? (size_t)(nsge - 1) * GAP : 0);
}

/* The local SGEs get bytes of seq's payload in order (a write's source). */
static void fill_sges(const struct op *o, uint32_t seq)
{
	size_t off = 0;
	int i;

	for (i = 0; i < o->nsge; i++) {
		fill((void *)(uintptr_t)o->sge[i].addr, o->sge[i].length, seq, off);
		off += o->sge[i].length;
	}
}

/*
 * A read's destination: each SGE holds its slice of seq's payload, and the
 * gaps between them and GUARD bytes on either side are still POISON.
 */
static bool sges_hold(const struct op *o, uint32_t seq, const char *what)
{
	size_t off = 0;
	long bad;
	int i;

	for (i = 0; i < o->nsge; i++) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)o->sge[i].addr;

		bad = mismatch(p, o->sge[i].length, seq, off);
		if (!must(bad < 0, "%s: local SGE %d (%u bytes): expected the remote bytes, "
			  "first wrong byte at %ld", what, i, o->sge[i].length, bad))
			return false;
		bad = not_byte(p - (i ? GAP : GUARD), i ? GAP : GUARD, POISON);
		if (!must(bad < 0, "%s: expected the poison before local SGE %d untouched, "
			  "saw byte %ld of it changed", what, i, bad))
			return false;
		off += o->sge[i].length;
	}
	if (o->nsge) {
		const struct ibv_sge *l = &o->sge[o->nsge - 1];

		bad = not_byte((const uint8_t *)(uintptr_t)(l->addr + l->length), GUARD, POISON);
		return must(bad < 0, "%s: expected the %u poison bytes after the last local "
			    "SGE untouched, saw byte %ld of them changed", what, GUARD, bad);
	}
	return true;
}

/* The responder's [p, p + len) holds seq's payload, with GUARD bytes of RPOISON around. */
static bool remote_holds(const uint8_t *p, uint32_t len, uint32_t seq, const char *what)
{
	long bad = mismatch(p, len, seq, 0);

	if (!must(bad < 0, "%s: remote range of %u bytes: first wrong byte at %ld", what,
		  len, bad))
		return false;
	bad = not_byte(p - GUARD, GUARD, RPOISON);
	if (!must(bad < 0, "%s: expected the %u bytes before the remote range untouched, "
		  "saw byte %ld of them changed", what, GUARD, bad))
		return false;
	bad = not_byte(p + len, GUARD, RPOISON);
	return must(bad < 0, "%s: expected the %u bytes after the remote range untouched, "
		    "saw byte %ld of them changed", what, GUARD, bad);
}

/* --- completions ---------------------------------------------------------- */

/* How long an op of len bytes may take on TCG. */
static int op_ms(uint64_t len)
{
	return WC_TIMEOUT_MS + (int)(len / MiB) * 1500;
}

static enum ibv_wc_opcode wc_opcode_of(enum rop op)
{
	return op == R_READ ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE;
}

/*
 * The next completion on cq is wr_id's, with status st: on success with
 * op's opcode, on error with vendor_err verr.
 */
static bool expect_op_wc(struct ibv_cq *cq, uint64_t wr_id, enum rop op,
			 enum ibv_wc_status st, uint32_t verr, int ms, bool loud,
			 const char *what)
{
	struct ibv_wc wc;
	bool ok;

	if (!next_wc(cq, &wc, ms, what))
		return false;
	ok = wc.wr_id == wr_id && wc.status == st &&
	     (st == IBV_WC_SUCCESS ? wc.opcode == wc_opcode_of(op) : wc.vendor_err == verr);
	return check_at(ok, loud, __LINE__,
			"%s: expected wr_id %llu %s %s %u, saw %s", what,
			(unsigned long long)wr_id, ibv_wc_status_str(st),
			st == IBV_WC_SUCCESS ? "opcode" : "vendor_err",
			st == IBV_WC_SUCCESS ? (unsigned int)wc_opcode_of(op) : verr,
			wc_str(&wc));
}

/* The write-with-imm's receive: RECV_RDMA_WITH_IMM, imm, byte_len = len. */
static bool expect_imm_recv(struct ibv_cq *cq, uint64_t rwr, uint32_t imm, uint32_t len,
			    uint32_t src_qpn, uint32_t dst_qpn, int ms, const char *what)
{
	struct ibv_wc wc;

	if (!next_wc(cq, &wc, ms, what))
		return false;
	return must(wc.status == IBV_WC_SUCCESS && wc.wr_id == rwr &&
		    wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		    (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == imm &&
		    wc.byte_len == len && wc.src_qp == src_qpn && wc.qp_num == dst_qpn,
		    "%s: expected the receive wr_id %llu SUCCESS opcode RECV_RDMA_WITH_IMM, "
		    "IBV_WC_WITH_IMM imm 0x%x byte_len %u src_qp %u qp_num %u; saw %s "
		    "wc_flags 0x%x imm 0x%x src_qp %u qp_num %u", what,
		    (unsigned long long)rwr, imm, len, src_qpn, dst_qpn, wc_str(&wc),
		    wc.wc_flags, ntohl(wc.imm_data), wc.src_qp, wc.qp_num);
}

static bool expect_quiet(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int rc = srd_poll(cq, &wc, SRD_QUIET_MS);

	return expect(rc == 0, "%s: expected no completion within %d ms, saw %s", what,
		      SRD_QUIET_MS, rc == 0 ? "none" : rc == 1 ? wc_str(&wc) :
		      "ibv_poll_cq fail");
}

static void drain_all(void)
{
	srd_drain(A.scq);
	srd_drain(A.rcq);
	srd_drain(B.scq);
	srd_drain(B.rcq);
}

/* A receive for a write-with-imm: 64 bytes of RPOISON in B.buf, slot k. */
static uint8_t *recv_slot(uint32_t k)
{
	return B.buf + (k % 1024) * 1024;
}

static int post_imm_recv(uint64_t wr_id, uint32_t k)
{
	memset(recv_slot(k), RPOISON, 64);
	return srd_post_recv(qb, wr_id, recv_slot(k), 64, B.mr->lkey);
}

/* --- 1: caps and the provider's checks ------------------------------------- */

static void case_caps(void)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sg[2];
	struct ibv_qp *tmp;
	struct ibv_qp_ex *tx;
	uint64_t max = 1u << 30;
	int rc, i;
#ifdef SRD_HAVE_SRDDV
	struct srddv_device_attr attr;
	const uint32_t want = SRDDV_DEVICE_ATTR_CAPS_RDMA_READ |
			      SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE |
			      SRDDV_DEVICE_ATTR_CAPS_RNR_RETRY;
	struct { struct srddv_device_attr a; uint8_t more[8]; } big;
	struct ibv_device **list;
	uint32_t max_a = 0;

	/* Both ends. */
	for (i = 0; i < 2; i++) {
		struct srd_ep *ep = i ? &B : &A;

		memset(&attr, 0xee, sizeof(attr));
		attr.comp_mask = 0;
		rc = srddv_query_device(ep->ctx, &attr, sizeof(attr));
		if (!expect(rc == 0, "srddv_query_device(%s): expected success, saw %s",
			    ep->name, srd_err_str(rc)))
			continue;
		if (ep == &A)
			max_a = attr.max_rdma_size;
		if (ep == &A && attr.max_rdma_size)
			max = attr.max_rdma_size;
		expect((attr.device_caps & want) == want,
		       "%s: device_caps: expected RDMA_READ | RDMA_WRITE | RNR_RETRY "
		       "(0x%x) set, saw 0x%x", ep->name, want, attr.device_caps);
		expect(attr.max_rdma_size >= (1u << 30),
		       "%s: max_rdma_size: expected >= 1 GiB, saw %u", ep->name,
		       attr.max_rdma_size);
		expect(attr.comp_mask == 0 && attr.reserved[0] == 0 && attr.reserved[1] == 0,
		       "%s: comp_mask and reserved: expected 0, saw 0x%llx, %u %u", ep->name,
		       (unsigned long long)attr.comp_mask, attr.reserved[0], attr.reserved[1]);
		expect(attr.max_sq_wr == (uint32_t)ep->dev.max_qp_wr &&
		       attr.max_rq_wr == (uint32_t)ep->dev.max_qp_wr &&
		       attr.max_sq_sge >= ep->dev.max_sge && attr.max_rq_sge >= ep->dev.max_sge &&
		       attr.inline_buf_size > 0,
		       "%s: max_sq_wr %u max_rq_wr %u (expected ibv_query_device's max_qp_wr "
		       "%d), max_sq_sge %u max_rq_sge %u (expected >= max_sge %d), "
		       "inline_buf_size %u (expected > 0)", ep->name, attr.max_sq_wr,
		       attr.max_rq_wr, ep->dev.max_qp_wr, attr.max_sq_sge, attr.max_rq_sge,
		       ep->dev.max_sge, attr.inline_buf_size);
	}

	memset(&attr, 0, sizeof(attr));
	rc = srddv_query_device(A.ctx, &attr, sizeof(attr) - 1);
	expect(rc == EINVAL, "srddv_query_device with inlen %zu (short of max_rdma_size): "
	       "expected EINVAL, saw %s", sizeof(attr) - 1, srd_err_str(rc));
	attr.comp_mask = 1;
	rc = srddv_query_device(A.ctx, &attr, sizeof(attr));
	expect(rc == EINVAL, "srddv_query_device with comp_mask 1 in: expected EINVAL, saw %s",
	       srd_err_str(rc));
	memset(&big, 0xff, sizeof(big));
	big.a.comp_mask = 0;
	rc = srddv_query_device(A.ctx, &big.a, sizeof(big));
	expect(rc == 0 && not_byte(big.more, sizeof(big.more), 0) < 0 &&
	       big.a.max_rdma_size == max_a,
	       "srddv_query_device with 8 bytes more than it knows: expected success and "
	       "them zeroed, saw %s, first non-zero at %ld", srd_err_str(rc),
	       not_byte(big.more, sizeof(big.more), 0));
	/* Another provider's device, when there is one (rxe, ...). */
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++) {
		struct ibv_context *c;

		if (srddv_is_srd_device(list[i]))
			continue;
		c = ibv_open_device(list[i]);
		if (!c)
			continue;
		rc = srddv_query_device(c, &attr, sizeof(attr));
		expect(rc == EOPNOTSUPP, "srddv_query_device(%s, not srd): expected "
		       "EOPNOTSUPP, saw %s", ibv_get_device_name(list[i]), srd_err_str(rc));
		ibv_close_device(c);
		break;
	}
	if (list && !list[i])
		printf("#   (no non-srd device to try srddv_query_device's EOPNOTSUPP on)\n");
	if (list)
		ibv_free_device_list(list);
#else
	must(0, "srddv_query_device: <infiniband/srddv.h> and libsrd.so.1 were not "
	     "found when the selftests were built");
#endif

	/* RDMA QPs exist: qa was created with the RDMA send_ops_flags. */
	if (!must(qa && qb && qx, "the SRD QPs with RDMA ops exist (see the setup's message)"))
		return;

	/* ibv_post_send has no room for an AH and an rkey: it refuses RDMA. */
	for (i = 0; i < 3; i++) {
		static const enum ibv_wr_opcode opc[3] = {
			IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		};

		sg[0] = (struct ibv_sge){ (uintptr_t)abuf, 64, amr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 10 + i;
		wr.sg_list = sg;
		wr.num_sge = 1;
		wr.opcode = opc[i];
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = (uintptr_t)bbuf;
		wr.wr.rdma.rkey = bmr->rkey;
		bad = NULL;
		rc = srd_err(ibv_post_send(qa, &wr, &bad));
		expect(rc == EINVAL && bad == &wr,
		       "ibv_post_send %s on an SRD QP: expected EINVAL and bad_wr the WR, "
		       "saw %s, bad_wr %s", rop_name[i], srd_err_str(rc),
		       bad == &wr ? "the WR" : bad ? "another" : "NULL");
	}
	expect_quiet(A.scq, "nothing posted by the refused ibv_post_send");

	/*
	 * libsrd: RDMA WRs go up to max_rdma_size (1 GiB), not max_msg_sz.
	 * The SGEs start just past amr, so that the kernel refuses every byte.
	 */
	{
		uint64_t past = (uintptr_t)abuf + BUF_BYTES;

		sg[0] = (struct ibv_sge){ past, (uint32_t)(max / 2), amr->lkey };
		sg[1] = (struct ibv_sge){ past, (uint32_t)(max - max / 2 + 1), amr->lkey };
		ibv_wr_start(qx);
		qx->wr_id = 20;
		qx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(qx, bmr->rkey, (uintptr_t)bbuf);
		ibv_wr_set_ud_addr(qx, ah_ab, qb->qp_num, SRD_QKEY);
		ibv_wr_set_sge_list(qx, 2, sg);
		rc = ibv_wr_complete(qx);
		expect(rc == EINVAL, "ibv_wr_rdma_write of max_rdma_size + 1 = %llu bytes: "
		       "expected EINVAL from ibv_wr_complete, saw %s",
		       (unsigned long long)max + 1, srd_err_str(rc));
		expect_quiet(A.scq, "nothing posted by the refused ibv_wr_complete");

		/*
		 * Exactly max_rdma_size passes libsrd; the kernel then refuses
		 * the SGEs, which lie outside amr (LKEY_RANGE), on a QP of
		 * its own since a local error takes it to ERR.
		 */
		tmp = srd_qp(A.pd, A.scq, A.rcq, true, NULL);
		if (!must(tmp, "a second SRD QP with RDMA ops: %s", strerror(errno)))
			return;
		sg[1].length = (uint32_t)(max - max / 2);
		tx = ibv_qp_to_qp_ex(tmp);
		ibv_wr_start(tx);
		tx->wr_id = 21;
		tx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(tx, bmr->rkey, (uintptr_t)bbuf);
		ibv_wr_set_ud_addr(tx, ah_ab, qb->qp_num, SRD_QKEY);
		ibv_wr_set_sge_list(tx, 2, sg);
		rc = ibv_wr_complete(tx);
		if (expect(rc == 0, "ibv_wr_rdma_write of exactly max_rdma_size (%llu bytes, "
			   "more than max_msg_sz): expected libsrd to take it, saw %s",
			   (unsigned long long)max, srd_err_str(rc))) {
			struct ibv_wc wc;

			if (next_wc(A.scq, &wc, WC_TIMEOUT_MS, "max_rdma_size write"))
				expect(wc.wr_id == 21 && wc.status == IBV_WC_LOC_PROT_ERR &&
				       wc.vendor_err == VERR_LKEY_RANGE,
				       "max_rdma_size write with SGEs beyond the MR: expected "
				       "wr_id 21 LOC_PROT_ERR vendor_err %d (LKEY_RANGE), saw %s",
				       VERR_LKEY_RANGE, wc_str(&wc));
		}
		ibv_destroy_qp(tmp);
		drain_all();
	}
}

/* --- 2: data ------------------------------------------------------------------ */

static uint32_t seq_next = 100;

/*
 * One op of len bytes over up to rdma_sge SGEs, remote offset ro in bbuf
 * and local offset lo in abuf; every byte and the guards checked.
 */
static bool one_op(enum rop op, uint32_t len, size_t ro, size_t lo)
{
	uint32_t seq = seq_next++, imm = 0xc0de0000u + seq;
	struct op o = {
		.op = op, .wr_id = seq, .ah = ah_ab, .rkey = bmr->rkey,
		.raddr = (uintptr_t)(bbuf + ro), .imm = imm,
	};
	char what[160];
	size_t span;
	long long t0;
	bool ok;
	int rc;

	if (!must(qa && qb && qx, "the SRD QPs with RDMA ops exist"))
		return false;
	o.qpn = qb->qp_num;
	span = spread(&o, abuf + lo, amr->lkey, len, rdma_sge);
	snprintf(what, sizeof(what), "%s of %u bytes, %d SGEs, remote offset %zu, local %zu",
		 rop_name[op], len, o.nsge, ro, lo);
	if (!must(ro >= GUARD && ro + len + GUARD <= BUF_BYTES && lo >= GUARD &&
		  lo + span + GUARD <= BUF_BYTES, "%s: fits the buffers", what))
		return false;

	memset(abuf + lo - GUARD, POISON, span + 2 * GUARD);
	if (op == R_READ) {
		memset(bbuf + ro - GUARD, RPOISON, GUARD);
		fill(bbuf + ro, len, seq, 0);
		memset(bbuf + ro + len, RPOISON, GUARD);
	} else {
		memset(bbuf + ro - GUARD, RPOISON, len + 2 * GUARD);
		fill_sges(&o, seq);
	}
	if (op == R_WRITE_IMM) {
		rc = post_imm_recv(seq, seq);
		if (!must(rc == 0, "%s: ibv_post_recv: %s", what, srd_err_str(rc)))
			return false;
	}

	t0 = srd_now_ms();
	rc = post_ops(qx, &o, 1);
	if (!must(rc == 0, "%s: ibv_wr_complete: expected success, saw %s", what,
		  srd_err_str(rc)))
		return false;
	ok = expect_op_wc(A.scq, seq, op, IBV_WC_SUCCESS, 0, op_ms(len), false, what);
	if (op == R_WRITE_IMM) {
		ok &= expect_imm_recv(B.rcq, seq, imm, len, qa->qp_num, qb->qp_num,
				      op_ms(len), what);
		ok &= must(not_byte(recv_slot(seq), 64, RPOISON) < 0,
			   "%s: expected the receive's buffer unused, saw it written", what);
	}
	if (!ok)
		return false;
	if (op == R_READ)
		ok = sges_hold(&o, seq, what) &&
		     must(mismatch(bbuf + ro, len, seq, 0) < 0,
			  "%s: the read's source unchanged", what);
	else
		ok = remote_holds(bbuf + ro, len, seq, what) &&
		     must(not_byte(abuf + lo - GUARD, GUARD, POISON) < 0,
			  "%s: the write's local side untouched", what);
	return expect(ok, "%s: every byte placed, guards intact (%lld ms)", what,
		      srd_now_ms() - t0);
}

/* MANY ops at once: writes, writes with imm and reads, 16..64 KiB, 2 SGEs each. */
static void many_in_flight(void)
{
	const size_t slot = 80 * KiB;
	static struct op o[MANY];
	uint32_t seq0 = seq_next, len[MANY], i, n_imm = 0, imm_ok = 0, got_send = 0;
	uint32_t got_recv = 0;
	size_t ro[MANY];
	bool done[MANY] = {}, recv_done[MANY] = {}, recv_used[MANY] = {}, ok = true;
	struct ibv_wc wc;
	long long t0, end;
	int rc;

	seq_next += MANY;
	for (i = 0; i < MANY; i++) {
		size_t lo = i * slot + GUARD + (i * 7) % 512;

		len[i] = 16 * KiB + (i * 4099) % (48 * KiB);
		ro[i] = i * slot + GUARD + (i * 37) % 4096 + 1;
		o[i] = (struct op){
			.op = (enum rop)(i % 3), .wr_id = seq0 + i, .ah = ah_ab,
			.qpn = qb->qp_num, .rkey = bmr->rkey,
			.raddr = (uintptr_t)(bbuf + ro[i]), .imm = 0xabc00000u + i,
		};
		spread(&o[i], abuf + lo, amr->lkey, len[i], rdma_sge < 2 ? rdma_sge : 2);
		memset(abuf + i * slot, POISON, slot);
		memset(bbuf + i * slot, RPOISON, slot);
		if (o[i].op == R_READ) {
			fill(bbuf + ro[i], len[i], seq0 + i, 0);
		} else {
			fill_sges(&o[i], seq0 + i);
		}
		if (o[i].op == R_WRITE_IMM) {
			rc = post_imm_recv(seq0 + i, i);
			if (!must(rc == 0, "ibv_post_recv %u: %s", i, srd_err_str(rc)))
				return;
			n_imm++;
		}
	}

	t0 = srd_now_ms();
	rc = post_ops(qx, o, MANY);
	if (!expect(rc == 0, "%d ops in one ibv_wr_start .. ibv_wr_complete: expected "
		    "success, saw %s", MANY, srd_err_str(rc)))
		return;
	/*
	 * A write with imm's receive completes before its sender hears of it:
	 * once every op has completed, WC_TIMEOUT_MS more for the receives
	 * of those that succeeded.
	 */
	end = srd_now_ms() + 60000;
	while ((got_send < MANY || got_recv < imm_ok) && srd_now_ms() < end) {
		if (ibv_poll_cq(A.scq, 1, &wc) == 1) {
			i = wc.wr_id - seq0;
			ok &= must(i < MANY && !done[i] && wc.status == IBV_WC_SUCCESS &&
				   wc.opcode == wc_opcode_of(o[i < MANY ? i : 0].op),
				   "many: expected one SUCCESS completion of each op with its "
				   "opcode, saw %s", wc_str(&wc));
			if (i < MANY)
				done[i] = true;
			if (i < MANY && o[i].op == R_WRITE_IMM && wc.status == IBV_WC_SUCCESS)
				imm_ok++;
			if (++got_send == MANY && end > srd_now_ms() + WC_TIMEOUT_MS)
				end = srd_now_ms() + WC_TIMEOUT_MS;
		}
		if (ibv_poll_cq(B.rcq, 1, &wc) == 1) {
			/* Receives go in order, the writes complete in any. */
			uint32_t r = wc.wr_id - seq0;

			i = ntohl(wc.imm_data) - 0xabc00000u;
			ok &= must(i < MANY && o[i].op == R_WRITE_IMM && !recv_done[i] &&
				   wc.status == IBV_WC_SUCCESS &&
				   wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
				   (wc.wc_flags & IBV_WC_WITH_IMM) && wc.byte_len == len[i] &&
				   r < MANY && o[r].op == R_WRITE_IMM && !recv_used[r],
				   "many: expected one RECV_RDMA_WITH_IMM of each write with imm, "
				   "with its length, each taking one of the receives; saw %s "
				   "imm 0x%x", wc_str(&wc), ntohl(wc.imm_data));
			if (i < MANY)
				recv_done[i] = true;
			if (r < MANY)
				recv_used[r] = true;
			got_recv++;
		}
	}
	if (!expect(got_send == MANY && got_recv == n_imm,
		    "many: expected %d op and %u receive completions, saw %u and %u",
		    MANY, n_imm, got_send, got_recv))
		return;
	for (i = 0; i < MANY && ok; i++) {
		char what[64];

		snprintf(what, sizeof(what), "many: op %u (%s, %u bytes)", i,
			 rop_name[o[i].op], len[i]);
		if (o[i].op == R_READ)
			ok = sges_hold(&o[i], seq0 + i, what);
		else
			ok = remote_holds(bbuf + ro[i], len[i], seq0 + i, what);
	}
	expect(ok, "%d ops in flight at once (%u writes with imm), each completed once, "
	       "every byte in place (%lld ms)", MANY, n_imm, srd_now_ms() - t0);
}

static void case_data(void)
{
	static const uint32_t sizes[] = { 0, 1, 4096, MiB + 7, BIG };
	bool broken[3] = {};
	unsigned int s;
	int op;

	if (!must(qa && qb && qx, "the SRD QPs with RDMA ops exist (see the setup's message)"))
		return;
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		if (sizes[s] > max_bytes) {
			printf("#   (%u bytes: left out by -m)\n", sizes[s]);
			continue;
		}
		for (op = R_WRITE; op <= R_READ; op++) {
			if (broken[op]) {
				printf("#   (%s of %u bytes: not tried after a smaller one "
				       "failed)\n", rop_name[op], sizes[s]);
				continue;
			}
			if (!one_op((enum rop)op, sizes[s], GUARD + 4093 + op * 2,
				    GUARD + 5 + op)) {
				broken[op] = true;
				make_qps(false);
			}
		}
	}
	if (qa && qb)
		many_in_flight();
	drain_all();
}

/* --- 3: the responder's checks ----------------------------------------------- */

/* A small op that must succeed (after a refused one): the QP carries on. */
static bool good_op(enum rop op, bool post_recv, const char *after)
{
	uint32_t seq = seq_next++, imm = 0x900d0000u + seq;
	size_t ro = 8 * MiB + 3, lo = 8 * MiB + 5;
	struct op o = {
		.op = op, .wr_id = seq, .ah = ah_ab, .qpn = qb->qp_num, .rkey = bmr->rkey,
		.raddr = (uintptr_t)(bbuf + ro), .imm = imm,
	};
	char what[256];
	bool ok;
	int rc;

	snprintf(what, sizeof(what), "a good %s after %s", rop_name[op], after);
	spread(&o, abuf + lo, amr->lkey, 256, 1);
	memset(abuf + lo - GUARD, POISON, 256 + 2 * GUARD);
	memset(bbuf + ro - GUARD, RPOISON, 256 + 2 * GUARD);
	if (op == R_READ)
		fill(bbuf + ro, 256, seq, 0);
	else
		fill(abuf + lo, 256, seq, 0);
	if (op == R_WRITE_IMM && post_recv) {
		rc = post_imm_recv(seq, 1000);
		if (!must(rc == 0, "%s: ibv_post_recv: %s", what, srd_err_str(rc)))
			return false;
	}
	ok = must(srd_qp_state(qa) == IBV_QPS_RTS, "%s: expected the QP in RTS, saw state %d",
		  what, srd_qp_state(qa));
	rc = post_ops(qx, &o, 1);
	ok &= must(rc == 0, "%s: ibv_wr_complete: %s", what, srd_err_str(rc));
	if (rc)
		return false;
	ok &= expect_op_wc(A.scq, seq, op, IBV_WC_SUCCESS, 0, WC_TIMEOUT_MS, false, what);
	if (op == R_WRITE_IMM)
		ok &= must(srd_poll(B.rcq, &(struct ibv_wc){}, WC_TIMEOUT_MS) == 1,
			   "%s: expected its receive completion", what);
	if (ok)
		ok = op == R_READ ? sges_hold(&o, seq, what) :
				    remote_holds(bbuf + ro, 256, seq, what);
	return expect(ok, "%s: succeeds, the QP carries on", what);
}

struct refusal {
	const char *what;
	enum rop op;
	uint32_t rkey;
	uint64_t raddr;
	uint32_t len;
	uint8_t *region;	/* responder memory the op names, or next to it */
	size_t region_len;
	int ctr;		/* C_*: refused and counted; -1: zero length, succeeds */
};

/*
 * The op of r, from abuf + 16 MiB + 9: refused with REM_ACCESS_ERR and
 * vendor_err 20, counted once in r->ctr at the responder, nothing written
 * to r->region (a write) or disclosed from it (a read: the local buffer
 * keeps its poison), no receive taken (a write with imm); then the QP
 * still works.  A zero-length op (ctr -1) succeeds instead, checked and
 * counted nowhere.
 */
static void refused(const struct refusal *r)
{
	const size_t lo = 16 * MiB + 9;
	uint32_t seq = seq_next++, imm = 0xbad00000u + seq;
	bool zero = r->ctr < 0;
	struct op o = {
		.op = r->op, .wr_id = seq, .ah = ah_ab, .qpn = qb->qp_num, .rkey = r->rkey,
		.raddr = r->raddr, .imm = imm,
	};
	long long before[NCTR];
	char what[192];
	size_t span;
	int rc;

	snprintf(what, sizeof(what), "%s %s (%u bytes)", rop_name[r->op], r->what, r->len);
	span = spread(&o, abuf + lo, amr->lkey, r->len, 1);
	memset(abuf + lo - GUARD, POISON, span + 2 * GUARD);
	if (r->op == R_READ)
		fill(r->region, r->region_len, seq, 0);	/* what must not leak */
	else
		memset(r->region, RPOISON, r->region_len);
	if (r->op != R_READ)
		fill_sges(&o, seq);
	if (r->op == R_WRITE_IMM) {
		rc = post_imm_recv(seq, 1001);
		if (!must(rc == 0, "%s: ibv_post_recv: %s", what, srd_err_str(rc)))
			return;
	}
	ctrs_read(B.name, before);

	rc = post_ops(qx, &o, 1);
	if (!must(rc == 0, "%s: ibv_wr_complete: expected success, saw %s", what,
		  srd_err_str(rc)))
		return;
	if (zero)
		expect_op_wc(A.scq, seq, r->op, IBV_WC_SUCCESS, 0, WC_TIMEOUT_MS, true, what);
	else
		expect_op_wc(A.scq, seq, r->op, IBV_WC_REM_ACCESS_ERR, VERR_REMOTE_ACCESS,
			     WC_TIMEOUT_MS, true, what);
	if (r->op == R_WRITE_IMM) {
		if (zero)
			must(expect_imm_recv(B.rcq, seq, imm, 0, qa->qp_num, qb->qp_num,
					     WC_TIMEOUT_MS, what),
			     "%s: its receive completes, 0 bytes", what);
		else
			expect_quiet(B.rcq, "the refused write with imm takes no receive");
	}
	ctrs_expect(what, B.name, before, r->ctr);
	if (r->op == R_READ) {
		long bad = not_byte(abuf + lo - GUARD, span + 2 * GUARD, POISON);

		expect(bad < 0, "%s: nothing disclosed: expected the local buffer still "
		       "poison, saw byte %ld written", what, bad - GUARD);
	} else {
		long bad = not_byte(r->region, r->region_len, RPOISON);

		expect(bad < 0, "%s: expected the responder's %zu bytes there unchanged, saw "
		       "byte %ld written", what, r->region_len, bad);
	}
	/* A refused write with imm left its receive for the good one. */
	good_op(r->op, !(r->op == R_WRITE_IMM && !zero), what);
}

/* An rkey no MR of B has (keys are random: avoid the live ones). */
static uint32_t unknown_rkey(const uint32_t *live, int n)
{
	uint32_t k = bmr->rkey ^ 0x5a5a5a5au;
	int i;

again:
	for (i = 0; i < n; i++)
		if (live[i] == k || !k) {
			k = k * 2654435761u + 1;
			goto again;
		}
	return k;
}

static void case_security(void)
{
	const size_t region = 64 * KiB;
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;
	uint8_t *sbuf = NULL, *p_pd, *p_dead, *p_ro, *p_wo, *p_rng;
	struct ibv_mr *mr_pd = NULL, *mr_dead, *mr_ro = NULL, *mr_wo = NULL, *mr_rng = NULL;
	struct ibv_pd *pd2 = NULL;
	uint32_t dead_rkey, bogus, live[8];
	uint64_t rng_lo, rng_hi;
	int op;

	if (!must(qa && qb && qx, "the SRD QPs with RDMA ops exist (see the setup's message)"))
		return;
	sbuf = aligned_alloc(4096, 8 * region);
	if (!must(sbuf, "aligned_alloc"))
		return;
	memset(sbuf, 0, 8 * region);
	p_pd = sbuf;
	p_dead = sbuf + region;
	p_ro = sbuf + 2 * region;
	p_wo = sbuf + 3 * region;
	p_rng = sbuf + 4 * region;	/* 2 regions: the MR in the middle */

	pd2 = ibv_alloc_pd(B.ctx);
	if (!must(pd2, "a second PD on %s: %s", B.name, strerror(errno)))
		goto out;
	mr_pd = ibv_reg_mr(pd2, p_pd, region, rw);
	mr_dead = ibv_reg_mr(B.pd, p_dead, region, rw);
	mr_ro = ibv_reg_mr(B.pd, p_ro, region, IBV_ACCESS_REMOTE_READ);
	mr_wo = ibv_reg_mr(B.pd, p_wo, region, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	mr_rng = ibv_reg_mr(B.pd, p_rng + 4096, region, rw);
	if (!must(mr_pd && mr_dead && mr_ro && mr_wo && mr_rng, "the responder's MRs: %s",
		  strerror(errno)))
		goto out;
	dead_rkey = mr_dead->rkey;
	if (!must(ibv_dereg_mr(mr_dead) == 0, "ibv_dereg_mr"))
		goto out;
	live[0] = bmr->rkey;
	live[1] = B.mr->rkey;
	live[2] = mr_pd->rkey;
	live[3] = mr_ro->rkey;
	live[4] = mr_wo->rkey;
	live[5] = mr_rng->rkey;
	live[6] = dead_rkey;
	live[7] = 0;
	bogus = unknown_rkey(live, 7);
	rng_lo = (uintptr_t)(p_rng + 4096);
	rng_hi = rng_lo + region;

	for (op = R_WRITE; op <= R_READ; op++) {
		const struct refusal rs[] = {
			{ "with an rkey never registered", op, bogus,
			  (uintptr_t)(bbuf + 12 * MiB), 4096, bbuf + 12 * MiB, 4096, C_INVALID },
			{ "with the rkey of an MR in another PD", op, mr_pd->rkey,
			  (uintptr_t)p_pd + 100, 4096, p_pd, region, C_PD },
			{ "with the rkey of a deregistered MR", op, dead_rkey,
			  (uintptr_t)p_dead + 100, 4096, p_dead, region, C_INVALID },
			{ "starting one byte before the MR", op, mr_rng->rkey,
			  rng_lo - 1, 64, p_rng, 2 * region, C_RANGE },
			{ "ending one byte past the MR", op, mr_rng->rkey,
			  rng_hi - 63, 64, p_rng, 2 * region, C_RANGE },
			{ "one byte longer than the MR", op, mr_rng->rkey,
			  rng_lo, region + 1, p_rng, 2 * region, C_RANGE },
			{ "at 2^64 - 64, wrapping", op, mr_rng->rkey,
			  UINT64_MAX - 63, 128, p_rng, 2 * region, C_RANGE },
			{ "of zero bytes with an unknown rkey and address", op, bogus,
			  0xdead0000beefull, 0, bbuf + 12 * MiB, 4096, -1 },
		};
		unsigned int i;

		/* The write with imm: the rkey's checks and the receive, not every case. */
		for (i = 0; i < sizeof(rs) / sizeof(rs[0]); i++)
			if (op != R_WRITE_IMM || i == 0 || i == 1 || i == 7)
				refused(&rs[i]);
	}

	/* Access: each MR refuses the access it lacks, and allows the one it has. */
	{
		const struct refusal rs[] = {
			{ "into an MR without REMOTE_WRITE", R_WRITE, mr_ro->rkey,
			  (uintptr_t)p_ro + 64, 4096, p_ro, region, C_ACCESS },
			{ "into an MR without REMOTE_WRITE", R_WRITE_IMM, mr_ro->rkey,
			  (uintptr_t)p_ro + 64, 4096, p_ro, region, C_ACCESS },
			{ "from an MR without REMOTE_READ", R_READ, mr_wo->rkey,
			  (uintptr_t)p_wo + 64, 4096, p_wo, region, C_ACCESS },
		};
		struct op o;
		uint32_t seq;
		unsigned int i;
		int rc;

		for (i = 0; i < sizeof(rs) / sizeof(rs[0]); i++)
			refused(&rs[i]);

		/* The positive controls: read from mr_ro, write into mr_wo. */
		seq = seq_next++;
		fill(p_ro + 64, 4096, seq, 0);
		o = (struct op){ .op = R_READ, .wr_id = seq, .ah = ah_ab, .qpn = qb->qp_num,
				 .rkey = mr_ro->rkey, .raddr = (uintptr_t)p_ro + 64 };
		spread(&o, abuf + 20 * MiB, amr->lkey, 4096, 1);
		memset(abuf + 20 * MiB - GUARD, POISON, 4096 + 2 * GUARD);
		rc = post_ops(qx, &o, 1);
		expect(!rc && expect_op_wc(A.scq, seq, R_READ, IBV_WC_SUCCESS, 0,
					   WC_TIMEOUT_MS, false, "read from mr_ro") &&
		       sges_hold(&o, seq, "read from mr_ro"),
		       "positive control: RDMA_READ from the MR with REMOTE_READ only "
		       "succeeds, the bytes arrive");
		seq = seq_next++;
		memset(p_wo, RPOISON, region);
		fill(abuf + 20 * MiB, 4096, seq, 0);
		o = (struct op){ .op = R_WRITE, .wr_id = seq, .ah = ah_ab, .qpn = qb->qp_num,
				 .rkey = mr_wo->rkey, .raddr = (uintptr_t)p_wo + GUARD };
		spread(&o, abuf + 20 * MiB, amr->lkey, 4096, 1);
		rc = post_ops(qx, &o, 1);
		expect(!rc && expect_op_wc(A.scq, seq, R_WRITE, IBV_WC_SUCCESS, 0,
					   WC_TIMEOUT_MS, false, "write into mr_wo") &&
		       remote_holds(p_wo + GUARD, 4096, seq, "write into mr_wo"),
		       "positive control: RDMA_WRITE into the MR with REMOTE_WRITE only "
		       "succeeds, the bytes land");
		/* And the range's: exactly the MR, both ends. */
		seq = seq_next++;
		memset(p_rng, RPOISON, 2 * region);
		fill(abuf + 20 * MiB, region, seq, 0);
		o = (struct op){ .op = R_WRITE, .wr_id = seq, .ah = ah_ab, .qpn = qb->qp_num,
				 .rkey = mr_rng->rkey, .raddr = rng_lo };
		spread(&o, abuf + 20 * MiB, amr->lkey, region, 1);
		rc = post_ops(qx, &o, 1);
		expect(!rc && expect_op_wc(A.scq, seq, R_WRITE, IBV_WC_SUCCESS, 0,
					   WC_TIMEOUT_MS, false, "write of the whole MR") &&
		       remote_holds(p_rng + 4096, region, seq, "write of the whole MR"),
		       "positive control: RDMA_WRITE of exactly the MR's %zu bytes succeeds, "
		       "nothing written around it", region);
	}
out:
	if (mr_pd)
		ibv_dereg_mr(mr_pd);
	if (mr_ro)
		ibv_dereg_mr(mr_ro);
	if (mr_wo)
		ibv_dereg_mr(mr_wo);
	if (mr_rng)
		ibv_dereg_mr(mr_rng);
	if (pd2)
		ibv_dealloc_pd(pd2);
	free(sbuf);
	drain_all();
}

/* --- 4: deregistration mid-flight -------------------------------------------- */

/* The first of every 64 KiB block of p that is no longer b: started. */
static bool touched(const uint8_t *p, size_t len, uint8_t b)
{
	size_t i;

	for (i = 0; i < len; i += 64 * KiB)
		if (p[i] != b)
			return true;
	return false;
}

/* A 64-byte aligned block of p all MARK: bytes read after their dereg. */
static long mark_block(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 64 <= len; i += 64)
		if (p[i] == MARK && not_byte(p + i, 64, MARK) < 0)
			return i;
	return -1;
}

static void case_dereg(void)
{
	const size_t len = 24 * MiB;
	uint8_t *wbuf = NULL, *rbuf = NULL, *lread = NULL, *fresh = NULL;
	struct ibv_mr *wmr = NULL, *rmr = NULL, *lmr = NULL, *fmr = NULL;
	uint32_t wseq = seq_next++, rseq = seq_next++, fseq = seq_next++;
	struct op o[2];
	struct ibv_wc wc;
	enum ibv_wc_status st[2] = { IBV_WC_GENERAL_ERR, IBV_WC_GENERAL_ERR };
	long long t0, t_start = -1, t_w, t_r, t_done;
	int rc, i, rc_w, rc_r;
	long bad;

	if (!must(qa && qb && qx, "the SRD QPs with RDMA ops exist (see the setup's message)"))
		return;
	wbuf = aligned_alloc(4096, len);
	rbuf = aligned_alloc(4096, len);
	lread = aligned_alloc(4096, len);
	fresh = aligned_alloc(4096, MiB);
	if (!must(wbuf && rbuf && lread && fresh, "aligned_alloc"))
		goto out;
	memset(wbuf, RPOISON, len);
	fill(rbuf, len, rseq, 0);
	memset(lread, POISON, len);
	fill(abuf, len, wseq, 0);
	wmr = ibv_reg_mr(B.pd, wbuf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	rmr = ibv_reg_mr(B.pd, rbuf, len, IBV_ACCESS_REMOTE_READ);
	lmr = ibv_reg_mr(A.pd, lread, len, IBV_ACCESS_LOCAL_WRITE);
	if (!must(wmr && rmr && lmr, "ibv_reg_mr: %s", strerror(errno)))
		goto out;

	o[0] = (struct op){ .op = R_WRITE, .wr_id = wseq, .ah = ah_ab, .qpn = qb->qp_num,
			    .rkey = wmr->rkey, .raddr = (uintptr_t)wbuf };
	spread(&o[0], abuf, amr->lkey, len, 1);
	o[1] = (struct op){ .op = R_READ, .wr_id = rseq, .ah = ah_ab, .qpn = qb->qp_num,
			    .rkey = rmr->rkey, .raddr = (uintptr_t)rbuf };
	spread(&o[1], lread, lmr->lkey, len, 1);
	t0 = srd_now_ms();
	rc = post_ops(qx, o, 2);
	if (!must(rc == 0, "ibv_wr_complete: %s", srd_err_str(rc)))
		goto out;

	/* Deregister both once bytes move, so that the ops are mid-flight. */
	while (srd_now_ms() - t0 < 10000) {
		if (touched(wbuf, len, RPOISON) || touched(lread, len, POISON)) {
			t_start = srd_now_ms() - t0;
			break;
		}
		srd_sleep_ms(1);
	}
	must(t_start >= 0, "the write or the read moved bytes within 10 s");
	rc_w = ibv_dereg_mr(wmr);
	t_w = srd_now_ms() - t0;
	memset(wbuf, MARK, len);
	wmr = NULL;
	rc_r = ibv_dereg_mr(rmr);
	t_r = srd_now_ms() - t0;
	memset(rbuf, MARK, len);
	rmr = NULL;
	expect(rc_w == 0 && rc_r == 0 && t_r - t_start < 10000,
	       "ibv_dereg_mr of the write's and the read's MRs mid-flight: expected both "
	       "to return 0 (within 10 s), saw %s and %s; bytes moved at %lld ms, "
	       "deregistered at %lld and %lld ms", srd_err_str(rc_w), srd_err_str(rc_r), t_start,
	       t_w, t_r);

	for (i = 0; i < 2; i++) {
		if (!next_wc(A.scq, &wc, 30000, "an op whose MR went"))
			goto out;
		if (!must(wc.wr_id == wseq || wc.wr_id == rseq, "unexpected %s", wc_str(&wc)))
			continue;
		st[wc.wr_id == rseq] = wc.status;
		expect(wc.status == IBV_WC_SUCCESS ? wc.opcode == wc_opcode_of(
						      wc.wr_id == rseq ? R_READ : R_WRITE) :
		       wc.status == IBV_WC_REM_ACCESS_ERR &&
		       wc.vendor_err == VERR_REMOTE_ACCESS,
		       "the %s whose MR was deregistered mid-flight: expected SUCCESS or "
		       "REM_ACCESS_ERR vendor_err 20, saw %s", wc.wr_id == rseq ?
		       "RDMA_READ" : "RDMA_WRITE", wc_str(&wc));
	}
	t_done = srd_now_ms() - t0;
	printf("#   write: %s, read: %s, both done at %lld ms\n",
	       ibv_wc_status_str(st[0]), ibv_wc_status_str(st[1]), t_done);
	if (st[1] == IBV_WC_SUCCESS)
		expect(mismatch(lread, len, rseq, 0) < 0,
		       "the read that succeeded brought every byte");

	/* The responder registers fresh memory; the QP writes there. */
	memset(fresh, RPOISON, MiB);
	fmr = ibv_reg_mr(B.pd, fresh, MiB, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (must(fmr, "ibv_reg_mr (fresh): %s", strerror(errno))) {
		fill(abuf, 256 * KiB, fseq, 0);
		o[0] = (struct op){ .op = R_WRITE, .wr_id = fseq, .ah = ah_ab,
				    .qpn = qb->qp_num, .rkey = fmr->rkey,
				    .raddr = (uintptr_t)fresh + GUARD };
		spread(&o[0], abuf, amr->lkey, 256 * KiB, 1);
		rc = post_ops(qx, o, 1);
		expect(!rc && expect_op_wc(A.scq, fseq, R_WRITE, IBV_WC_SUCCESS, 0,
					   WC_TIMEOUT_MS, false, "write into fresh memory") &&
		       remote_holds(fresh + GUARD, 256 * KiB, fseq, "write into fresh memory"),
		       "a write into a freshly registered MR afterwards succeeds");
	}
	srd_sleep_ms(300);
	bad = not_byte(wbuf, len, MARK);
	expect(bad < 0, "the write's old pages: nothing written after ibv_dereg_mr returned "
	       "(saw byte %ld changed)", bad);
	bad = mark_block(lread, len);
	expect(bad < 0, "the read's old pages: nothing read after ibv_dereg_mr returned "
	       "(saw their new content at local offset %ld)", bad);
	expect(srd_qp_state(qa) == IBV_QPS_RTS, "the requester's QP is still in RTS");
out:
	if (fmr)
		ibv_dereg_mr(fmr);
	if (wmr)
		ibv_dereg_mr(wmr);
	if (rmr)
		ibv_dereg_mr(rmr);
	if (lmr)
		ibv_dereg_mr(lmr);
	free(wbuf);
	free(rbuf);
	free(lread);
	free(fresh);
	drain_all();
}

/* --- 5: an unprivileged process ----------------------------------------------
 *
 * This process (root, R) keeps its QP qb and MR bmr on B and its MR amr on
 * A; the other (U, uid 65534, RLIMIT_MEMLOCK 64 KiB, srd_rdma --unpriv)
 * gets their numbers and keys on fd 3 and, at each step, says on fd 4 what
 * it did, so that R checks its memory and counters; R answers "ok".
 */
#define U_W1	(1 * MiB)	/* U writes here: legitimate */
#define U_R1	(2 * MiB)	/* U reads from here: legitimate */
#define U_W2	(3 * MiB)	/* a write sourced from R's lkey must not land */
#define U_L3	(30 * MiB)	/* abuf: a read into R's lkey must not land */
#define U_W3	(4 * MiB)	/* a write through U's QP in U's PD must not land */
#define U_SEQ_W1 500
#define U_SEQ_R1 501

/* One line from fd into buf, within ms; false on EOF or timeout. */
static bool read_line(int fd, char *buf, size_t len, int ms)
{
	long long end = srd_now_ms() + ms;
	size_t n = 0;
	char c;

	while (n + 1 < len) {
		long long left = end - srd_now_ms();

		if (left <= 0 || !srd_fd_readable(fd, (int)left))
			return false;
		if (read(fd, &c, 1) != 1)
			return false;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = 0;
	return true;
}

/* The uverbs node of an RDMA device, in /dev/infiniband. */
static bool uverbs_node(const char *dev, char *path, size_t len)
{
	char p[256], name[64];
	int i;

	for (i = 0; i < 64; i++) {
		snprintf(p, sizeof(p), "/sys/class/infiniband_verbs/uverbs%d/ibdev", i);
		if (!srd_read_sysfs(p, name, sizeof(name)))
			continue;
		name[strcspn(name, "\n")] = 0;
		if (!strcmp(name, dev)) {
			snprintf(path, len, "/dev/infiniband/uverbs%d", i);
			return true;
		}
	}
	return false;
}

static void case_unpriv(void)
{
	extern char **environ;
	char self[512], node[2][64], line[128];
	int to_u[2] = { -1, -1 }, from_u[2] = { -1, -1 }, status, i;
	posix_spawn_file_actions_t fa;
	long long before[NCTR];
	bool ctrs_taken = false, bye = false;
	pid_t pid = -1;
	ssize_t n;
	long bad;

	if (!must(qb && bmr, "the responder's SRD QP exists"))
		return;
	signal(SIGPIPE, SIG_IGN);	/* U may die: see it as EPIPE */
	for (i = 0; i < 2; i++) {
		struct stat st;
		const char *dev = i ? B.name : A.name;

		if (!must(uverbs_node(dev, node[i], sizeof(node[i])), "%s has a uverbs node",
			  dev))
			return;
		if (stat(node[i], &st) || (st.st_mode & 0666) != 0666) {
			srd_case_skip = "the uverbs nodes are not mode 0666 (srd_rdma.sh makes "
				    "them so)";
			return;
		}
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!must(n > 0, "readlink /proc/self/exe"))
		return;
	self[n] = 0;

	/* What U will use and must not change. */
	memset(bbuf + U_W1 - GUARD, RPOISON, 4096 + 2 * GUARD);
	fill(bbuf + U_R1, 4096, U_SEQ_R1, 0);
	memset(bbuf + U_W2 - GUARD, RPOISON, 4096 + 2 * GUARD);
	memset(bbuf + U_W3 - GUARD, RPOISON, 4096 + 2 * GUARD);
	memset(abuf + U_L3 - GUARD, POISON, 4096 + 2 * GUARD);
	fill(abuf + U_L3 + 64 * KiB, 4096, 77, 0);	/* U2's source: R's secret */

	if (pipe2(to_u, O_CLOEXEC) || pipe2(from_u, O_CLOEXEC)) {
		must(0, "pipe2: %s", strerror(errno));
		goto out;
	}
	/* U's ends become its fds 3 and 4: keep them clear of those numbers. */
	for (i = 0; i < 2; i++) {
		int *fd = i ? &from_u[1] : &to_u[0], hi;

		hi = fcntl(*fd, F_DUPFD_CLOEXEC, 10);
		if (!must(hi >= 10, "fcntl F_DUPFD_CLOEXEC: %s", strerror(errno)))
			goto out;
		close(*fd);
		*fd = hi;
	}
	/*
	 * setpriv drops to uid and gid 65534 and every group; sh lowers
	 * RLIMIT_MEMLOCK to 64 KiB (what ulimit -l 64 means) for U.  No
	 * fork(): it would copy every pinned page of this process.
	 */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to_u[0], 3);
	posix_spawn_file_actions_adddup2(&fa, from_u[1], 4);
	{
		char reuid[32], regid[32];
		char *argv[] = {
			"setpriv", reuid, regid, "--clear-groups", "--", "/bin/sh", "-c",
			"ulimit -l 64 && exec \"$0\" \"$@\"", self, "--unpriv",
			(char *)A.name, (char *)ip_a, (char *)B.name, (char *)ip_b, NULL,
		};

		snprintf(reuid, sizeof(reuid), "--reuid=%d", UNPRIV_UID);
		snprintf(regid, sizeof(regid), "--regid=%d", UNPRIV_UID);
		printf("#   starting: setpriv %s %s --clear-groups -- /bin/sh -c 'ulimit -l 64 "
		       "&& exec ...' %s --unpriv ...\n", reuid, regid, self);
		i = posix_spawnp(&pid, "setpriv", &fa, NULL, argv, environ);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (!must(i == 0, "posix_spawnp setpriv: %s", strerror(i))) {
		pid = -1;
		goto out;
	}
	close(to_u[0]);
	close(from_u[1]);
	to_u[0] = from_u[1] = -1;

	/* qpn rkey w1 r1 w2 w3 (in bbuf), lkey l3 src (in abuf) */
	dprintf(to_u[1], "%u %u %llu %llu %llu %llu %u %llu %llu\n", qb->qp_num, bmr->rkey,
		(unsigned long long)(uintptr_t)(bbuf + U_W1),
		(unsigned long long)(uintptr_t)(bbuf + U_R1),
		(unsigned long long)(uintptr_t)(bbuf + U_W2),
		(unsigned long long)(uintptr_t)(bbuf + U_W3), amr->lkey,
		(unsigned long long)(uintptr_t)(abuf + U_L3),
		(unsigned long long)(uintptr_t)(abuf + U_L3 + 64 * KiB));

	while (read_line(from_u[0], line, sizeof(line), 60000)) {
		if (!strcmp(line, "W1")) {
			expect(remote_holds(bbuf + U_W1, 4096, U_SEQ_W1, "U's write"),
			       "R: uid %d's RDMA_WRITE with R's rkey landed where it said, and "
			       "nowhere else", UNPRIV_UID);
		} else if (!strcmp(line, "L2")) {
			bad = not_byte(bbuf + U_W2 - GUARD, 4096 + 2 * GUARD, RPOISON);
			expect(bad < 0, "R: the write sourced from R's lkey brought nothing of "
			       "R's memory (saw byte %ld written)", bad);
		} else if (!strcmp(line, "L3")) {
			bad = not_byte(abuf + U_L3 - GUARD, 4096 + 2 * GUARD, POISON);
			expect(bad < 0, "R: the read into R's lkey wrote nothing into R's "
			       "memory (saw byte %ld written)", bad);
		} else if (!strcmp(line, "P3?")) {
			ctrs_read(B.name, before);
			ctrs_taken = true;
		} else if (!strcmp(line, "P3")) {
			if (must(ctrs_taken, "R: P3 before P3?"))
				ctrs_expect("R: U's write through its own QP with R's rkey",
					    B.name, before, C_PD);
			bad = not_byte(bbuf + U_W3 - GUARD, 4096 + 2 * GUARD, RPOISON);
			expect(bad < 0, "R: U's write through its own QP (U's PD) with R's "
			       "rkey left R's memory unchanged (saw byte %ld written)", bad);
		} else if (!strcmp(line, "BYE")) {
			bye = true;
			break;
		} else {
			must(0, "R: unexpected line from U: '%s'", line);
			break;
		}
		dprintf(to_u[1], "ok\n");
	}
	must(bye, "R: U said BYE (did it die or time out?)");
out:
	if (to_u[1] >= 0)
		close(to_u[1]);
	if (pid > 0) {
		long long end = srd_now_ms() + 20000;
		pid_t w;

		while ((w = waitpid(pid, &status, WNOHANG)) == 0 && srd_now_ms() < end)
			srd_sleep_ms(20);
		if (w == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		expect(w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "uid %d's side (srd_rdma --unpriv) exited 0: saw %s %d", UNPRIV_UID,
		       w == 0 ? "a hang, killed," : WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	for (i = 0; i < 2; i++) {
		if (to_u[i] >= 0)
			close(to_u[i]);
		if (from_u[i] >= 0)
			close(from_u[i]);
	}
	drain_all();
}

/* --- U: the unprivileged side of case 5 ------------------------------------ */

/* Open a device by name; NULL with errno if not. */
static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list, *d;
	struct ibv_context *ctx = NULL;

	list = ibv_get_device_list(NULL);
	if (!list)
		return NULL;
	d = srd_device_by_name(list, name);
	errno = ENODEV;
	if (d)
		ctx = ibv_open_device(d);
	ibv_free_device_list(list);
	return ctx;
}

static int probe_main(const char *dev)
{
	struct ibv_context *ctx = open_dev(dev);

	if (!ctx) {
		printf("cannot open %s as uid %d: ibv_open_device: %s\n", dev,
		       (int)getuid(), strerror(errno));
		return KSFT_FAIL;
	}
	printf("ibv_open_device(%s) as uid %d: success\n", dev, (int)getuid());
	ibv_close_device(ctx);
	return KSFT_PASS;
}

/* Say what U did, wait for R's "ok". */
static bool u_sync(FILE *in, const char *what)
{
	char line[32];

	dprintf(4, "%s\n", what);
	return must(fgets(line, sizeof(line), in) && !strncmp(line, "ok", 2),
		    "R answers %s", what);
}

/* The next completion: wr_id, LOC_PROT_ERR, vendor_err BAD_LKEY or LKEY_PD. */
static void u_expect_lkey_refused(struct ibv_cq *cq, uint64_t wr_id, const char *what)
{
	struct ibv_wc wc;

	if (!next_wc(cq, &wc, WC_TIMEOUT_MS, what))
		return;
	expect(wc.wr_id == wr_id && wc.status == IBV_WC_LOC_PROT_ERR &&
	       (wc.vendor_err == VERR_LKEY_PD || wc.vendor_err == VERR_BAD_LKEY),
	       "%s: expected wr_id %llu LOC_PROT_ERR vendor_err 2 (LKEY_PD) or 1 "
	       "(BAD_LKEY), saw %s", what, (unsigned long long)wr_id, wc_str(&wc));
}

static int u_exit(void)
{
	printf("#   %s%d checks, %d failed\n", srd_check_who, ksft_n, srd_case_fails);
	return srd_case_fails ? KSFT_FAIL : KSFT_PASS;
}

static int unpriv_main(const char *deva, const char *ipa, const char *devb, const char *ipb)
{
	unsigned int qpn_r, rkey, alkey;
	unsigned long long w1, l3, r1, w2, w3, asrc;
	char line[256];
	struct ibv_context *ca, *cb;
	struct ibv_pd *pda, *pdb;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *q1, *q2, *q3, *qub;
	struct ibv_ah *ah;
	struct ibv_mr *mr, *mr2, *mrbig;
	union ibv_gid gidb;
	uint8_t *ubuf, *u2, *ubig;
	struct rlimit rl;
	struct op o;
	FILE *in;
	int gidx, rc;

	srd_check_who = "[uid 65534] ";
	setvbuf(stdout, NULL, _IOLBF, 0);
	ref_init(64 * KiB);
	in = fdopen(3, "r");
	if (!in)
		return KSFT_FAIL;

	expect(getuid() == UNPRIV_UID && geteuid() == UNPRIV_UID && getgid() == UNPRIV_UID &&
	       getegid() == UNPRIV_UID && getgroups(0, NULL) == 0,
	       "running as uid/gid %d without groups: saw uid %d euid %d gid %d egid %d, "
	       "%d groups", UNPRIV_UID, (int)getuid(), (int)geteuid(), (int)getgid(),
	       (int)getegid(), getgroups(0, NULL));
	rc = getrlimit(RLIMIT_MEMLOCK, &rl);
	expect(rc == 0 && rl.rlim_cur == UNPRIV_MEMLOCK,
	       "RLIMIT_MEMLOCK: expected %u bytes (ulimit -l 64), saw %llu", UNPRIV_MEMLOCK,
	       (unsigned long long)rl.rlim_cur);

	if (!fgets(line, sizeof(line), in) ||
	    sscanf(line, "%u %u %llu %llu %llu %llu %u %llu %llu", &qpn_r, &rkey, &w1, &r1,
		   &w2, &w3, &alkey, &l3, &asrc) != 9) {
		must(0, "R's parameters on fd 3");
		return u_exit();
	}

	ca = open_dev(deva);
	cb = open_dev(devb);
	if (!expect(ca && cb, "ibv_open_device of %s and %s (mode 0666 uverbs nodes): "
		    "expected success, saw %s", deva, devb, ca && cb ? "success" :
		    strerror(errno)))
		return u_exit();
	gidx = srd_find_gid(ca, ipa, NULL);
	if (!must(gidx >= 0 && srd_find_gid(cb, ipb, &gidb) >= 0, "the GIDs of %s and %s",
		  ipa, ipb))
		return u_exit();
	pda = ibv_alloc_pd(ca);
	pdb = ibv_alloc_pd(cb);
	cqa = ibv_create_cq(ca, 64, NULL, NULL, 0);
	cqb = ibv_create_cq(cb, 64, NULL, NULL, 0);
	if (!must(pda && pdb && cqa && cqb, "PDs and CQs: %s", strerror(errno)))
		return u_exit();
	ubuf = aligned_alloc(4096, 16 * KiB);
	u2 = aligned_alloc(4096, 16 * KiB);
	ubig = aligned_alloc(4096, MiB);
	if (!ubuf || !u2 || !ubig)
		return KSFT_FAIL;
	memset(ubuf, POISON, 16 * KiB);
	memset(ubig, 0, MiB);
	memset(u2, 0, 16 * KiB);
	mr = ibv_reg_mr(pda, ubuf, 16 * KiB, IBV_ACCESS_LOCAL_WRITE);
	if (!expect(mr, "ibv_reg_mr of 16 KiB: expected success, saw %s",
		    mr ? "success" : strerror(errno)))
		return u_exit();
	ah = srd_ah_new(pda, gidx, &gidb);
	q1 = srd_qp(pda, cqa, cqa, true, NULL);
	if (!must(ah && q1, "an AH and an SRD QP with RDMA ops: %s", strerror(errno)))
		return u_exit();

	/* 1: legitimate RDMA with R's rkey into R's QP. */
	fill(ubuf, 4096, U_SEQ_W1, 0);
	o = (struct op){ .op = R_WRITE, .wr_id = 1, .ah = ah, .qpn = qpn_r, .rkey = rkey,
			 .raddr = w1 };
	spread(&o, ubuf, mr->lkey, 4096, 1);
	rc = post_ops(ibv_qp_to_qp_ex(q1), &o, 1);
	expect(!rc && expect_op_wc(cqa, 1, R_WRITE, IBV_WC_SUCCESS, 0, WC_TIMEOUT_MS, false,
				   "U's write"),
	       "RDMA_WRITE of 4096 bytes into root's MR with its rkey, to its QP: succeeds");
	u_sync(in, "W1");
	o = (struct op){ .op = R_READ, .wr_id = 2, .ah = ah, .qpn = qpn_r, .rkey = rkey,
			 .raddr = r1 };
	spread(&o, ubuf + 4096 + GUARD, mr->lkey, 4096, 1);
	memset(ubuf + 4096, POISON, 4096 + 2 * GUARD);
	rc = post_ops(ibv_qp_to_qp_ex(q1), &o, 1);
	expect(!rc && expect_op_wc(cqa, 2, R_READ, IBV_WC_SUCCESS, 0, WC_TIMEOUT_MS, false,
				   "U's read") && sges_hold(&o, U_SEQ_R1, "U's read"),
	       "RDMA_READ of 4096 bytes from root's MR with its rkey: succeeds, the bytes "
	       "arrive");

	/* 2: R's lkey in U's work requests (on the device R registered it on). */
	q2 = srd_qp(pda, cqa, cqa, true, NULL);
	q3 = srd_qp(pda, cqa, cqa, true, NULL);
	if (must(q2 && q3, "two more SRD QPs: %s", strerror(errno))) {
		o = (struct op){ .op = R_WRITE, .wr_id = 3, .ah = ah, .qpn = qpn_r,
				 .rkey = rkey, .raddr = w2, .nsge = 1 };
		o.sge[0] = (struct ibv_sge){ asrc, 4096, alkey };
		rc = post_ops(ibv_qp_to_qp_ex(q2), &o, 1);
		if (must(rc == 0, "ibv_wr_complete: %s", srd_err_str(rc)))
			u_expect_lkey_refused(cqa, 3, "RDMA_WRITE sourced from root's memory "
					      "with root's lkey");
		u_sync(in, "L2");
		o = (struct op){ .op = R_READ, .wr_id = 4, .ah = ah, .qpn = qpn_r,
				 .rkey = rkey, .raddr = r1, .nsge = 1 };
		o.sge[0] = (struct ibv_sge){ l3, 4096, alkey };
		rc = post_ops(ibv_qp_to_qp_ex(q3), &o, 1);
		if (must(rc == 0, "ibv_wr_complete: %s", srd_err_str(rc)))
			u_expect_lkey_refused(cqa, 4, "RDMA_READ into root's memory with "
					      "root's lkey");
		u_sync(in, "L3");
	}

	/* 3: R's rkey, but the target QP is U's own, in U's PD on R's device. */
	qub = srd_qp(pdb, cqb, cqb, false, NULL);
	if (must(qub, "an SRD QP on %s: %s", devb, strerror(errno))) {
		u_sync(in, "P3?");
		memset(ubuf, POISON, 4096);
		fill(ubuf, 4096, 502, 0);
		o = (struct op){ .op = R_WRITE, .wr_id = 5, .ah = ah, .qpn = qub->qp_num,
				 .rkey = rkey, .raddr = w3 };
		spread(&o, ubuf, mr->lkey, 4096, 1);
		rc = post_ops(ibv_qp_to_qp_ex(q1), &o, 1);
		if (must(rc == 0, "ibv_wr_complete: %s", srd_err_str(rc)))
			expect_op_wc(cqa, 5, R_WRITE, IBV_WC_REM_ACCESS_ERR, VERR_REMOTE_ACCESS,
				     WC_TIMEOUT_MS, true, "RDMA_WRITE with root's rkey to U's "
				     "own QP (another PD than the MR's)");
		u_sync(in, "P3");
	}

	/* 4: RLIMIT_MEMLOCK. */
	errno = 0;
	mrbig = ibv_reg_mr(pda, ubig, MiB, IBV_ACCESS_LOCAL_WRITE);
	rc = errno;
	expect(!mrbig && (rc == ENOMEM || rc == EPERM),
	       "ibv_reg_mr of 1 MiB with RLIMIT_MEMLOCK 64 KiB: expected ENOMEM or EPERM, "
	       "saw %s", mrbig ? "success" : strerror(rc));
	mr2 = ibv_reg_mr(pda, u2, 16 * KiB, IBV_ACCESS_LOCAL_WRITE);
	expect(mr2, "ibv_reg_mr of another 16 KiB under the same limit: expected success, "
	       "saw %s", mr2 ? "success" : strerror(errno));

	dprintf(4, "BYE\n");
	return u_exit();
}

/* --- main ----------------------------------------------------------------- */

/*
 * qa and qb, new: a case finds no receive or state that another left
 * behind (destroying qb flushes its receives, drained here).
 */
static void make_qps(bool loud)
{
	struct ibv_qp_cap cap;

	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	qa = qb = NULL;
	qx = NULL;
	drain_all();
	errno = 0;
	qa = ah_ab ? srd_qp(A.pd, A.scq, A.rcq, true, &cap) : NULL;
	if (qa) {
		qx = ibv_qp_to_qp_ex(qa);
		rdma_sge = cap.max_send_sge;
		if (rdma_sge > A.dev.max_sge_rd)
			rdma_sge = A.dev.max_sge_rd;
		if (rdma_sge > MAX_SGE)
			rdma_sge = MAX_SGE;
		if (rdma_sge < 1)
			rdma_sge = 1;
		if (loud)
			printf("# RDMA work requests use up to %d SGEs\n", rdma_sge);
	} else {
		printf("# no SRD QP with RDMA send_ops_flags on %s: %s\n", A.name,
		       strerror(errno));
	}
	errno = 0;
	qb = srd_qp(B.pd, B.scq, B.rcq, false, NULL);
	if (!qb)
		printf("# no SRD QP on %s: %s\n", B.name, strerror(errno));
}

static const struct srd_case cases[] = {
	{ "srddv_query_device caps and max_rdma_size; RDMA refused by ibv_post_send",
	  case_caps, NULL },
	{ "RDMA_WRITE, _WITH_IMM and READ, 0 B to 40 MiB, unaligned, SGEs, many at once",
	  case_data, NULL },
	{ "responder checks: rkey, PD, dereg, access, range, zero length; counted",
	  case_security, NULL },
	{ "MRs deregistered mid-flight: success or REM_ACCESS_ERR, nothing after",
	  case_dereg, NULL },
	{ "uid 65534: RDMA with root's rkey, not its lkey or PD; RLIMIT_MEMLOCK",
	  case_unpriv, NULL },
};

/* Before case i: new QPs (main made case 1's). */
static void case_before(int i)
{
	if (i > 0)
		make_qps(false);	/* nothing left over from the case before */
}

/* After a failed case: both sides' counters. */
static void case_failed(void)
{
	dump_counters(A.name);
	dump_counters(B.name);
}

static void case_opt(int c, const char *arg)
{
	if (c == 'm')
		max_bytes = strtoull(arg, NULL, 0);
}

static struct srd_runner runner = {
	.cases = cases, .n = SRD_NCASES(cases), .letters = true, .nargs = 4,
	.usage = "[-c CASE[,CASE...]] [-m MAX_BYTES] DEV_A IP_A DEV_B IP_B",
	.opts = "m:", .opt = case_opt,
	.before = case_before, .failed = case_failed,
};

int main(int argc, char **argv)
{
	int i, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "--probe"))
		return probe_main(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "--unpriv"))
		return unpriv_main(argv[2], argv[3], argv[4], argv[5]);

	i = srd_cases_args(&runner, argc, argv);
	if (i < 0)
		return KSFT_FAIL;
	argv += i;
	ref_init(BIG);
	/* No UD QP, and the deeper CQs SRD QPs need; B's MR is the RDMA target. */
	srd_ep_open_big(&A, argv[0], argv[1], CQ_DEPTH, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE,
			&abuf, &amr);
	srd_ep_open_big(&B, argv[2], argv[3], CQ_DEPTH, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &bbuf, &bmr);
	ip_a = argv[1];
	ip_b = argv[3];
	ah_ab = srd_ah_said(&A, argv[1], &B, argv[3]);
	make_qps(true);

	rc = srd_cases_run(&runner);
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	if (ah_ab)
		ibv_destroy_ah(ah_ab);
	srd_ep_close_big(&A, abuf, amr);
	srd_ep_close_big(&B, bbuf, bmr);
	return rc;
}
