#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdma-core's ibv_ud_pingpong runs between two srd devices in two
# namespaces: sizes from 1 byte to the active MTU (1024 on a 1500-byte
# veth, 4096 on a 9000-byte one), thousands of iterations, IPv4-mapped and
# IPv6 GIDs, polling and CQ events, with the received buffers validated.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd ibv_ud_pingpong ibv_devinfo
two_hosts spp

# pingpong GIDX_A GIDX_B SERVER_IP ARGS...: one run, validated.
pingpong() {
	local ga=$1 gb=$2 ip=$3
	shift 3
	run_pair 18515 "$NS_A" "$NS_B" \
		ibv_ud_pingpong -d "$DEV_A" -g "$ga" -r 64 -c "$@" -- \
		ibv_ud_pingpong -d "$DEV_B" -g "$gb" -r 64 -c "$@" "$ip"
	expect_match "pingpong $* completed" '[0-9]+ iters in [0-9.]+ seconds' "$PAIR_CLIENT_OUT"
}

expect_eq "active MTU on a 1500-byte veth" 1024 "$(active_mtu "$DEV_A")"
pingpong "$GIDX4_A" "$GIDX4_B" "$IP4_A" -s 1 -n 200
pingpong "$GIDX4_A" "$GIDX4_B" "$IP4_A" -s 1024 -n 2000
pingpong "$GIDX4_A" "$GIDX4_B" "$IP4_A" -s 512 -n 100 -e
pingpong "$GIDX6_A" "$GIDX6_B" "$IP4_A" -s 1024 -n 300

pp ip -n "$NS_A" link set "$IF_A" mtu 9000
pp ip -n "$NS_B" link set "$IF_B" mtu 9000
# shellcheck disable=SC2317 # mtu_is is wait_for's command
mtu_is() { [ "$(active_mtu "$1")" = "$2" ]; }
wait_for "$DEV_A active MTU 4096 on a 9000-byte veth" 10 mtu_is "$DEV_A" 4096
wait_for "$DEV_B active MTU 4096 on a 9000-byte veth" 10 mtu_is "$DEV_B" 4096
pingpong "$GIDX4_A" "$GIDX4_B" "$IP4_A" -s 4096 -n 500
pingpong "$GIDX6_A" "$GIDX6_B" "$IP4_A" -s 2049 -n 100
exit $KSFT_PASS
