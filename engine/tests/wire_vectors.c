// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wire_vectors: one header of every opcode, UD's and the SRD transport's,
 * encoded by the engine (engine/wire.c), every field set to a distinct
 * value a correct sender may send.  A line per packet:
 *
 *   OPCODE FIELD=VALUE... payload=N hdr=HEX
 *
 * selftests/srd_forge.py check-vectors reads them, encodes the same
 * fields itself and must get the same bytes, and decodes the engine's
 * bytes back to the same fields: the forger the VM tests attack with and
 * the engine cannot drift apart (scripts/host-tests.sh).  With --table,
 * it prints the engine's opcode lists instead.
 */
#include <stdio.h>
#include <string.h>

#include "../wire.h"

static void out(const char *fields, const struct srd_pkt *p, uint32_t payload,
		const uint8_t *b, uint32_t len)
{
	uint32_t i;

	printf("%u flags=%u src_tag=%u dst_tag=%u %s payload=%u hdr=", b[1],
	       p->flags, p->src_tag, p->dst_tag, fields, payload);
	for (i = 0; i < len; i++)
		printf("%02x", b[i]);
	printf("\n");
}

static void data_fields(char *s, size_t n, const struct srd_pkt *p)
{
	snprintf(s, n, "psn=%u msg_id=%u msg_base=%u dst_qpn=%u src_qpn=%u "
		 "qkey=%u imm=%u msg_len=%u offset=%u seg_bytes=%u attempt=%u path=%u",
		 p->psn, p->msg_id, p->msg_base, p->dst_qpn, p->src_qpn, p->qkey,
		 p->imm_data, p->msg_len, p->offset, p->seg_bytes, p->attempt,
		 p->path);
}

/* The DATA fields, then the RDMA extension's. */
static void rdma_fields(char *s, size_t n, const struct srd_pkt *p)
{
	char f[512];

	data_fields(f, sizeof(f), p);
	snprintf(s, n, "%s remote_addr=%llu rkey=%u rdma_len=%u rdma_offset=%u length=%u",
		 f, (unsigned long long)p->rdma.remote_addr, p->rdma.rkey,
		 p->rdma.rdma_len, p->rdma.rdma_offset, p->rdma.length);
}

/* The ACK block's fields, after the data's. */
static void ack_block_fields(char *s, size_t n, const struct srd_pkt *p)
{
	uint32_t i;

	snprintf(s, n, " ack_flags=%u ack_psn=%u ack_delay_us=%u dup_psn=%u sack=",
		 p->ack_flags, p->ack_psn, p->ack_delay_us, p->dup_psn);
	for (i = 0; i < sizeof(p->sack); i++)
		snprintf(s + strlen(s), n - strlen(s), "%02x", p->sack[i]);
}

/*
 * --table: the engine's opcode lists (SRD_UD_OPS, SRD_WIRE_OPS), a line
 * each, "NAME VALUE HDR_BYTES FLAGS KIND", for scripts/check-opcode-tables.py
 * to hold the forger's and the dissector's tables against.
 */
#define TABLE_LINE(n, v, hdr, fl, k)					\
	printf("%s %u %u %u %s\n", #n, (unsigned int)(v),		\
	       (unsigned int)(hdr), (unsigned int)(fl), #k);
static void print_table(void)
{
	SRD_UD_OPS(TABLE_LINE, SRD_LIST_NONE)
	SRD_WIRE_OPS(TABLE_LINE, SRD_LIST_NONE)
}

int main(int argc, char **argv)
{
	uint8_t b[SRD_HDR_MAX_BYTES];
	struct srd_pkt p = {
		.src_tag = 0x11223344, .dst_tag = 0x55667788,
		.psn = 0x01020304, .msg_id = 0x0a0b0c0d, .msg_base = 0x0a0b0c00,
		.dst_qpn = 0xabcdef, .src_qpn = 0x123456, .qkey = 0x11111111,
		.imm_data = 0xdeadbeef, .msg_len = 3000, .offset = 2048,
		.seg_bytes = 1024, .attempt = 3, .path = 7,
	};
	char f[512], g[1024];
	uint32_t len, i;

	if (argc == 2 && !strcmp(argv[1], "--table")) {
		print_table();
		return 0;
	}

	/* UD, with and without immediate data. */
	for (i = 0; i < 2; i++) {
		struct srd_ud_hdr u = {
			.opcode = i ? SRD_OP_UD_SEND_WITH_IMM : SRD_OP_UD_SEND,
			.flags = i ? SRD_WF_UD_SOLICITED : 0,
			.dst_qpn = 0xabcdef, .src_qpn = 0x123456,
			.qkey = 0x80000011, .imm_data = i ? 0xdeadbeef : 0,
		};
		uint32_t j;

		len = srd_wire_put_ud(b, &u);
		printf("%u flags=%u dst_qpn=%u src_qpn=%u qkey=%u imm=%u payload=%u hdr=",
		       u.opcode, u.flags, u.dst_qpn, u.src_qpn, u.qkey, u.imm_data,
		       100 + i);
		for (j = 0; j < len; j++)
			printf("%02x", b[j]);
		printf("\n");
	}

	/* DATA: solicited, with immediate, ACK now; the last segment. */
	p.flags = SRD_WF_DATA_SOLICITED | SRD_WF_DATA_HAS_IMM | SRD_WF_DATA_ACK_NOW;
	len = srd_wire_put_data(b, &p);
	data_fields(f, sizeof(f), &p);
	out(f, &p, 952, b, len);

	/* DATA carrying an ACK block with DUP: an answer that ACKs. */
	p.flags = SRD_WF_DATA_ACK_NOW;
	p.msg_len = 100;
	p.offset = 0;
	p.imm_data = 0;
	p.ack_flags = SRD_WF_ACK_DUP;
	p.ack_psn = 0x01020399;
	p.ack_delay_us = 123;
	p.dup_psn = 0x01020377;
	for (i = 0; i < sizeof(p.sack); i++)
		p.sack[i] = (uint8_t)(0x11 + 13 * i);
	len = srd_wire_put_data(b, &p);
	len = srd_wire_put_ack_block(b, len, &p);
	p.flags = b[2];
	data_fields(f, sizeof(f), &p);
	snprintf(g, sizeof(g), "%s", f);
	ack_block_fields(g + strlen(g), sizeof(g) - strlen(g), &p);
	out(g, &p, 100, b, len);
	p.msg_len = 3000;
	p.offset = 2048;
	p.imm_data = 0xdeadbeef;

	/* WRITE with immediate, retransmitted. */
	p.flags = SRD_WF_DATA_HAS_IMM | SRD_WF_DATA_RETRANSMIT;
	p.rdma = (struct srd_rdma_info){ .remote_addr = 0x123456789abcull,
					 .rkey = 0x87654321, .rdma_len = 1u << 20,
					 .rdma_offset = 4096, .length = 3000 };
	len = srd_wire_put_rdma(b, &p, SRD_WOP_WRITE);
	rdma_fields(g, sizeof(g), &p);
	out(g, &p, 952, b, len);

	/* READ_REQ: no payload, no immediate. */
	p.flags = SRD_WF_DATA_ACK_NOW;
	p.imm_data = 0;
	p.msg_len = 0;
	p.offset = 0;
	p.rdma = (struct srd_rdma_info){ .remote_addr = 0xfedcba987654ull,
					 .rkey = 0x13579bdf, .rdma_len = 73728,
					 .rdma_offset = 8192, .length = 65536 };
	len = srd_wire_put_rdma(b, &p, SRD_WOP_READ_REQ);
	rdma_fields(g, sizeof(g), &p);
	out(g, &p, 0, b, len);

	/* READ_RESP: no qkey, answering request 0x0a0b0c0e attempt 2. */
	p.flags = 0;
	p.qkey = 0;
	p.msg_len = 65536;
	p.offset = 1024;
	p.req_msg_id = 0x0a0b0c0e;
	p.req_attempt = 2;
	len = srd_wire_put_resp(b, &p);
	data_fields(f, sizeof(f), &p);
	snprintf(g, sizeof(g), "%s req_msg_id=%u req_attempt=%u", f, p.req_msg_id,
		 p.req_attempt);
	out(g, &p, 1024, b, len);

	/* ACK with DUP, a SACK bitmap of distinct bytes. */
	p.flags = SRD_WF_ACK_DUP;
	p.ack_psn = 0x01020310;
	p.ack_delay_us = 250;
	p.dup_psn = 0x01020305;
	for (i = 0; i < sizeof(p.sack); i++)
		p.sack[i] = (uint8_t)(0x81 + 17 * i);
	len = srd_wire_put_ack(b, &p);
	snprintf(f, sizeof(f), "ack_psn=%u ack_delay_us=%u dup_psn=%u sack=", p.ack_psn,
		 p.ack_delay_us, p.dup_psn);
	for (i = 0; i < sizeof(p.sack); i++)
		snprintf(f + strlen(f), sizeof(f) - strlen(f), "%02x", p.sack[i]);
	out(f, &p, 0, b, len);

	/* NAK REMOTE_ACCESS. */
	p.flags = 0;
	p.attempt = 1;
	p.nak_reason = SRD_NAK_REMOTE_ACCESS;
	len = srd_wire_put_nak(b, &p);
	snprintf(f, sizeof(f), "psn=%u msg_id=%u attempt=%u nak_reason=%u", p.psn,
		 p.msg_id, p.attempt, p.nak_reason);
	out(f, &p, 0, b, len);

	/* HELLO asking for the peer's tag, and one with a challenge and echo. */
	p.dst_tag = 0;
	len = srd_wire_put_hello(b, &p);
	out("challenge=0 echo=0", &p, 0, b, len);
	p.dst_tag = 0x0badcafe;
	p.challenge = 0xc4a11e9e;
	p.echo = 0xec40ec40;
	len = srd_wire_put_hello(b, &p);
	snprintf(f, sizeof(f), "challenge=%u echo=%u", p.challenge, p.echo);
	out(f, &p, 0, b, len);
	return 0;
}
