#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Create N completion queues of CQE entries each on DEV, as any process
may, and print how much the memory cgroup the process runs in was charged
for them: "charged BYTES for N CQs of CQE entries".  For srd_memcg.sh.

    srd_memcg.py DEV N CQE
"""
import sys

from pyverbs.cq import CQ
from pyverbs.device import Context


def current():
    with open("/proc/self/cgroup") as f:
        path = f.read().strip().split("::", 1)[1]
    with open("/sys/fs/cgroup%s/memory.current" % path) as f:
        return int(f.read())


dev, n, cqe = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ctx = Context(name=dev)
cqs = [CQ(ctx, 16, None, None, 0)]      # warm up pyverbs' own allocations
before = current()
cqs += [CQ(ctx, cqe, None, None, 0) for _ in range(n)]
after = current()
print("charged %d for %d CQs of %d entries" % (after - before, n, cqe), flush=True)
