#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Verbs the kernel refuses, for the device's *_err counters (EFA's
create_cq_err, create_qp_err, reg_mr_err): a CQ deeper than the device
allows, a UD QP with more send WRs than it allows, and an MR asking for
remote atomic access, which softsrd has not.  Each must fail; TAP output.

    srd_verb_errors.py DEV
"""
import sys

try:
    import pyverbs.enums as e
    from pyverbs.cq import CQ
    from pyverbs.device import Context
    from pyverbs.mr import MR
    from pyverbs.pd import PD
    from pyverbs.qp import QP, QPCap, QPInitAttr
except ImportError as err:
    print("SKIP: python3-pyverbs is not installed (%s)" % err)
    sys.exit(4)

results = []


def refused(what, fn):
    try:
        fn()
    except Exception as err:  # pyverbs raises PyverbsRDMAError and kin
        results.append(True)
        print("ok %d %s refused (%s)" % (len(results), what, err))
        return
    results.append(False)
    print("not ok %d %s was not refused" % (len(results), what))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: srd_verb_errors.py DEV")
    ctx = Context(name=sys.argv[1])
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    refused("a CQ of 2^30 entries", lambda: CQ(ctx, 1 << 30))
    cap = QPCap(max_send_wr=1 << 30, max_recv_wr=16)
    refused("a UD QP of 2^30 send WRs",
            lambda: QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                                      cap=cap)))
    refused("an MR with remote atomic access",
            lambda: MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE |
                       e.IBV_ACCESS_REMOTE_ATOMIC))
    print("1..%d" % len(results))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
