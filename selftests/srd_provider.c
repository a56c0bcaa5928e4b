// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What libsrd itself decides, before or without the kernel: attributes it
 * refuses at creation, work requests it refuses by QP state, by opcode or
 * by size, full queues (ENOMEM and bad_wr), the error rules of the
 * ibv_wr_* API (a refused batch posts nothing), and the direct verbs
 * srddv_is_srd_device, srddv_query_ah and srddv_wc_read_sgid.  Then four
 * threads post to one QP through both posting APIs while two threads poll
 * one CQ through both polling APIs and re-post receives: every message
 * must arrive once, intact.
 *
 *   srd_provider DEV_A IP_A DEV_B IP_B
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "srd_test.h"

#ifndef SRD_HAVE_SRDDV
int main(void)
{
	ksft_skip("<infiniband/srddv.h> and libsrd.so.1 were not found at build time");
}
#else

static struct srd_ep A, B;
static struct ibv_ah *ah_ab;

/* A fresh UD QP on ep's CQs, left in RESET; the granted caps in *cap. */
static struct ibv_qp *qp_in_reset(struct srd_ep *ep, struct ibv_qp_cap *cap,
				  uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = ep->scq, .recv_cq = ep->rcq, .qp_type = IBV_QPT_UD,
		.cap = *cap, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = ep->pd,
	};
	struct ibv_qp *qp;

	if (send_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = send_ops;
	}
	qp = ibv_create_qp_ex(ep->ctx, &a);
	if (!qp)
		srd_die("ibv_create_qp_ex (UD)", errno);
	*cap = a.cap;
	return qp;
}

/* No completion on cq for a while. */
static bool cq_quiet(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	return srd_poll(cq, &wc, SRD_QUIET_MS) == 0;
}

static void test_create_refusals(void)
{
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = A.scq, .recv_cq = A.rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = A.pd,
	};
	struct ibv_cq_init_attr_ex ca = { .cqe = 16 };
	struct ibv_qp *qp;
	struct ibv_cq_ex *cq;

	errno = 0;
	qp = ibv_create_qp_ex(A.ctx, &qa);
	ksft_check(!qp && errno == EOPNOTSUPP, "RC QP refused: EOPNOTSUPP (errno %d)", errno);

	qa.qp_type = IBV_QPT_UD;
	qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	errno = 0;
	qp = ibv_create_qp_ex(A.ctx, &qa);
	ksft_check(!qp && errno == EOPNOTSUPP,
		   "UD QP with RDMA write ops refused: EOPNOTSUPP (errno %d)", errno);

	qa.send_ops_flags = IBV_QP_EX_WITH_SEND;
	qa.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	qa.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	qp = ibv_create_qp_ex(A.ctx, &qa);
	ksft_check(!qp && errno == EOPNOTSUPP,
		   "UD QP with create flags refused: EOPNOTSUPP (errno %d)", errno);

	qa.comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	qa.send_cq = NULL;
	errno = 0;
	qp = ibv_create_qp_ex(A.ctx, &qa);
	ksft_check(!qp && errno == EINVAL, "QP without a send CQ: EINVAL (errno %d)", errno);

	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	cq = ibv_create_cq_ex(A.ctx, &ca);
	ksft_check(!cq && errno == EOPNOTSUPP,
		   "CQ with completion timestamps refused: EOPNOTSUPP (errno %d)", errno);

	ca.wc_flags = IBV_WC_STANDARD_FLAGS;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	cq = ibv_create_cq_ex(A.ctx, &ca);
	ksft_check(!cq && errno == EOPNOTSUPP,
		   "CQ ignoring overruns refused: EOPNOTSUPP (errno %d)", errno);

	ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	cq = ibv_create_cq_ex(A.ctx, &ca);
	ksft_check(cq != NULL, "single-threaded CQ accepted (errno %d)", cq ? 0 : errno);
	if (cq)
		ksft_check_eq("destroy it", 0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
}

static int post_one_send(struct ibv_qp *qp, uint64_t wr_id, struct ibv_send_wr **bad)
{
	struct ibv_sge sg = { (uintptr_t)A.buf, 64, A.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah_ab, .remote_qpn = B.qp->qp_num, .remote_qkey = SRD_QKEY },
	};

	*bad = NULL;
	return ibv_post_send(qp, &wr, bad);
}

/* Sends before RTS and receives in RESET are refused, as verbs say. */
static void test_states(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp *qp = qp_in_reset(&A, &cap, 0);
	struct ibv_sge sg = { (uintptr_t)A.buf, 64, A.mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1 }, *rbad = NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	struct ibv_send_wr *bad;
	int rc;

	rc = ibv_post_recv(qp, &rwr, &rbad);
	ksft_check(rc == EINVAL && rbad == &rwr,
		   "post_recv in RESET: EINVAL with bad_wr (rc %d)", rc);
	rc = post_one_send(qp, 1, &bad);
	ksft_check(rc == EINVAL && bad, "post_send in RESET: EINVAL with bad_wr (rc %d)", rc);

	ksft_check_eq("RESET -> INIT", 0, srd_qp_to_init(qp, SRD_QKEY));
	rc = post_one_send(qp, 2, &bad);
	ksft_check(rc == EINVAL && bad, "post_send in INIT: EINVAL (rc %d)", rc);
	rc = ibv_post_recv(qp, &rwr, &rbad);
	ksft_check_eq("post_recv in INIT", 0, rc);

	ksft_check_eq("INIT -> RTR", 0, srd_err(ibv_modify_qp(qp, &a, IBV_QP_STATE)));
	rc = post_one_send(qp, 3, &bad);
	ksft_check(rc == EINVAL && bad, "post_send in RTR: EINVAL (rc %d)", rc);
	ksft_check(cq_quiet(A.scq), "refused sends leave no completion");
	ksft_check_eq("destroy the QP", 0, ibv_destroy_qp(qp));
	srd_drain(A.rcq);
}

/* A list longer than the queue: the WRs that fit are posted, then ENOMEM. */
static void test_full_queues(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 8,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp *qp = qp_in_reset(&A, &cap, 0);
	struct ibv_send_wr swr[64], *sbad = NULL;
	struct ibv_recv_wr rwr[64], *rbad = NULL;
	struct ibv_sge sg = { (uintptr_t)A.buf, 64, A.mr->lkey };
	struct ibv_wc wc[64];
	uint32_t i, n, got = 0;
	long long end;
	int rc;

	ksft_check_eq("QP to RTS", 0, srd_qp_to_rts(qp, SRD_QKEY));
	n = cap.max_recv_wr + 1;
	if (n > 64 || cap.max_send_wr + 1 > 64) {
		ksft_check(0, "granted queues of %u/%u WRs fit the test", cap.max_send_wr,
			   cap.max_recv_wr);
		ibv_destroy_qp(qp);
		return;
	}
	for (i = 0; i < n; i++)
		rwr[i] = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sg, .num_sge = 1,
					       .next = i + 1 < n ? &rwr[i + 1] : NULL };
	rc = ibv_post_recv(qp, rwr, &rbad);
	ksft_check(rc == ENOMEM && rbad == &rwr[cap.max_recv_wr],
		   "post_recv of max_recv_wr (%u) + 1: ENOMEM, bad_wr the last (rc %d, bad_wr %ld)",
		   cap.max_recv_wr, rc, rbad ? (long)(rbad - rwr) : -1L);

	n = cap.max_send_wr + 1;
	for (i = 0; i < n; i++)
		swr[i] = (struct ibv_send_wr){
			.wr_id = 100 + i, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah_ab, .remote_qpn = B.qp->qp_num,
				   .remote_qkey = SRD_QKEY },
			.next = i + 1 < n ? &swr[i + 1] : NULL };
	rc = ibv_post_send(qp, swr, &sbad);
	ksft_check(rc == ENOMEM && sbad == &swr[cap.max_send_wr],
		   "post_send of max_send_wr (%u) + 1: ENOMEM, bad_wr the last (rc %d, bad_wr %ld)",
		   cap.max_send_wr, rc, sbad ? (long)(sbad - swr) : -1L);
	end = srd_now_ms() + SRD_TIMEOUT_MS;
	while (got < cap.max_send_wr && srd_now_ms() < end) {
		int k = ibv_poll_cq(A.scq, 64, wc);

		for (i = 0; k > 0 && i < (uint32_t)k; i++)
			got += wc[i].status == IBV_WC_SUCCESS &&
			       wc[i].wr_id == 100 + got;
	}
	ksft_check_eq("the WRs before bad_wr complete, in order", cap.max_send_wr, got);
	ksft_check(cq_quiet(A.scq), "nothing more completes");

	rc = post_one_send(qp, 500, &sbad);
	ksft_check_eq("the queue takes WRs again", 0, rc);
	srd_expect_send_ok(A.scq, 500, "after ENOMEM");
	ksft_check_eq("destroy the QP", 0, ibv_destroy_qp(qp));
	srd_drain(B.rcq);
	srd_drain(A.rcq);
}

static void test_send_validation(void)
{
	struct ibv_sge sg = { (uintptr_t)A.buf, 64, A.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah_ab, .remote_qpn = B.qp->qp_num, .remote_qkey = SRD_QKEY },
	}, *bad = NULL;
	int rc;

	rc = ibv_post_send(A.qp, &wr, &bad);
	ksft_check(rc == EINVAL && bad == &wr, "RDMA write on UD: EINVAL (rc %d)", rc);
	wr.opcode = IBV_WR_SEND;
	wr.wr.ud.ah = NULL;
	rc = ibv_post_send(A.qp, &wr, &bad);
	ksft_check(rc == EINVAL && bad == &wr, "send without an AH: EINVAL (rc %d)", rc);
	wr.wr.ud.ah = ah_ab;
	wr.send_flags |= IBV_SEND_INLINE;
	sg.length = A.cap.max_inline_data + 1;
	rc = ibv_post_send(A.qp, &wr, &bad);
	ksft_check(rc == EINVAL && bad == &wr,
		   "inline send of max_inline_data (%u) + 1 bytes: EINVAL (rc %d)",
		   A.cap.max_inline_data, rc);
	ksft_check(cq_quiet(A.scq), "refused WRs leave no completion");
}

/* ibv_wr_*: a batch with an error posts nothing; wr_complete says why. */
static void test_wr_api_errors(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 8, .max_recv_wr = 1,
				  .max_send_sge = 2, .max_recv_sge = 1,
				  .max_inline_data = 32 };
	struct ibv_qp *qp = qp_in_reset(&A, &cap, IBV_QP_EX_WITH_SEND |
					IBV_QP_EX_WITH_SEND_WITH_IMM);
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);
	uint32_t i;
	int rc;

	ksft_check(qx != NULL, "ibv_qp_to_qp_ex");
	if (!qx)
		return;
	ksft_check_eq("QP to RTS", 0, srd_qp_to_rts(qp, SRD_QKEY));

	ibv_wr_start(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	rc = ibv_wr_complete(qx);
	ksft_check_eq("a setter before any builder: EINVAL", EINVAL, rc);

	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	ibv_wr_set_sge(qx, A.mr->lkey, (uintptr_t)A.buf, 16);
	qx->wr_id = 2;
	ibv_wr_send(qx);	/* no address */
	ibv_wr_set_sge(qx, A.mr->lkey, (uintptr_t)A.buf, 16);
	rc = ibv_wr_complete(qx);
	ksft_check_eq("a WR without wr_set_ud_addr: EINVAL", EINVAL, rc);

	ibv_wr_start(qx);
	qx->wr_id = 3;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	ibv_wr_set_inline_data(qx, A.buf, cap.max_inline_data + 1);
	rc = ibv_wr_complete(qx);
	ksft_check_eq("inline data over max_inline_data: EINVAL", EINVAL, rc);

	ibv_wr_start(qx);
	qx->wr_id = 4;
	ibv_wr_send(qx);
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	ibv_wr_set_sge(qx, A.mr->lkey, (uintptr_t)A.buf, A.mtu + 1);
	rc = ibv_wr_complete(qx);
	ksft_check_eq("a WR over the MTU: EINVAL", EINVAL, rc);

	ibv_wr_start(qx);
	for (i = 0; i < cap.max_send_wr + 1; i++) {
		qx->wr_id = 10 + i;
		ibv_wr_send(qx);
		ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
		ibv_wr_set_sge(qx, A.mr->lkey, (uintptr_t)A.buf, 16);
	}
	rc = ibv_wr_complete(qx);
	ksft_check(rc == ENOMEM, "a batch of max_send_wr (%u) + 1: ENOMEM (rc %d)",
		   cap.max_send_wr, rc);
	ksft_check(cq_quiet(A.scq), "refused batches post nothing");

	ibv_wr_start(qx);
	qx->wr_id = 99;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(qx, htonl(7));
	ibv_wr_set_ud_addr(qx, ah_ab, B.qp->qp_num, SRD_QKEY);
	ibv_wr_set_inline_data(qx, A.buf, cap.max_inline_data);
	rc = ibv_wr_complete(qx);
	ksft_check_eq("a good batch after refused ones", 0, rc);
	srd_expect_send_ok(A.scq, 99, "good batch");
	ksft_check_eq("destroy the QP", 0, ibv_destroy_qp(qp));
	srd_drain(B.rcq);
}

static void test_direct_verbs(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_poll_cq_attr pa = {};
	struct srddv_ah_attr aa;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	union ibv_gid sgid;
	bool saw_send = false, saw_recv = false;
	long long end;
	int rc;

	ksft_check(srddv_is_srd_device(A.ctx->device), "srddv_is_srd_device(A)");
	ksft_check(!srddv_is_srd_device(NULL), "srddv_is_srd_device(NULL) is false");

	memset(&aa, 0, sizeof(aa));
	ksft_check_eq("srddv_query_ah with inlen 8: EINVAL", EINVAL,
		      srddv_query_ah(ah_ab, &aa, 8));
	aa.comp_mask = 1;
	ksft_check_eq("srddv_query_ah with an unknown comp_mask bit: EINVAL", EINVAL,
		      srddv_query_ah(ah_ab, &aa, sizeof(aa)));
	aa.comp_mask = 0;
	ksft_check_eq("srddv_query_ah", 0, srddv_query_ah(ah_ab, &aa, sizeof(aa)));
	ksft_check(aa.ahn != SRD_NO_AH_SLID && aa.comp_mask == 0,
		   "an AH number (%u), comp_mask 0", aa.ahn);

	/* One CQ for both queues of B's QP: a send and a receive in it. */
	cqx = ibv_create_cq_ex(B.ctx, &ca);
	ksft_check(cqx != NULL, "ibv_create_cq_ex (errno %d)", cqx ? 0 : errno);
	if (!cqx)
		return;
	{
		struct ibv_qp_init_attr_ex a = {
			.send_cq = ibv_cq_ex_to_cq(cqx), .recv_cq = ibv_cq_ex_to_cq(cqx),
			.qp_type = IBV_QPT_UD, .cap = cap,
			.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = B.pd,
		};

		qp = ibv_create_qp_ex(B.ctx, &a);
	}
	if (!qp)
		srd_die("ibv_create_qp_ex", errno);
	ksft_check_eq("QP to RTS", 0, srd_qp_to_rts(qp, SRD_QKEY));
	ksft_check_eq("post a receive", 0,
		      srd_post_recv(qp, 1, B.buf + (512 << 10), SRD_GRH + 64,
				    B.mr->lkey));
	{
		struct ibv_ah *ah_ba = srd_ah(&B, &A);

		ksft_check_eq("B sends to A", 0,
			      srd_post_send(qp, 2, srd_dest(ah_ba, A.qp), B.buf + (600 << 10),
					    64, B.mr->lkey, IBV_SEND_SIGNALED));
		ksft_check_eq("A sends to B's new QP", 0,
			      srd_post_send(A.qp, 3, srd_dest(ah_ab, qp), A.buf, 64,
					    A.mr->lkey, IBV_SEND_SIGNALED));
		srd_expect_send_ok(A.scq, 3, "A to B's new QP");
		end = srd_now_ms() + SRD_TIMEOUT_MS;
		while ((!saw_send || !saw_recv) && srd_now_ms() < end) {
			rc = ibv_start_poll(cqx, &pa);
			if (rc == ENOENT)
				continue;
			if (rc)
				break;
			do {
				rc = srddv_wc_read_sgid(cqx, &sgid);
				if (cqx->wr_id == 2) {
					saw_send = true;
					ksft_check_eq("srddv_wc_read_sgid of a send completion: ENOENT",
						      ENOENT, rc);
				} else if (cqx->wr_id == 1) {
					saw_recv = true;
					ksft_check(rc == 0 && !memcmp(&sgid, &A.gid, sizeof(sgid)),
						   "srddv_wc_read_sgid of a receive: A's GID (rc %d)", rc);
				}
			} while (!ibv_next_poll(cqx));
			ibv_end_poll(cqx);
		}
		ksft_check(saw_send && saw_recv, "both completions polled");
		ksft_check_eq("srddv_wc_read_sgid outside a poll: ENOENT", ENOENT,
			      srddv_wc_read_sgid(cqx, &sgid));
		ibv_destroy_ah(ah_ba);
	}
	ksft_check_eq("destroy the QP", 0, ibv_destroy_qp(qp));
	ksft_check_eq("destroy the CQ", 0, ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	srd_drain(A.rcq);
}

/* srddv_create_qp_ex: each documented refusal, and what it accepts. */
static void dv_qp_expect(const char *what, struct ibv_qp *qp, int err)
{
	int e = errno;

	if (err) {
		ksft_check(!qp && e == err, "srddv_create_qp_ex, %s: %s (saw %s, errno %d)",
			   what, strerror(err), qp ? "a QP" : "no QP", e);
	} else {
		ksft_check(qp && qp->qp_type == IBV_QPT_DRIVER,
			   "srddv_create_qp_ex, %s: an IBV_QPT_DRIVER QP (errno %d)",
			   what, qp ? 0 : e);
	}
	if (qp)
		ibv_destroy_qp(qp);
}

static void test_dv_create_qp_ex(void)
{
	struct { struct srddv_qp_init_attr s; uint8_t more[8]; } big;
	struct srddv_qp_init_attr s;
	struct ibv_qp_init_attr_ex a;

#define DV_RESET() do {							\
	memset(&a, 0, sizeof(a));					\
	a.qp_type = IBV_QPT_DRIVER;					\
	a.send_cq = A.scq;						\
	a.recv_cq = A.rcq;						\
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;			\
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;			\
	a.comp_mask = IBV_QP_INIT_ATTR_PD;				\
	a.pd = A.pd;							\
	memset(&s, 0, sizeof(s));					\
	memset(&big, 0, sizeof(big));					\
} while (0)

	DV_RESET();
	dv_qp_expect("plain", srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)), 0);
	DV_RESET();
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	dv_qp_expect("with send_ops_flags", srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)), 0);
	DV_RESET();
	dv_qp_expect("inlen up to driver_qp_type", srddv_create_qp_ex(A.ctx, &a, &s, 12), 0);
	DV_RESET();
	dv_qp_expect("a larger struct, zero tail",
		     srddv_create_qp_ex(A.ctx, &a, &big.s, sizeof(big)), 0);
	DV_RESET();
	a.qp_type = IBV_QPT_UD;
	dv_qp_expect("qp_type UD", srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)), EINVAL);
	DV_RESET();
	dv_qp_expect("inlen 8", srddv_create_qp_ex(A.ctx, &a, &s, 8), EINVAL);
	DV_RESET();
	s.comp_mask = 1;
	dv_qp_expect("comp_mask 1", srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)), EINVAL);
	DV_RESET();
	s.reserved[1] = 1;
	dv_qp_expect("a reserved byte set", srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)), EINVAL);
	DV_RESET();
	s.flags = SRDDV_QP_FLAGS_UNSOLICITED_WRITE_RECV;
	dv_qp_expect("UNSOLICITED_WRITE_RECV (softsrd has not the cap)",
		     srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)), EOPNOTSUPP);
	DV_RESET();
	s.flags = SRDDV_QP_FLAGS_UNSOLICITED_WRITE_RECV;
	dv_qp_expect("inlen 12: flags past it not read",
		     srddv_create_qp_ex(A.ctx, &a, &s, 12), 0);
	DV_RESET();
	s.flags = 1 << 1;
	dv_qp_expect("an unknown flag", srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)),
		     EOPNOTSUPP);
	DV_RESET();
	s.driver_qp_type = 1;
	dv_qp_expect("driver_qp_type 1", srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)),
		     EOPNOTSUPP);
	DV_RESET();
	big.more[5] = 1;
	dv_qp_expect("a larger struct, non-zero tail",
		     srddv_create_qp_ex(A.ctx, &a, &big.s, sizeof(big)), EINVAL);
	DV_RESET();
	dv_qp_expect("NULL srd_attr", srddv_create_qp_ex(A.ctx, &a, NULL, sizeof(s)), EINVAL);
	DV_RESET();
	dv_qp_expect("NULL context", srddv_create_qp_ex(NULL, &a, &s, sizeof(s)), EOPNOTSUPP);
	DV_RESET();
	a.cap.max_send_wr = 1 << 30;
	dv_qp_expect("caps the kernel refuses", srddv_create_qp_ex(A.ctx, &a, &s, sizeof(s)),
		     EINVAL);
#undef DV_RESET
}

/* --- threads ------------------------------------------------------------- */

#define MT_SENDERS	4
#define MT_MSGS		2000		/* per sender */
#define MT_RECVS	256
#define MT_MAX_LEN	512

static struct ibv_qp *mt_qa, *mt_qb;
static struct ibv_qp_ex *mt_qax;
static struct ibv_cq *mt_a_scq;
static struct ibv_cq_ex *mt_b_rcq;
static uint8_t *mt_a_buf, *mt_b_buf;
static struct ibv_mr *mt_a_mr, *mt_b_mr;
static uint32_t mt_inline;
static atomic_int mt_credits = MT_RECVS;
static atomic_uint mt_sent, mt_send_done, mt_recvd, mt_errors;
static atomic_bool mt_stop;
static uint8_t mt_send_seen[MT_SENDERS * MT_MSGS];
static atomic_uchar mt_recv_seen[MT_SENDERS * MT_MSGS];

static uint32_t mt_len(uint32_t seq)
{
	return 5 + (seq * 37) % (MT_MAX_LEN - 5);
}

static uint8_t *mt_msg(uint32_t t, uint32_t seq)
{
	return mt_a_buf + ((size_t)t * MT_MSGS + seq) * MT_MAX_LEN;
}

static void mt_fill(uint32_t t, uint32_t seq)
{
	uint8_t *p = mt_msg(t, seq);

	p[0] = t;
	memcpy(p + 1, &seq, 4);
	srd_fill(p + 5, mt_len(seq) - 5, t * MT_MSGS + seq);
}

static void mt_take_credits(int n)
{
	int c;

	for (;;) {
		c = atomic_load(&mt_credits);
		if (c >= n && atomic_compare_exchange_weak(&mt_credits, &c, c - n))
			return;
		sched_yield();
	}
}

static void *mt_sender(void *arg)
{
	uint32_t t = (uintptr_t)arg, seq = 0, n, i;
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sge[4];
	int rc;

	while (seq < MT_MSGS) {
		n = 1 + seq % 4;
		if (n > MT_MSGS - seq)
			n = MT_MSGS - seq;
		mt_take_credits(n);
		if (t < 2) {
			for (i = 0; i < n; i++) {
				uint32_t s = seq + i, len = mt_len(s);

				mt_fill(t, s);
				sge[i] = (struct ibv_sge){ (uintptr_t)mt_msg(t, s), len, mt_a_mr->lkey };
				wr[i] = (struct ibv_send_wr){
					.wr_id = (uint64_t)t << 32 | s,
					.next = i + 1 < n ? &wr[i + 1] : NULL,
					.sg_list = &sge[i], .num_sge = 1,
					.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED |
					(len <= mt_inline && s % 3 == 0 ? IBV_SEND_INLINE : 0),
					.wr.ud = { .ah = ah_ab, .remote_qpn = mt_qb->qp_num,
						   .remote_qkey = SRD_QKEY },
				};
			}
			rc = ibv_post_send(mt_qa, wr, &bad);
		} else {
			ibv_wr_start(mt_qax);
			for (i = 0; i < n; i++) {
				uint32_t s = seq + i, len = mt_len(s);

				mt_fill(t, s);
				mt_qax->wr_id = (uint64_t)t << 32 | s;
				mt_qax->wr_flags = IBV_SEND_SIGNALED;
				ibv_wr_send(mt_qax);
				ibv_wr_set_ud_addr(mt_qax, ah_ab, mt_qb->qp_num, SRD_QKEY);
				if (len <= mt_inline && s % 3 == 0)
					ibv_wr_set_inline_data(mt_qax, mt_msg(t, s), len);
				else
					ibv_wr_set_sge(mt_qax, mt_a_mr->lkey,
						       (uintptr_t)mt_msg(t, s), len);
			}
			rc = ibv_wr_complete(mt_qax);
		}
		if (rc) {
			/* 4 threads x 4 WRs never fill the SQ of 64. */
			atomic_fetch_add(&mt_errors, 1);
			printf("# sender %u: %s\n", t, strerror(rc));
			return NULL;
		}
		atomic_fetch_add(&mt_sent, n);
		seq += n;
	}
	return NULL;
}

static void *mt_send_poller(void *arg)
{
	struct ibv_wc wc[16];
	int n, i;

	(void)arg;
	while (!atomic_load(&mt_stop)) {
		n = ibv_poll_cq(mt_a_scq, 16, wc);
		for (i = 0; i < n; i++) {
			uint32_t t = wc[i].wr_id >> 32, s = (uint32_t)wc[i].wr_id;

			if (wc[i].status != IBV_WC_SUCCESS || t >= MT_SENDERS ||
			    s >= MT_MSGS || mt_send_seen[t * MT_MSGS + s]++)
				atomic_fetch_add(&mt_errors, 1);
			else
				atomic_fetch_add(&mt_send_done, 1);
		}
	}
	return NULL;
}

static void mt_repost(uint64_t slot)
{
	struct ibv_sge sg = { (uintptr_t)(mt_b_buf + slot * (SRD_GRH + MT_MAX_LEN)),
			      SRD_GRH + MT_MAX_LEN, mt_b_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sg, .num_sge = 1 }, *bad;

	if (ibv_post_recv(mt_qb, &wr, &bad))
		atomic_fetch_add(&mt_errors, 1);
}

static void mt_on_recv(uint64_t slot, enum ibv_wc_status status, uint32_t byte_len)
{
	uint8_t *p = mt_b_buf + slot * (SRD_GRH + MT_MAX_LEN) + SRD_GRH;
	uint32_t t = p[0], s;

	memcpy(&s, p + 1, 4);
	if (status != IBV_WC_SUCCESS || slot >= MT_RECVS || t >= MT_SENDERS ||
	    s >= MT_MSGS || byte_len != SRD_GRH + mt_len(s) ||
	    srd_check_fill(p + 5, mt_len(s) - 5, t * MT_MSGS + s) >= 0 ||
	    atomic_fetch_add(&mt_recv_seen[t * MT_MSGS + s], 1))
		atomic_fetch_add(&mt_errors, 1);
	else
		atomic_fetch_add(&mt_recvd, 1);
	if (slot < MT_RECVS)
		mt_repost(slot);
	atomic_fetch_add(&mt_credits, 1);
}

static void *mt_recv_poll_cq(void *arg)
{
	struct ibv_wc wc[8];
	int n, i;

	(void)arg;
	while (!atomic_load(&mt_stop)) {
		n = ibv_poll_cq(ibv_cq_ex_to_cq(mt_b_rcq), 8, wc);
		for (i = 0; i < n; i++)
			mt_on_recv(wc[i].wr_id, wc[i].status, wc[i].byte_len);
	}
	return NULL;
}

static void *mt_recv_start_poll(void *arg)
{
	struct ibv_poll_cq_attr pa = {};

	(void)arg;
	while (!atomic_load(&mt_stop)) {
		if (ibv_start_poll(mt_b_rcq, &pa))
			continue;
		do
			mt_on_recv(mt_b_rcq->wr_id, mt_b_rcq->status,
				   ibv_wc_read_byte_len(mt_b_rcq));
		while (!ibv_next_poll(mt_b_rcq));
		ibv_end_poll(mt_b_rcq);
	}
	return NULL;
}

static void test_threads(void)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 2 * MT_RECVS, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_qp_cap cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1,
				  .max_recv_sge = 1, .max_inline_data = 64 };
	pthread_t snd[MT_SENDERS], spoll, rpoll[2];
	struct ibv_cq *b_scq;
	uint32_t i, total = MT_SENDERS * MT_MSGS;
	long long end;

	mt_a_scq = ibv_create_cq(A.ctx, 4096, NULL, NULL, 0);
	b_scq = ibv_create_cq(B.ctx, 16, NULL, NULL, 0);
	mt_b_rcq = ibv_create_cq_ex(B.ctx, &ca);
	if (!mt_a_scq || !b_scq || !mt_b_rcq)
		srd_die("ibv_create_cq", errno);
	{
		struct ibv_qp_init_attr_ex a = {
			.send_cq = mt_a_scq, .recv_cq = A.rcq, .qp_type = IBV_QPT_UD,
			.cap = cap, .pd = A.pd,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.send_ops_flags = IBV_QP_EX_WITH_SEND,
		};
		struct ibv_qp_init_attr_ex b = {
			.send_cq = b_scq, .recv_cq = ibv_cq_ex_to_cq(mt_b_rcq),
			.qp_type = IBV_QPT_UD, .pd = B.pd, .comp_mask = IBV_QP_INIT_ATTR_PD,
			.cap = { .max_send_wr = 1, .max_recv_wr = MT_RECVS,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		mt_qa = ibv_create_qp_ex(A.ctx, &a);
		mt_qb = ibv_create_qp_ex(B.ctx, &b);
		if (!mt_qa || !mt_qb)
			srd_die("ibv_create_qp_ex", errno);
		mt_inline = a.cap.max_inline_data;
	}
	mt_qax = ibv_qp_to_qp_ex(mt_qa);
	if (srd_qp_to_rts(mt_qa, SRD_QKEY) || srd_qp_to_rts(mt_qb, SRD_QKEY))
		srd_die("QPs to RTS", EINVAL);
	mt_a_buf = calloc((size_t)total, MT_MAX_LEN);
	mt_b_buf = calloc(MT_RECVS, SRD_GRH + MT_MAX_LEN);
	if (!mt_a_buf || !mt_b_buf)
		srd_die("calloc", ENOMEM);
	mt_a_mr = ibv_reg_mr(A.pd, mt_a_buf, (size_t)total * MT_MAX_LEN, 0);
	mt_b_mr = ibv_reg_mr(B.pd, mt_b_buf, MT_RECVS * (SRD_GRH + MT_MAX_LEN),
			     IBV_ACCESS_LOCAL_WRITE);
	if (!mt_a_mr || !mt_b_mr)
		srd_die("ibv_reg_mr", errno);
	for (i = 0; i < MT_RECVS; i++)
		mt_repost(i);

	pthread_create(&spoll, NULL, mt_send_poller, NULL);
	pthread_create(&rpoll[0], NULL, mt_recv_poll_cq, NULL);
	pthread_create(&rpoll[1], NULL, mt_recv_start_poll, NULL);
	for (i = 0; i < MT_SENDERS; i++)
		pthread_create(&snd[i], NULL, mt_sender, (void *)(uintptr_t)i);
	for (i = 0; i < MT_SENDERS; i++)
		pthread_join(snd[i], NULL);
	end = srd_now_ms() + 20000;
	while ((atomic_load(&mt_recvd) < total || atomic_load(&mt_send_done) < total) &&
	       !atomic_load(&mt_errors) && srd_now_ms() < end)
		srd_sleep_ms(10);
	atomic_store(&mt_stop, true);
	pthread_join(spoll, NULL);
	pthread_join(rpoll[0], NULL);
	pthread_join(rpoll[1], NULL);

	printf("# %u threads x %u messages: posted %u, send completions %u, received %u\n",
	       MT_SENDERS, MT_MSGS, atomic_load(&mt_sent), atomic_load(&mt_send_done),
	       atomic_load(&mt_recvd));
	ksft_check_eq("threads: messages posted", total, atomic_load(&mt_sent));
	ksft_check_eq("threads: sends completed, each once", total, atomic_load(&mt_send_done));
	ksft_check_eq("threads: messages received, each once and intact", total,
		      atomic_load(&mt_recvd));
	ksft_check_eq("threads: errors", 0, atomic_load(&mt_errors));

	ibv_destroy_qp(mt_qa);
	ibv_destroy_qp(mt_qb);
	ibv_dereg_mr(mt_a_mr);
	ibv_dereg_mr(mt_b_mr);
	ibv_destroy_cq(mt_a_scq);
	ibv_destroy_cq(b_scq);
	ibv_destroy_cq(ibv_cq_ex_to_cq(mt_b_rcq));
	free(mt_a_buf);
	free(mt_b_buf);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV_A IP_A DEV_B IP_B\n", argv[0]);
		return KSFT_FAIL;
	}
	srd_ep_open(&A, argv[1], argv[2]);
	srd_ep_open(&B, argv[3], argv[4]);
	ah_ab = srd_ah(&A, &B);
	for (int i = 0; i < 32; i++)
		srd_post_recv(B.qp, 1000 + i, B.buf + i * 2048, 2048, B.mr->lkey);

	test_create_refusals();
	test_states();
	test_full_queues();
	test_send_validation();
	test_wr_api_errors();
	test_direct_verbs();
	test_dv_create_qp_ex();
	test_threads();

	ibv_destroy_ah(ah_ab);
	srd_ep_close(&A);
	srd_ep_close(&B);
	return ksft_exit();
}
#endif /* SRD_HAVE_SRDDV */
