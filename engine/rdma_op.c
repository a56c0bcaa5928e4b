// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: RDMA operations longer than one message
 * (docs/protocol.md, "RDMA read and write").  A WRITE or READ of more
 * than SRD_MAX_RDMA_MSG_BYTES is cut into chunks of that size, each a
 * message of its own (struct srd_tx_msg) with the operation's address,
 * rkey and length and its own rdma_offset, posted together.  The last
 * chunk of a WRITE_WITH_IMM, the only one with the immediate data, is
 * held back until every other chunk is done, so that its receive
 * completes only once all the bytes are in place.  The operation
 * completes once, through send_done with its request, with the first
 * failure of any chunk; after a failure no further chunk starts.
 *
 * Offsets the OS sees (transmit's payload_off, read_data's offset) are
 * within the whole operation, as for a one-chunk one.
 */
#include "rdma_op.h"
#include "queue.h"

/* Posted messages the peer holds before they start: queued and held. */
uint32_t srd_tx_queued_msgs(const struct srd_peer *peer)
{
	return peer->pending_count + peer->held_msgs;
}

static void op_free(struct srd_peer *peer, struct srd_tx_op *op)
{
	peer->eng->ops->free(peer->eng->os, op, sizeof(*op));
}

/* Free a list of chunks (linked by next) of a post that failed. */
static void undo(struct srd_peer *peer, struct srd_tx_msg *m)
{
	struct srd_tx_msg *next;

	for (; m; m = next) {
		next = m->next;
		srd_tx_msg_free(peer, m);
	}
}

int srd_tx_post_op(struct srd_peer *peer, const struct srd_send_req *req)
{
	uint32_t n = (req->rdma.length + SRD_MAX_RDMA_MSG_BYTES - 1) /
		     SRD_MAX_RDMA_MSG_BYTES, i;
	struct srd_tx_msg *first = NULL, **tail = &first, *m, *next;
	struct srd_send_req r;
	struct srd_tx_op *op;

	if (!srd_tx_queue_has_room(peer, req->src_qpn, n))
		return SRD_SEND_BUSY;
	op = peer->eng->ops->alloc(peer->eng->os, sizeof(*op));
	if (!op) {
		peer->ctr.alloc_failures++;
		return SRD_SEND_NOMEM;
	}
	op->out = req->out;
	op->status = SRD_COMP_OK;
	op->chunks_out = 0;
	op->held = NULL;
	for (i = 0; i < n; i++) {
		r = *req;
		r.rdma.rdma_offset = req->rdma.rdma_offset +
				     i * SRD_MAX_RDMA_MSG_BYTES;
		r.rdma.length = i < n - 1 ? SRD_MAX_RDMA_MSG_BYTES :
			req->rdma.length - (n - 1) * SRD_MAX_RDMA_MSG_BYTES;
		r.len = req->kind == SRD_MSG_WRITE ? r.rdma.length : 0;
		/* Only the last chunk carries the immediate data. */
		r.has_imm = req->has_imm && i == n - 1;
		r.solicited = req->solicited && i == n - 1;
		m = srd_tx_msg_alloc(peer, &r);
		if (!m) {
			undo(peer, first);
			op_free(peer, op);
			return SRD_SEND_NOMEM;
		}
		m->op = op;
		m->op_off = i * SRD_MAX_RDMA_MSG_BYTES;
		*tail = m;
		tail = &m->next;
	}
	for (m = first, i = 0; m; m = next, i++) {
		next = m->next;
		m->next = NULL;
		if (i == n - 1 && req->kind == SRD_MSG_WRITE && req->has_imm) {
			op->held = m;
			peer->held_msgs++;
		} else {
			op->chunks_out++;
			srd_tx_queue_msg(peer, m);
		}
	}
	return SRD_SEND_OK;
}

/*
 * Chunk @m of an operation is over with @st (its own message was
 * counted and traced as any other).  The held chunk starts once all
 * others succeeded; the operation completes when no chunk is left.
 */
void srd_tx_op_chunk_done(struct srd_peer *peer, struct srd_tx_msg *m,
			  enum srd_comp_status st)
{
	struct srd_tx_op *op = m->op;
	struct srd_tx_msg *held;

	if (st != SRD_COMP_OK && op->status == SRD_COMP_OK)
		op->status = st;
	if (--op->chunks_out)
		return;
	held = op->held;
	if (held) {
		op->held = NULL;
		peer->held_msgs--;
		if (op->status == SRD_COMP_OK) {
			op->chunks_out = 1;
			srd_tx_queue_msg(peer, held);
			return;
		}
		srd_tx_msg_free(peer, held);
	}
	peer->eng->ops->send_done(peer->eng->os, op->out, op->status);
	op_free(peer, op);
}
