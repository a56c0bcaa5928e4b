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
	b[0] = SRD_WIRE_VERSION_1;
	b[1] = op;
	b[2] = p->flags;
	b[3] = (uint8_t)(hdr_bytes / 4);
	srd_put_be32(b + 4, p->src_epoch);
	srd_put_be32(b + 8, p->dst_epoch);
	return hdr_bytes;
}

uint32_t srd_wire_put_data(uint8_t *b, const struct srd_pkt *p)
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
	return put_common(b, p, SRD_WOP_DATA, SRD_HDR_DATA_BYTES);
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
	if (b[0] != SRD_WIRE_VERSION_1)
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
		break;
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
		    p->nak_reason > SRD_NAK_REMOTE_ABORT)
			return SRD_PARSE_FIELD;
		break;
	default:
		break;
	}
	return SRD_PARSE_OK;
}
