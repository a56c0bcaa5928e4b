#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_forge: SRD packets made by hand, from a plain UDP socket, and a
sniffer that checks what the kernel puts on the wire.

The wire format is docs/protocol.md ("SRD transport", "RDMA read and
write"); this file encodes it independently of engine/wire.c, with
struct.pack, big-endian.

  srd_forge.py [opts] TARGET_IP hello
  srd_forge.py [opts] TARGET_IP control OFF LEN
  srd_forge.py [opts] TARGET_IP guess N
  srd_forge.py [opts] TARGET_IP read-control OFF LEN
  srd_forge.py [opts] TARGET_IP read-guess N
  srd_forge.py [opts] TARGET_IP bad-headers
  srd_forge.py [opts] TARGET_IP serve
  srd_forge.py sniff IFACE SECONDS [--out-only] [--expect-ops 16,17,...]
  srd_forge.py dissect PCAP LUA --local IP
  srd_forge.py check-vectors < VECTORS

opts: --src IP (the address to send from and receive on: required),
--port P (the SRD UDP port, default 4792), --target "LINE" (the line
srd_rkey_target printed: qpn= qkey= addr= rkey= lkey= len=), --seg BYTES
(control's segment size, default 1024), --src6 IP --dst6 IP (the IPv6
addresses for commands prefixed with -6 in serve mode).

serve: runs the commands of stdin, one a line: "[-6] MODE ARGS..." as on
the command line, "target LINE" (instead of --target), "quit".  The forge
of a family is made (bound, HELLO) at its first command and keeps its
tag: one Python start for many steps (each start costs seconds under
TCG).

The attacker sends from SRC (from a port of its own: softsrd holds PORT
in every namespace) and reads what the target sends to SRC:PORT off a raw
UDP socket (so it needs CAP_NET_RAW), sends a HELLO (dst_tag 0) and learns the target's tag for its
address from the answer (which names the HELLO's src_tag), then:

  hello         nothing more: prints the tags.
  control       one SRD_WRITE message of LEN bytes of 0x5a at OFF of the
                target's MR with its real rkey, in segments of --seg bytes
                (default 1024): every PSN must be ACKed and none NAKed.
  guess         N single-packet SRD_WRITEs (64 bytes of 0x5a to the MR's
                start), each a new message, with rkeys that are not the MR's
                (its lkey, neighbours and bit flips of the rkey, then
                random): each must be NAKed with reason 6 REMOTE_ACCESS,
                nothing ACKed.
  read-control  one SRD_READ_REQ of LEN bytes at OFF with the real rkey:
                the SRD_READ_RESP must bring back the pattern of
                srd_rkey_target (pattern() below), and is ACKed; the
                request must be ACKed (by an ACK, or by an ACK block on
                the response).
  read-guess    N SRD_READ_REQs of 64 bytes with wrong rkeys: each NAKed
                with reason 6, no SRD_READ_RESP answering any of them
                (READ_RESPs are told apart by their req_msg_id: a late
                retransmission for read-control's request is no leak).
  bad-headers   malformed SRD_WRITE / SRD_READ_REQ / SRD_READ_RESP packets
                (short headers, hdr_len_words lying either way, HAS_ACK
                with no room for the ACK block, ranges and lengths the
                spec forbids), all with the real rkey, aimed at the MR:
                none may be answered.  Prints how many were sent;
                the caller checks rx_drop_bad_hdr and the MR.

Every packet received from the target is checked as the sniffer checks
them (check_packet()); a violation fails the mode.

Blind attacks (docs/protocol.md, "Threat model"): sent from an ephemeral
port of --src, as any unprivileged user can, receiving nothing:

  hello-flood N SECS  N HELLOs spread over SECS seconds, random src_tag;
                every other one has dst_tag 0 (a restart claim), the
                others a random dst_tag.
  claim N TAG   N HELLOs with dst_tag TAG (the target's tag for --src,
                learned elsewhere: a lucky guess) and a random src_tag,
                challenge and echo: a forged restart of --src's device.
  slide N TAG   N single-segment DATA packets with dst_tag TAG (a tag
                learned elsewhere, say by `hello` from the attacker's own
                address), random src_tag and QPNs, and msg_id = msg_base
                2^30 ahead of 0 and spread over the 2^32 space.
  sources N PREFIX  one HELLO (dst_tag 0) and one DATA (random dst_tag)
                from each of N IPv6 addresses PREFIX + 1 .. PREFIX + N
                (each bound in turn: they must be the sender's own).
  peers N PREFIX  the honest handshake from each of N IPv6 addresses
                PREFIX + 1 .. PREFIX + N, bound to PORT in turn (no srd device
                may listen there): a HELLO, the target's answer, then one
                DATA (msg_len 0, to a random QPN) naming the answer's tag, so
                that the target makes a peer for each.  Prints how many
                handshakes were answered.
  zero-csum     one HELLO (dst_tag 0) in an IPv4 UDP datagram whose
                checksum is 0 ("none"), through a raw socket (root).

  sniff         captures every UDP datagram to or from PORT on IFACE (an
                AF_PACKET socket, both directions, or only the outgoing
                ones) for SECONDS or until SIGINT/SIGTERM, and checks that
                no header field the spec reserves or leaves unused carries
                anything but 0 and that every header is exactly its
                opcode's length (nothing uninitialised trails it).  Prints
                "sniff: listening" when ready, then per-opcode counts.
                Fails on any violation, when no packet was seen, or when an
                opcode of --expect-ops was never seen.  It first runs the
                checker on good packets of every opcode and on each spoilt
                in one field (checker_selftest()), and refuses to sniff if
                one is judged wrong.

  dissect PCAP LUA --local IP
                the Wireshark dissector LUA checked against this file's own
                decoding, on a capture (pcap, Ethernet) of real traffic:
                tshark -X lua_script:LUA -T fields gives every field of
                every softsrd packet, which must equal what struct.unpack
                finds at the offsets of docs/protocol.md (the SACK bitmap
                as its list of PSNs; an ACK block's too).  Prints the
                packets by direction (out: from IP, in: to it), opcode and
                NAK reason, the retransmissions and the packets with an
                ACK block (ack_block), for the caller to hold against
                counters.

  check-vectors
                the engine's own encoding of a header of every opcode,
                and of a DATA with an ACK block
                (engine/tests/wire_vectors, on stdin): this file must
                encode the same fields to the same bytes, decode them back
                to the same fields, and find no violation in them (the
                forger and the engine cannot drift apart).

Each mode ends with a line "RESULT mode=... ok=0|1 ..." and exits 0 when
ok=1, 1 otherwise (2: usage).
"""

import os
import random
import select
import signal
import socket
import struct
import sys
import time

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

DEBUG = bool(os.environ.get("SRD_FORGE_DEBUG"))   # every packet received

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

FILL = 0x5a


def pattern(i):
    """Byte i of srd_rkey_target's MR (srd_rkey_pattern() there)."""
    return (i * 7 + (i >> 8) * 13 + 0x21) & 0xff


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


# --- parsing and checking ----------------------------------------------------

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


def check_packet(b):
    """(opcode, [violations]) for one SRD datagram payload as a correct
    sender writes it: every reserved or unused field 0, the header exactly
    the opcode's length (with HAS_ACK, and the ACK block's), the lengths
    consistent."""
    v = []
    if len(b) < 4:
        return None, ["datagram of %d bytes" % len(b)]
    op, flags, hlen = b[1], b[2], b[3] * 4
    if b[0] != VERSION:
        v.append("version %d" % b[0])
    if op not in HDR:
        return op, v + ["unknown opcode %d" % op]
    name = OPNAMES[op]
    blk = op in DATA_OPS and flags & F_HAS_ACK
    want_hlen = HDR[op] + (ACK_BLOCK if blk else 0)
    if hlen != want_hlen:
        v.append("%s: hdr_len_words %d (%d bytes), expected %d bytes%s" %
                 (name, b[3], hlen, want_hlen, " (HAS_ACK)" if blk else ""))
    if len(b) < want_hlen:
        return op, v + ["%s: datagram of %d bytes, shorter than the header%s" %
                        (name, len(b), " and its ACK block" if blk else "")]
    payload = len(b) - hlen if len(b) >= hlen else 0
    if flags & ~FLAGS[op]:
        v.append("%s: flags 0x%02x (0x%02x not allowed)" %
                 (name, flags, flags & ~FLAGS[op]))

    if op in (UD_SEND, UD_SEND_WITH_IMM):
        if b[4] or b[8]:
            v.append("%s: QPN high byte not 0" % name)
        if op == UD_SEND and be32(b, 16):
            v.append("UD_SEND: imm_data 0x%08x without immediate" % be32(b, 16))
        if b[20:24] != b"\0" * 4:
            v.append("%s: reserved bytes 20-23 %s" % (name, b[20:24].hex()))
        return op, v

    src_tag, dst_tag = be32(b, 4), be32(b, 8)
    if src_tag == 0:
        v.append("%s: src_tag 0" % name)
    if dst_tag == 0 and op != HELLO:
        v.append("%s: dst_tag 0" % name)

    if op in DATA_OPS:
        d = parse_data(b)
        if not flags & F_HAS_IMM and d["imm"]:
            v.append("%s: imm_data 0x%08x without HAS_IMM" % (name, d["imm"]))
        if (d["dst_qpn"] | d["src_qpn"]) >> 24:
            v.append("%s: QPN high byte not 0" % name)
        if d["seg"] < 64 or d["offset"] % d["seg"]:
            v.append("%s: seg_bytes %d offset %d" % (name, d["seg"], d["offset"]))
        elif d["msg_len"] > MAX_MSG or \
                (d["offset"] >= d["msg_len"] if d["msg_len"] else d["offset"]):
            v.append("%s: offset %d of msg_len %d" % (name, d["offset"], d["msg_len"]))
        else:
            want = min(d["seg"], d["msg_len"] - d["offset"])
            if payload != want:
                v.append("%s: %d payload bytes, expected %d (msg_len %d offset %d "
                         "seg_bytes %d)" % (name, payload, want, d["msg_len"],
                                            d["offset"], d["seg"]))
        if op in (WRITE, READ_REQ):
            _, _, rdma_len, rdma_off, length = struct.unpack_from(">QIIII", b, 52)
            if rdma_len > MAX_RDMA or rdma_off + length > rdma_len:
                v.append("%s: rdma_offset %d length %d rdma_len %d" %
                         (name, rdma_off, length, rdma_len))
            if op == WRITE and length != d["msg_len"]:
                v.append("WRITE: length %d != msg_len %d" % (length, d["msg_len"]))
            if op == READ_REQ and (d["msg_len"] or length > MAX_MSG):
                v.append("READ_REQ: msg_len %d length %d" % (d["msg_len"], length))
        if op == READ_RESP:
            if b[57:60] != b"\0" * 3:
                v.append("READ_RESP: reserved bytes 57-59 %s" % b[57:60].hex())
            if d["qkey"]:
                v.append("READ_RESP: qkey 0x%08x" % d["qkey"])
        if blk and hlen >= want_hlen:
            # The ACK block (docs/protocol.md, "Headers"): an ACK's rules,
            # and only on a packet that stays within a full segment's size.
            a = HDR[op]
            if b[a] & ~F_ACK_ALL:
                v.append("%s: ACK block flags 0x%02x" % (name, b[a]))
            if b[a + 1:a + 4] != b"\0" * 3:
                v.append("%s: ACK block reserved bytes %d-%d %s" %
                         (name, a + 1, a + 3, b[a + 1:a + 4].hex()))
            if not b[a] & F_ACK_DUP and be32(b, a + 28):
                v.append("%s: ACK block dup_psn 0x%08x without DUP" %
                         (name, be32(b, a + 28)))
            if payload + ACK_BLOCK > d["seg"]:
                v.append("%s: ACK block with %d payload bytes, more than "
                         "seg_bytes %d less %d" % (name, payload, d["seg"], ACK_BLOCK))
        return op, v

    # ACK, NAK, HELLO: no payload.
    if payload:
        v.append("%s: %d bytes after the header" % (name, payload))
    if op == ACK:
        if not flags & F_ACK_DUP and be32(b, 36):
            v.append("ACK: dup_psn 0x%08x without DUP" % be32(b, 36))
    elif op == NAK:
        if b[22:24] != b"\0\0":
            v.append("NAK: reserved bytes 22-23 %s" % b[22:24].hex())
        if not 1 <= b[21] <= 6:
            v.append("NAK: reason %d" % b[21])
    return op, v


def checker_selftest():
    """check_packet() on good packets of every opcode (no violation) and on
    each of them spoilt in one field (a violation each): the sniffer's
    positive control.  Returns the number of cases that went wrong."""
    e1, e2 = 0x11223344, 0x55667788

    def dfl(op, flags, msg_len, payload, imm=0, qkey=0x11111111, ext=b"",
            ack=None):
        return data_hdr(op, flags, e1, e2, 7, 9, 9, 0x12, 0x34, qkey, imm,
                        msg_len, 0, 1024, ext=ext, ack=ack)

    ud = ud_hdr(UD_SEND, 0, 0x12, 0x34, 0x11111111) + b"x" * 10
    data = dfl(DATA, F_ACK_NOW, 10, 10) + b"d" * 10
    wr = dfl(WRITE, F_ACK_NOW, 64, 64) + rdma_fields(0x1000, 5, 64, 0, 64) + b"w" * 64
    rq = dfl(READ_REQ, F_ACK_NOW, 0, 0) + rdma_fields(0x1000, 5, 64, 0, 64)
    rs = dfl(READ_RESP, 0, 64, 64, qkey=0) + resp_fields(9, 0) + b"r" * 64
    ak = ack(e1, e2, 7)
    nk = nak(e1, e2, 7, 9, 0, 6)
    hl = hello(e1, 0)
    # With an ACK block (HAS_ACK): with DUP, without, a SACK, a full one.
    dab = dfl(DATA, F_ACK_NOW, 10, 10, ack=dict(ack_psn=5, sack=bytes(range(16)),
                                                delay_us=3, dup_psn=4)) + b"d" * 10
    wab = dfl(WRITE, F_ACK_NOW, 64, 64, ext=rdma_fields(0x1000, 5, 64, 0, 64),
              ack=dict(ack_psn=5)) + b"w" * 64
    rqab = dfl(READ_REQ, F_ACK_NOW, 0, 0, ext=rdma_fields(0x1000, 5, 64, 0, 64),
               ack=dict(ack_psn=5, sack=b"\xff" * 16))
    rsab = dfl(READ_RESP, 0, 64, 64, qkey=0, ext=resp_fields(9, 0),
               ack=dict(ack_psn=5, delay_us=500)) + b"r" * 64
    # The largest payload that leaves room for the block, and one more.
    room = dfl(DATA, 0, 992, 992, ack=dict(ack_psn=5)) + b"d" * 992
    no_room = dfl(DATA, 0, 993, 993, ack=dict(ack_psn=5)) + b"d" * 993

    def spoil(b, off, val):
        b = bytearray(b)
        b[off] = val
        return bytes(b)

    def longer(b, hlen):
        """The header one word longer, 4 (uninitialised) bytes inserted."""
        b = bytearray(b[:hlen] + b"\xaa" * 4 + b[hlen:])
        b[3] += 1
        return bytes(b)

    good = [ud, data, wr, rq, rs, ak, nk, hl, hello(e1, e2, 0x12345678, 0x9abcdef0),
            spoil(data, 2, F_HAS_IMM | F_ACK_NOW)[:36] + b"\0\0\0\1" + data[40:],
            spoil(ak, 2, F_ACK_DUP)[:36] + b"\0\0\0\7", spoil(ak, 2, F_ACK_DRAIN),
            dab, wab, rqab, rsab, room, spoil(dab, 52, F_ACK_ALL)]
    bad = [spoil(ud, 21, 1), spoil(ud, 19, 1), spoil(data, 2, 0x18),
           spoil(data, 39, 1), spoil(wr, 2, 0x88), spoil(wr, 39, 3),
           spoil(rq, 39, 3), spoil(rs, 57, 1), spoil(rs, 59, 0x80),
           spoil(rs, 35, 1), spoil(ak, 39, 1), spoil(ak, 2, 4),
           spoil(nk, 22, 1), spoil(nk, 23, 1), spoil(nk, 2, 1), spoil(hl, 2, 1),
           longer(data, 52), longer(wr, 76), longer(rs, 60), longer(ak, 40),
           longer(nk, 24), longer(hl, 20), longer(ud, 24),
           ak + b"\0", nk + b"\0", hl + b"\0", data + b"\0", rq + b"\0",
           hl[:12], spoil(hl, 0, 3),
           # HAS_ACK without its block, on an ACK, or with other bits 5-7.
           spoil(data, 2, 0x28), spoil(wr, 2, F_ACK_NOW | F_HAS_ACK),
           spoil(rs, 2, F_HAS_ACK), spoil(ak, 2, F_HAS_ACK),
           spoil(dab, 2, F_ACK_NOW | F_HAS_ACK | 0x40), spoil(dab, 3, 13),
           spoil(rqab, 3, 26), spoil(rsab, 3, 15),
           # The block: its flags, reserved bytes, dup_psn without DUP,
           # bytes after it, and no room for it in the segment.
           spoil(dab, 52, F_ACK_ALL | 4), spoil(wab, 76, 0x80),
           spoil(dab, 53, 1), spoil(rsab, 62, 1), spoil(rqab, 78, 0x80),
           spoil(wab, 76 + 31, 1), longer(dab, 84), longer(wab, 108),
           longer(rsab, 92), dab + b"\0", rqab + b"\0", no_room]
    wrong = 0
    for i, b in enumerate(good):
        op, v = check_packet(b)
        if v:
            wrong += 1
            print("# checker self-test: good packet %d (%s) flagged: %s" %
                  (i, OPNAMES.get(op), v), flush=True)
    for i, b in enumerate(bad):
        op, v = check_packet(b)
        if not v:
            wrong += 1
            print("# checker self-test: spoilt packet %d (%s) passed: %s" %
                  (i, OPNAMES.get(op), b.hex()), flush=True)
    print("# checker self-test: %d good and %d spoilt packets, %d judged wrong" %
          (len(good), len(bad), wrong), flush=True)
    return wrong


# --- the attacker ------------------------------------------------------------

class PortTap:
    """What DST sends to SRC:PORT, seen without binding PORT: softsrd holds
    it in every namespace (docs/protocol.md, "UDP port"), so the attacker
    sends from another port of SRC, which softsrd does not mind, and
    reads the answers off a raw UDP socket (CAP_NET_RAW), which the IP
    layer gives a copy of every UDP datagram for SRC before UDP takes it."""

    def __init__(self, src, dst, port):
        self.fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
        self.port = port
        self.peer = socket.inet_pton(self.fam, dst)
        self.s = socket.socket(self.fam, socket.SOCK_RAW, socket.IPPROTO_UDP)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.s.bind((src, 0) if self.fam == socket.AF_INET else (src, 0, 0, 0))
        self.s.setblocking(False)

    def recv(self, timeout):
        """The SRD payload of one datagram from DST to PORT, or None after
        timeout s."""
        end = time.monotonic() + max(timeout, 0)
        while True:
            r, _, _ = select.select([self.s], [], [], max(end - time.monotonic(), 0))
            if not r:
                return None
            try:
                b, a = self.s.recvfrom(65536)
            except BlockingIOError:
                continue
            if self.fam == socket.AF_INET:
                if len(b) < 20 or b[12:16] != self.peer:
                    continue
                b = b[(b[0] & 15) * 4:]
            elif socket.inet_pton(self.fam, a[0]) != self.peer:
                continue
            if len(b) >= 8 and struct.unpack(">H", b[2:4])[0] == self.port:
                return b[8:]

    def close(self):
        self.s.close()

class Forge:
    def __init__(self, src, dst, port, target):
        self.fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
        self.dst = (dst, port) if self.fam == socket.AF_INET else (dst, port, 0, 0)
        self.t = target
        self.sock = socket.socket(self.fam, socket.SOCK_DGRAM)
        self.sock.bind((src, 0) if self.fam == socket.AF_INET else (src, 0, 0, 0))
        self.sock.setblocking(False)
        self.rx = PortTap(src, dst, port)
        rnd = random.SystemRandom()
        self.rnd = rnd
        self.tag = rnd.randrange(1, 1 << 32)
        self.remote_tag = 0
        self.psn = rnd.randrange(1 << 32)
        self.msg_id = rnd.randrange(1 << 32)
        self.src_qpn = rnd.randrange(2, 1 << 24)
        self.violations = []
        self.foreign = 0
        self.mark = (0, 0, 0)
        self.counts = {}
        # READ_RESP reception: PSNs seen (for our ACKs), bytes by request.
        self.rcv_psns = set()
        self.rcv_largest = None
        self.resp = {}      # req_msg_id -> {offset: bytes}
        self.resp_n = 0
        self.reqs = {}      # READ_REQ msg_id -> ("control", MR offset) | ("guess", rkey)
        self.disclosed = 0

    def send(self, pkt):
        while True:
            try:
                self.sock.sendto(pkt, self.dst)
                return
            except BlockingIOError:
                select.select([], [self.sock], [], 0.1)

    def next_psn(self):
        p = self.psn
        self.psn = (self.psn + 1) & 0xffffffff
        return p

    def next_msg(self):
        m = self.msg_id
        self.msg_id = (self.msg_id + 1) & 0xffffffff
        return m

    def note(self, what):
        if len(self.violations) < 20:
            print("# violation: %s" % what, flush=True)
        self.violations.append(what)

    def recv_one(self, timeout):
        """One packet from the target, checked, or None after timeout s."""
        b = self.rx.recv(timeout)
        if b is None:
            return None
        op, v = check_packet(b)
        self.counts[op] = self.counts.get(op, 0) + 1
        if DEBUG:
            print("# %.6f rx %s flags %#x %s" % (time.monotonic(), OPNAMES.get(op, op),
                                               b[2], b[12:24].hex()), flush=True)
        for x in v:
            self.note("from the target: " + x)
        if v or op not in (ACK, NAK, HELLO, READ_RESP):
            return (op, b)
        src, dst = be32(b, 4), be32(b, 8)
        if op == HELLO:
            if dst == 0:        # asked for an answer
                self.send(hello(self.tag, src))
            # Since version 2, only a HELLO naming our tag tells us the
            # target's (docs/protocol.md, "Tags and peer restart").
            if dst == self.tag and src != self.remote_tag:
                self.remote_tag = src
            # Since version 4, the target believes a new tag of ours (we
            # are a restart of an earlier forger at this address) only
            # when we echo its challenge.
            if dst == self.tag and be32(b, 12):
                self.send(hello(self.tag, src, 0, be32(b, 12)))
            return (op, b)
        if src != self.remote_tag or dst != self.tag:
            self.foreign += 1
            return (None, b)
        if op == READ_RESP:
            self.on_read_resp(b)
        return (op, b)

    def on_read_resp(self, b):
        """A READ_RESP packet: sorted by the request it answers, checked
        against the MR's pattern when that request had the real rkey, and
        ACKed.  (A response may come late, or again after a retransmit
        timer of the target fired: the request decides, not the time.)"""
        d = parse_data(b)
        req_id, = struct.unpack_from(">I", b, 52)
        payload = b[b[3] * 4:]
        self.resp_n += 1
        if d["dst_qpn"] != self.src_qpn or d["src_qpn"] != self.t["qpn"]:
            self.note("READ_RESP: dst_qpn %#x src_qpn %#x, expected %#x %#x" %
                      (d["dst_qpn"], d["src_qpn"], self.src_qpn, self.t["qpn"]))
        req = self.reqs.get(req_id)
        if req is None:
            self.note("READ_RESP for request %#x, which was never made" % req_id)
        elif req[0] == "guess":
            self.disclosed += 1
            if self.disclosed <= 10:
                    print("# DISCLOSED: READ_RESP for request %#x (wrong rkey %#x): "
                      "offset %d, %d bytes %s" % (req_id, req[1], d["offset"],
                                                  len(payload), payload[:32].hex()),
                      flush=True)
        else:
            base = req[1] + d["offset"]
            if payload != bytes(pattern(base + i) for i in range(len(payload))):
                self.note("READ_RESP for request %#x: offset %d does not hold the "
                          "MR's bytes" % (req_id, d["offset"]))
        self.resp.setdefault(req_id, {})[d["offset"]] = payload
        # ACK it: the largest PSN and the 128 below it.
        psn = d["psn"]
        self.rcv_psns.add(psn)
        if self.rcv_largest is None or (psn - self.rcv_largest) & 0x80000000 == 0:
            self.rcv_largest = psn
        sack = bytearray(16)
        for i in range(128):
            if (self.rcv_largest - 1 - i) & 0xffffffff in self.rcv_psns:
                sack[i // 8] |= 1 << (i % 8)
        self.send(ack(self.tag, self.remote_tag, self.rcv_largest, bytes(sack)))
        if DEBUG:
            print("# %.6f tx ACK %#x sack %s" % (time.monotonic(), self.rcv_largest,
                                                bytes(sack).hex()), flush=True)

    def handshake(self, timeout=5.0):
        deadline = time.monotonic() + timeout
        tries = 0
        while not self.remote_tag and time.monotonic() < deadline:
            self.send(hello(self.tag, 0))
            tries += 1
            end = min(deadline, time.monotonic() + 0.5)
            while not self.remote_tag and time.monotonic() < end:
                self.recv_one(end - time.monotonic())
        print("# hello: our tag %#010x, the target's %#010x (%d HELLOs sent)" %
              (self.tag, self.remote_tag, tries), flush=True)
        return self.remote_tag != 0

    # One packet of an RDMA message.
    def rdma_pkt(self, op, rkey, remote_addr, rdma_len, rdma_offset, length,
                 payload=b"", msg_len=None, offset=0, seg=1024, flags=F_ACK_NOW,
                 msg_id=None, msg_base=None, psn=None, hdr_words=None,
                 dst_tag=None, truncate=None):
        if msg_len is None:
            msg_len = len(payload) if op == WRITE else 0
        msg_id = self.next_msg() if msg_id is None else msg_id
        msg_base = msg_id if msg_base is None else msg_base
        psn = self.next_psn() if psn is None else psn
        hdr = common(op, flags, HDR[op] if hdr_words is None else hdr_words * 4,
                     self.tag, self.remote_tag if dst_tag is None else dst_tag)
        hdr += data_fields(psn, msg_id, msg_base, self.t["qpn"], self.src_qpn,
                           self.t["qkey"], 0, msg_len, offset, seg, 0,
                           psn % 16)
        hdr += rdma_fields(remote_addr, rkey, rdma_len, rdma_offset, length)
        pkt = hdr + payload
        return (pkt if truncate is None else pkt[:truncate]), psn, msg_id

    # Send single-packet messages, at most `window` unanswered; return
    # {kind: count}: NAKs by reason, ACKed PSNs, unanswered.
    def pipeline(self, pkts, window=32, idle=3.0):
        out = {}            # psn -> msg_id
        res = {"acked": 0, "missing": 0, "naks": {}, "nak_unknown": 0}
        i = 0
        last = time.monotonic()
        while i < len(pkts) or out:
            while i < len(pkts) and len(out) < window:
                pkt, psn, msg_id = pkts[i]
                out[psn] = msg_id
                self.send(pkt)
                i += 1
            r = self.recv_one(0.2)
            if r is None:
                if time.monotonic() - last > idle:
                    res["missing"] += len(out)
                    print("# %d packets unanswered after %.1f s" % (len(out), idle),
                          flush=True)
                    out.clear()
                continue
            last = time.monotonic()
            op, b = r
            if op == NAK:
                psn, msg_id, reason = be32(b, 12), be32(b, 16), b[21]
                if out.get(psn) != msg_id:
                    res["nak_unknown"] += 1
                    continue
                del out[psn]
                res["naks"][reason] = res["naks"].get(reason, 0) + 1
            elif op is not None and ack_at(b) is not None:
                for psn in list(out):
                    if self.acked(b, psn):
                        del out[psn]
                        res["acked"] += 1
        return res

    @staticmethod
    def acked(b, psn):
        """Does b, an ACK or a packet with an ACK block, ACK psn?"""
        o = ack_at(b)
        if o is None:
            return False
        ack_psn = be32(b, o)
        if psn == ack_psn:
            return True
        i = (ack_psn - 1 - psn) & 0xffffffff
        return i < 128 and b[o + 8 + i // 8] >> (i % 8) & 1

    def wrong_rkeys(self, n):
        """n rkeys that are not the MR's: its lkey, neighbours and bit flips
        of the rkey, 0 and ~0, then random ones."""
        rk = self.t["rkey"]
        cand = []
        if "lkey" in self.t:
            cand.append(self.t["lkey"])
        cand += [rk ^ 1, (rk + 1) & 0xffffffff, (rk - 1) & 0xffffffff,
                 rk ^ 0x80000000, rk ^ 0xff, rk ^ 0xff00, rk ^ 0xffff0000,
                 0, 0xffffffff]
        keys, seen = [], {rk}
        for k in cand:
            if k not in seen and len(keys) < n:
                keys.append(k)
                seen.add(k)
        while len(keys) < n:
            k = self.rnd.randrange(1 << 32)
            if k != rk:
                keys.append(k)
        return keys

    def begin(self):
        """A new command: its own count of violations and READ_RESPs."""
        self.mark = (len(self.violations), self.foreign, self.disclosed)
        self.resp, self.resp_n = {}, 0

    def finish(self, mode, ok, **kv):
        bad = len(self.violations) - self.mark[0]
        if bad:
            ok = False
        kv["violations"] = bad
        kv["foreign"] = self.foreign - self.mark[1]
        print("RESULT mode=%s ok=%d %s" % (mode, 1 if ok else 0,
              " ".join("%s=%s" % (k, v) for k, v in kv.items())), flush=True)
        return 0 if ok else 1


def mode_control(f, off, length, seg):
    msg_id = f.next_msg()
    psns = []
    for o in range(0, length, seg):
        part = min(seg, length - o)
        flags = F_ACK_NOW if o + part >= length else 0
        pkt, psn, _ = f.rdma_pkt(WRITE, f.t["rkey"], f.t["addr"] + off, length, 0,
                                 length, bytes([FILL]) * part, msg_len=length,
                                 offset=o, seg=seg, flags=flags, msg_id=msg_id)
        psns.append(psn)
        f.send(pkt)
    pending, naks, deadline = set(psns), 0, time.monotonic() + 5
    while pending and time.monotonic() < deadline:
        r = f.recv_one(deadline - time.monotonic())
        if r is None:
            break
        op, b = r
        if op is not None and ack_at(b) is not None:
            pending = {p for p in pending if not f.acked(b, p)}
        elif op == NAK:
            naks += 1
            print("# NAK psn %#x msg %#x reason %d" % (be32(b, 12), be32(b, 16), b[21]))
    return f.finish("control", not pending and not naks, packets=len(psns),
                    acked=len(psns) - len(pending), naks=naks)


def mode_guess(f, n, read):
    op = READ_REQ if read else WRITE
    pkts = []
    for rk in f.wrong_rkeys(n):
        if read:
            pkts.append(f.rdma_pkt(READ_REQ, rk, f.t["addr"], 64, 0, 64))
            f.reqs[pkts[-1][2]] = ("guess", rk)
        else:
            pkts.append(f.rdma_pkt(WRITE, rk, f.t["addr"], 64, 0, 64,
                                   bytes([FILL]) * 64))
    t0 = time.monotonic()
    res = f.pipeline(pkts)
    # Anything late (a READ_RESP, above all) shows up here.
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        f.recv_one(end - time.monotonic())
    secs = time.monotonic() - t0
    nak6 = res["naks"].get(NAK_REMOTE_ACCESS, 0)
    other = sum(c for r, c in res["naks"].items() if r != NAK_REMOTE_ACCESS)
    disclosed = f.disclosed - f.mark[2]
    ok = nak6 == n and not other and not res["acked"] and not disclosed and \
        not res["missing"] and not res["nak_unknown"]
    return f.finish("read-guess" if read else "guess", ok, sent=n, nak6=nak6,
                    other_naks=other, acks=res["acked"], read_resp=disclosed,
                    late_resp=f.resp_n - disclosed,
                    missing=res["missing"], nak_unknown=res["nak_unknown"],
                    secs="%.1f" % secs, op=OPNAMES[op])


def mode_read_control(f, off, length):
    pkt, psn, msg_id = f.rdma_pkt(READ_REQ, f.t["rkey"], f.t["addr"] + off,
                                  length, 0, length)
    f.reqs[msg_id] = ("control", off)
    f.send(pkt)
    got, req_acked, naks, deadline = 0, False, 0, time.monotonic() + 5
    while time.monotonic() < deadline:
        parts = f.resp.get(msg_id, {})
        got = sum(len(p) for p in parts.values())
        if got >= length and req_acked:
            break
        r = f.recv_one(deadline - time.monotonic())
        if r is None:
            break
        op, b = r
        # The request's ACK may ride on the response (its ACK block).
        if op is not None and f.acked(b, psn):
            req_acked = True
        elif op == NAK:
            naks += 1
            print("# NAK psn %#x msg %#x reason %d" % (be32(b, 12), be32(b, 16), b[21]))
    data = b"".join(p for _, p in sorted(f.resp.get(msg_id, {}).items()))
    want = bytes(pattern(off + i) for i in range(length))
    bad = next((i for i in range(min(len(data), length)) if data[i] != want[i]), None)
    if bad is not None:
        print("# READ_RESP byte %d is %#04x, expected %#04x" % (bad, data[bad], want[bad]))
    ok = len(data) == length and bad is None and not naks and req_acked
    # Retransmissions the target may still send (its timer can fire before
    # a slow ACK of ours arrives) are answered here.
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        f.recv_one(end - time.monotonic())
    return f.finish("read-control", ok, bytes=len(data), expected=length,
                    req_acked=int(req_acked), naks=naks, resp_pkts=f.resp_n)


def mode_bad_headers(f):
    """Malformed RDMA packets, all with the real rkey and inside the MR: if
    one were accepted, 0x5a bytes would land (the caller checks the MR)."""
    rk, a, p64 = f.t["rkey"], f.t["addr"], bytes([FILL]) * 64
    W, R = WRITE, READ_REQ
    cases = [
        ("WRITE of 52 bytes, hdr_len_words 13 (honest, below 76)",
         dict(op=W, payload=b"", msg_len=0, hdr_words=13, truncate=52)),
        ("WRITE of 72 bytes, hdr_len_words 18 (honest, below 76)",
         dict(op=W, payload=b"", msg_len=0, hdr_words=18, truncate=72)),
        ("WRITE of 52 bytes, hdr_len_words 19 (lying)",
         dict(op=W, payload=b"", msg_len=0, truncate=52)),
        ("WRITE of 75 bytes, hdr_len_words 19 (lying)",
         dict(op=W, payload=b"", msg_len=0, truncate=75)),
        ("WRITE of 76+64 bytes, hdr_len_words 18",
         dict(op=W, payload=p64, hdr_words=18)),
        ("WRITE of 76+64 bytes, hdr_len_words 255 (past the datagram)",
         dict(op=W, payload=p64, hdr_words=255)),
        ("WRITE of 76+64 bytes, hdr_len_words 36 (4 bytes past the datagram)",
         dict(op=W, payload=p64, hdr_words=36)),
        ("READ_REQ of 60 bytes, hdr_len_words 15 (honest)",
         dict(op=R, hdr_words=15, truncate=60)),
        ("READ_REQ of 60 bytes, hdr_len_words 19 (lying)",
         dict(op=R, truncate=60)),
        ("READ_RESP of 56 bytes, hdr_len_words 15 (lying)", "resp-short"),
        ("READ_RESP of 52 bytes, hdr_len_words 13 (honest)", "resp-13"),
        ("WRITE rdma_offset 32 + length 64 > rdma_len 64",
         dict(op=W, payload=p64, rdma_len=64, rdma_offset=32)),
        ("WRITE rdma_offset + length wraps 32 bits",
         dict(op=W, payload=p64, rdma_len=64, rdma_offset=0xffffffc0)),
        ("WRITE rdma_len 2^30 + 1",
         dict(op=W, payload=p64, rdma_len=MAX_RDMA + 1)),
        ("WRITE rdma_len 0xffffffff",
         dict(op=W, payload=p64, rdma_len=0xffffffff)),
        ("WRITE length 32 != msg_len 64",
         dict(op=W, payload=p64, length=32)),
        ("WRITE length 128 != msg_len 64",
         dict(op=W, payload=p64, length=128, rdma_len=128)),
        ("WRITE length 0 with msg_len 64",
         dict(op=W, payload=p64, length=0)),
        ("READ_REQ msg_len 64 (with 64 payload bytes)",
         dict(op=R, payload=p64, msg_len=64)),
        ("READ_REQ msg_len 64 (no payload)",
         dict(op=R, msg_len=64)),
        ("READ_REQ length 64 MiB + 1",
         dict(op=R, rdma_len=MAX_RDMA, length=MAX_MSG + 1)),
        ("READ_REQ rdma_offset 1 + length 64 > rdma_len 64",
         dict(op=R, rdma_len=64, rdma_offset=1)),
        ("READ_REQ rdma_offset + length wraps 32 bits",
         dict(op=R, rdma_len=64, rdma_offset=0xfffffff0, length=0x20)),
        ("WRITE with dst_tag 0",
         dict(op=W, payload=p64, dst_tag=0)),
        ("WRITE with 63 payload bytes of msg_len 64",
         dict(op=W, payload=p64[:63], msg_len=64)),
        ("WRITE seg_bytes 32",
         dict(op=W, payload=p64[:32], msg_len=64, seg=32)),
        ("WRITE with HAS_ACK, hdr_len_words 19 (no ACK block)",
         dict(op=W, payload=p64, flags=F_ACK_NOW | F_HAS_ACK)),
        ("WRITE with HAS_ACK, hdr_len_words 26 (an ACK block of 28 bytes)",
         dict(op=W, payload=bytes(28) + p64, msg_len=64, hdr_words=26,
              flags=F_ACK_NOW | F_HAS_ACK)),
    ]
    sent = 0
    for name, c in cases:
        if isinstance(c, str):
            # READ_RESP: the DATA header and req_msg_id, cut short.
            psn = f.next_psn()
            hdr = common(READ_RESP, 0, 60 if c == "resp-short" else 52, f.tag,
                         f.remote_tag)
            hdr += data_fields(psn, f.msg_id, f.msg_id, f.t["qpn"], f.src_qpn, 0,
                               0, 0, 0, 1024)
            pkt = (hdr + struct.pack(">I", f.msg_id))[:56 if c == "resp-short" else 52]
        else:
            c = dict(c)
            op = c.pop("op")
            payload = c.pop("payload", b"")
            length = c.pop("length", 64)
            rdma_len = c.pop("rdma_len", 64)
            rdma_offset = c.pop("rdma_offset", 0)
            pkt, _, _ = f.rdma_pkt(op, rk, a, rdma_len, rdma_offset, length,
                                   payload, **c)
        f.send(pkt)
        sent += 1
        print("# sent: %s (%d bytes)" % (name, len(pkt)), flush=True)
        time.sleep(0.01)
    replies = 0
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        r = f.recv_one(end - time.monotonic())
        if r is not None:
            replies += 1
            print("# reply: %s" % OPNAMES.get(r[0], r[0]))
    return f.finish("bad-headers", replies == 0, sent=sent, replies=replies)


# --- the sniffer -------------------------------------------------------------

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6


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


def mode_sniff(iface, seconds, port, out_only, expect_ops):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    try:
        s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)   # SO_RCVBUFFORCE
    except OSError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.bind((iface, 0))
    if checker_selftest():
        print("RESULT mode=sniff ok=0 error=checker-self-test")
        return 1
    stop = [False]

    def on_signal(sig, frm):
        stop[0] = True
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    print("sniff: listening on %s" % iface, flush=True)
    counts, violations, total, naks = {}, [], 0, {}
    deadline = time.monotonic() + seconds
    while not stop[0] and time.monotonic() < deadline:
        try:
            r, _, _ = select.select([s], [], [], 0.1)
        except InterruptedError:
            continue
        if not r:
            continue
        while True:
            try:
                fr, addr = s.recvfrom(65536, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                break
            if out_only and addr[2] != PACKET_OUTGOING:
                continue
            u = udp_of_frame(fr)
            if u is None or port not in (u[0], u[1]):
                continue
            total += 1
            op, v = check_packet(u[2])
            key = OPNAMES.get(op, str(op))
            counts[key] = counts.get(key, 0) + 1
            if op == NAK and len(u[2]) >= 24:
                naks[u[2][21]] = naks.get(u[2][21], 0) + 1
            for x in v:
                if len(violations) < 20:
                    print("# violation (%s, %d bytes, %s): %s" %
                          ("out" if addr[2] == PACKET_OUTGOING else "in",
                           len(u[2]), u[2][:80].hex(), x), flush=True)
                violations.append(x)
    st = s.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
    seen, drops = struct.unpack("II", st)
    missing = [OPNAMES.get(o, str(o)) for o in expect_ops
               if OPNAMES.get(o, str(o)) not in counts]
    if missing:
        print("# never seen: %s" % " ".join(missing))
    ok = total > 0 and not violations and not missing
    if naks:
        print("# NAKs by reason: %s" % " ".join(
            "%s=%d" % (NAK_NAMES.get(r, r), c) for r, c in sorted(naks.items())))
    print("RESULT mode=sniff ok=%d packets=%d violations=%d socket_drops=%d %s" %
          (1 if ok else 0, total, len(violations), drops,
           " ".join("%s=%d" % kv for kv in sorted(counts.items()))), flush=True)
    return 0 if ok else 1


# --- main ---------------------------------------------------------------------

def parse_target(line):
    t = {}
    for tok in line.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            t[k] = int(v, 0)
    for k in ("qpn", "qkey", "addr", "rkey"):
        if k not in t:
            raise SystemExit("srd_forge: --target lacks %s=" % k)
    return t


# --- blind attacks -----------------------------------------------------------

def blind_socket(src, port=0):
    fam = socket.AF_INET6 if ":" in src else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((src, port))
    return s


def data_pkt(src_tag, dst_tag, psn, msg_id, msg_base, dst_qpn, src_qpn):
    return common(DATA, F_ACK_NOW, HDR[DATA], src_tag, dst_tag) + \
        data_fields(psn, msg_id, msg_base, dst_qpn, src_qpn, 0, 0, 0, 0, 64)


def mode_blind(mode, args, src, target, port):
    rnd = random.SystemRandom()
    r32 = lambda: rnd.randrange(1, 1 << 32)
    sent = 0
    if mode == "hello-flood":
        n, secs = int(args[0]), float(args[1])
        s = blind_socket(src)
        for i in range(n):
            s.sendto(hello(r32(), 0 if i % 2 == 0 else r32()), (target, port))
            sent += 1
            time.sleep(secs / max(n, 1))
    elif mode == "claim":
        n, tag = int(args[0]), int(args[1], 0)
        s = blind_socket(src)
        for i in range(n):
            s.sendto(hello(r32(), tag, r32(), r32()), (target, port))
            sent += 1
    elif mode == "slide":
        n, tag = int(args[0]), int(args[1], 0)
        s = blind_socket(src)
        for i in range(n):
            base = ((1 << 30) + i * ((1 << 32) // max(n, 1))) & 0xffffffff
            s.sendto(data_pkt(r32(), tag, r32(), base, base, rnd.randrange(1, 1 << 24),
                              rnd.randrange(1, 1 << 24)), (target, port))
            sent += 1
    elif mode == "sources":
        import ipaddress
        n, prefix = int(args[0]), ipaddress.IPv6Address(args[1])
        for i in range(1, n + 1):
            s = blind_socket(str(prefix + i))
            s.sendto(hello(r32(), 0), (target, port))
            s.sendto(data_pkt(r32(), r32(), r32(), 5, 5, 2, 2), (target, port))
            s.close()
            sent += 2
    elif mode == "peers":
        import ipaddress
        n, prefix = int(args[0]), ipaddress.IPv6Address(args[1])
        done = 0
        for i in range(1, n + 1):
            s = blind_socket(str(prefix + i))
            tap = PortTap(str(prefix + i), target, port)
            me = r32()
            s.sendto(hello(me, 0), (target, port))
            tag = 0
            end = time.monotonic() + 2.0
            while not tag and time.monotonic() < end:
                b = tap.recv(end - time.monotonic())
                if b is not None and len(b) >= 12 and b[1] == HELLO and be32(b, 8) == me:
                    tag = be32(b, 4)
            tap.close()
            if tag:
                s.sendto(data_pkt(me, tag, r32(), 0, 0, rnd.randrange(1, 1 << 24), 1),
                         (target, port))
                done += 1
            s.close()
            sent += 2 if tag else 1
        print("# peers: %d of %d handshakes answered" % (done, n), flush=True)
        if done != n:
            print("RESULT mode=peers ok=0 sent=%d handshakes=%d" % (sent, done), flush=True)
            return 1
    elif mode == "zero-csum":
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
        s.bind((src, 0))
        body = hello(r32(), 0)
        s.sendto(struct.pack(">HHHH", 40000 + rnd.randrange(1000), port,
                             8 + len(body), 0) + body, (target, 0))
        sent = 1
    print("RESULT mode=%s ok=1 sent=%d" % (mode, sent), flush=True)
    return 0


# --- the Wireshark dissector, checked ----------------------------------------

def ack_fields(b, o):
    """An ACK's fields as tshark shows them, from offset o of b (12 in an
    ACK, 4 into an ACK block): the SACK bitmap as the PSNs it names."""
    ack_psn = be32(b, o)
    sack = [(ack_psn - 1 - i) & 0xffffffff for i in range(128)
            if b[o + 8 + i // 8] & (1 << (i % 8))]
    return {"softsrd.ack_psn": ack_psn, "softsrd.ack_delay_us": be32(b, o + 4),
            "softsrd.dup_psn": be32(b, o + 24), "softsrd.sack_psn": sack,
            "softsrd.sack_count": len(sack)}


# tshark field -> the value in a header b, per opcode class.
def expected_fields(b):
    op = b[1]
    e = {"softsrd.version": b[0], "softsrd.opcode": op, "softsrd.flags": b[2],
         "softsrd.hdr_len_words": b[3]}
    if op in (UD_SEND, UD_SEND_WITH_IMM):
        e.update({"softsrd.ud.dst_qpn": be32(b, 4), "softsrd.ud.src_qpn": be32(b, 8),
                  "softsrd.ud.qkey": be32(b, 12), "softsrd.ud.imm_data": be32(b, 16),
                  "softsrd.flags.solicited": b[2] & 1})
        return e
    e.update({"softsrd.src_tag": be32(b, 4), "softsrd.dst_tag": be32(b, 8)})
    if op in DATA_OPS:
        d = parse_data(b)
        e.update({"softsrd.psn": d["psn"], "softsrd.msg_id": d["msg_id"],
                  "softsrd.msg_base": d["msg_base"], "softsrd.dst_qpn": d["dst_qpn"],
                  "softsrd.src_qpn": d["src_qpn"], "softsrd.qkey": d["qkey"],
                  "softsrd.imm_data": d["imm"], "softsrd.msg_len": d["msg_len"],
                  "softsrd.offset": d["offset"], "softsrd.seg_bytes": d["seg"],
                  "softsrd.attempt": d["attempt"], "softsrd.path": d["path"],
                  "softsrd.flags.solicited": b[2] & 1,
                  "softsrd.flags.has_imm": (b[2] >> 1) & 1,
                  "softsrd.flags.retransmit": (b[2] >> 2) & 1,
                  "softsrd.flags.ack_now": (b[2] >> 3) & 1,
                  "softsrd.flags.has_ack": (b[2] >> 4) & 1})
        if op in (WRITE, READ_REQ):
            ra, rk, rl, ro, ln = struct.unpack_from(">QIIII", b, 52)
            e.update({"softsrd.remote_addr": ra, "softsrd.rkey": rk,
                      "softsrd.rdma_len": rl, "softsrd.rdma_offset": ro,
                      "softsrd.length": ln})
        if op == READ_RESP:
            e.update({"softsrd.req_msg_id": be32(b, 52), "softsrd.req_attempt": b[56]})
        o = ack_at(b)
        if o is not None:
            # The ACK block: its flags (DUP, DRAIN), then an ACK's fields.
            e.update(ack_fields(b, o))
            e.update({"softsrd.ack_flags": b[o - 4], "softsrd.flags.dup": b[o - 4] & 1,
                      "softsrd.flags.drain": (b[o - 4] >> 1) & 1})
    elif op == ACK:
        e.update(ack_fields(b, 12))
        e["softsrd.flags.dup"] = b[2] & 1
        e["softsrd.flags.drain"] = (b[2] >> 1) & 1
    elif op == NAK:
        e.update({"softsrd.psn": be32(b, 12), "softsrd.msg_id": be32(b, 16),
                  "softsrd.attempt": b[20], "softsrd.nak_reason": b[21]})
    elif op == HELLO:
        e.update({"softsrd.challenge": be32(b, 12), "softsrd.echo": be32(b, 16)})
    return e


DISSECT_FIELDS = sorted({k for b in (
    bytes([VERSION, 1, 0, 6]) + bytes(20), bytes([VERSION, 20, 0, 19]) + bytes(72),
    bytes([VERSION, 22, F_HAS_ACK, 23]) + bytes(88),
    bytes([VERSION, 17, 0, 10]) + bytes(36),
    bytes([VERSION, 18, 0, 6]) + bytes(20),
    bytes([VERSION, 19, 0, 5]) + bytes(16)) for k in expected_fields(b)})


def pcap_frames(path):
    """(frame number, src IP text, Ethernet frame) of a pcap file."""
    with open(path, "rb") as fh:
        data = fh.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d):
        raise SystemExit("srd_forge: %s is not a pcap file (pcapng?)" % path)
    if struct.unpack_from("<I", data, 20)[0] != 1:
        raise SystemExit("srd_forge: %s is not an Ethernet capture" % path)
    o, n = 24, 0
    while o + 16 <= len(data):
        incl = struct.unpack_from("<I", data, o + 8)[0]
        fr = data[o + 16:o + 16 + incl]
        o += 16 + incl
        n += 1
        src = None
        et = struct.unpack_from(">H", fr, 12)[0] if len(fr) >= 14 else 0
        if et == 0x0800 and len(fr) >= 34:
            src = socket.inet_ntop(socket.AF_INET, fr[26:30])
        elif et == 0x86dd and len(fr) >= 54:
            src = socket.inet_ntop(socket.AF_INET6, fr[22:38])
        yield n, src, fr


def mode_dissect(pcap, lua, local, port):
    import subprocess
    cmd = ["tshark", "-n", "-X", "lua_script:" + lua, "-r", pcap, "-Y", "softsrd",
           "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a",
           "-e", "frame.number"]
    for k in DISSECT_FIELDS:
        cmd += ["-e", k]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        print(out.stderr)
        print("RESULT mode=dissect ok=0 error=tshark")
        return 1
    got = {}
    for line in out.stdout.splitlines():
        v = line.split("\t")
        got[int(v[0])] = dict(zip(DISSECT_FIELDS, v[1:]))
    counts, bad, checked = {}, [], 0
    for n, src, fr in pcap_frames(pcap):
        u = udp_of_frame(fr)
        if u is None or port not in (u[0], u[1]) or len(u[2]) < 4:
            continue
        b = u[2]
        if b[1] not in HDR or len(b) < HDR[b[1]]:
            continue
        d = "out" if src == local else "in"
        key = "%s_%s" % (d, OPNAMES[b[1]])
        if b[1] == NAK:
            key += "_" + NAK_NAMES.get(b[21], str(b[21]))
        counts[key] = counts.get(key, 0) + 1
        if b[1] in DATA_OPS and b[2] & F_RETRANSMIT:
            counts[d + "_retransmit"] = counts.get(d + "_retransmit", 0) + 1
        if b[1] in DATA_OPS and b[2] & F_HAS_ACK:
            counts[d + "_ack_block"] = counts.get(d + "_ack_block", 0) + 1
        if b[1] == WRITE and b[2] & F_HAS_IMM:
            counts[d + "_WRITE_with_imm"] = counts.get(d + "_WRITE_with_imm", 0) + 1
        g = got.get(n)
        if g is None:
            bad.append("frame %d (%s): not decoded" % (n, OPNAMES[b[1]]))
            continue
        checked += 1
        for k, want in expected_fields(b).items():
            text = g.get(k, "")
            vals = [int(x, 0) for x in text.split(",") if x != ""]
            if isinstance(want, list):
                if vals != want:
                    bad.append("frame %d %s: %s is %s, expected %s" %
                               (n, OPNAMES[b[1]], k, vals, want))
            elif vals != [want]:
                bad.append("frame %d %s: %s is %r, expected %d" %
                           (n, OPNAMES[b[1]], k, text, want))
        # Nothing of another opcode decoded.
        for k in DISSECT_FIELDS:
            if k not in expected_fields(b) and g.get(k, ""):
                bad.append("frame %d %s: %s=%r decoded" % (n, OPNAMES[b[1]], k, g[k]))
    for x in bad[:20]:
        print("# " + x)
    ok = checked > 0 and not bad
    print("RESULT mode=dissect ok=%d packets=%d mismatches=%d %s" %
          (1 if ok else 0, checked, len(bad),
           " ".join("%s=%d" % kv for kv in sorted(counts.items()))), flush=True)
    return 0 if ok else 1


def mode_check_vectors(lines):
    """The engine's own encoding of one header per opcode, and of a DATA
    with an ACK block (engine/tests/wire_vectors), a line each: this file
    must encode the same fields to the same bytes, decode the engine's
    bytes to the same fields, and find nothing in them a correct sender
    would not send."""
    seen, bad, blocks = set(), 0, 0
    for line in lines:
        words = line.split()
        if not words:
            continue
        op = int(words[0])
        kv = dict(w.split("=", 1) for w in words[1:])
        hdr = bytes.fromhex(kv.pop("hdr"))
        payload = int(kv.pop("payload"))
        n = {k: int(v) for k, v in kv.items() if k != "sack"}
        src, dst = n.get("src_tag"), n.get("dst_tag")
        if op in (UD_SEND, UD_SEND_WITH_IMM):
            mine = ud_hdr(op, n["flags"], n["dst_qpn"], n["src_qpn"], n["qkey"],
                          n["imm"])
        elif op in DATA_OPS:
            ext, blk = b"", None
            if op in (WRITE, READ_REQ):
                ext = rdma_fields(n["remote_addr"], n["rkey"], n["rdma_len"],
                                  n["rdma_offset"], n["length"])
            if op == READ_RESP:
                ext = resp_fields(n["req_msg_id"], n["req_attempt"])
            if "ack_psn" in n:
                # The ACK block's fields follow the data's.
                blk = dict(ack_psn=n["ack_psn"], sack=bytes.fromhex(kv["sack"]),
                           delay_us=n["ack_delay_us"],
                           dup_psn=n["dup_psn"] if n["ack_flags"] & F_ACK_DUP
                           else None)
                blocks += 1
            mine = data_hdr(op, n["flags"], src, dst, n["psn"], n["msg_id"],
                            n["msg_base"], n["dst_qpn"], n["src_qpn"], n["qkey"],
                            n["imm"], n["msg_len"], n["offset"], n["seg_bytes"],
                            n["attempt"], n["path"], ext=ext, ack=blk)
        elif op == ACK:
            mine = ack(src, dst, n["ack_psn"], bytes.fromhex(kv["sack"]),
                       n["ack_delay_us"],
                       n["dup_psn"] if n["flags"] & F_ACK_DUP else None)
        elif op == NAK:
            mine = nak(src, dst, n["psn"], n["msg_id"], n["attempt"], n["nak_reason"])
        elif op == HELLO:
            mine = hello(src, dst, n["challenge"], n["echo"])
        else:
            mine = b""
        problems = []
        if mine != hdr:
            problems.append("encoded %s, the engine %s" % (mine.hex(), hdr.hex()))
        # Decoding: the engine's fields, as the dissector check reads them.
        e = expected_fields(hdr)
        for k, v in n.items():
            key = "softsrd." + ("imm_data" if k == "imm" else k)
            if op in (UD_SEND, UD_SEND_WITH_IMM) and k != "flags":
                key = "softsrd.ud." + ("imm_data" if k == "imm" else k)
            if key in e and e[key] != v:
                problems.append("%s decoded %s, the engine wrote %s" % (k, e[key], v))
            elif key not in e:
                problems.append("%s: not decoded" % k)
        if "sack" in kv:
            # The bitmap, as the dissector check reads it (the PSNs it
            # names below the decoded ack_psn), back to bytes.
            got = bytearray(16)
            for psn in e.get("softsrd.sack_psn", []):
                i = (e["softsrd.ack_psn"] - 1 - psn) & 0xffffffff
                got[i // 8] |= 1 << (i % 8)
            if got.hex() != kv["sack"].lower():
                problems.append("sack decoded %s, the engine wrote %s" %
                                (got.hex(), kv["sack"]))
        _, v = check_packet(hdr + bytes(payload))
        problems += v
        seen.add(op)
        for p in problems:
            print("# %s: %s" % (OPNAMES.get(op, op), p), flush=True)
            bad += 1
    missing = set(OPNAMES) - seen
    for op in sorted(missing):
        print("# no vector for %s" % OPNAMES[op], flush=True)
    if not blocks:
        print("# no vector with an ACK block", flush=True)
    ok = not bad and not missing and blocks > 0
    print("RESULT mode=check-vectors ok=%d opcodes=%d problems=%d ack_blocks=%d" %
          (int(ok), len(seen), bad, blocks), flush=True)
    return 0 if ok else 1


def usage():
    print(__doc__, file=sys.stderr)
    sys.exit(2)


def run_command(forges, make, words, seg):
    """One attack command (words: [-6] MODE ARGS...) on the forge of its
    family, made and introduced (HELLO) on first use; its exit status."""
    fam = 4
    if words and words[0] == "-6":
        fam, words = 6, words[1:]
    want = {"hello": 0, "control": 2, "guess": 1, "read-control": 2,
            "read-guess": 1, "bad-headers": 0}
    if not words or words[0] not in want or len(words) - 1 != want[words[0]]:
        print("RESULT mode=%s ok=0 error=bad-command" %
              (words[0] if words else "none"), flush=True)
        return 2
    mode, n = words[0], [int(x, 0) for x in words[1:]]
    f = forges.get(fam)
    if f is None:
        f = make(fam)
        if f is None:
            print("RESULT mode=%s ok=0 error=no-address-for-IPv%d" % (mode, fam),
                  flush=True)
            return 2
        forges[fam] = f
        if not f.handshake():
            del forges[fam]
            return f.finish(mode, False, error="no-HELLO-from-the-target")
    f.begin()
    if mode == "hello":
        return f.finish("hello", True, tag="%#x" % f.tag,
                        remote_tag="%#x" % f.remote_tag)
    if mode == "control":
        return mode_control(f, n[0], n[1], seg)
    if mode == "guess":
        return mode_guess(f, n[0], False)
    if mode == "read-guess":
        return mode_guess(f, n[0], True)
    if mode == "read-control":
        return mode_read_control(f, n[0], n[1])
    return mode_bad_headers(f)


def main(argv):
    opts = {"--port": "4792", "--seg": "1024"}
    args, flags = [], set()
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--src", "--src6", "--dst6", "--port", "--target", "--seg",
                 "--expect-ops", "--local"):
            if i + 1 >= len(argv):
                usage()
            opts[a] = argv[i + 1]
            i += 2
        elif a in ("--out-only",):
            flags.add(a)
            i += 1
        elif a.startswith("--") or (a == "-6" and not args):
            usage()
        else:
            args.append(a)
            i += 1
    port = int(opts["--port"])
    if args == ["check-vectors"]:
        return mode_check_vectors(sys.stdin)
    if args and args[0] == "dissect":
        if len(args) != 3 or "--local" not in opts:
            usage()
        return mode_dissect(args[1], args[2], opts["--local"], port)
    if args and args[0] == "sniff":
        if len(args) != 3:
            usage()
        ops = [int(x) for x in opts.get("--expect-ops", "").split(",") if x]
        return mode_sniff(args[1], float(args[2]), port, "--out-only" in flags, ops)
    if len(args) < 2 or "--src" not in opts:
        usage()
    blind = {"hello-flood": 2, "claim": 2, "slide": 2, "sources": 2, "peers": 2, "zero-csum": 0}
    if args[1] in blind:
        if len(args) - 2 != blind[args[1]]:
            usage()
        return mode_blind(args[1], args[2:], opts["--src"], args[0], port)
    if args[1] != "serve" and "--target" not in opts and args[1] != "hello":
        usage()
    t = parse_target(opts["--target"]) if "--target" in opts else \
        {"qpn": 0, "qkey": 0, "addr": 0, "rkey": 0}
    seg = int(opts["--seg"])

    def make(fam):
        if fam == 4:
            return Forge(opts["--src"], args[0], port, t)
        if "--src6" in opts and "--dst6" in opts:
            return Forge(opts["--src6"], opts["--dst6"], port, t)
        return None

    forges = {}
    if args[1] != "serve":
        return run_command(forges, make, args[1:], seg)
    if len(args) != 2:
        usage()
    # serve: one command a line on stdin, each answered by its RESULT line.
    ok = checker_selftest() == 0
    print("RESULT mode=serve ok=%d" % ok, flush=True)
    if not ok:
        return 1
    rc = 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words == ["quit"]:
            break
        if words[0] == "target":
            # The target's line, for the forges made from now on.
            t.clear()
            t.update(parse_target(" ".join(words[1:])))
            print("RESULT mode=target ok=1", flush=True)
            continue
        rc |= run_command(forges, make, words, seg)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
