// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: queue pairs.  Creating one maps its send and receive rings;
 * posting fills slots there and publishes them with a release store of
 * prod.
 *
 *  - post_recv never enters the kernel, but in one case: when the QP is in
 *    error, where the SQ doorbell makes the kernel flush the new WQEs.
 *  - post_send, and wr_complete for the ibv_wr_*() API, end with one
 *    doorbell: a POST_SEND write() that carries no work request, inside
 *    which the kernel consumes the SQ.  UD sends are complete (their CQEs
 *    written) when it returns.
 *
 * Each ring has one lock for its producers (threads posting), never held
 * across the doorbell: the kernel serialises its own consumption.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srd.h"
#include "verbs.h"

enum {
	SRD_QP_COMP_MASK = IBV_QP_INIT_ATTR_PD |
			   IBV_QP_INIT_ATTR_CREATE_FLAGS |
			   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
};

/* A completion's opcode is the verbs' own (SRD_CQE_OPCODES). */
#define SRD_CQE_IS_IBV_WC(n, v, efa)					\
	_Static_assert((int)SRD_CQE_##n == (int)IBV_WC_##n, "SRD_CQE_" #n);
SRD_CQE_OPCODES(SRD_CQE_IS_IBV_WC)

/* The data area of an SQ or RQ slot, directly after its header. */
static inline void *srd_send_wqe_data(struct srd_send_wqe *wqe)
{
	return wqe + 1;
}

static inline struct srd_sge *srd_recv_wqe_sges(struct srd_recv_wqe *wqe)
{
	return (struct srd_sge *)(wqe + 1);
}

/* The SQ doorbell: consume every WQE the ring holds. */
static int srd_doorbell(struct srd_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_post_send cmd = {
		.hdr = {
			.command = IB_USER_VERBS_CMD_POST_SEND,
			.in_words = sizeof(cmd) / 4,
			.out_words = sizeof(resp) / 4,
		},
		.response = (uintptr_t)&resp,
		.qp_handle = qp->vqp.qp.handle,
		.wr_count = 0,
		.sge_count = 0,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	if (write(qp->vqp.qp.context->cmd_fd, &cmd, sizeof(cmd)) !=
	    sizeof(cmd))
		return errno;
	return 0;
}

/* The message limit, which the kernel keeps current in the SQ ring. */
static uint32_t srd_qp_max_msg_sz(struct srd_qp *qp)
{
	return srd_ring_max_msg_sz(&qp->sq.ring);
}

/* Sends are refused, as in verbs, before the QP reaches RTS. */
static int srd_sq_check_state(struct srd_qp *qp)
{
	switch (srd_ring_state(&qp->sq.ring)) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return EINVAL;
	default:
		return 0;
	}
}

/* Room for one more WQE at @prod in @wq, within the QP's cap. */
static bool srd_wq_has_room(struct srd_wq *wq, uint32_t prod)
{
	return prod - srd_ring_cons(&wq->ring) < wq->max_wr;
}

static uint8_t srd_send_flags(struct srd_qp *qp, unsigned int send_flags)
{
	uint8_t flags = 0;

	if ((send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		flags |= SRD_WQE_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		flags |= SRD_WQE_SOLICITED;
	return flags;
}

static int srd_check_ah(struct srd_qp *qp, struct ibv_ah *ah)
{
	return ah && ah->context == qp->vqp.qp.context ? 0 : EINVAL;
}

/* --- ibv_post_send ------------------------------------------------------ */

#define SRD_WR_OPCODE_CASE(n, v, qps, cap, cqe, rules, wr)		\
	case IBV_WR_##n:						\
		opcode = SRD_WQE_##n;					\
		break;

/* Validate @wr and write it into the SQ slot at @prod. */
static int srd_post_one_send(struct srd_qp *qp, struct ibv_send_wr *wr,
			     uint32_t prod)
{
	bool is_inline = wr->send_flags & IBV_SEND_INLINE;
	struct srd_wqe_rule rule;
	struct srd_send_wqe *wqe;
	uint64_t len = 0;
	uint8_t opcode;
	int i;

	switch (wr->opcode) {
	SRD_WQE_OPCODES(SRD_WR_OPCODE_CASE)
	default:
		return EINVAL;
	}
	rule = srd_wqe_rule(opcode);
	/* RDMA needs ud and rdma fields at once: only ibv_wr_*() has both. */
	if (rule.rules & SRD_WQE_RULE_RDMA)
		return EINVAL;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > srd_qp_max_msg_sz(qp))
		return EINVAL;
	if (is_inline && len > qp->sq.max_inline)
		return EINVAL;
	if (srd_check_ah(qp, wr->wr.ud.ah))
		return EINVAL;

	if (!srd_wq_has_room(&qp->sq, prod))
		return ENOMEM;

	wqe = srd_ring_slot(&qp->sq.ring, prod);
	*wqe = (struct srd_send_wqe){
		.wr_id = wr->wr_id,
		.opcode = opcode,
		.flags = srd_send_flags(qp, wr->send_flags),
		.imm_data = rule.rules & SRD_WQE_RULE_IMM ? wr->imm_data : 0,
		.ahn = to_srd_ah(wr->wr.ud.ah)->ahn,
		.remote_qpn = wr->wr.ud.remote_qpn,
		.remote_qkey = wr->wr.ud.remote_qkey,
	};

	if (is_inline) {
		uint8_t *data = srd_send_wqe_data(wqe);

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(data, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			data += wr->sg_list[i].length;
		}
		wqe->flags |= SRD_WQE_INLINE;
		wqe->inline_len = len;
	} else {
		struct srd_sge *sge = srd_send_wqe_data(wqe);

		for (i = 0; i < wr->num_sge; i++)
			sge[i] = (struct srd_sge){
				.addr = wr->sg_list[i].addr,
				.length = wr->sg_list[i].length,
				.lkey = wr->sg_list[i].lkey,
			};
		wqe->num_sge = wr->num_sge;
	}

	return 0;
}

int srd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr)
{
	struct srd_qp *qp = to_srd_qp(ibqp);
	struct ibv_send_wr *first = wr;
	uint32_t start, prod;
	int err, db_err;

	pthread_spin_lock(&qp->sq.lock);

	start = prod = srd_ring_prod(&qp->sq.ring);
	err = srd_sq_check_state(qp);
	for (; wr && !err; wr = wr->next) {
		err = srd_post_one_send(qp, wr, prod);
		if (err)
			break;
		prod++;
	}
	if (err)
		*bad_wr = wr;
	if (prod != start)
		srd_ring_publish(&qp->sq.ring, prod);

	pthread_spin_unlock(&qp->sq.lock);

	if (prod == start)
		return err;

	/*
	 * The doorbell fails only when the QP or the device is gone; then
	 * none of the WRs will complete, so report them all as not posted.
	 */
	db_err = srd_doorbell(qp);
	if (db_err && !err) {
		*bad_wr = first;
		err = db_err;
	}
	return err;
}

/* --- ibv_post_recv ------------------------------------------------------ */

static int srd_post_one_recv(struct srd_qp *qp, struct ibv_recv_wr *wr,
			     uint32_t prod)
{
	struct srd_recv_wqe *wqe;
	struct srd_sge *sge;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->rq.max_sge)
		return EINVAL;
	if (!srd_wq_has_room(&qp->rq, prod))
		return ENOMEM;

	wqe = srd_ring_slot(&qp->rq.ring, prod);
	*wqe = (struct srd_recv_wqe){
		.wr_id = wr->wr_id,
		.num_sge = wr->num_sge,
	};
	sge = srd_recv_wqe_sges(wqe);
	for (i = 0; i < wr->num_sge; i++)
		sge[i] = (struct srd_sge){
			.addr = wr->sg_list[i].addr,
			.length = wr->sg_list[i].length,
			.lkey = wr->sg_list[i].lkey,
		};

	return 0;
}

int srd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr)
{
	struct srd_qp *qp = to_srd_qp(ibqp);
	uint32_t start, prod;
	int err = 0;

	pthread_spin_lock(&qp->rq.lock);

	start = prod = srd_ring_prod(&qp->rq.ring);
	/* Receives are refused, as in verbs, while the QP is in RESET. */
	if (srd_ring_state(&qp->rq.ring) == IBV_QPS_RESET)
		err = EINVAL;
	for (; wr && !err; wr = wr->next) {
		err = srd_post_one_recv(qp, wr, prod);
		if (err)
			break;
		prod++;
	}
	if (err)
		*bad_wr = wr;
	if (prod != start)
		srd_ring_publish(&qp->rq.ring, prod);

	pthread_spin_unlock(&qp->rq.lock);

	if (prod == start)
		return err;

	/*
	 * A QP in error flushes receive WQEs when it enters the state and on
	 * a doorbell: ring it for WQEs posted since.  The full barrier pairs
	 * with the kernel's between setting the state and reading prod, so
	 * that either it sees the new prod or we see the error state.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (srd_ring_state(&qp->rq.ring) == IBV_QPS_ERR) {
		int db_err = srd_doorbell(qp);

		if (db_err && !err)
			err = db_err;
	}
	return err;
}

/* --- ibv_wr_*() ------------------------------------------------------------
 *
 * wr_start takes the SQ lock and wr_complete or wr_abort drops it.  Builders
 * (wr_send, ...) fill the next slot past prod; setters (wr_set_*) complete
 * the last one built.  An error is kept in wr_err and reported by
 * wr_complete, which then publishes nothing; prod moves only in
 * wr_complete, so the slots filled meanwhile are never seen by the kernel.
 */

static bool srd_wqe_is_rdma(const struct srd_send_wqe *wqe)
{
	return srd_wqe_rule(wqe->opcode).rules & SRD_WQE_RULE_RDMA;
}

static uint32_t srd_wqe_max_sge(struct srd_qp *qp,
				const struct srd_send_wqe *wqe)
{
	if (srd_wqe_is_rdma(wqe))
		return qp->max_rdma_sge < qp->sq.max_sge ? qp->max_rdma_sge :
							   qp->sq.max_sge;
	return qp->sq.max_sge;
}

/*
 * The bytes a WQE may move: a send is one message (max_msg_sz, which the
 * kernel keeps current); an RDMA read or write, which the kernel cuts
 * into messages, up to max_rdma_size.
 */
static uint64_t srd_wqe_max_len(struct srd_qp *qp,
				const struct srd_send_wqe *wqe)
{
	if (srd_wqe_is_rdma(wqe))
		return qp->max_rdma_size;
	return srd_qp_max_msg_sz(qp);
}

/* Checks on the last WQE built that only its end can make. */
static void srd_wr_finish(struct srd_qp *qp)
{
	if (!qp->wr_err && qp->wr_wqe && !qp->wr_has_addr)
		qp->wr_err = EINVAL;	/* no wr_set_ud_addr() */
}

static struct srd_send_wqe *srd_wr_build(struct ibv_qp_ex *ibqpx,
					 uint8_t opcode)
{
	struct srd_qp *qp = to_srd_qp_ex(ibqpx);
	struct srd_send_wqe *wqe;

	srd_wr_finish(qp);
	if (qp->wr_err)
		return NULL;
	if (!srd_wq_has_room(&qp->sq, qp->wr_prod)) {
		qp->wr_err = ENOMEM;
		return NULL;
	}

	wqe = srd_ring_slot(&qp->sq.ring, qp->wr_prod);
	*wqe = (struct srd_send_wqe){
		.wr_id = ibqpx->wr_id,
		.opcode = opcode,
		.flags = srd_send_flags(qp, ibqpx->wr_flags),
	};
	qp->wr_prod++;
	qp->wr_wqe = wqe;
	qp->wr_has_addr = false;

	return wqe;
}

/* The WQE a setter applies to, or NULL (and an error) if there is none. */
static struct srd_send_wqe *srd_wr_current(struct srd_qp *qp)
{
	if (qp->wr_err)
		return NULL;
	if (!qp->wr_wqe) {
		qp->wr_err = EINVAL;	/* a setter before any builder */
		return NULL;
	}
	return qp->wr_wqe;
}

static void srd_wr_start(struct ibv_qp_ex *ibqpx)
{
	struct srd_qp *qp = to_srd_qp_ex(ibqpx);

	pthread_spin_lock(&qp->sq.lock);

	qp->wr_prod = srd_ring_prod(&qp->sq.ring);
	qp->wr_wqe = NULL;
	qp->wr_err = srd_sq_check_state(qp);
}

static int srd_wr_complete(struct ibv_qp_ex *ibqpx)
{
	struct srd_qp *qp = to_srd_qp_ex(ibqpx);
	bool posted = false;
	int err;

	srd_wr_finish(qp);
	err = qp->wr_err;
	if (!err && qp->wr_prod != srd_ring_prod(&qp->sq.ring)) {
		srd_ring_publish(&qp->sq.ring, qp->wr_prod);
		posted = true;
	}
	qp->wr_wqe = NULL;

	pthread_spin_unlock(&qp->sq.lock);

	return posted ? srd_doorbell(qp) : err;
}

static void srd_wr_abort(struct ibv_qp_ex *ibqpx)
{
	struct srd_qp *qp = to_srd_qp_ex(ibqpx);

	qp->wr_wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

static void srd_wr_send(struct ibv_qp_ex *ibqpx)
{
	srd_wr_build(ibqpx, SRD_WQE_SEND);
}

static void srd_wr_send_imm(struct ibv_qp_ex *ibqpx, __be32 imm_data)
{
	struct srd_send_wqe *wqe = srd_wr_build(ibqpx, SRD_WQE_SEND_WITH_IMM);

	if (wqe)
		wqe->imm_data = imm_data;
}

static void srd_wr_rdma(struct ibv_qp_ex *ibqpx, uint8_t opcode,
			uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct srd_send_wqe *wqe = srd_wr_build(ibqpx, opcode);

	if (!wqe)
		return;
	wqe->rkey = rkey;
	wqe->remote_addr = remote_addr;
	wqe->imm_data = imm_data;
}

static void srd_wr_rdma_write(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	srd_wr_rdma(ibqpx, SRD_WQE_RDMA_WRITE, rkey, remote_addr, 0);
}

static void srd_wr_rdma_write_imm(struct ibv_qp_ex *ibqpx, uint32_t rkey,
				  uint64_t remote_addr, __be32 imm_data)
{
	srd_wr_rdma(ibqpx, SRD_WQE_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		    imm_data);
}

static void srd_wr_rdma_read(struct ibv_qp_ex *ibqpx, uint32_t rkey,
			     uint64_t remote_addr)
{
	srd_wr_rdma(ibqpx, SRD_WQE_RDMA_READ, rkey, remote_addr, 0);
}

static void srd_wr_set_ud_addr(struct ibv_qp_ex *ibqpx, struct ibv_ah *ah,
			       uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct srd_qp *qp = to_srd_qp_ex(ibqpx);
	struct srd_send_wqe *wqe = srd_wr_current(qp);

	if (!wqe)
		return;
	if (srd_check_ah(qp, ah)) {
		qp->wr_err = EINVAL;
		return;
	}
	wqe->ahn = to_srd_ah(ah)->ahn;
	wqe->remote_qpn = remote_qpn;
	wqe->remote_qkey = remote_qkey;
	qp->wr_has_addr = true;
}

static void srd_wr_set_sge_list(struct ibv_qp_ex *ibqpx, size_t num_sge,
				const struct ibv_sge *sg_list)
{
	struct srd_qp *qp = to_srd_qp_ex(ibqpx);
	struct srd_send_wqe *wqe = srd_wr_current(qp);
	struct srd_sge *sge;
	uint64_t len = 0;
	size_t i;

	if (!wqe)
		return;
	if (num_sge > srd_wqe_max_sge(qp, wqe)) {
		qp->wr_err = EINVAL;
		return;
	}
	for (i = 0; i < num_sge; i++)
		len += sg_list[i].length;
	if (len > srd_wqe_max_len(qp, wqe)) {
		qp->wr_err = EINVAL;
		return;
	}

	sge = srd_send_wqe_data(wqe);
	for (i = 0; i < num_sge; i++)
		sge[i] = (struct srd_sge){
			.addr = sg_list[i].addr,
			.length = sg_list[i].length,
			.lkey = sg_list[i].lkey,
		};
	wqe->flags &= ~SRD_WQE_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = num_sge;
}

static void srd_wr_set_sge(struct ibv_qp_ex *ibqpx, uint32_t lkey,
			   uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	srd_wr_set_sge_list(ibqpx, 1, &sge);
}

static void srd_wr_set_inline_data_list(struct ibv_qp_ex *ibqpx,
					size_t num_buf,
					const struct ibv_data_buf *buf_list)
{
	struct srd_qp *qp = to_srd_qp_ex(ibqpx);
	struct srd_send_wqe *wqe = srd_wr_current(qp);
	uint64_t len = 0;
	uint8_t *data;
	size_t i;

	if (!wqe)
		return;
	/* Inline data goes out; an RDMA read brings data in. */
	if (srd_wqe_rule(wqe->opcode).rules & SRD_WQE_RULE_REMOTE_READ) {
		qp->wr_err = EINVAL;
		return;
	}
	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (len > qp->sq.max_inline || len > srd_wqe_max_len(qp, wqe)) {
		qp->wr_err = EINVAL;
		return;
	}

	data = srd_send_wqe_data(wqe);
	for (i = 0; i < num_buf; i++) {
		memcpy(data, buf_list[i].addr, buf_list[i].length);
		data += buf_list[i].length;
	}
	wqe->flags |= SRD_WQE_INLINE;
	wqe->inline_len = len;
	wqe->num_sge = 0;
}

static void srd_wr_set_inline_data(struct ibv_qp_ex *ibqpx, void *addr,
				   size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	srd_wr_set_inline_data_list(ibqpx, 1, &buf);
}

static void srd_qp_set_wr_ops(struct ibv_qp_ex *qpx, uint64_t send_ops)
{
	/* Each opcode's builder, srd_<wr>() (SRD_WQE_OPCODES). */
#define SRD_WR_BUILDER(n, v, qps, cap, cqe, rules, wr)			\
	if (send_ops & IBV_QP_EX_WITH_##n)				\
		qpx->wr = srd_##wr;
	SRD_WQE_OPCODES(SRD_WR_BUILDER)
#undef SRD_WR_BUILDER

	qpx->wr_set_ud_addr = srd_wr_set_ud_addr;
	qpx->wr_set_inline_data = srd_wr_set_inline_data;
	qpx->wr_set_inline_data_list = srd_wr_set_inline_data_list;
	qpx->wr_set_sge = srd_wr_set_sge;
	qpx->wr_set_sge_list = srd_wr_set_sge_list;
	qpx->wr_start = srd_wr_start;
	qpx->wr_complete = srd_wr_complete;
	qpx->wr_abort = srd_wr_abort;
}

/* --- create, modify, query, destroy ---------------------------------------- */

/*
 * What softsrd takes: UD, and IBV_QPT_DRIVER meaning SRD (which the kernel
 * decides on); both CQs; no SRQ, no create flags; the send opcodes of the
 * QP type: on SRD QPs, the RDMA ones that the kernel advertised in
 * device_caps.
 */
static int srd_check_qp_attr(const struct srd_context *ctx,
			     struct ibv_qp_init_attr_ex *attr,
			     uint32_t *driver_qp_type)
{
	uint64_t send_ops = 0;
	uint32_t on;

	switch (attr->qp_type) {
	case IBV_QPT_UD:
		*driver_qp_type = SRD_QP_TYPE_NONE;
		on = SRD_WQE_ON_UD;
		break;
	case IBV_QPT_DRIVER:
		*driver_qp_type = SRD_QP_TYPE_SRD;
		on = SRD_WQE_ON_SRD;
		break;
	default:
		return EOPNOTSUPP;
	}
#define SRD_WR_SEND_OP(n, v, qps, cap, cqe, rules, wr)			\
	if (((qps) & on) && ((cap) & ctx->device_caps) == (cap))	\
		send_ops |= IBV_QP_EX_WITH_##n;
	SRD_WQE_OPCODES(SRD_WR_SEND_OP)
#undef SRD_WR_SEND_OP

	if (attr->comp_mask & ~SRD_QP_COMP_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~send_ops))
		return EOPNOTSUPP;
	if (attr->srq)
		return EOPNOTSUPP;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	/* libibverbs would dereference them before the kernel could refuse. */
	if (!attr->send_cq || !attr->recv_cq)
		return EINVAL;

	return 0;
}

static int srd_qp_map_rings(struct srd_qp *qp, int cmd_fd,
			    const struct ibv_qp_cap *cap,
			    const struct srd_create_qp_resp *resp)
{
	size_t sq_data, rq_data;
	int err;

	sq_data = (size_t)cap->max_send_sge * sizeof(struct srd_sge);
	if (sq_data < cap->max_inline_data)
		sq_data = cap->max_inline_data;
	rq_data = (size_t)cap->max_recv_sge * sizeof(struct srd_sge);

	err = srd_ring_map(&qp->sq.ring, cmd_fd, &resp->sq,
			   sizeof(struct srd_send_wqe) + sq_data,
			   cap->max_send_wr);
	if (err)
		return err;

	err = srd_ring_map(&qp->rq.ring, cmd_fd, &resp->rq,
			   sizeof(struct srd_recv_wqe) + rq_data,
			   cap->max_recv_wr);
	if (err)
		srd_ring_unmap(&qp->sq.ring);
	return err;
}

static void srd_qp_free(struct srd_qp *qp)
{
	pthread_spin_destroy(&qp->rq.lock);
	pthread_spin_destroy(&qp->sq.lock);
	free(qp);
}

static struct srd_qp *srd_qp_alloc(void)
{
	struct srd_qp *qp = calloc(1, sizeof(*qp));
	int err;

	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	err = pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;
	err = pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_sq_lock;
	return qp;

err_sq_lock:
	pthread_spin_destroy(&qp->sq.lock);
err_free:
	free(qp);
	errno = err;
	return NULL;
}

/*
 * Both creation verbs and srddv_create_qp_ex() end here, the last with
 * SRD_QP_FLAG_* @flags (the kernel refuses one the device has not got).
 * Returns the QP, or NULL with errno set.
 */
static struct srd_qp *srd_qp_create(struct ibv_context *ibvctx,
				    struct ibv_qp_init_attr_ex *attr,
				    uint32_t flags)
{
	struct verbs_context *vctx = verbs_get_ctx(ibvctx);
	struct srd_context *ctx = to_srd_ctx(ibvctx);
	struct srd_create_qp_uresp uresp = {};
	struct srd_create_qp_ucmd ucmd = {};
	uint32_t comp_mask = attr->comp_mask;
	uint32_t driver_qp_type;
	struct srd_qp *qp;
	int err;

	err = srd_check_qp_attr(ctx, attr, &driver_qp_type);
	if (err) {
		srd_err(vctx, "unsupported QP attributes (type %d, comp_mask %#x)\n",
			attr->qp_type, attr->comp_mask);
		errno = err;
		return NULL;
	}

	qp = srd_qp_alloc();
	if (!qp)
		return NULL;

	ucmd.drv.driver_qp_type = driver_qp_type;
	ucmd.drv.flags = flags;

	/* Zero create flags, checked above: nothing to pass on. */
	attr->comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	err = ibv_cmd_create_qp_ex(ibvctx, &qp->vqp, attr, &ucmd.ibv_cmd,
				   sizeof(ucmd), &uresp.ibv_resp,
				   sizeof(uresp));
	attr->comp_mask = comp_mask;
	if (err) {
		srd_err(vctx, "ibv_cmd_create_qp_ex failed: %d\n", err);
		goto err_free;
	}

	/* attr->cap now holds what the kernel granted. */
	err = srd_qp_map_rings(qp, ibvctx->cmd_fd, &attr->cap, &uresp.drv);
	if (err) {
		srd_err(vctx, "cannot map QP %u's rings: %d\n",
			qp->vqp.qp.qp_num, err);
		goto err_destroy;
	}

	qp->sq.max_wr = attr->cap.max_send_wr;
	qp->sq.max_sge = attr->cap.max_send_sge;
	qp->sq.max_inline = attr->cap.max_inline_data;
	qp->rq.max_wr = attr->cap.max_recv_wr;
	qp->rq.max_sge = attr->cap.max_recv_sge;
	qp->max_msg_sz = uresp.drv.max_msg_sz;
	qp->max_rdma_sge = ctx->max_rdma_sge;
	qp->max_rdma_size = ctx->max_rdma_size;
	qp->sq_sig_all = attr->sq_sig_all;

	if (comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		srd_qp_set_wr_ops(&qp->vqp.qp_ex, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}

	/* From here polling hands out its CQEs (cq.c). */
	srd_qp_table_add(ctx, qp);

	return qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	srd_qp_free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *srd_create_qp(struct ibv_pd *ibpd,
			     struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = ibpd,
	};
	struct srd_qp *qp;

	qp = srd_qp_create(ibpd->context, &attr_ex, 0);
	if (!qp)
		return NULL;

	attr->cap = attr_ex.cap;
	return &qp->vqp.qp;
}

struct ibv_qp *srd_create_qp_ex(struct ibv_context *ibvctx,
				struct ibv_qp_init_attr_ex *attr)
{
	return srd_create_qp_flags(ibvctx, attr, 0);
}

struct ibv_qp *srd_create_qp_flags(struct ibv_context *ibvctx,
				   struct ibv_qp_init_attr_ex *attr,
				   uint32_t flags)
{
	struct srd_qp *qp = srd_qp_create(ibvctx, attr, flags);

	return qp ? &qp->vqp.qp : NULL;
}

int srd_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask)
{
	struct ibv_modify_qp cmd = {};

	return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
}

int srd_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		 int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int srd_destroy_qp(struct ibv_qp *ibqp)
{
	struct srd_qp *qp = to_srd_qp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err) {
		srd_err(verbs_get_ctx(ibqp->context),
			"ibv_cmd_destroy_qp failed: %d\n", err);
		return err;
	}

	/*
	 * The kernel writes no more CQEs of it: those left in its CQs are
	 * refused by polling from now on, as libefa refuses them.
	 */
	srd_qp_table_del(to_srd_ctx(ibqp->context), qp);
	srd_ring_unmap(&qp->rq.ring);
	srd_ring_unmap(&qp->sq.ring);
	srd_qp_free(qp);

	return 0;
}
