#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Completion queues (srd_cq.c): completion channels with next and
# solicited-only arming, overflow (IBV_EVENT_CQ_ERR, entries intact), and
# ibv_create_cq_ex with the start/next/end poll API, and the CQEs of a
# destroyed QP: skipped in the softsrd profile, refused as libefa refuses
# them in the efa-gen1 profile (srd_cq --destroyed-qp).
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_cq)
two_hosts scq
dmesg_mark
try "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_cq reported failures"
set_limits efa-gen1
two_hosts_renew_devices
try "$bin" --destroyed-qp "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" ||
	fail "srd_cq --destroyed-qp (efa-gen1) reported failures"
dmesg_clean "srd_cq"
