# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_blind: the blind attacks of docs/protocol.md's "Threat model"
(srd_forge.py's modes hello-flood, claim, slide, sources, peers,
zero-csum): sent from an ephemeral port, as any unprivileged user can.
"""

import random
import socket
import struct
import time

from srd_attack import PortTap
from srd_wire import (DATA, F_ACK_NOW, HDR, HELLO, be32, common, data_fields,
                      hello)


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
