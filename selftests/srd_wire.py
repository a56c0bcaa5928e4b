# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_wire: the SRD wire format of docs/protocol.md ("SRD transport",
"RDMA read and write"), encoded and decoded by hand with struct,
big-endian, independently of engine/wire.c: the opcodes and their tables
(which scripts/check-opcode-tables.py holds to the engine's lists), a
header's encoders, the decoders of its fields, and the UDP payload of an
Ethernet frame.  srd_forge.py's modules speak the wire through this one.
"""

import struct

VERSION = 4
UD_SEND, UD_SEND_WITH_IMM = 1, 2
DATA, ACK, NAK, HELLO, WRITE, READ_REQ, READ_RESP = 16, 17, 18, 19, 20, 21, 22
OPNAMES = {UD_SEND: "UD_SEND", UD_SEND_WITH_IMM: "UD_SEND_WITH_IMM",
           DATA: "DATA", ACK: "ACK", NAK: "NAK", HELLO: "HELLO",
           WRITE: "WRITE", READ_REQ: "READ_REQ", READ_RESP: "READ_RESP"}
# The header length of each opcode, exactly what a sender writes.
HDR = {UD_SEND: 24, UD_SEND_WITH_IMM: 24, DATA: 52, ACK: 40, NAK: 24,
       HELLO: 20, WRITE: 76, READ_REQ: 76, READ_RESP: 60}
# The opcodes with the DATA fields, which may carry an ACK block (flag
# HAS_ACK): ACK_BLOCK bytes right after their HDR bytes, in the header.
DATA_OPS = (DATA, WRITE, READ_REQ, READ_RESP)
ACK_BLOCK = 32

F_SOLICITED, F_HAS_IMM, F_RETRANSMIT, F_ACK_NOW, F_HAS_ACK = 1, 2, 4, 8, 0x10
F_ACK_DUP = 1
F_ACK_DRAIN = 2
F_ACK_ALL = F_ACK_DUP | F_ACK_DRAIN
F_DATA_ALL = F_SOLICITED | F_HAS_IMM | F_RETRANSMIT | F_ACK_NOW | F_HAS_ACK
# The flags a sender may set, per opcode.  OPNAMES, HDR, DATA_OPS and this
# are the engine's lists (SRD_UD_OPS, SRD_WIRE_OPS in engine/srd_engine.h),
# which scripts/check-opcode-tables.py holds them to.
FLAGS = {UD_SEND: F_SOLICITED, UD_SEND_WITH_IMM: F_SOLICITED,
         DATA: F_DATA_ALL, ACK: F_ACK_ALL, NAK: 0, HELLO: 0, WRITE: F_DATA_ALL,
         READ_REQ: F_DATA_ALL & ~F_HAS_IMM, READ_RESP: F_DATA_ALL & ~F_HAS_IMM}
NAK_RNR, NAK_REMOTE_ACCESS = 1, 6
NAK_NAMES = {1: "RNR", 2: "BAD_QPN", 3: "BAD_QKEY", 4: "BAD_LENGTH",
             5: "REMOTE_ABORT", 6: "REMOTE_ACCESS"}
MAX_MSG = 64 << 20
MAX_RDMA = 1 << 30


# --- encoding ----------------------------------------------------------------

def common(op, flags, hdr_bytes, src_tag, dst_tag):
    return struct.pack(">BBBBII", VERSION, op, flags, hdr_bytes // 4,
                       src_tag, dst_tag)


def data_fields(psn, msg_id, msg_base, dst_qpn, src_qpn, qkey, imm, msg_len,
                offset, seg_bytes, attempt=0, path=0):
    return struct.pack(">IIIIIIIIIHBB", psn, msg_id, msg_base, dst_qpn,
                       src_qpn, qkey, imm, msg_len, offset, seg_bytes,
                       attempt, path)


def rdma_fields(remote_addr, rkey, rdma_len, rdma_offset, length):
    return struct.pack(">QIIII", remote_addr, rkey, rdma_len, rdma_offset,
                       length)


def ud_hdr(op, flags, dst_qpn, src_qpn, qkey, imm=0):
    """A UD header (docs/protocol.md, "Header")."""
    return struct.pack(">BBBBIIIII", VERSION, op, flags, HDR[op] // 4,
                       dst_qpn, src_qpn, qkey, imm, 0)


def hello(src_tag, dst_tag, challenge=0, echo=0):
    """A HELLO; since version 4 with a challenge and an echo
    (docs/protocol.md, "Tags and peer restart")."""
    return common(HELLO, 0, HDR[HELLO], src_tag, dst_tag) + \
        struct.pack(">II", challenge, echo)


def ack(src_tag, dst_tag, ack_psn, sack=b"\0" * 16, delay_us=0, dup_psn=None):
    """dup_psn: an ACK with the DUP flag, naming it."""
    flags = 0 if dup_psn is None else F_ACK_DUP
    return common(ACK, flags, HDR[ACK], src_tag, dst_tag) + \
        struct.pack(">II16sI", ack_psn, delay_us, sack, dup_psn or 0)


def ack_block(ack_psn, sack=b"\0" * 16, delay_us=0, dup_psn=None):
    """The ACK block (32 bytes): ack()'s fields after its own flags (DUP
    with dup_psn) and 3 reserved bytes."""
    return struct.pack(">B3xII16sI", 0 if dup_psn is None else F_ACK_DUP,
                       ack_psn, delay_us, sack, dup_psn or 0)


def data_hdr(op, flags, src_tag, dst_tag, *fields, ext=b"", ack=None):
    """A header of the DATA family (DATA_OPS): data_fields(*fields), then
    the opcode's own (ext: rdma_fields() or resp_fields()), then with ack
    (a dict of ack_block()'s arguments) the ACK block, flag HAS_ACK, and
    hdr_len_words covering it."""
    blk = b""
    if ack is not None:
        blk = ack_block(**ack)
        flags |= F_HAS_ACK
    return common(op, flags, HDR[op] + len(blk), src_tag, dst_tag) + \
        data_fields(*fields) + ext + blk


def nak(src_tag, dst_tag, psn, msg_id, attempt, reason):
    return common(NAK, 0, HDR[NAK], src_tag, dst_tag) + \
        struct.pack(">IIBBH", psn, msg_id, attempt, reason, 0)


def resp_fields(req_msg_id, req_attempt):
    """READ_RESP's bytes 52..59, after the DATA fields."""
    return struct.pack(">IB3x", req_msg_id, req_attempt)


# --- decoding ----------------------------------------------------------------

def be32(b, o):
    return struct.unpack_from(">I", b, o)[0]


def parse_data(b):
    """The DATA fields (bytes 12..51) of b as a dict."""
    (psn, msg_id, msg_base, dst_qpn, src_qpn, qkey, imm, msg_len, offset,
     seg, attempt, path) = struct.unpack_from(">IIIIIIIIIHBB", b, 12)
    return dict(psn=psn, msg_id=msg_id, msg_base=msg_base, dst_qpn=dst_qpn,
                src_qpn=src_qpn, qkey=qkey, imm=imm, msg_len=msg_len,
                offset=offset, seg=seg, attempt=attempt, path=path)


def ack_at(b):
    """Where the ACK fields (ack_psn, ack_delay_us, sack, dup_psn) of b
    start: an ACK's at 12, the ACK block's of a DATA-family packet with
    HAS_ACK 4 bytes into it; None when b carries no ACK."""
    if len(b) < 4 or b[1] not in HDR:
        return None
    if b[1] == ACK:
        return 12 if len(b) >= HDR[ACK] else None
    a = HDR[b[1]]
    if b[1] in DATA_OPS and b[2] & F_HAS_ACK and \
            min(len(b), b[3] * 4) >= a + ACK_BLOCK:
        return a + 4
    return None


def udp_of_frame(fr):
    """(src port, dst port, UDP payload) of an Ethernet frame, or None."""
    if len(fr) < 14:
        return None
    et = struct.unpack_from(">H", fr, 12)[0]
    o = 14
    if et == 0x8100 and len(fr) >= 18:
        et = struct.unpack_from(">H", fr, 16)[0]
        o = 18
    if et == 0x0800:
        if len(fr) < o + 20:
            return None
        ihl = (fr[o] & 0xf) * 4
        tot = struct.unpack_from(">H", fr, o + 2)[0]
        frag = struct.unpack_from(">H", fr, o + 6)[0]
        if fr[o + 9] != 17 or frag & 0x3fff:
            return None
        ip_end = o + tot
        o += ihl
    elif et == 0x86dd:
        if len(fr) < o + 40 or fr[o + 6] != 17:
            return None
        ip_end = o + 40 + struct.unpack_from(">H", fr, o + 4)[0]
        o += 40
    else:
        return None
    if len(fr) < o + 8 or ip_end > len(fr):
        return None
    sp, dp, ulen = struct.unpack_from(">HHH", fr, o)
    if ulen < 8 or o + ulen > ip_end:
        return None
    return sp, dp, fr[o + 8:o + ulen]
