// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: every header of the wire, encoded and parsed: the UD
 * header and the SRD transport's (docs/protocol.md, "Header" and "SRD
 * transport: headers").  The offsets below are the one definition of
 * the layouts; the tests' packet forger is checked against this file's
 * encoder (engine/tests/wire_vectors.c).
 */
#include "wire.h"
#include "msg.h"

/* Byte offsets, per header; all fields big-endian. */
enum {
	/* Every header. */
	OFF_VERSION = 0,
	OFF_OPCODE = 1,
	OFF_FLAGS = 2,
	OFF_HDR_LEN_WORDS = 3,
	/* UD_SEND, UD_SEND_WITH_IMM */
	OFF_UD_DST_QPN = 4,
	OFF_UD_SRC_QPN = 8,
	OFF_UD_QKEY = 12,
	OFF_UD_IMM = 16,
	OFF_UD_RESERVED = 20,
	/* Every SRD transport header. */
	OFF_SRC_TAG = 4,
	OFF_DST_TAG = 8,
	/* DATA, and the first fields of WRITE, READ_REQ and READ_RESP. */
	OFF_PSN = 12,
	OFF_MSG_ID = 16,
	OFF_MSG_BASE = 20,
	OFF_DST_QPN = 24,
	OFF_SRC_QPN = 28,
	OFF_QKEY = 32,
	OFF_IMM = 36,
	OFF_MSG_LEN = 40,
	OFF_OFFSET = 44,
	OFF_SEG_BYTES = 48,
	OFF_ATTEMPT = 50,
	OFF_PATH = 51,
	/* WRITE and READ_REQ: the RDMA extension, after the DATA fields. */
	OFF_REMOTE_ADDR_HI = 52,
	OFF_REMOTE_ADDR_LO = 56,
	OFF_RKEY = 60,
	OFF_RDMA_LEN = 64,
	OFF_RDMA_OFFSET = 68,
	OFF_LENGTH = 72,
	/* READ_RESP, after the DATA fields. */
	OFF_REQ_MSG_ID = 52,
	OFF_REQ_ATTEMPT = 56,
	OFF_RESP_RESERVED = 57,	/* 3 bytes */
	/* ACK */
	OFF_ACK_PSN = 12,
	OFF_ACK_DELAY = 16,
	OFF_SACK = 20,		/* SRD_SACK_WINDOW_PKTS / 8 bytes */
	OFF_DUP_PSN = 36,
	/* The ACK block, at its DATA-family header's end (HAS_ACK). */
	OFF_AB_FLAGS = 0,
	OFF_AB_RESERVED = 1,	/* 3 bytes */
	OFF_AB_PSN = 4,
	OFF_AB_DELAY = 8,
	OFF_AB_SACK = 12,	/* SRD_SACK_WINDOW_PKTS / 8 bytes */
	OFF_AB_DUP_PSN = 28,
	/* NAK */
	OFF_NAK_PSN = 12,
	OFF_NAK_MSG_ID = 16,
	OFF_NAK_ATTEMPT = 20,
	OFF_NAK_REASON = 21,
	OFF_NAK_RESERVED = 22,	/* 2 bytes */
	/* HELLO */
	OFF_HELLO_CHALLENGE = 12,
	OFF_HELLO_ECHO = 16,
};

/* Each header ends where the next field would start. */
SRD_STATIC_ASSERT(OFF_UD_RESERVED + 4 == SRD_HDR_UD_BYTES, "UD header");
SRD_STATIC_ASSERT(OFF_DST_TAG + 4 == OFF_HELLO_CHALLENGE &&
		  OFF_HELLO_CHALLENGE + 4 == OFF_HELLO_ECHO &&
		  OFF_HELLO_ECHO + 4 == SRD_HDR_HELLO_BYTES, "HELLO header");
SRD_STATIC_ASSERT(OFF_PATH + 1 == SRD_HDR_DATA_BYTES, "DATA header");
SRD_STATIC_ASSERT(OFF_LENGTH + 4 == SRD_HDR_RDMA_BYTES, "RDMA header");
SRD_STATIC_ASSERT(OFF_RESP_RESERVED + 3 == SRD_HDR_RESP_BYTES, "RESP header");
SRD_STATIC_ASSERT(OFF_DUP_PSN + 4 == SRD_HDR_ACK_BYTES, "ACK header");
SRD_STATIC_ASSERT(OFF_SACK + SRD_SACK_WINDOW_PKTS / 8 == OFF_DUP_PSN, "SACK");
SRD_STATIC_ASSERT(OFF_NAK_RESERVED + 2 == SRD_HDR_NAK_BYTES, "NAK header");
SRD_STATIC_ASSERT(OFF_AB_DUP_PSN + 4 == SRD_ACK_BLOCK_BYTES, "ACK block");
SRD_STATIC_ASSERT(OFF_AB_SACK + SRD_SACK_WINDOW_PKTS / 8 == OFF_AB_DUP_PSN,
		  "the block's SACK");
/* A DATA-family header with its ACK block fits the OS's buffers. */
SRD_STATIC_ASSERT(SRD_HDR_RDMA_BYTES + SRD_ACK_BLOCK_BYTES <= SRD_HDR_MAX_BYTES &&
		  SRD_HDR_MAX_BYTES <= 255 * 4, "room for the ACK block");
/* Every transport opcode in the OS's range (a duplicate fails the parser's switch). */
#define WOP_IN_RANGE(n, v, hdr, fl, k)					\
	SRD_STATIC_ASSERT((v) >= SRD_WOP_FIRST && (v) <= SRD_WOP_LAST,	\
			  "SRD_WOP_" #n " outside SRD_WOP_FIRST..LAST")
SRD_WIRE_OPS(WOP_IN_RANGE, SRD_LIST_SEMI);
/* The OS tells UD from SRD by opcode: the ranges must not meet. */
#define UD_OP_BELOW(n, v, hdr, fl, k)					\
	SRD_STATIC_ASSERT((v) > 0 && (v) < SRD_WOP_FIRST,		\
			  "SRD_OP_" #n " inside the SRD transport's range")
SRD_UD_OPS(UD_OP_BELOW, SRD_LIST_SEMI);

bool srd_wire_is_transport(const uint8_t *b)
{
	return b[OFF_VERSION] == SRD_WIRE_VERSION &&
	       b[OFF_OPCODE] >= SRD_WOP_FIRST && b[OFF_OPCODE] <= SRD_WOP_LAST;
}

uint32_t srd_wire_ud_payload_max(uint32_t mtu)
{
	uint32_t spent = SRD_IP_UDP_HDR_MAX_BYTES + SRD_UD_HDR_ALLOWANCE_BYTES;

	return mtu > spent ? mtu - spent : 0;
}

uint32_t srd_wire_seg_bytes(uint32_t mtu)
{
	uint32_t spent = SRD_IP_UDP_HDR_MAX_BYTES + SRD_HDR_DATA_BYTES;
	uint32_t seg = mtu > spent ? mtu - spent : 0;

	if (seg < SRD_MIN_SEG_BYTES)
		return SRD_MIN_SEG_BYTES;
	return seg > SRD_MAX_SEG_BYTES ? SRD_MAX_SEG_BYTES : seg;
}

uint16_t srd_wire_src_port(uint32_t entropy)
{
	return (uint16_t)(49152 + (entropy & 0x3fff));
}

uint32_t srd_wire_put_ud(uint8_t *b, const struct srd_ud_hdr *h)
{
	b[OFF_VERSION] = SRD_WIRE_VERSION;
	b[OFF_OPCODE] = h->opcode;
	b[OFF_FLAGS] = h->flags & SRD_WF_UD_SOLICITED;
	b[OFF_HDR_LEN_WORDS] = SRD_HDR_UD_BYTES / 4;
	srd_put_be32(b + OFF_UD_DST_QPN, h->dst_qpn & 0xffffff);
	srd_put_be32(b + OFF_UD_SRC_QPN, h->src_qpn & 0xffffff);
	srd_put_be32(b + OFF_UD_QKEY, h->qkey);
	srd_put_be32(b + OFF_UD_IMM, h->opcode == SRD_OP_UD_SEND_WITH_IMM ?
				     h->imm_data : 0);
	srd_put_be32(b + OFF_UD_RESERVED, 0);
	return SRD_HDR_UD_BYTES;
}

/*
 * The receiver's rules (docs/protocol.md, "Header"): the wire's version,
 * a UD opcode, a header of at least SRD_HDR_UD_BYTES inside the datagram.
 * Flags and reserved bits are ignored; the QPN's high byte is masked.
 */
int srd_wire_parse_ud(const uint8_t *b, size_t len, struct srd_ud_hdr *h)
{
	srd_memset(h, 0, sizeof(*h));
	if (len < SRD_HDR_UD_BYTES)
		return SRD_PARSE_SHORT;
	if (b[OFF_VERSION] != SRD_WIRE_VERSION)
		return SRD_PARSE_VERSION;
	h->opcode = b[OFF_OPCODE];
	if (h->opcode != SRD_OP_UD_SEND && h->opcode != SRD_OP_UD_SEND_WITH_IMM)
		return SRD_PARSE_OPCODE;
	h->hdr_len = (uint32_t)b[OFF_HDR_LEN_WORDS] * 4;
	if (h->hdr_len < SRD_HDR_UD_BYTES)
		return SRD_PARSE_HDR_LEN;
	if (len < h->hdr_len)
		return SRD_PARSE_SHORT;
	h->flags = b[OFF_FLAGS] & SRD_WF_UD_SOLICITED;
	h->dst_qpn = srd_get_be32(b + OFF_UD_DST_QPN) & 0xffffff;
	h->src_qpn = srd_get_be32(b + OFF_UD_SRC_QPN) & 0xffffff;
	h->qkey = srd_get_be32(b + OFF_UD_QKEY);
	if (h->opcode == SRD_OP_UD_SEND_WITH_IMM)
		h->imm_data = srd_get_be32(b + OFF_UD_IMM);
	return SRD_PARSE_OK;
}

static uint32_t put_first(uint8_t *b, uint8_t op, uint8_t flags,
			  uint32_t hdr_bytes, uint32_t src_tag, uint32_t dst_tag)
{
	b[OFF_VERSION] = SRD_WIRE_VERSION;
	b[OFF_OPCODE] = op;
	b[OFF_FLAGS] = flags;
	b[OFF_HDR_LEN_WORDS] = (uint8_t)(hdr_bytes / 4);
	srd_put_be32(b + OFF_SRC_TAG, src_tag);
	srd_put_be32(b + OFF_DST_TAG, dst_tag);
	return hdr_bytes;
}

static uint32_t put_common(uint8_t *b, const struct srd_pkt *p, uint8_t op,
			   uint32_t hdr_bytes)
{
	return put_first(b, op, p->flags, hdr_bytes, p->src_tag,
			 p->dst_tag);
}

static void put_data_fields(uint8_t *b, const struct srd_pkt *p)
{
	srd_put_be32(b + OFF_PSN, p->psn);
	srd_put_be32(b + OFF_MSG_ID, p->msg_id);
	srd_put_be32(b + OFF_MSG_BASE, p->msg_base);
	srd_put_be32(b + OFF_DST_QPN, p->dst_qpn & 0xffffff);
	srd_put_be32(b + OFF_SRC_QPN, p->src_qpn & 0xffffff);
	srd_put_be32(b + OFF_QKEY, p->qkey);
	srd_put_be32(b + OFF_IMM, p->imm_data);
	srd_put_be32(b + OFF_MSG_LEN, p->msg_len);
	srd_put_be32(b + OFF_OFFSET, p->offset);
	srd_put_be16(b + OFF_SEG_BYTES, p->seg_bytes);
	b[OFF_ATTEMPT] = p->attempt;
	b[OFF_PATH] = p->path;
}

static void put_rdma_fields(uint8_t *b, const struct srd_rdma_info *r)
{
	srd_put_be32(b + OFF_REMOTE_ADDR_HI, (uint32_t)(r->remote_addr >> 32));
	srd_put_be32(b + OFF_REMOTE_ADDR_LO, (uint32_t)r->remote_addr);
	srd_put_be32(b + OFF_RKEY, r->rkey);
	srd_put_be32(b + OFF_RDMA_LEN, r->rdma_len);
	srd_put_be32(b + OFF_RDMA_OFFSET, r->rdma_offset);
	srd_put_be32(b + OFF_LENGTH, r->length);
}

static void put_resp_fields(uint8_t *b, uint32_t req_msg_id,
			    uint8_t req_attempt)
{
	srd_put_be32(b + OFF_REQ_MSG_ID, req_msg_id);
	b[OFF_REQ_ATTEMPT] = req_attempt;
	srd_memset(b + OFF_RESP_RESERVED, 0, 3);
}

uint32_t srd_wire_put_data(uint8_t *b, const struct srd_pkt *p)
{
	put_data_fields(b, p);
	return put_common(b, p, SRD_WOP_DATA, SRD_HDR_DATA_BYTES);
}

uint32_t srd_wire_put_rdma(uint8_t *b, const struct srd_pkt *p, uint8_t op)
{
	put_data_fields(b, p);
	put_rdma_fields(b, &p->rdma);
	return put_common(b, p, op, SRD_HDR_RDMA_BYTES);
}

uint32_t srd_wire_put_resp(uint8_t *b, const struct srd_pkt *p)
{
	put_data_fields(b, p);
	put_resp_fields(b, p->req_msg_id, p->req_attempt);
	return put_common(b, p, SRD_WOP_READ_RESP, SRD_HDR_RESP_BYTES);
}

/*
 * The same headers as the three above, for the sender's every DATA
 * packet: read from the message and the peer where they are, rather
 * than copied into a struct srd_pkt first and out of it again.  The
 * QPNs were masked to 24 bits when the message was posted
 * (srd_tx_msg_alloc()).  The unit tests check that both encoders agree.
 */
uint32_t srd_wire_put_msg(uint8_t *b, const struct srd_peer *peer,
			  const struct srd_tx_msg *m, uint32_t psn,
			  uint32_t offset, uint8_t flags, uint8_t path)
{
	uint32_t hdr_bytes;
	uint8_t op;

	op = SRD_WOP_DATA;
	hdr_bytes = SRD_HDR_DATA_BYTES;
	srd_put_be32(b + OFF_PSN, psn);
	srd_put_be32(b + OFF_MSG_ID, m->msg_id);
	srd_put_be32(b + OFF_MSG_BASE, peer->msg_base);
	srd_put_be32(b + OFF_DST_QPN, m->dst_qpn);
	srd_put_be32(b + OFF_SRC_QPN, m->src_qpn);
	srd_put_be32(b + OFF_QKEY, m->qkey);
	srd_put_be32(b + OFF_IMM, m->has_imm ? m->imm_data : 0);
	srd_put_be32(b + OFF_MSG_LEN, m->len);
	srd_put_be32(b + OFF_OFFSET, offset);
	srd_put_be16(b + OFF_SEG_BYTES, (uint16_t)m->seg_bytes);
	b[OFF_ATTEMPT] = m->attempt;
	b[OFF_PATH] = path;
	switch (m->kind) {
	case SRD_MSG_WRITE:
	case SRD_MSG_READ:
		op = m->kind == SRD_MSG_WRITE ? SRD_WOP_WRITE : SRD_WOP_READ_REQ;
		put_rdma_fields(b, &m->rdma);
		hdr_bytes = SRD_HDR_RDMA_BYTES;
		break;
	case SRD_MSG_READ_RESP:
		op = SRD_WOP_READ_RESP;
		put_resp_fields(b, m->req_msg_id, m->req_attempt);
		hdr_bytes = SRD_HDR_RESP_BYTES;
		break;
	case SRD_MSG_SEND:
		break;
	}
	return put_first(b, op, flags, hdr_bytes, peer->local_tag,
			 peer->remote_tag);
}

uint32_t srd_wire_put_ack(uint8_t *b, const struct srd_pkt *p)
{
	srd_put_be32(b + OFF_ACK_PSN, p->ack_psn);
	srd_put_be32(b + OFF_ACK_DELAY, p->ack_delay_us);
	srd_memcpy(b + OFF_SACK, p->sack, sizeof(p->sack));
	srd_put_be32(b + OFF_DUP_PSN, p->flags & SRD_WF_ACK_DUP ? p->dup_psn : 0);
	return put_common(b, p, SRD_WOP_ACK, SRD_HDR_ACK_BYTES);
}

/*
 * The same header as srd_wire_put_ack(), for the receiver's every ACK:
 * written from its window and the fields it works out, rather than
 * copied into a struct srd_pkt first and out of it again.  The unit
 * tests check that both encoders agree.
 */
uint32_t srd_wire_put_ack_win(uint8_t *b, uint32_t src_tag,
			      uint32_t dst_tag, uint8_t flags,
			      const struct srd_rcv_window *w,
			      uint32_t delay_us, uint32_t dup_psn)
{
	srd_put_be32(b + OFF_ACK_PSN, w->largest);
	srd_put_be32(b + OFF_ACK_DELAY, delay_us);
	srd_rcv_sack(w, b + OFF_SACK);
	srd_put_be32(b + OFF_DUP_PSN, flags & SRD_WF_ACK_DUP ? dup_psn : 0);
	return put_first(b, SRD_WOP_ACK, flags, SRD_HDR_ACK_BYTES, src_tag,
			 dst_tag);
}

uint32_t srd_wire_put_ack_block(uint8_t *b, uint32_t hdr_len,
				const struct srd_pkt *p)
{
	uint8_t *a = b + hdr_len;

	a[OFF_AB_FLAGS] = p->ack_flags & (SRD_WF_ACK_DUP | SRD_WF_ACK_DRAIN);
	srd_memset(a + OFF_AB_RESERVED, 0, 3);
	srd_put_be32(a + OFF_AB_PSN, p->ack_psn);
	srd_put_be32(a + OFF_AB_DELAY, p->ack_delay_us);
	srd_memcpy(a + OFF_AB_SACK, p->sack, sizeof(p->sack));
	srd_put_be32(a + OFF_AB_DUP_PSN,
		     p->ack_flags & SRD_WF_ACK_DUP ? p->dup_psn : 0);
	b[OFF_FLAGS] |= SRD_WF_DATA_HAS_ACK;
	b[OFF_HDR_LEN_WORDS] = (uint8_t)((hdr_len + SRD_ACK_BLOCK_BYTES) / 4);
	return hdr_len + SRD_ACK_BLOCK_BYTES;
}

uint32_t srd_wire_put_nak(uint8_t *b, const struct srd_pkt *p)
{
	srd_put_be32(b + OFF_NAK_PSN, p->psn);
	srd_put_be32(b + OFF_NAK_MSG_ID, p->msg_id);
	b[OFF_NAK_ATTEMPT] = p->attempt;
	b[OFF_NAK_REASON] = p->nak_reason;
	srd_put_be16(b + OFF_NAK_RESERVED, 0);
	return put_common(b, p, SRD_WOP_NAK, SRD_HDR_NAK_BYTES);
}

uint32_t srd_wire_put_hello(uint8_t *b, const struct srd_pkt *p)
{
	srd_put_be32(b + OFF_HELLO_CHALLENGE, p->challenge);
	srd_put_be32(b + OFF_HELLO_ECHO, p->echo);
	return put_common(b, p, SRD_WOP_HELLO, SRD_HDR_HELLO_BYTES);
}

/*
 * Zero @p's fields from @first up to @end (struct srd_pkt's order): those
 * of the opcodes a packet is not.  The parser writes every other field
 * itself rather than zeroing the whole struct first, which cost a fifth
 * of it.
 */
#define PKT_OFF(f)	srd_offsetof(struct srd_pkt, f)
#define PKT_ZERO(p, first, end)	pkt_zero((p), PKT_OFF(first), PKT_OFF(end))
static inline void pkt_zero(struct srd_pkt *p, size_t first, size_t end)
{
	srd_memset((uint8_t *)p + first, 0, end - first);
}

SRD_STATIC_ASSERT(PKT_OFF(echo) < PKT_OFF(psn) &&
		  PKT_OFF(payload_len) < PKT_OFF(rdma) &&
		  PKT_OFF(req_attempt) < PKT_OFF(has_ack) &&
		  PKT_OFF(dup_psn) < PKT_OFF(nak_reason) &&
		  PKT_OFF(nak_reason) + 8 > sizeof(struct srd_pkt),
		  "struct srd_pkt's fields in the parser's groups");

/* The RDMA extensions (docs/protocol.md, "RDMA read and write"). */
static int parse_rdma(const uint8_t *b, struct srd_pkt *p)
{
	struct srd_rdma_info *r = &p->rdma;

	switch (p->opcode) {
	case SRD_WOP_WRITE:
	case SRD_WOP_READ_REQ:
		p->req_msg_id = 0;
		p->req_attempt = 0;
		r->remote_addr = (uint64_t)srd_get_be32(b + OFF_REMOTE_ADDR_HI) << 32 |
				 srd_get_be32(b + OFF_REMOTE_ADDR_LO);
		r->rkey = srd_get_be32(b + OFF_RKEY);
		r->rdma_len = srd_get_be32(b + OFF_RDMA_LEN);
		r->rdma_offset = srd_get_be32(b + OFF_RDMA_OFFSET);
		r->length = srd_get_be32(b + OFF_LENGTH);
		if (r->rdma_len > SRD_MAX_RDMA_BYTES ||
		    r->rdma_offset > r->rdma_len ||
		    r->length > r->rdma_len - r->rdma_offset ||
		    r->length > SRD_MAX_RDMA_MSG_BYTES)
			return SRD_PARSE_FIELD;
		if (p->opcode == SRD_WOP_WRITE ? r->length != p->msg_len :
						 p->msg_len != 0)
			return SRD_PARSE_FIELD;
		break;
	case SRD_WOP_READ_RESP:
		PKT_ZERO(p, rdma, req_msg_id);
		p->req_msg_id = srd_get_be32(b + OFF_REQ_MSG_ID);
		p->req_attempt = b[OFF_REQ_ATTEMPT];
		if (p->msg_len > SRD_MAX_RDMA_MSG_BYTES)
			return SRD_PARSE_FIELD;
		break;
	default:
		PKT_ZERO(p, rdma, has_ack);
		break;
	}
	return SRD_PARSE_OK;
}

/*
 * Parse and validate everything that can be checked without state.  On
 * success every field the opcode defines is filled in, every other one
 * is zero, and the payload (DATA only) is the payload_len bytes after
 * hdr_len words.  On failure only the opcode is set (0 if the header did
 * not get so far).  Every field read lies within the opcode's header and
 * its ACK block, so within SRD_HDR_MAX_BYTES.
 */
#define WOP_HDR_CASE(n, v, hdr, fl, k)					\
	case SRD_WOP_##n:						\
		min = (hdr);						\
		break
int srd_wire_parse(const uint8_t *b, size_t len, struct srd_pkt *p)
{
	uint32_t min, hdr;

	p->opcode = 0;
	if (len < 4)
		return SRD_PARSE_SHORT;
	if (b[OFF_VERSION] != SRD_WIRE_VERSION)
		return SRD_PARSE_VERSION;
	p->opcode = b[OFF_OPCODE];
	p->flags = b[OFF_FLAGS];
	hdr = (uint32_t)b[OFF_HDR_LEN_WORDS] * 4;
	switch (p->opcode) {
	SRD_WIRE_OPS(WOP_HDR_CASE, SRD_LIST_SEMI);
	default:
		return SRD_PARSE_OPCODE;
	}
	if (hdr < min)
		return SRD_PARSE_HDR_LEN;
	if (len < hdr)
		return SRD_PARSE_SHORT;
	p->hdr_len = (uint8_t)(hdr / 4);
	p->src_tag = srd_get_be32(b + OFF_SRC_TAG);
	p->dst_tag = srd_get_be32(b + OFF_DST_TAG);
	p->challenge = 0;
	p->echo = 0;
	if (p->src_tag == 0)
		return SRD_PARSE_FIELD;

	/* Every opcode here: the switch above let no other through. */
	switch ((enum srd_engine_wire_op)p->opcode) {
	case SRD_WOP_DATA:
	case SRD_WOP_WRITE:
	case SRD_WOP_READ_REQ:
	case SRD_WOP_READ_RESP:
		p->psn = srd_get_be32(b + OFF_PSN);
		p->msg_id = srd_get_be32(b + OFF_MSG_ID);
		p->msg_base = srd_get_be32(b + OFF_MSG_BASE);
		p->dst_qpn = srd_get_be32(b + OFF_DST_QPN);
		p->src_qpn = srd_get_be32(b + OFF_SRC_QPN);
		p->qkey = srd_get_be32(b + OFF_QKEY);
		p->imm_data = srd_get_be32(b + OFF_IMM);
		p->msg_len = srd_get_be32(b + OFF_MSG_LEN);
		p->offset = srd_get_be32(b + OFF_OFFSET);
		p->seg_bytes = srd_get_be16(b + OFF_SEG_BYTES);
		p->attempt = b[OFF_ATTEMPT];
		p->path = b[OFF_PATH];
		p->payload_len = (uint32_t)(len - hdr);
		if (p->dst_tag == 0 || (p->dst_qpn | p->src_qpn) >> 24 ||
		    p->seg_bytes < SRD_MIN_SEG_BYTES ||
		    p->msg_len > SRD_MAX_MSG_BYTES ||
		    p->offset % p->seg_bytes ||
		    (p->msg_len ? p->offset >= p->msg_len : p->offset != 0) ||
		    p->payload_len != (p->msg_len - p->offset < p->seg_bytes ?
				       p->msg_len - p->offset : p->seg_bytes) ||
		    srd_seq_lt(p->msg_id, p->msg_base))
			return SRD_PARSE_FIELD;
		if (p->flags & SRD_WF_DATA_HAS_ACK) {
			const uint8_t *a = b + min;

			/* The block follows the opcode's own fields. */
			if (hdr < min + SRD_ACK_BLOCK_BYTES)
				return SRD_PARSE_HDR_LEN;
			p->has_ack = true;
			p->ack_flags = a[OFF_AB_FLAGS];
			p->ack_psn = srd_get_be32(a + OFF_AB_PSN);
			p->ack_delay_us = srd_get_be32(a + OFF_AB_DELAY);
			srd_memcpy(p->sack, a + OFF_AB_SACK, sizeof(p->sack));
			p->dup_psn = srd_get_be32(a + OFF_AB_DUP_PSN);
		} else {
			PKT_ZERO(p, has_ack, nak_reason);
		}
		p->nak_reason = 0;
		return parse_rdma(b, p);
	case SRD_WOP_ACK:
		/* In two: each is short enough to be a few stores, not a loop. */
		PKT_ZERO(p, psn, payload_len);
		PKT_ZERO(p, payload_len, has_ack);
		p->nak_reason = 0;
		p->has_ack = true;
		p->ack_flags = p->flags;
		p->ack_psn = srd_get_be32(b + OFF_ACK_PSN);
		p->ack_delay_us = srd_get_be32(b + OFF_ACK_DELAY);
		srd_memcpy(p->sack, b + OFF_SACK, sizeof(p->sack));
		p->dup_psn = srd_get_be32(b + OFF_DUP_PSN);
		if (p->dst_tag == 0)
			return SRD_PARSE_FIELD;
		break;
	case SRD_WOP_NAK:
		srd_memset(&p->psn, 0, sizeof(*p) - srd_offsetof(struct srd_pkt, psn));
		p->psn = srd_get_be32(b + OFF_NAK_PSN);
		p->msg_id = srd_get_be32(b + OFF_NAK_MSG_ID);
		p->attempt = b[OFF_NAK_ATTEMPT];
		p->nak_reason = b[OFF_NAK_REASON];
		if (p->dst_tag == 0 || p->nak_reason < SRD_NAK_RNR ||
		    p->nak_reason > SRD_NAK_REMOTE_ACCESS)
			return SRD_PARSE_FIELD;
		break;
	case SRD_WOP_HELLO:
		srd_memset(&p->psn, 0, sizeof(*p) - srd_offsetof(struct srd_pkt, psn));
		p->challenge = srd_get_be32(b + OFF_HELLO_CHALLENGE);
		p->echo = srd_get_be32(b + OFF_HELLO_ECHO);
		break;
	}
	return SRD_PARSE_OK;
}
