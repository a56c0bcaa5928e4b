# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_attack: the forging attacker (srd_forge.py's modes hello, control,
guess, read-control, read-guess and bad-headers, one by one or served
from stdin): a Forge sends from a port of its own and reads the target's
answers off a raw socket (PortTap), checking each (srd_check.py).
"""

import os
import random
import select
import socket
import struct
import time

from srd_check import check_packet
from srd_wire import (ACK, F_ACK_NOW, F_HAS_ACK, HDR, HELLO, MAX_MSG,
                      MAX_RDMA, NAK, NAK_REMOTE_ACCESS, OPNAMES, READ_REQ,
                      READ_RESP, WRITE, ack, ack_at, be32, common,
                      data_fields, hello, parse_data, rdma_fields)

DEBUG = bool(os.environ.get("SRD_FORGE_DEBUG"))   # every packet received

FILL = 0x5a


def pattern(i):
    """Byte i of srd_rkey_target's MR (srd_rkey_pattern() there)."""
    return (i * 7 + (i >> 8) * 13 + 0x21) & 0xff


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
