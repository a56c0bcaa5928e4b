/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softsrd: what the kernel needs of the wire beyond the engine's
 * definitions.  Every header, UD's included, is the engine's
 * (engine/srd_engine.h, engine/wire.c); docs/protocol.md is the
 * normative description.
 */
#ifndef _SRD_WIRE_H
#define _SRD_WIRE_H

#include "engine/srd_engine.h"

/* The default UDP port: not 4791, which belongs to RoCEv2 and rxe. */
#define SRD_DEFAULT_UDP_PORT	4792

/*
 * Every header starts with version, opcode, flags and hdr_len_words: the
 * bytes the socket makes linear before it tells UD from SRD
 * (srd_wire_is_transport()).
 */
#define SRD_WIRE_COMMON_BYTES	4

#endif /* _SRD_WIRE_H */
