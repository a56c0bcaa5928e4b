// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SRD QPs (IBV_QPT_DRIVER) between two srd devices.  One case a behaviour,
 * one TAP line a case:
 *
 *   1 creation through ibv_create_qp_ex and ibv_create_qp, the UD state
 *     machine, refused transitions, IBV_QP_RNR_RETRY, ibv_query_qp
 *   2 SEND and SEND_WITH_IMM from 0 bytes to max_msg_sz, and one byte more
 *   3 many messages in flight over four QP pairs, each delivered once
 *   4 gather and scatter over three SGEs on both sides
 *   5 the error completions, after each of which the QP carries on
 *   6 the receiving QP destroyed mid-stream
 *   7 the ibv_wr_* API and ibv_wr_abort
 *   8 a send's completion never announces an SQ slot not yet free
 *   9 the limits profile (skipped: srd_limits.sh covers it)
 *  10 ibv_dereg_mr of an MR that sends waiting on RNR hold returns at
 *     once; its pages are unpinned when the QP goes
 *
 *   srd_srd_qp [-c CASE[,CASE...]] DEV_A IP_A DEV_B IP_B
 *   srd_srd_qp --hold mr-first|qp-first DEV_A IP_A DEV_B IP_B
 *
 * --hold: an MR and a QP, in that order or the other, and sends from the
 * MR waiting on RNR forever (rnr_retry 7, no receive posted); prints
 * "holding" and waits to be killed (srd_teardown.sh: the exit must not
 * wait for the peer).
 *
 * A sends to B.  IP_x picks the GID (IPv4-mapped or IPv6) each side uses.
 * The checks of a case are "# " lines; a failed one says what was expected
 * and what was seen.  Exit 0 when every case chosen passed, 1 otherwise.
 */
#include <pthread.h>
#include <stdlib.h>

#include "srd_case.h"

#define BIG_SIZE	(20u << 20)	/* each side's registered buffer */
#define CQ_DEPTH	1024
/* A completion that must come: TCG is slow, 1 MiB is a thousand packets. */
#define WC_TIMEOUT_MS	10000
#define POISON		0xa5
#define GUARD		4096		/* receive room past a payload, poisoned */

/* The vendor_err of each SRD send error (the contract, uapi srd-abi.h). */
enum {
	VERR_RNR_RETRY_EXC = 13,
	VERR_REMOTE_BAD_QPN = 14,
	VERR_REMOTE_BAD_QKEY = 15,
	VERR_REMOTE_BAD_LENGTH = 16,
	VERR_REMOTE_ABORT = 17,
};

/* srd_ep_open's context, PD and GID; the UD QP it makes is not used. */
static struct srd_ep A, B;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *amr, *bmr;
static struct ibv_ah *ah_ab;		/* A's AH to B */

/* --- completions --------------------------------------------------------- */

/* A completion in words, for "saw ..." (one call per printf). */
static const char *wc_str(const struct ibv_wc *wc)
{
	static char s[160];

	snprintf(s, sizeof(s), "wr_id %llu %s (%d) vendor_err %u opcode %s",
		 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		 wc->status, wc->vendor_err, srd_opcode_str(wc->opcode));
	return s;
}

/* --- sysfs ---------------------------------------------------------------- */

/*
 * ports/1/hw_counters/NAME of dev, or -1.  ib_core caches the values for
 * hw_counters/lifespan ms: wait that out, so the value is never older
 * than the call.
 */
static long long port_counter(const char *dev, const char *name)
{
	char path[256], buf[64];
	long long life = 10;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/lifespan",
		 dev);
	if (srd_read_sysfs(path, buf, sizeof(buf)))
		life = atoll(buf);
	if (life < 0 || life > 2000)
		life = 10;
	srd_sleep_ms(life + 15);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 dev, name);
	return srd_read_sysfs(path, buf, sizeof(buf)) ? atoll(buf) : -1;
}

/* Poll a counter until it reaches at least min (or ms pass); its last value. */
static long long wait_counter(const char *dev, const char *name, long long min, int ms)
{
	long long end = srd_now_ms() + ms, v;

	do {
		v = port_counter(dev, name);
		if (v >= min)
			break;
	} while (srd_now_ms() < end);
	return v;
}

/* After a failed case: the transport's counters, to say where it went wrong. */
static void dump_counters(const char *dev)
{
	static const char *const names[] = {
		"srd_tx_data_pkts", "srd_rx_data_pkts", "srd_retransmits", "srd_rto_expired",
		"srd_fast_retransmits", "srd_duplicates", "srd_out_of_order",
		"srd_acks_sent", "srd_acks_received", "srd_naks_sent", "srd_naks_received",
		"srd_rnr_naks_sent", "srd_rnr_naks_received", "srd_cwnd_stalls",
		"srd_path_switches", "srd_peer_unreachable", "srd_msgs_sent",
		"srd_msgs_failed", "srd_msgs_delivered", "srd_peers",
	};
	char line[1024];
	size_t i, n = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && n < sizeof(line); i++)
		n += snprintf(line + n, sizeof(line) - n, " %s %lld", names[i] + 4,
			      port_counter(dev, names[i]));
	printf("#   %s:%s\n", dev, line);
}

/* --- QPs ------------------------------------------------------------------ */

/* An SRD QP through ibv_create_qp_ex, in RESET; NULL and a failed check if refused. */
static struct ibv_qp *create_srd_qp(struct srd_ep *ep, struct ibv_qp_cap cap,
				    uint64_t send_ops, struct ibv_qp_cap *granted)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = srd_qp_new(ep->pd, ep->scq, ep->rcq, SRD_QP_SRD, send_ops, &cap);
	must(qp, "ibv_create_qp_ex(IBV_QPT_DRIVER) on %s: expected an SRD QP, saw %s (%d)",
	     ep->name, strerror(errno), errno);
	if (qp && granted)
		*granted = cap;
	return qp;
}

/* An SRD QP on ep's CQs, in RTS; NULL and a failed check if not. */
static struct ibv_qp *srd_qp(struct srd_ep *ep, uint32_t send_wr, uint32_t recv_wr,
			     uint32_t sge, int rnr_retry, struct ibv_qp_cap *granted)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = send_wr, .max_recv_wr = recv_wr,
		.max_send_sge = sge, .max_recv_sge = sge,
	};
	struct ibv_qp *qp = create_srd_qp(ep, cap, 0, granted);
	int rc;

	if (!qp)
		return NULL;
	rc = srd_qp_to_rts_rnr(qp, SRD_QKEY, rnr_retry);
	if (!must(rc == 0, "SRD QP %u on %s RESET -> INIT -> RTR -> RTS: expected "
		  "success, saw %s", qp->qp_num, ep->name, srd_err_str(rc))) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static void destroy_qps(struct ibv_qp **qps, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (qps[i])
			must(ibv_destroy_qp(qps[i]) == 0, "ibv_destroy_qp");
		qps[i] = NULL;
	}
}

static void drain_all(void)
{
	srd_drain(A.scq);
	srd_drain(A.rcq);
	srd_drain(B.scq);
	srd_drain(B.rcq);
}

static struct srd_dest dest(struct ibv_qp *qb)
{
	return srd_dest(ah_ab, qb);
}

/* The AH number a receiver reports as slid, or -1 without srddv. */
static int ah_number(struct ibv_ah *ah)
{
#ifdef SRD_HAVE_SRDDV
	struct srddv_ah_attr attr = {};

	return srddv_query_ah(ah, &attr, sizeof(attr)) ? -1 : attr.ahn;
#else
	(void)ah;
	return -1;
#endif
}

/* The next send completion is wr_id with status (and vendor_err when it is an error). */
static bool expect_send_wc(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_status st,
			   uint32_t verr, int ms, bool loud, const char *what)
{
	struct ibv_wc wc;
	bool ok;

	if (!next_wc(cq, &wc, ms, what))
		return false;
	ok = wc.wr_id == wr_id && wc.status == st &&
	     (st == IBV_WC_SUCCESS ? wc.opcode == IBV_WC_SEND : wc.vendor_err == verr);
	return check_at(ok, loud, __LINE__,
			"%s: expected the send completion wr_id %llu %s vendor_err %u, saw %s",
			what, (unsigned long long)wr_id, ibv_wc_status_str(st),
			st == IBV_WC_SUCCESS ? 0 : verr, wc_str(&wc));
}

struct rx_want {
	uint64_t wr_id;
	struct ibv_qp *src, *dst;
	uint32_t len;
	bool with_imm;
	uint32_t imm;
	int slid;		/* -1: not checked */
};

/* A successful receive completion on cq with every field as w says. */
static bool expect_recv_wc(struct ibv_cq *cq, const struct rx_want *w, const char *what)
{
	struct ibv_wc wc;
	bool ok;

	if (!next_wc(cq, &wc, WC_TIMEOUT_MS, what))
		return false;
	if (!must(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		  wc.wr_id == w->wr_id,
		  "%s: expected a SUCCESS RECV completion of wr_id %llu, saw %s", what,
		  (unsigned long long)w->wr_id, wc_str(&wc)))
		return false;
	ok = must(wc.byte_len == w->len,
		  "%s: byte_len: expected %u (the payload, no GRH on SRD), saw %u",
		  what, w->len, wc.byte_len);
	ok &= must(!(wc.wc_flags & IBV_WC_GRH),
		   "%s: expected no IBV_WC_GRH on an SRD receive, saw wc_flags 0x%x",
		   what, wc.wc_flags);
	ok &= must(wc.src_qp == w->src->qp_num, "%s: src_qp: expected %u (the sender), saw %u",
		   what, w->src->qp_num, wc.src_qp);
	ok &= must(wc.qp_num == w->dst->qp_num, "%s: qp_num: expected %u (the receiver), saw %u",
		   what, w->dst->qp_num, wc.qp_num);
	if (w->with_imm)
		ok &= must((wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == w->imm,
			   "%s: expected IBV_WC_WITH_IMM and imm 0x%x, saw wc_flags 0x%x imm 0x%x",
			   what, w->imm, wc.wc_flags, ntohl(wc.imm_data));
	else
		ok &= must(!(wc.wc_flags & IBV_WC_WITH_IMM),
			   "%s: expected no IBV_WC_WITH_IMM, saw wc_flags 0x%x", what,
			   wc.wc_flags);
	if (w->slid >= 0)
		ok &= must(wc.slid == w->slid, "%s: slid: expected 0x%x, saw 0x%x", what,
			   w->slid, wc.slid);
	return ok;
}

/* Nothing completes on cq within SRD_QUIET_MS. */
static bool expect_quiet(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int rc = srd_poll(cq, &wc, SRD_QUIET_MS);

	return expect(rc == 0, "%s: expected no completion within %d ms, saw %s", what,
		      SRD_QUIET_MS, rc == 0 ? "none" : rc == 1 ? wc_str(&wc) :
		      "ibv_poll_cq fail");
}

/* --- payloads ------------------------------------------------------------ */

/* p[0, len) holds seq's pattern and p[len, len + guard) is still poison. */
static bool payload_ok(const uint8_t *p, uint32_t len, uint32_t guard, uint32_t seq,
		       const char *what)
{
	long bad = srd_check_fill(p, len, seq);
	uint32_t i;

	if (!must(bad < 0, "%s: payload: expected %u bytes intact at offset 0, "
		  "first bad byte at %ld", what, len, bad))
		return false;
	for (i = 0; i < guard && p[len + i] == POISON; i++)
		;
	return must(i == guard, "%s: expected nothing written past the %u-byte payload, "
		    "saw byte %u past it changed", what, len, i);
}

/* Stream messages: the sequence number in the first 4 bytes, then a pattern. */
static void fill_seq(uint8_t *p, uint32_t len, uint32_t seq)
{
	srd_fill(p, len, seq);
	memcpy(p, &seq, sizeof(seq));
}

static uint32_t seq_of(const uint8_t *p)
{
	uint32_t seq;

	memcpy(&seq, p, sizeof(seq));
	return seq;
}

static bool seq_payload_ok(const uint8_t *p, uint32_t len, uint32_t seq)
{
	uint32_t i;

	for (i = sizeof(seq); i < len; i++)
		if (p[i] != srd_pattern(seq, i))
			return false;
	return seq_of(p) == seq;
}

/*
 * One message of len bytes (seq's pattern) from qa to qb, into a receive
 * at bbuf + roff: posted here as wr_id seq, or (post_recv false) already
 * posted by the caller as rwr.  Reports only what goes wrong.
 */
static bool deliver(struct ibv_qp *qa, struct ibv_qp *qb, uint32_t len, uint32_t seq,
		    bool post_recv, uint64_t rwr, uint32_t roff, const char *what)
{
	struct rx_want w = { .wr_id = post_recv ? seq : rwr, .src = qa, .dst = qb,
			     .len = len, .slid = -1 };
	int rc;

	if (post_recv) {
		memset(bbuf + roff, POISON, len + GUARD);
		rc = srd_post_recv(qb, seq, bbuf + roff, len + GUARD, bmr->lkey);
		if (!must(rc == 0, "%s: ibv_post_recv: %s", what, srd_err_str(rc)))
			return false;
	}
	srd_fill(abuf, len, seq);
	rc = srd_post_send(qa, seq, dest(qb), abuf, len, amr->lkey, IBV_SEND_SIGNALED);
	if (!must(rc == 0, "%s: ibv_post_send: expected success, saw %s", what, srd_err_str(rc)))
		return false;
	return expect_send_wc(A.scq, seq, IBV_WC_SUCCESS, 0, WC_TIMEOUT_MS, false, what) &&
	       expect_recv_wc(B.rcq, &w, what) &&
	       payload_ok(bbuf + roff, len, post_recv ? GUARD : 0, seq, what);
}

/* After an error: qa is still in RTS and its next message to qb arrives. */
static void still_works(struct ibv_qp *qa, struct ibv_qp *qb, uint32_t seq, bool post_recv,
			uint64_t rwr, const char *after)
{
	char what[128];

	snprintf(what, sizeof(what), "a good message after %s", after);
	expect_eq("the sending QP's state (IBV_QPS_RTS = 3)", IBV_QPS_RTS, srd_qp_state(qa));
	expect(deliver(qa, qb, 256, seq, post_recv, rwr, 0, what),
	       "%s: delivered intact", what);
}

/* --- 1: creation and the state machine ------------------------------------ */

static void expect_modify_einval(struct ibv_qp *qp, const char *what,
				 struct ibv_qp_attr *qa, int mask, int state_before)
{
	int rc = srd_err(ibv_modify_qp(qp, qa, mask));
	int state = srd_qp_state(qp);

	expect(rc == EINVAL && state == state_before,
	       "%s: expected EINVAL and the state left at %d, saw %s and state %d",
	       what, state_before, srd_err_str(rc), state);
}

/* ibv_query_qp reports the rnr_retry that was set (7 by default). */
static void expect_rnr_retry(struct ibv_qp *qp, int set, const char *how)
{
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa = {};
	int rc = srd_err(ibv_query_qp(qp, &qa, IBV_QP_RNR_RETRY, &qi));

	expect(rc == 0 && qa.rnr_retry == set,
	       "ibv_query_qp(IBV_QP_RNR_RETRY): expected rnr_retry %d (%s), saw %s, %u", set,
	       how, srd_err_str(rc), qa.rnr_retry);
}

static void case_create(void)
{
	const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	struct ibv_qp_init_attr ia = {
		.send_cq = A.scq, .recv_cq = A.rcq, .qp_type = IBV_QPT_DRIVER,
		.cap = { .max_send_wr = 16, .max_recv_wr = 32,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	struct ibv_qp_init_attr_ex iax = {
		.send_cq = A.scq, .recv_cq = A.rcq, .qp_type = IBV_QPT_DRIVER,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = A.pd,
	};
	struct ibv_qp *qp[5] = {};
	long long qps0 = srd_counter(A.name, "qps");
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa = {};
	int i, rc;

	errno = 0;
	qp[0] = ibv_create_qp_ex(A.ctx, &iax);
	expect(qp[0], "ibv_create_qp_ex(IBV_QPT_DRIVER): expected an SRD QP, saw %s (%d)",
	       qp[0] ? "one" : strerror(errno), qp[0] ? 0 : errno);
	errno = 0;
	qp[1] = ibv_create_qp(A.pd, &ia);
	expect(qp[1], "ibv_create_qp(IBV_QPT_DRIVER): expected an SRD QP, saw %s (%d)",
	       qp[1] ? "one" : strerror(errno), qp[1] ? 0 : errno);
	if (!qp[0] || !qp[1])
		goto out;
	expect_eq("hw_counters/qps after creating two SRD QPs", qps0 + 2,
		  srd_counter(A.name, "qps"));
	for (i = 0; i < 2; i++) {
		expect(qp[i]->qp_type == IBV_QPT_DRIVER && qp[i]->qp_num > 1 &&
		       qp[i]->qp_num <= 0xffffff,
		       "QP %d: expected qp_type IBV_QPT_DRIVER (%d) and a 24-bit QP number "
		       "other than 0 and 1, saw qp_type %d qp_num 0x%x", i, IBV_QPT_DRIVER,
		       qp[i]->qp_type, qp[i]->qp_num);
		expect_eq("a new SRD QP's state (IBV_QPS_RESET = 0)", IBV_QPS_RESET,
			  srd_qp_state(qp[i]));
	}
	expect(ia.cap.max_send_wr >= 16 && ia.cap.max_recv_wr >= 32 &&
	       ia.cap.max_send_sge >= 2 && ia.cap.max_recv_sge >= 2,
	       "granted caps hold what was asked: expected at least 16/32/2/2, saw "
	       "send_wr %u recv_wr %u send_sge %u recv_sge %u", ia.cap.max_send_wr,
	       ia.cap.max_recv_wr, ia.cap.max_send_sge, ia.cap.max_recv_sge);

	/* The plain-created QP through the state machine, queried on the way. */
	rc = srd_qp_to_init(qp[1], 0x2468);
	expect(rc == 0, "RESET -> INIT (STATE|PKEY_INDEX|PORT|QKEY): expected success, saw %s",
	       srd_err_str(rc));
	rc = ibv_query_qp(qp[1], &qa, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_CAP |
			  IBV_QP_PORT, &qi);
	expect(rc == 0, "ibv_query_qp: expected success, saw %s", srd_err_str(srd_err(rc)));
	expect(qa.qp_state == IBV_QPS_INIT && qa.qkey == 0x2468 && qa.port_num == 1,
	       "query in INIT: expected state %d qkey 0x2468 port 1, saw state %d qkey 0x%x "
	       "port %u", IBV_QPS_INIT, qa.qp_state, qa.qkey, qa.port_num);
	expect(qi.qp_type == IBV_QPT_DRIVER && qa.cap.max_send_wr >= 16 &&
	       qa.cap.max_recv_wr >= 32 && qa.cap.max_send_sge >= 2 &&
	       qa.cap.max_recv_sge >= 2,
	       "query: expected qp_type %d and caps of at least 16/32/2/2, saw qp_type %d "
	       "caps %u/%u/%u/%u", IBV_QPT_DRIVER, qi.qp_type, qa.cap.max_send_wr,
	       qa.cap.max_recv_wr, qa.cap.max_send_sge, qa.cap.max_recv_sge);
	qa.qp_state = IBV_QPS_RTR;
	rc = srd_err(ibv_modify_qp(qp[1], &qa, IBV_QP_STATE));
	expect(rc == 0 && srd_qp_state(qp[1]) == IBV_QPS_RTR,
	       "INIT -> RTR (STATE): expected success and RTR, saw %s and state %d",
	       srd_err_str(rc), srd_qp_state(qp[1]));
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = 0;
	rc = srd_err(ibv_modify_qp(qp[1], &qa, IBV_QP_STATE | IBV_QP_SQ_PSN));
	expect(rc == 0 && srd_qp_state(qp[1]) == IBV_QPS_RTS,
	       "RTR -> RTS (STATE|SQ_PSN): expected success and RTS, saw %s and state %d",
	       srd_err_str(rc), srd_qp_state(qp[1]));
	expect_rnr_retry(qp[1], 7, "the default");

	/* Transitions UD refuses, on the QP from ibv_create_qp_ex. */
	qa = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	expect_modify_einval(qp[0], "RESET -> RTR", &qa, IBV_QP_STATE, IBV_QPS_RESET);
	qa.qp_state = IBV_QPS_RTS;
	expect_modify_einval(qp[0], "RESET -> RTS", &qa, IBV_QP_STATE | IBV_QP_SQ_PSN,
			     IBV_QPS_RESET);
	qa = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 1 };
	expect_modify_einval(qp[0], "RESET -> INIT without IBV_QP_QKEY", &qa,
			     init_mask & ~IBV_QP_QKEY, IBV_QPS_RESET);
	qa.port_num = 2;
	expect_modify_einval(qp[0], "RESET -> INIT to port 2", &qa, init_mask, IBV_QPS_RESET);
	qa.port_num = 1;
	rc = srd_err(ibv_modify_qp(qp[0], &qa, init_mask));
	expect(rc == 0, "RESET -> INIT: expected success, saw %s", srd_err_str(rc));
	qa.qp_state = IBV_QPS_RTS;
	expect_modify_einval(qp[0], "INIT -> RTS (skipping RTR)", &qa,
			     IBV_QP_STATE | IBV_QP_SQ_PSN, IBV_QPS_INIT);
	qa.qp_state = IBV_QPS_RTR;
	rc = srd_err(ibv_modify_qp(qp[0], &qa, IBV_QP_STATE));
	expect(rc == 0, "INIT -> RTR: expected success, saw %s", srd_err_str(rc));
	qa.qp_state = IBV_QPS_RTS;
	expect_modify_einval(qp[0], "RTR -> RTS without IBV_QP_SQ_PSN", &qa, IBV_QP_STATE,
			     IBV_QPS_RTR);
	qa.qp_state = IBV_QPS_INIT;
	expect_modify_einval(qp[0], "RTR -> INIT", &qa, IBV_QP_STATE, IBV_QPS_RTR);

	/* IBV_QP_RNR_RETRY on each of the three transitions, on a QP each. */
	for (i = 0; i < 3; i++) {
		static const int rnr[] = { 0, 3, 7 };
		static const char *const step[] = { "RESET -> INIT", "INIT -> RTR",
						    "RTR -> RTS" };
		int masks[3] = { init_mask, IBV_QP_STATE, IBV_QP_STATE | IBV_QP_SQ_PSN };
		int s;

		errno = 0;
		qp[2 + i] = ibv_create_qp(A.pd, &ia);
		if (!must(qp[2 + i], "ibv_create_qp(IBV_QPT_DRIVER): %s", strerror(errno)))
			continue;
		for (s = 0; s < 3; s++) {
			qa = (struct ibv_qp_attr){
				.qp_state = IBV_QPS_INIT + s, .port_num = 1,
				.qkey = SRD_QKEY, .rnr_retry = rnr[i],
			};
			if (s == i)
				masks[s] |= IBV_QP_RNR_RETRY;
			rc = srd_err(ibv_modify_qp(qp[2 + i], &qa, masks[s]));
			check_at(rc == 0, s == i, __LINE__,
				 "%s%s: expected success, saw %s", step[s],
				 s == i ? (i == 0 ? " with IBV_QP_RNR_RETRY 0" :
					   i == 1 ? " with IBV_QP_RNR_RETRY 3" :
						    " with IBV_QP_RNR_RETRY 7") : "",
				 srd_err_str(rc));
		}
		expect_eq("state after RNR_RETRY on the way (IBV_QPS_RTS = 3)", IBV_QPS_RTS,
			  srd_qp_state(qp[2 + i]));
		expect_rnr_retry(qp[2 + i], rnr[i], "as set");
	}
	if (qp[2]) {
		/* rnr_retry is 3 bits: 8 is refused, and nothing changes. */
		struct ibv_qp_attr bad = { .rnr_retry = 8 };

		rc = ibv_modify_qp(qp[2], &bad, IBV_QP_RNR_RETRY);
		must(rc == EINVAL, "modify_qp(IBV_QP_RNR_RETRY 8): expected EINVAL, saw %s",
		     srd_err_str(rc));
		expect_rnr_retry(qp[2], 0, "unchanged after rnr_retry 8 was refused");
	}
out:
	destroy_qps(qp, 5);
	expect_eq("hw_counters/qps after destroying them", qps0, srd_counter(A.name, "qps"));
}

/* --- 2: message sizes ----------------------------------------------------- */

static bool one_message(struct ibv_qp *qa, struct ibv_qp *qb, bool imm, uint32_t len,
			uint32_t seq, int slid)
{
	struct rx_want w = { .wr_id = seq, .src = qa, .dst = qb, .len = len,
			     .with_imm = imm, .imm = 0x5a000000 | seq, .slid = slid };
	struct ibv_sge sg = { (uintptr_t)abuf, len, amr->lkey };
	char what[96];
	bool ok;
	int rc;

	snprintf(what, sizeof(what), "%s of %u bytes", imm ? "SEND_WITH_IMM" : "SEND", len);
	memset(bbuf, POISON, len + GUARD);
	rc = srd_post_recv(qb, seq, bbuf, len + GUARD, bmr->lkey);
	if (!must(rc == 0, "%s: ibv_post_recv: %s", what, srd_err_str(rc)))
		return false;
	srd_fill(abuf, len, seq);
	rc = srd_post_send_sge(qa, seq, dest(qb), &sg, len ? 1 : 0,
			       imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, w.imm,
			       IBV_SEND_SIGNALED);
	if (!must(rc == 0, "%s: ibv_post_send: expected success, saw %s", what,
		  srd_err_str(rc)))
		return false;
	/* Without its send completion, the receive is not waited for too. */
	ok = expect_send_wc(A.scq, seq, IBV_WC_SUCCESS, 0, WC_TIMEOUT_MS, false, what) &&
	     expect_recv_wc(B.rcq, &w, what) &&
	     payload_ok(bbuf, len, GUARD, seq, what);
	if (ok) {
		char slid_s[32] = "";

		if (slid >= 0)
			snprintf(slid_s, sizeof(slid_s), ", slid 0x%x", slid);
		expect(1, "%s: sent, every byte at offset 0, byte_len %u, src_qp%s%s, "
		       "no GRH", what, len, slid_s, imm ? ", imm" : "");
	}
	return ok;
}

/*
 * After a failed message its completions may still come: a new pair of
 * QPs (whose CQs are drained) keeps them from being taken for the next.
 */
static bool renew_qps(struct ibv_qp **qp)
{
	destroy_qps(qp, 2);
	drain_all();
	printf("#   note: new QPs for the next message\n");
	qp[0] = srd_qp(&A, 8, 8, 1, -1, NULL);
	qp[1] = srd_qp(&B, 8, 8, 1, -1, NULL);
	return qp[0] && qp[1];
}

static void case_sizes(void)
{
	static const uint32_t sizes[] = { 0, 1, 4095, 4096, 4097, 65536, 1u << 20 };
	struct ibv_qp *qp[2] = {};
	struct ibv_port_attr pa;
	struct ibv_ah *ah_ba;
	char path[256], profile[32] = "?";
	uint32_t max, seq = 0, i, failed = 0;
	struct ibv_wc wc;
	int imm, rc, ahn;

	if (!must(ibv_query_port(A.ctx, 1, &pa) == 0, "ibv_query_port: %s", strerror(errno)))
		return;
	max = pa.max_msg_sz;
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/limits_profile", A.name);
	srd_read_sysfs(path, profile, sizeof(profile));
	printf("# %s: max_msg_sz %u, active MTU %u, limits profile %s\n", A.name, max,
	       A.mtu, profile);
	if (!strcmp(profile, "softsrd"))
		expect_eq("max_msg_sz of the softsrd profile", 1u << 20, max);
	if (!must(max < BIG_SIZE - GUARD, "max_msg_sz %u fits the %u-byte test buffers",
		  max, BIG_SIZE - GUARD))
		return;
	if (!must(ah_ab, "an AH from %s to %s", A.name, B.name))
		return;
	qp[0] = srd_qp(&A, 8, 8, 1, -1, NULL);
	qp[1] = srd_qp(&B, 8, 8, 1, -1, NULL);
	if (!qp[0] || !qp[1])
		goto out;

	/* B has no AH to A: slid is 0xffff. */
	for (imm = 0; imm < 2; imm++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			if (sizes[i] > max) {
				printf("#   note: %u bytes is beyond max_msg_sz: not sent\n",
				       sizes[i]);
				continue;
			}
			if (one_message(qp[0], qp[1], imm, sizes[i], ++seq, SRD_NO_AH_SLID))
				continue;
			/* Each may wait WC_TIMEOUT_MS: keep within the test's time. */
			if (++failed == 3) {
				printf("#   note: 3 messages failed: the rest are not sent\n");
				goto out;
			}
			if (!renew_qps(qp))
				goto out;
		}
	}

	/* With one, slid is its number. */
	ah_ba = srd_ah_to_gid(&B, &A.gid);
	if (must(ah_ba, "an AH from %s to %s: %s", B.name, A.name, strerror(errno))) {
		ahn = ah_number(ah_ba);
		if (ahn < 0)
			printf("#   note: no srddv_query_ah: slid not checked against the AH\n");
		if (!one_message(qp[0], qp[1], false, 100, ++seq, ahn) && !renew_qps(qp)) {
			ibv_destroy_ah(ah_ba);
			goto out;
		}
		ibv_destroy_ah(ah_ba);
	}

	rc = srd_post_send(qp[0], 999, dest(qp[1]), abuf, max + 1, amr->lkey,
			   IBV_SEND_SIGNALED);
	expect(rc == EINVAL, "ibv_post_send of max_msg_sz + 1 = %u bytes: expected EINVAL, "
	       "saw %s", max + 1, srd_err_str(rc));
	rc = srd_poll(A.scq, &wc, SRD_QUIET_MS);
	must(rc == 0, "the refused send: expected no completion, saw %s",
	     rc == 1 ? wc_str(&wc) : "ibv_poll_cq fail");
out:
	destroy_qps(qp, 2);
	drain_all();
}

/* --- 3: many messages in flight ------------------------------------------- */

#define NPAIR		4
#define NMSG		256
#define MSG		65536
#define SQ_CREDITS	32
#define RQ_PER_QP	(NMSG / NPAIR + 8)	/* 8 spare: a duplicate would land there */

static void case_many(void)
{
	struct ibv_qp *qa[NPAIR] = {}, *qb[NPAIR] = {};
	uint32_t credits[NPAIR], next_done[NPAIR] = {}, max_seq[NPAIR] = {};
	uint8_t seen[NMSG] = {}, done[NMSG] = {};
	uint32_t posted = 0, nsend = 0, nrecv = 0, bad_send = 0, bad_recv = 0, dup = 0;
	uint32_t ooo_send = 0, ooo_recv = 0, i, j, missing;
	long long t0, last, rx, rx_seen;
	struct ibv_wc wc[16];
	int n, k, rc;

	if (!must(ah_ab, "an AH from %s to %s", A.name, B.name))
		return;
	for (i = 0; i < NPAIR; i++) {
		qa[i] = srd_qp(&A, SQ_CREDITS, 1, 1, -1, NULL);
		qb[i] = srd_qp(&B, 1, RQ_PER_QP, 1, -1, NULL);
		if (!qa[i] || !qb[i])
			goto out;
		credits[i] = SQ_CREDITS;
	}
	memset(bbuf, POISON, NPAIR * RQ_PER_QP * MSG);
	for (i = 0; i < NPAIR; i++) {
		for (j = 0; j < RQ_PER_QP; j++) {
			uint32_t slot = i * RQ_PER_QP + j;

			rc = srd_post_recv(qb[i], slot, bbuf + slot * MSG, MSG, bmr->lkey);
			if (!must(rc == 0, "ibv_post_recv %u: %s", slot, srd_err_str(rc)))
				goto out;
		}
	}
	for (i = 0; i < NMSG; i++)
		fill_seq(abuf + i * MSG, MSG, i);

	printf("# %u messages of %u bytes over %u QP pairs, %u sends in flight a QP\n",
	       NMSG, MSG, NPAIR, SQ_CREDITS);
	rx_seen = port_counter(B.name, "srd_rx_data_pkts");
	t0 = last = srd_now_ms();
	while (nsend < NMSG || nrecv < NMSG) {
		/* Message s goes from qa[s % NPAIR] to qb[s % NPAIR]. */
		while (posted < NMSG && credits[posted % NPAIR]) {
			i = posted % NPAIR;
			rc = srd_post_send(qa[i], posted, dest(qb[i]), abuf + posted * MSG,
					   MSG, amr->lkey, IBV_SEND_SIGNALED);
			if (!must(rc == 0, "ibv_post_send of message %u with %u of QP %u's "
				  "credits left: expected success, saw %s", posted,
				  credits[i], qa[i]->qp_num, srd_err_str(rc)))
				goto out;
			credits[i]--;
			posted++;
		}
		n = ibv_poll_cq(A.scq, 16, wc);
		for (k = 0; k < n; k++) {
			uint64_t s = wc[k].wr_id;

			last = srd_now_ms();
			nsend++;
			if (s >= posted || done[s]++ || wc[k].status != IBV_WC_SUCCESS ||
			    wc[k].opcode != IBV_WC_SEND) {
				if (bad_send++ < 4)
					must(0, "send completion: expected SUCCESS SEND of a "
					     "message posted once, saw %s", wc_str(&wc[k]));
				if (s >= posted)
					continue;
			}
			i = s % NPAIR;
			credits[i]++;
			if (s != next_done[i] * NPAIR + i)
				ooo_send++;
			next_done[i]++;
		}
		n = ibv_poll_cq(B.rcq, 16, wc);
		for (k = 0; k < n; k++) {
			uint64_t slot = wc[k].wr_id;
			const uint8_t *p;
			uint32_t s;

			last = srd_now_ms();
			nrecv++;
			if (slot >= NPAIR * RQ_PER_QP) {
				if (bad_recv++ < 4)
					must(0, "receive: expected a wr_id below %u, saw %s",
					     NPAIR * RQ_PER_QP, wc_str(&wc[k]));
				continue;
			}
			p = bbuf + slot * MSG;
			i = slot / RQ_PER_QP;
			s = seq_of(p);
			if (wc[k].status != IBV_WC_SUCCESS ||
			    wc[k].byte_len != MSG || s >= NMSG || s % NPAIR != i ||
			    wc[k].qp_num != qb[i]->qp_num || wc[k].src_qp != qa[i]->qp_num ||
			    !seq_payload_ok(p, MSG, s)) {
				if (bad_recv++ < 4)
					must(0, "receive: expected SUCCESS, %u bytes of a "
					     "message of its QP pair, intact, saw %s byte_len %u "
					     "qp_num %u src_qp %u seq %u (%s)", MSG,
					     wc_str(&wc[k]), wc[k].byte_len, wc[k].qp_num,
					     wc[k].src_qp, s,
					     s < NMSG && seq_payload_ok(p, MSG, s) ?
					     "payload intact" : "payload damaged");
				continue;
			}
			if (seen[s]++) {
				dup++;
				continue;
			}
			if (s < max_seq[i])
				ooo_recv++;
			else
				max_seq[i] = s;
		}
		/*
		 * The engine sends one packet of each message in turn, so the
		 * last 64 messages, 4096 packets, complete together: on a
		 * debug kernel under TCG that takes longer than
		 * WC_TIMEOUT_MS.  Packets still arriving are progress; a
		 * stall is neither a completion nor a packet for that long.
		 */
		rx = rx_seen;
		if (n >= 0 && srd_now_ms() - last > WC_TIMEOUT_MS)
			rx = port_counter(B.name, "srd_rx_data_pkts");
		if (rx > rx_seen) {
			printf("# no completion for %d ms, but %lld more DATA packets: moving\n",
			       WC_TIMEOUT_MS, rx - rx_seen);
			rx_seen = rx;
			last = srd_now_ms();
		}
		if (n < 0 || srd_now_ms() - last > WC_TIMEOUT_MS) {
			must(0, "no completion nor packet for %d ms: %u of %u posted, %u send, %u "
			     "receive completions", WC_TIMEOUT_MS, posted, NMSG, nsend, nrecv);
			break;
		}
	}
	printf("# %u sends and %u receives completed in %lld ms; out of posting order: "
	       "%u send and %u receive completions\n", nsend, nrecv, srd_now_ms() - t0,
	       ooo_send, ooo_recv);
	for (i = 0, missing = 0; i < NMSG; i++)
		missing += !seen[i];
	expect(bad_send == 0 && nsend == NMSG,
	       "every send completes once, IBV_WC_SUCCESS: expected %u good completions, "
	       "saw %u completions, %u of them wrong", NMSG, nsend, bad_send);
	expect(missing == 0 && dup == 0 && bad_recv == 0,
	       "every message delivered once and intact: expected %u, saw %u missing, "
	       "%u duplicated, %u wrong", NMSG, missing, dup, bad_recv);
	expect_quiet(B.rcq, "no message delivered twice (spare receives stay unused)");
out:
	destroy_qps(qa, NPAIR);
	destroy_qps(qb, NPAIR);
	drain_all();
}

/* --- 4: scatter/gather ----------------------------------------------------- */

/*
 * A message gathered from three send SGEs and scattered into three receive
 * SGEs, with lengths that do not line up with each other or with the
 * packets.  The pieces sit apart, in reverse order, with poison around
 * the receive pieces.
 */
static void sg_message(struct ibv_qp *qa, struct ibv_qp *qb, uint32_t seq,
		       const uint32_t *slen, const uint32_t *rlen, const char *what)
{
	struct ibv_sge ss[3], rs[3];
	uint32_t total = 0, rtotal = 0, off, mo, i, j;
	struct rx_want w;
	bool ok = true;
	int rc;

	for (i = 0; i < 3; i++) {
		total += slen[i];
		rtotal += rlen[i];
	}
	/* Send piece i at an odd address, the last piece lowest. */
	for (i = 3, off = 3, mo = total; i-- > 0;) {
		mo -= slen[i];
		for (j = 0; j < slen[i]; j++)
			abuf[off + j] = srd_pattern(seq, mo + j);
		ss[i] = (struct ibv_sge){ (uintptr_t)(abuf + off), slen[i], amr->lkey };
		off += slen[i] + 4099;
	}
	memset(bbuf, POISON, rtotal + 4 * 4096);
	for (i = 3, off = 4096 + 1; i-- > 0;) {
		rs[i] = (struct ibv_sge){ (uintptr_t)(bbuf + off), rlen[i], bmr->lkey };
		off += rlen[i] + 4096;
	}
	rc = srd_post_recv_sge(qb, seq, rs, 3);
	if (!must(rc == 0, "%s: ibv_post_recv of 3 SGEs: %s", what, srd_err_str(rc)))
		return;
	rc = srd_post_send_sge(qa, seq, dest(qb), ss, 3, IBV_WR_SEND, 0, IBV_SEND_SIGNALED);
	if (!must(rc == 0, "%s: ibv_post_send of 3 SGEs: expected success, saw %s", what,
		  srd_err_str(rc)))
		return;
	w = (struct rx_want){ .wr_id = seq, .src = qa, .dst = qb, .len = total, .slid = -1 };
	if (!expect_send_wc(A.scq, seq, IBV_WC_SUCCESS, 0, WC_TIMEOUT_MS, false, what) ||
	    !expect_recv_wc(B.rcq, &w, what))
		return;
	/* Receive piece i holds message bytes [mo, mo + rlen[i]) up to total. */
	for (i = 0, mo = 0; i < 3; i++) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)rs[i].addr;

		for (j = 0; j < rlen[i]; j++) {
			uint8_t want = mo + j < total ? srd_pattern(seq, mo + j) : POISON;

			if (p[j] != want)
				break;
		}
		ok &= must(j == rlen[i], "%s: receive SGE %u (%u bytes from message offset "
			   "%u): first wrong byte at %u", what, i, rlen[i], mo, j);
		ok &= must(p[-1] == POISON && p[rlen[i]] == POISON,
			   "%s: the bytes around receive SGE %u untouched", what, i);
		mo += rlen[i];
	}
	expect(ok, "%s: %u bytes from SGEs of %u+%u+%u into SGEs of %u+%u+%u, intact",
	       what, total, slen[0], slen[1], slen[2], rlen[0], rlen[1], rlen[2]);
}

static void case_sge(void)
{
	static const uint32_t s1[3] = { 1000, 3000, 2500 }, r1[3] = { 2000, 100, 4700 };
	static const uint32_t s2[3] = { 100003, 1, 200000 };
	static const uint32_t r2[3] = { 65537, 150000, 85467 };
	struct ibv_qp *qp[2] = {};

	if (!must(ah_ab, "an AH from %s to %s", A.name, B.name))
		return;
	if (!must(A.dev.max_sge >= 3 && B.dev.max_sge >= 3,
		  "the devices take 3 SGEs: saw max_sge %d and %d", A.dev.max_sge,
		  B.dev.max_sge))
		return;
	qp[0] = srd_qp(&A, 4, 4, 3, -1, NULL);
	qp[1] = srd_qp(&B, 4, 4, 3, -1, NULL);
	if (qp[0] && qp[1]) {
		printf("# active MTU %u: both messages take several packets\n", A.mtu);
		sg_message(qp[0], qp[1], 401, s1, r1, "6500 bytes");
		sg_message(qp[0], qp[1], 402, s2, r2, "300004 bytes");
	}
	destroy_qps(qp, 2);
	drain_all();
}

/* --- 5: errors ------------------------------------------------------------- */

static void send_error(struct ibv_qp *qa, struct srd_dest d, uint32_t len, uint64_t wr_id,
		       enum ibv_wc_status st, uint32_t verr, int ms, const char *what)
{
	int rc;

	srd_fill(abuf, len, wr_id);
	rc = srd_post_send(qa, wr_id, d, abuf, len, amr->lkey, IBV_SEND_SIGNALED);
	if (must(rc == 0, "%s: ibv_post_send: expected success, saw %s", what, srd_err_str(rc)))
		expect_send_wc(A.scq, wr_id, st, verr, ms, true, what);
}

static void error_bad_qpn(struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct srd_dest d = dest(qb);

	/* QP numbers are allocated cyclically from 2: this one is far off. */
	d.qpn = qb->qp_num ^ 0x800000;
	printf("# a send to QP number 0x%x, which %s does not have\n", d.qpn, B.name);
	send_error(qa, d, 64, 501, IBV_WC_REM_INV_RD_REQ_ERR, VERR_REMOTE_BAD_QPN,
		   WC_TIMEOUT_MS, "send to an unknown QP number");
	still_works(qa, qb, 502, true, 0, "an unknown QP number");
}

static void error_bad_qkey(struct ibv_qp *qa, struct ibv_qp *qb)
{
	struct srd_dest d = dest(qb);
	int rc;

	/* A receive is posted: the qkey, not RNR, must be what refuses it. */
	printf("# a send with qkey 0x%x to a QP of qkey 0x%x\n", SRD_QKEY + 1, SRD_QKEY);
	memset(bbuf, POISON, 256);
	rc = srd_post_recv(qb, 511, bbuf, 256, bmr->lkey);
	if (!must(rc == 0, "ibv_post_recv: %s", srd_err_str(rc)))
		return;
	d.qkey = SRD_QKEY + 1;
	send_error(qa, d, 64, 512, IBV_WC_REM_INV_RD_REQ_ERR, VERR_REMOTE_BAD_QKEY,
		   WC_TIMEOUT_MS, "send with a wrong qkey");
	expect_quiet(B.rcq, "the wrong-qkey message takes no receive");
	still_works(qa, qb, 513, false, 511, "a wrong qkey (into the receive it left)");
}

static void error_short_recv(struct ibv_qp *qa, struct ibv_qp *qb, uint32_t rlen,
			     uint32_t len, uint64_t id)
{
	char what[96];
	struct ibv_wc wc;
	int rc;

	snprintf(what, sizeof(what), "%u bytes into a %u-byte receive", len, rlen);
	rc = srd_post_recv(qb, id, bbuf, rlen, bmr->lkey);
	if (!must(rc == 0, "ibv_post_recv: %s", srd_err_str(rc)))
		return;
	send_error(qa, dest(qb), len, id, IBV_WC_REM_INV_REQ_ERR, VERR_REMOTE_BAD_LENGTH,
		   WC_TIMEOUT_MS, what);
	if (next_wc(B.rcq, &wc, WC_TIMEOUT_MS, what))
		expect(wc.wr_id == id && wc.status == IBV_WC_LOC_LEN_ERR,
		       "%s: the receiver's completion: expected wr_id %llu %s, saw %s", what,
		       (unsigned long long)id, ibv_wc_status_str(IBV_WC_LOC_LEN_ERR),
		       wc_str(&wc));
	/* A sender's mistake must not break the receiving QP for its other peers. */
	expect_eq("the receiving QP's state after it (IBV_QPS_RTS = 3)", IBV_QPS_RTS,
		  srd_qp_state(qb));
	still_works(qa, qb, id + 1, true, 0, what);
}

/* With rnr_retry 0 and 3, a send to a QP without receives fails with RNR. */
static void error_rnr(struct ibv_qp *qb_norecv, int rnr_retry, uint64_t id)
{
	long long c0, c1, t0, ms;
	struct ibv_qp *qa = srd_qp(&A, 4, 1, 1, rnr_retry, NULL);
	char what[96];
	int want = rnr_retry + 1;

	if (!qa)
		return;
	snprintf(what, sizeof(what), "rnr_retry %d, no receive posted", rnr_retry);
	c0 = port_counter(A.name, "srd_rnr_naks_received");
	t0 = srd_now_ms();
	send_error(qa, dest(qb_norecv), 64, id, IBV_WC_RNR_RETRY_EXC_ERR, VERR_RNR_RETRY_EXC,
		   2 * WC_TIMEOUT_MS, what);
	ms = srd_now_ms() - t0;
	printf("#   the RNR error came after %lld ms\n", ms);
	if (rnr_retry == 0)
		expect(ms < 2000, "%s: expected the error at once (no retries, < 2000 ms), "
		       "saw it after %lld ms", what, ms);
	c1 = wait_counter(A.name, "srd_rnr_naks_received", c0 + want, 2000);
	expect(c0 >= 0 && c1 >= c0 + want,
	       "%s: hw_counters/srd_rnr_naks_received of %s: expected to grow by at least "
	       "%d (1 + %d retries), saw %lld -> %lld (-1: unreadable)", what, A.name,
	       want, rnr_retry,
	       c0, c1);
	still_works(qa, qb_norecv, id + 1, true, 0, what);
	destroy_qps(&qa, 1);
}

/*
 * rnr_retry 7 retries forever: the sends wait for receives (filling the
 * SQ: one more is refused with ENOMEM), then complete intact.
 */
static void error_rnr_forever(struct ibv_qp *qb_norecv)
{
	struct ibv_qp_cap cap;
	struct ibv_qp *qa = srd_qp(&A, 4, 1, 1, 7, &cap);
	uint32_t w, i, ok_send = 0, ok_recv = 0, len = 4096, extra;
	uint8_t got[64] = {};
	struct ibv_wc wc;
	int rc;

	if (!qa)
		return;
	w = cap.max_send_wr;
	if (!must(w < 32, "max_send_wr granted %u < 32", w))
		goto out;
	printf("# rnr_retry 7: %u sends (max_send_wr) to a QP with no receive posted\n", w);
	for (i = 0; i < w; i++) {
		fill_seq(abuf + i * len, len, 530 + i);
		rc = srd_post_send(qa, 530 + i, dest(qb_norecv), abuf + i * len, len,
				   amr->lkey, IBV_SEND_SIGNALED);
		if (!must(rc == 0, "ibv_post_send %u of %u: expected success, saw %s", i + 1,
			  w, srd_err_str(rc)))
			goto out;
	}
	/* Those taken all the same need receives too: count them in w. */
	for (extra = 0; extra <= cap.max_send_wr; extra++, w++) {
		fill_seq(abuf + w * len, len, 530 + w);
		rc = srd_post_send(qa, 530 + w, dest(qb_norecv), abuf + w * len, len,
				   amr->lkey, IBV_SEND_SIGNALED);
		if (rc)
			break;
	}
	expect(extra == 0 && rc == ENOMEM, "send %u with %u sends uncompleted "
	       "(max_send_wr): expected ENOMEM, saw %u more taken, then %s", w + 1 - extra,
	       w - extra, extra, srd_err_str(rc));
	srd_sleep_ms(1000);
	rc = srd_poll(A.scq, &wc, 0);
	expect(rc == 0, "after 1 s without a receive posted: expected no send completion, "
	       "saw %s", rc == 0 ? "none" : rc == 1 ? wc_str(&wc) : "ibv_poll_cq fail");
	if (rc)
		goto out;
	memset(bbuf, POISON, w * len);
	for (i = 0; i < w; i++) {
		rc = srd_post_recv(qb_norecv, i, bbuf + i * len, len, bmr->lkey);
		if (!must(rc == 0, "ibv_post_recv: %s", srd_err_str(rc)))
			goto out;
	}
	for (i = 0; i < w; i++) {
		if (!next_wc(A.scq, &wc, 2 * WC_TIMEOUT_MS, "a send once receives are posted"))
			break;
		ok_send += must(wc.status == IBV_WC_SUCCESS && wc.wr_id >= 530 &&
				wc.wr_id < 530 + w,
				"a send once receives are posted: expected SUCCESS, saw %s",
				wc_str(&wc));
	}
	for (i = 0; i < w; i++) {
		uint32_t s;

		if (!next_wc(B.rcq, &wc, WC_TIMEOUT_MS, "a receive posted late"))
			break;
		if (!must(wc.wr_id < w, "a receive posted late: expected wr_id below %u, "
			  "saw %s", w, wc_str(&wc)))
			continue;
		s = seq_of(bbuf + wc.wr_id * len) - 530;
		if (must(wc.status == IBV_WC_SUCCESS && wc.byte_len == len && s < w && !got[s] &&
			 seq_payload_ok(bbuf + wc.wr_id * len, len, s + 530),
			 "a receive posted late: expected SUCCESS, %u bytes, one of the "
			 "messages, intact, saw %s byte_len %u", len, wc_str(&wc),
			 wc.byte_len)) {
			got[s] = 1;
			ok_recv++;
		}
	}
	expect(ok_send == w && ok_recv == w,
	       "rnr_retry 7: once receives are posted, expected all %u sends to complete "
	       "successfully and arrive intact, saw %u and %u", w, ok_send, ok_recv);
	still_works(qa, qb_norecv, 600, true, 0, "waiting for receives (rnr_retry 7)");
out:
	destroy_qps(&qa, 1);
}

static void case_errors(void)
{
	struct ibv_qp *qp[3] = {};

	if (!must(ah_ab, "an AH from %s to %s", A.name, B.name))
		return;
	qp[0] = srd_qp(&A, 8, 1, 1, -1, NULL);
	qp[1] = srd_qp(&B, 1, 8, 1, -1, NULL);
	qp[2] = srd_qp(&B, 1, 64, 1, -1, NULL);	/* no receive posted but when asked */
	if (qp[0] && qp[1] && qp[2]) {
		error_bad_qpn(qp[0], qp[1]);
		error_bad_qkey(qp[0], qp[1]);
		error_short_recv(qp[0], qp[1], 100, 200, 520);
		error_short_recv(qp[0], qp[1], 5000, 10000, 522);
		error_rnr(qp[2], 0, 540);
		error_rnr(qp[2], 3, 550);
		error_rnr_forever(qp[2]);
	}
	destroy_qps(qp, 3);
	drain_all();
}

/* --- 6: the receiving QP destroyed mid-stream ------------------------------ */

#define VICTIM_RECVS	32
#define VICTIM_SENDS	64

static void case_destroy_peer(void)
{
	struct ibv_qp *qa = NULL, *qv = NULL, *q2 = NULL;
	uint32_t i, nrecv = 0, nsend = 0, ok = 0, lost = 0, bad = 0, verr14 = 0, verr17 = 0;
	uint8_t done[VICTIM_SENDS] = {};
	long long t0, last;
	struct ibv_wc wc;
	int rc;

	if (!must(ah_ab, "an AH from %s to %s", A.name, B.name))
		return;
	/* The default rnr_retry (7): sends beyond the receives wait, not fail. */
	qa = srd_qp(&A, VICTIM_SENDS, 1, 1, -1, NULL);
	qv = srd_qp(&B, 1, VICTIM_RECVS, 1, -1, NULL);
	q2 = srd_qp(&B, 1, 4, 1, -1, NULL);
	if (!qa || !qv || !q2)
		goto out;
	memset(bbuf, POISON, VICTIM_RECVS * MSG);
	for (i = 0; i < VICTIM_RECVS; i++) {
		rc = srd_post_recv(qv, i, bbuf + i * MSG, MSG, bmr->lkey);
		if (!must(rc == 0, "ibv_post_recv: %s", srd_err_str(rc)))
			goto out;
	}
	for (i = 0; i < VICTIM_SENDS; i++)
		fill_seq(abuf + i * MSG, MSG, i);
	for (i = 0; i < VICTIM_SENDS; i++) {
		rc = srd_post_send(qa, i, dest(qv), abuf + i * MSG, MSG, amr->lkey,
				   IBV_SEND_SIGNALED);
		if (!must(rc == 0, "ibv_post_send %u: %s", i, srd_err_str(rc)))
			goto out;
	}
	/* Mid-stream: once a few messages have arrived. */
	t0 = srd_now_ms();
	while (nrecv < 4 && srd_now_ms() - t0 < WC_TIMEOUT_MS)
		nrecv += ibv_poll_cq(B.rcq, 1, &wc) == 1;
	printf("# %u sends of %u bytes to a QP with %u receives; destroying it after %u "
	       "receives completed\n", VICTIM_SENDS, MSG, VICTIM_RECVS, nrecv);
	rc = ibv_destroy_qp(qv);
	qv = NULL;
	must(rc == 0, "ibv_destroy_qp of the receiving QP: %s", srd_err_str(rc));

	/* Every send completes: delivered, or an error that says it was not. */
	last = srd_now_ms();
	while (nsend < VICTIM_SENDS && srd_now_ms() - last < 3 * WC_TIMEOUT_MS) {
		if (ibv_poll_cq(A.scq, 1, &wc) != 1)
			continue;
		last = srd_now_ms();
		nsend++;
		if (wc.wr_id >= VICTIM_SENDS || done[wc.wr_id]++) {
			must(0, "a send completion of a message posted once, saw %s", wc_str(&wc));
			bad++;
		} else if (wc.status == IBV_WC_SUCCESS) {
			uint32_t s;

			/* Its data must be in one of the receive buffers, intact. */
			for (s = 0; s < VICTIM_RECVS; s++)
				if (seq_of(bbuf + s * MSG) == wc.wr_id &&
				    seq_payload_ok(bbuf + s * MSG, MSG, wc.wr_id))
					break;
			if (s < VICTIM_RECVS) {
				ok++;
			} else {
				lost++;
				must(0, "message %llu: send completed IBV_WC_SUCCESS, expected "
				     "its data in a receive buffer, saw it in none",
				     (unsigned long long)wc.wr_id);
			}
		} else if (wc.status == IBV_WC_REM_ABORT_ERR &&
			   wc.vendor_err == VERR_REMOTE_ABORT) {
			verr17++;
		} else if (wc.status == IBV_WC_REM_INV_RD_REQ_ERR &&
			   wc.vendor_err == VERR_REMOTE_BAD_QPN) {
			verr14++;
		} else if (bad++ < 4) {
			must(0, "a send to the destroyed QP: expected SUCCESS, %s/17 or %s/14, "
			     "saw %s", ibv_wc_status_str(IBV_WC_REM_ABORT_ERR),
			     ibv_wc_status_str(IBV_WC_REM_INV_RD_REQ_ERR), wc_str(&wc));
		}
	}
	printf("# send completions: %u delivered, %u remote abort (17), %u no such QP (14), "
	       "%u lost, %u other\n", ok, verr17, verr14, lost, bad);
	/* What the destroyed QP's receives left in B's CQ is not looked at. */
	for (i = 0; srd_poll(B.rcq, &wc, SRD_QUIET_MS) == 1; i++)
		if (wc.status != IBV_WC_SUCCESS && i < 2)
			printf("#   note: B's CQ holds a completion of the destroyed QP: %s\n",
			       wc_str(&wc));
	printf("# %u more receive completions of the destroyed QP\n", i);
	expect(nsend == VICTIM_SENDS, "every send completes: expected %u completions, saw "
	       "%u (none for %d ms)", VICTIM_SENDS, nsend, 3 * WC_TIMEOUT_MS);
	expect(lost == 0 && bad == 0,
	       "no send completes successfully without its data, no other status: saw %u "
	       "and %u", lost, bad);
	expect(verr14 + verr17 >= VICTIM_SENDS - VICTIM_RECVS,
	       "the sends beyond the %u receives fail with 17 or 14: expected at least %u, "
	       "saw %u", VICTIM_RECVS, VICTIM_SENDS - VICTIM_RECVS, verr14 + verr17);
	still_works(qa, q2, 700, true, 0, "its peer QP was destroyed (to another QP)");
out:
	destroy_qps(&qa, 1);
	destroy_qps(&qv, 1);
	destroy_qps(&q2, 1);
	drain_all();
}

/* --- 7: ibv_wr_* ----------------------------------------------------------- */

/*
 * A send's completion means its SQ slot is free: a program that keeps its
 * SQ full posts again the moment it sees one (perftest does), and that
 * post must never find the queue full.  The kernel once posted an SRD
 * send's completion before it freed the slot.
 */
static void case_sq_slot_before_completion(void)
{
	enum { DEPTH = 4, SENDS = 3000, LEN = 64, RECVS = 64 };
	struct ibv_qp_cap granted;
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc[DEPTH];
	int posted = 0, done = 0, recvd = 0, n, rc, i, full = 0, bad = 0;
	long long end;

	qa = srd_qp(&A, DEPTH, 1, 1, 7, &granted);
	qb = srd_qp(&B, 1, RECVS, 1, 7, NULL);
	if (!qa || !qb)
		goto out;
	/* The ring may be larger than asked: keep it full, whatever it is. */
	for (i = 0; i < RECVS; i++)
		if (srd_post_recv(qb, i, bbuf + (size_t)i * LEN, LEN, bmr->lkey))
			bad++;
	end = srd_now_ms() + 60000;
	while (done < SENDS && srd_now_ms() < end) {
		while (posted < SENDS && posted - done < (int)granted.max_send_wr) {
			rc = srd_post_send(qa, posted, dest(qb), abuf, LEN, amr->lkey,
					   IBV_SEND_SIGNALED);
			if (rc) {
				if (rc == ENOMEM)
					full++;
				else
					bad++;
				break;
			}
			posted++;
		}
		n = ibv_poll_cq(A.scq, DEPTH, wc);
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				bad++;
		done += n > 0 ? n : 0;
		/* Receives return to the RQ as they complete. */
		n = ibv_poll_cq(B.rcq, DEPTH, wc);
		for (i = 0; i < n; i++, recvd++)
			if (srd_post_recv(qb, wc[i].wr_id, bbuf + wc[i].wr_id * LEN,
					  LEN, bmr->lkey))
				bad++;
		if (full || bad)
			break;
	}
	expect_eq("sends completed, the SQ kept full", SENDS, done);
	expect_eq("posts refused with ENOMEM right after a completion", 0, full);
	expect_eq("other failures", 0, bad);
	printf("# %d sends through an SQ of %u, %d received\n", done,
	       granted.max_send_wr, recvd);
out:
	drain_all();
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
}

static void case_wr_api(void)
{
	struct ibv_qp_cap cap = {
		.max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 2, .max_recv_sge = 1,
		.max_inline_data = 32,
	};
	static const uint32_t lens[3] = { 100, 32, 150001 };
	const uint32_t slot = 256 * 1024;
	struct ibv_qp *qp[2] = {};
	struct ibv_qp_ex *qx;
	struct ibv_sge list[2];
	uint8_t inl[32], seen[3] = {};
	struct ibv_wc wc;
	uint32_t i, k;
	int rc;

	if (!must(ah_ab, "an AH from %s to %s", A.name, B.name))
		return;
	qp[0] = create_srd_qp(&A, cap, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
			      NULL);
	qp[1] = srd_qp(&B, 1, 8, 1, -1, NULL);
	if (!qp[0] || !qp[1])
		goto out;
	qx = ibv_qp_to_qp_ex(qp[0]);
	if (!must(qx, "ibv_qp_to_qp_ex of an SRD QP created with send_ops_flags"))
		goto out;
	rc = srd_qp_to_rts(qp[0], SRD_QKEY);
	if (!must(rc == 0, "the qp_ex to RTS: %s", srd_err_str(rc)))
		goto out;

	memset(bbuf, POISON, 4 * slot);
	for (i = 0; i < 4; i++) {
		rc = srd_post_recv(qp[1], i, bbuf + i * slot, slot, bmr->lkey);
		if (!must(rc == 0, "ibv_post_recv: %s", srd_err_str(rc)))
			goto out;
	}
	srd_fill(abuf, lens[0], 800);
	srd_fill(inl, lens[1], 801);
	srd_fill(abuf + 8192, lens[2], 802);
	/* The second SGE elsewhere, holding the rest of the message. */
	memcpy(abuf + 4 * slot, abuf + 8192 + 100000, lens[2] - 100000);
	list[0] = (struct ibv_sge){ (uintptr_t)(abuf + 8192), 100000, amr->lkey };
	list[1] = (struct ibv_sge){ (uintptr_t)(abuf + 4 * slot), lens[2] - 100000,
				    amr->lkey };

	ibv_wr_start(qx);
	qx->wr_id = 800;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, qp[1]->qp_num, SRD_QKEY);
	ibv_wr_set_sge(qx, amr->lkey, (uintptr_t)abuf, lens[0]);
	qx->wr_id = 801;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qx, htonl(0x0badcafe));
	ibv_wr_set_ud_addr(qx, ah_ab, qp[1]->qp_num, SRD_QKEY);
	ibv_wr_set_inline_data(qx, inl, lens[1]);
	qx->wr_id = 802;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, qp[1]->qp_num, SRD_QKEY);
	ibv_wr_set_sge_list(qx, 2, list);
	rc = ibv_wr_complete(qx);
	/* Inline data was copied when it was set. */
	memset(inl, 0xee, sizeof(inl));
	if (!expect(rc == 0, "ibv_wr_complete of wr_send + set_sge, wr_send_imm + "
		    "set_inline_data, wr_send + set_sge_list: expected success, saw %s",
		    srd_err_str(rc)))
		goto out;

	/* SRD completes messages in any order: match them by wr_id and length. */
	for (i = 0; i < 3; i++) {
		if (!next_wc(A.scq, &wc, WC_TIMEOUT_MS, "ibv_wr_* send"))
			break;
		must(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND &&
		     wc.wr_id >= 800 && wc.wr_id < 803,
		     "ibv_wr_* send: expected SUCCESS SEND of wr_id 800..802, saw %s",
		     wc_str(&wc));
	}
	for (i = 0; i < 3; i++) {
		struct rx_want w = { .src = qp[0], .dst = qp[1], .slid = -1 };
		const uint8_t *p;

		if (srd_poll(B.rcq, &wc, WC_TIMEOUT_MS) != 1) {
			must(0, "ibv_wr_* receive %u: expected a completion, saw none", i);
			break;
		}
		for (k = 0; k < 3 && lens[k] != wc.byte_len; k++)
			;
		if (!must(wc.status == IBV_WC_SUCCESS && k < 3 && !seen[k] && wc.wr_id < 3,
			  "ibv_wr_* receive: expected SUCCESS of 100, 32 or 150001 bytes, each "
			  "once, saw %s byte_len %u", wc_str(&wc), wc.byte_len))
			continue;
		seen[k] = 1;
		p = bbuf + wc.wr_id * slot;
		w.with_imm = k == 1;
		w.imm = 0x0badcafe;
		must(w.with_imm == !!(wc.wc_flags & IBV_WC_WITH_IMM) &&
		     (!w.with_imm || ntohl(wc.imm_data) == w.imm) &&
		     wc.src_qp == qp[0]->qp_num && !(wc.wc_flags & IBV_WC_GRH),
		     "ibv_wr_* receive of %u bytes: expected imm %s, src_qp %u, no GRH; saw "
		     "wc_flags 0x%x imm 0x%x src_qp %u", lens[k], w.with_imm ? "0x0badcafe" :
		     "none", qp[0]->qp_num, wc.wc_flags, ntohl(wc.imm_data), wc.src_qp);
		payload_ok(p, lens[k], 64, 800 + k, k == 0 ? "wr_send + set_sge" :
			   k == 1 ? "wr_send_imm + set_inline_data" :
				    "wr_send + set_sge_list");
	}
	expect(seen[0] && seen[1] && seen[2],
	       "wr_send + set_sge, wr_send_imm + set_inline_data and wr_send + "
	       "set_sge_list (2 SGEs, 150001 bytes) all arrive");

	/* An aborted batch sends nothing, and leaves nothing behind in the SQ. */
	ibv_wr_start(qx);
	qx->wr_id = 810;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, qp[1]->qp_num, SRD_QKEY);
	ibv_wr_set_sge(qx, amr->lkey, (uintptr_t)abuf, 16);
	ibv_wr_abort(qx);
	expect_quiet(B.rcq, "ibv_wr_abort: nothing arrives");
	expect_quiet(A.scq, "ibv_wr_abort: nothing completes");
	srd_fill(abuf, 64, 811);
	rc = srd_post_send(qp[0], 811, dest(qp[1]), abuf, 64, amr->lkey, IBV_SEND_SIGNALED);
	must(rc == 0, "ibv_post_send after the abort: %s", srd_err_str(rc));
	if (!rc && expect_send_wc(A.scq, 811, IBV_WC_SUCCESS, 0, WC_TIMEOUT_MS, false,
				  "the send after ibv_wr_abort") &&
	    next_wc(B.rcq, &wc, WC_TIMEOUT_MS, "the receive after ibv_wr_abort")) {
		expect(wc.status == IBV_WC_SUCCESS && wc.wr_id == 3 && wc.byte_len == 64 &&
		       srd_check_fill(bbuf + 3 * slot, 64, 811) < 0,
		       "after ibv_wr_abort, the next message takes the last receive: expected "
		       "SUCCESS wr_id 3 byte_len 64 intact, saw %s byte_len %u",
		       wc_str(&wc), wc.byte_len);
		expect_quiet(B.rcq, "after ibv_wr_abort: only that message arrives");
	}
out:
	destroy_qps(qp, 2);
	drain_all();
}

/* --- an MR held by the peer -------------------------------------------------- */

/* hw_counters/NAME of DEV (device-wide), or -1. */
static long long dev_counter(const char *dev, const char *name)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/hw_counters/%s", dev, name);
	return srd_read_sysfs(path, buf, sizeof(buf)) ? atoll(buf) : -1;
}

/*
 * On @a: an SRD QP (the default rnr_retry 7, retrying forever), then an MR
 * of @len bytes at @buf, then two sends from it (64 B and all of it) to
 * @qb, which has no receive posted.  The MR, or NULL; *qa the QP.
 */
static struct ibv_mr *sends_held_by_rnr(struct srd_ep *a, struct ibv_qp *qb,
					uint8_t *buf, uint32_t len, bool mr_first,
					struct ibv_qp **qa)
{
	struct ibv_mr *mr = NULL;
	int rc;

	if (mr_first)
		mr = ibv_reg_mr(a->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	*qa = srd_qp(a, 4, 1, 1, -1, NULL);
	if (!*qa)
		return NULL;
	if (!mr_first)
		mr = ibv_reg_mr(a->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!must(mr, "ibv_reg_mr of %u bytes: %s", len, strerror(errno)))
		return NULL;
	fill_seq(buf, len, 900);
	rc = srd_post_send(*qa, 900, srd_dest(ah_ab, qb), buf, 64, mr->lkey,
			   IBV_SEND_SIGNALED);
	if (!rc)
		rc = srd_post_send(*qa, 901, srd_dest(ah_ab, qb), buf, len, mr->lkey,
				   IBV_SEND_SIGNALED);
	if (!must(rc == 0, "ibv_post_send from the new MR: %s", srd_err_str(rc)))
		return mr;
	return mr;
}

struct dereg_call {
	struct ibv_mr *mr;
	int rc;
	int done;
};

static void *dereg_thread(void *p)
{
	struct dereg_call *d = p;

	d->rc = ibv_dereg_mr(d->mr);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The peer decides how long a send waits on RNR; ibv_dereg_mr of the MR
 * it holds must not wait for it (before, it slept uninterruptibly until
 * the peer posted a receive).  The pages stay pinned, and the MR counted,
 * until the messages let go: here, when the QP is destroyed.
 */
static void case_dereg_held(void)
{
	const uint32_t len = 65536;
	struct dereg_call d = {};
	struct ibv_qp *qb, *qa = NULL;
	long long c0, c1, mrs0, mrs, t0, ms, end;
	uint8_t *buf = aligned_alloc(4096, len);
	pthread_t th;
	struct ibv_wc wc;
	int rc;

	qb = srd_qp(&B, 4, 4, 1, -1, NULL);
	if (!must(buf && qb, "a buffer and B's QP"))
		goto out;
	mrs0 = dev_counter(A.name, "mrs");
	c0 = port_counter(A.name, "srd_rnr_naks_received");
	d.mr = sends_held_by_rnr(&A, qb, buf, len, false, &qa);
	if (!d.mr)
		goto out;
	c1 = wait_counter(A.name, "srd_rnr_naks_received", c0 + 2, WC_TIMEOUT_MS);
	if (!expect(c0 >= 0 && c1 >= c0 + 2, "sends to a QP without receives: expected "
		    "srd_rnr_naks_received of %s to grow by 2 or more, saw %lld -> %lld",
		    A.name, c0, c1))
		goto out;
	expect_eq("hw_counters/mrs of A with the new MR", mrs0 + 1, dev_counter(A.name, "mrs"));

	t0 = srd_now_ms();
	rc = pthread_create(&th, NULL, dereg_thread, &d);
	if (!must(rc == 0, "pthread_create: %s", strerror(rc)))
		goto out;
	end = t0 + 10000;
	while (!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE) && srd_now_ms() < end)
		srd_sleep_ms(10);
	ms = srd_now_ms() - t0;
	if (!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE)) {
		expect(false, "ibv_dereg_mr of an MR that sends waiting on RNR hold: still "
		       "blocked after %lld ms (it must not wait for the peer)", ms);
		printf("not ok 10 dereg blocked: the process cannot end; abandoned\n");
		fflush(stdout);
		_exit(KSFT_FAIL);
	}
	pthread_join(th, NULL);
	printf("#   ibv_dereg_mr returned after %lld ms\n", ms);
	expect(d.rc == 0 && ms < 5000, "ibv_dereg_mr of an MR held by sends waiting on RNR: "
	       "expected 0 at once (< 5000 ms), saw %s after %lld ms", srd_err_str(d.rc), ms);
	expect_eq("hw_counters/mrs of A after dereg, its pages still held by the sends",
		  mrs0 + 1, dev_counter(A.name, "mrs"));
	rc = srd_poll(A.scq, &wc, 0);
	expect(rc == 0, "after dereg, before any receive: expected no send completion, saw %s",
	       rc == 1 ? wc_str(&wc) : rc == 0 ? "none" : "ibv_poll_cq fail");

	/* Destroying the QP lets go of the messages, and of the MR with them. */
	destroy_qps(&qa, 1);
	end = srd_now_ms() + 5000;
	while ((mrs = dev_counter(A.name, "mrs")) != mrs0 && srd_now_ms() < end)
		srd_sleep_ms(20);
	expect_eq("hw_counters/mrs of A once the QP is destroyed (the pages unpinned)",
		  mrs0, mrs);
out:
	destroy_qps(&qa, 1);
	destroy_qps(&qb, 1);
	drain_all();
	free(buf);
}

/* --hold: the sends of sends_held_by_rnr(), then wait to be killed. */
static int hold(bool mr_first)
{
	static uint8_t buf[65536] __attribute__((aligned(4096)));
	struct ibv_qp *qa, *qb = srd_qp(&B, 4, 4, 1, -1, NULL);
	long long c0 = port_counter(A.name, "srd_rnr_naks_received");

	if (!qb || !sends_held_by_rnr(&A, qb, buf, sizeof(buf), mr_first, &qa))
		return KSFT_FAIL;
	if (wait_counter(A.name, "srd_rnr_naks_received", c0 + 2, WC_TIMEOUT_MS) < c0 + 2) {
		printf("# the sends got no RNR NAK\n");
		return KSFT_FAIL;
	}
	printf("holding: %s, 2 sends waiting on RNR\n",
	       mr_first ? "an MR, then a QP" : "a QP, then an MR");
	for (;;)
		pause();
}

/* --- main ----------------------------------------------------------------- */

static const struct srd_case cases[] = {
	{ "create: IBV_QPT_DRIVER, UD's state machine, RNR_RETRY, query", case_create, NULL },
	{ "SEND and SEND_WITH_IMM of 0 bytes to max_msg_sz, max_msg_sz + 1 refused",
	  case_sizes, NULL },
	{ "256 x 64 KiB in flight over 4 QP pairs, each delivered once", case_many, NULL },
	{ "3 send SGEs into 3 receive SGEs, beyond the MTU", case_sge, NULL },
	{ "errors: unknown QPN, qkey, short receive, RNR; the QP carries on", case_errors, NULL },
	{ "receiving QP destroyed mid-stream", case_destroy_peer, NULL },
	{ "ibv_wr_* API and ibv_wr_abort", case_wr_api, NULL },
	{ "a send's completion means its SQ slot is free", case_sq_slot_before_completion, NULL },
	{ "limits profile", NULL, "srd_limits.sh covers the limits profiles" },
	{ "ibv_dereg_mr of an MR held by sends waiting on RNR returns at once",
	  case_dereg_held, NULL },
};
/* After a failed case: both sides' counters. */
static void case_failed(void)
{
	dump_counters(A.name);
	dump_counters(B.name);
}

static struct srd_runner runner = {
	.cases = cases, .n = SRD_NCASES(cases), .nargs = 4,
	.usage = "[-c CASE[,CASE...]] DEV_A IP_A DEV_B IP_B",
	.failed = case_failed,
};

int main(int argc, char **argv)
{
	int i, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 7 && !strcmp(argv[1], "--hold")) {
		/* srd_ep_open's buffers only: an unprivileged RLIMIT_MEMLOCK. */
		srd_ep_open(&A, argv[3], argv[4]);
		srd_ep_open(&B, argv[5], argv[6]);
		ah_ab = srd_ah_to_gid(&A, &B.gid);
		return ah_ab ? hold(!strcmp(argv[2], "mr-first")) : KSFT_FAIL;
	}
	i = srd_cases_args(&runner, argc, argv);
	if (i < 0)
		return KSFT_FAIL;
	argv += i;
	/* No UD QP, and the deeper CQs SRD streams need. */
	srd_ep_open_big(&A, argv[0], argv[1], CQ_DEPTH, BIG_SIZE, IBV_ACCESS_LOCAL_WRITE,
			&abuf, &amr);
	srd_ep_open_big(&B, argv[2], argv[3], CQ_DEPTH, BIG_SIZE, IBV_ACCESS_LOCAL_WRITE,
			&bbuf, &bmr);
	ah_ab = srd_ah_said(&A, argv[1], &B, argv[3]);

	rc = srd_cases_run(&runner);
	if (ah_ab)
		ibv_destroy_ah(ah_ab);
	srd_ep_close_big(&A, abuf, amr);
	srd_ep_close_big(&B, bbuf, bmr);
	return rc;
}
