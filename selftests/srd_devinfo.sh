#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# ibv_devinfo shows sensible attributes: fw_ver, a node GUID derived from
# the MAC, Ethernet link layer, active MTU from the netdev MTU, honest
# limits, and the GIDs.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma ibv_devinfo

veth_pair sd0 sd1
pp ip link set sd0 address 02:11:22:33:44:55
pp ip addr add 192.0.2.7/24 dev sd0
add_srd srdd0 sd0

info=$(ibv_devinfo -d srdd0)
echo "$info"
field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ +/, ""); print; exit }' <<<"$2"; }
expect_eq "fw_ver" 0.1.0 "$(field fw_ver "$info")"
# EUI-64 of 02:11:22:33:44:55: flip the U/L bit, insert ff:fe.
expect_eq "node_guid" 0011:22ff:fe33:4455 "$(field node_guid "$info")"
expect_eq "link_layer" Ethernet "$(field link_layer "$info")"
expect_eq "state" "PORT_ACTIVE (4)" "$(field state "$info")"
expect_eq "phys_port_cnt" 1 "$(field phys_port_cnt "$info")"
expect_eq "transport" "unspecified (4)" "$(field transport "$info")"

# active_mtu: the largest IB MTU that fits the netdev MTU less
# IPv6 (40) + UDP (8) + SRD header room (64) = 112 bytes.
check_mtu() {
	pp ip link set sd0 mtu "$1"
	local a
	a=$(ibv_devinfo -d srdd0 | awk '$1 == "active_mtu:" { print $2 }')
	expect_eq "active_mtu at netdev mtu $1" "$2" "$a"
}
check_mtu 1500 1024
check_mtu 9000 4096
check_mtu 4208 4096
check_mtu 4207 2048
check_mtu 700 512

v=$(ibv_devinfo -v -d srdd0)
for k in max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd max_ah max_mr_size; do
	n=$(field "$k" "$v")
	[[ "$n" =~ ^(0x)?[0-9a-f]+$ ]] && [ "$((n))" -gt 0 ] ||
		fail "ibv_devinfo -v: $k should be a positive limit, saw '$n'"
done
echo "ok: ibv_devinfo -v reports positive limits"
expect_eq "max_pkeys" 1 "$(field max_pkeys "$v")"
expect_eq "atomic_cap" "ATOMIC_NONE (0)" "$(field atomic_cap "$v")"
expect_match "GID of 192.0.2.7 in ibv_devinfo -v" 'GID\[ *[0-9]+\]:[[:space:]]+0000:0000:0000:0000:0000:ffff:c000:0207' "$v"
exit $KSFT_PASS
