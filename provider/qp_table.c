// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd: the context's table of live QPs, by QP number.
 *
 * A CQE names its QP only by number, and the CQEs of a QP stay in its CQs
 * after the QP is destroyed: those the kernel wrote before, and the sends
 * the destroy completed FLUSHED (the kernel writes no CQE of a QP once
 * ibv_cmd_destroy_qp() has returned).  Polling looks each CQE's QP up here
 * and refuses those of a QP no longer in the table, as libefa does with its
 * qp_table (see cq.c).
 *
 * Locking: the table lock guards the chains.  A QP leaves the table with
 * its CQs' locks held too, so that a poller, which holds its CQ's lock,
 * never hands out a CQE of a QP whose destroy has returned.  Lock order:
 * CQ locks (by address), then the table lock.
 */
#include <stdint.h>

#include "srd.h"
#include "verbs.h"

static struct srd_qp **srd_qp_bucket(struct srd_context *ctx, uint32_t qpn)
{
	return &ctx->qp_table[qpn & (SRD_QP_TABLE_BUCKETS - 1)];
}

int srd_qp_table_init(struct srd_context *ctx)
{
	return pthread_spin_init(&ctx->qp_table_lock, PTHREAD_PROCESS_PRIVATE);
}

void srd_qp_table_destroy(struct srd_context *ctx)
{
	pthread_spin_destroy(&ctx->qp_table_lock);
}

void srd_qp_table_add(struct srd_context *ctx, struct srd_qp *qp)
{
	struct srd_qp **head = srd_qp_bucket(ctx, qp->vqp.qp.qp_num);

	pthread_spin_lock(&ctx->qp_table_lock);
	qp->table_next = *head;
	*head = qp;
	pthread_spin_unlock(&ctx->qp_table_lock);
}

static void srd_cq_lock_pair(struct ibv_cq *a, struct ibv_cq *b, bool lock)
{
	struct srd_cq *first = a ? to_srd_cq(a) : NULL;
	struct srd_cq *second = b ? to_srd_cq(b) : NULL;

	if (first == second)
		second = NULL;
	if (first && second && (uintptr_t)second < (uintptr_t)first) {
		struct srd_cq *t = first;

		first = second;
		second = t;
	}
	if (lock) {
		if (first)
			pthread_spin_lock(&first->lock);
		if (second)
			pthread_spin_lock(&second->lock);
	} else {
		if (second)
			pthread_spin_unlock(&second->lock);
		if (first)
			pthread_spin_unlock(&first->lock);
	}
}

/* @cq's poll may no longer take @qpn as live.  Under the CQ's lock. */
static void srd_cq_forget(struct ibv_cq *cq, uint32_t qpn)
{
	if (cq && to_srd_cq(cq)->live_qpn == qpn)
		to_srd_cq(cq)->live_qpn = SRD_NO_QPN;
}

void srd_qp_table_del(struct srd_context *ctx, struct srd_qp *qp)
{
	struct ibv_qp *ibqp = &qp->vqp.qp;
	struct srd_qp **p;

	srd_cq_lock_pair(ibqp->send_cq, ibqp->recv_cq, true);
	pthread_spin_lock(&ctx->qp_table_lock);
	for (p = srd_qp_bucket(ctx, ibqp->qp_num); *p; p = &(*p)->table_next) {
		if (*p == qp) {
			*p = qp->table_next;
			break;
		}
	}
	pthread_spin_unlock(&ctx->qp_table_lock);
	srd_cq_forget(ibqp->send_cq, ibqp->qp_num);
	srd_cq_forget(ibqp->recv_cq, ibqp->qp_num);
	srd_cq_lock_pair(ibqp->send_cq, ibqp->recv_cq, false);
	qp->table_next = NULL;
}

bool srd_qp_table_has(struct srd_context *ctx, uint32_t qpn)
{
	struct srd_qp *qp;

	pthread_spin_lock(&ctx->qp_table_lock);
	for (qp = *srd_qp_bucket(ctx, qpn); qp; qp = qp->table_next)
		if (qp->vqp.qp.qp_num == qpn)
			break;
	pthread_spin_unlock(&ctx->qp_table_lock);
	return qp != NULL;
}
