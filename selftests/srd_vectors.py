# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""srd_vectors: srd_forge.py check-vectors, srd_wire.py's encoding and
decoding held to the engine's (engine/tests/wire_vectors).
"""

from srd_check import check_packet
from srd_dissect import expected_fields
from srd_wire import (ACK, DATA_OPS, F_ACK_DUP, HELLO, NAK, OPNAMES, READ_REQ,
                      READ_RESP, UD_SEND, UD_SEND_WITH_IMM, WRITE, ack,
                      data_hdr, hello, nak, rdma_fields, resp_fields, ud_hdr)


def mode_check_vectors(lines):
    """The engine's own encoding of one header per opcode, and of a DATA
    with an ACK block (engine/tests/wire_vectors), a line each: srd_wire.py
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
