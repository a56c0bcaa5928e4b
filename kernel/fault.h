/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: faults a test injects into a device's SRD transport, through
 * debugfs (/sys/kernel/debug/rdma_srd/DEV/faults; fault.c, and
 * man/rdma_srd.7.md, "FAULT INJECTION"), so that software can test its
 * error paths: receivers not ready, RDMA requests refused, a remote that
 * stops answering, seeded loss.  Each ends in the completions a real
 * occurrence gives, because it is made where a real one arises.
 *
 * The hot paths (every SRD packet in and out, every incoming message)
 * test f->active alone while no fault is set.
 */
#ifndef SRD_FAULT_H
#define SRD_FAULT_H

#include <linux/compiler.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "engine/srd_engine.h"

#define SRD_FAULT_SLOTS	8	/* QPs per kind, and remote addresses */
#define SRD_FAULT_ANY_QPN	U32_MAX	/* "any": every QP (QPNs are 24 bits) */

/* The next @left messages for local QP @qpn (or any) are refused. */
struct srd_fault_qp {
	u32 qpn;
	u32 left;
	u64 done;			/* refused so far */
	bool used;
};

struct srd_fault_addr {
	union ib_gid gid;		/* a remote: nothing to or from it */
	u64 dropped;
	bool used;
};

/* What is set, and what it did. */
struct srd_fault_state {
	struct srd_fault_qp rnr[SRD_FAULT_SLOTS];
	struct srd_fault_qp access[SRD_FAULT_SLOTS];
	struct srd_fault_addr unresp[SRD_FAULT_SLOTS];
	u32 loss_permille;		/* of SRD packets each way */
	u64 loss_seed, loss_state;	/* xorshift64* */
	u64 loss_in, loss_out;		/* dropped so far */
};

struct srd_faults {
	bool active;			/* any fault set; written under lock */
	spinlock_t lock;		/* (BH) st; a leaf: nothing under it */
	struct srd_fault_state st;
};

struct dentry;

void srd_faults_init(struct srd_faults *f);
void srd_faults_debugfs_add(struct srd_faults *f, struct dentry *dir);
bool __srd_fault_drop(struct srd_faults *f, const union ib_gid *remote,
		      bool incoming);
enum srd_rx_verdict __srd_fault_rx_begin(struct srd_faults *f,
					 const struct srd_rx_msg_info *info);

/* Whether an SRD packet to or from @remote is to be dropped. */
static inline bool srd_fault_drop(struct srd_faults *f,
				  const union ib_gid *remote, bool incoming)
{
	if (likely(!READ_ONCE(f->active)))
		return false;
	return __srd_fault_drop(f, remote, incoming);
}

/* What to answer an incoming message instead: SRD_RX_ACCEPT for nothing. */
static inline enum srd_rx_verdict
srd_fault_rx_begin(struct srd_faults *f, const struct srd_rx_msg_info *info)
{
	if (likely(!READ_ONCE(f->active)))
		return SRD_RX_ACCEPT;
	return __srd_fault_rx_begin(f, info);
}

#endif /* SRD_FAULT_H */
