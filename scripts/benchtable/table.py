# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""table.md: a run's records as tables, a function per section, in the
order table() writes them.  Each takes w, the list's append, and adds
its lines.
"""

import os

from benchtable.cells import cell, fmt, lat_cell, ratio, size_name, why_not
from benchtable.parse import num, read_text
from benchtable.rows import (EFA_PERFTEST, FI_RDM, FI_TCP, INCAST_N, MPI_NPS,
                             MPI_OPS, RDMA_LAT_SIZE, RDMA_OPS, SPIN_ROWS,
                             TRANSPORTS, engine_best, engine_ns,
                             incast_senders, jain, metric, mpi_sizes,
                             mpi_worst, values, worst_p99)


def table(dirname, recs, params, machine):
    """table.md of the run in @dirname (its records, params, machine)."""
    by = {r["id"]: r for r in recs}
    sizes = params.get("SIZES", "").split()
    losses, zero_from_bw = loss_rows(by, params, sizes)
    out = []
    w = out.append
    header(w, dirname, params, machine)
    link_table(w, by)
    bandwidth_table(w, by, recs, params, sizes)
    latency_table(w, by, sizes)
    libfabric_table(w, by, recs, sizes)
    fallback_table(w, by, sizes)
    rdma_latency_table(w, by)
    cpu_table(w, by, params, sizes)
    counters_table(w, dirname, sizes)
    loss_table(w, by, params, losses, zero_from_bw)
    ratios_table(w, by, sizes, losses)
    scale_table(w, by, params, values(by))
    incast_table(w, by, params)
    multipath_table(w, by, params)
    engine_table(w, dirname)
    unfigured(w, recs)
    return "\n".join(out)


def loss_rows(by, params, sizes):
    """The loss rates of the loss table, and whether its 0 % row is the
    bandwidth table's (then @by gets that row under the loss IDs)."""
    losses = params.get("LOSSES", "").split()
    lsize = params.get("LOSS_SIZE", "65536")
    # Quick mode does not measure 0 % loss again: the bandwidth rows of
    # the same size are that measurement.
    zero_from_bw = "0" not in losses and lsize in sizes
    if zero_from_bw:
        losses = ["0"] + losses
        for t, bw in (("loss-srd-0", "srd-bw-"), ("loss-rxe-rc-0", "rxe-rc-bw-")):
            if bw + lsize in by:
                by[t] = by[bw + lsize]
    return losses, zero_from_bw


def header(w, dirname, params, machine):
    """The title and the run's particulars."""
    dur = params.get("DUR")
    depth = params.get("DEPTH")
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


def link_table(w, by):
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


def bandwidth_table(w, by, recs, params, sizes):
    dur = params.get("DUR")
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
    for name, t in TRANSPORTS + [(n, t) for t, n in RDMA_OPS + SPIN_ROWS + (EFA_PERFTEST,)]:
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


def latency_table(w, by, sizes):
    w("## Latency, µs one-way: p50 / p99 / p99.9")
    w("")
    iters = [by[i]["metrics"].get("iters") for i in by if "-lat-" in i]
    w("Round trips per run: %s (perftest -n, srd_perf -n); with a few hundred or "
      "less, p99.9 is about the maximum." % ", ".join(sorted({"%d" % n for n in iters if n}, key=int)))
    w("")
    w("| Transport | " + " | ".join(size_name(s) for s in sizes) + " |")
    w("|---|" + "---|" * len(sizes))
    for name, t in TRANSPORTS + [(EFA_PERFTEST[1].replace(", busy-polling", ""), EFA_PERFTEST[0])]:
        w("| %s | %s |" % (name, " | ".join(
            cell(by.get("%s-lat-%s" % (t, s)), lat_cell) for s in sizes)))
    w("")


def libfabric_table(w, by, recs, sizes):
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


def rdma_latency_table(w, by):
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


def cpu_table(w, by, params, sizes):
    lsize = params.get("LOSS_SIZE", "65536")
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


def loss_table(w, by, params, losses, zero_from_bw):
    lsize = params.get("LOSS_SIZE", "65536")
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


def ratios_table(w, by, sizes, losses):
    """The ratios of this run (--doc leaves them out)."""
    val = values(by)
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


def multipath_table(w, by, params):
    lsize = params.get("LOSS_SIZE", "65536")
    dur = params.get("DUR")
    depth = params.get("DEPTH")
    val = values(by)
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


def engine_table(w, dirname):
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


def unfigured(w, recs):
    """The rows without a figure, and why."""
    bad = [r for r in recs if r["status"] not in ("ok", "skip")]
    if bad:
        w("## Rows without a figure")
        w("")
        for r in bad:
            w("- `%s`: %s (raw/%s.client.txt)" % (r["id"], why_not(r), r["id"]))
        w("")
