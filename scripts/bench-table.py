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
#
# The work is in scripts/benchtable/, a module per job: parse.py (raw
# outputs to records), rows.py (the rows a run has, the figures across
# them, --check's list), cells.py, table.py (table.md), targets.py
# (--targets), doc.py (--doc).  This file is the command line.

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The names scripts/host-tests.sh loads this file for, as its own.
from benchtable.cells import lat_cell  # noqa: E402
from benchtable.doc import for_doc  # noqa: E402
from benchtable.parse import (MPI_OPS, parse_ib_send_lat,  # noqa: E402
                              parse_mpi_bench, primary, read_kv, records)
from benchtable.rows import expected_ids  # noqa: E402
from benchtable.table import table  # noqa: E402
from benchtable.targets import target_rows, targets  # noqa: E402

__all__ = ["MPI_OPS", "for_doc", "lat_cell", "main", "parse_ib_send_lat",
           "parse_mpi_bench", "primary", "target_rows"]


def check_rows(recs, params):
    """--check: exit 1 when a row that should have a figure has none."""
    by = {r["id"]: r for r in recs}
    must, _ = expected_ids(params)
    missing = [i for i in must if i not in by or by[i]["status"] not in ("ok", "skip")]
    if missing:
        print("bench: FAIL: no figure for: " + ", ".join(missing))
        sys.exit(1)
    print("bench: every row has a figure (%d measurements)" % len(recs))


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
    recs = records(d, params)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump({"machine": machine, "params": params, "records": recs}, f, indent=1)
    t = table(d, recs, params, machine)
    with open(os.path.join(d, "table.md"), "w") as f:
        f.write(t + "\n")
    print(for_doc(t) if doc else t)
    if check:
        check_rows(recs, params)


if __name__ == "__main__":
    main()
