// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: completion queues.  The kernel writes struct srd_cqe into the
 * CQ's ring; polling reads them there and never enters the kernel.
 *
 * Overflow: when the ring is full the kernel drops the completion, sets
 * SRD_CQ_FLAG_OVERFLOW in the ring's state and raises IBV_EVENT_CQ_ERR.
 * The CQEs already in the ring stay valid and polling keeps returning
 * them, so nothing here looks at the flag.
 *
 * A CQE of a QP the context no longer has is refused (qp_table.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "srd.h"
#include "verbs.h"

/* What a CQE can report: every standard field, nothing more. */
enum {
	SRD_CQ_WC_FLAGS = IBV_WC_STANDARD_FLAGS,
	SRD_CQ_CREATE_FLAGS = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	SRD_CQ_COMP_MASK = IBV_CQ_INIT_ATTR_MASK_FLAGS,
};

static unsigned int srd_cqe_wc_flags(const struct srd_cqe *cqe)
{
	unsigned int flags = 0;

	if (cqe->flags & SRD_CQE_WITH_IMM)
		flags |= IBV_WC_WITH_IMM;
	if (cqe->flags & SRD_CQE_GRH)
		flags |= IBV_WC_GRH;
	return flags;
}

static void srd_cqe_to_wc(const struct srd_cqe *cqe, struct ibv_wc *wc)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = srd_cqe_wc_flags(cqe);
	wc->pkey_index = 0;
	wc->slid = cqe->slid;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
}

/*
 * The number of CQEs ready from @cons, or -1 if the counters are
 * impossible (the kernel never lets prod run more than a ring ahead).
 */
static int64_t srd_cq_ready(const struct srd_cq *cq, uint32_t cons)
{
	uint32_t ready = srd_ring_prod(&cq->ring) - cons;

	if (ready > cq->ring.num_entries)
		return -1;
	return ready;
}

/* Whether a destroyed QP's CQE is refused (efa profiles) or skipped. */
static bool srd_cq_refuses_stale(const struct srd_cq *cq)
{
	return to_srd_ctx(cq->vcq.cq.context)->limits_profile !=
	       SRD_LIMITS_SOFTSRD;
}

/*
 * A CQE of a QP this context no longer has (destroyed, see qp_table.c) is
 * never handed out as valid.  In the efa profiles it is refused as libefa
 * refuses it (rdma-core providers/efa/verbs.c, efa_poll_sub_cq(), "Invalid
 * QP"): it is consumed, and
 *   - ibv_poll_cq() returns the completions read before it, or -EINVAL if
 *     it came first;
 *   - ibv_start_poll() returns EINVAL, with the CQ unlocked (no end_poll);
 *   - ibv_next_poll() returns EINVAL, and end_poll is still due.
 * Software that destroys a QP and then drains its CQs (libfabric's efa
 * provider) relies on this.  In the softsrd profile it is consumed
 * silently, as mlx5 cleans a destroyed QP's CQEs out of its CQs: the
 * receives a destroy flushed, and those the owner did not poll before,
 * are of a QP the application has let go, and a CQ shared with other
 * QPs goes on without an error.  Under cq->lock.
 */
static bool srd_cqe_qp_valid(struct srd_cq *cq, const struct srd_cqe *cqe)
{
	struct ibv_context *ibvctx = cq->vcq.cq.context;

	if (cqe->qp_num == cq->live_qpn)
		return true;
	if (srd_qp_table_has(to_srd_ctx(ibvctx), cqe->qp_num)) {
		cq->live_qpn = cqe->qp_num;
		return true;
	}
	if (srd_cq_refuses_stale(cq))
		srd_err(verbs_get_ctx(ibvctx), "Invalid QP[%u]\n", cqe->qp_num);
	return false;
}

int srd_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct srd_cq *cq = to_srd_cq(ibcq);
	uint32_t cons, used = 0;
	int64_t ready;
	int n = 0, err = 0;

	pthread_spin_lock(&cq->lock);

	cons = srd_ring_cons(&cq->ring);
	ready = srd_cq_ready(cq, cons);
	if (ready < 0) {
		pthread_spin_unlock(&cq->lock);
		return -EIO;
	}

	while (n < num_entries && used < ready) {
		const struct srd_cqe *cqe = srd_ring_slot(&cq->ring,
							  cons + used++);

		if (!srd_cqe_qp_valid(cq, cqe)) {
			if (!srd_cq_refuses_stale(cq))
				continue;
			err = EINVAL;
			break;
		}
		srd_cqe_to_wc(cqe, &wc[n++]);
	}
	if (used)
		srd_ring_release(&cq->ring, cons + used);

	pthread_spin_unlock(&cq->lock);

	return n ? n : -err;
}

/*
 * The extended polling API.  start_poll takes the lock and end_poll drops
 * it, so the CQE being read stays put in between; CQEs are freed to the
 * kernel at end_poll.
 */
static void srd_cq_set_current(struct srd_cq *cq, uint32_t idx)
{
	const struct srd_cqe *cqe = srd_ring_slot(&cq->ring, idx);

	cq->cur_cqe = cqe;
	cq->poll_cons = idx + 1;
	cq->vcq.cq_ex.wr_id = cqe->wr_id;
	cq->vcq.cq_ex.status = cqe->status;
}

static int srd_start_poll(struct ibv_cq_ex *ibcqx,
			  struct ibv_poll_cq_attr *attr)
{
	struct srd_cq *cq = to_srd_cq_ex(ibcqx);
	uint32_t cons;
	int64_t ready;

	if (attr->comp_mask)
		return EINVAL;

	pthread_spin_lock(&cq->lock);

	cons = srd_ring_cons(&cq->ring);
	ready = srd_cq_ready(cq, cons);
	while (ready > 0 &&
	       !srd_cqe_qp_valid(cq, srd_ring_slot(&cq->ring, cons))) {
		srd_ring_release(&cq->ring, ++cons);
		if (srd_cq_refuses_stale(cq)) {
			pthread_spin_unlock(&cq->lock);
			return EINVAL;
		}
		ready--;
	}
	if (ready <= 0) {
		pthread_spin_unlock(&cq->lock);
		return ready ? EIO : ENOENT;
	}

	srd_cq_set_current(cq, cons);

	return 0;
}

static int srd_next_poll(struct ibv_cq_ex *ibcqx)
{
	struct srd_cq *cq = to_srd_cq_ex(ibcqx);
	const struct srd_cqe *cqe;

	for (;;) {
		if (srd_ring_prod(&cq->ring) == cq->poll_cons) {
			cq->cur_cqe = NULL;
			return ENOENT;
		}
		cqe = srd_ring_slot(&cq->ring, cq->poll_cons);
		if (srd_cqe_qp_valid(cq, cqe))
			break;
		/* Consumed at end_poll; nothing may be read of it. */
		cq->poll_cons++;
		cq->cur_cqe = NULL;
		if (srd_cq_refuses_stale(cq))
			return EINVAL;
	}

	srd_cq_set_current(cq, cq->poll_cons);

	return 0;
}

static void srd_end_poll(struct ibv_cq_ex *ibcqx)
{
	struct srd_cq *cq = to_srd_cq_ex(ibcqx);

	srd_ring_release(&cq->ring, cq->poll_cons);
	cq->cur_cqe = NULL;

	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode srd_read_opcode(struct ibv_cq_ex *ibcqx)
{
	return to_srd_cq_ex(ibcqx)->cur_cqe->opcode;
}

static uint32_t srd_read_vendor_err(struct ibv_cq_ex *ibcqx)
{
	return to_srd_cq_ex(ibcqx)->cur_cqe->vendor_err;
}

static uint32_t srd_read_byte_len(struct ibv_cq_ex *ibcqx)
{
	return to_srd_cq_ex(ibcqx)->cur_cqe->byte_len;
}

static __be32 srd_read_imm_data(struct ibv_cq_ex *ibcqx)
{
	return to_srd_cq_ex(ibcqx)->cur_cqe->imm_data;
}

static uint32_t srd_read_qp_num(struct ibv_cq_ex *ibcqx)
{
	return to_srd_cq_ex(ibcqx)->cur_cqe->qp_num;
}

static uint32_t srd_read_src_qp(struct ibv_cq_ex *ibcqx)
{
	return to_srd_cq_ex(ibcqx)->cur_cqe->src_qp;
}

static unsigned int srd_read_wc_flags(struct ibv_cq_ex *ibcqx)
{
	return srd_cqe_wc_flags(to_srd_cq_ex(ibcqx)->cur_cqe);
}

static uint32_t srd_read_slid(struct ibv_cq_ex *ibcqx)
{
	return to_srd_cq_ex(ibcqx)->cur_cqe->slid;
}

static uint8_t srd_read_sl(struct ibv_cq_ex *ibcqx)
{
	(void)ibcqx;
	return 0;
}

static uint8_t srd_read_dlid_path_bits(struct ibv_cq_ex *ibcqx)
{
	(void)ibcqx;
	return 0;
}

/*
 * Every reader is installed whatever wc_flags asked for: reading a field
 * not asked for is undefined in verbs, and a valid function is kinder than
 * a NULL one.  The fields softsrd cannot report are refused at creation,
 * so their readers stay NULL.
 */
static void srd_cq_set_ex_ops(struct ibv_cq_ex *cqx)
{
	cqx->start_poll = srd_start_poll;
	cqx->next_poll = srd_next_poll;
	cqx->end_poll = srd_end_poll;
	cqx->read_opcode = srd_read_opcode;
	cqx->read_vendor_err = srd_read_vendor_err;
	cqx->read_byte_len = srd_read_byte_len;
	cqx->read_imm_data = srd_read_imm_data;
	cqx->read_qp_num = srd_read_qp_num;
	cqx->read_src_qp = srd_read_src_qp;
	cqx->read_wc_flags = srd_read_wc_flags;
	cqx->read_slid = srd_read_slid;
	cqx->read_sl = srd_read_sl;
	cqx->read_dlid_path_bits = srd_read_dlid_path_bits;
}

static int srd_check_cq_attr(struct ibv_cq_init_attr_ex *attr)
{
	if (attr->comp_mask & ~SRD_CQ_COMP_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~SRD_CQ_CREATE_FLAGS))
		return EOPNOTSUPP;
	/* No timestamps, VLANs, flow tags or tag matching. */
	if (attr->wc_flags & ~(uint64_t)SRD_CQ_WC_FLAGS)
		return EOPNOTSUPP;
	return 0;
}

/*
 * Every creation verb ends here (srddv_create_cq() too).  Returns the CQ,
 * or NULL with errno set.
 */
struct srd_cq *srd_cq_create(struct ibv_context *ibvctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct verbs_context *vctx = verbs_get_ctx(ibvctx);
	struct srd_create_cq_uresp uresp = {};
	struct srd_create_cq_ucmd ucmd = {};
	struct srd_cq *cq;
	int err;

	err = srd_check_cq_attr(attr);
	if (err) {
		srd_err(vctx, "unsupported CQ attributes (comp_mask %#x, wc_flags %#llx)\n",
			attr->comp_mask, (unsigned long long)attr->wc_flags);
		goto err_out;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		err = ENOMEM;
		goto err_out;
	}
	cq->live_qpn = SRD_NO_QPN;
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;

	err = srd_cmd_create_cq_ex(ibvctx, attr, &cq->vcq, &ucmd.ibv_cmd,
				   sizeof(ucmd), &uresp.ibv_resp,
				   sizeof(uresp), 0);
	if (err) {
		srd_err(vctx, "ibv_cmd_create_cq_ex failed: %d\n", err);
		goto err_lock;
	}

	err = srd_ring_map(&cq->ring, ibvctx->cmd_fd, &uresp.drv.ring,
			   sizeof(struct srd_cqe), 1);
	if (err) {
		srd_err(vctx, "cannot map CQ %u's ring (%u x %u bytes): %d\n",
			uresp.drv.cqn, uresp.drv.ring.num_entries,
			uresp.drv.ring.stride, err);
		goto err_destroy;
	}

	cq->cqn = uresp.drv.cqn;
	cq->vcq.cq.cqe = cq->ring.num_entries;
	srd_cq_set_ex_ops(&cq->vcq.cq_ex);

	return cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	free(cq);
err_out:
	errno = err;
	return NULL;
}

struct ibv_cq *srd_create_cq(struct ibv_context *ibvctx, int cqe,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe,
		.channel = channel,
		.comp_vector = comp_vector,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct srd_cq *cq = srd_cq_create(ibvctx, &attr);

	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *srd_create_cq_ex(struct ibv_context *ibvctx,
				   struct ibv_cq_init_attr_ex *attr)
{
	struct srd_cq *cq = srd_cq_create(ibvctx, attr);

	return cq ? &cq->vcq.cq_ex : NULL;
}

int srd_destroy_cq(struct ibv_cq *ibcq)
{
	struct srd_cq *cq = to_srd_cq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err) {
		srd_err(verbs_get_ctx(ibcq->context),
			"ibv_cmd_destroy_cq failed: %d\n", err);
		return err;
	}

	srd_ring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);

	return 0;
}
