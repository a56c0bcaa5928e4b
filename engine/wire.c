// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softsrd engine: SRD packet headers, encoded and parsed.  The layouts
 * are in docs/protocol.md ("SRD transport: headers"); the first four
 * bytes are shared with the UD header of kernel/wire.h.
 */
#include "srd_internal.h"

static uint32_t put_common(uint8_t *b, const struct srd_pkt *p, uint8_t op,
			   uint32_t hdr_bytes)
{
	b[0] = SRD_WIRE_VERSION;
	b[1] = op;
	b[2] = p->flags;
	b[3] = (uint8_t)(hdr_bytes / 4);
	srd_put_be32(b + 4, p->src_epoch);
	srd_put_be32(b + 8, p->dst_epoch);
	return hdr_bytes;
}

static void put_data_fields(uint8_t *b, const struct srd_pkt *p)
{
	srd_put_be32(b + 12, p->psn);
	srd_put_be32(b + 16, p->msg_id);
	srd_put_be32(b + 20, p->msg_base);
	srd_put_be32(b + 24, p->dst_qpn & 0xffffff);
	srd_put_be32(b + 28, p->src_qpn & 0xffffff);
	srd_put_be32(b + 32, p->qkey);
	srd_put_be32(b + 36, p->imm_data);
	srd_put_be32(b + 40, p->msg_len);
	srd_put_be32(b + 44, p->offset);
	srd_put_be16(b + 48, p->seg_bytes);
	b[50] = p->attempt;
	b[51] = p->path;
}

uint32_t srd_wire_put_data(uint8_t *b, const struct srd_pkt *p)
{
	put_data_fields(b, p);
	return put_common(b, p, SRD_WOP_DATA, SRD_HDR_DATA_BYTES);
}

uint32_t srd_wire_put_rdma(uint8_t *b, const struct srd_pkt *p, uint8_t op)
{
	put_data_fields(b, p);
	srd_put_be32(b + 52, (uint32_t)(p->rdma.remote_addr >> 32));
	srd_put_be32(b + 56, (uint32_t)p->rdma.remote_addr);
	srd_put_be32(b + 60, p->rdma.rkey);
	srd_put_be32(b + 64, p->rdma.rdma_len);
	srd_put_be32(b + 68, p->rdma.rdma_offset);
	srd_put_be32(b + 72, p->rdma.length);
	return put_common(b, p, op, SRD_HDR_RDMA_BYTES);
}

uint32_t srd_wire_put_resp(uint8_t *b, const struct srd_pkt *p)
{
	put_data_fields(b, p);
	srd_put_be32(b + 52, p->req_msg_id);
	b[56] = p->req_attempt;
	b[57] = 0;
	srd_put_be16(b + 58, 0);
	return put_common(b, p, SRD_WOP_READ_RESP, SRD_HDR_RESP_BYTES);
}

uint32_t srd_wire_put_ack(uint8_t *b, const struct srd_pkt *p)
{
	srd_put_be32(b + 12, p->ack_psn);
	srd_put_be32(b + 16, p->ack_delay_us);
	srd_memcpy(b + 20, p->sack, sizeof(p->sack));
	srd_put_be32(b + 36, p->flags & SRD_WF_ACK_DUP ? p->dup_psn : 0);
	return put_common(b, p, SRD_WOP_ACK, SRD_HDR_ACK_BYTES);
}

uint32_t srd_wire_put_nak(uint8_t *b, const struct srd_pkt *p)
{
	srd_put_be32(b + 12, p->psn);
	srd_put_be32(b + 16, p->msg_id);
	b[20] = p->attempt;
	b[21] = p->nak_reason;
	srd_put_be16(b + 22, 0);
	return put_common(b, p, SRD_WOP_NAK, SRD_HDR_NAK_BYTES);
}

uint32_t srd_wire_put_hello(uint8_t *b, const struct srd_pkt *p)
{
	return put_common(b, p, SRD_WOP_HELLO, SRD_HDR_HELLO_BYTES);
}

/* The RDMA extensions (docs/protocol.md, "RDMA read and write"). */
static int parse_rdma(const uint8_t *b, struct srd_pkt *p)
{
	struct srd_rdma_info *r = &p->rdma;

	switch (p->opcode) {
	case SRD_WOP_WRITE:
	case SRD_WOP_READ_REQ:
		r->remote_addr = (uint64_t)srd_get_be32(b + 52) << 32 |
				 srd_get_be32(b + 56);
		r->rkey = srd_get_be32(b + 60);
		r->rdma_len = srd_get_be32(b + 64);
		r->rdma_offset = srd_get_be32(b + 68);
		r->length = srd_get_be32(b + 72);
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
		p->req_msg_id = srd_get_be32(b + 52);
		p->req_attempt = b[56];
		if (p->msg_len > SRD_MAX_RDMA_MSG_BYTES)
			return SRD_PARSE_FIELD;
		break;
	default:
		break;
	}
	return SRD_PARSE_OK;
}

/*
 * Parse and validate everything that can be checked without state.  On
 * success every field the opcode defines is filled in and the payload
 * (DATA only) is the bytes after hdr_len.
 */
int srd_wire_parse(const uint8_t *b, size_t len, struct srd_pkt *p)
{
	uint32_t min, hdr;

	srd_memset(p, 0, sizeof(*p));
	if (len < 4)
		return SRD_PARSE_SHORT;
	if (b[0] != SRD_WIRE_VERSION)
		return SRD_PARSE_VERSION;
	p->opcode = b[1];
	p->flags = b[2];
	hdr = (uint32_t)b[3] * 4;
	switch (p->opcode) {
	case SRD_WOP_DATA:
		min = SRD_HDR_DATA_BYTES;
		break;
	case SRD_WOP_ACK:
		min = SRD_HDR_ACK_BYTES;
		break;
	case SRD_WOP_NAK:
		min = SRD_HDR_NAK_BYTES;
		break;
	case SRD_WOP_HELLO:
		min = SRD_HDR_HELLO_BYTES;
		break;
	case SRD_WOP_WRITE:
	case SRD_WOP_READ_REQ:
		min = SRD_HDR_RDMA_BYTES;
		break;
	case SRD_WOP_READ_RESP:
		min = SRD_HDR_RESP_BYTES;
		break;
	default:
		return SRD_PARSE_OPCODE;
	}
	if (hdr < min)
		return SRD_PARSE_HDR_LEN;
	if (len < hdr)
		return SRD_PARSE_SHORT;
	p->hdr_len = (uint8_t)(hdr / 4);
	p->src_epoch = srd_get_be32(b + 4);
	p->dst_epoch = srd_get_be32(b + 8);
	if (p->src_epoch == 0)
		return SRD_PARSE_FIELD;

	switch (p->opcode) {
	case SRD_WOP_DATA:
	case SRD_WOP_WRITE:
	case SRD_WOP_READ_REQ:
	case SRD_WOP_READ_RESP:
		p->psn = srd_get_be32(b + 12);
		p->msg_id = srd_get_be32(b + 16);
		p->msg_base = srd_get_be32(b + 20);
		p->dst_qpn = srd_get_be32(b + 24);
		p->src_qpn = srd_get_be32(b + 28);
		p->qkey = srd_get_be32(b + 32);
		p->imm_data = srd_get_be32(b + 36);
		p->msg_len = srd_get_be32(b + 40);
		p->offset = srd_get_be32(b + 44);
		p->seg_bytes = srd_get_be16(b + 48);
		p->attempt = b[50];
		p->path = b[51];
		p->payload = b + hdr;
		p->payload_len = (uint32_t)(len - hdr);
		if (p->dst_epoch == 0 || (p->dst_qpn | p->src_qpn) >> 24 ||
		    p->seg_bytes < SRD_MIN_SEG_BYTES ||
		    p->msg_len > SRD_MAX_MSG_BYTES ||
		    p->offset % p->seg_bytes ||
		    (p->msg_len ? p->offset >= p->msg_len : p->offset != 0) ||
		    p->payload_len != (p->msg_len - p->offset < p->seg_bytes ?
				       p->msg_len - p->offset : p->seg_bytes) ||
		    srd_seq_lt(p->msg_id, p->msg_base))
			return SRD_PARSE_FIELD;
		return parse_rdma(b, p);
	case SRD_WOP_ACK:
		p->ack_psn = srd_get_be32(b + 12);
		p->ack_delay_us = srd_get_be32(b + 16);
		srd_memcpy(p->sack, b + 20, sizeof(p->sack));
		p->dup_psn = srd_get_be32(b + 36);
		if (p->dst_epoch == 0)
			return SRD_PARSE_FIELD;
		break;
	case SRD_WOP_NAK:
		p->psn = srd_get_be32(b + 12);
		p->msg_id = srd_get_be32(b + 16);
		p->attempt = b[20];
		p->nak_reason = b[21];
		if (p->dst_epoch == 0 || p->nak_reason < SRD_NAK_RNR ||
		    p->nak_reason > SRD_NAK_REMOTE_ACCESS)
			return SRD_PARSE_FIELD;
		break;
	default:
		break;
	}
	return SRD_PARSE_OK;
}
