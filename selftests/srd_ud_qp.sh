#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UD QPs (srd_ud_qp.c): states and transitions, query, SEND and
# SEND_WITH_IMM, inline and SGE limits, GRH and receive completion fields,
# slid, the qkey check, the MTU limit (also as the netdev MTU changes
# under a live QP), flushing in ERR and the ibv_wr_*
# API; over IPv4-mapped GIDs, then again over IPv6 GIDs.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_ud_qp)
two_hosts sud
# An active MTU of 512 (netdev MTU 700), then back, under a live QP.
# Below 1280 IPv6 leaves the netdev, so restoring re-adds its address.
export SRD_SHRINK_MTU="ip -n $NS_A link set $IF_A mtu 700"
export SRD_RESTORE_MTU="ip -n $NS_A link set $IF_A mtu 1500 && ip -n $NS_A addr add $IP6_A/64 dev $IF_A nodad"
dmesg_mark
try "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_ud_qp over IPv4 reported failures"
unset SRD_SHRINK_MTU SRD_RESTORE_MTU
wait_for "$DEV_A has the GID of $IP6_A again" 10 has_gid "$DEV_A" "$(gid_of_ipv6 $IP6_A)"
try "$bin" "$DEV_A" "$IP6_A" "$DEV_B" "$IP6_B" || fail "srd_ud_qp over IPv6 reported failures"
dmesg_clean "srd_ud_qp"
