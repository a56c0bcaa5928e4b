// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every efadv entry point of rdma-core 44, as an EFA program calls it, on
 * two srd devices: compiled against the system's <infiniband/efadv.h> and
 * linked with -lefa and -libverbs only (no softsrd header or library), so
 * it runs on whichever libefa.so.1 the dynamic linker finds.  Under
 * srd-efa-run that is softsrd's; without it, the system's, which refuses
 * srd devices (srd_efadv.sh checks both).  softsrd's libefa answers as
 * rdma-core 64's, which such a program sees at a few edges: it takes
 * efadv_query_device's inlen from 23, efadv_create_cq's from 9, and CQ
 * creation flags (srd_efadv64 tests what rdma-core 64 added).
 *
 *   srd_efadv DEV_A IP_A DEV_B IP_B softsrd|efa-gen1|efa-gen2
 *   srd_efadv --foreign DEV IP DST_IP real|absent
 *
 * The last argument is the devices' limits profile: what efadv must
 * report, which RDMA the QPs may ask for, and the completion conventions
 * (EFA's vendor_err numbers and opcodes in the efa-genN profiles).
 *
 * --foreign: DEV is no srd device (rxe): every entry point must give what
 * libefa gives for a device that is not EFA, whether the system's libefa
 * is there to answer ("real") or not ("absent").
 */
#define _GNU_SOURCE		/* dladdr */
#include <dlfcn.h>
#include <infiniband/efadv.h>

#include "srd_test.h"

#define RDMA_WRITE_CAP	(1u << 3)	/* rdma-core 46's EFADV_..._RDMA_WRITE */

/* The limits each profile must report (README, docs/protocol.md). */
struct profile {
	const char *name;
	bool efa;			/* EFA's conventions */
	uint16_t max_sq_sge, max_rq_sge, inline_buf_size;
	uint32_t caps;			/* device_caps in a full struct */
};

static const struct profile profiles[] = {
	{ "softsrd", false, 16, 16, 256,
	  EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
	  EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID | RDMA_WRITE_CAP },
	{ "efa-gen1", true, 2, 3, 32,
	  EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
	  EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID },
	{ "efa-gen2", true, 2, 3, 32,
	  EFADV_DEVICE_ATTR_CAPS_RDMA_READ | EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
	  EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID | RDMA_WRITE_CAP },
};

static const struct profile *prof;

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

static struct ibv_context *open_dev(const char *name)
{
	return srd_open(name);
}

/* --- efadv_query_device ------------------------------------------------ */

static void test_query_device(struct ibv_context *ctx)
{
	struct ibv_device_attr dattr;
	uint8_t buf[64];
	struct efadv_device_attr *a = (void *)buf;
	static const uint32_t edges[] = { 23, 24, 25, 28, 29, 32, 64 };
	unsigned int i;
	int rc;

	if (ibv_query_device(ctx, &dattr))
		srd_die("ibv_query_device", errno);

	rc = efadv_query_device(ctx, a, 0);
	ksft_check_eq("efadv_query_device inlen 0: EINVAL", EINVAL, rc);
	rc = efadv_query_device(ctx, a, 20);
	ksft_check_eq("efadv_query_device inlen 20 (inline_buf_size missing): EINVAL",
		      EINVAL, rc);
	/* libefa 64 wants its inline_buf_size_ex, 44's reserved bytes. */
	rc = efadv_query_device(ctx, a, 22);
	ksft_check_eq("efadv_query_device inlen 22 (inline_buf_size_ex missing): EINVAL",
		      EINVAL, rc);

	for (i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		uint32_t inlen = edges[i];
		uint32_t want_caps = 0;

		memset(buf, 0xa5, sizeof(buf));
		a->comp_mask = ~0ull;	/* input comp_mask is not read */
		rc = efadv_query_device(ctx, a, inlen);
		ksft_check_eq("efadv_query_device: rc", 0, rc);
		if (rc)
			continue;
		if (inlen > offsetof(struct efadv_device_attr, device_caps))
			want_caps |= prof->caps & (EFADV_DEVICE_ATTR_CAPS_RNR_RETRY |
						   EFADV_DEVICE_ATTR_CAPS_CQ_WITH_SGID);
		if (inlen > offsetof(struct efadv_device_attr, max_rdma_size))
			want_caps |= prof->caps & (EFADV_DEVICE_ATTR_CAPS_RDMA_READ |
						   RDMA_WRITE_CAP);
		ksft_check(a->comp_mask == 0 &&
			   a->max_sq_wr == (uint32_t)dattr.max_qp_wr &&
			   a->max_rq_wr == (uint32_t)dattr.max_qp_wr &&
			   a->max_sq_sge == prof->max_sq_sge &&
			   a->max_rq_sge == prof->max_rq_sge,
			   "efadv_query_device inlen %u: comp_mask 0 (saw %llu), wr %u/%u "
			   "(saw %u/%u), sge %u/%u (saw %u/%u)", inlen,
			   (unsigned long long)a->comp_mask, dattr.max_qp_wr,
			   dattr.max_qp_wr, a->max_sq_wr, a->max_rq_wr,
			   prof->max_sq_sge, prof->max_rq_sge, a->max_sq_sge,
			   a->max_rq_sge);
		if (inlen >= 22)
			ksft_check_eq("efadv_query_device: inline_buf_size",
				      prof->inline_buf_size, a->inline_buf_size);
		if (inlen >= 28)
			ksft_check(a->device_caps == want_caps,
				   "efadv_query_device inlen %u: device_caps %#x, saw %#x",
				   inlen, want_caps, a->device_caps);
		else if (inlen > 24)
			/* A field cut by inlen: only its first bytes are set. */
			ksft_check(!memcmp(&a->device_caps, &want_caps, inlen - 24),
				   "efadv_query_device inlen %u: the first %u bytes of "
				   "device_caps %#x", inlen, inlen - 24, want_caps);
		if (inlen >= 32)
			ksft_check(a->max_rdma_size > 0 && a->max_rdma_size <=
				   dattr.max_mr_size,
				   "efadv_query_device: max_rdma_size %u is set",
				   a->max_rdma_size);
		else if (inlen >= 28)
			ksft_check(all_bytes(buf, 28, inlen, 0),
				   "efadv_query_device inlen %u: max_rdma_size is not "
				   "given", inlen);
		ksft_check(all_bytes(buf, inlen, sizeof(buf), 0xa5),
			   "efadv_query_device inlen %u: nothing written past inlen",
			   inlen);
		if (inlen > 32)
			ksft_check(all_bytes(buf, 32, inlen, 0),
				   "efadv_query_device inlen %u: bytes 32..%u zeroed",
				   inlen, inlen);
	}
	rc = efadv_query_device(NULL, a, sizeof(*a));
	ksft_check(rc != 0, "efadv_query_device(NULL ctx) fails (rc %d)", rc);
}

/* --- CQs ---------------------------------------------------------------- */

static struct ibv_cq_ex *efa_cq(struct ibv_context *ctx, uint64_t efa_wc_flags,
				uint32_t inlen, void *efa_buf)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct efadv_cq_init_attr local = { .wc_flags = efa_wc_flags };

	return efadv_create_cq(ctx, &attr, efa_buf ? efa_buf : (void *)&local,
			       inlen);
}

static void expect_cq_fails(struct ibv_cq_ex *cq, int err, const char *what)
{
	int seen = errno;

	ksft_check(!cq && seen == err, "efadv_create_cq %s: %s, saw %s", what,
		   strerror(err), cq ? "a CQ" : strerror(seen));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

static void test_create_cq(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex attr = { .cqe = 16 };
	uint8_t buf[64] = {};
	struct efadv_cq_init_attr *ea = (void *)buf;
	struct ibv_cq_ex *cq;
	struct efadv_cq *dv;

	errno = 0;
	expect_cq_fails(efa_cq(ctx, 0, 8, NULL), EINVAL, "inlen 8");
	ea->comp_mask = 1;
	expect_cq_fails(efa_cq(ctx, 0, 16, buf), EINVAL, "comp_mask 1");
	ea->comp_mask = 0;
	/* Bytes 16..55 are libefa 64's flags and ext_mem_dmabuf. */
	buf[60] = 1;
	expect_cq_fails(efa_cq(ctx, 0, 64, buf), EINVAL, "inlen 64, a nonzero byte 60");
	buf[60] = 0;
	cq = efa_cq(ctx, 0, 12, buf);
	ksft_check(cq != NULL, "efadv_create_cq inlen 12 (half of wc_flags): a CQ, "
		   "as from libefa 64, saw %s", cq ? "a CQ" : strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ea->wc_flags = 1 << 1;
	expect_cq_fails(efa_cq(ctx, 0, 16, buf), EOPNOTSUPP, "efa wc_flags 2");
	ea->wc_flags = 0;

	attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	expect_cq_fails(efadv_create_cq(ctx, &attr, ea, sizeof(*ea)), EOPNOTSUPP,
			"attr flags IGNORE_OVERRUN");
	attr.comp_mask = 0;
	attr.flags = 0;
	attr.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	expect_cq_fails(efadv_create_cq(ctx, &attr, ea, sizeof(*ea)), EOPNOTSUPP,
			"attr wc_flags TIMESTAMP");
	expect_cq_fails(efadv_create_cq(NULL, &attr, ea, sizeof(*ea)), EINVAL,
			"NULL ctx");

	ea->wc_flags = EFADV_WC_EX_WITH_SGID;
	cq = efa_cq(ctx, 0, 32, buf);
	ksft_check(cq != NULL, "efadv_create_cq inlen 32, zero tail, WITH_SGID: %s",
		   cq ? "a CQ" : strerror(errno));
	if (cq) {
		dv = efadv_cq_from_ibv_cq_ex(cq);
		ksft_check(dv && dv->wc_read_sgid,
			   "efadv_cq_from_ibv_cq_ex: a CQ with wc_read_sgid");
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	}
	cq = efa_cq(ctx, 0, sizeof(struct efadv_cq_init_attr), NULL);
	ksft_check(cq != NULL, "efadv_create_cq without SGID: %s",
		   cq ? "a CQ" : strerror(errno));
	if (cq) {
		dv = efadv_cq_from_ibv_cq_ex(cq);
		ksft_check(dv && !dv->wc_read_sgid,
			   "efadv_cq_from_ibv_cq_ex without SGID: wc_read_sgid is NULL");
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	}
	attr = (struct ibv_cq_init_attr_ex){ .cqe = 16 };
	cq = ibv_create_cq_ex(ctx, &attr);
	if (!cq)
		srd_die("ibv_create_cq_ex", errno);
	dv = efadv_cq_from_ibv_cq_ex(cq);
	ksft_check(dv && !dv->wc_read_sgid,
		   "efadv_cq_from_ibv_cq_ex of an ibv_create_cq_ex CQ: wc_read_sgid NULL");
	ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

/* --- QPs ---------------------------------------------------------------- */

struct qp_env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static struct ibv_qp_init_attr_ex qp_attr(struct qp_env *e)
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

static void test_create_qp(struct qp_env *e)
{
	struct efadv_device_attr da;
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp_init_attr ia;
	uint8_t buf[32] = {};
	struct efadv_qp_init_attr *q = (void *)buf;
	struct ibv_qp *qp;

	if (efadv_query_device(e->ctx, &da, sizeof(da)))
		srd_die("efadv_query_device", EINVAL);

	a = qp_attr(e);
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), 0,
		  "efadv_create_qp_ex SRD");
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, 9), 0,
		  "efadv_create_qp_ex inlen 9 (driver_qp_type's first byte)");
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, 8), EINVAL,
		  "efadv_create_qp_ex inlen 8");
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, 32), 0,
		  "efadv_create_qp_ex inlen 32, zero tail");
	buf[31] = 1;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, 32), EINVAL,
		  "efadv_create_qp_ex inlen 32, nonzero tail");
	buf[31] = 0;
	q->comp_mask = 1;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex comp_mask 1");
	q->comp_mask = 0;
	q->reserved[3] = 1;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex reserved set");
	q->reserved[3] = 0;
	q->driver_qp_type = 1;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EOPNOTSUPP,
		  "efadv_create_qp_ex driver_qp_type 1");
	q->driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD;

	a.qp_type = IBV_QPT_UD;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex qp_type UD");
	a = qp_attr(e);
	a.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EOPNOTSUPP,
		  "efadv_create_qp_ex comp_mask CREATE_FLAGS");
	a = qp_attr(e);
	a.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex without a PD");
	a = qp_attr(e);
	a.send_ops_flags |= IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EOPNOTSUPP,
		  "efadv_create_qp_ex atomics");
	a = qp_attr(e);
	a.send_ops_flags |= IBV_QP_EX_WITH_RDMA_READ;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), 0,
		  "efadv_create_qp_ex RDMA read");
	a = qp_attr(e);
	a.send_ops_flags |= IBV_QP_EX_WITH_RDMA_WRITE;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)),
		  prof->caps & RDMA_WRITE_CAP ? 0 : EOPNOTSUPP,
		  prof->caps & RDMA_WRITE_CAP ?
		  "efadv_create_qp_ex RDMA write (the profile has it)" :
		  "efadv_create_qp_ex RDMA write (efa-gen1: none)");
	a = qp_attr(e);
	a.send_cq = NULL;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex without a send CQ");
	a = qp_attr(e);
	a.srq = (struct ibv_srq *)&a;	/* never used: refused before */
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex with an SRQ");
	a = qp_attr(e);
	a.cap.max_send_sge = da.max_sq_sge + 1;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex max_send_sge above max_sq_sge");
	a = qp_attr(e);
	a.cap.max_recv_wr = da.max_rq_wr + 1;
	expect_qp(efadv_create_qp_ex(e->ctx, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex max_recv_wr above max_rq_wr");
	expect_qp(efadv_create_qp_ex(NULL, &a, q, sizeof(*q)), EINVAL,
		  "efadv_create_qp_ex NULL ctx");

	/* efadv_create_driver_qp: the old API; caps come back. */
	ia = (struct ibv_qp_init_attr){
		.qp_type = IBV_QPT_DRIVER, .send_cq = e->cq, .recv_cq = e->cq,
		.cap = { .max_send_wr = 5, .max_recv_wr = 5,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	qp = efadv_create_driver_qp(e->pd, &ia, EFADV_QP_DRIVER_TYPE_SRD);
	ksft_check(qp && qp->qp_type == IBV_QPT_DRIVER && ia.cap.max_send_wr >= 5,
		   "efadv_create_driver_qp: a DRIVER QP, max_send_wr %u >= 5",
		   ia.cap.max_send_wr);
	if (qp)
		ibv_destroy_qp(qp);
	expect_qp(efadv_create_driver_qp(e->pd, &ia, 1), EOPNOTSUPP,
		  "efadv_create_driver_qp type 1");
	ia.qp_type = IBV_QPT_UD;
	expect_qp(efadv_create_driver_qp(e->pd, &ia, EFADV_QP_DRIVER_TYPE_SRD),
		  EINVAL, "efadv_create_driver_qp qp_type UD");
	expect_qp(efadv_create_driver_qp(NULL, &ia, EFADV_QP_DRIVER_TYPE_SRD),
		  EINVAL, "efadv_create_driver_qp NULL PD");
}

/* --- traffic: AH numbers, slid, SGIDs, opcodes, vendor_err --------------- */

struct side {
	const char *dev;
	struct ibv_context *ctx;
	union ibv_gid gid;
	int gidx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct efadv_cq *dv;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static void side_open(struct side *s, const char *dev, const char *ip)
{
	struct efadv_qp_init_attr q = { .driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD };
	struct efadv_cq_init_attr ca = { .wc_flags = EFADV_WC_EX_WITH_SGID };
	struct ibv_cq_init_attr_ex cattr = {
		.cqe = 256, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp_attr m = {};

	s->dev = dev;
	s->ctx = open_dev(dev);
	s->gidx = srd_find_gid(s->ctx, ip, &s->gid);
	if (s->gidx < 0)
		srd_die("no GID for the address", ENOENT);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		srd_die("ibv_alloc_pd", errno);
	s->cq = efadv_create_cq(s->ctx, &cattr, &ca, sizeof(ca));
	if (!s->cq)
		srd_die("efadv_create_cq", errno);
	s->dv = efadv_cq_from_ibv_cq_ex(s->cq);
	a = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_DRIVER, .send_cq = ibv_cq_ex_to_cq(s->cq),
		.recv_cq = ibv_cq_ex_to_cq(s->cq),
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ,
	};
	s->qp = efadv_create_qp_ex(s->ctx, &a, &q, sizeof(q));
	if (!s->qp)
		srd_die("efadv_create_qp_ex", errno);
	s->qpx = ibv_qp_to_qp_ex(s->qp);
	if (srd_qp_to_init(s->qp, SRD_QKEY))
		srd_die("INIT", errno);
	m.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(s->qp, &m, IBV_QP_STATE))
		srd_die("RTR", errno);
	/* As libfabric does it: a PSN, and rnr_retry on an RNR_RETRY device. */
	m.qp_state = IBV_QPS_RTS;
	m.sq_psn = 0x1234;
	m.rnr_retry = 0;
	if (ibv_modify_qp(s->qp, &m, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RNR_RETRY))
		srd_die("RTS", errno);
	s->buf = aligned_alloc(4096, 1 << 16);
	memset(s->buf, 0, 1 << 16);
	s->mr = ibv_reg_mr(s->pd, s->buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!s->mr)
		srd_die("ibv_reg_mr", errno);
}

static struct ibv_ah *ah_to(struct side *from, struct side *to)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = to->gid, .sgid_index = from->gidx },
	};
	struct ibv_ah *ah = ibv_create_ah(from->pd, &a);

	if (!ah)
		srd_die("ibv_create_ah", errno);
	return ah;
}

static int ahn_of(struct ibv_ah *ah)
{
	struct efadv_ah_attr attr;
	int rc = efadv_query_ah(ah, &attr, sizeof(attr));

	return rc ? -rc : attr.ahn;
}

struct wc {
	int status;
	int opcode;
	uint32_t vendor_err, byte_len, src_qp, slid;
	uint64_t wr_id;
	int sgid_rc;
	union ibv_gid sgid;
};

/* One completion of s's CQ, read with the extended API; false if none. */
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
	w->vendor_err = ibv_wc_read_vendor_err(s->cq);
	w->byte_len = ibv_wc_read_byte_len(s->cq);
	w->src_qp = ibv_wc_read_src_qp(s->cq);
	w->slid = ibv_wc_read_slid(s->cq);
	memset(&w->sgid, 0, sizeof(w->sgid));
	w->sgid_rc = efadv_wc_read_sgid(s->dv, &w->sgid);
	ibv_end_poll(s->cq);
	return true;
}

static void post_recv(struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	if (srd_post_recv(s->qp, id, s->buf + off, len, s->mr->lkey))
		srd_die("ibv_post_recv", errno);
}

static void send_to(struct side *s, struct ibv_ah *ah, uint32_t qpn,
		    uint64_t id, uint32_t off, uint32_t len, bool imm)
{
	ibv_wr_start(s->qpx);
	s->qpx->wr_id = id;
	s->qpx->wr_flags = IBV_SEND_SIGNALED;
	if (imm)
		ibv_wr_send_imm(s->qpx, htonl(0xabcd));
	else
		ibv_wr_send(s->qpx);
	ibv_wr_set_ud_addr(s->qpx, ah, qpn, SRD_QKEY);
	ibv_wr_set_sge(s->qpx, s->mr->lkey, (uintptr_t)(s->buf + off), len);
	if (ibv_wr_complete(s->qpx))
		srd_die("ibv_wr_complete", errno);
}

static void test_traffic(const char *dev_a, const char *ip_a,
			 const char *dev_b, const char *ip_b)
{
	long long tx0_a, tx1_a;
	struct side a = {}, b = {}, other = {};
	struct ibv_ah *ab, *ba, *ca, *cb;
	struct ibv_context *other_ctx;
	struct ibv_pd *pd2, *other_pd;
	int ahn_other;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct wc w;
	int ahn_ba;

	tx0_a = srd_counter(dev_a, "srd_msgs_sent");
	side_open(&a, dev_a, ip_a);
	side_open(&b, dev_b, ip_b);

	/* rdma-core's tests: query_qp returns the sq_psn modify_qp set. */
	ksft_check(!ibv_query_qp(a.qp, &qa, IBV_QP_SQ_PSN | IBV_QP_STATE, &qi) &&
		   qa.sq_psn == 0x1234 && qa.qp_state == IBV_QPS_RTS,
		   "ibv_query_qp: sq_psn 0x1234 (saw %#x), state RTS", qa.sq_psn);
	ksft_check(a.qp->qp_num <= 0xffff || !prof->efa,
		   "QP number %#x fits 16 bits in the efa profile", a.qp->qp_num);

	ab = ah_to(&a, &b);
	/* 1: B has no AH for A: slid 0xffff, and the SGID is A's. */
	post_recv(&b, 1, 0, 4096);
	srd_fill(a.buf, 100, 1);
	send_to(&a, ab, b.qp->qp_num, 11, 0, 100, false);
	if (poll_one(&a, &w))
		ksft_check(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_SEND &&
			   w.wr_id == 11, "send 1: SUCCESS SEND (saw %s opcode %d)",
			   ibv_wc_status_str(w.status), w.opcode);
	if (poll_one(&b, &w)) {
		ksft_check(w.status == IBV_WC_SUCCESS && w.opcode == IBV_WC_RECV &&
			   w.byte_len == 100 && w.src_qp == a.qp->qp_num &&
			   srd_check_fill(b.buf, 100, 1) < 0,
			   "receive 1: 100 intact bytes from QP %u (saw %s opcode %d, "
			   "%u bytes from %u)", a.qp->qp_num, ibv_wc_status_str(w.status),
			   w.opcode, w.byte_len, w.src_qp);
		ksft_check_eq("receive 1: slid without an AH to the sender",
			      0xffff, w.slid);
		ksft_check(w.sgid_rc == 0 && !memcmp(&w.sgid, &a.gid, sizeof(a.gid)),
			   "efadv_wc_read_sgid without an AH: 0 and A's GID (saw %d)",
			   w.sgid_rc);
	}

	/*
	 * 1b: AHs to A exist on B's device, but none in the receiving QP's
	 * PD: one of another context (another process's, as in rdma-core's
	 * test_dv_cq_ex_with_sgid) and one of another PD of B's context.
	 * The receive names none of them: slid 0xffff and A's GID, as on EFA.
	 */
	other.ctx = open_dev(dev_b);
	other.gidx = b.gidx;
	other.pd = ibv_alloc_pd(other.ctx);
	pd2 = ibv_alloc_pd(b.ctx);
	if (!other.pd || !pd2)
		srd_die("ibv_alloc_pd", errno);
	ca = ah_to(&other, &a);
	other_ctx = other.ctx;
	other_pd = other.pd;
	other.pd = pd2;
	other.ctx = b.ctx;
	cb = ah_to(&other, &a);
	ahn_other = ahn_of(ca);
	ksft_check(ahn_other >= 0 && ahn_other < 0xffff && ahn_of(cb) == ahn_other,
		   "AHs to A of another context and of another PD: ahn %d and %d",
		   ahn_other, ahn_of(cb));
	post_recv(&b, 5, 0, 4096);
	send_to(&a, ab, b.qp->qp_num, 15, 0, 64, false);
	if (poll_one(&a, &w))
		ksft_check(w.status == IBV_WC_SUCCESS, "send 1b completes");
	if (poll_one(&b, &w)) {
		ksft_check(w.status == IBV_WC_SUCCESS && w.wr_id == 5,
			   "receive 1b: SUCCESS wr_id 5 (saw %s wr_id %llu)",
			   ibv_wc_status_str(w.status), (unsigned long long)w.wr_id);
		ksft_check(w.slid == 0xffff,
			   "receive 1b: slid 0xffff with AHs to A only of other PDs "
			   "(saw %u; their ahn %d)", w.slid, ahn_other);
		ksft_check(w.sgid_rc == 0 && !memcmp(&w.sgid, &a.gid, sizeof(a.gid)),
			   "receive 1b: efadv_wc_read_sgid 0 and A's GID (saw %d)",
			   w.sgid_rc);
	}

	/* 2: B makes an AH to A: slid is its number, SGID not available. */
	ba = ah_to(&b, &a);
	ahn_ba = ahn_of(ba);
	ksft_check(ahn_ba >= 0 && ahn_ba < 0xffff, "efadv_query_ah: ahn %d", ahn_ba);
	ksft_check(ahn_ba == ahn_other, "the device's one number for A: %d (others' %d)",
		   ahn_ba, ahn_other);
	post_recv(&b, 2, 0, 4096);
	send_to(&a, ab, b.qp->qp_num, 12, 0, 64, true);
	if (poll_one(&a, &w))
		ksft_check(w.status == IBV_WC_SUCCESS, "send 2 (imm) completes");
	if (poll_one(&b, &w)) {
		ksft_check_eq("receive 2: slid is efadv_query_ah's ahn", ahn_ba, w.slid);
		ksft_check(w.sgid_rc < 0, "efadv_wc_read_sgid with an AH: negative "
			   "(saw %d)", w.sgid_rc);
		ksft_check(w.opcode == IBV_WC_RECV, "receive 2: opcode RECV (saw %d)",
			   w.opcode);
	}

	/* 3: RDMA read from B: the opcode of its completion. */
	srd_fill(b.buf + 8192, 512, 3);
	ibv_wr_start(a.qpx);
	a.qpx->wr_id = 13;
	a.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(a.qpx, b.mr->rkey, (uintptr_t)(b.buf + 8192));
	ibv_wr_set_ud_addr(a.qpx, ab, b.qp->qp_num, SRD_QKEY);
	ibv_wr_set_sge(a.qpx, a.mr->lkey, (uintptr_t)(a.buf + 8192), 512);
	if (ibv_wr_complete(a.qpx))
		srd_die("ibv_wr_complete (RDMA read)", errno);
	if (poll_one(&a, &w)) {
		int want = prof->efa ? IBV_WC_SEND : IBV_WC_RDMA_READ;

		ksft_check(w.status == IBV_WC_SUCCESS && w.opcode == want &&
			   srd_check_fill(a.buf + 8192, 512, 3) < 0,
			   "RDMA read: SUCCESS, opcode %s (%d), data intact (saw %s %d)",
			   prof->efa ? "SEND, as on EFA" : "RDMA_READ", want,
			   ibv_wc_status_str(w.status), w.opcode);
	}

	/* 4: RNR: no receive posted, rnr_retry 0. */
	send_to(&a, ab, b.qp->qp_num, 14, 0, 64, false);
	if (poll_one(&a, &w))
		ksft_check(w.status == IBV_WC_RNR_RETRY_EXC_ERR &&
			   w.vendor_err == (prof->efa ? 10u : 13u),
			   "RNR: RNR_RETRY_EXC_ERR, vendor_err %u (saw %s, %u)",
			   prof->efa ? 10 : 13, ibv_wc_status_str(w.status),
			   w.vendor_err);

	tx1_a = srd_counter(dev_a, "srd_msgs_sent");
	ksft_check(tx1_a > tx0_a, "%s sent SRD messages over softsrd (srd_msgs_sent %lld -> %lld)",
		   dev_a, tx0_a, tx1_a);

	ibv_destroy_ah(ab);
	ibv_destroy_ah(ba);
	ibv_destroy_ah(ca);
	ibv_destroy_ah(cb);
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(other_pd);
	ibv_close_device(other_ctx);
}

static void test_query_ah(struct qp_env *e, const char *ip, const char *dst_ip)
{
	union ibv_gid gid, dgid;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	uint8_t buf[64];
	struct efadv_ah_attr *at = (void *)buf;
	struct ibv_ah *ah;
	int gidx, rc;

	gidx = srd_find_gid(e->ctx, ip, &gid);
	if (gidx < 0 || srd_gid_of_ip(dst_ip, &dgid))
		srd_die("no GID for the addresses", ENOENT);
	/* As libfabric does it: GID index 0's address, hop_limit 0. */
	aa.grh.dgid = dgid;
	aa.grh.sgid_index = gidx;
	ah = ibv_create_ah(e->pd, &aa);
	if (!ah)
		srd_die("ibv_create_ah", errno);

	rc = efadv_query_ah(ah, at, 8);
	ksft_check_eq("efadv_query_ah inlen 8: EINVAL", EINVAL, rc);
	memset(buf, 0xa5, sizeof(buf));
	rc = efadv_query_ah(ah, at, 9);
	ksft_check(rc == 0 && all_bytes(buf, 0, 8, 0) && all_bytes(buf, 9, 64, 0xa5),
		   "efadv_query_ah inlen 9: rc 0 (saw %d), comp_mask 0, nothing past 9",
		   rc);
	memset(buf, 0xa5, sizeof(buf));
	at->comp_mask = ~0ull;	/* not read */
	rc = efadv_query_ah(ah, at, 64);
	ksft_check(rc == 0 && at->comp_mask == 0 && at->ahn < 0xffff &&
		   all_bytes(buf, 10, 64, 0),
		   "efadv_query_ah inlen 64: rc 0 (saw %d), ahn %u, tail zeroed", rc,
		   at->ahn);
	rc = efadv_query_ah(NULL, at, 16);
	ksft_check(rc != 0, "efadv_query_ah(NULL) fails (rc %d)", rc);
	ibv_destroy_ah(ah);
}

/* --- another device's objects ------------------------------------------- */

static int test_foreign(const char *dev, const char *ip, const char *dst_ip,
			bool real)
{
	struct ibv_qp_init_attr_ex qa = {};
	struct ibv_qp_init_attr qi = {};
	struct efadv_qp_init_attr eq = {};
	struct efadv_cq_init_attr ec = {};
	struct efadv_device_attr da;
	struct efadv_ah_attr aa;
	struct ibv_cq_init_attr_ex ca = { .cqe = 16 };
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct efadv_cq *dv;
	struct ibv_ah *ah;
	int gidx, rc;
	void *p;

	if (!pd || !cq || !cqx)
		srd_die("PD and CQs on the other device", errno);
	ksft_check_eq("efadv_query_device on another device: EOPNOTSUPP", EOPNOTSUPP,
		      efadv_query_device(ctx, &da, sizeof(da)));

	qa = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_DRIVER, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = pd,
	};
	errno = 0;
	p = efadv_create_qp_ex(ctx, &qa, &eq, sizeof(eq));
	ksft_check(!p && errno == EOPNOTSUPP,
		   "efadv_create_qp_ex on another device: EOPNOTSUPP (saw %s)",
		   p ? "a QP" : strerror(errno));
	qi = (struct ibv_qp_init_attr){ .qp_type = IBV_QPT_DRIVER, .send_cq = cq,
					.recv_cq = cq, .cap = qa.cap };
	errno = 0;
	p = efadv_create_driver_qp(pd, &qi, EFADV_QP_DRIVER_TYPE_SRD);
	ksft_check(!p && errno == EOPNOTSUPP,
		   "efadv_create_driver_qp on another device: EOPNOTSUPP (saw %s)",
		   p ? "a QP" : strerror(errno));
	errno = 0;
	p = efadv_create_cq(ctx, &ca, &ec, sizeof(ec));
	ksft_check(!p && errno == EOPNOTSUPP,
		   "efadv_create_cq on another device: EOPNOTSUPP (saw %s)",
		   p ? "a CQ" : strerror(errno));

	gidx = srd_find_gid(ctx, ip, NULL);
	if (gidx < 0 || srd_gid_of_ip(dst_ip, &ah_attr.grh.dgid))
		srd_die("the other device's GIDs", ENOENT);
	ah_attr.grh.sgid_index = gidx;
	ah_attr.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		srd_die("ibv_create_ah on the other device", errno);
	rc = efadv_query_ah(ah, &aa, sizeof(aa));
	ksft_check_eq("efadv_query_ah on another device: EOPNOTSUPP", EOPNOTSUPP, rc);

	/*
	 * libefa does not check this one: it hands back a pointer into the
	 * CQ that must not be used.  Without libefa there is none.
	 */
	errno = 0;
	dv = efadv_cq_from_ibv_cq_ex(cqx);
	if (real)
		ksft_check(dv != NULL, "efadv_cq_from_ibv_cq_ex on another device: "
			   "libefa's (unchecked) answer");
	else
		ksft_check(!dv && errno == EOPNOTSUPP,
			   "efadv_cq_from_ibv_cq_ex without libefa: EOPNOTSUPP (saw %s)",
			   dv ? "a pointer" : strerror(errno));

	ibv_destroy_ah(ah);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ksft_exit();
}

int main(int argc, char **argv)
{
	struct efadv_device_attr da;
	struct qp_env e = {};
	Dl_info info;
	unsigned int i;
	int rc;

	if (argc == 6 && !strcmp(argv[1], "--foreign"))
		return test_foreign(argv[2], argv[3], argv[4],
				    !strcmp(argv[5], "real"));
	if (argc != 6) {
		fprintf(stderr, "usage: %s DEV_A IP_A DEV_B IP_B softsrd|efa-gen1|efa-gen2\n"
			"       %s --foreign DEV IP DST_IP real|absent\n",
			argv[0], argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (!strcmp(argv[5], profiles[i].name))
			prof = &profiles[i];
	if (!prof) {
		fprintf(stderr, "unknown profile %s\n", argv[5]);
		return 2;
	}
	if (dladdr((void *)efadv_query_device, &info) && info.dli_fname)
		printf("# efadv_query_device is from %s\n", info.dli_fname);

	e.ctx = open_dev(argv[1]);
	/* The first call: refused by a libefa that is not softsrd's. */
	rc = efadv_query_device(e.ctx, &da, sizeof(da));
	if (rc) {
		printf("FAIL: efadv_query_device(%s): %s (%d)\n", argv[1],
		       strerror(rc), rc);
		return KSFT_FAIL;
	}
	e.pd = ibv_alloc_pd(e.ctx);
	e.cq = ibv_create_cq(e.ctx, 64, NULL, NULL, 0);
	if (!e.pd || !e.cq)
		srd_die("ibv_alloc_pd/ibv_create_cq", errno);

	test_query_device(e.ctx);
	test_create_cq(e.ctx);
	test_create_qp(&e);
	test_query_ah(&e, argv[2], argv[4]);
	test_traffic(argv[1], argv[2], argv[3], argv[4]);

	ibv_destroy_cq(e.cq);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	return ksft_exit();
}
