#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Open DEV with a PD and a CQ, print "ready", and wait for a line on
stdin; then register NMR one-page MRs and create NQP UD QPs.  Meanwhile
the test has set this process's make-it-fail (which takes
CAP_SYS_RESOURCE, so it is done from outside): under failslab's task
filter, the slab allocations that may not sleep fail, and so each insert
of the driver that needs a new xarray node falls back to __xas_nomem(),
which drops the xarray's lock to allocate.  Prints "registered NMR MRs,
created NQP QPs" if every call succeeded.  For srd_insert_nomem.sh.

    srd_insert_nomem.py DEV NMR NQP
"""
import mmap
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: srd_insert_nomem.py DEV NMR NQP")
    dev, nmr, nqp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 16, None, None, 0)
    init = QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                      cap=QPCap(max_send_wr=4, max_recv_wr=4))
    mrs, qps = [], []
    print("ready", flush=True)
    if not sys.stdin.readline():
        sys.exit("stdin ended before the line that says go")
    for _ in range(nmr):
        mrs.append(MR(pd, mmap.PAGESIZE, e.IBV_ACCESS_LOCAL_WRITE))
    for _ in range(nqp):
        qps.append(QP(pd, init))
    print("registered %d MRs, created %d QPs" % (len(mrs), len(qps)),
          flush=True)
    for obj in qps + mrs + [cq, pd, ctx]:
        obj.close()


main()
