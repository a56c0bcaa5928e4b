// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srd_perf: verbs resources: the device, its GID, the QPs, CQs and MR, the
 * AH, and their cleanup.
 */
#include "perf.h"

void open_device(struct perf *p)
{
	struct ibv_device **list, *dev = NULL;
	int i, n, nsrd = 0;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++) {
		if (!srd_device_is_srd(list[i]))
			continue;
		nsrd++;
		/* Without -d, the first srd device, but one of this namespace first. */
		if (!p->o.dev &&
		    (!dev || (!srd_device_is_local(ibv_get_device_name(dev)) &&
			      srd_device_is_local(ibv_get_device_name(list[i])))))
			dev = list[i];
	}
	if (p->o.dev && list)
		dev = srd_device_by_name(list, p->o.dev);
	if (!nsrd) {
		fprintf(cmt, "SKIP: no srd device\n");
		exit(4);
	}
	if (!dev || !srd_device_is_srd(dev))
		die(p, "%s: %s", p->o.dev, dev ? "not an srd device" : "no such device");
	p->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!p->ctx)
		die(p, "ibv_open_device(%s): %s", p->o.dev ? p->o.dev : "srd",
		    strerror(errno));
	if (ibv_query_device(p->ctx, &p->dev))
		die(p, "ibv_query_device: %s", strerror(errno));
	if (ibv_query_port(p->ctx, 1, &p->port))
		die(p, "ibv_query_port: %s", strerror(errno));
}

void pick_gid(struct perf *p)
{
	char s[INET6_ADDRSTRLEN];

	if (p->o.gidx >= 0) {
		if (ibv_query_gid(p->ctx, 1, p->o.gidx, &p->gid))
			die(p, "ibv_query_gid(%d): %s", p->o.gidx, strerror(errno));
		p->gid_index = p->o.gidx;
	} else {
		p->gid_index = srd_find_v4_gid(p->ctx, p->port.gid_tbl_len, &p->gid);
		if (p->gid_index < 0)
			die(p, "%s has no IPv4 GID: use -g",
			    ibv_get_device_name(p->ctx->device));
	}
	fprintf(cmt, "# %s: device %s, GID %d %s, %s QPs\n", p->o.server ? "server" : "client",
	       ibv_get_device_name(p->ctx->device), p->gid_index, gid_str(&p->gid, s),
	       p->o.flags & F_UD ? "UD" : "SRD");
}

/*
 * The largest RDMA op the client may post: max_rdma_size, once the device
 * says it has the op (without the direct verbs, max_msg_sz).
 */
static uint32_t max_rdma(struct perf *p)
{
#ifdef SRD_HAVE_SRDDV
	uint32_t cap = p->o.op == OP_WRITE ? SRDDV_DEVICE_ATTR_CAPS_RDMA_WRITE :
					     SRDDV_DEVICE_ATTR_CAPS_RDMA_READ;
	struct srddv_device_attr a = {};
	int rc = srddv_query_device(p->ctx, &a, sizeof(a));

	if (rc)
		die(p, "srddv_query_device: %s", strerror(rc));
	if (!(a.device_caps & cap))
		die(p, "%s has no RDMA %s (device_caps %#x)",
		    ibv_get_device_name(p->ctx->device), op_names[p->o.op],
		    a.device_caps);
	return a.max_rdma_size;
#else
	return p->port.max_msg_sz;
#endif
}

/* The largest message a QP of ours may carry (RDMA: the client's op). */
uint32_t max_msg(struct perf *p)
{
	uint32_t mtu = 128u << p->port.active_mtu;

	if (p->o.op != OP_SEND)
		return p->o.server ? UINT32_MAX : max_rdma(p);
	return p->o.flags & F_UD ? mtu : p->port.max_msg_sz;
}

/* One of our QPs (UD with -U, else SRD), in RESET; *cap: asked, then granted. */
static struct ibv_qp *create_qp(struct perf *p, struct ibv_qp_cap *cap)
{
	enum srd_qp_kind kind = p->o.flags & F_UD ? SRD_QP_UD : PERF_SRD_QP;
	uint64_t ops = 0;
	struct ibv_qp *qp;

	if (p->o.flags & F_WR_API) {
		ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
		if (!p->o.server && p->o.op == OP_WRITE)
			ops |= IBV_QP_EX_WITH_RDMA_WRITE;
		if (!p->o.server && p->o.op == OP_READ)
			ops |= IBV_QP_EX_WITH_RDMA_READ;
	}
	qp = srd_qp_new(p->pd, p->scq, p->rcq, kind, ops, cap);
	if (!qp)
		die(p, "creating a%s QP%s: %s", p->o.flags & F_UD ? " UD" : "n SRD",
		    !p->o.server && p->o.op != OP_SEND ?
		    (p->o.op == OP_WRITE ? " for RDMA writes" : " for RDMA reads") : "",
		    strerror(errno));
	return qp;
}

static void qp_to_rts(struct perf *p, struct ibv_qp *qp)
{
	/* The client's SRD QPs retry RNR -r times; the rest keep the default. */
	int rc = srd_qp_to_rts_rnr(qp, PERF_QKEY, !p->o.server && !(p->o.flags & F_UD) ?
				   (int)p->o.rnr : -1);

	if (rc)
		die(p, "moving QP %u to RTS: %s", qp->qp_num, strerror(rc));
}

void post_recv(struct perf *p, struct perf_qp *q, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(q->rx + (size_t)slot * p->rx_stride),
		.length = p->rx_stride, .lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)q->idx << 32 | slot,
				  .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = ibv_post_recv(q->qp, &wr, &bad);

	if (rc) {
		note(p, NOTE_ERR, "ibv_post_recv on QP %u: %s", q->idx, strerror(rc));
		q->rx_err++;
	}
}

/*
 * Everything but the AH: nslots send slots and nrecv posted receives per
 * QP, in one registered buffer.  The server of RDMA ops registers it for
 * remote access: its send slots are the region the client's ops target.
 */
void setup(struct perf *p, uint32_t nslots, uint32_t nrecv)
{
	struct ibv_qp_cap cap = { .max_send_wr = nslots, .max_recv_wr = nrecv,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	uint32_t i, s, cqe_s = p->nqps * nslots, cqe_r = p->nqps * nrecv;
	size_t per_qp;
	uint8_t *m;

	if (nslots > (uint32_t)p->dev.max_qp_wr || nrecv > (uint32_t)p->dev.max_qp_wr)
		die(p, "%u WRs per queue asked for, the device has %d", nslots > nrecv ?
		    nslots : nrecv, p->dev.max_qp_wr);
	if (cqe_s > (uint32_t)p->dev.max_cqe || cqe_r > (uint32_t)p->dev.max_cqe)
		die(p, "CQs of %u entries needed, the device has %d", cqe_s > cqe_r ?
		    cqe_s : cqe_r, p->dev.max_cqe);
	if (p->o.max_size > max_msg(p))
		die(p, "a %u-byte message is beyond the %u bytes of %s",
		    p->o.max_size, max_msg(p), p->o.flags & F_UD ? "the MTU" :
		    p->o.op != OP_SEND ? "max_rdma_size" : "max_msg_sz");
	p->rx_off = p->o.flags & F_UD ? SRD_GRH : 0;
	p->slot_size = (p->o.max_size + 63) & ~63u;
	p->rx_stride = (p->o.max_size + p->rx_off + 63) & ~63u;
	if (!p->slot_size)
		p->slot_size = 64;
	per_qp = (size_t)nslots * p->slot_size + (size_t)nrecv * p->rx_stride;
	p->buf_len = (p->nqps * per_qp + 4095) & ~(size_t)4095;
	p->buf = aligned_alloc(4096, p->buf_len);
	if (!p->buf)
		die(p, "cannot allocate %zu bytes of buffers", p->buf_len);
	memset(p->buf, 0, p->buf_len);

	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		die(p, "ibv_alloc_pd: %s", strerror(errno));
	p->mr = ibv_reg_mr(p->pd, p->buf, p->buf_len, IBV_ACCESS_LOCAL_WRITE |
			   (p->o.server && p->o.op != OP_SEND ?
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ : 0));
	if (!p->mr)
		die(p, "ibv_reg_mr of %zu bytes: %s", p->buf_len, strerror(errno));
	if (p->o.flags & F_EVENTS) {
		p->chan = ibv_create_comp_channel(p->ctx);
		if (!p->chan)
			die(p, "ibv_create_comp_channel: %s", strerror(errno));
		if (fcntl(p->chan->fd, F_SETFL,
			  fcntl(p->chan->fd, F_GETFL) | O_NONBLOCK))
			die(p, "O_NONBLOCK on the completion channel: %s",
			    strerror(errno));
	}
	p->scq = ibv_create_cq(p->ctx, cqe_s ? cqe_s : 1, NULL, p->chan, 0);
	p->rcq = ibv_create_cq(p->ctx, cqe_r ? cqe_r : 1, NULL, p->chan, 0);
	if (!p->scq || !p->rcq)
		die(p, "ibv_create_cq of %u and %u entries: %s", cqe_s, cqe_r,
		    strerror(errno));
	p->armed = false;

	p->qps = zalloc(p, p->nqps * sizeof(*p->qps));
	for (i = 0, m = p->buf; i < p->nqps; i++, m += per_qp) {
		struct perf_qp *q = &p->qps[i];
		struct ibv_qp_cap c = cap;

		q->idx = i;
		q->qp = create_qp(p, &c);
		if (p->o.flags & F_WR_API)
			q->qpx = ibv_qp_to_qp_ex(q->qp);
		qp_to_rts(p, q->qp);
		q->tx = m;
		q->nslots = q->nfree = nslots;
		q->free = zalloc(p, nslots * sizeof(*q->free));
		q->slot_seq = zalloc(p, nslots * sizeof(*q->slot_seq));
		q->slot_t = zalloc(p, nslots * sizeof(*q->slot_t));
		q->slot_state = zalloc(p, nslots * sizeof(*q->slot_state));
		q->slot_last = zalloc(p, nslots * sizeof(*q->slot_last));
		q->poisoned = zalloc(p, nslots * sizeof(*q->poisoned));
		for (s = 0; s < nslots; s++)
			q->free[s] = s;
		q->rx = m + (size_t)nslots * p->slot_size;
		q->nrecv = nrecv;
		for (s = 0; s < nrecv; s++)
			post_recv(p, q, s);
	}
}

void make_ah(struct perf *p)
{
	char s[INET6_ADDRSTRLEN];

	p->ah = srd_ah_new(p->pd, p->gid_index, &p->peer_gid);
	if (!p->ah)
		die(p, "ibv_create_ah to %s: %s", gid_str(&p->peer_gid, s),
		    strerror(errno));
}

void perf_cleanup(struct perf *p)
{
	uint32_t i;

	for (i = 0; p->qps && i < p->nqps; i++) {
		struct perf_qp *q = &p->qps[i];

		if (q->qp)
			ibv_destroy_qp(q->qp);
		free(q->free);
		free(q->slot_seq);
		free(q->slot_t);
		free(q->slot_state);
		free(q->poisoned);
		free(q->slot_last);
		free(q->ok.b);
		free(q->seen.b);
		free(q->peer_ok.b);
	}
	free(p->qps);
	p->qps = NULL;
	if (p->ah)
		ibv_destroy_ah(p->ah);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	if (p->scq)
		ibv_destroy_cq(p->scq);
	if (p->rcq)
		ibv_destroy_cq(p->rcq);
	if (p->chan)
		ibv_destroy_comp_channel(p->chan);
	p->chan = NULL;
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->ctx)
		ibv_close_device(p->ctx);
	p->ah = NULL, p->mr = NULL, p->scq = p->rcq = NULL, p->pd = NULL;
	p->ctx = NULL;
	free(p->buf);
	free(p->samples);
	p->buf = NULL, p->samples = NULL;
	if (p->sock >= 0)
		close(p->sock);
	if (p->lsock >= 0)
		close(p->lsock);
	p->sock = p->lsock = -1;
}
