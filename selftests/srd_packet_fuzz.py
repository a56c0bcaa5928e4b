#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_packet_fuzz: a tag-aware packet fuzzer for SRD conversations.

It watches the SRD packets that leave interface IFACE (an AF_PACKET socket,
so it needs CAP_NET_RAW) and sends, out of the same interface, mutants of
them: the tags they carry are the real ones, so the mutants get past the
receiver's tag check (docs/protocol.md, "Tags and peer restart") and reach
the transport's state machines, as packets from a misbehaving peer that
knows its tags would.  The mutations:

  dup       the packet again, once to three times
  replay    a packet of the conversation seen earlier
  bits      one to four bits flipped (the header mostly, the tags spared)
  field     one header field of its opcode set to an edge value (0, 1,
            all ones, 2^31, its value plus or minus 1, 64 or 2^31, random)
  truncate  cut short, anywhere
  extend    random bytes appended
  opcode    another opcode, SRD (16..22) or not
  hdrlen    hdr_len_words lying either way
  flags     random flags (HAS_ACK with no ACK block among them)
  splice    this packet's header on another's payload
  ackblock  a random ACK block added to a DATA, with HAS_ACK
  hello     a HELLO with the packet's tags and a random challenge and echo

On SIGUSR1 it sends orphans: for each of the last multi-segment DATA
packets it saw to the newest destination QP (up to --orphans), its first
segment again as the first of a message that does not exist yet (msg_id
past the newest it saw, PSN past the newest, msg_base the newest's, so
that the receiver's window stays where the sender has it), which the
receiver starts to assemble and its sender never finishes: what the
receiver's timeout must take back (docs/protocol.md, "Receiver").  It
prints "orphans N" once they are sent.  With --prob 0 it only watches,
for orphans alone.

IPv4 and IPv6; the IP and UDP lengths and checksums are made right again,
so that only SRD judges the packet.  A packet is mutated with probability
--prob (default 0.3).  Everything random comes from --seed (printed); the
traffic it mutates is the test's, so a replay repeats the mutations' kinds
and choices, not the run.

  srd_packet_fuzz.py --iface IFACE [--seed S] [--seconds N] [--prob P]
                     [--port PORT] [--orphans N]

Prints "seed S", then on SIGTERM, SIGINT or after --seconds a line
"RESULT seen=N mutated=M sent=K" with the count of each mutation, and
exits 0 (1 when it saw no SRD packet).
"""

import argparse
import os
import random
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
DATA, ACK, NAK, HELLO, WRITE, READ_REQ, READ_RESP = 16, 17, 18, 19, 20, 21, 22

# The header fields of each opcode past the common 12 bytes: (offset, size).
# docs/protocol.md, "Headers" and "RDMA read and write".
FIELDS = {
    DATA: [(12, 4), (16, 4), (20, 4), (24, 4), (28, 4), (32, 4), (36, 4),
           (40, 4), (44, 4), (48, 2), (50, 1), (51, 1)],
    ACK: [(12, 4), (16, 4), (20, 4), (24, 4), (28, 4), (32, 4), (36, 4)],
    NAK: [(12, 4), (16, 4), (20, 1), (21, 1), (22, 2)],
    HELLO: [(12, 4), (16, 4)],
}
# The RDMA opcodes: treat every 4-byte word of their header as a field.
for _op, _len in ((WRITE, 76), (READ_REQ, 76), (READ_RESP, 60)):
    FIELDS[_op] = [(o, 4) for o in range(12, _len, 4)]
COMMON = [(0, 1), (1, 1), (2, 1), (3, 1)]
KINDS = ["dup", "replay", "bits", "field", "truncate", "extend", "opcode",
         "hdrlen", "flags", "splice", "ackblock", "hello"]
WEIGHTS = [6, 6, 10, 16, 4, 3, 3, 4, 4, 3, 3, 3]


def csum(data):
    """The Internet checksum of data."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Frame:
    """An Ethernet frame carrying UDP over IPv4 or IPv6, split up."""

    def __init__(self, raw, port):
        self.ok = False
        if len(raw) < 14:
            return
        self.eth = raw[:14]
        etype = struct.unpack("!H", raw[12:14])[0]
        if etype == 0x0800 and len(raw) >= 34:
            ihl = (raw[14] & 0xF) * 4
            if raw[23] != 17 or len(raw) < 14 + ihl + 8:
                return
            self.v6 = False
            self.ip = bytearray(raw[14:14 + ihl])
            tot = struct.unpack("!H", raw[16:18])[0]
            udp = raw[14 + ihl:14 + tot]
        elif etype == 0x86DD and len(raw) >= 62:
            if raw[20] != 17:
                return
            self.v6 = True
            self.ip = bytearray(raw[14:54])
            plen = struct.unpack("!H", raw[18:20])[0]
            udp = raw[54:54 + plen]
        else:
            return
        if len(udp) < 8:
            return
        self.sport, self.dport = struct.unpack("!HH", udp[:4])
        if port not in (self.sport, self.dport):
            return
        self.payload = bytes(udp[8:])
        self.ok = len(self.payload) >= 12 and self.payload[1] >= DATA

    def build(self, payload):
        """The frame again around payload, lengths and checksums redone."""
        ulen = 8 + len(payload)
        udp = bytearray(struct.pack("!HHHH", self.sport, self.dport, ulen, 0))
        udp += payload
        ip = bytearray(self.ip)
        if self.v6:
            struct.pack_into("!H", ip, 4, ulen)
            pseudo = bytes(ip[8:40]) + struct.pack("!IxxxB", ulen, 17)
        else:
            struct.pack_into("!H", ip, 2, len(ip) + ulen)
            struct.pack_into("!H", ip, 10, 0)
            struct.pack_into("!H", ip, 10, csum(bytes(ip)))
            pseudo = bytes(ip[12:20]) + struct.pack("!xBH", 17, ulen)
        c = csum(pseudo + bytes(udp)) or 0xFFFF
        struct.pack_into("!H", udp, 6, c)
        return self.eth + bytes(ip) + bytes(udp)


class Fuzzer:
    def __init__(self, seed):
        self.rnd = random.Random(seed)
        self.history = []
        self.counts = dict.fromkeys(KINDS, 0)

    def edge(self, old, size):
        r = self.rnd
        top = (1 << (8 * size)) - 1
        v = r.choice([0, 1, top, top >> 1, (top >> 1) + 1, old + 1, old - 1,
                      old + 64, old - 64, old + (1 << 31), r.getrandbits(32)])
        return v & top

    def mutate(self, p):
        """Mutants of SRD payload p (bytes): a list of (kind, payload)."""
        r = self.rnd
        kind = r.choices(KINDS, WEIGHTS)[0]
        self.counts[kind] += 1
        m = bytearray(p)
        op = p[1]
        if kind == "dup":
            return [(kind, p)] * r.randint(1, 3)
        if kind == "replay":
            return [(kind, r.choice(self.history) if self.history else p)]
        if kind == "bits":
            for _ in range(r.randint(1, 4)):
                if r.random() < 0.8:
                    hl = min(len(m), max(12, m[3] * 4))
                    i = r.choice([0, 1, 2, 3] + list(range(12, hl)))
                else:
                    i = r.randrange(len(m))
                m[i] ^= 1 << r.randrange(8)
        elif kind == "field":
            off, size = r.choice(FIELDS.get(op, []) + COMMON)
            if off + size <= len(m):
                fmt = {1: "!B", 2: "!H", 4: "!I"}[size]
                old = struct.unpack_from(fmt, m, off)[0]
                struct.pack_into(fmt, m, off, self.edge(old, size))
        elif kind == "truncate":
            m = m[:r.randrange(len(m))]
        elif kind == "extend":
            m += bytes(r.getrandbits(8) for _ in range(r.randint(1, 64)))
        elif kind == "opcode":
            m[1] = r.randint(16, 22) if r.random() < 0.8 else r.randrange(256)
        elif kind == "hdrlen":
            m[3] = (m[3] + r.choice([-8, -1, 1, 8, 64])) & 0xFF
        elif kind == "flags":
            m[2] = r.getrandbits(8)
        elif kind == "splice":
            other = r.choice(self.history) if self.history else p
            hl = min(len(m), m[3] * 4)
            m = m[:hl] + other[min(len(other), other[3] * 4):]
        elif kind == "ackblock" and (op != DATA or len(m) < 52):
            m[2] |= 0x10    # HAS_ACK with no room for the block
        elif kind == "ackblock":
            blk = bytearray(r.getrandbits(8) for _ in range(32))
            if r.random() < 0.7:
                blk[0] &= 3
                blk[1:4] = b"\0\0\0"
            m = m[:52] + blk + m[52:]
            m[2] |= 0x10
            m[3] = (52 + 32) // 4
        else:
            # hello: this packet's tags, the sender's challenge and echo
            # random, or the tags swapped round.
            h = bytearray(struct.pack("!BBBBIIII", 4, HELLO, 0, 5, 0, 0,
                                      r.getrandbits(32), r.getrandbits(32)))
            h[4:12] = m[4:12] if r.random() < 0.7 else m[8:12] + m[4:8]
            if r.random() < 0.2:
                h[8:12] = b"\0\0\0\0"
            m = h
        return [(kind, bytes(m))]

    def remember(self, p):
        self.history.append(p)
        if len(self.history) > 256:
            del self.history[self.rnd.randrange(len(self.history))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--seed", type=int,
                    default=int.from_bytes(os.urandom(6), "big"))
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--prob", type=float, default=0.3)
    ap.add_argument("--port", type=int, default=4792)
    ap.add_argument("--orphans", type=int, default=4)
    a = ap.parse_args()
    print("seed %d (replay: --seed %d) iface %s" % (a.seed, a.seed, a.iface),
          flush=True)

    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.bind((a.iface, 0))
    s.settimeout(0.2)
    fz = Fuzzer(a.seed)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    orphan_req = []
    signal.signal(signal.SIGUSR1, lambda *_: orphan_req.append(1))
    # The newest multi-segment DATA (the frame, to build from), and the
    # newest msg_id and PSN seen.
    firsts = []
    top = {"msg_id": 0, "psn": 0, "qpn": b"", "base": 0}
    seen = mutated = sent = errors = 0
    end = time.monotonic() + a.seconds
    print("fuzzing", flush=True)
    while not stop and time.monotonic() < end:
        if orphan_req:
            del orphan_req[:]
            n = 0
            mine = [x for x in firsts if x[1][24:28] == top["qpn"]]
            for k, (f0, p0) in enumerate(mine[-a.orphans:]):
                m = bytearray(p0)
                struct.pack_into("!III", m, 12, (top["psn"] + 1 + k) & 0xFFFFFFFF,
                                 (top["msg_id"] + 1 + k) & 0xFFFFFFFF,
                                 top["base"])
                try:
                    s.send(f0.build(bytes(m)))
                    n += 1
                except OSError:
                    errors += 1
            print("orphans %d" % n, flush=True)
        try:
            raw, addr = s.recvfrom(65535)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if addr[2] != PACKET_OUTGOING:
            continue
        f = Frame(raw, a.port)
        if not f.ok:
            continue
        seen += 1
        p = f.payload
        if p[1] == DATA and len(p) >= 52:
            psn, msg_id = struct.unpack_from("!II", p, 12)
            msg_len, off, seg = struct.unpack_from("!IIH", p, 40)
            if (msg_id - top["msg_id"]) & 0x80000000 == 0:
                top["msg_id"] = msg_id
                top["qpn"] = p[24:28]
                top["base"] = struct.unpack_from("!I", p, 20)[0]
            if (psn - top["psn"]) & 0x80000000 == 0:
                top["psn"] = psn
            if off == 0 and seg and msg_len > seg and not p[2] & 0x10:
                firsts = (firsts + [(f, p)])[-16:]
        if a.prob and fz.rnd.random() < a.prob:
            mutated += 1
            for _, p in fz.mutate(f.payload):
                try:
                    s.send(f.build(p))
                    sent += 1
                except OSError:
                    errors += 1
        fz.remember(f.payload)
    kinds = " ".join("%s=%d" % (k, v) for k, v in fz.counts.items())
    print("RESULT seen=%d mutated=%d sent=%d send_errors=%d %s" %
          (seen, mutated, sent, errors, kinds), flush=True)
    return 0 if seen else 1


if __name__ == "__main__":
    sys.exit(main())
