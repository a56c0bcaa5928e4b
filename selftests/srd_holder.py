#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hold an srd device open with live objects, as any process may: a
context, a PD, a CQ and a UD QP (no memory registration, so no
RLIMIT_MEMLOCK is needed), then wait until killed.  Prints "holding DEV"
once everything is created.  For srd_teardown.sh.

    srd_holder.py DEV
"""
import signal
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr

ctx = Context(name=sys.argv[1])
pd = PD(ctx)
cq = CQ(ctx, 16, None, None, 0)
qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                       cap=QPCap(max_send_wr=4, max_recv_wr=4)))
print("holding %s" % sys.argv[1], flush=True)
signal.pause()
