// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: queue pairs — creation, the state machine, flushing, and
 * destruction.  The datapath is in sq.c, ud.c and the SRD files.
 */

#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "srd.h"

/* Attributes modify_qp understands; ib_modify_qp_is_ok() checks the rest. */
#define SRD_QP_ATTR_SUPPORTED (IB_QP_STATE | IB_QP_CUR_STATE | \
			       IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY | \
			       IB_QP_SQ_PSN | IB_QP_RNR_RETRY)

static u32 srd_sq_stride(u32 max_sge, u32 max_inline)
{
	u32 data = max_t(u32, max_sge * sizeof(struct srd_sge), max_inline);

	return ALIGN(sizeof(struct srd_send_wqe) + data, 64);
}

static u32 srd_rq_stride(u32 max_sge)
{
	return ALIGN(sizeof(struct srd_recv_wqe) +
		     max_sge * sizeof(struct srd_sge), 16);
}

static int srd_qp_check_init_attr(struct srd_dev *sdev,
				  struct ib_qp_init_attr *init,
				  const struct srd_create_qp_cmd *cmd)
{
	struct ib_qp_cap *cap = &init->cap;

	/* UD, or IBV_QPT_DRIVER meaning SRD. */
	if (!(init->qp_type == IB_QPT_UD && !cmd->driver_qp_type) &&
	    !(init->qp_type == IB_QPT_DRIVER &&
	      cmd->driver_qp_type == SRD_QP_TYPE_SRD))
		return -EOPNOTSUPP;
	if (init->srq || init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	/* As EFA's driver: a flag the device has not got is refused. */
	if (cmd->reserved ||
	    (cmd->flags & ~SRD_QP_FLAG_UNSOLICITED_WRITE_RECV))
		return -EOPNOTSUPP;
	if ((cmd->flags & SRD_QP_FLAG_UNSOLICITED_WRITE_RECV) &&
	    (init->qp_type != IB_QPT_DRIVER ||
	     !(sdev->limits.device_caps &
	       SRD_DEVICE_CAP_UNSOLICITED_WRITE_RECV)))
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > SRD_MAX_QP_WR ||
	    cap->max_recv_wr > SRD_MAX_QP_WR ||
	    cap->max_send_sge > sdev->limits.max_send_sge ||
	    cap->max_recv_sge > sdev->limits.max_recv_sge ||
	    cap->max_inline_data > sdev->limits.max_inline_bytes) {
		ibdev_dbg(&sdev->ibdev, "create_qp: caps beyond the device's limits\n");
		return -EINVAL;
	}
	return 0;
}

static int srd_wq_init(struct srd_wq *wq, struct ib_ucontext *uctx,
		       u32 max_wr, u32 max_sge, u32 stride)
{
	wq->max_sge = max_sge;
	wq->wqe = kzalloc(stride, GFP_KERNEL_ACCOUNT);
	if (!wq->wqe)
		return -ENOMEM;
	wq->ring = srd_ring_create(uctx, roundup_pow_of_two(max_t(u32, max_wr, 1)),
				   stride);
	if (IS_ERR(wq->ring)) {
		kfree(wq->wqe);
		return PTR_ERR(wq->ring);
	}
	return 0;
}

static void srd_wq_destroy(struct srd_wq *wq)
{
	srd_ring_destroy(wq->ring);
	kfree(wq->wqe);
}

/* The largest message a send work request of @qp may carry. */
static u32 srd_qp_max_msg_bytes(struct srd_qp *qp)
{
	return qp->is_srd ? srd_max_srd_msg_bytes(qp->sdev) :
			    srd_port_mtu_bytes(qp->sdev);
}

/*
 * QP numbers.  A number's slot (qpn % SRD_MAX_QP) is unique among the
 * device's QPs, so QP numbers are unique modulo SRD_MAX_QP: libfabric's
 * efa provider finds a QP by qpn & (max_qp - 1).  Numbers are handed out
 * cyclically from 2 to the profile's max_qpn (EFA's fit 16 bits), so a
 * destroyed QP's number is not soon reused.  0 and 1 are IB's special QPs.
 */
#define SRD_FIRST_QPN	2

static int srd_qpn_alloc(struct srd_dev *sdev, u32 *qpn)
{
	u32 max_qpn = sdev->limits.max_qpn, cand, i;
	int err = -ENOMEM;

	spin_lock(&sdev->qpn_lock);
	/* 2 * SRD_MAX_QP candidates meet every slot, across a wrap too. */
	for (i = 0; i < 2 * SRD_MAX_QP; i++) {
		cand = sdev->next_qpn;
		sdev->next_qpn = cand >= max_qpn ? SRD_FIRST_QPN : cand + 1;
		if (!test_and_set_bit(cand % SRD_MAX_QP, sdev->qp_slots)) {
			*qpn = cand;
			err = 0;
			break;
		}
	}
	spin_unlock(&sdev->qpn_lock);
	return err;
}

static void srd_qpn_free(struct srd_dev *sdev, u32 qpn)
{
	clear_bit(qpn % SRD_MAX_QP, sdev->qp_slots);
}

void srd_qpn_init(struct srd_dev *sdev)
{
	spin_lock_init(&sdev->qpn_lock);
	sdev->next_qpn = SRD_FIRST_QPN;
}

int srd_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata)
{
	struct srd_dev *sdev = to_sdev(ibqp->device);
	struct srd_create_qp_resp resp = {};
	struct srd_create_qp_cmd cmd = {};
	struct srd_qp *qp = to_sqp(ibqp);
	struct srd_ucontext *uctx;
	struct ib_qp_cap *cap = &init->cap;
	u32 qpn;
	int err;

	/* Kernel consumers would need a posting path of their own. */
	if (!udata)
		return -EOPNOTSUPP;
	uctx = rdma_udata_to_drv_context(udata, struct srd_ucontext, ibuc);
	if (udata->inlen) {
		err = ib_copy_from_udata(&cmd, udata,
					 min(udata->inlen, sizeof(cmd)));
		if (err)
			return err;
		if (cmd.comp_mask ||
		    (udata->inlen > sizeof(cmd) &&
		     !ib_is_udata_cleared(udata, sizeof(cmd),
					  udata->inlen - sizeof(cmd))))
			return -EOPNOTSUPP;
	}
	err = srd_qp_check_init_attr(sdev, init, &cmd);
	if (err)
		return err;
	if (atomic64_inc_return(&sdev->counters[SRD_CNT_QPS]) > SRD_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->sdev = sdev;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	mutex_init(&qp->sq_mutex);
	spin_lock_init(&qp->rq_lock);
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	qp->max_inline = cap->max_inline_data;
	qp->is_srd = init->qp_type == IB_QPT_DRIVER;
	qp->unsolicited_write_recv =
		cmd.flags & SRD_QP_FLAG_UNSOLICITED_WRITE_RECV;
	qp->rnr_retry = SRD_RNR_RETRY_INFINITE;
	atomic_set(&qp->sq_inflight, 0);
	spin_lock_init(&qp->sq_pub_lock);
	INIT_DELAYED_WORK(&qp->sq_work, srd_sq_work);

	err = srd_wq_init(&qp->sq, &uctx->ibuc, cap->max_send_wr,
			  cap->max_send_sge,
			  srd_sq_stride(cap->max_send_sge, cap->max_inline_data));
	if (err)
		goto err_count;
	err = srd_wq_init(&qp->rq, &uctx->ibuc, cap->max_recv_wr,
			  cap->max_recv_sge, srd_rq_stride(cap->max_recv_sge));
	if (err)
		goto err_sq;
	/* Nobody else can see the QP yet; the lock is for the rule only. */
	spin_lock_bh(&qp->rq_lock);
	srd_qp_set_state(qp, IB_QPS_RESET);
	spin_unlock_bh(&qp->rq_lock);

	err = srd_qpn_alloc(sdev, &qpn);
	if (err)
		goto err_rq;
	ibqp->qp_num = qpn;

	/* The rings may hold more than was asked for: say so. */
	cap->max_send_wr = qp->sq.ring->num_entries;
	cap->max_recv_wr = qp->rq.ring->num_entries;

	resp.max_msg_sz = srd_qp_max_msg_bytes(qp);
	WRITE_ONCE(qp->sq.ring->ctl->max_msg_sz, resp.max_msg_sz);
	srd_ring_info(qp->sq.ring, &resp.sq);
	srd_ring_info(qp->rq.ring, &resp.rq);
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_qpn;
	/*
	 * Last: once in qps the receive path can take references, and
	 * nothing after this may fail (ib_core frees the QP on failure).
	 */
	err = xa_insert_irq(&sdev->qps, qpn, qp, GFP_KERNEL);
	if (err)
		goto err_qpn;
	return 0;

err_qpn:
	srd_qpn_free(sdev, qpn);
err_rq:
	srd_wq_destroy(&qp->rq);
err_sq:
	srd_wq_destroy(&qp->sq);
err_count:
	atomic64_dec(&sdev->counters[SRD_CNT_QPS]);
	return err;
}

/*
 * The port MTU changed: tell every QP's provider the new message limit.
 * Under the xarray lock, a QP found is not yet destroyed, so its rings are
 * there.
 */
void srd_qps_mtu_changed(struct srd_dev *sdev)
{
	struct srd_qp *qp;
	unsigned long qpn;

	xa_lock_irq(&sdev->qps);
	xa_for_each(&sdev->qps, qpn, qp)
		WRITE_ONCE(qp->sq.ring->ctl->max_msg_sz,
			   srd_qp_max_msg_bytes(qp));
	xa_unlock_irq(&sdev->qps);
}

static void srd_wq_reset(struct srd_wq *wq)
{
	wq->cons = 0;
	WRITE_ONCE(wq->ring->ctl->prod, 0);
	WRITE_ONCE(wq->ring->ctl->cons, 0);
}

/* Under sq_mutex, with nothing in flight. */
static void srd_sq_reset(struct srd_qp *qp)
{
	unsigned long flags;

	lockdep_assert_held(&qp->sq_mutex);

	spin_lock_irqsave(&qp->sq_pub_lock, flags);
	srd_wq_reset(&qp->sq);
	qp->sq_pub = 0;
	spin_unlock_irqrestore(&qp->sq_pub_lock, flags);
}

int srd_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct srd_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, new;
	int err = 0;

	if (mask & ~SRD_QP_ATTR_SUPPORTED)
		return -EOPNOTSUPP;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;

	mutex_lock(&qp->sq_mutex);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state :
					 READ_ONCE(qp->state);
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	/*
	 * SRD QPs move as UD ones do; rnr_retry, which UD lacks, may come
	 * with any transition (as on EFA).
	 */
	if (!ib_modify_qp_is_ok(cur, new, IB_QPT_UD, mask & ~IB_QP_RNR_RETRY) ||
	    ((mask & IB_QP_RNR_RETRY) &&
	     (!qp->is_srd || attr->rnr_retry > SRD_RNR_RETRY_INFINITE))) {
		ibdev_dbg(ibqp->device, "modify_qp %u: %d -> %d with mask 0x%x is not allowed\n",
			  ibqp->qp_num, cur, new, mask);
		err = -EINVAL;
		goto out;
	}
	if (((mask & IB_QP_PORT) && attr->port_num != 1) ||
	    ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)) {
		err = -EINVAL;
		goto out;
	}
	if (mask & IB_QP_QKEY)
		WRITE_ONCE(qp->qkey, attr->qkey);
	if (mask & IB_QP_RNR_RETRY)
		WRITE_ONCE(qp->rnr_retry, attr->rnr_retry);
	/* Kept for query_qp: SRD has per-peer PSNs, not per-QP ones. */
	if (mask & IB_QP_SQ_PSN)
		WRITE_ONCE(qp->sq_psn, attr->sq_psn & 0xffffff);

	if (mask & IB_QP_STATE) {
		/*
		 * Sends in flight complete FLUSHED and receives abort, before
		 * the rings are flushed or reset: then none is left in flight.
		 */
		if (qp->is_srd && (new == IB_QPS_ERR || new == IB_QPS_RESET))
			srd_transport_flush_qp(qp);
		spin_lock_bh(&qp->rq_lock);
		if (new == IB_QPS_RESET) {
			srd_sq_reset(qp);
			srd_wq_reset(&qp->rq);
		}
		if (new == IB_QPS_ERR)
			srd_qp_set_error(qp);	/* ERR, the RQ flushed */
		else
			srd_qp_set_state(qp, new);
		spin_unlock_bh(&qp->rq_lock);
		if (new == IB_QPS_ERR)
			srd_qp_flush_sq(qp);
	}
out:
	mutex_unlock(&qp->sq_mutex);
	return err;
}

int srd_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init)
{
	struct srd_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->qkey = READ_ONCE(qp->qkey);
	attr->rnr_retry = READ_ONCE(qp->rnr_retry);
	attr->sq_psn = READ_ONCE(qp->sq_psn);
	attr->port_num = 1;
	attr->pkey_index = 0;
	attr->path_mtu = ib_mtu_int_to_enum(srd_port_mtu_bytes(qp->sdev));
	attr->cap.max_send_wr = qp->sq.ring->num_entries;
	attr->cap.max_recv_wr = qp->rq.ring->num_entries;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	return 0;
}

int srd_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct srd_qp *qp = to_sqp(ibqp);
	struct srd_dev *sdev = qp->sdev;

	/* The SQ takes no more work; sq_work stops for good. */
	mutex_lock(&qp->sq_mutex);
	WRITE_ONCE(qp->sq_dead, true);
	mutex_unlock(&qp->sq_mutex);

	/* No new receive finds it; ... */
	xa_erase_irq(&sdev->qps, ibqp->qp_num);
	/* ... the transport lets go of its messages; ... */
	if (qp->is_srd)
		srd_transport_flush_qp(qp);
	/* ... and we wait for the receives and completions in flight. */
	srd_qp_put(qp);
	wait_for_completion(&qp->released);
	/* Only a message's completion queues sq_work, and none is left. */
	cancel_delayed_work_sync(&qp->sq_work);
	/* Nor can a message be given back as a spare any more. */
	kfree(qp->spare_out);
	kfree(qp->spare_recv);

	srd_wq_destroy(&qp->rq);
	srd_wq_destroy(&qp->sq);
	mutex_destroy(&qp->sq_mutex);
	srd_qpn_free(sdev, ibqp->qp_num);
	atomic64_dec(&sdev->counters[SRD_CNT_QPS]);
	return 0;
}

int srd_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	/* Userspace posts receives to the shared ring; kernel users none. */
	*bad_wr = wr;
	return -EOPNOTSUPP;
}
