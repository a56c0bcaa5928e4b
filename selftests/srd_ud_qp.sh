#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UD QPs (srd_ud_qp.c): states and transitions, query, SEND and
# SEND_WITH_IMM, inline and SGE limits, GRH and receive completion fields,
# slid, the qkey check, the MTU limit, flushing in ERR and the ibv_wr_*
# API; over IPv4-mapped GIDs, then again over IPv6 GIDs.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_ud_qp)
two_hosts sud
dmesg_mark
pp "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_ud_qp over IPv4 reported failures"
pp "$bin" "$DEV_A" "$IP6_A" "$DEV_B" "$IP6_B" || fail "srd_ud_qp over IPv6 reported failures"
dmesg_clean "srd_ud_qp"
