#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What libsrd decides on its own (srd_provider.c): creation attributes it
# refuses, work requests refused by QP state, opcode or size, full queues,
# the error rules of the ibv_wr_* API, the srddv_* direct verbs, and both
# posting and both polling APIs used from several threads at once.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_provider)
two_hosts spv
dmesg_mark
try "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" || fail "srd_provider reported failures"
dmesg_clean "srd_provider"
