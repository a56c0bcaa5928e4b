/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd engine internals, not for the OS layer (srd_engine.h is its):
 * the wire (wire.c): a packet's fields as parsed, and the writers of each
 * header.
 */
#ifndef SRD_ENGINE_WIRE_H
#define SRD_ENGINE_WIRE_H

#include "srd_engine.h"

/* In groups, in this order: srd_wire_parse() zeroes those a packet lacks. */
struct srd_pkt {
	uint8_t opcode, flags, hdr_len;	/* hdr_len in 4-byte words */
	uint32_t src_tag, dst_tag;	/* the wire's src_tag, dst_tag */
	uint32_t challenge, echo;	/* HELLO; 0 in every other opcode */
	/* Received: the OS's packet, where rx_data finds the payload. */
	const void *os_pkt;
	/* DATA */
	uint32_t psn, msg_id, msg_base;
	uint32_t dst_qpn, src_qpn, qkey, imm_data;
	uint32_t msg_len, offset;
	uint16_t seg_bytes;
	uint8_t attempt, path;
	uint32_t payload_len;		/* the bytes after hdr_len words */
	/* WRITE, READ_REQ */
	struct srd_rdma_info rdma;
	/* READ_RESP */
	uint32_t req_msg_id;
	uint8_t req_attempt;
	/* ACK, or a DATA packet's ACK block (has_ack) */
	bool has_ack;
	uint8_t ack_flags;		/* SRD_WF_ACK_DUP */
	uint32_t ack_psn, ack_delay_us;
	uint8_t sack[SRD_SACK_WINDOW_PKTS / 8];
	uint32_t dup_psn;		/* with SRD_WF_ACK_DUP */
	/* NAK: psn, msg_id, attempt above */
	uint8_t nak_reason;
};

/*
 * Reads no byte of @buf past min(@len, SRD_HDR_MAX_BYTES): the OS may
 * hand over just that much of a longer packet (srd_peer_on_packet_head()).
 */
int srd_wire_parse(const uint8_t *buf, size_t len, struct srd_pkt *p);
/* Each writes a header into buf (SRD_HDR_MAX_BYTES) and returns its length. */
uint32_t srd_wire_put_data(uint8_t *buf, const struct srd_pkt *p);
/* DATA with the RDMA extension: opcode WRITE or READ_REQ. */
uint32_t srd_wire_put_rdma(uint8_t *buf, const struct srd_pkt *p, uint8_t op);
uint32_t srd_wire_put_resp(uint8_t *buf, const struct srd_pkt *p);
struct srd_peer;
struct srd_tx_msg;
/*
 * What those write, for message @m of @peer (its kind gives the
 * opcode): the sender's own, from the message without a struct srd_pkt.
 */
uint32_t srd_wire_put_msg(uint8_t *buf, const struct srd_peer *peer,
			  const struct srd_tx_msg *m, uint32_t psn,
			  uint32_t offset, uint8_t flags, uint8_t path);
uint32_t srd_wire_put_ack(uint8_t *buf, const struct srd_pkt *p);
struct srd_rcv_window;
/*
 * What that writes, from the receiver's window @w: the ACK's @flags
 * (SRD_WF_ACK_DUP, SRD_WF_ACK_DRAIN), @delay_us, and @dup_psn, written
 * only with SRD_WF_ACK_DUP.
 */
uint32_t srd_wire_put_ack_win(uint8_t *buf, uint32_t src_tag,
			      uint32_t dst_tag, uint8_t flags,
			      const struct srd_rcv_window *w,
			      uint32_t delay_us, uint32_t dup_psn);
/*
 * Append @p's ACK fields as an ACK block to the DATA-family header of
 * @hdr_len bytes at @buf (flag HAS_ACK, hdr_len_words); returns the new
 * length, hdr_len + SRD_ACK_BLOCK_BYTES.
 */
uint32_t srd_wire_put_ack_block(uint8_t *buf, uint32_t hdr_len,
				const struct srd_pkt *p);
uint32_t srd_wire_put_nak(uint8_t *buf, const struct srd_pkt *p);
uint32_t srd_wire_put_hello(uint8_t *buf, const struct srd_pkt *p);

#endif /* SRD_ENGINE_WIRE_H */
