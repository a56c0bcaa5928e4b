#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Verbs conformance as rdma-core's own Python tests check it, through
Debian's python3-pyverbs on an srd device: the device attributes they
assert (vendor_id not 0, positive limits), and that a UD QP, legacy and
extended, reports through ibv_query_qp the Q_Key and SQ PSN that
ibv_modify_qp set.  TAP output.

    srd_pyverbs.py DEV
"""
import sys

try:
    import pyverbs.enums as e
    from pyverbs.cq import CQ
    from pyverbs.device import Context
    from pyverbs.pd import PD
    from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr, QPInitAttrEx
except ImportError as err:
    print("SKIP: python3-pyverbs is not installed (%s)" % err)
    sys.exit(4)

PAGE_SIZE = 4096
results = []


def check(ok, what):
    results.append(ok)
    print("%s %d %s" % ("ok" if ok else "not ok", len(results), what))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: srd_pyverbs.py DEV")
    ctx = Context(name=sys.argv[1])
    attr = ctx.query_device()
    check(attr.vendor_id != 0, "vendor_id is not 0 (%#x)" % attr.vendor_id)
    check(attr.vendor_id == 0x737264 and attr.vendor_part_id == 0x5344,
          "vendor_id 0x737264, vendor_part_id 0x5344 (saw %#x, %#x)" %
          (attr.vendor_id, attr.vendor_part_id))
    check(attr.max_mr_size > PAGE_SIZE and attr.page_size_cap >= PAGE_SIZE,
          "max_mr_size %d and page_size_cap %d" % (attr.max_mr_size, attr.page_size_cap))
    for f in ("max_qp", "max_qp_wr", "max_sge", "max_cq", "max_cqe", "max_mr", "max_pd"):
        check(getattr(attr, f) > 0, "%s %d > 0" % (f, getattr(attr, f)))

    pd = PD(ctx)
    cq = CQ(ctx, 100, None, None, 0)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    for kind in ("legacy", "extended"):
        if kind == "legacy":
            qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap))
        else:
            qia = QPInitAttrEx(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap, pd=pd,
                               comp_mask=e.IBV_QP_INIT_ATTR_PD)
            qp = QP(ctx, qia)
        qa = QPAttr()
        qa.qkey = 0x123
        qp.to_init(qa)
        got, _ = qp.query(e.IBV_QP_QKEY)
        check(got.qkey == 0x123, "%s UD QP: query_qp's qkey %#x is modify_qp's" %
              (kind, got.qkey))
        qp.to_rtr(qa)
        qa.sq_psn = 0x45
        qp.to_rts(qa)
        got, _ = qp.query(e.IBV_QP_SQ_PSN)
        check(got.sq_psn == 0x45, "%s UD QP: query_qp's sq_psn %#x is modify_qp's 0x45" %
              (kind, got.sq_psn))
        qa.qp_state = e.IBV_QPS_RESET
        qp.modify(qa, e.IBV_QP_STATE)
        check(qp.qp_state == e.IBV_QPS_RESET, "%s UD QP back in RESET" % kind)
        qp.close()
    cq.close()
    pd.close()
    ctx.close()
    print("# %d checks, %d failed" % (len(results), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
