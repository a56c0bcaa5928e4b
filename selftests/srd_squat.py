#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_squat: a user who tries to take softsrd's UDP port.

  srd_squat.py squat PORT SECONDS IP4 IP6
      Tries every way an unprivileged user can bind UDP PORT in its
      namespace: the wildcard and IP4/IP6, IPv6 with and without
      IPV6_V6ONLY, alone and with SO_REUSEADDR and SO_REUSEPORT.  Prints
      "bound WAY" or "refused WAY: ERROR" for each, then "holding N" (N
      sockets bound), keeps them SECONDS s counting what they receive
      ("got WAY from ADDR" each), and ends with "received N".
"""
import select
import socket
import sys
import time


def ways(port, ip4, ip6):
    """(name, family, address, v6only, reuseaddr, reuseport)."""
    w = []
    for reuse in ((0, 0), (1, 0), (0, 1), (1, 1)):
        tail = "".join((" SO_REUSEADDR" if reuse[0] else "",
                        " SO_REUSEPORT" if reuse[1] else ""))
        w.append(("0.0.0.0:%d%s" % (port, tail), socket.AF_INET,
                  ("0.0.0.0", port), None) + reuse)
        w.append(("%s:%d%s" % (ip4, port, tail), socket.AF_INET,
                  (ip4, port), None) + reuse)
        for v6only in (0, 1):
            w.append(("[::]:%d v6only=%d%s" % (port, v6only, tail),
                      socket.AF_INET6, ("::", port, 0, 0), v6only) + reuse)
        w.append(("[%s]:%d%s" % (ip6, port, tail), socket.AF_INET6,
                  (ip6, port, 0, 0), 1) + reuse)
    return w


def squat(port, seconds, ip4, ip6):
    held = {}
    for name, fam, addr, v6only, ra, rp in ways(port, ip4, ip6):
        s = socket.socket(fam, socket.SOCK_DGRAM)
        try:
            if v6only is not None:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, v6only)
            if ra:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if rp:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind(addr)
        except OSError as e:
            print("refused %s: %s" % (name, e.strerror), flush=True)
            s.close()
            continue
        print("bound %s" % name, flush=True)
        held[s] = name
    print("holding %d" % len(held), flush=True)
    got = 0
    end = time.monotonic() + seconds
    while held:
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select(list(held), [], [], left)
        for s in r:
            _, src = s.recvfrom(65536)
            got += 1
            print("got %s from %s" % (held[s], src[0]), flush=True)
    if not held:
        time.sleep(max(0, end - time.monotonic()))
    print("received %d" % got, flush=True)
    return 0


def main(argv):
    if len(argv) == 5 and argv[0] == "squat":
        return squat(int(argv[1]), float(argv[2]), argv[3], argv[4])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
