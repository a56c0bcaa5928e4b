# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--targets: issue 17's targets (and issue 48's, against the fallback)
in each run's results.json, a column per run, and in how many runs each
was met.
"""

import json
import os
import sys

from benchtable.cells import fmt, size_name
from benchtable.parse import read_text
from benchtable.rows import (FI_RDM, FI_TCP, MPI_NPS, MPI_OPS, engine_best,
                             engine_ns, incast_senders, jain, metric,
                             mpi_sizes, mpi_worst, worst_p99)


def read_results(d):
    """The results.json of the run in @d; exits with a message when it
    has none."""
    try:
        with open(os.path.join(d, "results.json")) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("bench-table.py: %s: no readable results.json (%s); "
                 "bench-table.py %s writes it" % (d, e, d))


def div(a, b):
    return None if a is None or b is None or b == 0 else a / b


class Targets:
    """The targets of one run's records @by, a row each: (target, ratio
    or None, its figures, met or None)."""

    def __init__(self, by):
        self.by = by
        self.rows = []

    def val(self, rid, key="MBps"):
        return metric(self.by, rid, key)

    def row(self, name, a, b, goal, unit="", lo=None):
        """a / b, "met" when it is at most (lo None) or at least (lo
        True) goal."""
        r = div(a, b)
        figs = "%s / %s%s" % (fmt(a), fmt(b), unit) if r is not None else "no figure"
        ok = None if r is None else (r >= goal if lo else r <= goal)
        self.rows.append((name, r, figs, ok))


def target_rows(d):
    """Issue 17's targets in the run in @d (its results.json, engine.txt):
    a list of (target, ratio or None, its figures, met or None)."""
    res = read_results(d)
    tg = Targets({r["id"]: r for r in res["records"]})
    latency_targets(tg)
    bandwidth_targets(tg)
    scale_targets(tg, res["params"])
    fallback_targets(tg)
    ns = engine_ns(engine_best(read_text(os.path.join(d, "engine.txt")))[0])
    tg.row("engine ≤ 0.5× the two copies", ns and ns[0], ns and ns[1] - ns[0], 0.5, " ns")
    return res["machine"], tg.rows


def latency_targets(tg):
    row, val = tg.row, tg.val
    efa, rc, ud = ("%s-lat-64" % t for t in ("srd-efa", "rxe-rc", "srd-ud"))
    row("`ib_send_lat -c SRD` p50 ≤ 1.0× `-c RC` on rxe",
        val(efa, "p50_us"), val(rc, "p50_us"), 1.0, " µs")
    row("the same ≤ 1.3× softsrd UD's p50", val(efa, "p50_us"), val(ud, "p50_us"), 1.3, " µs")
    row("its p99 no worse than rxe RC's", val(efa, "p99_us"), val(rc, "p99_us"), 1.0, " µs")
    rc50 = val(rc, "p50_us")
    row("64 B RDMA write round trip ≤ 1.0× rxe RC's send round trip",
        val("srd-write-lat-64", "p50_us"), rc50 and 2 * rc50, 1.0, " µs")


def bandwidth_targets(tg):
    row, val = tg.row, tg.val
    for s, goal in (("1048576", 0.9), ("65536", 0.7)):
        row("SRD send ≥ %.1f× raw UDP at %s" % (goal, size_name(s)),
            val("srd-bw-" + s), val("udp_bw"), goal, " MB/s", lo=True)
    for op in ("write", "read"):
        for s in ("65536", "1048576"):
            row("RDMA %s ≥ send at %s" % (op, size_name(s)),
                val("srd-%s-bw-%s" % (op, s)), val("srd-bw-" + s), 1.0, " MB/s", lo=True)


def scale_targets(tg, params):
    """Many QPs and incast, when the run measured them."""
    row, val, by, rows = tg.row, tg.val, tg.by, tg.rows
    qps = params.get("SCALE_QPS", "").split()
    if "256" in qps:
        row("256 QPs ≥ 0.9× 1 QP", val("srd-scale-256"), val("srd-scale-" + qps[0]),
            0.9, " MB/s", lo=True)
    mbit = params.get("INCAST_MBIT")
    if mbit:
        srd, tcp = (incast_senders(by, proto)[1] for proto in ("srd", "tcp"))
        cap = float(mbit) / 8
        row("incast: aggregate ≥ 0.9× the bottleneck",
            srd and sum(m["MBps"] for m in srd), cap, 0.9, " MB/s", lo=True)
        j = srd and jain([m["MBps"] for m in srd])
        rows.append(("incast: Jain's index ≥ 0.95", j, "%.3f" % j if j else "no figure",
                     None if j is None else j >= 0.95))
        ms = [worst_p99(x) for x in (srd, tcp)]
        row("incast: SRD p99 ≤ 0.5× TCP's", *[x and x / 1000 for x in ms], 0.5, " ms")


def fallback_targets(tg):
    """Issue 48, item 2: against the fallback users pick."""
    row, val, by, rows = tg.row, tg.val, tg.by, tg.rows
    row("fi_pingpong rdm 64 B: efa on softsrd ≤ 1.0× tcp",
        val(FI_RDM + "-64", "avg_us"), val(FI_TCP + "-64", "avg_us"), 1.0, " µs")
    for s in ("65536", "1048576"):
        row("fi_pingpong rdm MB/s at %s: efa ≥ 1.0× tcp" % size_name(s),
            val("%s-%s" % (FI_RDM, s)), val("%s-%s" % (FI_TCP, s)), 1.0, " MB/s", lo=True)
    for np_ in MPI_NPS:
        worst, over = mpi_worst(by, np_)
        rows.append(("MPI %s ranks: efa time ≤ 1.0× tcp at every size (the worst)" % np_,
                     worst and worst[0],
                     "%s %s: %s / %s µs; %d of %d over" % (
                         worst[1], size_name(worst[2]), fmt(worst[3]), fmt(worst[4]),
                         len(over), len(MPI_OPS) * len(mpi_sizes(by))) if worst else "no figure",
                     None if worst is None else worst[0] <= 1.0))


def targets(dirs):
    """bench-table.py --targets DIR...: one column per run."""
    runs = [target_rows(d) for d in dirs]
    # A run may lack some targets (no incast or 256 QPs in its params):
    # rows by name, in the order of the first run that has each.
    names = []
    for _, rows in runs:
        names += [r[0] for r in rows if r[0] not in names]
    out = []
    w = out.append
    w("| Target | %s | met |" % " | ".join(
        "%s (%s)" % (m.get("date", "?"), m.get("commit", "?")) for m, _ in runs))
    w("|---|%s---|" % ("---|" * len(runs)))
    for name in names:
        cells, met, seen = [], 0, 0
        for _, rows in runs:
            _, r, figs, ok = next((x for x in rows if x[0] == name),
                                  (name, None, "", None))
            cells.append("—" if r is None else "%.2f (%s)" % (r, figs))
            met += bool(ok)
            seen += ok is not None
        w("| %s | %s | %s |" % (name, " | ".join(cells),
                                "%d of %d" % (met, seen) if seen else "no figure"))
    return "\n".join(out)
