#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# ibv_devinfo shows sensible attributes: fw_ver, softsrd's vendor ids, a
# node GUID derived from the MAC, Ethernet link layer, active MTU from the
# netdev MTU, honest limits, and the GIDs.  The device hangs from a parent
# on the softsrd bus, bound to the rdma_srd driver, with a PCI-style name
# and no modalias; rdma-core's own checks pass through pyverbs.
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
expect_eq "vendor_id" 0x737264 "$(field vendor_id "$info")"
expect_eq "vendor_part_id" 21316 "$(field vendor_part_id "$info")"
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

# The parent device: what libfabric resolves before it offers a device.
parent=$(readlink -f /sys/class/infiniband/srdd0/device)
expect_match "srdd0's parent" '^/sys/devices/softsrd/fffe:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$' "$parent"
expect_eq "its driver" /sys/bus/softsrd/drivers/rdma_srd "$(readlink -f /sys/class/infiniband/srdd0/device/driver)"
[ ! -e "$parent/modalias" ] || fail "$parent has a modalias: a PCI provider could claim srdd0"
echo "ok: no modalias for a provider to match"
# Its NUMA node is its netdev's NIC's, as PCI shows one: a veth has none.
expect_eq "srdd0's parent's numa_node (sd0, a veth, has no NIC)" -1 "$(cat "$parent/numa_node")"
add_srd srdd1 sd1
parent1=$(readlink -f /sys/class/infiniband/srdd1/device)
[ "$parent1" != "$parent" ] || fail "srdd0 and srdd1 share a parent"
echo "ok: srdd1 has a parent of its own, $parent1"
pp rdma link del srdd1
wait_for "srdd1's parent goes with it" 10 bash -c "[ ! -e $parent1 ]"

if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
	try /usr/bin/python3 "$SRD_TOP/selftests/srd_pyverbs.py" srdd0 ||
		fail "rdma-core's checks, through pyverbs, fail on srdd0"
else
	fail "python3-pyverbs is missing (scripts/install-deps.sh installs it)"
fi
exit $KSFT_PASS
