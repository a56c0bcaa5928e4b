/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * rDMA operations of several chunks (rdma_op.c).
 */
#ifndef SRD_ENGINE_RDMA_OP_H
#define SRD_ENGINE_RDMA_OP_H

#include "msg.h"

uint32_t srd_tx_queued_msgs(const struct srd_peer *peer);
int srd_tx_post_op(struct srd_peer *peer, const struct srd_send_req *req);
void srd_tx_op_chunk_done(struct srd_peer *peer, struct srd_tx_msg *m,
			  enum srd_comp_status st);

#endif /* SRD_ENGINE_RDMA_OP_H */
