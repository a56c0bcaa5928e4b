#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Bad requests to rdma link add fail with a clear error and change nothing.
. "$(dirname "$0")/lib.sh"
require_root
require_srd_module
require_cmd rdma

veth_pair sb0 sb1
add_srd srdb0 sb0
before=$(rdma_link_count)

expect_fail_with "unknown netdev" "No such device" \
	rdma link add srdb1 type srd netdev nosuchdev0
srd_link_gone srdb1 || fail "a device was created for an unknown netdev"

expect_fail_with "duplicate name" "File exists" \
	rdma link add srdb0 type srd netdev sb1
expect_match "srdb0 still on sb0" 'netdev sb0' "$(rdma link show srdb0/1)"

expect_fail_with "second device on one netdev" "Device or resource busy" \
	rdma link add srdb2 type srd netdev sb0
srd_link_gone srdb2 || fail "a second device was created on sb0"

# non_ip_netdev KIND NAME LINK: a netdev of KIND cannot take an srd device.
nonip=0
non_ip_netdev() {
	modprobe "$1" 2>/dev/null || return 0
	pp ip link add "$2" type "$1"
	SRD_NETDEVS+=("$2")
	expect_fail_with "$1 netdev (cannot carry IP)" "Protocol not supported" \
		rdma link add "$3" type srd netdev "$2"
	srd_link_gone "$3" || fail "a device was created on a $1 netdev"
	nonip=$((nonip + 1))
}
non_ip_netdev nlmon sbnl srdb3
non_ip_netdev vcan sbcan srdb4
[ $nonip -gt 0 ] || skip "neither nlmon nor vcan is available to test a non-IP netdev"

expect_eq "number of RDMA links unchanged" "$before" "$(rdma_link_count)"
expect_match "srdb0 still ACTIVE" 'state ACTIVE' "$(rdma link show srdb0/1)"
exit $KSFT_PASS
