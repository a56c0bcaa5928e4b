# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The rows a run has (their IDs, as scripts/bench-guest.sh and
bench-incast.sh name them), those --check wants a figure in, and the
figures taken across rows, for the table and the targets alike.
"""

from benchtable.parse import MPI_OPS, num

# srd_perf -o OP rows (scripts/bench-guest.sh srd_rdma_rows): the ID
# prefix and the name in the tables.
RDMA_OPS = (("srd-write", "softsrd SRD RDMA write (srd_perf -o write)"),
            ("srd-read", "softsrd SRD RDMA read (srd_perf -o read)"))
RDMA_LAT_SIZE = "64"
# The busy-polling bandwidth rows (bench-guest.sh spin_rows).
SPIN_ROWS = (("rxe-rc-spin", "rxe RC, busy-polling (perftest without -e)"),
             ("srd-spin", "softsrd SRD, busy-polling (srd_perf without -E)"))
# EFA software on softsrd (bench-guest.sh efa_perftest_rows, fi_rows).
EFA_PERFTEST = ("srd-efa", "softsrd SRD, perftest -c SRD on softsrd's libefa, busy-polling")
FI_RDM = "fi-rdm"
# The fallback users run where there is no EFA (issue 48): libfabric's
# tcp provider (bench-guest.sh fi_rows) and Open MPI over TCP (mpi_rows).
FI_TCP = "fi-tcp"
MPI_NPS = ("2", "4")
# bench-incast.sh: senders into one receiver.
INCAST_N = 4
# The transports of the bandwidth and latency tables: name, ID prefix.
TRANSPORTS = [("rxe RC (perftest)", "rxe-rc"), ("rxe UD (perftest)", "rxe-ud"),
              ("softsrd UD (perftest)", "srd-ud"), ("softsrd SRD (srd_perf)", "srd")]


def metric(by, rid, key="MBps"):
    """Figure @key of measurement @rid, if it ran and has one."""
    r = by.get(rid)
    return r["metrics"].get(key) if r and r["status"] == "ok" else None


def incast_senders(by, proto):
    """bench-incast.sh: each sender's record, and their metrics if all
    four have a figure, else None."""
    recs = [by.get("incast-%s-%d" % (proto, i)) for i in range(1, INCAST_N + 1)]
    if all(r and r["status"] == "ok" for r in recs):
        return recs, [r["metrics"] for r in recs]
    return recs, None


def worst_p99(ms):
    """The worst sender's p99 (µs) of incast_senders()'s metrics, or None."""
    if not ms or any(m.get("p99_us") is None for m in ms):
        return None
    return max(m["p99_us"] for m in ms)


def engine_best(text):
    """The best of each (kind, copy)'s runs in engine.txt (bench.sh
    repeats the sends), and how many runs each had."""
    best, runs = {}, {}
    for l in text.splitlines():
        kv = dict(x.split("=", 1) for x in l.split()[1:] if "=" in x)
        key = (kv.get("kind"), kv.get("copy"))
        runs[key] = runs.get(key, 0) + 1
        if num(kv.get("pkts_per_s")) and (
                key not in best or num(kv["pkts_per_s"]) > num(best[key]["pkts_per_s"])):
            best[key] = kv
    return best, runs


def engine_ns(best):
    """ns a packet of the best sends, copy=0 and copy=1, or None."""
    c0, c1 = best.get(("send", "0")), best.get(("send", "1"))
    if not c0 or not c1:
        return None
    return 1e9 / num(c0["pkts_per_s"]), 1e9 / num(c1["pkts_per_s"])


def values(by):
    """metric() of the records @by, as val(rid, key="MBps")."""
    def val(rid, key="MBps"):
        return metric(by, rid, key)
    return val


def mpi_sizes(by):
    """The sizes srd_mpi_bench measured, in any row, smallest first."""
    return sorted({k.split()[2] for r in by.values() if r["tool"] == "srd_mpi_bench"
                   for k in r["metrics"] if k.startswith("us ")}, key=int)


def mpi_worst(by, np_):
    """The largest efa / tcp time ratio over MPI_OPS and sizes of NP_
    ranks: (ratio, op, size, efa µs, tcp µs), and the (op, size) where
    efa took longer; None when either run has no figures."""
    e, t = by.get("mpi-efa-np" + np_), by.get("mpi-tcp-np" + np_)
    if not e or not t or e["status"] != "ok" or t["status"] != "ok":
        return None, []
    worst, over = None, []
    for op in MPI_OPS:
        for s in mpi_sizes(by):
            a, b = (r["metrics"].get("us %s %s" % (op, s)) for r in (e, t))
            if a is None or not b:
                continue
            if worst is None or a / b > worst[0]:
                worst = (a / b, op, s, a, b)
            if a > b:
                over.append((op, s))
    return worst, over


def jain(xs):
    """Jain's fairness index: 1 when all are equal, 1/n when one has all."""
    if not xs or not any(xs):
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def expected_ids(params):
    """The rows a run must report, and those allowed to fail (rxe RC
    under loss may stall or abort: that is its result)."""
    sizes = params.get("SIZES", "").split()
    must = ["udp_bw", "udp_lat"]
    for t in ("rxe-rc", "rxe-ud", "srd-ud", "srd"):
        for s in sizes:
            must += ["%s-bw-%s" % (t, s), "%s-lat-%s" % (t, s)]
    for t, _ in RDMA_OPS:
        must += ["%s-bw-%s" % (t, s) for s in sizes] + ["%s-lat-%s" % (t, RDMA_LAT_SIZE)]
    for t, _ in SPIN_ROWS:
        must += ["%s-bw-%s" % (t, s) for s in sizes
                 if params.get("QUICK") == "1" or int(s) >= 65536]
    for s in sizes:
        must += ["%s-bw-%s" % (EFA_PERFTEST[0], s), "%s-lat-%s" % (EFA_PERFTEST[0], s),
                 "%s-%s" % (FI_RDM, s)]
    # The MPI rows run only when asked for (bench.sh --only fallback).
    must += ["%s-%s" % (FI_TCP, s) for s in sizes]
    must += ["multipath-0", "multipath-1", "multipath-mix"]
    if params.get("INCAST_MBIT"):
        must += ["incast-%s-%d" % (p, i) for p in ("srd", "tcp") for i in range(1, INCAST_N + 1)]
    for n in params.get("SCALE_QPS", "").split():
        must += ["srd-scale-" + n, "rxe-rc-scale-" + n]
    may = []
    for l in params.get("LOSSES", "").split():
        must.append("loss-srd-" + l)
        (must if l == "0" else may).append("loss-rxe-rc-" + l)
    return must, may
