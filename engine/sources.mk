# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The SRD engine's sources: the one list every build of them reads, the
# host's (engine/Makefile: tests, simulator, fuzzer, the freestanding
# check) and the module's (kernel/Kbuild).
SRD_ENGINE_SRCS := wire.c seq.c rto.c cc.c path.c msg.c tx.c rdma_op.c queue.c rnr.c \
	recovery.c rx.c peer.c tag.c
