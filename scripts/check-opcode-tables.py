#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hold the copies of the wire's opcode table to the engine's lists.

The engine's lists (SRD_UD_OPS and SRD_WIRE_OPS in engine/srd_engine.h)
are the one definition of the opcodes: NAME, value, header bytes, the
flags a sender may set, and the message kind.  Three places outside C
keep their own copy, since they are Python, Lua and prose:

  selftests/srd_wire.py         OPNAMES, HDR, FLAGS, DATA_OPS
  tools/wireshark/softsrd.lua   OPS (names), HDR
  docs/protocol.md              the opcode tables ("| 16 | `SRD_DATA` | 52 |")

Reads the lists as engine/tests/wire_vectors --table prints them (a line
"NAME VALUE HDR_BYTES FLAGS KIND" per opcode) on stdin, and prints one
"# " line per difference and a RESULT line; exits 1 on any difference.

  build/engine/wire_vectors --table | scripts/check-opcode-tables.py
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_engine(lines):
    """{value: (name, hdr, flags, kind)} of the engine's lists."""
    ops = {}
    for line in lines:
        w = line.split()
        if len(w) != 5:
            raise SystemExit("check-opcode-tables: bad table line %r" % line)
        ops[int(w[1])] = (w[0], int(w[2]), int(w[3]), w[4])
    if not ops:
        raise SystemExit("check-opcode-tables: no opcodes on stdin")
    return ops


def is_ud(name):
    return name.startswith("UD_")


def check_forger(ops):
    sys.path.insert(0, os.path.join(TOP, "selftests"))
    import srd_wire as f
    bad = []
    for v, (name, hdr, flags, kind) in sorted(ops.items()):
        if f.OPNAMES.get(v) != name:
            bad.append("srd_wire.py OPNAMES[%d] is %r, the engine's %s" %
                       (v, f.OPNAMES.get(v), name))
        if f.HDR.get(v) != hdr:
            bad.append("srd_wire.py HDR[%d] (%s) is %r, the engine's %d" %
                       (v, name, f.HDR.get(v), hdr))
        if f.FLAGS.get(v) != flags:
            bad.append("srd_wire.py FLAGS[%d] (%s) is %r, the engine's 0x%02x" %
                       (v, name, f.FLAGS.get(v), flags))
        if (v in f.DATA_OPS) != (kind != "NONE" and not is_ud(name)):
            bad.append("srd_wire.py DATA_OPS %s %s: the engine's kind is %s" %
                       ("has" if v in f.DATA_OPS else "lacks", name, kind))
    for table in ("OPNAMES", "HDR", "FLAGS"):
        for v in sorted(set(getattr(f, table)) - set(ops)):
            bad.append("srd_wire.py %s has opcode %d, which the engine has not" %
                       (table, v))
    return bad


def lua_table(src, name):
    """{int: value} of the Lua table 'local NAME = { [k] = v, ... }'."""
    m = re.search(r"^local %s = \{(.*?)^\}" % name, src, re.S | re.M)
    if not m:
        return None
    return {int(k): v.strip('"') for k, v in
            re.findall(r"\[(\d+)\]\s*=\s*(\"[^\"]*\"|\d+)", m.group(1))}


def check_dissector(ops):
    path = os.path.join(TOP, "tools/wireshark/softsrd.lua")
    src = open(path).read()
    names, hdrs = lua_table(src, "OPS"), lua_table(src, "HDR")
    if names is None or hdrs is None:
        return ["softsrd.lua: no 'local OPS' or 'local HDR' table"]
    bad = []
    for v, (name, hdr, _, _) in sorted(ops.items()):
        want = name if is_ud(name) else "SRD_" + name
        if names.get(v) != want:
            bad.append("softsrd.lua OPS[%d] is %r, expected %s" %
                       (v, names.get(v), want))
        if hdrs.get(v) is None or int(hdrs[v]) != hdr:
            bad.append("softsrd.lua HDR[%d] (%s) is %r, the engine's %d" %
                       (v, name, hdrs.get(v), hdr))
    for v in sorted((set(names) | set(hdrs)) - set(ops)):
        bad.append("softsrd.lua has opcode %d, which the engine has not" % v)
    return bad


def check_spec(ops):
    src = open(os.path.join(TOP, "docs/protocol.md")).read()
    bad = []
    for v, (name, hdr, _, _) in sorted(ops.items()):
        if is_ud(name):
            row = r"^\| %d \| `%s` \|" % (v, name)
        else:
            row = r"^\| %d \| `SRD_%s` \| %d \|" % (v, name, hdr)
        if not re.search(row, src, re.M):
            bad.append("docs/protocol.md has no opcode row for %d %s%s" %
                       (v, name, "" if is_ud(name) else " (%d bytes)" % hdr))
    return bad


def main():
    ops = read_engine([ln for ln in sys.stdin if ln.strip()])
    bad = check_forger(ops) + check_dissector(ops) + check_spec(ops)
    for b in bad:
        print("# " + b)
    print("RESULT check-opcode-tables ok=%d opcodes=%d problems=%d" %
          (not bad, len(ops), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
