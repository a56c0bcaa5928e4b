# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A figure, a size or a record as a cell of the tables."""


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


def lat_cell(m):
    return "%s / %s / %s%s" % (fmt(m.get("p50_us")), fmt(m.get("p99_us")),
                               fmt(m.get("p999_us")), " (%s)" % m["odd"] if m.get("odd") else "")


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return "%.2f" % (a / b)
