// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The efa-gen3 limits profile as an EFA program built on rdma-core 64's
 * efadv.h (libfabric 2.x's) sees it, on two srd devices made in it, under
 * srd-efa-run: efa-gen2's limits and caps with unsolicited write recv
 * (EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV), and what that means:
 *  - a QP made with EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV takes an RDMA
 *    write with immediate without a receive: with none posted, and with
 *    one posted, which it leaves for the next send; the completion is
 *    RECV_RDMA_WITH_IMM with wr_id 0, efadv_wc_is_unsolicited() true, on
 *    ibv_poll_cq() too;
 *  - a QP of the same device made without it still consumes a receive:
 *    with none posted the write waits (RNR) and completes nothing, and
 *    once one is posted it completes with that receive's wr_id.
 *
 *   srd_efadv_gen3 DEV_A IP_A DEV_B IP_B
 */
#include "efadv_abi.h"
#include "srd_test.h"

#define BUF_BYTES	(1u << 16)
#define WRITE_BYTES	3000u

/* --- the profile's figures ------------------------------------------------ */

static void test_device(struct ibv_context *ctx)
{
	const uint32_t caps = EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
			      EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
			      EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID |
			      EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE |
			      EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV;
	struct efadv_device_attr da = {};
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	uint8_t buf[32];
	int rc;

	rc = efadv_query_device(ctx, &da, sizeof(da));
	if (rc)
		srd_die("efadv_query_device", rc);
	ksft_check(da.device_caps == caps,
		   "device_caps: expected %#x (RDMA read and write, RNR retry, "
		   "CQ with SGID, unsolicited write recv), saw %#x", caps,
		   da.device_caps);
	ksft_check(da.max_sq_sge == 2 && da.max_rq_sge == 3 &&
		   da.inline_buf_size == 32 && da.inline_buf_size_ex == 32 &&
		   da.max_rdma_size == 1u << 30,
		   "SGEs 2/3, inline 32 (ex 32), max_rdma_size 1 GiB: saw %u/%u, "
		   "%u (ex %u), %u", da.max_sq_sge, da.max_rq_sge,
		   da.inline_buf_size, da.inline_buf_size_ex, da.max_rdma_size);
	/* libefa sets the bit with device_caps, the RDMA bits with max_rdma_size. */
	memset(buf, 0xa5, sizeof(buf));
	rc = efadv_query_device(ctx, (void *)buf, 28);
	memcpy(&da, buf, 28);
	ksft_check(rc == 0 && da.device_caps ==
		   (caps & ~(uint32_t)(EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
				       EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE)),
		   "efadv_query_device inlen 28: UNSOLICITED_WRITE_RECV without "
		   "the RDMA bits (rc %d, caps %#x)", rc, da.device_caps);
	if (ibv_query_device(ctx, &dattr))
		srd_die("ibv_query_device", errno);
	if (ibv_query_port(ctx, 1, &pattr))
		srd_die("ibv_query_port", errno);
	ksft_check(dattr.max_sge_rd == 1 && pattr.max_msg_sz == 8928,
		   "max_sge_rd 1 and max_msg_sz 8928 (EFA's, whatever the MTU): "
		   "saw %d and %u", dattr.max_sge_rd, pattr.max_msg_sz);
}

/* --- one side: a device, its CQ, one QP or two ---------------------------- */

struct side {
	const char *dev;
	struct ibv_context *ctx;
	union ibv_gid gid;
	int gidx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct efadv_cq *dv_cq;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static void side_open(struct side *s, const char *dev, const char *ip)
{
	struct efadv_cq_init_attr ca = {
		.wc_flags = EFADV_WC_EX_WITH_SGID |
			    EFADV_WC_EX_WITH_IS_UNSOLICITED,
	};
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};

	s->dev = dev;
	s->ctx = srd_open(dev);
	s->gidx = srd_find_gid(s->ctx, ip, &s->gid);
	if (s->gidx < 0)
		srd_die("no GID for the address", ENOENT);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		srd_die("ibv_alloc_pd", errno);
	/* libfabric 2.x asks for both where the device has them. */
	s->cq = efadv_create_cq(s->ctx, &cattr, &ca, sizeof(ca));
	if (!s->cq)
		srd_die("efadv_create_cq WITH_SGID | WITH_IS_UNSOLICITED", errno);
	s->dv_cq = efadv_cq_from_ibv_cq_ex(s->cq);
	ksft_check(s->dv_cq && s->dv_cq->wc_is_unsolicited,
		   "%s: efadv_create_cq WITH_IS_UNSOLICITED: wc_is_unsolicited set",
		   dev);
	s->buf = aligned_alloc(4096, BUF_BYTES);
	if (!s->buf)
		srd_die("aligned_alloc", ENOMEM);
	memset(s->buf, 0, BUF_BYTES);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		srd_die("ibv_reg_mr", errno);
}

static void side_close(struct side *s)
{
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq));
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

/* An SRD QP of @s in RTS, with efadv @flags, or NULL with errno set. */
static struct ibv_qp *qp_new(struct side *s, uint16_t flags)
{
	struct efadv_qp_init_attr q = {
		.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD, .flags = flags,
	};
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_DRIVER, .send_cq = ibv_cq_ex_to_cq(s->cq),
		.recv_cq = ibv_cq_ex_to_cq(s->cq),
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
	};
	struct ibv_qp *qp;
	int rc;

	qp = efadv_create_qp_ex(s->ctx, &a, &q, sizeof(q));
	if (!qp)
		return NULL;
	/* rnr_retry 7: a write that finds no receive waits for one. */
	rc = srd_qp_to_rts_rnr(qp, SRD_QKEY, 7);
	if (rc)
		srd_die("the QP to RTS", rc);
	return qp;
}

struct wc {
	bool got;
	int status;
	int opcode;
	uint64_t wr_id;
	uint32_t byte_len;
	unsigned int wc_flags;
	uint32_t imm_data;		/* host order */
	bool unsolicited;
};

/* One completion of @s's CQ within @ms, through the extended API. */
static struct wc poll_one(struct side *s, int ms)
{
	struct ibv_poll_cq_attr pa = {};
	long long end = srd_now_ms() + ms;
	struct wc w = {};
	int rc;

	do {
		rc = ibv_start_poll(s->cq, &pa);
	} while (rc == ENOENT && srd_now_ms() < end);
	if (rc) {
		w.status = rc;
		return w;
	}
	w.got = true;
	w.status = s->cq->status;
	w.wr_id = s->cq->wr_id;
	w.opcode = ibv_wc_read_opcode(s->cq);
	w.byte_len = ibv_wc_read_byte_len(s->cq);
	w.wc_flags = ibv_wc_read_wc_flags(s->cq);
	w.imm_data = w.wc_flags & IBV_WC_WITH_IMM ?
		     be32toh(ibv_wc_read_imm_data(s->cq)) : 0;
	w.unsolicited = efadv_wc_is_unsolicited(s->dv_cq);
	ibv_end_poll(s->cq);
	return w;
}

/* A write with immediate @imm of WRITE_BYTES at @off of @to's buffer. */
static void write_imm(struct ibv_qp *qp, uint64_t wr_id, struct ibv_ah *ah,
		      struct side *from, struct side *to, struct ibv_qp *dst,
		      uint32_t off, uint32_t imm)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	int rc;

	srd_fill(from->buf + off, WRITE_BYTES, imm);
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(qpx, to->mr->rkey, (uintptr_t)(to->buf + off),
			      htobe32(imm));
	ibv_wr_set_ud_addr(qpx, ah, dst->qp_num, SRD_QKEY);
	ibv_wr_set_sge(qpx, from->mr->lkey, (uintptr_t)(from->buf + off),
		       WRITE_BYTES);
	rc = ibv_wr_complete(qpx);
	if (rc)
		srd_die("ibv_wr_complete of a write with immediate", rc);
}

static void expect_write_done(struct side *a, uint64_t wr_id, const char *what)
{
	struct wc w = poll_one(a, SRD_TIMEOUT_MS);

	ksft_check(w.got && w.status == IBV_WC_SUCCESS &&
		   w.opcode == IBV_WC_RDMA_WRITE && w.wr_id == wr_id,
		   "%s: the writer's completion: SUCCESS RDMA_WRITE wr_id %llu "
		   "(saw %s, %s, %d, wr_id %llu)", what,
		   (unsigned long long)wr_id, w.got ? "one" : "none",
		   ibv_wc_status_str(w.status), w.opcode,
		   (unsigned long long)w.wr_id);
}

/* The target's completion of write @imm: unsolicited, or of receive @wr_id. */
static void expect_target(struct side *b, struct wc w, bool unsolicited,
			  uint64_t wr_id, uint32_t off, uint32_t imm,
			  const char *what)
{
	ksft_check(w.got && w.status == IBV_WC_SUCCESS &&
		   w.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		   w.wr_id == wr_id && w.unsolicited == unsolicited &&
		   w.byte_len == WRITE_BYTES && (w.wc_flags & IBV_WC_WITH_IMM) &&
		   w.imm_data == imm &&
		   srd_check_fill(b->buf + off, WRITE_BYTES, imm) < 0,
		   "%s: SUCCESS RECV_RDMA_WITH_IMM, wr_id %llu, unsolicited %d, "
		   "%u bytes at the rkey's address, imm %#x (saw %s, %s, %d, "
		   "wr_id %llu, unsolicited %d, %u bytes, flags %#x, imm %#x)",
		   what, (unsigned long long)wr_id, unsolicited, WRITE_BYTES, imm,
		   w.got ? "one" : "none", ibv_wc_status_str(w.status),
		   w.opcode, (unsigned long long)w.wr_id, w.unsolicited,
		   w.byte_len, w.wc_flags, w.imm_data);
}

/* --- a QP with unsolicited write recv ------------------------------------- */

static void test_unsolicited(struct side *a, struct side *b,
			     struct ibv_qp *qa, struct ibv_ah *ab)
{
	struct ibv_qp *qb = qp_new(b, EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV);
	struct ibv_qp_ex *qax = ibv_qp_to_qp_ex(qa);
	struct ibv_wc wc;
	struct wc w;
	int rc;

	ksft_check(qb != NULL, "efadv_create_qp_ex UNSOLICITED_WRITE_RECV: %s",
		   qb ? "a QP" : strerror(errno));
	if (!qb)
		return;

	/* No receive posted: the write completes at once, unsolicited. */
	write_imm(qa, 21, ab, a, b, qb, 0, 0x1001);
	expect_write_done(a, 21, "unsolicited, none posted");
	w = poll_one(b, SRD_TIMEOUT_MS);
	expect_target(b, w, true, 0, 0, 0x1001,
		      "unsolicited, no receive posted");

	/*
	 * A receive posted: the write leaves it, and so it is there for the
	 * send after.  This completion through ibv_poll_cq(), as a caller
	 * of the old API sees it: wr_id 0.
	 */
	if (srd_post_recv(qb, 7, b->buf + 32768, 4096, b->mr->lkey))
		srd_die("ibv_post_recv", errno);
	write_imm(qa, 22, ab, a, b, qb, 8192, 0x1002);
	expect_write_done(a, 22, "unsolicited, one posted");
	rc = srd_poll(ibv_cq_ex_to_cq(b->cq), &wc, SRD_TIMEOUT_MS);
	ksft_check(rc == 1 && wc.status == IBV_WC_SUCCESS &&
		   wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 0 &&
		   (wc.wc_flags & IBV_WC_WITH_IMM) &&
		   be32toh(wc.imm_data) == 0x1002 && wc.byte_len == WRITE_BYTES &&
		   wc.qp_num == qb->qp_num &&
		   srd_check_fill(b->buf + 8192, WRITE_BYTES, 0x1002) < 0,
		   "unsolicited, one posted, by ibv_poll_cq: SUCCESS "
		   "RECV_RDMA_WITH_IMM wr_id 0 imm 0x1002 (saw %d: %s, %d, wr_id "
		   "%llu, imm %#x)", rc, ibv_wc_status_str(wc.status), wc.opcode,
		   (unsigned long long)wc.wr_id, be32toh(wc.imm_data));

	/* The receive is still the first: a send takes it. */
	srd_fill(a->buf + 40960, 200, 5);
	ibv_wr_start(qax);
	qax->wr_id = 23;
	qax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qax);
	ibv_wr_set_ud_addr(qax, ab, qb->qp_num, SRD_QKEY);
	ibv_wr_set_sge(qax, a->mr->lkey, (uintptr_t)(a->buf + 40960), 200);
	rc = ibv_wr_complete(qax);
	if (rc)
		srd_die("ibv_wr_complete of a send", rc);
	w = poll_one(a, SRD_TIMEOUT_MS);
	ksft_check(w.got && w.status == IBV_WC_SUCCESS && w.wr_id == 23,
		   "the send after: SUCCESS (saw %s)", ibv_wc_status_str(w.status));
	w = poll_one(b, SRD_TIMEOUT_MS);
	ksft_check(w.got && w.status == IBV_WC_SUCCESS &&
		   w.opcode == IBV_WC_RECV && w.wr_id == 7 && !w.unsolicited &&
		   w.byte_len == 200 && srd_check_fill(b->buf + 32768, 200, 5) < 0,
		   "the send after takes receive 7, which the writes left: "
		   "SUCCESS RECV wr_id 7, not unsolicited, 200 bytes (saw %s, %d, "
		   "wr_id %llu, unsolicited %d, %u bytes)",
		   ibv_wc_status_str(w.status), w.opcode,
		   (unsigned long long)w.wr_id, w.unsolicited, w.byte_len);
	ibv_destroy_qp(qb);
}

/* --- a QP without it, on the same device ---------------------------------- */

static void test_solicited(struct side *a, struct side *b,
			   struct ibv_qp *qa, struct ibv_ah *ab)
{
	struct ibv_qp *qb = qp_new(b, 0);
	long long naks0, naks1;
	struct wc w;

	if (!qb)
		srd_die("efadv_create_qp_ex without flags", errno);

	/* No receive: the write waits for one (RNR), nothing completes. */
	naks0 = srd_counter(b->dev, "srd_rnr_naks_sent");
	write_imm(qa, 31, ab, a, b, qb, 16384, 0x2001);
	w = poll_one(b, 500);
	ksft_check(!w.got, "without the flag, no receive posted: no completion "
		   "at the target in 500 ms (saw %s, wr_id %llu)",
		   w.got ? "one" : "none", (unsigned long long)w.wr_id);
	w = poll_one(a, 1);
	ksft_check(!w.got, "without the flag, no receive posted: the write "
		   "has not completed (saw %s, %s)", w.got ? "one" : "none",
		   w.got ? ibv_wc_status_str(w.status) : "-");
	naks1 = srd_counter_wait(b->dev, "srd_rnr_naks_sent", naks0 + 1, 2000);
	ksft_check(naks0 >= 0 && naks1 > naks0,
		   "without the flag: %s answered the write RNR "
		   "(srd_rnr_naks_sent %lld -> %lld)", b->dev, naks0, naks1);

	/* A receive posted: the write takes it. */
	if (srd_post_recv(qb, 9, b->buf + 49152, 4096, b->mr->lkey))
		srd_die("ibv_post_recv", errno);
	expect_write_done(a, 31, "without the flag, once a receive is posted");
	w = poll_one(b, SRD_TIMEOUT_MS);
	expect_target(b, w, false, 9, 16384, 0x2001,
		      "without the flag, the write consumed receive 9");
	ibv_destroy_qp(qb);
}

/* --- efadv_create_qp_ex's and efadv_create_cq's checks -------------------- */

static void test_create(struct side *b)
{
	struct efadv_cq_init_attr ca = { .wc_flags = EFADV_WC_EX_WITH_SGID };
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_cq_ex *cq;
	struct efadv_cq *dv;
	struct ibv_qp *qp;

	qp = qp_new(b, EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV |
		       EFADV_QP_FLAGS_INLINE_WRITE);
	ksft_check(qp != NULL, "efadv_create_qp_ex UNSOLICITED_WRITE_RECV | "
		   "INLINE_WRITE: %s", qp ? "a QP" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
	errno = 0;
	qp = qp_new(b, 1 << 2);
	ksft_check(!qp && errno == EOPNOTSUPP,
		   "efadv_create_qp_ex an unknown flag (1 << 2): EOPNOTSUPP (saw %s)",
		   qp ? "a QP" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);

	/* As libefa, wc_is_unsolicited only on a CQ that asked for it. */
	cq = efadv_create_cq(b->ctx, &cattr, &ca, sizeof(ca));
	if (!cq)
		srd_die("efadv_create_cq WITH_SGID", errno);
	dv = efadv_cq_from_ibv_cq_ex(cq);
	ksft_check(dv && dv->wc_read_sgid && !dv->wc_is_unsolicited,
		   "efadv_create_cq without WITH_IS_UNSOLICITED: no wc_is_unsolicited");
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

int main(int argc, char **argv)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct side a = {}, b = {};
	long long w0, w1;
	struct ibv_ah *ab;
	struct ibv_qp *qa;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV_A IP_A DEV_B IP_B\n", argv[0]);
		return 2;
	}
	side_open(&a, argv[1], argv[2]);
	side_open(&b, argv[3], argv[4]);
	test_device(a.ctx);
	test_create(&b);

	qa = qp_new(&a, 0);
	if (!qa)
		srd_die("efadv_create_qp_ex (the writer's)", errno);
	aa.grh.dgid = b.gid;
	aa.grh.sgid_index = a.gidx;
	ab = ibv_create_ah(a.pd, &aa);
	if (!ab)
		srd_die("ibv_create_ah", errno);

	w0 = srd_counter(b.dev, "srd_rdma_writes_in");
	test_unsolicited(&a, &b, qa, ab);
	test_solicited(&a, &b, qa, ab);
	w1 = srd_counter(b.dev, "srd_rdma_writes_in");
	ksft_check(w0 >= 0 && w1 - w0 == 3,
		   "%s placed the 3 writes: srd_rdma_writes_in %lld -> %lld",
		   b.dev, w0, w1);

	ibv_destroy_ah(ab);
	ibv_destroy_qp(qa);
	side_close(&a);
	side_close(&b);
	return ksft_exit();
}
