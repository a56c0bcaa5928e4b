#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hold an srd device open, as any process may, in one of these shapes:

  context      ibv_open_device and nothing more
  objects      a context, a PD, a one-page MR, a CQ and a UD QP, whose
               rings the provider has mapped
  cq-event     a context, a completion channel and a CQ armed on it, and
               then blocked in ibv_get_cq_event (a read on the channel)
  async-event  a context, then blocked in ibv_get_async_event (a read on
               the context's async fd)

Prints "holding DEV SHAPE" once everything is created (and, for the
blocking shapes, just before the call that blocks), then waits until
killed.  A blocking call that returns says how, and the holder exits 0:
the device went away under it (ibv_get_async_event is called again after
other events, until IBV_EVENT_DEVICE_FATAL or a failure).
For srd_teardown.sh and srd_held_removal.sh.

    srd_holder.py DEV [SHAPE]      (SHAPE: objects unless given)
"""
import mmap
import signal
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr

SHAPES = ("context", "objects", "cq-event", "async-event")


def holding(dev, shape):
    print("holding %s %s" % (dev, shape), flush=True)


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and
                                       sys.argv[2] not in SHAPES):
        sys.exit("usage: srd_holder.py DEV [%s]" % "|".join(SHAPES))
    dev = sys.argv[1]
    shape = sys.argv[2] if len(sys.argv) == 3 else "objects"
    ctx = Context(name=dev)
    keep = [ctx]
    if shape == "objects":
        pd = PD(ctx)
        cq = CQ(ctx, 16, None, None, 0)
        qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq,
                               cap=QPCap(max_send_wr=4, max_recv_wr=4)))
        # One page: within any RLIMIT_MEMLOCK an unprivileged user has.
        mr = MR(pd, mmap.PAGESIZE, e.IBV_ACCESS_LOCAL_WRITE)
        keep += [pd, cq, qp, mr]
    elif shape == "cq-event":
        channel = CompChannel(ctx)
        cq = CQ(ctx, 16, None, channel, 0)
        cq.req_notify()
        keep += [channel, cq]
        holding(dev, shape)
        try:
            channel.get_cq_event(cq)
            print("ibv_get_cq_event returned an event", flush=True)
        except (PyverbsError, PyverbsRDMAError) as err:
            print("ibv_get_cq_event failed: %s" % err, flush=True)
        return
    elif shape == "async-event":
        holding(dev, shape)
        # The port's events may come first (the netdev going down).
        while True:
            try:
                ev = ctx.get_async_event()
            except (PyverbsError, PyverbsRDMAError) as err:
                print("ibv_get_async_event failed: %s" % err, flush=True)
                return
            if ev.event_type == e.IBV_EVENT_DEVICE_FATAL:
                print("ibv_get_async_event returned IBV_EVENT_DEVICE_FATAL",
                      flush=True)
                return
            print("ibv_get_async_event returned event %d" % ev.event_type,
                  flush=True)
    holding(dev, shape)
    signal.pause()


main()
