# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_sniff: srd_forge.py sniff, what the kernel puts on the wire,
captured off an AF_PACKET socket and held to check_packet()'s rules.
"""

import select
import signal
import socket
import struct
import time

from srd_check import check_packet, checker_selftest
from srd_wire import NAK, NAK_NAMES, OPNAMES, udp_of_frame

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6


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
