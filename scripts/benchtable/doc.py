# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""--doc: table.md as docs/performance.md's "Current run" has it."""


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
