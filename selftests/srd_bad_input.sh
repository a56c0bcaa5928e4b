#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Bad requests to rdma link add fail with a clear error and change nothing
# (not even a hold on the netdev).
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

# A netdev whose MTU leaves an SRD segment too small for the engine
# (below 188: 40 IP, 8 UDP and 52 DATA header bytes, and 88 of payload
# for the longer RDMA header): the add is refused after the device took
# its hold on the netdev, and the hold must go with it, or deleting the
# netdev waits forever ("unregister_netdevice: waiting for sbm0 to become
# free").  At 188 the device is made; deleting the netdev takes it along.
veth_pair sbm0 sbm1
pp ip link set sbm0 mtu 187
expect_fail_with "netdev with MTU 187" "Invalid argument" \
	rdma link add srdb5 type srd netdev sbm0
dmesg | tail -n 20 | grep -qF "the SRD configuration for netdev sbm0 (MTU 187) is inconsistent" ||
	fail "MTU 187: the kernel log does not say why"
echo "ok: MTU 187: the kernel log says why"
srd_link_gone srdb5 || fail "a device was created on a netdev of MTU 187"
pp ip link set sbm0 mtu 188
add_srd srdb5 sbm0
echo "ok: the device is made with an MTU of 188"
try timeout 60 ip link del sbm0 ||
	fail "deleting sbm0 did not complete: the refused rdma link add kept a hold on it"
wait_for "srdb5 gone with its netdev" 10 srd_link_gone srdb5
echo "ok: sbm0 is deleted: the refused add left no hold on it"

# non_ip_netdev KIND NAME LINK: a netdev of KIND cannot take an srd device.
nonip=0
non_ip_netdev() {
	modprobe "$1" 2>/dev/null || return 0
	pp ip link add "$2" type "$1"
	defer del_netdev "$2"
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
