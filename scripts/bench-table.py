#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Turns a `make bench` run directory (scripts/bench.sh) into results.json,
# a record per measurement with the figures parsed from its raw output, and
# table.md, which it also prints.
#
#   bench-table.py [--check] [--doc] DIR
#   bench-table.py --targets DIR...
#
# --check (bench.sh --quick): exit 1 when a row that should have a number
# has none.  The figures themselves are never judged.
#
# --doc prints the table as docs/performance.md's "Current run" has it
# (table.md is written whole either way).
#
# --targets: issue 17's targets in each run's results.json (written by the
# first form), a column per run, and in how many runs each was met.
#
# Units: MB are 10^6 bytes (perftest's "MB/sec" are MiB/s and are
# converted); latencies are one-way (half the round trip, as all three
# tools report them), in microseconds, except those of RDMA ops (srd_perf
# -o write|read), which are the whole post-to-completion time of one op.

import json
import os
import re
import sys

MIB = 1048576 / 1e6
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
MPI_OPS = ("pingpong", "allreduce", "alltoall")
MPI_NPS = ("2", "4")
# bench-incast.sh: senders into one receiver.
INCAST_N = 4


def read_kv(path):
    kv = {}
    try:
        with open(path) as f:
            for line in f:
                k, sep, v = line.rstrip("\n").partition("=")
                if sep:
                    kv[k.strip()] = v.strip().strip('"')
    except FileNotFoundError:
        pass
    return kv


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


# ---- parsers: raw output -> metrics ----------------------------------

def parse_iperf3(client, server):
    """UDP: the receiver's rate and loss (the client prints the server's
    summary as its "receiver" line; else the server's own last line)."""
    scale = {"": 1e-6, "K": 1e-3, "M": 1.0, "G": 1e3}
    pat = re.compile(r"([\d.]+)\s+([KMG]?)bits/sec\s+[\d.]+\s+ms\s+(\d+)/(\d+)\s+\(([\d.e+-]+)%\)")
    lines = [l for l in client.splitlines() if "receiver" in l]
    if not lines:
        lines = [l for l in server.splitlines() if pat.search(l)][-1:]
    for l in lines:
        m = pat.search(l)
        if m:
            mbit = float(m.group(1)) * scale[m.group(2)]
            return {"Mbps": mbit, "MBps": mbit / 8, "lost_pct": float(m.group(5))}
    return {}


def parse_sockperf(client):
    m = {}
    a = re.search(r"avg-lat(?:ency)?\s*=\s*([\d.]+)", client)
    if a:
        m["avg_us"] = float(a.group(1))
    for p, v in re.findall(r"percentile\s+([\d.]+)\s*=\s*([\d.]+)", client):
        key = {"50.000": "p50_us", "99.000": "p99_us", "99.900": "p999_us"}.get(p)
        if key:
            m[key] = float(v)
    return m


# One figure of a perftest line: a number, or the nan perftest prints
# for a standard deviation it could not compute (t_stdev -nan on a loaded
# host, where the other figures stand).
PERFTEST_FIG = r"(?:[0-9.]+|-?nan)"


def perftest_row(out):
    """The header line and the figures line after it."""
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if l.strip().startswith("#bytes"):
            for d in lines[i + 1:]:
                # A message may follow the figures on their line (UD's
                # "ethernet_read_keys: ..." when the peer went first).
                f = re.match(r"\s*(%s(?:\s+%s)*)" % (PERFTEST_FIG, PERFTEST_FIG), d)
                if f and len(f.group(1).split()) >= 3:
                    return l, [float(x) for x in f.group(1).split()]
    return None, None


def parse_ib_send_bw(client, server=""):
    head, f = perftest_row(client)
    if not f or len(f) < 4:
        return {}
    m = {"MBps": f[3] * MIB, "msgs": f[1], "Mpps": f[4] if len(f) > 4 else None}
    # With -e and a few large messages perftest's client may print 0.00;
    # the receiver's figure of the same run stands in, marked.
    if not m["MBps"]:
        sh, sf = perftest_row(server)
        if sf and len(sf) >= 4 and sf[3]:
            m["MBps"], m["receiver"] = sf[3] * MIB, True
    return m


def parse_ib_send_lat(client):
    head, f = perftest_row(client)
    if not f:
        return {}
    # bytes iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
    cols = ["bytes", "iters", "min_us", "max_us", "p50_us", "avg_us",
            "stdev_us", "p99_us", "p999_us"]
    if "t_typical" not in head or len(f) < 9:
        return {}
    m = {k: v for k, v in zip(cols, f) if k not in ("bytes",) and v == v}
    # A nan is left out, and said: the row keeps its other figures.
    odd = [k for k, v in zip(cols, f) if v != v]
    if odd:
        m["odd"] = "perftest printed nan for " + ", ".join(odd)
    return m


def parse_srd_perf(client):
    # srd_perf --json: an object per size on a line of its own.
    for l in client.splitlines():
        l = l.strip()
        if l.startswith('{"mode"'):
            kv = json.loads(l)
            m = {}
            for k in ("MBps", "kmsgps", "secs", "msgs", "iters", "avg_us", "min_us",
                      "p50_us", "p99_us", "p999_us", "cpu_s_per_GB", "errors",
                      "corrupt", "dup", "missing"):
                if isinstance(kv.get(k), (int, float)):
                    m[k] = float(kv[k])
            return m
    return {}


def parse_sockperf_ul(client):
    """sockperf under-load: what the client sent (SentMessages over
    RunTime of its valid period) and its percentiles of the answered
    messages' round trips."""
    m = parse_sockperf(client)
    r = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+)", client)
    if r and float(r.group(1)) > 0:
        m["sent_msgs"] = int(r.group(2))
        m["secs"] = float(r.group(1))
    return m


def parse_fi_pingpong(client):
    """fi_pingpong's result line: bytes #sent #ack total time MB/sec
    usec/xfer Mxfers/sec.  usec/xfer is half a round trip's average (it
    divides by two transfers per iteration); MB/sec is bytes per µs."""
    head = False
    for l in client.splitlines():
        f = l.split()
        if f[:2] == ["bytes", "#sent"]:
            head = True
        elif head and len(f) >= 8 and f[2].startswith("="):
            # Counts are printed short: 200, 2k, 1m.
            mult = {"k": 1e3, "m": 1e6, "g": 1e9}.get(f[1][-1:].lower(), 1)
            iters = num(f[1][:-1] if mult != 1 else f[1])
            return {"iters": iters * mult if iters is not None else None,
                    "MBps": num(f[5]), "avg_us": num(f[6])}
    return {}


def parse_mpi_bench(client):
    """srd_mpi_bench: "srd_mpi_bench: OP SIZE ITERS USEC" a line (USEC
    per call, one-way for pingpong), and a last line saying whether the
    results were checked.  Metrics "us OP SIZE" and "iters OP SIZE"."""
    m = {}
    for l in client.splitlines():
        f = l.split()
        if f[:1] != ["srd_mpi_bench:"]:
            continue
        if len(f) >= 5 and f[1] in MPI_OPS and num(f[4]) is not None:
            m["us %s %s" % (f[1], f[2])] = num(f[4])
            m["iters %s %s" % (f[1], f[2])] = num(f[3])
            if len(f) > 5:
                m["wrong"] = True
        elif f[-2:] == ["results", "checked"]:
            m["checked"] = True
    return m


def parse_mem(text):
    """bench-guest.sh mem_sampler_start: lines of the client guest's
    Slab, VmallocUsed and vmalloc'd + vmap'd area pages in kB, the
    baseline first, then a sample every half second of the run.  The
    kernel memory is Slab + areas; each figure's rise over the baseline
    to the level it held for three samples at least."""
    rows = []
    for l in text.splitlines():
        f = l.split()
        if len(f) == 3 and all(x.lstrip("-").isdigit() for x in f):
            slab, vm, area = (int(x) for x in f)
            rows.append((slab + area, slab, vm, area))
    if len(rows) < 2:
        return {}
    # The level held for three samples (1.5 s) at least: a QP lives for
    # the run, and a one-sample spike (seen once, 47 MB of vmap at a
    # program's start) is not its memory.
    rise = [sorted(r[i] for r in rows[1:])[-min(3, len(rows) - 1)] - rows[0][i]
            for i in range(4)]
    return {"mem_rise_kB": rise[0], "slab_rise_kB": rise[1],
            "vmalloc_used_rise_kB": rise[2], "vm_area_rise_kB": rise[3],
            "mem_samples": len(rows) - 1}


def parse(rec, raw):
    m = parse_tool(rec, raw)
    m.update(parse_mem(read_text(os.path.join(raw, rec["id"] + ".mem.txt"))))
    return m


def parse_tool(rec, raw):
    client = read_text(os.path.join(raw, rec["id"] + ".client.txt"))
    server = read_text(os.path.join(raw, rec["id"] + ".server.txt"))
    tool = rec["tool"]
    if tool == "iperf3":
        return parse_iperf3(client, server)
    if tool == "sockperf" and rec["group"] == "incast":
        m = parse_sockperf_ul(client)
        # sockperf halves its round trips; SRD's completion times are
        # whole ones (the message there, its ACK back).
        for k in ("avg_us", "p50_us", "p99_us", "p999_us"):
            if k in m:
                m[k] *= 2
        if "sent_msgs" in m:
            m["MBps"] = m["sent_msgs"] * int(rec["size"]) / m["secs"] / 1e6
        return m
    if tool == "sockperf":
        return parse_sockperf(client)
    if tool == "ib_send_bw":
        return parse_ib_send_bw(client, server)
    if tool == "ib_send_lat":
        return parse_ib_send_lat(client)
    if tool == "srd_perf":
        return parse_srd_perf(client)
    if tool == "fi_pingpong":
        return parse_fi_pingpong(client)
    if tool == "srd_mpi_bench":
        return parse_mpi_bench(client)
    return {}


def primary(rec):
    """The figure a row must have: bandwidth or median latency."""
    m = rec["metrics"]
    if rec["tool"] == "fi_pingpong":
        return m.get("avg_us")
    if rec["tool"] == "srd_mpi_bench":
        # Every figure, and every result right.
        n = sum(1 for k in m if k.startswith("us "))
        return n if n and m.get("checked") and not m.get("wrong") else None
    return m.get("MBps") if rec["mode"] == "bw" else m.get("p50_us")


def status(rec):
    if rec["note"].startswith("skip:"):
        return "skip"
    if rec["client_rc"] == "-":
        return "failed"
    if rec["client_rc"] != "0":
        return "failed"
    return "ok" if primary(rec) is not None else "no figure"


def cpu_per_gb(rec, params):
    """Guest CPU seconds (all CPUs, user+system+irq+softirq, from
    /proc/stat over the whole command, setup included) per 10^9 payload
    bytes, for the client and the server guest."""
    m = rec["metrics"]
    if rec["mode"] != "bw" or m.get("MBps") is None:
        return
    secs = m.get("secs") or num(params.get("DUR"))
    gb = m["MBps"] * 1e6 * secs / 1e9
    hz = num(rec["hz"]) or 100
    for side in ("client", "server"):
        t = num(rec[side + "_busy_ticks"])
        if t is not None and gb > 0:
            m[side + "_cpu_s_per_GB"] = t / hz / gb


# ---- the table -------------------------------------------------------

def fmt(v, digits=1):
    """At least DIGITS decimals, and three significant digits below 1
    (rxe moves 64 B messages at a few kB/s here)."""
    if v is None:
        return "—"
    if abs(v) >= 100:
        return "%.0f" % v
    if 0 < abs(v) < 1:
        return "%.3g" % v
    return ("%%.%df" % digits) % v


def size_name(s):
    s = int(s)
    if s >= 1048576 and s % 1048576 == 0:
        return "%d MiB" % (s // 1048576)
    if s >= 1024 and s % 1024 == 0:
        return "%d KiB" % (s // 1024)
    return "%d B" % s


def why_not(rec):
    st = rec["status"]
    if st == "skip":
        return "n/a"

    if rec["client_rc"] == "-":
        return "not run: " + rec["note"]
    if rec["client_rc"] in ("124", "137"):
        return "timed out"
    if rec["client_rc"] != "0":
        return "failed (exit %s)" % rec["client_rc"]
    return "no figure in the output"


def cell(rec, fn):
    if rec is None:
        return "not run"
    if rec["status"] != "ok":
        return why_not(rec)
    return fn(rec["metrics"])


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


def lat_cell(m):
    return "%s / %s / %s%s" % (fmt(m.get("p50_us")), fmt(m.get("p99_us")),
                               fmt(m.get("p999_us")), " (%s)" % m["odd"] if m.get("odd") else "")


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return "%.2f" % (a / b)


def table(dirname, recs, params, machine):
    by = {r["id"]: r for r in recs}
    sizes = params.get("SIZES", "").split()
    losses = params.get("LOSSES", "").split()
    lsize = params.get("LOSS_SIZE", "65536")
    dur = params.get("DUR")
    # Quick mode does not measure 0 % loss again: the bandwidth rows of
    # the same size are that measurement.
    zero_from_bw = "0" not in losses and lsize in sizes
    if zero_from_bw:
        losses = ["0"] + losses
        for t, bw in (("loss-srd-0", "srd-bw-"), ("loss-rxe-rc-0", "rxe-rc-bw-")):
            if bw + lsize in by:
                by[t] = by[bw + lsize]
    depth = params.get("DEPTH")
    out = []
    w = out.append
    w("# softsrd benchmark%s" % (" (quick mode)" if params.get("QUICK") == "1" else ""))
    w("")
    w("- Date: %s; kernel %s; commit %s" % (machine.get("date"), machine.get("kernel"),
                                          machine.get("commit")))
    w("- Machine: %s CPUs, %s; qemu %s (TCG), load average at start %s; other "
      "guests may have shared the machine" % (machine.get("nproc"), machine.get("cpu"),
                                             machine.get("qemu"), machine.get("load")))
    w("- Path: two guests (2 vCPUs each) joined by one virtio-net link over qemu "
      "UDP socket networking, MTU %s; rxe0 and srd0 on the same NIC in both" % params.get("MTU"))
    w("- Bandwidth: %s sends in flight (perftest -t, srd_perf -D), sleeping on a "
      "completion channel when idle (perftest -e, srd_perf -E); srd_perf runs %s s "
      "per size, perftest a count of messages (-n; -e has no timed mode); "
      "MB = 10^6 bytes; latencies one-way (half the round trip) in µs, "
      "busy-polling" % (depth, dur))
    if machine.get("duration_s"):
        w("- The run took %s s, both guests' boot included" % machine["duration_s"])
    only = params.get("ONLY", "").strip("'\"")
    if only:
        w("- Only the measurements matching `%s` (bench.sh --only); the rest "
          "were not measured" % only)
    srd_params = params.get("SRD_PARAMS", "").strip("'\"")
    if srd_params:
        w("- rdma_srd's module parameters set in both guests: `%s` (bench.sh --param); "
          "the others at their defaults" % srd_params)
    pin = params.get("PIN", "")
    if pin:
        w("- Every program of both guests on their CPU %s (bench.sh --pin)" % pin)
    regen = ""
    if params.get("QUICK") == "1":
        regen += " BENCH_QUICK=1"
    if only:
        regen += " BENCH_ONLY='%s'" % only
    if srd_params:
        regen += " BENCH_PARAMS='%s'" % srd_params
    if pin:
        regen += " BENCH_PIN=%s" % pin
    w("- Regenerate: `make bench KVER=%s%s`; raw outputs: `%s`" % (
        machine.get("kernel"), regen,
        os.path.relpath(dirname, os.path.dirname(os.path.dirname(os.path.dirname(dirname))))
        if "/build/bench/" in dirname else dirname))
    removed = read_text(os.path.join(dirname, "rxe_removed")).strip()
    if removed:
        w("- Note: " + removed + " (rxe rows ran first, with srd0 present)")
    w("")

    u, ul = by.get("udp_bw"), by.get("udp_lat")
    w("## Limit: the link itself")
    w("")
    w("| Measure | Result |")
    w("|---|---|")
    w("| raw UDP throughput (iperf3 -u -b 0, %s B datagrams, received) | %s |" % (
        u["size"] if u else "?",
        cell(u, lambda m: "%s Mb/s = %s MB/s (%s %% lost)" % (
            fmt(m.get("Mbps")), fmt(m.get("MBps")), fmt(m.get("lost_pct"))))))
    w("| UDP latency (sockperf ping-pong, 64 B, one-way): avg / p50 / p99 / p99.9 µs | %s |" % cell(
        ul, lambda m: "%s / %s" % (fmt(m.get("avg_us")), lat_cell(m))))
    w("")

    rows = [("rxe RC (perftest)", "rxe-rc"), ("rxe UD (perftest)", "rxe-ud"),
            ("softsrd UD (perftest)", "srd-ud"), ("softsrd SRD (srd_perf)", "srd")]
    w("## Bandwidth, MB/s")
    w("")
    w("The RDMA rows: the client writes into or reads from the server's memory, "
      "at the same depth; srd_perf checks the bytes of every read, and of the "
      "last write to each server buffer.  The busy-polling rows are rxe RC and "
      "SRD measured with the tools' default, spinning on the CQ (perftest -D "
      "%s s): each guest's spinning vCPU then takes one of the host's two "
      "cores from the kernel work it waits for." % dur)
    w("")
    if any(r["metrics"].get("receiver") for r in recs):
        w("(receiver's): perftest's client printed 0.00 MB/s; the figure is "
          "the server's, of the same run.")
        w("")
    w("| Transport | " + " | ".join(size_name(s) for s in sizes) + " |")
    w("|---|" + "---|" * len(sizes))
    spin = [t for t, _ in SPIN_ROWS]
    for name, t in rows + [(n, t) for t, n in RDMA_OPS + SPIN_ROWS + (EFA_PERFTEST,)]:
        cells = []
        for s in sizes:
            rid = "%s-bw-%s" % (t, s)
            if t in spin and rid not in by:
                cells.append("not measured")  # only the large sizes spin
            else:
                cells.append(cell(by.get(rid), lambda m: fmt(m.get("MBps")) +
                                  (" (receiver's)" if m.get("receiver") else "")))
        w("| %s | %s |" % (name, " | ".join(cells)))
    w("")
    skipped = sorted({r["note"][len("skip: "):] for r in recs if r["status"] == "skip"})
    if skipped:
        w("n/a: " + "; ".join(skipped) + ".")
        w("")
    w("## Latency, µs one-way: p50 / p99 / p99.9")
    w("")
    iters = [by[i]["metrics"].get("iters") for i in by if "-lat-" in i]
    w("Round trips per run: %s (perftest -n, srd_perf -n); with a few hundred or "
      "less, p99.9 is about the maximum." % ", ".join(sorted({"%d" % n for n in iters if n}, key=int)))
    w("")
    w("| Transport | " + " | ".join(size_name(s) for s in sizes) + " |")
    w("|---|" + "---|" * len(sizes))
    for name, t in rows + [(EFA_PERFTEST[1].replace(", busy-polling", ""), EFA_PERFTEST[0])]:
        w("| %s | %s |" % (name, " | ".join(
            cell(by.get("%s-lat-%s" % (t, s)), lat_cell) for s in sizes)))
    w("")

    w("## libfabric over softsrd: fi_pingpong -e rdm")
    w("")
    w("Debian's fi_pingpong, with libfabric 1.17's efa provider on softsrd's "
      "libefa (srd-efa-run), srd0 made anew in the efa limits profile and rxe0 "
      "removed (the efa provider wants no other RDMA device), shared memory "
      "off; one size per run.  fi_pingpong reports an average only: half a "
      "round trip (usec/xfer), and MB/s; its clock includes the endpoints' "
      "first exchange, about 0.2 s here, spread over the run's round trips "
      "(%s)." % ", ".join(sorted({"%d" % r["metrics"]["iters"] for r in recs
                                   if r["id"].startswith(FI_RDM) and r["metrics"].get("iters")},
                                  key=int)))
    w("")
    w("| | " + " | ".join(size_name(s) for s in sizes) + " |")
    w("|---|" + "---|" * len(sizes))
    w("| one-way average, µs | %s |" % " | ".join(
        cell(by.get("%s-%s" % (FI_RDM, s)), lambda m: fmt(m.get("avg_us"))) for s in sizes))
    w("| MB/s | %s |" % " | ".join(
        cell(by.get("%s-%s" % (FI_RDM, s)), lambda m: fmt(m.get("MBps"))) for s in sizes))
    w("")

    fallback_table(w, by, sizes)

    ls = RDMA_LAT_SIZE
    w("## SRD RDMA latency at %s, µs round trip: p50 / p99 / p99.9" % size_name(ls))
    w("")
    w("One signalled op at a time, post to completion (write: the data placed "
      "and acknowledged at the target; read: the data back), not halved: a "
      "round trip.  The send row is srd_perf's ping-pong, doubled back to a "
      "round trip, for comparison.")
    w("")
    w("| Operation | Round trip |")
    w("|---|---|")
    for t, name in RDMA_OPS:
        w("| %s | %s |" % (name, cell(by.get("%s-lat-%s" % (t, ls)), lat_cell)))
    send_lat = by.get("srd-lat-" + ls)
    w("| softsrd SRD send ping-pong (srd_perf, 2 × one-way) | %s |" % (
        cell(send_lat, lambda m: lat_cell({k: (m.get(k) * 2 if m.get(k) is not None else None)
                                           for k in ("p50_us", "p99_us", "p999_us")}))
        if send_lat else "not measured (size not in this run)"))
    w("")

    csize = "65536" if "65536" in sizes else sizes[-1] if sizes else lsize
    w("## CPU cost at %s, guest CPU seconds per GB moved" % size_name(csize))
    w("")
    w("Whole-guest non-idle time from /proc/stat (user, system, irq and softirq "
      "of both vCPUs, so rxe's and srd's kernel work counts) over the whole "
      "command including its setup, per 10^9 payload bytes; the sender is the "
      "client guest.  srd_perf's own figure is its process's user+system time.")
    w("")
    w("| Transport | client (sender) guest | server (receiver) guest | sender process |")
    w("|---|---|---|---|")
    for name, rid in (("softsrd SRD", "srd-bw-" + csize), ("rxe RC", "rxe-rc-bw-" + csize),
                      ("softsrd SRD RDMA write", "srd-write-bw-" + csize),
                      ("softsrd SRD RDMA read (the data flows from the server guest)", "srd-read-bw-" + csize)):
        r = by.get(rid)
        w("| %s | %s | %s | %s |" % (
            name, cell(r, lambda m: fmt(m.get("client_cpu_s_per_GB"), 2)),
            cell(r, lambda m: fmt(m.get("server_cpu_s_per_GB"), 2)),
            cell(r, lambda m: fmt(m.get("cpu_s_per_GB"), 2)) if rid.startswith("srd")
            else "not reported by perftest"))
    w("")

    counters_table(w, dirname, sizes)

    w("## Goodput under random loss, %s messages, MB/s" % size_name(lsize))
    w("")
    w("netem loss on both guests' egress (data and acknowledgements).")
    if zero_from_bw:
        w("The 0 % row is the bandwidth table's (quick mode measures it once).")
    w("")
    w("| Loss | softsrd SRD (srd_perf) | rxe RC (ib_send_bw) |")
    w("|---|---|---|")
    for l in losses:
        w("| %s %% | %s | %s |" % (
            l, cell(by.get("loss-srd-" + l), lambda m: fmt(m.get("MBps"))),
            cell(by.get("loss-rxe-rc-" + l), lambda m: fmt(m.get("MBps")))))
    w("")

    def val(rid, key="MBps"):
        return metric(by, rid, key)

    w("## Ratios (this run)")
    w("")
    w("| Ratio | Value |")
    w("|---|---|")
    for s in ("65536", "1048576"):
        if s in sizes:
            w("| SRD bw / rxe RC bw at %s | %s |" % (
                size_name(s), ratio(val("srd-bw-" + s), val("rxe-rc-bw-" + s))))
    for s in ("65536", "1048576"):
        if s in sizes:
            for t, op in (("srd-write", "write"), ("srd-read", "read")):
                w("| SRD RDMA %s bw / SRD send bw at %s | %s |" % (
                    op, size_name(s), ratio(val("%s-bw-%s" % (t, s)), val("srd-bw-" + s))))
    for s in ("65536", "1048576"):
        if s in sizes:
            w("| busy-polling: SRD bw / rxe RC bw at %s | %s |" % (
                size_name(s), ratio(val("srd-spin-bw-" + s), val("rxe-rc-spin-bw-" + s))))
    for s in ("65536", "1048576"):
        if s in sizes:
            w("| busy-polling: perftest -c SRD bw / rxe RC bw at %s | %s |" % (
                size_name(s), ratio(val("srd-efa-bw-" + s), val("rxe-rc-spin-bw-" + s))))
    best = max([v for v in (val("srd-bw-" + s) for s in sizes) if v is not None], default=None)
    w("| best SRD bw / raw UDP | %s |" % ratio(best, val("udp_bw")))
    s0 = "64" if "64" in sizes else sizes[0] if sizes else None
    if s0:
        w("| SRD p50 / rxe RC p50 at %s | %s |" % (
            size_name(s0), ratio(val("srd-lat-" + s0, "p50_us"), val("rxe-rc-lat-" + s0, "p50_us"))))
        w("| perftest: ib_send_lat -c SRD p50 / -c RC on rxe p50 at %s | %s |" % (
            size_name(s0), ratio(val("srd-efa-lat-" + s0, "p50_us"), val("rxe-rc-lat-" + s0, "p50_us"))))
        w("| fi_pingpong -e rdm average / ib_send_lat -c SRD average at %s | %s |" % (
            size_name(s0), ratio(val("%s-%s" % (FI_RDM, s0), "avg_us"),
                                 val("srd-efa-lat-" + s0, "avg_us"))))
    if "1" in losses and "0" in losses:
        w("| SRD goodput at 1 %% loss / loss-free | %s |" % ratio(val("loss-srd-1"), val("loss-srd-0")))
    if s0:
        w("| fi_pingpong -e rdm average: efa on softsrd / tcp at %s | %s |" % (
            size_name(s0), ratio(val("%s-%s" % (FI_RDM, s0), "avg_us"),
                                 val("%s-%s" % (FI_TCP, s0), "avg_us"))))
    for s in ("65536", "1048576"):
        if s in sizes:
            w("| fi_pingpong -e rdm MB/s: efa on softsrd / tcp at %s | %s |" % (
                size_name(s), ratio(val("%s-%s" % (FI_RDM, s)), val("%s-%s" % (FI_TCP, s)))))
    for np_ in MPI_NPS:
        worst, over = mpi_worst(by, np_)
        if worst:
            w("| MPI, %s ranks: largest efa / tcp time (%s at %s) | %.2f |" % (
                np_, worst[1], size_name(worst[2]), worst[0]))
            w("| MPI, %s ranks: (op, size)s where efa took longer than tcp | %s |" % (
                np_, ", ".join("%s %s" % (op, size_name(sz)) for op, sz in over) or "none"))
    w("")
    scale_table(w, by, params, val)
    incast_table(w, by, params)
    mp0, mp1 = by.get("multipath-0"), by.get("multipath-1")
    mpx = by.get("multipath-mix")
    w("## Multipath: four ECMP links, one black-holed or three troubled, %s messages"
      % size_name(lsize))
    w("")
    w("Inside the client guest: SRD between two namespaces joined by two "
      "routers and four equal-cost links (L4 hash), srd_perf at depth %s for "
      "%s s; then the same with one link dropping everything both ways "
      "(netem loss 100 %%); then with issue 49's mix: loss 5 %% on p1's data, "
      "loss 5 %% with 1 ms delay, 25 %% reordered, on q2's ACKs, duplication "
      "5 %% and corruption 1 %% on p3's data.  rxe cannot take part: it works "
      "in init_net only on these kernels.  p99 is of message completion "
      "times." % (depth, dur))
    w("")
    w("| Links | Goodput MB/s | p50 / p99 µs | messages corrupt / duplicate / missing |")
    w("|---|---|---|---|")
    for name, r in (("4 of 4 up", mp0), ("3 of 4 up, 1 black-holed", mp1),
                    ("4 of 4 up, 3 troubled (issue 49's mix)", mpx)):
        w("| %s | %s | %s | %s |" % (
            name, cell(r, lambda m: fmt(m.get("MBps"))),
            cell(r, lambda m: "%s / %s" % (fmt(m.get("p50_us"), 0), fmt(m.get("p99_us"), 0))),
            cell(r, lambda m: "%d / %d / %d" % (m.get("corrupt", -1), m.get("dup", -1),
                                                 m.get("missing", -1)))))
    w("")
    w("| Ratio | Value |")
    w("|---|---|")
    w("| SRD goodput, 1 of 4 links black-holed / all up | %s |" % ratio(
        val("multipath-1"), val("multipath-0")))
    w("| SRD goodput, issue 49's mix on 3 of 4 links / all up | %s |" % ratio(
        val("multipath-mix"), val("multipath-0")))
    w("")
    eng = read_text(os.path.join(dirname, "engine.txt")).strip()
    w("## The engine alone, on the host")
    w("")
    w("`build/engine/bench` (engine/tests/bench.c): two engines in one thread "
      "exchanging messages through memory, no network and no VM, %s B "
      "messages in 1400 B packets; packets (DATA and ACK, both directions) per "
      "CPU second of that one thread.  `copy=0`: the engine's own cost; "
      "`copy=1`: with the payload copies an OS makes (into the packet, out "
      "to the buffer).  Packet buffers are recycled last-freed-first, as "
      "the kernel's slab recycles skbs." % "65536")
    w("")
    if eng:
        best, runs = engine_best(eng)
        w("| Run | packets/s | DATA packets/s | MB/s |")
        w("|---|---|---|---|")
        for key, kv in best.items():
            w("| %s, copy=%s%s | %s | %s | %s |" % (
                key[0], key[1], " (best of %d)" % runs[key] if runs[key] > 1 else "",
                fmt(num(kv.get("pkts_per_s")) / 1e6, 2) + " M",
                fmt(num(kv.get("data_pkts_per_s")) and num(kv.get("data_pkts_per_s")) / 1e6, 2) + " M",
                fmt(num(kv.get("MB_per_s")))))
        ns = engine_ns(best)
        if ns:
            ns0, ns1 = ns
            w("")
            w("A packet costs the engine %.0f ns (copy=0); the two copies add %.0f ns "
              "(copy=1 less copy=0): the engine / the copies %s." % (
                  ns0, ns1 - ns0, "%.2f" % (ns0 / (ns1 - ns0)) if ns1 > ns0 else "n/a"))
    else:
        w("not measured in this run")
    w("")
    bad = [r for r in recs if r["status"] not in ("ok", "skip")]
    if bad:
        w("## Rows without a figure")
        w("")
        for r in bad:
            w("- `%s`: %s (raw/%s.client.txt)" % (r["id"], why_not(r), r["id"]))
        w("")
    return "\n".join(out)


def counter_deltas(raw, rid):
    """The client's hw counters over row @rid: after less before."""
    def load(path):
        out = {}
        for line in read_text(path).splitlines():
            f = line.split()
            if len(f) == 2 and f[1].isdigit():
                out[f[0]] = int(f[1])
        return out
    before = load(os.path.join(raw, rid + ".counters-before"))
    after = load(os.path.join(raw, rid + ".counters-after"))
    if not before or not after:
        return None
    return {k: after[k] - before.get(k, 0) for k in after}


def counters_table(w, dirname, sizes):
    raw = os.path.join(dirname, "raw")
    rows = []
    for s in sizes:
        d = counter_deltas(raw, "srd-bw-" + s)
        if d and d.get("srd_tx_data_pkts"):
            rows.append((s, d))
    if not rows:
        return
    w("## SRD bulk sends: the sender's counters")
    w("")
    w("The client's hw counters around each srd_perf bandwidth row (raw/ID.counters-before "
      "and -after): ACKs it received per DATA packet it sent; the share of its DATA packets "
      "that were retransmissions, and that were retransmissions the receiver reported as "
      "needless (DUP); RTO expiries; and how often the congestion window held a packet back.")
    w("")
    w("| Size | DATA packets | ACKs per DATA packet | retransmitted | needless | RTOs | window stalls |")
    w("|---|---|---|---|---|---|---|")
    for s, d in rows:
        n = d["srd_tx_data_pkts"]
        w("| %s | %d | %.2f | %.1f %% | %.1f %% | %d | %d |" % (
            size_name(s), n, d.get("srd_acks_received", 0) / n,
            100.0 * d.get("srd_retransmits", 0) / n,
            100.0 * d.get("srd_spurious_retransmits", 0) / n,
            d.get("srd_rto_expired", 0), d.get("srd_cwnd_stalls", 0)))
    w("")


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


def fallback_table(w, by, sizes):
    """Issue 48's fallback rows: fi_pingpong's tcp provider beside its
    efa provider on softsrd, and Open MPI over mtl ofi + efa beside btl
    tcp."""
    w("## Against the fallback: libfabric's tcp provider, Open MPI over TCP")
    w("")
    w("What EFA users run where there is no EFA.  libfabric: the same "
      "fi_pingpong -e rdm, one size per run, with the efa provider on softsrd "
      "(the table above) and with -p tcp (libfabric stacks ofi_rxm on tcp for "
      "FI_EP_RDM), in turn at each size, the same round trips; MB/s is "
      "fi_pingpong's, a ping-pong's (one message in flight), not a streaming "
      "bandwidth: Debian ships no fabtests.  Ratios efa / tcp: below 1 the "
      "latency, above 1 the MB/s favour softsrd.")
    w("")
    w("| | " + " | ".join(size_name(s) for s in sizes) + " |")
    w("|---|" + "---|" * len(sizes))
    for name, key in (("one-way average, µs", "avg_us"), ("MB/s", "MBps")):
        for t, pname in ((FI_RDM, "efa on softsrd"), (FI_TCP, "tcp;ofi_rxm")):
            w("| %s, %s | %s |" % (name, pname, " | ".join(
                cell(by.get("%s-%s" % (t, s)), lambda m, k=key: fmt(m.get(k))) for s in sizes)))
        w("| %s, efa / tcp | %s |" % (name, " | ".join(
            ratio(metric(by, "%s-%s" % (FI_RDM, s), key), metric(by, "%s-%s" % (FI_TCP, s), key))
            for s in sizes)))
    w("")
    msizes = mpi_sizes(by)
    w("Open MPI 4.1 (Debian's), srd_mpi_bench: ranks half in each guest; "
      "efa: pml cm, mtl ofi, libfabric's efa provider on softsrd (shared "
      "memory off, so ranks of one guest also talk over srd0); tcp: pml ob1, "
      "btl tcp,self.  µs per call (ping-pong: one way, ranks i and i + N/2 in "
      "pairs at once), the slowest rank's mean over about 0.25 s; cells "
      "efa / tcp (ratio, below 1 favours softsrd).")
    w("")
    for np_ in MPI_NPS:
        e, t = by.get("mpi-efa-np" + np_), by.get("mpi-tcp-np" + np_)
        if not e and not t:
            w("%s ranks: not run." % np_)
            w("")
            continue
        w("%s ranks: efa %s, tcp %s." % (
            np_, e["status"] if e else "not run", t["status"] if t else "not run"))
        if not msizes:
            w("")
            continue
        w("")
        w("| Size | " + " | ".join(MPI_OPS) + " |")
        w("|---|" + "---|" * len(MPI_OPS))
        for s in msizes:
            cells = []
            for op in MPI_OPS:
                k = "us %s %s" % (op, s)
                a = e["metrics"].get(k) if e else None
                b = t["metrics"].get(k) if t else None
                cells.append("%s / %s (%s)" % (fmt(a), fmt(b), ratio(a, b)))
            w("| %s | %s |" % (size_name(s), " | ".join(cells)))
        w("")


def scale_table(w, by, params, val):
    """bench-guest.sh scale_rows: N QP pairs to one peer."""
    qps = params.get("SCALE_QPS", "").split()
    if not qps:
        return
    w("## Many QPs to one peer: %s sends, %s in flight in all" % (
        size_name(params.get("SCALE_SIZE", "0")), params.get("SCALE_INFLIGHT")))
    w("")
    w("N QP pairs between the two guests, each client QP sending to its "
      "server QP, the in-flight sends split evenly among them (at least "
      "one per QP): srd_perf -q N -D depth -E, sleeping on its completion "
      "channel as in every SRD bandwidth row, and ib_send_bw -q N -t depth "
      "on rxe RC (N connected QP pairs), busy-polling: with -e it hung at 16 "
      "and 1024 QPs in every try.  So the SRD/rxe RC ratios are not like "
      "for like (the busy-polling rows above show what spinning costs each); "
      "SRD's own ratios across N are.  Kernel memory: in the client guest, Slab plus the pages "
      "of vmalloc'd and vmap'd areas (/proc/vmallocinfo: rxe's queues, "
      "srd's rings), sampled every half second: its rise over the moment "
      "before the run to the highest level it held for three samples; it "
      "includes what the run's traffic holds (packets in flight), and each "
      "part's rise is in results.json.")
    w("")
    w("| QP pairs | SRD MB/s | rxe RC MB/s | SRD kernel memory rise, kB | rxe RC kernel memory rise, kB |")
    w("|---|---|---|---|---|")
    for n in qps:
        s, r = by.get("srd-scale-" + n), by.get("rxe-rc-scale-" + n)
        w("| %s | %s | %s | %s | %s |" % (
            n, cell(s, lambda m: fmt(m.get("MBps"))), cell(r, lambda m: fmt(m.get("MBps"))),
            cell(s, lambda m: "%d" % m["mem_rise_kB"] if "mem_rise_kB" in m else "—"),
            cell(r, lambda m: "%d" % m["mem_rise_kB"] if "mem_rise_kB" in m else "—")))
    w("")
    w("| Ratio | Value |")
    w("|---|---|")
    for n in qps[1:]:
        w("| SRD goodput, %s QPs / 1 QP | %s |" % (
            n, ratio(val("srd-scale-" + n), val("srd-scale-" + qps[0]))))
    for n in qps[1:]:
        w("| SRD goodput (sleeping) / rxe RC goodput (busy-polling), %s QPs | %s |" % (
            n, ratio(val("srd-scale-" + n), val("rxe-rc-scale-" + n))))
    lo, hi = qps[0], qps[-1]
    for name, t in (("SRD", "srd"), ("rxe RC", "rxe-rc")):
        a = val("%s-scale-%s" % (t, lo), "mem_rise_kB")
        b = val("%s-scale-%s" % (t, hi), "mem_rise_kB")
        per = "—" if a is None or b is None else "%.1f" % ((b - a) / (int(hi) - int(lo)))
        w("| %s kernel memory per extra QP pair, kB ((rise at %s − rise at %s) / %d) | %s |" % (
            name, hi, lo, int(hi) - int(lo), per))
    w("")


def jain(xs):
    """Jain's fairness index: 1 when all are equal, 1/n when one has all."""
    if not xs or not any(xs):
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def incast_table(w, by, params):
    """bench-incast.sh: four senders into one receiver."""
    mbit = params.get("INCAST_MBIT")
    if not mbit:
        return
    cap = float(mbit) / 8
    w("## Incast: %d senders into one receiver through %s Mbit/s, %s messages" % (
        INCAST_N, mbit, size_name(params.get("INCAST_SIZE", "0"))))
    w("")
    w("Inside the client guest: %d namespaces and a receiver's on a bridge, whose "
      "port towards the receiver is a token bucket (tc tbf, %s Mbit/s = %s MB/s, "
      "50 ms of queue).  SRD: four srd_perf clients at once, depth %s each, "
      "%s s; p99 of post-to-completion times.  TCP: four `sockperf under-load "
      "--tcp --mps=max --reply-every 5` at once, the same size; the server answers every 5th "
      "message, and the percentiles are of those round trips (doubled back from "
      "sockperf's halves: the message there, the answer back; SRD's are the "
      "message there, its ACK back); its MB/s is "
      "what the sender wrote (SentMessages), which the socket's buffer lets "
      "run ahead of the bottleneck by at most a few MB." % (
          INCAST_N, mbit, fmt(cap), params.get("DEPTH"), params.get("INCAST_SECS")))
    w("")
    w("| Transport | per sender MB/s | aggregate MB/s | / bottleneck | Jain's index | worst sender's p50 / p99, µs |")
    w("|---|---|---|---|---|---|")
    p99 = {}
    for proto, name in (("srd", "softsrd SRD (srd_perf)"), ("tcp", "TCP (sockperf)")):
        recs, ms = incast_senders(by, proto)
        if ms is None:
            why = next((why_not(r) if r else "not run" for r in recs
                        if not r or r["status"] != "ok"), "not run")
            w("| %s | %s | — | — | — | — |" % (name, why))
            continue
        bw = [m["MBps"] for m in ms]
        p50 = [m.get("p50_us") for m in ms]
        p99[proto] = worst_p99(ms)
        w("| %s | %s | %s | %s | %s | %s |" % (
            name, " / ".join(fmt(x) for x in bw), fmt(sum(bw)), ratio(sum(bw), cap),
            "%.3f" % jain(bw) if jain(bw) is not None else "—",
            "%s / %s" % (fmt(max(x for x in p50 if x is not None), 0) if any(p50) else "—",
                         fmt(p99[proto], 0))))
    w("")
    w("| Ratio | Value |")
    w("|---|---|")
    w("| SRD worst p99 / TCP worst p99 | %s |" % ratio(p99.get("srd"), p99.get("tcp")))
    w("")


def target_rows(d):
    """Issue 17's targets in the run in @d (its results.json, engine.txt):
    a list of (target, ratio or None, its figures, met or None)."""
    try:
        with open(os.path.join(d, "results.json")) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("bench-table.py: %s: no readable results.json (%s); "
                 "bench-table.py %s writes it" % (d, e, d))
    by = {r["id"]: r for r in res["records"]}
    params = res["params"]

    def val(rid, key="MBps"):
        return metric(by, rid, key)

    def div(a, b):
        return None if a is None or b is None or b == 0 else a / b

    rows = []

    def row(name, a, b, goal, unit="", lo=None):
        """a / b, "met" when it is at most (lo None) or at least (lo
        True) goal."""
        r = div(a, b)
        figs = "%s / %s%s" % (fmt(a), fmt(b), unit) if r is not None else "no figure"
        ok = None if r is None else (r >= goal if lo else r <= goal)
        rows.append((name, r, figs, ok))

    efa, rc, ud = ("%s-lat-64" % t for t in ("srd-efa", "rxe-rc", "srd-ud"))
    row("`ib_send_lat -c SRD` p50 ≤ 1.0× `-c RC` on rxe",
        val(efa, "p50_us"), val(rc, "p50_us"), 1.0, " µs")
    row("the same ≤ 1.3× softsrd UD's p50", val(efa, "p50_us"), val(ud, "p50_us"), 1.3, " µs")
    row("its p99 no worse than rxe RC's", val(efa, "p99_us"), val(rc, "p99_us"), 1.0, " µs")
    rc50 = val(rc, "p50_us")
    row("64 B RDMA write round trip ≤ 1.0× rxe RC's send round trip",
        val("srd-write-lat-64", "p50_us"), rc50 and 2 * rc50, 1.0, " µs")
    for s, goal in (("1048576", 0.9), ("65536", 0.7)):
        row("SRD send ≥ %.1f× raw UDP at %s" % (goal, size_name(s)),
            val("srd-bw-" + s), val("udp_bw"), goal, " MB/s", lo=True)
    for op in ("write", "read"):
        for s in ("65536", "1048576"):
            row("RDMA %s ≥ send at %s" % (op, size_name(s)),
                val("srd-%s-bw-%s" % (op, s)), val("srd-bw-" + s), 1.0, " MB/s", lo=True)
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
    # Issue 48, item 2: against the fallback users pick.
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
    ns = engine_ns(engine_best(read_text(os.path.join(d, "engine.txt")))[0])
    row("engine ≤ 0.5× the two copies", ns and ns[0], ns and ns[1] - ns[0], 0.5, " ns")
    return res["machine"], rows


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


def for_doc(t):
    """docs/performance.md's "Current run": table.md without its title,
    its headings a level down, and without the ratios of this run (the
    page's targets carry the ratios that are judged, over several runs)."""
    out, skip = ["## Current run"], False
    for line in t.split("\n")[1:]:
        if line.startswith("## "):
            skip = line == "## Ratios (this run)"
            line = "#" + line
        if not skip:
            out.append(line)
    return "\n".join(out)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--targets"]:
        if len(args) < 2:
            sys.exit("usage: bench-table.py --targets DIR...")
        print(targets(args[1:]))
        return
    check = "--check" in args
    doc = "--doc" in args
    args = [a for a in args if a not in ("--check", "--doc")]
    if len(args) != 1:
        sys.exit("usage: bench-table.py [--check] [--doc] DIR | --targets DIR...")
    d = os.path.abspath(args[0])
    params = read_kv(os.path.join(d, "params"))
    machine = read_kv(os.path.join(d, "machine"))
    recs = []
    try:
        with open(os.path.join(d, "index.tsv")) as f:
            head = f.readline().rstrip("\n").split("\t")
            for line in f:
                recs.append(dict(zip(head, line.rstrip("\n").split("\t"))))
    except FileNotFoundError:
        pass
    for r in recs:
        r["metrics"] = parse(r, os.path.join(d, "raw"))
        cpu_per_gb(r, params)
        r["status"] = status(r)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"machine": machine, "params": params, "records": recs}, f, indent=1)
    t = table(d, recs, params, machine)
    with open(os.path.join(d, "table.md"), "w") as f:
        f.write(t + "\n")
    print(for_doc(t) if doc else t)
    if check:
        by = {r["id"]: r for r in recs}
        must, _ = expected_ids(params)
        missing = [i for i in must if i not in by or by[i]["status"] not in ("ok", "skip")]
        if missing:
            print("bench: FAIL: no figure for: " + ", ".join(missing))
            sys.exit(1)
        print("bench: every row has a figure (%d measurements)" % len(recs))


if __name__ == "__main__":
    main()
