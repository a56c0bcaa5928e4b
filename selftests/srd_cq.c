// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: completion channels (next completion and
 * solicited-only arming, ibv_get_cq_event, ibv_ack_cq_events); completion
 * vectors (one a possible CPU: the last takes a CQ, one past it EINVAL); overflow
 * raises IBV_EVENT_CQ_ERR and leaves the entries already queued intact and
 * in order; ibv_create_cq_ex with ibv_start_poll/ibv_next_poll/ibv_end_poll;
 * the CQEs of a destroyed QP refused as libefa refuses them.
 *
 *   srd_cq DEV_A IP_A DEV_B IP_B
 *   srd_cq --syscalls N DEV_A IP_A DEV_B IP_B
 *
 * --syscalls runs N post_recv, N empty polls, N post_send (one WR each),
 * one post_send of a list of WRs, and the polls that reap N receive
 * completions, each stretch between two marker calls
 * access("/srd-mark/<name>/begin") ... access("/srd-mark/<name>/end"), for
 * srd_cq.sh to count the system calls in between under strace.
 */
#include <fcntl.h>

#include "srd_test.h"

static struct srd_ep A, B;
static struct ibv_ah *ah_ab;

static void send_one(struct ibv_qp *to, uint64_t wr_id, uint32_t len, unsigned int flags)
{
	srd_fill(A.buf, len, (uint32_t)wr_id);
	if (srd_post_send(A.qp, wr_id, srd_dest(ah_ab, to), A.buf, len, A.mr->lkey,
			  IBV_SEND_SIGNALED | flags))
		ksft_check(0, "post_send wr_id %llu", (unsigned long long)wr_id);
	srd_expect_send_ok(A.scq, wr_id, "send");
}

/* Get a CQ event within timeout_ms; NULL if none. */
static struct ibv_cq *get_event(struct ibv_comp_channel *ch, int timeout_ms, void **cq_ctx)
{
	struct ibv_cq *cq = NULL;

	if (!srd_fd_readable(ch->fd, timeout_ms))
		return NULL;
	if (ibv_get_cq_event(ch, &cq, cq_ctx))
		return NULL;
	return cq;
}

/* A UD QP of B's, at RTS, its receives completing on @rcq. */
static struct ibv_qp *ud_qp_on(struct ibv_cq *rcq, const char *what)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.send_cq = B.scq,
		.recv_cq = rcq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(B.pd, &ia);

	if (!qp || srd_qp_to_rts(qp, SRD_QKEY))
		srd_die(what, errno);
	return qp;
}

static void test_channel(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(B.ctx);
	struct ibv_cq *cq, *evcq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	void *cq_ctx = NULL;
	int i, flags, events = 0;

	ksft_check(ch != NULL, "ibv_create_comp_channel (errno %d)", ch ? 0 : errno);
	if (!ch)
		return;
	cq = ibv_create_cq(B.ctx, 32, (void *)0x5eed, ch, 0);
	ksft_check(cq != NULL, "ibv_create_cq on a channel (errno %d)", cq ? 0 : errno);
	if (!cq)
		return;
	qp = ud_qp_on(cq, "QP on the channel's CQ");
	flags = fcntl(ch->fd, F_GETFL);
	fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK);
	for (i = 0; i < 8; i++)
		srd_post_recv(qp, i, B.buf + i * 2048, 2048, B.mr->lkey);

	/* Next completion. */
	ksft_check_eq("ibv_req_notify_cq(next)", 0, ibv_req_notify_cq(cq, 0));
	ksft_check(!srd_fd_readable(ch->fd, 0), "no event before any completion");
	send_one(qp, 0, 64, 0);
	evcq = get_event(ch, SRD_TIMEOUT_MS, &cq_ctx);
	ksft_check(evcq == cq && cq_ctx == (void *)0x5eed,
		   "armed for the next completion: ibv_get_cq_event returns the CQ "
		   "and its context (cq %p ctx %p)", (void *)evcq, cq_ctx);
	events += evcq != NULL;
	ksft_check(srd_poll(cq, &wc, SRD_TIMEOUT_MS) == 1 && wc.wr_id == 0 &&
		   wc.status == IBV_WC_SUCCESS, "the completion that raised it polls");

	/* Not re-armed: a completion raises nothing. */
	send_one(qp, 1, 64, 0);
	ksft_check(srd_poll(cq, &wc, SRD_TIMEOUT_MS) == 1 && wc.wr_id == 1,
		   "completion on an unarmed CQ");
	ksft_check(!srd_fd_readable(ch->fd, SRD_QUIET_MS),
		   "no event from a CQ that was not re-armed");

	/* Solicited only: a plain send does not wake it, a solicited one does. */
	ksft_check_eq("ibv_req_notify_cq(solicited only)", 0, ibv_req_notify_cq(cq, 1));
	send_one(qp, 2, 64, 0);
	ksft_check(srd_poll(cq, &wc, SRD_TIMEOUT_MS) == 1 && wc.wr_id == 2,
		   "non-solicited message completes");
	ksft_check(!srd_fd_readable(ch->fd, SRD_QUIET_MS),
		   "a non-solicited receive does not wake a solicited-only CQ");
	send_one(qp, 3, 64, IBV_SEND_SOLICITED);
	evcq = get_event(ch, SRD_TIMEOUT_MS, &cq_ctx);
	ksft_check(evcq == cq, "a solicited receive wakes a solicited-only CQ");
	events += evcq != NULL;
	ksft_check(srd_poll(cq, &wc, SRD_TIMEOUT_MS) == 1 && wc.wr_id == 3,
		   "the solicited completion polls");

	/* Armed for next: a solicited send also counts as a completion. */
	ksft_check_eq("re-arm for next", 0, ibv_req_notify_cq(cq, 0));
	send_one(qp, 4, 64, IBV_SEND_SOLICITED);
	evcq = get_event(ch, SRD_TIMEOUT_MS, &cq_ctx);
	ksft_check(evcq == cq, "event after re-arming");
	events += evcq != NULL;
	srd_poll(cq, &wc, SRD_TIMEOUT_MS);

	/* Two arms, one completion: one event. */
	ibv_req_notify_cq(cq, 0);
	ibv_req_notify_cq(cq, 0);
	send_one(qp, 5, 64, 0);
	evcq = get_event(ch, SRD_TIMEOUT_MS, &cq_ctx);
	events += evcq != NULL;
	srd_poll(cq, &wc, SRD_TIMEOUT_MS);
	ksft_check(evcq == cq && !srd_fd_readable(ch->fd, SRD_QUIET_MS),
		   "arming twice gives one event");

	ibv_ack_cq_events(cq, events);
	ksft_check_eq("events seen", 4, events);
	ksft_check_eq("destroy the QP", 0, ibv_destroy_qp(qp));
	/* ibv_destroy_cq waits for every event to be acked: this returns. */
	ksft_check_eq("destroy the CQ after ibv_ack_cq_events", 0, ibv_destroy_cq(cq));
	ksft_check_eq("destroy the channel", 0, ibv_destroy_comp_channel(ch));
}

static void test_overflow(void)
{
	long long overflows = srd_counter(B.name, "cq_overflows");
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 256,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_async_event ev;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	int cqe, extra = 4, i, n, in_order = 1, intact = 1, flags, got_event = 0;
	long long end;

	cq = ibv_create_cq(B.ctx, 8, NULL, NULL, 0);
	if (!cq)
		srd_die("ibv_create_cq(8)", errno);
	cqe = cq->cqe;
	printf("# ibv_create_cq(8) gave cqe %d\n", cqe);
	ksft_check(cqe >= 8 && cqe <= 200, "cqe %d holds what was asked", cqe);
	ia.send_cq = B.scq;
	ia.recv_cq = cq;
	qp = ibv_create_qp(B.pd, &ia);
	if (!qp || srd_qp_to_rts(qp, SRD_QKEY))
		srd_die("QP on the small CQ", errno);
	for (i = 0; i < cqe + extra; i++)
		srd_post_recv(qp, i, B.buf + i * 256, 256, B.mr->lkey);
	for (i = 0; i < cqe + extra; i++) {
		srd_fill(A.buf + i * 256, 100, 1000 + i);
		if (srd_post_send(A.qp, i, srd_dest(ah_ab, qp), A.buf + i * 256, 100,
				  A.mr->lkey, IBV_SEND_SIGNALED))
			break;
		srd_expect_send_ok(A.scq, i, "send to the small CQ");
	}

	flags = fcntl(B.ctx->async_fd, F_GETFL);
	fcntl(B.ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	end = srd_now_ms() + SRD_TIMEOUT_MS;
	while (srd_now_ms() < end) {
		if (!srd_fd_readable(B.ctx->async_fd, 100))
			continue;
		if (ibv_get_async_event(B.ctx, &ev))
			continue;
		printf("# async event: %s\n", ibv_event_type_str(ev.event_type));
		if (ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq)
			got_event = 1;
		ibv_ack_async_event(&ev);
		if (got_event)
			break;
	}
	ksft_check(got_event, "CQ overflow raises IBV_EVENT_CQ_ERR for the CQ");
	ksft_check(srd_counter(B.name, "cq_overflows") > overflows,
		   "hw_counters/cq_overflows rises (was %lld, now %lld)", overflows,
		   srd_counter(B.name, "cq_overflows"));

	for (n = 0; n < cqe + extra; n++) {
		int rc = ibv_poll_cq(cq, 1, &wc);

		if (rc != 1)
			break;
		if (wc.wr_id != (uint64_t)n) {
			if (in_order)
				printf("# entry %d has wr_id %llu\n", n,
				       (unsigned long long)wc.wr_id);
			in_order = 0;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.byte_len != 100 + SRD_GRH ||
		    srd_check_fill(B.buf + wc.wr_id * 256 + SRD_GRH, 100,
				   1000 + wc.wr_id) >= 0) {
			if (intact)
				printf("# entry %d: %s byte_len %u\n", n,
				       ibv_wc_status_str(wc.status), wc.byte_len);
			intact = 0;
		}
	}
	printf("# %d entries polled back after the overflow\n", n);
	ksft_check(n >= 8 && n <= cqe + 1,
		   "the entries queued before the overflow poll back: expected "
		   "8..%d, saw %d", cqe + 1, n);
	ksft_check(in_order, "they poll back in order");
	ksft_check(intact, "they are intact (SUCCESS, byte_len 140, data)");
	ibv_destroy_qp(qp);
	ksft_check_eq("destroy the overflowed CQ", 0, ibv_destroy_cq(cq));
}

static void test_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 32,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID |
			    IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(B.ctx, &ca);
	struct ibv_qp *qp;
	long long end;
	int rc, i;
	static const struct { uint32_t len; bool imm; } msg[3] = {
		{ 100, false }, { 200, true }, { 0, false },
	};

	ksft_check(cqx != NULL, "ibv_create_cq_ex with byte_len, imm, src_qp, slid, "
		   "qp_num (errno %d)", cqx ? 0 : errno);
	if (!cqx)
		return;
	ia.send_cq = B.scq;
	ia.recv_cq = ibv_cq_ex_to_cq(cqx);
	qp = ibv_create_qp(B.pd, &ia);
	if (!qp || srd_qp_to_rts(qp, SRD_QKEY))
		srd_die("QP on the cq_ex", errno);

	end = srd_now_ms() + SRD_TIMEOUT_MS;
	rc = ibv_start_poll(cqx, &pa);
	ksft_check(rc == ENOENT, "ibv_start_poll on an empty CQ: expected ENOENT, saw %d", rc);
	if (rc == 0)
		ibv_end_poll(cqx);

	for (i = 0; i < 3; i++)
		srd_post_recv(qp, 200 + i, B.buf + i * 1024, 1024, B.mr->lkey);
	for (i = 0; i < 3; i++) {
		struct ibv_sge sg = { (uintptr_t)(A.buf + i * 1024), msg[i].len, A.mr->lkey };

		srd_fill(A.buf + i * 1024, msg[i].len, 200 + i);
		srd_post_send_sge(A.qp, 200 + i, srd_dest(ah_ab, qp), &sg, msg[i].len ? 1 : 0,
				  msg[i].imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				  0xc0ffee00 + i, IBV_SEND_SIGNALED);
		srd_expect_send_ok(A.scq, 200 + i, "send to the cq_ex");
	}
	/* Wait until the three are in: ibv_start_poll then sees all three. */
	do {
		rc = ibv_start_poll(cqx, &pa);
		if (rc == 0) {
			int k = 0;

			do {
				uint32_t flags = ibv_wc_read_wc_flags(cqx);

				ksft_check(cqx->status == IBV_WC_SUCCESS &&
					   cqx->wr_id == (uint64_t)(200 + k),
					   "cq_ex entry %d: expected SUCCESS wr_id %d, saw %s "
					   "wr_id %llu", k, 200 + k,
					   ibv_wc_status_str(cqx->status),
					   (unsigned long long)cqx->wr_id);
				ksft_check_eq("ibv_wc_read_opcode", IBV_WC_RECV,
					      ibv_wc_read_opcode(cqx));
				ksft_check_eq("ibv_wc_read_byte_len", msg[k].len + SRD_GRH,
					      ibv_wc_read_byte_len(cqx));
				ksft_check_eq("ibv_wc_read_src_qp", A.qp->qp_num,
					      ibv_wc_read_src_qp(cqx));
				ksft_check_eq("ibv_wc_read_qp_num", qp->qp_num,
					      ibv_wc_read_qp_num(cqx));
				ksft_check_eq("ibv_wc_read_slid (no AH to the sender)",
					      SRD_NO_AH_SLID, ibv_wc_read_slid(cqx));
				ksft_check(flags & IBV_WC_GRH,
					   "ibv_wc_read_wc_flags has IBV_WC_GRH (0x%x)", flags);
				if (msg[k].imm) {
					ksft_check((flags & IBV_WC_WITH_IMM) &&
						   ntohl(ibv_wc_read_imm_data(cqx)) ==
						   0xc0ffee00u + k,
						   "ibv_wc_read_imm_data: expected 0x%x, saw "
						   "flags 0x%x imm 0x%x", 0xc0ffee00u + k,
						   flags, ntohl(ibv_wc_read_imm_data(cqx)));
				} else {
					ksft_check(!(flags & IBV_WC_WITH_IMM),
						   "no IBV_WC_WITH_IMM on entry %d", k);
				}
				ksft_check(srd_check_fill(B.buf + k * 1024 + SRD_GRH,
							  msg[k].len, 200 + k) < 0,
					   "cq_ex entry %d: payload intact", k);
				k++;
			} while (k < 3 && (rc = ibv_next_poll(cqx)) == 0);
			ibv_end_poll(cqx);
			ksft_check_eq("entries read with ibv_start_poll/ibv_next_poll", 3, k);
			break;
		}
	} while (rc == ENOENT && srd_now_ms() < end);
	ksft_check(rc == 0 || rc == ENOENT,
		   "ibv_start_poll/ibv_next_poll return 0 or ENOENT (saw %d)", rc);
	rc = ibv_start_poll(cqx, &pa);
	ksft_check(rc == ENOENT, "drained cq_ex: ibv_start_poll ENOENT (saw %d)", rc);
	if (rc == 0)
		ibv_end_poll(cqx);
	ibv_destroy_qp(qp);
	ksft_check_eq("destroy the cq_ex", 0, ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
}

/* Wait until B's rx_packets reaches @want: the receive's CQE is written. */
static bool wait_rx_packets(long long want)
{
	long long end = srd_now_ms() + SRD_TIMEOUT_MS;

	while (srd_counter(B.name, "rx_packets") < want) {
		if (srd_now_ms() >= end)
			return false;
		srd_sleep_ms(1);
	}
	return true;
}

/*
 * A CQ holding, in order, receive completions of QPs D, L, D, L (wr_id 1
 * to 4); D is then destroyed.  Its CQEs are refused as libefa refuses
 * them ("Invalid QP", rdma-core providers/efa/verbs.c): consumed, with
 * ibv_poll_cq returning -EINVAL when one comes first and the completions
 * before it otherwise, ibv_start_poll and ibv_next_poll EINVAL.
 * libfabric's efa provider destroys its QP and then drains the CQ, relying
 * on this.  @ex: poll with ibv_start_poll/ibv_next_poll.
 */
/*
 * The CQEs of a destroyed QP: refused as libefa refuses them in the efa
 * profiles (@refuses), skipped silently in the softsrd profile.
 */
static void test_destroyed_qp(bool ex, bool refuses)
{
	const char *api = ex ? "ibv_start_poll" : "ibv_poll_cq";
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(B.ctx, &ca);
	struct ibv_poll_cq_attr pa = {};
	struct ibv_qp *dead, *live, *to;
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	long long rx;
	uint32_t live_qpn;
	int rc, i;

	if (!cqx)
		srd_die("ibv_create_cq_ex", errno);
	cq = ibv_cq_ex_to_cq(cqx);
	ia.send_cq = B.scq;
	ia.recv_cq = cq;
	dead = ibv_create_qp(B.pd, &ia);
	live = ibv_create_qp(B.pd, &ia);
	if (!dead || !live || srd_qp_to_rts(dead, SRD_QKEY) ||
	    srd_qp_to_rts(live, SRD_QKEY))
		srd_die("QPs on the CQ", errno);
	live_qpn = live->qp_num;

	rx = srd_counter(B.name, "rx_packets");
	for (i = 1; i <= 4; i++) {
		to = i % 2 ? dead : live;
		srd_post_recv(to, i, B.buf + i * 1024, 1024, B.mr->lkey);
		send_one(to, i, 64, 0);
		ksft_check(wait_rx_packets(rx + i),
			   "%s: receive %d of D, L, D, L is in the CQ (rx_packets)",
			   api, i);
	}
	ksft_check_eq("destroy QP D with completions in its CQ", 0,
		      ibv_destroy_qp(dead));

	if (!refuses) {
		/* softsrd: D's CQEs are skipped, L's come out in order. */
		if (!ex) {
			rc = ibv_poll_cq(cq, 4, wc);
			ksft_check(rc == 2 && wc[0].wr_id == 2 && wc[1].wr_id == 4 &&
				   wc[0].qp_num == live_qpn && wc[1].qp_num == live_qpn,
				   "ibv_poll_cq (softsrd profile): D's CQEs skipped, L's "
				   "two returned: expected 2 (wr_id 2, 4), saw %d", rc);
		} else {
			rc = ibv_start_poll(cqx, &pa);
			ksft_check(rc == 0 && cqx->wr_id == 2,
				   "ibv_start_poll (softsrd profile): D's CQE skipped: "
				   "expected 0 (wr_id 2), saw %d (wr_id %llu)", rc,
				   rc ? 0ULL : (unsigned long long)cqx->wr_id);
			if (rc == 0) {
				rc = ibv_next_poll(cqx);
				ksft_check(rc == 0 && cqx->wr_id == 4,
					   "ibv_next_poll (softsrd profile): D's CQE skipped: "
					   "expected 0 (wr_id 4), saw %d", rc);
				if (rc == 0)
					ksft_check_eq("ibv_next_poll past the last (ENOENT)",
						      ENOENT, ibv_next_poll(cqx));
				ibv_end_poll(cqx);
			}
		}
		rc = ibv_poll_cq(cq, 4, wc);
		ksft_check_eq("ibv_poll_cq: drained", 0, rc);
	} else if (!ex) {
		rc = ibv_poll_cq(cq, 4, wc);
		ksft_check(rc == -EINVAL,
			   "ibv_poll_cq, D's CQE first: expected -EINVAL, saw %d", rc);
		rc = ibv_poll_cq(cq, 4, wc);
		ksft_check(rc == 1 && wc[0].wr_id == 2 && wc[0].qp_num == live_qpn &&
			   wc[0].status == IBV_WC_SUCCESS,
			   "ibv_poll_cq: L's CQE, then D's refused: expected 1 (wr_id 2), "
			   "saw %d (wr_id %llu)", rc,
			   rc > 0 ? (unsigned long long)wc[0].wr_id : 0ULL);
		rc = ibv_poll_cq(cq, 4, wc);
		ksft_check(rc == 1 && wc[0].wr_id == 4 && wc[0].qp_num == live_qpn,
			   "ibv_poll_cq: D's refused CQE was consumed: expected 1 "
			   "(wr_id 4), saw %d (wr_id %llu)", rc,
			   rc > 0 ? (unsigned long long)wc[0].wr_id : 0ULL);
		rc = ibv_poll_cq(cq, 4, wc);
		ksft_check_eq("ibv_poll_cq: drained", 0, rc);
	} else {
		rc = ibv_start_poll(cqx, &pa);
		ksft_check(rc == EINVAL,
			   "ibv_start_poll, D's CQE first: expected EINVAL, saw %d", rc);
		if (rc == 0)
			ibv_end_poll(cqx);
		rc = ibv_start_poll(cqx, &pa);
		ksft_check(rc == 0 && cqx->wr_id == 2 &&
			   ibv_wc_read_qp_num(cqx) == live_qpn,
			   "ibv_start_poll: L's CQE: expected 0 (wr_id 2), saw %d "
			   "(wr_id %llu)", rc, rc ? 0ULL : (unsigned long long)cqx->wr_id);
		if (rc == 0) {
			rc = ibv_next_poll(cqx);
			ksft_check(rc == EINVAL,
				   "ibv_next_poll, D's CQE: expected EINVAL, saw %d", rc);
			ibv_end_poll(cqx);
		}
		rc = ibv_start_poll(cqx, &pa);
		ksft_check(rc == 0 && cqx->wr_id == 4,
			   "ibv_start_poll: D's refused CQE was consumed: expected 0 "
			   "(wr_id 4), saw %d (wr_id %llu)", rc,
			   rc ? 0ULL : (unsigned long long)cqx->wr_id);
		if (rc == 0) {
			rc = ibv_next_poll(cqx);
			ksft_check(rc == ENOENT,
				   "ibv_next_poll past the last: expected ENOENT, saw %d", rc);
			ibv_end_poll(cqx);
		}
		rc = ibv_start_poll(cqx, &pa);
		ksft_check(rc == ENOENT, "ibv_start_poll: drained: expected ENOENT, "
			   "saw %d", rc);
		if (rc == 0)
			ibv_end_poll(cqx);
	}
	srd_drain(cq);
	ksft_check_eq("destroy QP L", 0, ibv_destroy_qp(live));
	ksft_check_eq("destroy the CQ", 0, ibv_destroy_cq(cq));
}

static void mark(const char *name, const char *edge)
{
	char path[128];

	snprintf(path, sizeof(path), "/srd-mark/%s/%s", name, edge);
	(void)!access(path, F_OK);
}

static int syscalls_mode(int n)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 512, .max_recv_wr = 512,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_send_wr wrs[8], *bad;
	struct ibv_sge sg[8];
	struct ibv_wc wc[16];
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	int i, got = 0, sent_ok = 0, rc = 0, polls = 0;
	long long end;

	if (n > 240)
		n = 240;
	rcq = ibv_create_cq(B.ctx, 512, NULL, NULL, 0);
	scq = ibv_create_cq(A.ctx, 512, NULL, NULL, 0);
	if (!rcq || !scq)
		srd_die("ibv_create_cq", errno);
	ia.send_cq = B.scq;
	ia.recv_cq = rcq;
	qp = ibv_create_qp(B.pd, &ia);
	if (!qp || srd_qp_to_rts(qp, SRD_QKEY))
		srd_die("receiving QP", errno);
	ibv_destroy_qp(A.qp);
	ia.send_cq = scq;
	ia.recv_cq = A.rcq;
	A.qp = ibv_create_qp(A.pd, &ia);
	if (!A.qp || srd_qp_to_rts(A.qp, SRD_QKEY))
		srd_die("sending QP", errno);

	mark("post_recv", "begin");
	for (i = 0; i < n + 8; i++)
		rc = srd_post_recv(qp, i, B.buf + i * 256, 256, B.mr->lkey);
	mark("post_recv", "end");

	mark("poll_empty", "begin");
	for (i = 0; i < n; i++)
		rc = ibv_poll_cq(rcq, 16, wc);
	mark("poll_empty", "end");
	ksft_check_eq("empty polls return 0", 0, rc);

	mark("post_send", "begin");
	for (i = 0; i < n; i++)
		sent_ok += !srd_post_send(A.qp, i, srd_dest(ah_ab, qp), A.buf, 64,
					  A.mr->lkey, IBV_SEND_SIGNALED);
	mark("post_send", "end");
	ksft_check_eq("single-WR post_send calls accepted", n, sent_ok);

	for (i = 0; i < 8; i++) {
		sg[i] = (struct ibv_sge){ (uintptr_t)A.buf, 64, A.mr->lkey };
		wrs[i] = (struct ibv_send_wr){
			.wr_id = n + i, .sg_list = &sg[i], .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.next = i < 7 ? &wrs[i + 1] : NULL,
			.wr.ud = { ah_ab, qp->qp_num, SRD_QKEY },
		};
	}
	mark("post_send_list8", "begin");
	rc = ibv_post_send(A.qp, wrs, &bad);
	mark("post_send_list8", "end");
	ksft_check_eq("post_send of a list of 8 WRs", 0, rc);

	/* Reap: a busy loop of polls, no clock, no yield. */
	mark("poll_full", "begin");
	for (polls = 0; got < n + 8 && polls < 200000000; polls++) {
		rc = ibv_poll_cq(rcq, 16, wc);
		if (rc < 0)
			break;
		got += rc;
	}
	mark("poll_full", "end");
	printf("# %d receive completions reaped in %d polls\n", got, polls);
	ksft_check_eq("receive completions reaped", n + 8, got);
	end = srd_now_ms() + SRD_TIMEOUT_MS;
	for (i = 0; i < n + 8 && srd_now_ms() < end;) {
		rc = ibv_poll_cq(scq, 16, wc);
		if (rc < 0)
			break;
		i += rc;
	}
	ksft_check_eq("send completions", n + 8, i);
	ibv_destroy_qp(qp);
	ibv_destroy_qp(A.qp);
	A.qp = NULL;
	ibv_destroy_cq(rcq);
	ibv_destroy_cq(scq);
	return 0;
}

/* Whether @dev's limits profile is an efa one (sysfs limits_profile). */
static bool srd_efa_profile(const char *dev)
{
	char path[256], name[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/limits_profile", dev);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%31s", name) != 1)
		srd_die(path, errno ? errno : EIO);
	fclose(f);
	return strncmp(name, "efa", 3) == 0;
}

/* The CPUs the kernel may ever run: /sys/devices/system/cpu/possible. */
static int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int n = 0, a, b;
	char sep;

	if (!f)
		return -1;
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-' &&
		    fscanf(f, "%d", &b) == 1)
			(void)(fscanf(f, "%c", &sep));
		n += b - a + 1;
	}
	fclose(f);
	return n;
}

/*
 * Completion vectors: one a possible CPU, as rxe and siw have them; a CQ
 * takes the last one and its events come; one past it is refused.
 */
static void test_comp_vectors(void)
{
	int n = B.ctx->num_comp_vectors, cpus = possible_cpus();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(B.ctx);
	struct ibv_cq *cq, *bad, *evcq;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	void *cq_ctx = NULL;

	ksft_check(n == cpus, "num_comp_vectors %d: one a possible CPU (%d)", n, cpus);
	if (!ch || n < 1)
		srd_die("a completion channel", errno);
	errno = 0;
	bad = ibv_create_cq(B.ctx, 4, NULL, ch, n);
	ksft_check(!bad && errno == EINVAL,
		   "a CQ on vector %d, one past the last, refused EINVAL (errno %d)", n, errno);
	if (bad)
		ibv_destroy_cq(bad);
	cq = ibv_create_cq(B.ctx, 4, (void *)0x7ec, ch, n - 1);
	ksft_check(cq != NULL, "a CQ on the last vector, %d (errno %d)", n - 1, cq ? 0 : errno);
	if (!cq)
		return;
	qp = ud_qp_on(cq, "QP on the last vector's CQ");
	srd_post_recv(qp, 9, B.buf, 2048, B.mr->lkey);
	ksft_check_eq("ibv_req_notify_cq on the last vector", 0, ibv_req_notify_cq(cq, 0));
	send_one(qp, 9, 64, 0);
	evcq = get_event(ch, SRD_TIMEOUT_MS, &cq_ctx);
	ksft_check(evcq == cq && cq_ctx == (void *)0x7ec,
		   "the last vector's CQ raises its event (cq %p)", (void *)evcq);
	if (evcq)
		ibv_ack_cq_events(cq, 1);
	ksft_check(srd_poll(cq, &wc, SRD_TIMEOUT_MS) == 1 && wc.wr_id == 9 &&
		   wc.status == IBV_WC_SUCCESS, "and its completion polls");
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
}

int main(int argc, char **argv)
{
	bool only_destroyed = false, refuses;
	int nsys = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 6 && !strcmp(argv[1], "--destroyed-qp")) {
		only_destroyed = true;
		argv++;
		argc--;
	}
	if (argc == 7 && !strcmp(argv[1], "--syscalls")) {
		nsys = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: %s [--syscalls N | --destroyed-qp] DEV_A IP_A DEV_B IP_B\n", argv[0]);
		return KSFT_FAIL;
	}
	srd_ep_open(&A, argv[1], argv[2]);
	srd_ep_open(&B, argv[3], argv[4]);
	ah_ab = srd_ah(&A, &B);

	refuses = srd_efa_profile(B.name);
	if (nsys) {
		syscalls_mode(nsys);
	} else if (only_destroyed) {
		test_destroyed_qp(false, refuses);
		test_destroyed_qp(true, refuses);
	} else {
		test_channel();
		test_comp_vectors();
		test_overflow();
		test_cq_ex();
		test_destroyed_qp(false, refuses);
		test_destroyed_qp(true, refuses);
	}
	ibv_destroy_ah(ah_ab);
	srd_ep_close(&A);
	srd_ep_close(&B);
	return ksft_exit();
}
