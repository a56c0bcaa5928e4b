#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_ingress: one UD datagram to a QP number no QP has, for
srd_ingress.sh, either from a plain UDP socket or, with --mapped, as an
IPv6 frame whose source is IPv4-mapped, written on IFACE by AF_PACKET (no
socket of the host would send such a source).

  srd_ingress.py udp DST_IP PORT
  srd_ingress.py mapped IFACE DST_MAC SRC_IPV4 DST_IPV6 PORT
"""
import socket
import struct
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from srd_wire import UD_SEND, ud_hdr  # noqa: E402

QPN = 0xabcde


def datagram():
    return ud_hdr(UD_SEND, 0, QPN, 0x34, 0x11111111) + b"x" * 10


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def mapped(iface, dst_mac, src4, dst6, port):
    src = socket.inet_pton(socket.AF_INET6, "::ffff:" + src4)
    dst = socket.inet_pton(socket.AF_INET6, dst6)
    payload = datagram()
    ulen = 8 + len(payload)
    udp = struct.pack("!HHHH", 40000, port, ulen, 0) + payload
    pseudo = src + dst + struct.pack("!IxxxB", ulen, socket.IPPROTO_UDP)
    ck = csum(pseudo + udp) or 0xffff
    udp = udp[:6] + struct.pack("!H", ck) + udp[8:]
    ip6 = struct.pack("!IHBB", 6 << 28, ulen, socket.IPPROTO_UDP, 64) + src + dst
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    mac = bytes.fromhex(dst_mac.replace(":", ""))
    own = s.getsockname()[4][:6]
    s.send(mac + own + struct.pack("!H", 0x86dd) + ip6 + udp)


def main(argv):
    if len(argv) == 4 and argv[1] == "udp":
        family = socket.AF_INET6 if ":" in argv[2] else socket.AF_INET
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.sendto(datagram(), (argv[2], int(argv[3])))
    elif len(argv) == 7 and argv[1] == "mapped":
        mapped(argv[2], argv[3], argv[4], argv[5], int(argv[6]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
