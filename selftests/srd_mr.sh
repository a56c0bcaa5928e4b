#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Memory regions (srd_mr.c): pinning and RLIMIT_MEMLOCK, distinct and
# unguessable lkeys and rkeys, LOC_PROT_ERR for bad SGEs on both sides,
# and deregistration while a receive references the MR.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_mr)
two_hosts smr
dmesg_mark
try "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_mr reported failures"
dmesg_clean "srd_mr"
