# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_check: the rules a correct sender of SRD follows (check_packet()),
which the sniffer, the attacker and check-vectors hold every packet to,
and the checker's own positive control (checker_selftest()).
"""

import struct

from srd_wire import (ACK, ACK_BLOCK, DATA, DATA_OPS, F_ACK_ALL, F_ACK_DRAIN,
                      F_ACK_DUP, F_ACK_NOW, F_HAS_ACK, F_HAS_IMM, FLAGS, HDR,
                      HELLO, MAX_MSG, MAX_RDMA, NAK, OPNAMES, READ_REQ,
                      READ_RESP, UD_SEND, UD_SEND_WITH_IMM, VERSION, WRITE,
                      ack, be32, data_hdr, hello, nak, parse_data,
                      rdma_fields, resp_fields, ud_hdr)


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
