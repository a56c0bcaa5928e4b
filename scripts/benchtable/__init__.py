# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""scripts/bench-table.py's modules, a job each: parse.py (a run's raw
outputs to records and their figures), rows.py (the rows a run has, and
figures taken across them), cells.py (a figure or a record as a table
cell), table.py (table.md), targets.py (--targets), doc.py (--doc).
"""
