#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SRD QPs (srd_srd_qp.c) between two devices in two namespaces: creation
# and the state machine, SEND and SEND_WITH_IMM up to max_msg_sz, many
# messages in flight over four QP pairs, scatter/gather, the error
# completions (unknown QPN, wrong qkey, short receive, RNR) after which the
# QP carries on, a receiving QP destroyed mid-stream, the ibv_wr_* API,
# and a completion never announcing an SQ slot that is not yet free.
# All of it over IPv4-mapped GIDs, then the cases that carry data again
# over IPv6 GIDs.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_srd_qp)
two_hosts ssq
dmesg_mark
failed=()
try "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || failed+=(IPv4)
# Creation, the errors and the peer's destruction do not depend on the
# address family: the IPv6 run keeps to the datapath (and the time limit).
try "$bin" -c 2,3,4,7 "$DEV_A" "$IP6_A" "$DEV_B" "$IP6_B" || failed+=(IPv6)
# The completions on the other CPU than the poster's, as between hosts:
# RPS moves both veths' receive processing (the ACKs) to CPU 1, the
# program stays on CPU 0.  Without it the ACK that completes a send is
# processed on the sender's own CPU, and a completion posted ahead of its
# SQ slot's release could not be seen.
if [ "$(nproc)" -ge 2 ]; then
	pp ip netns exec "$NS_A" sh -c "echo 2 >/sys/class/net/$IF_A/queues/rx-0/rps_cpus"
	pp ip netns exec "$NS_B" sh -c "echo 2 >/sys/class/net/$IF_B/queues/rx-0/rps_cpus"
	try taskset -c 0 "$bin" -c 8 "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || failed+=("IPv4 on two CPUs")
fi
dmesg_clean "srd_srd_qp"
[ ${#failed[@]} -eq 0 ] || fail "srd_srd_qp reported failures over ${failed[*]}"
exit $KSFT_PASS
