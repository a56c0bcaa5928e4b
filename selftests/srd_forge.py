#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_forge: SRD packets made by hand, from a plain UDP socket, and a
sniffer that checks what the kernel puts on the wire.

The wire format is docs/protocol.md ("SRD transport", "RDMA read and
write"); srd_wire.py encodes it independently of engine/wire.c, with
struct.pack, big-endian.  This file is the command line; a module per
job does the work: srd_wire.py (encoding and decoding), srd_check.py
(the rules of a correct sender, and their self-test), srd_attack.py (the
attacker's modes and serve), srd_blind.py (the blind attacks),
srd_sniff.py (sniff), srd_dissect.py (dissect), srd_vectors.py
(check-vectors).

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
                srd_rkey_target (pattern() in srd_attack.py), and is ACKed; the
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
                the Wireshark dissector LUA checked against srd_wire.py's own
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
                (engine/tests/wire_vectors, on stdin): srd_wire.py must
                encode the same fields to the same bytes, decode them back
                to the same fields, and find no violation in them (the
                forger and the engine cannot drift apart).

Each mode ends with a line "RESULT mode=... ok=0|1 ..." and exits 0 when
ok=1, 1 otherwise (2: usage).
"""

import sys

from srd_attack import Forge, parse_target, run_command
from srd_blind import mode_blind
from srd_check import checker_selftest
from srd_dissect import mode_dissect
from srd_sniff import mode_sniff
from srd_vectors import mode_check_vectors


def usage():
    print(__doc__, file=sys.stderr)
    sys.exit(2)


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
