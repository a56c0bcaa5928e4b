#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Address handles (srd_ah.c): from IPv4-mapped and IPv6 GIDs, numbered,
# resolved by the routes of the netdev's namespace, clear errors for an
# unreachable destination and a missing GRH.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
bin=$(srd_bin srd_ah)
two_hosts sah
# 198.18.0.0/24 is routed only in the initial namespace, 198.51.100.0/24
# only in A's: an AH must follow A's namespace.
pp ip link add sahd0 type dummy
defer del_netdev sahd0
pp ip link set sahd0 up
pp ip addr add 198.18.0.254/24 dev sahd0
pp ip -n "$NS_A" route add 198.51.100.0/24 via "$IP4_B"
ip route get 198.51.100.7 >/dev/null 2>&1 && fail "the initial namespace routes 198.51.100.7"
dmesg_mark
try "$bin" "$DEV_A" "$IP4_A" "$DEV_B" "$IP4_B" "$IP6_A" "$IP6_B" 198.18.0.7 198.51.100.7 ||
	fail "srd_ah reported failures"
dmesg_clean "srd_ah"
