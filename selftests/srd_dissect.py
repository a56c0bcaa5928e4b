# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_dissect: srd_forge.py dissect, the Wireshark dissector checked
against srd_wire.py's decoding: the fields tshark should show of a
header (expected_fields(), also check-vectors' decoder), a pcap file's
frames, and the comparison.
"""

import socket
import struct

from srd_wire import (ACK, DATA_OPS, F_HAS_ACK, F_HAS_IMM, F_RETRANSMIT, HDR,
                      HELLO, NAK, NAK_NAMES, OPNAMES, READ_REQ, READ_RESP,
                      UD_SEND, UD_SEND_WITH_IMM, VERSION, WRITE, ack_at, be32,
                      parse_data, udp_of_frame)


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
