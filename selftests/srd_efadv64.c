// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An EFA program built on rdma-core 64's efadv.h, as libfabric 2.x is, on
 * two srd devices: what rdma-core 64 added (EFA_1.3 to EFA_1.6, and the
 * grown efadv_qp_init_attr, efadv_cq_init_attr, efadv_cq and
 * efadv_device_attr), with every inlen edge and bad argument.  Built with
 * efa-compat's declarations of that ABI (efadv_abi.h; Debian 12's efadv.h
 * is rdma-core 44's) and linked with softsrd's libefa.so.1 as its -lefa,
 * so it binds efadv_*@EFA_1.3..1.6: the system's rdma-core 44 libefa
 * cannot load it (srd_efadv64.sh checks that too).
 *
 *   srd_efadv64 DEV_A IP_A DEV_B IP_B softsrd|efa-gen1|efa-gen2
 *   srd_efadv64 --foreign DEV real|absent
 *
 * The last argument is the devices' limits profile: efa-gen1 has no RDMA
 * write, so no EFADV_QP_FLAGS_INLINE_WRITE; softsrd and efa-gen2 have it,
 * and carry an inline RDMA write and a write with immediate, completed
 * with the opcodes libefa gives them (RDMA_WRITE, RECV_RDMA_WITH_IMM).
 *
 * --foreign: DEV is no srd device (rxe): each new entry point answers as
 * libefa does for a device that is not EFA, from the system's libefa when
 * it has them ("real": rdma-core 64's), or as it would ("absent": no
 * system libefa, or one older than them, as Debian 12's; srd_efadv.sh
 * says which).
 */
#define _GNU_SOURCE		/* dladdr */
#include <dlfcn.h>
#include <limits.h>

#include "efadv_abi.h"
#include "srd_test.h"

static bool rdma_write;		/* the profile has RDMA write */

/* Whether bytes [from, to) of p all equal v. */
static bool all_bytes(const void *p, size_t from, size_t to, uint8_t v)
{
	const uint8_t *b = p;
	size_t i;

	for (i = from; i < to; i++)
		if (b[i] != v)
			return false;
	return true;
}

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct efadv_device_attr da;
	struct ibv_device_attr dattr;
};

/* --- efadv_query_device: inline_buf_size_ex, the new caps ---------------- */

static void test_query_device(struct env *e)
{
	uint8_t buf[64];
	struct efadv_device_attr *a = (void *)buf;
	int rc;

	rc = efadv_query_device(e->ctx, a, 22);
	ksft_check_eq("efadv_query_device inlen 22 (inline_buf_size_ex missing): EINVAL",
		      EINVAL, rc);

	memset(buf, 0xa5, sizeof(buf));
	rc = efadv_query_device(e->ctx, a, 23);
	ksft_check(rc == 0 && !memcmp(&buf[22], &e->da.inline_buf_size_ex, 1) &&
		   all_bytes(buf, 23, sizeof(buf), 0xa5),
		   "efadv_query_device inlen 23: rc 0 (saw %d), the first byte of "
		   "inline_buf_size_ex, nothing past 23", rc);

	ksft_check(e->da.inline_buf_size_ex == e->da.inline_buf_size,
		   "inline_buf_size_ex %u is inline_buf_size %u (no larger inline)",
		   e->da.inline_buf_size_ex, e->da.inline_buf_size);
	ksft_check(!(e->da.device_caps &
		     (EFADV_DEVICE_ATTR_CAPS_UNSOLICITED_WRITE_RECV |
		      EFADV_DEVICE_ATTR_CAPS_CQ_WITH_EXT_MEM_DMABUF)),
		   "device_caps %#x has neither UNSOLICITED_WRITE_RECV nor "
		   "CQ_WITH_EXT_MEM_DMABUF", e->da.device_caps);
	ksft_check(!!(e->da.device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_WRITE) ==
		   rdma_write, "device_caps %#x: RDMA write in softsrd and "
		   "efa-gen2 only", e->da.device_caps);
}

/* --- EFA_1.3: efadv_query_mr -------------------------------------------- */

static void test_query_mr(struct env *e)
{
	static const uint32_t edges[] = { 15, 16, 64 };
	static uint8_t mem[4096];
	uint8_t buf[80];
	struct efadv_mr_attr *a = (void *)buf;
	struct ibv_mr *mr;
	unsigned int i;
	int rc;

	mr = ibv_reg_mr(e->pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		srd_die("ibv_reg_mr", errno);

	rc = efadv_query_mr(mr, a, 14);
	ksft_check_eq("efadv_query_mr inlen 14 (rdma_recv_ic_id missing): EINVAL",
		      EINVAL, rc);
	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		memset(buf, 0xa5, sizeof(buf));
		rc = efadv_query_mr(mr, a, edges[i]);
		ksft_check(rc == 0 && all_bytes(buf, 0, edges[i], 0) &&
			   all_bytes(buf, edges[i], sizeof(buf), 0xa5),
			   "efadv_query_mr inlen %u: rc 0 (saw %d), comp_mask 0 and "
			   "ic_id_validity 0 (no interconnect ids), zeroes to inlen "
			   "and nothing past", edges[i], rc);
	}
	rc = efadv_query_mr(NULL, a, sizeof(*a));
	ksft_check_eq("efadv_query_mr(NULL): EINVAL", EINVAL, rc);
	rc = efadv_query_mr(mr, NULL, sizeof(*a));
	ksft_check_eq("efadv_query_mr(mr, NULL attr): EINVAL", EINVAL, rc);
	ibv_dereg_mr(mr);
}

/* --- EFA_1.4: the hardware queues, which softsrd has not got --------------- */

static void test_query_queues(struct env *e, struct ibv_qp *qp)
{
	uint8_t sq[48], rq[48], cqa[48];
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct efadv_cq_init_attr ea = {};
	struct ibv_cq_ex *cqx;
	int rc;

	memset(sq, 0xa5, sizeof(sq));
	memset(rq, 0xa5, sizeof(rq));
	rc = efadv_query_qp_wqs(qp, (void *)sq, (void *)rq, 32);
	ksft_check_eq("efadv_query_qp_wqs inlen 32 (max_batch missing): EINVAL",
		      EINVAL, rc);
	rc = efadv_query_qp_wqs(qp, (void *)sq, (void *)rq, 33);
	ksft_check_eq("efadv_query_qp_wqs inlen 33: EOPNOTSUPP", EOPNOTSUPP, rc);
	rc = efadv_query_qp_wqs(qp, (void *)sq, (void *)rq, sizeof(struct efadv_wq_attr));
	ksft_check_eq("efadv_query_qp_wqs inlen 40: EOPNOTSUPP (softsrd's rings are "
		      "not EFA's descriptors)", EOPNOTSUPP, rc);
	ksft_check(all_bytes(sq, 0, sizeof(sq), 0xa5) && all_bytes(rq, 0, sizeof(rq), 0xa5),
		   "efadv_query_qp_wqs: nothing written");
	rc = efadv_query_qp_wqs(NULL, (void *)sq, (void *)rq, sizeof(struct efadv_wq_attr));
	ksft_check_eq("efadv_query_qp_wqs(NULL): EINVAL", EINVAL, rc);

	memset(cqa, 0xa5, sizeof(cqa));
	rc = efadv_query_cq(e->cq, (void *)cqa, 20);
	ksft_check_eq("efadv_query_cq inlen 20 (num_entries missing): EINVAL",
		      EINVAL, rc);
	rc = efadv_query_cq(e->cq, (void *)cqa, 21);
	ksft_check_eq("efadv_query_cq inlen 21: EOPNOTSUPP", EOPNOTSUPP, rc);
	cqx = efadv_create_cq(e->ctx, &ca, &ea, sizeof(ea));
	if (!cqx)
		srd_die("efadv_create_cq", errno);
	rc = efadv_query_cq(ibv_cq_ex_to_cq(cqx), (void *)cqa, sizeof(struct efadv_cq_attr));
	ksft_check_eq("efadv_query_cq of an efadv CQ, inlen 32: EOPNOTSUPP",
		      EOPNOTSUPP, rc);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	ksft_check(all_bytes(cqa, 0, sizeof(cqa), 0xa5), "efadv_query_cq: nothing written");
	rc = efadv_query_cq(NULL, (void *)cqa, sizeof(struct efadv_cq_attr));
	ksft_check_eq("efadv_query_cq(NULL): EINVAL", EINVAL, rc);
}

/* --- EFA_1.5: queue depths ---------------------------------------------- */

static int sq_depth(struct env *e, struct efadv_sq_depth_attr a, uint32_t inlen)
{
	return efadv_get_max_sq_depth(e->ctx, &a, inlen);
}

static int rq_depth(struct env *e, struct efadv_rq_depth_attr a, uint32_t inlen)
{
	return efadv_get_max_rq_depth(e->ctx, &a, inlen);
}

/* An SRD QP with @cap through the 64 API; NULL with errno if refused. */
static struct ibv_qp *qp64(struct env *e, struct ibv_qp_cap cap)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_DRIVER, .send_cq = e->cq, .recv_cq = e->cq,
		.cap = cap, .comp_mask = IBV_QP_INIT_ATTR_PD, .pd = e->pd,
	};
	struct efadv_qp_init_attr q = { .driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD };

	return efadv_create_qp_ex(e->ctx, &a, &q, sizeof(q));
}

static void expect_qp(struct ibv_qp *qp, int err, const char *what)
{
	int seen = errno;

	if (!err)
		ksft_check(qp != NULL, "%s: a QP, saw %s", what,
			   qp ? "a QP" : strerror(seen));
	else
		ksft_check(!qp && seen == err, "%s: %s, saw %s", what,
			   strerror(err), qp ? "a QP" : strerror(seen));
	if (qp)
		ibv_destroy_qp(qp);
}

static void test_depths(struct env *e)
{
	const struct efadv_device_attr *da = &e->da;
	struct efadv_sq_depth_attr s = { .max_send_sge = 1 };
	struct efadv_rq_depth_attr r = { .max_recv_sge = 1 };
	struct efadv_sq_depth_attr smax = {
		.flags = EFADV_SQ_DEPTH_ATTR_INLINE_WRITE,
		.max_send_sge = da->max_sq_sge,
		.max_rdma_sge = e->dattr.max_sge_rd,
		.max_inline_data = da->inline_buf_size_ex,
	};
	struct ibv_qp_cap cap;
	int sq, rq, rc;

	sq = sq_depth(e, s, sizeof(s));
	ksft_check(sq > 0 && (uint32_t)sq == da->max_sq_wr,
		   "efadv_get_max_sq_depth, 1 SGE: max_sq_wr %u, saw %d",
		   da->max_sq_wr, sq);
	rc = sq_depth(e, smax, sizeof(smax));
	ksft_check_eq("efadv_get_max_sq_depth at every limit, INLINE_WRITE: the same depth",
		      sq, rc);
	s.flags = 1u << 31;
	ksft_check_eq("efadv_get_max_sq_depth, an unknown flag (not read, as by libefa)",
		      sq, sq_depth(e, s, sizeof(s)));
	s.flags = 0;
	ksft_check_eq("efadv_get_max_sq_depth inlen 20 (max_inline_data missing): -EINVAL",
		      -EINVAL, sq_depth(e, s, 20));
	s.comp_mask = 1;
	ksft_check_eq("efadv_get_max_sq_depth comp_mask 1: -EINVAL", -EINVAL,
		      sq_depth(e, s, sizeof(s)));
	s.comp_mask = 0;
	s.max_send_sge = da->max_sq_sge + 1;
	ksft_check_eq("efadv_get_max_sq_depth max_send_sge above max_sq_sge: -EINVAL",
		      -EINVAL, sq_depth(e, s, sizeof(s)));
	s.max_send_sge = 1;
	s.max_rdma_sge = e->dattr.max_sge_rd + 1;
	ksft_check_eq("efadv_get_max_sq_depth max_rdma_sge above max_sge_rd: -EINVAL",
		      -EINVAL, sq_depth(e, s, sizeof(s)));
	s.max_rdma_sge = 0;
	s.max_inline_data = da->inline_buf_size_ex + 1;
	ksft_check_eq("efadv_get_max_sq_depth max_inline_data above inline_buf_size_ex: "
		      "-EINVAL", -EINVAL, sq_depth(e, s, sizeof(s)));
	/* 0x10001: only its first byte (1) is given by inlen 21. */
	s.max_inline_data = 0x10001;
	ksft_check_eq("efadv_get_max_sq_depth inlen 21: max_inline_data's first byte only",
		      sq, sq_depth(e, s, 21));
	ksft_check_eq("efadv_get_max_sq_depth inlen 24: max_inline_data 0x10001: -EINVAL",
		      -EINVAL, sq_depth(e, s, sizeof(s)));
	s.max_inline_data = 0;
	ksft_check_eq("efadv_get_max_sq_depth(NULL ctx): -EINVAL", -EINVAL,
		      efadv_get_max_sq_depth(NULL, &s, sizeof(s)));
	ksft_check_eq("efadv_get_max_sq_depth(ctx, NULL): -EINVAL", -EINVAL,
		      efadv_get_max_sq_depth(e->ctx, NULL, sizeof(s)));

	rq = rq_depth(e, r, sizeof(r));
	ksft_check(rq > 0 && (uint32_t)rq == da->max_rq_wr,
		   "efadv_get_max_rq_depth, 1 SGE: max_rq_wr %u, saw %d",
		   da->max_rq_wr, rq);
	r.max_recv_sge = da->max_rq_sge;
	ksft_check_eq("efadv_get_max_rq_depth at max_rq_sge: the same (softsrd's slots "
		      "hold every SGE)", rq, rq_depth(e, r, sizeof(r)));
	r.max_recv_sge = 0;
	ksft_check_eq("efadv_get_max_rq_depth, 0 SGEs: the same", rq,
		      rq_depth(e, r, sizeof(r)));
	ksft_check_eq("efadv_get_max_rq_depth inlen 12 (the offset of max_recv_sge is 8)",
		      rq, rq_depth(e, r, 12));
	ksft_check_eq("efadv_get_max_rq_depth inlen 8: -EINVAL", -EINVAL,
		      rq_depth(e, r, 8));
	r.comp_mask = 1;
	ksft_check_eq("efadv_get_max_rq_depth comp_mask 1: -EINVAL", -EINVAL,
		      rq_depth(e, r, sizeof(r)));
	r.comp_mask = 0;
	r.max_recv_sge = da->max_rq_sge + 1;
	ksft_check_eq("efadv_get_max_rq_depth max_recv_sge above max_rq_sge: -EINVAL",
		      -EINVAL, rq_depth(e, r, sizeof(r)));
	ksft_check_eq("efadv_get_max_rq_depth(NULL ctx): -EINVAL", -EINVAL,
		      efadv_get_max_rq_depth(NULL, &r, sizeof(r)));

	/* The depths are what efadv_create_qp_ex takes, at every limit. */
	if (sq <= 0 || rq <= 0)
		return;
	cap = (struct ibv_qp_cap){
		.max_send_wr = sq, .max_recv_wr = rq,
		.max_send_sge = da->max_sq_sge, .max_recv_sge = da->max_rq_sge,
		.max_inline_data = da->inline_buf_size_ex,
	};
	expect_qp(qp64(e, cap), 0, "efadv_create_qp_ex at both depths and every limit");
	cap.max_send_wr = sq + 1;
	expect_qp(qp64(e, cap), EINVAL, "efadv_create_qp_ex one past the SQ depth");
	cap.max_send_wr = sq;
	cap.max_recv_wr = rq + 1;
	expect_qp(qp64(e, cap), EINVAL, "efadv_create_qp_ex one past the RQ depth");
	cap.max_recv_wr = rq;
	cap.max_inline_data = da->inline_buf_size_ex + 1;
	expect_qp(qp64(e, cap), EINVAL,
		  "efadv_create_qp_ex max_inline_data above inline_buf_size_ex");
}

/* --- efadv_create_qp_ex with rdma-core 64's efadv_qp_init_attr ----------- */

static struct ibv_qp_init_attr_ex qp_attr(struct env *e)
{
	return (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_DRIVER, .send_cq = e->cq, .recv_cq = e->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = e->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
}

static struct ibv_qp *create(struct env *e, struct ibv_qp_init_attr_ex a,
			     const void *q, uint32_t inlen)
{
	return efadv_create_qp_ex(e->ctx, &a, (void *)q, inlen);
}

static void test_create_qp(struct env *e)
{
	/* libfabric 2.x's: a service level, processing hints. */
	const struct efadv_qp_init_attr lf = {
		.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD, .sl = 8,
		.wr_flags = EFADV_WR_EX_WITH_PROCESSING_HINTS,
	};
	uint8_t buf[32];
	struct efadv_qp_init_attr *q = (void *)buf;
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;
	struct efadv_qp *dv;

	memset(buf, 0, sizeof(buf));
	*q = lf;
	a = qp_attr(e);
	qp = create(e, a, q, sizeof(*q));
	ksft_check(qp != NULL, "efadv_create_qp_ex inlen 24, sl 8, wr_flags "
		   "PROCESSING_HINTS (libfabric 2.x's): %s", qp ? "a QP" : strerror(errno));
	if (qp) {
		dv = efadv_qp_from_ibv_qp_ex(ibv_qp_to_qp_ex(qp));
		ksft_check(dv && dv->wr_set_processing_hints,
			   "efadv_qp_from_ibv_qp_ex: an efadv_qp with wr_set_processing_hints");
		ibv_destroy_qp(qp);
	}
	errno = 0;
	dv = efadv_qp_from_ibv_qp_ex(NULL);
	ksft_check(!dv && errno == EINVAL, "efadv_qp_from_ibv_qp_ex(NULL): EINVAL (saw %s)",
		   dv ? "a pointer" : strerror(errno));

	q->sl = 255;
	expect_qp(create(e, a, q, sizeof(*q)), 0, "efadv_create_qp_ex sl 255 (a hint)");
	q->sl = 0;
	q->wr_flags = 1 << 1;
	expect_qp(create(e, a, q, sizeof(*q)), EOPNOTSUPP,
		  "efadv_create_qp_ex wr_flags bit 1");
	/* A caller built on rdma-core 44: wr_flags is past its inlen. */
	expect_qp(create(e, a, q, 16), 0,
		  "efadv_create_qp_ex inlen 16 (44's size): bytes past it not read");
	q->wr_flags = 1ull << 63;
	expect_qp(create(e, a, q, sizeof(*q)), EOPNOTSUPP,
		  "efadv_create_qp_ex wr_flags bit 63");
	q->wr_flags = 0;

	q->flags = EFADV_QP_FLAGS_INLINE_WRITE;
	expect_qp(create(e, a, q, sizeof(*q)), rdma_write ? 0 : EOPNOTSUPP,
		  rdma_write ? "efadv_create_qp_ex INLINE_WRITE (the profile has RDMA write)" :
			       "efadv_create_qp_ex INLINE_WRITE (efa-gen1: no RDMA write)");
	q->flags = EFADV_QP_FLAGS_UNSOLICITED_WRITE_RECV;
	expect_qp(create(e, a, q, sizeof(*q)), EOPNOTSUPP,
		  "efadv_create_qp_ex UNSOLICITED_WRITE_RECV (no such capability)");
	q->flags = 1 << 2;
	expect_qp(create(e, a, q, sizeof(*q)), EOPNOTSUPP, "efadv_create_qp_ex flags bit 2");
	/* Bit 9 is flags' byte 13: inlen 13 gives only byte 12. */
	q->flags = 1 << 9;
	expect_qp(create(e, a, q, 13), 0, "efadv_create_qp_ex inlen 13: flags' byte 13 not read");
	expect_qp(create(e, a, q, 14), EOPNOTSUPP, "efadv_create_qp_ex inlen 14: flags bit 9");
	/* libefa's order: flags before the PD, wr_flags before the CQs. */
	a.comp_mask &= ~IBV_QP_INIT_ATTR_PD;
	expect_qp(create(e, a, q, sizeof(*q)), EOPNOTSUPP,
		  "efadv_create_qp_ex bad flags and no PD: the flags first");
	a = qp_attr(e);
	q->flags = 0;
	q->wr_flags = 1 << 1;
	a.send_cq = NULL;
	expect_qp(create(e, a, q, sizeof(*q)), EOPNOTSUPP,
		  "efadv_create_qp_ex bad wr_flags and no send CQ: the wr_flags first");
	a = qp_attr(e);
	q->wr_flags = 0;

	q->reserved = 1;
	expect_qp(create(e, a, q, sizeof(*q)), EINVAL, "efadv_create_qp_ex reserved byte set");
	expect_qp(create(e, a, q, 15), 0,
		  "efadv_create_qp_ex inlen 15: the reserved byte not given");
	q->reserved = 0;
	q->comp_mask = 1;
	expect_qp(create(e, a, q, sizeof(*q)), EINVAL, "efadv_create_qp_ex comp_mask 1");
	q->comp_mask = 0;
	expect_qp(create(e, a, q, sizeof(buf)), 0, "efadv_create_qp_ex inlen 32, zero tail");
	buf[31] = 1;
	expect_qp(create(e, a, q, sizeof(buf)), EINVAL,
		  "efadv_create_qp_ex inlen 32, nonzero tail");
	buf[31] = 0;
}

/* --- efadv_create_cq with rdma-core 64's efadv_cq_init_attr --------------- */

static void expect_cq(struct ibv_cq_ex *cq, int err, const char *what)
{
	int seen = errno;

	if (!err)
		ksft_check(cq != NULL, "%s: a CQ, saw %s", what,
			   cq ? "a CQ" : strerror(seen));
	else
		ksft_check(!cq && seen == err, "%s: %s, saw %s", what,
			   strerror(err), cq ? "a CQ" : strerror(seen));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

static struct ibv_cq_ex *cq64(struct env *e, struct ibv_cq_init_attr_ex a,
			      const void *ea, uint32_t inlen)
{
	return efadv_create_cq(e->ctx, &a, (void *)ea, inlen);
}

static void test_create_cq(struct env *e)
{
	const struct ibv_cq_init_attr_ex std = {
		.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_cq_init_attr_ex a = std;
	uint8_t buf[64];
	struct efadv_cq_init_attr *ea = (void *)buf;
	struct ibv_comp_channel *ch;
	struct ibv_cq_ex *cq;
	struct efadv_cq *dv;

	memset(buf, 0, sizeof(buf));
	ea->wc_flags = EFADV_WC_EX_WITH_SGID;
	cq = cq64(e, a, ea, sizeof(*ea));
	ksft_check(cq != NULL, "efadv_create_cq inlen 56, WITH_SGID: %s",
		   cq ? "a CQ" : strerror(errno));
	if (cq) {
		dv = efadv_cq_from_ibv_cq_ex(cq);
		ksft_check(dv && dv->wc_read_sgid, "efadv_cq_from_ibv_cq_ex: wc_read_sgid "
			   "at offset 8 of rdma-core 64's efadv_cq");
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	}
	ea->wc_flags = EFADV_WC_EX_WITH_IS_UNSOLICITED;
	expect_cq(cq64(e, a, ea, sizeof(*ea)), EOPNOTSUPP,
		  "efadv_create_cq WITH_IS_UNSOLICITED (no such capability)");
	ea->wc_flags = 0;

	ea->flags = EFADV_CQ_INIT_FLAGS_EXT_MEM_DMABUF;
	ea->ext_mem_dmabuf.fd = -1;
	expect_cq(cq64(e, a, ea, sizeof(*ea)), EOPNOTSUPP,
		  "efadv_create_cq EXT_MEM_DMABUF (the ring is the kernel's)");
	/* A caller built on rdma-core 44: flags is past its inlen. */
	expect_cq(cq64(e, a, ea, 16), 0, "efadv_create_cq inlen 16 (44's size): "
		  "bytes past it not read");
	ea->ext_mem_dmabuf.fd = 0;
	ea->flags = 1 << 5;
	expect_cq(cq64(e, a, ea, sizeof(*ea)), 0,
		  "efadv_create_cq an unknown flag (not read, as by libefa)");
	ea->flags = 0;

	expect_cq(cq64(e, a, ea, 12), 0, "efadv_create_cq inlen 12 (half of wc_flags)");
	expect_cq(cq64(e, a, ea, 8), EINVAL, "efadv_create_cq inlen 8");
	expect_cq(cq64(e, a, ea, sizeof(buf)), 0, "efadv_create_cq inlen 64, zero tail");
	buf[60] = 1;
	expect_cq(cq64(e, a, ea, sizeof(buf)), EINVAL,
		  "efadv_create_cq inlen 64, a nonzero byte 60");
	buf[60] = 0;

	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	expect_cq(cq64(e, a, ea, sizeof(*ea)), 0, "efadv_create_cq SINGLE_THREADED");
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	expect_cq(cq64(e, a, ea, sizeof(*ea)), EOPNOTSUPP,
		  "efadv_create_cq IGNORE_OVERRUN");
	a = std;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	a.parent_domain = e->pd;
	expect_cq(cq64(e, a, ea, sizeof(*ea)), EINVAL,
		  "efadv_create_cq MASK_PD with a PD that is no parent domain");
	a = std;
	ch = ibv_create_comp_channel(e->ctx);
	if (!ch)
		srd_die("ibv_create_comp_channel", errno);
	a.channel = ch;
	expect_cq(cq64(e, a, ea, sizeof(*ea)), 0, "efadv_create_cq with a completion channel");
	ibv_destroy_comp_channel(ch);
}

/* --- libfabric 2.x's pattern, with data ---------------------------------- */

struct side {
	const char *dev;
	struct ibv_context *ctx;
	union ibv_gid gid;
	int gidx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct efadv_cq *dv_cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct efadv_qp *dv_qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

#define SIDE_BUF (1u << 16)

static void side_open(struct side *s, const char *dev, const char *ip,
		      bool rdma_write)
{
	struct efadv_cq_init_attr ca = { .wc_flags = EFADV_WC_EX_WITH_SGID };
	struct efadv_qp_init_attr q = {
		.driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD, .sl = 8,
		.flags = rdma_write ? EFADV_QP_FLAGS_INLINE_WRITE : 0,
		.wr_flags = EFADV_WR_EX_WITH_PROCESSING_HINTS,
	};
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_qp_init_attr_ex a;
	int rc;

	s->dev = dev;
	s->ctx = srd_open(dev);
	s->gidx = srd_find_gid(s->ctx, ip, &s->gid);
	if (s->gidx < 0)
		srd_die("no GID for the address", ENOENT);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		srd_die("ibv_alloc_pd", errno);
	s->cq = efadv_create_cq(s->ctx, &cattr, &ca, sizeof(ca));
	if (!s->cq)
		srd_die("efadv_create_cq", errno);
	s->dv_cq = efadv_cq_from_ibv_cq_ex(s->cq);
	a = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_DRIVER, .send_cq = ibv_cq_ex_to_cq(s->cq),
		.recv_cq = ibv_cq_ex_to_cq(s->cq),
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 32 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ |
				  (rdma_write ? IBV_QP_EX_WITH_RDMA_WRITE |
				   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM : 0),
	};
	s->qp = efadv_create_qp_ex(s->ctx, &a, &q, sizeof(q));
	if (!s->qp)
		srd_die("efadv_create_qp_ex (sl, INLINE_WRITE, PROCESSING_HINTS)", errno);
	s->qpx = ibv_qp_to_qp_ex(s->qp);
	s->dv_qp = efadv_qp_from_ibv_qp_ex(s->qpx);
	if (!s->dv_qp)
		srd_die("efadv_qp_from_ibv_qp_ex", errno);
	rc = srd_qp_to_rts_rnr(s->qp, SRD_QKEY, 7);
	if (rc)
		srd_die("the QP to RTS", rc);
	s->buf = aligned_alloc(4096, SIDE_BUF);
	if (!s->buf)
		srd_die("aligned_alloc", ENOMEM);
	memset(s->buf, 0, SIDE_BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, SIDE_BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		srd_die("ibv_reg_mr", errno);
}

static void side_close(struct side *s)
{
	ibv_destroy_qp(s->qp);
	ibv_dereg_mr(s->mr);
	ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq));
	ibv_dealloc_pd(s->pd);
	ibv_close_device(s->ctx);
	free(s->buf);
}

struct wc {
	int status;
	int opcode;
	uint64_t wr_id;
	uint32_t byte_len;
	unsigned int wc_flags;
	uint32_t imm_data;		/* host order */
	int sgid_rc;
	union ibv_gid sgid;
};

/* One completion of s's CQ, through the extended API; false if none. */
static bool poll_one(struct side *s, struct wc *w)
{
	struct ibv_poll_cq_attr pa = {};
	long long end = srd_now_ms() + SRD_TIMEOUT_MS;
	int rc;

	do {
		rc = ibv_start_poll(s->cq, &pa);
	} while (rc == ENOENT && srd_now_ms() < end);
	if (rc) {
		ksft_check(0, "a completion on %s within %d ms (start_poll %d)",
			   s->dev, SRD_TIMEOUT_MS, rc);
		return false;
	}
	w->status = s->cq->status;
	w->wr_id = s->cq->wr_id;
	w->opcode = ibv_wc_read_opcode(s->cq);
	w->byte_len = ibv_wc_read_byte_len(s->cq);
	w->wc_flags = ibv_wc_read_wc_flags(s->cq);
	w->imm_data = w->wc_flags & IBV_WC_WITH_IMM ?
		      be32toh(ibv_wc_read_imm_data(s->cq)) : 0;
	memset(&w->sgid, 0, sizeof(w->sgid));
	w->sgid_rc = efadv_wc_read_sgid(s->dv_cq, &w->sgid);
	ibv_end_poll(s->cq);
	return true;
}

static void test_traffic(const char *dev_a, const char *ip_a,
			 const char *dev_b, const char *ip_b)
{
	struct side a = {}, b = {};
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct efadv_mr_attr ma;
	struct ibv_ah *ab;
	struct wc w;
	int rc;

	side_open(&a, dev_a, ip_a, rdma_write);
	side_open(&b, dev_b, ip_b, rdma_write);
	aa.grh.dgid = b.gid;
	aa.grh.sgid_index = a.gidx;
	ab = ibv_create_ah(a.pd, &aa);
	if (!ab)
		srd_die("ibv_create_ah", errno);

	memset(&ma, 0xa5, sizeof(ma));
	rc = efadv_query_mr(b.mr, &ma, sizeof(ma));
	ksft_check(rc == 0 && ma.ic_id_validity == 0,
		   "efadv_query_mr of a registered buffer: 0, ic_id_validity 0 "
		   "(saw %d, %#x)", rc, ma.ic_id_validity);

	/* A send with a processing hint: the hint changes nothing. */
	if (srd_post_recv(b.qp, 1, b.buf, 4096, b.mr->lkey))
		srd_die("ibv_post_recv", errno);
	srd_fill(a.buf, 300, 1);
	ibv_wr_start(a.qpx);
	a.qpx->wr_id = 11;
	a.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(a.qpx);
	efadv_wr_set_processing_hints(a.dv_qp, EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE);
	ibv_wr_set_ud_addr(a.qpx, ab, b.qp->qp_num, SRD_QKEY);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)a.buf, 300);
	rc = ibv_wr_complete(a.qpx);
	ksft_check_eq("ibv_wr_complete of a send with a processing hint", 0, rc);
	if (poll_one(&a, &w))
		ksft_check(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_SEND &&
			   w.wr_id == 11, "the hinted send: SUCCESS SEND (saw %s, %d)",
			   ibv_wc_status_str(w.status), w.opcode);
	if (poll_one(&b, &w))
		ksft_check(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_RECV &&
			   w.byte_len == 300 && srd_check_fill(b.buf, 300, 1) < 0 &&
			   w.sgid_rc == 0 && !memcmp(&w.sgid, &a.gid, sizeof(a.gid)),
			   "its receive: 300 intact bytes, and A's GID through "
			   "efadv_wc_read_sgid (saw %s, %u bytes, sgid rc %d)",
			   ibv_wc_status_str(w.status), w.byte_len, w.sgid_rc);

	if (rdma_write) {
		/* INLINE_WRITE: an RDMA write of inline data, hinted. */
		uint8_t data[32];

		srd_fill(data, sizeof(data), 2);
		ibv_wr_start(a.qpx);
		a.qpx->wr_id = 12;
		a.qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(a.qpx, b.mr->rkey, (uintptr_t)(b.buf + 8192));
		efadv_wr_set_processing_hints(a.dv_qp, EFADV_WR_PROCESSING_HINT_BURST_PPS_SENSITIVE);
		ibv_wr_set_ud_addr(a.qpx, ab, b.qp->qp_num, SRD_QKEY);
		ibv_wr_set_inline_data(a.qpx, data, sizeof(data));
		memset(data, 0, sizeof(data));	/* inline: copied at the call */
		rc = ibv_wr_complete(a.qpx);
		ksft_check_eq("ibv_wr_complete of an inline RDMA write", 0, rc);
		if (poll_one(&a, &w))
			ksft_check(w.status == IBV_WC_SUCCESS &&
				   w.opcode == IBV_WC_RDMA_WRITE && w.wr_id == 12 &&
				   srd_check_fill(b.buf + 8192, 32, 2) < 0 &&
				   all_bytes(b.buf, 8192 + 32, 8192 + 64, 0),
				   "the inline RDMA write: SUCCESS RDMA_WRITE, 32 bytes "
				   "at B and none beyond (saw %s, %d)",
				   ibv_wc_status_str(w.status), w.opcode);

		/*
		 * A write with immediate: the data lands at the rkey's
		 * address, and it consumes one of B's receives (no
		 * unsolicited write recv), whose buffer stays untouched;
		 * the receive completes RECV_RDMA_WITH_IMM with the
		 * write's length and the immediate, the write RDMA_WRITE.
		 */
		if (srd_post_recv(b.qp, 2, b.buf + 32768, 4096, b.mr->lkey))
			srd_die("ibv_post_recv", errno);
		srd_fill(a.buf + 16384, 3000, 4);
		ibv_wr_start(a.qpx);
		a.qpx->wr_id = 13;
		a.qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write_imm(a.qpx, b.mr->rkey, (uintptr_t)(b.buf + 16384),
				      htobe32(0x5eed));
		ibv_wr_set_ud_addr(a.qpx, ab, b.qp->qp_num, SRD_QKEY);
		ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)(a.buf + 16384), 3000);
		rc = ibv_wr_complete(a.qpx);
		ksft_check_eq("ibv_wr_complete of an RDMA write with immediate", 0, rc);
		if (poll_one(&a, &w))
			ksft_check(w.status == IBV_WC_SUCCESS &&
				   w.opcode == IBV_WC_RDMA_WRITE && w.wr_id == 13,
				   "the write with immediate: SUCCESS RDMA_WRITE "
				   "(saw %s, %d)", ibv_wc_status_str(w.status), w.opcode);
		if (poll_one(&b, &w))
			ksft_check(w.status == IBV_WC_SUCCESS &&
				   w.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
				   w.wr_id == 2 && w.byte_len == 3000 &&
				   (w.wc_flags & IBV_WC_WITH_IMM) &&
				   w.imm_data == 0x5eed &&
				   srd_check_fill(b.buf + 16384, 3000, 4) < 0 &&
				   all_bytes(b.buf, 32768, 32768 + 4096, 0),
				   "its receive 2: SUCCESS RECV_RDMA_WITH_IMM, 3000 bytes, "
				   "imm 0x5eed, data at the rkey's address, the receive "
				   "buffer untouched (saw %s, %d, wr_id %llu, %u bytes, "
				   "flags %#x, imm %#x)", ibv_wc_status_str(w.status),
				   w.opcode, (unsigned long long)w.wr_id, w.byte_len,
				   w.wc_flags, w.imm_data);
	}

	ibv_destroy_ah(ab);
	side_close(&a);
	side_close(&b);
}

/* --- another device's objects ------------------------------------------- */

/*
 * On a device that is not EFA, libefa answers EOPNOTSUPP (negative for
 * the depths); a libefa without the function is answered for in the same
 * way.  efadv_qp_from_ibv_qp_ex is not checked by libefa: it hands back
 * a pointer into the QP that must not be used.
 */
static int test_foreign(const char *dev, bool real)
{
	struct ibv_context *ctx = srd_open(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex qa;
	struct efadv_sq_depth_attr s = { .max_send_sge = 1 };
	struct efadv_rq_depth_attr r = { .max_recv_sge = 1 };
	struct efadv_wq_attr sq, rq;
	struct efadv_cq_attr cqa;
	struct efadv_mr_attr ma;
	static uint8_t mem[4096];
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct efadv_qp *dv;

	if (!pd || !cq)
		srd_die("a PD and a CQ on the other device", errno);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		srd_die("ibv_reg_mr on the other device", errno);
	qa = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_UD, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd, .send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	qp = ibv_create_qp_ex(ctx, &qa);
	if (!qp)
		srd_die("a UD QP on the other device", errno);

	ksft_check_eq("efadv_query_mr on another device: EOPNOTSUPP", EOPNOTSUPP,
		      efadv_query_mr(mr, &ma, sizeof(ma)));
	ksft_check_eq("efadv_query_qp_wqs on another device: EOPNOTSUPP", EOPNOTSUPP,
		      efadv_query_qp_wqs(qp, &sq, &rq, sizeof(sq)));
	ksft_check_eq("efadv_query_cq on another device: EOPNOTSUPP", EOPNOTSUPP,
		      efadv_query_cq(cq, &cqa, sizeof(cqa)));
	ksft_check_eq("efadv_get_max_sq_depth on another device: -EOPNOTSUPP",
		      -EOPNOTSUPP, efadv_get_max_sq_depth(ctx, &s, sizeof(s)));
	ksft_check_eq("efadv_get_max_rq_depth on another device: -EOPNOTSUPP",
		      -EOPNOTSUPP, efadv_get_max_rq_depth(ctx, &r, sizeof(r)));
	errno = 0;
	dv = efadv_qp_from_ibv_qp_ex(ibv_qp_to_qp_ex(qp));
	if (real)
		ksft_check(dv != NULL, "efadv_qp_from_ibv_qp_ex on another device: "
			   "libefa's (unchecked) answer");
	else
		ksft_check(!dv && errno == EOPNOTSUPP,
			   "efadv_qp_from_ibv_qp_ex without libefa's: EOPNOTSUPP (saw %s)",
			   dv ? "a pointer" : strerror(errno));

	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ksft_exit();
}

int main(int argc, char **argv)
{
	struct efadv_qp_init_attr srd = { .driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD };
	struct ibv_qp_init_attr_ex qa;
	struct env e = {};
	struct ibv_qp *qp;
	Dl_info info;
	int rc;

	if (argc == 4 && !strcmp(argv[1], "--foreign"))
		return test_foreign(argv[2], !strcmp(argv[3], "real"));
	if (argc != 6 || (strcmp(argv[5], "softsrd") && strcmp(argv[5], "efa-gen1") &&
			  strcmp(argv[5], "efa-gen2"))) {
		fprintf(stderr, "usage: %s DEV_A IP_A DEV_B IP_B softsrd|efa-gen1|efa-gen2\n"
			"       %s --foreign DEV real|absent\n", argv[0], argv[0]);
		return 2;
	}
	rdma_write = strcmp(argv[5], "efa-gen1");
	if (dladdr((void *)efadv_qp_from_ibv_qp_ex, &info) && info.dli_fname)
		printf("# efadv_qp_from_ibv_qp_ex is from %s\n", info.dli_fname);

	e.ctx = srd_open(argv[1]);
	rc = efadv_query_device(e.ctx, &e.da, sizeof(e.da));
	if (rc)
		srd_die("efadv_query_device", rc);
	if (ibv_query_device(e.ctx, &e.dattr))
		srd_die("ibv_query_device", errno);
	e.pd = ibv_alloc_pd(e.ctx);
	e.cq = ibv_create_cq(e.ctx, 64, NULL, NULL, 0);
	if (!e.pd || !e.cq)
		srd_die("ibv_alloc_pd/ibv_create_cq", errno);

	test_query_device(&e);
	test_query_mr(&e);
	qa = qp_attr(&e);
	qp = create(&e, qa, &srd, sizeof(srd));
	if (!qp)
		srd_die("efadv_create_qp_ex", errno);
	test_query_queues(&e, qp);
	ibv_destroy_qp(qp);
	test_depths(&e);
	test_create_qp(&e);
	test_create_cq(&e);
	test_traffic(argv[1], argv[2], argv[3], argv[4]);

	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	return ksft_exit();
}
