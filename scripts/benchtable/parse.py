# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A `make bench` run directory's raw outputs (raw/ID.client.txt and the
like, index.tsv) parsed into records: a record per measurement, with its
figures (metrics) and its status.
"""

import json
import os
import re

MIB = 1048576 / 1e6
# srd_mpi_bench's operations (bench-guest.sh mpi_rows).
MPI_OPS = ("pingpong", "allreduce", "alltoall")


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


def records(d, params):
    """The records of run directory @d: index.tsv's rows, each with its
    metrics parsed from raw/ and its status."""
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
    return recs
