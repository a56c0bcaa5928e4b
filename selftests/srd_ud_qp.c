// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD QPs between two srd devices: the state machine (RESET -> INIT -> RTR
 * -> RTS, to ERR and back to RESET, reuse), query, invalid transitions,
 * SEND and SEND_WITH_IMM, inline data and SGE lists up to the advertised
 * limits, the GRH area and what a receive completion carries (src_qp,
 * IBV_WC_GRH, imm, slid), the qkey check, the MTU limit, flushing in ERR,
 * and the ibv_wr_* API of ibv_create_qp_ex.
 *
 *   srd_ud_qp DEV_A IP_A DEV_B IP_B
 *
 * A sends to B.  IP_x picks the GID (IPv4-mapped or IPv6) each side uses.
 */
#include "srd_test.h"

static struct srd_ep A, B;
static struct ibv_ah *ah_ab;		/* A's AH to B */

/* B posts one receive of GRH + len at off in its buffer. */
static void recv_at(struct ibv_qp *qp, uint64_t wr_id, uint32_t off, uint32_t len)
{
	int rc = srd_post_recv(qp, wr_id, B.buf + off, SRD_GRH + len, B.mr->lkey);

	if (rc)
		ksft_check(0, "ibv_post_recv: %s", strerror(rc));
}

/*
 * Receive one message on B's rcq and check it: status, opcode, byte_len,
 * GRH flag, src_qp, imm, payload of seq at GRH offset.
 */
static void expect_recv(const char *what, uint64_t wr_id, uint32_t off,
			uint32_t len, uint32_t seq, bool with_imm, uint32_t imm,
			int slid)
{
	struct ibv_wc wc;
	long bad;

	if (!srd_expect_wc(B.rcq, &wc, what))
		return;
	ksft_check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		   wc.wr_id == wr_id,
		   "%s: expected SUCCESS RECV wr_id %llu, saw %s %s wr_id %llu "
		   "(vendor_err %u)", what, (unsigned long long)wr_id,
		   ibv_wc_status_str(wc.status), srd_opcode_str(wc.opcode),
		   (unsigned long long)wc.wr_id, wc.vendor_err);
	if (wc.status != IBV_WC_SUCCESS)
		return;
	ksft_check(wc.byte_len == len + SRD_GRH,
		   "%s: byte_len: expected %u (payload %u + GRH 40), saw %u",
		   what, len + SRD_GRH, len, wc.byte_len);
	ksft_check(wc.wc_flags & IBV_WC_GRH, "%s: IBV_WC_GRH set (wc_flags 0x%x)",
		   what, wc.wc_flags);
	ksft_check_eq("src_qp is the sender's QP number", A.qp->qp_num, wc.src_qp);
	ksft_check_eq("qp_num is the receiving QP", B.qp->qp_num, wc.qp_num);
	if (with_imm) {
		ksft_check((wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == imm,
			   "%s: expected IBV_WC_WITH_IMM imm 0x%x, saw flags 0x%x imm 0x%x",
			   what, imm, wc.wc_flags, ntohl(wc.imm_data));
	} else {
		ksft_check(!(wc.wc_flags & IBV_WC_WITH_IMM),
			   "%s: no IBV_WC_WITH_IMM (wc_flags 0x%x)", what, wc.wc_flags);
	}
	if (slid >= 0)
		ksft_check(wc.slid == slid, "%s: slid: expected 0x%x, saw 0x%x",
			   what, slid, wc.slid);
	bad = srd_check_fill(B.buf + off + SRD_GRH, len, seq);
	ksft_check(bad < 0, "%s: payload at offset 40 intact (first bad byte %ld)",
		   what, bad);
}

static void test_state_machine(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = A.scq, .recv_cq = A.rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr qa = {};
	long long qps0 = srd_counter(A.name, "qps");
	struct ibv_qp *qp;
	int rc;

	qp = ibv_create_qp(A.pd, &ia);
	ksft_check(qp != NULL, "ibv_create_qp UD (errno %d)", qp ? 0 : errno);
	if (!qp)
		return;
	ksft_check_eq("hw_counters/qps after create", qps0 + 1, srd_counter(A.name, "qps"));
	ksft_check(qp->qp_num != 0 && qp->qp_num != 1 && qp->qp_num <= 0xffffff,
		   "UD QP number 0x%x is a 24-bit number other than QP0/QP1", qp->qp_num);
	ksft_check_eq("new QP is in RESET", IBV_QPS_RESET, srd_qp_state(qp));

	rc = srd_qp_to_init(qp, 0x2468);
	ksft_check_eq("RESET -> INIT", 0, rc);
	rc = ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_CAP |
			  IBV_QP_PORT, &qi);
	ksft_check_eq("ibv_query_qp", 0, rc);
	ksft_check_eq("queried state INIT", IBV_QPS_INIT, qa.qp_state);
	ksft_check_eq("queried qkey", 0x2468, qa.qkey);
	ksft_check(qa.cap.max_send_wr >= 16 && qa.cap.max_recv_wr >= 32 &&
		   qa.cap.max_send_sge >= 1 && qa.cap.max_recv_sge >= 1,
		   "queried caps hold what was asked (send_wr %u recv_wr %u "
		   "send_sge %u recv_sge %u)", qa.cap.max_send_wr,
		   qa.cap.max_recv_wr, qa.cap.max_send_sge, qa.cap.max_recv_sge);
	ksft_check_eq("init attr qp_type", IBV_QPT_UD, qi.qp_type);

	qa.qp_state = IBV_QPS_RTR;
	ksft_check_eq("INIT -> RTR", 0, srd_err(ibv_modify_qp(qp, &qa, IBV_QP_STATE)));
	ksft_check_eq("queried state RTR", IBV_QPS_RTR, srd_qp_state(qp));
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = 0;
	ksft_check_eq("RTR -> RTS", 0,
		      srd_err(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN)));
	ksft_check_eq("queried state RTS", IBV_QPS_RTS, srd_qp_state(qp));

	/* Modifying qkey in RTS is allowed for UD. */
	qa.qkey = 0x1357;
	ksft_check_eq("RTS -> RTS changing qkey", 0,
		      srd_err(ibv_modify_qp(qp, &qa, IBV_QP_QKEY)));
	ibv_query_qp(qp, &qa, IBV_QP_QKEY, &qi);
	ksft_check_eq("queried qkey after the change", 0x1357, qa.qkey);

	qa.qp_state = IBV_QPS_ERR;
	ksft_check_eq("RTS -> ERR", 0, srd_err(ibv_modify_qp(qp, &qa, IBV_QP_STATE)));
	ksft_check_eq("queried state ERR", IBV_QPS_ERR, srd_qp_state(qp));
	qa.qp_state = IBV_QPS_RESET;
	ksft_check_eq("ERR -> RESET", 0, srd_err(ibv_modify_qp(qp, &qa, IBV_QP_STATE)));
	ksft_check_eq("queried state RESET", IBV_QPS_RESET, srd_qp_state(qp));
	ksft_check_eq("RESET -> INIT -> RTR -> RTS again", 0, srd_qp_to_rts(qp, SRD_QKEY));
	ksft_check_eq("queried state RTS after reuse", IBV_QPS_RTS, srd_qp_state(qp));

	ksft_check_eq("ibv_destroy_qp", 0, ibv_destroy_qp(qp));
	ksft_check_eq("hw_counters/qps after destroy", qps0, srd_counter(A.name, "qps"));
}

/* A reused QP (ERR -> RESET -> ... -> RTS) carries traffic. */
static void test_reuse_traffic(void)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

	ksft_check_eq("A's QP RTS -> ERR", 0, srd_err(ibv_modify_qp(A.qp, &qa, IBV_QP_STATE)));
	srd_drain(A.scq);
	qa.qp_state = IBV_QPS_RESET;
	ksft_check_eq("A's QP ERR -> RESET", 0, srd_err(ibv_modify_qp(A.qp, &qa, IBV_QP_STATE)));
	ksft_check_eq("A's QP back to RTS", 0, srd_qp_to_rts(A.qp, SRD_QKEY));
	recv_at(B.qp, 900, 0, 64);
	srd_fill(A.buf, 64, 900);
	ksft_check_eq("post_send on the reused QP", 0,
		      srd_post_send(A.qp, 900, srd_dest(ah_ab, B.qp), A.buf, 64,
				    A.mr->lkey, IBV_SEND_SIGNALED));
	srd_expect_send_ok(A.scq, 900, "send on the reused QP");
	expect_recv("receive from the reused QP", 900, 0, 64, 900, false, 0, -1);
}

static void expect_modify_einval(struct ibv_qp *qp, const char *what,
				 struct ibv_qp_attr *qa, int mask, int state_before)
{
	int rc = srd_err(ibv_modify_qp(qp, qa, mask));

	ksft_check(rc == EINVAL, "%s: expected EINVAL, saw %d (%s)", what, rc,
		   rc ? strerror(rc) : "success");
	ksft_check(srd_qp_state(qp) == state_before,
		   "%s: state unchanged (expected %d, saw %d)", what,
		   state_before, srd_qp_state(qp));
}

static void test_invalid_transitions(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = A.scq, .recv_cq = A.rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa = {};
	struct ibv_qp *qp = ibv_create_qp(A.pd, &ia);
	const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;

	if (!qp) {
		ksft_check(0, "ibv_create_qp for the invalid transitions (errno %d)", errno);
		return;
	}
	qa.qp_state = IBV_QPS_RTR;
	expect_modify_einval(qp, "RESET -> RTR", &qa, IBV_QP_STATE, IBV_QPS_RESET);
	qa.qp_state = IBV_QPS_RTS;
	qa.sq_psn = 0;
	expect_modify_einval(qp, "RESET -> RTS", &qa, IBV_QP_STATE | IBV_QP_SQ_PSN,
			     IBV_QPS_RESET);

	qa = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 1 };
	expect_modify_einval(qp, "RESET -> INIT without IBV_QP_QKEY", &qa,
			     init_mask & ~IBV_QP_QKEY, IBV_QPS_RESET);
	expect_modify_einval(qp, "RESET -> INIT without IBV_QP_PORT", &qa,
			     init_mask & ~IBV_QP_PORT, IBV_QPS_RESET);
	qa.port_num = 2;
	expect_modify_einval(qp, "RESET -> INIT with port 2", &qa, init_mask,
			     IBV_QPS_RESET);
	qa.port_num = 1;
	ksft_check_eq("RESET -> INIT", 0, srd_err(ibv_modify_qp(qp, &qa, init_mask)));

	qa.qp_state = IBV_QPS_RTS;
	expect_modify_einval(qp, "INIT -> RTS (skipping RTR)", &qa,
			     IBV_QP_STATE | IBV_QP_SQ_PSN, IBV_QPS_INIT);
	qa.qp_state = IBV_QPS_RTR;
	ksft_check_eq("INIT -> RTR", 0, srd_err(ibv_modify_qp(qp, &qa, IBV_QP_STATE)));
	qa.qp_state = IBV_QPS_RTS;
	expect_modify_einval(qp, "RTR -> RTS without IBV_QP_SQ_PSN", &qa,
			     IBV_QP_STATE, IBV_QPS_RTR);
	qa.qp_state = IBV_QPS_INIT;
	expect_modify_einval(qp, "RTR -> INIT", &qa, IBV_QP_STATE, IBV_QPS_RTR);
	ksft_check_eq("ibv_destroy_qp", 0, ibv_destroy_qp(qp));
}

static void test_send_and_imm(void)
{
	uint32_t len = 100;

	recv_at(B.qp, 1, 0, 256);
	recv_at(B.qp, 2, 4096, 256);
	srd_fill(A.buf, len, 1);
	srd_fill(A.buf + 4096, 200, 2);
	ksft_check_eq("post SEND", 0,
		      srd_post_send(A.qp, 11, srd_dest(ah_ab, B.qp), A.buf, len,
				    A.mr->lkey, IBV_SEND_SIGNALED));
	srd_expect_send_ok(A.scq, 11, "SEND");
	expect_recv("SEND", 1, 0, len, 1, false, 0, SRD_NO_AH_SLID);

	{
		struct ibv_sge sg = { (uintptr_t)(A.buf + 4096), 200, A.mr->lkey };

		ksft_check_eq("post SEND_WITH_IMM", 0,
			      srd_post_send_sge(A.qp, 12, srd_dest(ah_ab, B.qp), &sg, 1,
						IBV_WR_SEND_WITH_IMM, 0xdeadbeef,
						IBV_SEND_SIGNALED));
	}
	srd_expect_send_ok(A.scq, 12, "SEND_WITH_IMM");
	expect_recv("SEND_WITH_IMM", 2, 4096, 200, 2, true, 0xdeadbeef, SRD_NO_AH_SLID);

	/* A zero-length send: just the GRH. */
	recv_at(B.qp, 3, 0, 0);
	ksft_check_eq("post a zero-length SEND", 0,
		      srd_post_send_sge(A.qp, 13, srd_dest(ah_ab, B.qp), NULL, 0,
					IBV_WR_SEND, 0, IBV_SEND_SIGNALED));
	srd_expect_send_ok(A.scq, 13, "zero-length SEND");
	expect_recv("zero-length SEND", 3, 0, 0, 0, false, 0, SRD_NO_AH_SLID);
}

/* slid: B's AH number for A while B has one, 0xffff when it has none. */
static void test_slid(void)
{
	struct ibv_ah *ah_ba = srd_ah(&B, &A);
	int ahn = srd_ahn(ah_ba);

	recv_at(B.qp, 21, 0, 64);
	srd_fill(A.buf, 64, 21);
	srd_post_send(A.qp, 21, srd_dest(ah_ab, B.qp), A.buf, 64, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 21, "send for slid");
	if (ahn >= 0)
		expect_recv("slid with an AH to the sender", 21, 0, 64, 21, false, 0, ahn);
	else
		srd_drain(B.rcq);
	ksft_check_eq("ibv_destroy_ah", 0, ibv_destroy_ah(ah_ba));

	recv_at(B.qp, 22, 0, 64);
	srd_fill(A.buf, 64, 22);
	srd_post_send(A.qp, 22, srd_dest(ah_ab, B.qp), A.buf, 64, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 22, "send for slid after destroy_ah");
	expect_recv("slid after the AH to the sender is destroyed", 22, 0, 64, 22,
		    false, 0, SRD_NO_AH_SLID);
}

/*
 * Inline data up to the QP's limit.  The device does not advertise a limit
 * before a QP exists: ask for 4096 bytes and halve until create_qp grants
 * the request; cap.max_inline_data then says what the QP takes.
 */
static void test_inline(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = A.scq, .recv_cq = A.rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = NULL, *save = A.qp;
	uint32_t ask, max;
	uint8_t *data;
	int rc;

	for (ask = 4096; ask >= 16 && !qp; ask /= 2) {
		ia.cap.max_inline_data = ask;
		qp = ibv_create_qp(A.pd, &ia);
	}
	ksft_check(qp != NULL, "a UD QP with inline data (asked down to 16 bytes)");
	if (!qp)
		return;
	max = ia.cap.max_inline_data;
	printf("# a UD QP asked for %u inline bytes was granted %u\n", ask * 2, max);
	ksft_check(max >= ask * 2, "granted max_inline_data %u >= the %u asked", max, ask * 2);
	if (srd_qp_to_rts(qp, SRD_QKEY)) {
		ksft_check(0, "inline QP to RTS");
		ibv_destroy_qp(qp);
		return;
	}
	A.qp = qp;
	if (max > A.mtu)
		max = A.mtu;
	data = malloc(max + 1);		/* not registered: inline needs no lkey */
	srd_fill(data, max, 31);
	recv_at(B.qp, 31, 0, max);
	{
		struct ibv_sge sg = { (uintptr_t)data, max, 0 };

		rc = srd_post_send_sge(A.qp, 31, srd_dest(ah_ab, B.qp), &sg, 1,
				       IBV_WR_SEND, 0,
				       IBV_SEND_SIGNALED | IBV_SEND_INLINE);
		ksft_check_eq("post an inline SEND of max_inline_data bytes", 0, rc);
		/* The data is copied at post time: scribbling now changes nothing. */
		memset(data, 0xee, max);
	}
	srd_expect_send_ok(A.scq, 31, "inline SEND");
	expect_recv("inline SEND of max_inline_data bytes", 31, 0, max, 31, false, 0, -1);

	if (ia.cap.max_inline_data < A.mtu) {
		struct ibv_sge sg = { (uintptr_t)data, ia.cap.max_inline_data + 1, 0 };

		rc = srd_post_send_sge(A.qp, 32, srd_dest(ah_ab, B.qp), &sg, 1,
				       IBV_WR_SEND, 0,
				       IBV_SEND_SIGNALED | IBV_SEND_INLINE);
		ksft_check(rc == EINVAL || rc == ENOMEM,
			   "inline SEND of max_inline_data + 1 bytes refused: "
			   "expected EINVAL or ENOMEM, saw %d (%s)", rc,
			   rc ? strerror(rc) : "success");
	}
	free(data);
	A.qp = save;
	ksft_check_eq("destroy the inline QP", 0, ibv_destroy_qp(qp));
}

/* SGE lists of the device's max_sge on both sides. */
static void test_sge_lists(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 8 };
	struct ibv_qp *qa_save = A.qp, *qb_save = B.qp;
	struct ibv_sge *ss, *rs;
	uint32_t nsge, chunk, total, i, rtotal;
	uint8_t *msg;
	struct ibv_wc wc;
	int rc;

	nsge = A.dev.max_sge < B.dev.max_sge ? A.dev.max_sge : B.dev.max_sge;
	printf("# device max_sge: %d (A) %d (B)\n", A.dev.max_sge, B.dev.max_sge);
	cap.max_send_sge = cap.max_recv_sge = nsge;
	A.qp = srd_ud_qp(&A, &cap);
	ksft_check(A.cap.max_send_sge >= nsge, "A's QP got max_send_sge %u >= %u",
		   A.cap.max_send_sge, nsge);
	B.qp = srd_ud_qp(&B, &cap);
	ksft_check(B.cap.max_recv_sge >= nsge, "B's QP got max_recv_sge %u >= %u",
		   B.cap.max_recv_sge, nsge);

	chunk = A.mtu / nsge;
	if (chunk > 64)
		chunk = 64;
	total = chunk * nsge;
	msg = malloc(total);
	srd_fill(msg, total, 41);
	ss = calloc(nsge + 1, sizeof(*ss));
	rs = calloc(nsge + 1, sizeof(*rs));
	/* Send SGEs: chunks scattered over A's buffer, in reverse order of address. */
	for (i = 0; i < nsge; i++) {
		uint8_t *p = A.buf + 65536 + (nsge - 1 - i) * 512;

		memcpy(p, msg + i * chunk, chunk);
		ss[i] = (struct ibv_sge){ (uintptr_t)p, chunk, A.mr->lkey };
	}
	/*
	 * Receive SGEs: the GRH alone in the first, then the payload spread
	 * over the other nsge - 1 (the last one takes the rest).
	 */
	rs[0] = (struct ibv_sge){ (uintptr_t)B.buf, SRD_GRH, B.mr->lkey };
	rtotal = 0;
	for (i = 1; i < nsge; i++) {
		uint32_t len = i < nsge - 1 ? total / (nsge - 1) : total - rtotal;

		if (nsge == 1)
			break;
		rs[i] = (struct ibv_sge){ (uintptr_t)(B.buf + 65536 + i * 4096), len,
					  B.mr->lkey };
		rtotal += len;
	}
	if (nsge == 1)		/* one SGE: GRH and payload together */
		rs[0].length = SRD_GRH + total;
	ksft_check_eq("post_recv with max_sge SGEs", 0,
		      srd_post_recv_sge(B.qp, 41, rs, nsge));
	rc = srd_post_send_sge(A.qp, 41, srd_dest(ah_ab, B.qp), ss, nsge,
			       IBV_WR_SEND, 0, IBV_SEND_SIGNALED);
	ksft_check(rc == 0, "post_send with max_sge (%u) SGEs of %u bytes: rc %d",
		   nsge, chunk, rc);
	srd_expect_send_ok(A.scq, 41, "send of max_sge SGEs");
	if (srd_expect_wc(B.rcq, &wc, "receive into max_sge SGEs")) {
		uint8_t *got = malloc(total);
		uint32_t off = 0;

		ksft_check(wc.status == IBV_WC_SUCCESS && wc.byte_len == total + SRD_GRH,
			   "receive into max_sge SGEs: expected SUCCESS byte_len %u, "
			   "saw %s byte_len %u", total + SRD_GRH,
			   ibv_wc_status_str(wc.status), wc.byte_len);
		if (nsge == 1) {
			memcpy(got, B.buf + SRD_GRH, total);
		} else {
			for (i = 1; i < nsge; i++) {
				memcpy(got + off, (void *)(uintptr_t)rs[i].addr, rs[i].length);
				off += rs[i].length;
			}
		}
		ksft_check(srd_check_fill(got, total, 41) < 0,
			   "message gathered from %u SGEs and scattered to %u arrives "
			   "intact", nsge, nsge);
		free(got);
	}

	/* One SGE more than the QP has is refused. */
	if (A.cap.max_send_sge == nsge) {
		ss[nsge] = ss[0];
		rc = srd_post_send_sge(A.qp, 42, srd_dest(ah_ab, B.qp), ss, nsge + 1,
				       IBV_WR_SEND, 0, IBV_SEND_SIGNALED);
		ksft_check(rc == EINVAL || rc == ENOMEM,
			   "post_send with max_send_sge + 1 SGEs: expected EINVAL or "
			   "ENOMEM, saw %d", rc);
	}
	free(ss);
	free(rs);
	free(msg);
	ibv_destroy_qp(A.qp);
	ibv_destroy_qp(B.qp);
	A.qp = qa_save;
	B.qp = qb_save;
}

static void test_mtu(void)
{
	uint32_t mtu = A.mtu;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sg = { (uintptr_t)A.buf, mtu + 1, A.mr->lkey };
	int rc;

	printf("# active MTU %u bytes\n", mtu);
	recv_at(B.qp, 51, 0, mtu);
	srd_fill(A.buf, mtu, 51);
	ksft_check_eq("post a SEND of exactly the MTU", 0,
		      srd_post_send(A.qp, 51, srd_dest(ah_ab, B.qp), A.buf, mtu,
				    A.mr->lkey, IBV_SEND_SIGNALED));
	srd_expect_send_ok(A.scq, 51, "SEND of the MTU");
	expect_recv("SEND of the MTU", 51, 0, mtu, 51, false, 0, -1);

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 52;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.ud.ah = ah_ab;
	wr.wr.ud.remote_qpn = B.qp->qp_num;
	wr.wr.ud.remote_qkey = SRD_QKEY;
	rc = srd_err(ibv_post_send(A.qp, &wr, &bad));
	ksft_check(rc == EINVAL, "SEND of MTU + 1 bytes: expected EINVAL, saw %d (%s)",
		   rc, rc ? strerror(rc) : "success");
	ksft_check(bad == &wr, "SEND of MTU + 1 bytes: bad_wr points at the WR");
	{
		struct ibv_wc wc;

		ksft_check(srd_poll(A.scq, &wc, SRD_QUIET_MS) == 0,
			   "a refused WR leaves no completion");
	}
}

/*
 * The message limit follows the netdev's MTU under a live QP: the wrapper
 * passes commands that shrink A's netdev MTU (to an active MTU of 512)
 * and restore it.
 */
static void test_mtu_follows_netdev(void)
{
	const char *shrink = getenv("SRD_SHRINK_MTU");
	const char *restore = getenv("SRD_RESTORE_MTU");
	uint32_t big = A.mtu, small = 512;
	int rc;

	if (!shrink || !restore) {
		printf("# MTU change not tested in this run: SRD_SHRINK_MTU and SRD_RESTORE_MTU are not set\n");
		return;
	}
	ksft_check_eq("shrink A's netdev MTU", 0, system(shrink));
	rc = srd_post_send(A.qp, 61, srd_dest(ah_ab, B.qp), A.buf, big,
			   A.mr->lkey, IBV_SEND_SIGNALED);
	ksft_check(rc == EINVAL, "SEND of %u bytes after the MTU shrank: expected EINVAL, saw %d (%s)",
		   big, rc, rc ? strerror(rc) : "success");

	recv_at(B.qp, 62, 0, big);
	srd_fill(A.buf, small, 62);
	ksft_check_eq("SEND of 512 bytes after the MTU shrank", 0,
		      srd_post_send(A.qp, 62, srd_dest(ah_ab, B.qp), A.buf,
				    small, A.mr->lkey, IBV_SEND_SIGNALED));
	srd_expect_send_ok(A.scq, 62, "SEND of 512 bytes after the MTU shrank");
	expect_recv("SEND of 512 bytes after the MTU shrank", 62, 0, small, 62,
		    false, 0, -1);

	ksft_check_eq("restore A's netdev MTU", 0, system(restore));
	recv_at(B.qp, 63, 0, big);
	srd_fill(A.buf, big, 63);
	ksft_check_eq("SEND of the old MTU once it is back", 0,
		      srd_post_send(A.qp, 63, srd_dest(ah_ab, B.qp), A.buf, big,
				    A.mr->lkey, IBV_SEND_SIGNALED));
	srd_expect_send_ok(A.scq, 63, "SEND of the old MTU once it is back");
	expect_recv("SEND of the old MTU once it is back", 63, 0, big, 63,
		    false, 0, -1);
}

/* A mismatched qkey is dropped and counted; the next message gets through. */
static void test_qkey(void)
{
	long long drops = srd_counter(B.name, "rx_drop_qkey");
	struct srd_dest bad_qkey = srd_dest(ah_ab, B.qp);

	bad_qkey.qkey = SRD_QKEY + 1;
	recv_at(B.qp, 61, 0, 64);
	recv_at(B.qp, 62, 4096, 64);
	srd_fill(A.buf, 64, 61);
	srd_fill(A.buf + 4096, 64, 62);
	srd_post_send(A.qp, 61, bad_qkey, A.buf, 64, A.mr->lkey, IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 61, "send with a wrong qkey (UD: completes locally)");
	srd_post_send(A.qp, 62, srd_dest(ah_ab, B.qp), A.buf + 4096, 64, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 62, "send with the right qkey");
	/* The first receive WR must take the second message: the first was dropped. */
	{
		struct ibv_wc wc;

		if (srd_expect_wc(B.rcq, &wc, "receive after a wrong-qkey message")) {
			ksft_check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 61 &&
				   srd_check_fill(B.buf + SRD_GRH, 64, 62) < 0,
				   "wrong-qkey message not delivered: the first receive "
				   "holds the right-qkey message (status %s wr_id %llu)",
				   ibv_wc_status_str(wc.status),
				   (unsigned long long)wc.wr_id);
		}
	}
	ksft_check_eq("hw_counters/rx_drop_qkey incremented", drops + 1,
		      srd_counter(B.name, "rx_drop_qkey"));
	/* Leave B's RQ as it was: the second receive is still posted. */
	srd_fill(A.buf, 64, 63);
	srd_post_send(A.qp, 63, srd_dest(ah_ab, B.qp), A.buf, 64, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 63, "send to use up the second receive");
	expect_recv("message into the second receive", 62, 4096, 64, 63, false, 0, -1);
}

/*
 * A datagram too big for the posted receive is dropped and counted; the
 * receive stays posted and the QP stays in RTS (rxe's class D), so no
 * sender can break a UD QP with one datagram.
 */
static void test_too_long(void)
{
	long long drops = srd_counter(B.name, "rx_drop_too_long");
	struct ibv_qp_attr attr = { 0 };
	struct ibv_qp_init_attr init;
	struct ibv_wc wc;

	recv_at(B.qp, 71, 0, 64);
	recv_at(B.qp, 72, 4096, 64);
	srd_fill(A.buf, 200, 71);
	srd_post_send(A.qp, 71, srd_dest(ah_ab, B.qp), A.buf, 200, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 71, "send of 200 bytes to a 64-byte receive");
	srd_fill(A.buf + 4096, 64, 72);
	srd_post_send(A.qp, 72, srd_dest(ah_ab, B.qp), A.buf + 4096, 64,
		      A.mr->lkey, IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 72, "send of 64 bytes after the oversized one");
	if (srd_expect_wc(B.rcq, &wc, "receive after an oversized datagram"))
		ksft_check(wc.status == IBV_WC_SUCCESS && wc.wr_id == 71 &&
			   wc.byte_len == SRD_GRH + 64 &&
			   srd_check_fill(B.buf + SRD_GRH, 64, 72) < 0,
			   "oversized datagram dropped: the first receive holds the "
			   "next one (status %s vendor_err %u wr_id %llu byte_len %u)",
			   ibv_wc_status_str(wc.status), wc.vendor_err,
			   (unsigned long long)wc.wr_id, wc.byte_len);
	/*
	 * Waited for: once, on a loaded host, it read one short after the
	 * completion above (why is not known; a datagram taken on another
	 * CPU would do it).
	 */
	ksft_check_eq("hw_counters/rx_drop_too_long incremented", drops + 1,
		      srd_counter_wait(B.name, "rx_drop_too_long", drops + 1, 2000));
	ksft_check(!ibv_query_qp(B.qp, &attr, IBV_QP_STATE, &init) &&
		   attr.qp_state == IBV_QPS_RTS,
		   "the receiving QP is still in RTS after an oversized datagram "
		   "(state %d)", attr.qp_state);
	/* Leave B's RQ as it was: use up the second receive. */
	srd_fill(A.buf, 64, 73);
	srd_post_send(A.qp, 73, srd_dest(ah_ab, B.qp), A.buf, 64, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 73, "send to use up the second receive");
	expect_recv("message into the second receive", 72, 4096, 64, 73, false,
		    0, -1);
}

/* Send one message of len to qpn on B, then one to B.qp that must arrive. */
static void send_then_sync(uint32_t qpn, uint32_t len, uint64_t seq)
{
	struct srd_dest d = srd_dest(ah_ab, B.qp);

	d.qpn = qpn;
	srd_post_send(A.qp, seq, d, A.buf, len, A.mr->lkey, IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, seq, "send that B drops");
	recv_at(B.qp, seq + 1, 0, 64);
	srd_fill(A.buf + 8192, 64, seq + 1);
	srd_post_send(A.qp, seq + 1, srd_dest(ah_ab, B.qp), A.buf + 8192, 64,
		      A.mr->lkey, IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, seq + 1, "send after it");
	expect_recv("message after a dropped one", seq + 1, 0, 64, seq + 1, false, 0, -1);
}

/* The datapath counters count what happens. */
static void test_counters(void)
{
	static const char *const names[] = {
		"tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "rx_drop_no_qp",
		"rx_drop_no_recv", "rx_drop_qp_state", "rx_drop_bad_hdr", "tx_errors",
	};
	enum { TXP, TXB, RXP, RXB, NOQP, NORECV, QPSTATE, BADHDR, TXERR, N };
	long long a0[N], b0[N], a1[N], b1[N];
	struct ibv_qp *idle;
	int i;

	for (i = 0; i < N; i++) {
		a0[i] = srd_counter(A.name, names[i]);
		b0[i] = srd_counter(B.name, names[i]);
		ksft_check(a0[i] >= 0 && b0[i] >= 0, "hw_counters/%s readable", names[i]);
	}
	/* 10 messages of 500 bytes. */
	for (i = 0; i < 10; i++)
		recv_at(B.qp, 300 + i, i * 1024, 500);
	for (i = 0; i < 10; i++) {
		srd_fill(A.buf + i * 1024, 500, 300 + i);
		srd_post_send(A.qp, 300 + i, srd_dest(ah_ab, B.qp), A.buf + i * 1024, 500,
			      A.mr->lkey, IBV_SEND_SIGNALED);
		srd_expect_send_ok(A.scq, 300 + i, "counted send");
	}
	for (i = 0; i < 10; i++)
		expect_recv("counted message", 300 + i, i * 1024, 500, 300 + i, false, 0, -1);
	a1[TXP] = srd_counter(A.name, "tx_packets");
	a1[TXB] = srd_counter(A.name, "tx_bytes");
	b1[RXP] = srd_counter(B.name, "rx_packets");
	b1[RXB] = srd_counter(B.name, "rx_bytes");
	ksft_check(a1[TXP] - a0[TXP] >= 10 && a1[TXB] - a0[TXB] >= 5000,
		   "A's tx_packets/tx_bytes rise by at least 10/5000 (saw +%lld/+%lld)",
		   a1[TXP] - a0[TXP], a1[TXB] - a0[TXB]);
	ksft_check(b1[RXP] - b0[RXP] >= 10 && b1[RXB] - b0[RXB] >= 5000,
		   "B's rx_packets/rx_bytes rise by at least 10/5000 (saw +%lld/+%lld)",
		   b1[RXP] - b0[RXP], b1[RXB] - b0[RXB]);

	/* No such QP. */
	send_then_sync(B.qp->qp_num ^ 0x8000, 64, 320);
	ksft_check_eq("rx_drop_no_qp after a message to a QP number B does not have",
		      b0[NOQP] + 1, srd_counter(B.name, "rx_drop_no_qp"));

	/* A QP in RTS with no receive posted. */
	idle = srd_ud_qp(&B, NULL);
	send_then_sync(idle->qp_num, 64, 330);
	ksft_check_eq("rx_drop_no_recv after a message to a QP with no receive",
		      b0[NORECV] + 1, srd_counter(B.name, "rx_drop_no_recv"));
	ibv_destroy_qp(idle);

	/* A QP in INIT takes no message. */
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = B.scq, .recv_cq = B.rcq, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		idle = ibv_create_qp(B.pd, &ia);
		if (!idle || srd_qp_to_init(idle, SRD_QKEY)) {
			ksft_check(0, "a QP in INIT");
		} else {
			srd_post_recv(idle, 1, B.buf + 65536, 2048, B.mr->lkey);
			send_then_sync(idle->qp_num, 64, 340);
			ksft_check_eq("rx_drop_qp_state after a message to a QP in INIT",
				      b0[QPSTATE] + 1, srd_counter(B.name, "rx_drop_qp_state"));
			{
				struct ibv_wc wc;

				ksft_check(srd_poll(B.rcq, &wc, 0) == 0,
					   "the QP in INIT completed nothing");
			}
		}
		if (idle)
			ibv_destroy_qp(idle);
		srd_drain(B.rcq);
	}
	for (i = 0; i < N; i++) {
		a1[i] = srd_counter(A.name, names[i]);
		b1[i] = srd_counter(B.name, names[i]);
	}
	ksft_check(a1[TXERR] == a0[TXERR] && b1[BADHDR] == b0[BADHDR],
		   "tx_errors and rx_drop_bad_hdr unchanged by good traffic "
		   "(tx_errors %lld -> %lld, rx_drop_bad_hdr %lld -> %lld)",
		   a0[TXERR], a1[TXERR], b0[BADHDR], b1[BADHDR]);
}

static void expect_flushed(struct ibv_cq *cq, uint64_t wr_id, const char *what)
{
	struct ibv_wc wc;

	if (!srd_expect_wc(cq, &wc, what))
		return;
	ksft_check(wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == wr_id,
		   "%s: expected WR_FLUSH_ERR wr_id %llu, saw %s wr_id %llu", what,
		   (unsigned long long)wr_id, ibv_wc_status_str(wc.status),
		   (unsigned long long)wc.wr_id);
}

static void test_flush(void)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp *qp = srd_ud_qp(&B, NULL);
	int i, rc;
	char what[64];

	for (i = 0; i < 4; i++)
		srd_post_recv(qp, 70 + i, B.buf + i * 2048, 2048, B.mr->lkey);
	ksft_check_eq("RTS -> ERR with 4 receives posted", 0,
		      srd_err(ibv_modify_qp(qp, &qa, IBV_QP_STATE)));
	for (i = 0; i < 4; i++) {
		snprintf(what, sizeof(what), "posted receive %d flushed", i);
		expect_flushed(B.rcq, 70 + i, what);
	}
	rc = srd_post_recv(qp, 80, B.buf, 2048, B.mr->lkey);
	ksft_check_eq("post_recv in ERR", 0, rc);
	if (!rc)
		expect_flushed(B.rcq, 80, "receive posted in ERR flushed");

	/* Sends posted in ERR are flushed too. */
	{
		struct ibv_ah *ah_ba = srd_ah(&B, &A);

		for (i = 0; i < 2; i++) {
			rc = srd_post_send(qp, 90 + i, srd_dest(ah_ba, A.qp), B.buf, 16,
					   B.mr->lkey, IBV_SEND_SIGNALED);
			ksft_check_eq("post_send in ERR", 0, rc);
		}
		for (i = 0; i < 2; i++) {
			snprintf(what, sizeof(what), "send %d posted in ERR flushed", i);
			expect_flushed(B.scq, 90 + i, what);
		}
		ibv_destroy_ah(ah_ba);
	}
	{
		struct ibv_wc wc;

		ksft_check(srd_poll(A.rcq, &wc, SRD_QUIET_MS) == 0,
			   "nothing sent from a QP in ERR");
	}
	ksft_check_eq("destroy the flushed QP", 0, ibv_destroy_qp(qp));
}

static void test_qp_ex(void)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = A.scq, .recv_cq = A.rcq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 32 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = A.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(A.ctx, &ia);
	struct ibv_qp *save = A.qp;
	struct ibv_qp_ex *qx;
	struct ibv_sge list[2];
	char inl[32];
	int rc;

	ksft_check(qp != NULL, "ibv_create_qp_ex UD with SEND|SEND_WITH_IMM ops (errno %d)",
		   qp ? 0 : errno);
	if (!qp)
		return;
	qx = ibv_qp_to_qp_ex(qp);
	ksft_check(qx != NULL, "ibv_qp_to_qp_ex");
	if (!qx)
		goto out;
	ksft_check_eq("qp_ex to RTS", 0, srd_qp_to_rts(qp, SRD_QKEY));
	A.qp = qp;		/* expect_recv checks src_qp against A.qp */

	for (int i = 0; i < 4; i++)
		recv_at(B.qp, 100 + i, i * 4096, 256);
	srd_fill(A.buf, 100, 100);
	srd_fill(inl, sizeof(inl), 101);
	srd_fill(A.buf + 8192, 96, 102);
	memcpy(A.buf + 12288, A.buf + 8192 + 40, 56);	/* second SGE elsewhere */
	list[0] = (struct ibv_sge){ (uintptr_t)(A.buf + 8192), 40, A.mr->lkey };
	list[1] = (struct ibv_sge){ (uintptr_t)(A.buf + 12288), 56, A.mr->lkey };

	ibv_wr_start(qx);
	qx->wr_id = 100;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	ibv_wr_set_sge(qx, A.mr->lkey, (uintptr_t)A.buf, 100);

	qx->wr_id = 101;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qx, htonl(0x0badcafe));
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	ibv_wr_set_inline_data(qx, inl, sizeof(inl));

	qx->wr_id = 102;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	ibv_wr_set_sge_list(qx, 2, list);
	rc = ibv_wr_complete(qx);
	ksft_check_eq("ibv_wr_complete of wr_send, wr_send_imm + inline, "
		      "wr_send + sge_list", 0, rc);
	srd_expect_send_ok(A.scq, 100, "wr_send");
	srd_expect_send_ok(A.scq, 101, "wr_send_imm");
	srd_expect_send_ok(A.scq, 102, "wr_send with sge_list");
	expect_recv("wr_send + wr_set_sge", 100, 0, 100, 100, false, 0, -1);
	expect_recv("wr_send_imm + wr_set_inline_data", 101, 4096, sizeof(inl), 101,
		    true, 0x0badcafe, -1);
	expect_recv("wr_send + wr_set_sge_list", 102, 8192, 96, 102, false, 0, -1);

	/* An aborted batch sends nothing. */
	ibv_wr_start(qx);
	qx->wr_id = 103;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	ibv_wr_set_sge(qx, A.mr->lkey, (uintptr_t)A.buf, 16);
	ibv_wr_abort(qx);
	{
		struct ibv_wc wc;

		ksft_check(srd_poll(B.rcq, &wc, SRD_QUIET_MS) == 0 &&
			   srd_poll(A.scq, &wc, 0) == 0,
			   "ibv_wr_abort: nothing sent, nothing completed");
	}
	srd_drain(B.rcq);
	A.qp = save;
	/* The 4th receive stays posted on B's QP: give it a message. */
	srd_fill(A.buf, 16, 104);
	srd_post_send(A.qp, 104, srd_dest(ah_ab, B.qp), A.buf, 16, A.mr->lkey,
		      IBV_SEND_SIGNALED);
	srd_expect_send_ok(A.scq, 104, "send to use up the last receive");
	expect_recv("after the aborted batch", 103, 3 * 4096, 16, 104, false, 0, -1);
out:
	ksft_check_eq("destroy the qp_ex", 0, ibv_destroy_qp(qp));
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV_A IP_A DEV_B IP_B\n", argv[0]);
		return KSFT_FAIL;
	}
	srd_ep_open(&A, argv[1], argv[2]);
	srd_ep_open(&B, argv[3], argv[4]);
	test_state_machine();
	test_invalid_transitions();

	ah_ab = srd_ah_checked(&A, &B);
	if (!ah_ab)
		return ksft_exit();
	test_send_and_imm();
	test_slid();
	test_inline();
	test_sge_lists();
	test_mtu();
	test_mtu_follows_netdev();
	test_qkey();
	test_too_long();
	test_counters();
	test_flush();
	test_qp_ex();
	test_reuse_traffic();

	ibv_destroy_ah(ah_ab);
	srd_ep_close(&A);
	srd_ep_close(&B);
	return ksft_exit();
}
