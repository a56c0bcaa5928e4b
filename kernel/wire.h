/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: the on-wire header that follows the UDP header.
 * docs/protocol.md is the normative description; keep the two in step.
 */
#ifndef _SRD_WIRE_H
#define _SRD_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

/* SRD_WIRE_VERSION and the SRD transport's opcodes are the engine's. */
#include "engine/srd_engine.h"

/* The default UDP port: not 4791, which belongs to RoCEv2 and rxe. */
#define SRD_DEFAULT_UDP_PORT	4792

enum srd_wire_opcode {
	SRD_OP_UD_SEND = 1,
	SRD_OP_UD_SEND_WITH_IMM = 2,
};

enum srd_wire_flags {
	SRD_WF_SOLICITED = 1 << 0,
};

/*
 * Every datagram starts with this header.  hdr_len counts the bytes from
 * its start to the payload, in units of 4; a receiver skips header bytes
 * it does not know, so later versions may append fields.
 */
struct srd_wire_hdr {
	u8 version;		/* SRD_WIRE_VERSION */
	u8 opcode;		/* enum srd_wire_opcode */
	u8 flags;		/* enum srd_wire_flags */
	u8 hdr_len_words;	/* header length / 4 */
	__be32 dst_qpn;		/* low 24 bits; the high 8 are 0 */
	__be32 src_qpn;		/* low 24 bits; the high 8 are 0 */
	__be32 qkey;
	__be32 imm_data;	/* valid with SRD_OP_UD_SEND_WITH_IMM */
	__be32 reserved;	/* 0 on send, ignored on receive */
};

#define SRD_WIRE_HDR_BYTES	sizeof(struct srd_wire_hdr)

/*
 * Every header starts with version, opcode, flags and hdr_len_words.
 * Opcodes SRD_WOP_FIRST..SRD_WOP_LAST are the SRD transport's
 * (engine/wire.c); the UD ones must stay below them.
 */
#define SRD_WIRE_COMMON_BYTES	4
static_assert((int)SRD_OP_UD_SEND_WITH_IMM < (int)SRD_WOP_FIRST,
	      "UD opcodes overlap the SRD transport's");

#endif /* _SRD_WIRE_H */
