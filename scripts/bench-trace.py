#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Where a latency row's round trips went (scripts/bench.sh --trace).

    scripts/bench-trace.py [--json] DIR ROW [BASE_ROW]

A ping-pong's round trip, as the client's kernel sees it, runs from the
request leaving its NIC (net_dev_xmit) to the answer coming in
(napi_gro_receive_entry).  The server's kernel sees a part of it: from
the request coming in to the answer leaving, its turnaround.  The rest
is the time between the guests: both directions through qemu's network
and the host, and each guest's interrupt.  From the traces bench.sh
--trace records in both guests (DIR/trace/{server,client}-ROW.txt;
each guest's own clock, never compared across guests), this prints per
round trip, for ROW and BASE_ROW beside it:

- the client's round trip, and the server's and the client's turnaround,
  each split at the program's last write() before its answer left
  (libsrd's doorbell): before it, the receive path, the completion and
  the program noticing it; after it, the send path to the NIC; the first
  part split again where rdma_srd wrote the receive's completion
  (a kprobe on srd_complete_recv, named srd_recv_cqe), and the second
  where the NET_RX softirq that wrote it ended (softirq_exit): the
  receive's work after the completion, then the program's; and the
  second part split where rdma_srd handed the packet to UDP (a kprobe on
  srd_xmit), with the time from the NIC driver's notify of the device
  (virtqueue_notify: under TCG, qemu's work for the kick) to the send;
- the time from the NIC's interrupt to the packet reaching the stack;
- the time between the guests, the client's n-th round trip less the
  server's n-th turnaround (when both traced the same number; else the
  difference of the means);
- the messages sent again or received twice (tail probes and their
  duplicates), the local timer's interrupts, the hrtimers started
  (hrtimer_start) and the clock event device programmed (a kprobe and a
  kretprobe on lapic_next_event, the guests' local APIC timer in one-shot
  mode: clockev_set, clockev_set_ret) a round trip, how many of each fell
  in a turnaround, and how long a programming took;
- the share of the turnarounds whose doorbell was written on the CPU
  that wrote the receive's completion: a program on the CPU that takes
  the NIC's interrupts runs the receive's softirq itself, one on the
  other waits for two vCPUs to run (bench.sh --pin).

Medians and means in µs.  A message packet is one of at least the most
common length a guest sent (or received) less 32 bytes (an SRD DATA
without the ACK block it mostly carries); shorter ones (ACKs alone) are
counted apart.  Only the span between the program's first and last
write() is read: its setup and teardown talk TCP on the same NIC.

--json prints the figures as JSON instead of a table.
"""

import argparse
import collections
import json
import os
import re
import statistics
import sys

LINE = re.compile(r"^\s*(?P<task>.*?)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?"
                  r"\[(?P<cpu>\d+)\]\s+(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+"
                  r"(?P<ev>\w+)(?P<sep>:\s?|\()(?P<rest>.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def parse(path):
    """The trace's events as (time s, event, task, fields) in its order;
    fields["cpu"] is the CPU it happened on."""
    evs = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = LINE.match(line)
            if not m:
                continue
            ev = m.group("ev")
            if m.group("sep") == "(":
                # A syscall prints as sys_NAME(ARGS).
                ev = "sys_enter_" + ev[4:] if ev.startswith("sys_") else ev
            fields = dict(FIELD.findall(m.group("rest")))
            fields["cpu"] = m.group("cpu")
            evs.append((float(m.group("ts")), ev, m.group("task"), fields))
    evs.sort(key=lambda e: e[0])
    return evs


def direction(ev, f):
    """"tx" or "rx" for a packet on the NIC (not lo), else None."""
    if f.get("dev") == "lo":
        return None
    return {"net_dev_xmit": "tx", "napi_gro_receive_entry": "rx"}.get(ev)


def guest(path):
    """One guest's turnarounds and waits from its trace."""
    evs = parse(path)
    writers = collections.Counter(e[2] for e in evs if e[1] == "sys_enter_write")
    if not writers:
        raise ValueError("%s: no write() traced" % path)
    prog = writers.most_common(1)[0][0]
    wts = [e[0] for e in evs if e[1] == "sys_enter_write" and e[2] == prog]
    lo, hi = wts[0], wts[-1]
    # Up to the first packet after the last doorbell: the last answer.
    after = [e[0] for e in evs if e[0] > hi and direction(e[1], e[3])]
    hi = after[0] if after else hi
    evs = [e for e in evs if lo <= e[0] <= hi]
    # A message's packet: at least the direction's most common length less
    # an ACK block; shorter ones are ACKs alone.
    lens = {"tx": [], "rx": []}
    for ts, ev, task, f in evs:
        d = direction(ev, f)
        if d:
            lens[d].append(int(f["len"]))
    least = {d: collections.Counter(v).most_common(1)[0][0] - 32
             for d, v in lens.items() if v}
    g = {"prog": prog, "turn": [], "rx_db": [], "db_tx": [], "irq_rx": [], "away": [],
         "rx_cqe": [], "cqe_db": [], "cqe_end": [], "end_db": [], "db_sx": [], "sx_tx": [],
         "vq_tx": [],
         "dup_tx": 0, "dup_rx": 0, "short_tx": 0, "short_rx": 0, "timers": 0,
         "timers_in_turn": 0, "hrtimers": 0, "hrtimers_in_turn": 0,
         "clockev": [], "clockev_in_turn": 0, "db_cqe": 0, "db_on_cqe_cpu": 0}
    clockev_at = {}
    held = away = None
    last_write = last_irq = last_cqe = cqe_end = sent = notified = None
    write_cpu = cqe_cpu = None
    for ts, ev, task, f in evs:
        d = direction(ev, f)
        if d and int(f["len"]) < least[d]:
            g["short_" + d] += 1
        elif ev == "sys_enter_write" and task == prog:
            last_write, write_cpu, sent = ts, f["cpu"], None
        elif ev == "srd_xmit_udp" and task == prog:
            # The doorbell's packet reaching UDP: its first after the write.
            if last_write is not None and sent is None:
                sent = ts
        elif ev == "vq_notify":
            notified = ts
        elif ev == "irq_handler_entry" and re.search(r"-input\.\d+$", f.get("name", "")):
            last_irq = ts
        elif ev == "srd_recv_cqe":
            last_cqe, cqe_cpu, cqe_end = ts, f["cpu"], None
        elif ev == "softirq_exit" and f.get("vec") == "3":
            # NET_RX: the end of the receive that wrote the completion.
            if last_cqe is not None and cqe_end is None and f["cpu"] == cqe_cpu:
                cqe_end = ts
        elif ev == "clockev_set":
            clockev_at[f["cpu"]] = ts
        elif ev == "clockev_set_ret" and f["cpu"] in clockev_at:
            # The local APIC's timer programmed (an MMIO write to qemu).
            g["clockev"].append(ts - clockev_at.pop(f["cpu"]))
            if held is not None:
                g["clockev_in_turn"] += 1
        elif ev == "hrtimer_start":
            g["hrtimers"] += 1
            if held is not None:
                g["hrtimers_in_turn"] += 1
        elif ev == "local_timer_entry":
            g["timers"] += 1
            if held is not None:
                g["timers_in_turn"] += 1
        elif d == "rx":
            if away is not None:
                g["away"].append(ts - away)
                away = None
            if held is not None:
                g["dup_rx"] += 1
                continue
            held = ts
            if last_irq is not None:
                g["irq_rx"].append(ts - last_irq)
                last_irq = None
        elif d == "tx":
            if held is not None:
                g["turn"].append(ts - held)
                if last_write is not None and last_write >= held:
                    g["rx_db"].append(last_write - held)
                    g["db_tx"].append(ts - last_write)
                    if sent is not None and sent <= ts:
                        g["db_sx"].append(sent - last_write)
                        g["sx_tx"].append(ts - sent)
                    if notified is not None and last_write <= notified <= ts:
                        g["vq_tx"].append(ts - notified)
                    if last_cqe is not None and held <= last_cqe <= last_write:
                        g["db_cqe"] += 1
                        g["db_on_cqe_cpu"] += write_cpu == cqe_cpu
                        g["rx_cqe"].append(last_cqe - held)
                        g["cqe_db"].append(last_write - last_cqe)
                        if cqe_end is not None and cqe_end <= last_write:
                            g["cqe_end"].append(cqe_end - last_cqe)
                            g["end_db"].append(last_write - cqe_end)
                held = None
            if away is not None:
                g["dup_tx"] += 1
                continue
            away = ts
    return g


def stat(xs):
    if not xs:
        return None
    return {"n": len(xs), "median": statistics.median(xs) * 1e6,
            "mean": statistics.fmean(xs) * 1e6}


def row(d, r):
    try:
        s = guest(os.path.join(d, "trace", "server-%s.txt" % r))
        c = guest(os.path.join(d, "trace", "client-%s.txt" % r))
    except (OSError, ValueError) as e:
        sys.exit("bench-trace: %s (was the run made with --trace, and did the row run?)" % e)
    rts = c["away"]
    if not rts:
        sys.exit("bench-trace: %s: the client traced no round trip" % r)
    out = {
        "client round trip": stat(rts),
        "server turnaround": stat(s["turn"]),
        "server: receive to doorbell": stat(s["rx_db"]),
        "server: receive to its completion": stat(s["rx_cqe"]),
        "server: completion to doorbell": stat(s["cqe_db"]),
        "server: completion to the receive's end": stat(s["cqe_end"]),
        "server: receive's end to doorbell": stat(s["end_db"]),
        "server: doorbell to send": stat(s["db_tx"]),
        "server: doorbell to rdma_srd's UDP send": stat(s["db_sx"]),
        "server: UDP send to the NIC's send": stat(s["sx_tx"]),
        "server: the NIC's notify to its send": stat(s["vq_tx"]),
        "server: interrupt to receive": stat(s["irq_rx"]),
        "client turnaround": stat(c["turn"]),
        "client: receive to doorbell": stat(c["rx_db"]),
        "client: receive to its completion": stat(c["rx_cqe"]),
        "client: completion to doorbell": stat(c["cqe_db"]),
        "client: completion to the receive's end": stat(c["cqe_end"]),
        "client: receive's end to doorbell": stat(c["end_db"]),
        "client: doorbell to send": stat(c["db_tx"]),
        "client: doorbell to rdma_srd's UDP send": stat(c["db_sx"]),
        "client: UDP send to the NIC's send": stat(c["sx_tx"]),
        "client: the NIC's notify to its send": stat(c["vq_tx"]),
        "client: interrupt to receive": stat(c["irq_rx"]),
    }
    if len(rts) == len(s["turn"]):
        out["between the guests"] = stat([a - b for a, b in zip(rts, s["turn"])])
        out["paired"] = True
    else:
        a, b = stat(rts), stat(s["turn"])
        out["between the guests"] = None if b is None else \
            {"n": 0, "median": a["median"] - b["median"], "mean": a["mean"] - b["mean"]}
        out["paired"] = False
    n = len(rts)
    out["round trips"] = n
    out["programs"] = [s["prog"], c["prog"]]
    for k in ("dup_tx", "dup_rx", "short_tx", "short_rx", "timers", "timers_in_turn",
              "hrtimers", "hrtimers_in_turn", "clockev_in_turn"):
        out["%s a round trip" % k] = [s[k] / n, c[k] / n]
    out["clockev a round trip"] = [len(s["clockev"]) / n, len(c["clockev"]) / n]
    out["doorbells on the completion's CPU"] = [
        x["db_on_cqe_cpu"] / x["db_cqe"] if x["db_cqe"] else None for x in (s, c)]
    out["server: clock event programming"] = stat(s["clockev"])
    out["client: clock event programming"] = stat(c["clockev"])
    return out


def fmt(v):
    return "—" if v is None else ("%.1f" % v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("dir")
    ap.add_argument("row")
    ap.add_argument("base", nargs="?")
    a = ap.parse_args()
    rows = [a.row] + ([a.base] if a.base else [])
    res = {r: row(a.dir, r) for r in rows}
    if a.json:
        json.dump(res, sys.stdout, indent=1, sort_keys=True)
        print()
        return
    print("| µs a round trip, median / mean | " + " | ".join(rows) +
          (" | ratio of medians |" if a.base else " |"))
    print("|---" * (len(rows) + 1 + (1 if a.base else 0)) + "|")
    for k in ("client round trip", "server turnaround", "server: receive to doorbell",
              "server: receive to its completion", "server: completion to doorbell",
              "server: completion to the receive's end", "server: receive's end to doorbell",
              "server: doorbell to send",
              "server: doorbell to rdma_srd's UDP send", "server: UDP send to the NIC's send",
              "server: the NIC's notify to its send", "server: interrupt to receive",
              "client turnaround", "client: receive to doorbell",
              "client: receive to its completion", "client: completion to doorbell",
              "client: completion to the receive's end", "client: receive's end to doorbell",
              "client: doorbell to send",
              "client: doorbell to rdma_srd's UDP send", "client: UDP send to the NIC's send",
              "client: the NIC's notify to its send", "client: interrupt to receive",
              "between the guests", "server: clock event programming",
              "client: clock event programming"):
        cells = []
        for r in rows:
            st = res[r][k]
            cells.append("—" if st is None else "%s / %s" % (fmt(st["median"]), fmt(st["mean"])))
        line = "| %s | %s |" % (k, " | ".join(cells))
        if a.base:
            x, y = res[a.row][k], res[a.base][k]
            ok = x and y and x["median"] and y["median"]
            line += " %s |" % ("%.2f" % (x["median"] / y["median"]) if ok else "—")
        print(line)
    for k, what in (("round trips", "round trips traced"),):
        print("| %s | %s |%s" % (what, " | ".join(str(res[r][k]) for r in rows),
                                 " |" if a.base else ""))
    for k, what in (("dup_tx a round trip", "messages sent again, server / client"),
                    ("dup_rx a round trip", "messages received twice, server / client"),
                    ("short_tx a round trip", "short packets sent (ACKs alone), server / client"),
                    ("timers a round trip", "local timer interrupts, server / client"),
                    ("timers_in_turn a round trip",
                     "of them in a turnaround, server / client"),
                    ("hrtimers a round trip", "hrtimers started, server / client"),
                    ("hrtimers_in_turn a round trip",
                     "of them in a turnaround, server / client"),
                    ("clockev a round trip", "clock event programmings, server / client"),
                    ("clockev_in_turn a round trip",
                     "of them in a turnaround, server / client")):
        print("| %s | %s |%s" % (what, " | ".join(
            "%.2f / %.2f" % tuple(res[r][k]) for r in rows), " |" if a.base else ""))
    print("| doorbells on their completion's CPU, server / client | %s |%s" % (" | ".join(
        " / ".join("—" if x is None else "%.2f" % x
                   for x in res[r]["doorbells on the completion's CPU"]) for r in rows),
        " |" if a.base else ""))
    for r in rows:
        if not res[r]["paired"]:
            print("\n%s: the guests traced different counts; \"between the guests\" is the "
                  "difference of the medians and of the means" % r)


if __name__ == "__main__":
    main()
