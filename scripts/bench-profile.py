#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Where a benchmark row's guest instructions went (scripts/bench.sh --profile).

    scripts/bench-profile.py [--top N] [--minus DIR2] [--messages N]
                             [--guest NAME] DIR ROW [BASE_ROW]

For ROW, and BASE_ROW beside it, prints each guest's instructions per
message: kernel and user space, the kernel's by module, and the kernel
functions that took the most, summed over the guests.  The counts are the
difference of the snapshots taken just before and just after the row's
client ran (DIR/profile/{server,client}-ROW.{0,1}.txt, from
tools/insn_profile), so they include the programs' setup and teardown;
a message is one of the client's -n iterations (a round trip for a
latency row, one message for a bandwidth row).  Kernel addresses are read
with the guest's own /proc/kallsyms, taken after rdma_srd was loaded.
A function's calls are the runs of the block at its first address.
Instructions that wait rather than work (a spinning lock, the programs'
busy polling in user space) count too: compare those with care.  Beside
them, srd0's hw_counters that moved, per message and guest
(DIR/profile/GUEST-ROW.{0,1}.ctr, read just outside the snapshots): the
packets, ACKs, probes and timeouts behind the instructions.

--minus DIR2 subtracts a second run of the same rows with fewer messages
(bench.sh --lat-iters): the difference is what the extra messages cost,
without the setup and teardown that each run pays once.

--guest NAME (server or client) counts that guest alone: the sender's
and the receiver's costs of a bulk row apart, where the sum hides which
side does the work.
"""

import argparse
import bisect
import glob
import os
import re
import sys


def load_symbols(path):
    """Sorted (address, name, module) of the text symbols of a kallsyms."""
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[1] not in "tTwW":
                continue
            mod = parts[3].strip("[]") if len(parts) > 3 else "vmlinux"
            syms.append((int(parts[0], 16), parts[2], mod))
    syms.sort()
    return syms


def load_counts(path):
    """{block address: (instructions, executions)}, user instructions."""
    kernel, user = {}, 0
    with open(path) as f:
        for line in f:
            key, insns, execs = line.split()
            if key == "user":
                user = int(insns)
            elif key != "lost":
                kernel[int(key, 16)] = (int(insns), int(execs))
    return kernel, user


def load_ctr(path):
    """{counter: value} of a guest's srd0 hw_counters (bench-guest.sh
    profile_mark), or None for a run that did not keep them."""
    try:
        with open(path) as f:
            return {k: int(v) for k, _, v in (line.strip().partition(":") for line in f)
                    if v.isdigit()}
    except OSError:
        return None


def iterations(dirname, row):
    """The client's -n (perftest, srd_perf, fi_pingpong -I), or None."""
    try:
        with open(os.path.join(dirname, "raw", row + ".client.txt")) as f:
            cmd = f.readline()
    except OSError:
        return None
    m = re.search(r"\s-(?:n|I)\s+(\d+)", cmd)
    return int(m.group(1)) if m else None


def guests(dirname, only=None):
    """The guests that were profiled: those whose symbols were kept
    (bench-guest.sh: server and client); only @only if given."""
    names = sorted((os.path.basename(p)[len("kallsyms-"):]
                    for p in glob.glob(os.path.join(dirname, "profile", "kallsyms-*"))),
                   key=lambda g: (g != "server", g))
    if not names:
        sys.exit("bench-profile: no %s/profile/kallsyms-*: was the run made with --profile?" %
                 dirname)
    if only is not None:
        if only not in names:
            sys.exit("bench-profile: no guest %s in %s (profiled: %s)" %
                     (only, dirname, ", ".join(names)))
        names = [only]
    return names


class Profile:
    """A row's kernel instructions by function and module, per guest's
    kernel and user totals, over its messages (iters)."""

    def __init__(self, dirname, row, messages=None, guest=None):
        self.row = row
        self.iters = messages or iterations(dirname, row)
        self.guests = guests(dirname, guest)
        self.per = {}       # guest -> [kernel total, user total]
        self.funcs = {}     # "name [module]" -> instructions, both guests
        self.modules = {}   # module -> instructions, both guests
        self.calls = {}     # "name [module]" -> runs of its first block
        self.ctrs = {}      # "guest counter" -> srd0 counter's change
        pdir = os.path.join(dirname, "profile")
        for g in self.guests:
            syms = load_symbols(os.path.join(pdir, "kallsyms-" + g))
            addrs = [s[0] for s in syms]
            k0, u0 = load_counts(os.path.join(pdir, "%s-%s.0.txt" % (g, row)))
            k1, u1 = load_counts(os.path.join(pdir, "%s-%s.1.txt" % (g, row)))
            total = 0
            for addr, (c, e) in k1.items():
                c0, e0 = k0.get(addr, (0, 0))
                d = c - c0
                if d <= 0:
                    continue
                total += d
                i = bisect.bisect_right(addrs, addr) - 1
                name, mod = (syms[i][1], syms[i][2]) if i >= 0 else ("?", "?")
                key = name if mod == "vmlinux" else "%s [%s]" % (name, mod)
                self.funcs[key] = self.funcs.get(key, 0) + d
                self.modules[mod] = self.modules.get(mod, 0) + d
                if i >= 0 and syms[i][0] == addr:
                    self.calls[key] = self.calls.get(key, 0) + e - e0
            self.per[g] = [total, u1 - u0]
            c0 = load_ctr(os.path.join(pdir, "%s-%s.0.ctr" % (g, row)))
            c1 = load_ctr(os.path.join(pdir, "%s-%s.1.ctr" % (g, row)))
            if c0 is not None and c1 is not None:
                for k, v in c1.items():
                    self.ctrs["%s %s" % (g, k)] = v - c0.get(k, 0)

    def minus(self, other):
        """This run less a run of the same row with fewer messages: what
        the extra messages cost, without what every run costs once."""
        if not (self.iters and other.iters and self.iters > other.iters):
            sys.exit("bench-profile: --minus needs the same row with fewer -n (%s, %s)" %
                     (self.iters, other.iters))
        for g in self.guests:
            for i in (0, 1):
                self.per[g][i] -= other.per[g][i]
        for mine, theirs in ((self.funcs, other.funcs), (self.modules, other.modules),
                             (self.calls, other.calls), (self.ctrs, other.ctrs)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) - v
        self.iters -= other.iters

    def scale(self, n):
        return n / self.iters if self.iters else float(n)


def fmt(x):
    return "%.0f" % x if abs(x) >= 100 else "%.1f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--minus", metavar="DIR2")
    ap.add_argument("--messages", type=int, metavar="N",
                    help="the row's message count, when its command has no -n")
    ap.add_argument("--guest", metavar="NAME", help="count this guest alone")
    ap.add_argument("dir")
    ap.add_argument("row")
    ap.add_argument("base", nargs="?")
    a = ap.parse_args()
    try:
        rows = [a.row] + ([a.base] if a.base else [])
        profs = [Profile(a.dir, r, a.messages, a.guest) for r in rows]
        if a.minus:
            for p, r in zip(profs, rows):
                p.minus(Profile(a.minus, r, guest=a.guest))
    except OSError as e:
        sys.exit("bench-profile: %s (was the run made with --profile, and did the row run?)" % e)
    unit = "per message" if all(p.iters for p in profs) else "in all (no -n found)"
    print("Guest instructions %s%s: %s" % (
        unit, " (the difference of two runs)" if a.minus else "", ", ".join(
            "%s (%s messages)" % (p.row, p.iters or "?") for p in profs)))
    print()
    head = "| |" + "".join(" %s |" % p.row for p in profs)
    if len(profs) == 2:
        head += " ratio |"
    print(head)
    print("|---" * (len(profs) + 1 + (len(profs) == 2)) + "|")

    def line(label, vals):
        s = "| %s |" % label + "".join(" %s |" % fmt(v) for v in vals)
        if len(vals) == 2:
            s += " %.2f |" % (vals[0] / vals[1]) if vals[1] else " - |"
        print(s)

    gs = profs[0].guests
    for g in gs:
        line("%s kernel" % g, [p.scale(p.per[g][0]) for p in profs])
        line("%s user" % g, [p.scale(p.per[g][1]) for p in profs])
    if len(gs) > 1:
        line("all kernels", [p.scale(sum(p.per[g][0] for g in gs)) for p in profs])
    mods = sorted(set().union(*(p.modules for p in profs)),
                  key=lambda m: -max(p.scale(p.modules.get(m, 0)) for p in profs))
    for m in mods[:8]:
        line("  %s" % m, [p.scale(p.modules.get(m, 0)) for p in profs])
    ctrs = sorted(k for k in set().union(*(p.ctrs for p in profs))
                  if any(p.ctrs.get(k, 0) for p in profs))
    if ctrs:
        print()
        print("srd0's counters that moved, per message:")
        print()
        print("| counter |" + "".join(" %s |" % p.row for p in profs))
        print("|---" * (len(profs) + 1) + "|")
        for k in ctrs:
            print("| %s |" % k + "".join(" %.2f |" % p.scale(p.ctrs.get(k, 0))
                                         for p in profs))
    print()
    print("Kernel functions, %s, by %s:" %
          ("all guests" if len(gs) > 1 else "guest " + gs[0],
           "the difference" if len(profs) == 2 else "instructions"))
    print()
    print("| function |" + "".join(" %s |" % p.row for p in profs) +
          (" difference |" if len(profs) == 2 else "") +
          "".join(" calls, %s |" % p.row for p in profs))
    print("|---" * (2 * len(profs) + 1 + (len(profs) == 2)) + "|")
    names = set().union(*(p.funcs for p in profs))

    def key(n):
        v = [p.scale(p.funcs.get(n, 0)) for p in profs]
        return -(v[0] - v[1]) if len(v) == 2 else -v[0]
    for n in sorted(names, key=key)[:a.top]:
        v = [p.scale(p.funcs.get(n, 0)) for p in profs]
        print("| %s |" % n + "".join(" %s |" % fmt(x) for x in v) +
              (" %s |" % fmt(v[0] - v[1]) if len(v) == 2 else "") +
              "".join(" %.2f |" % p.scale(p.calls.get(n, 0)) for p in profs))


if __name__ == "__main__":
    main()
